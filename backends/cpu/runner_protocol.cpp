#include "backends/cpu/runner_protocol.hpp"

namespace kevolve::cpu {
namespace {

void put(wire::Writer& w, const ArenaTensor& t) {
  w.i64(t.offset);
  w.u32(static_cast<uint32_t>(t.dtype));
  w.u32(static_cast<uint32_t>(t.shape.size()));
  for (size_t i = 0; i < t.shape.size(); ++i) {
    w.i64(t.shape[i]);
    w.i64(t.strides[i]);
  }
  w.i64(t.snapshot_offset);
  w.i64(t.bytes);
}
void get(wire::Reader& r, ArenaTensor& t) {
  t.offset = r.i64();
  t.dtype = static_cast<int32_t>(r.u32());
  const uint32_t nd = r.u32();
  if (nd > 8) throw wire::DecodeError("too many dimensions");
  t.shape.resize(nd);
  t.strides.resize(nd);
  for (uint32_t i = 0; i < nd; ++i) {
    t.shape[i] = r.i64();
    t.strides[i] = r.i64();
  }
  t.snapshot_offset = r.i64();
  t.bytes = r.i64();
}

}  // namespace

void encode(wire::Writer& w, const Batch& b) {
  w.u32(b.flags);
  w.u32(static_cast<uint32_t>(b.params.size()));
  for (double p : b.params) w.f64(p);
  w.u32(static_cast<uint32_t>(b.calls.size()));
  for (auto& c : b.calls) {
    w.u32(static_cast<uint32_t>(c.inputs.size()));
    for (auto& t : c.inputs) put(w, t);
    w.u32(static_cast<uint32_t>(c.outputs.size()));
    for (auto& t : c.outputs) put(w, t);
  }
}

void decode(wire::Reader& r, Batch& b) {
  b.flags = r.u32();
  b.params.resize(r.count());
  for (auto& p : b.params) p = r.f64();
  b.calls.resize(r.count());
  for (auto& c : b.calls) {
    c.inputs.resize(r.count());
    for (auto& t : c.inputs) get(r, t);
    c.outputs.resize(r.count());
    for (auto& t : c.outputs) get(r, t);
  }
}

void encode(wire::Writer& w, const std::vector<CallOutcome>& v) {
  w.u32(static_cast<uint32_t>(v.size()));
  for (auto& o : v) {
    w.u32(static_cast<uint32_t>(o.rc));
    w.i64(o.ns);
    w.u32(static_cast<uint32_t>(o.late_threads));
  }
}

void decode(wire::Reader& r, std::vector<CallOutcome>& v) {
  v.resize(r.count());
  for (auto& o : v) {
    o.rc = static_cast<int32_t>(r.u32());
    o.ns = r.i64();
    o.late_threads = static_cast<int32_t>(r.u32());
  }
}

void encode(wire::Writer& w, const Hello& h) {
  w.u32(h.ok);
  w.str(h.message);
  w.u32(static_cast<uint32_t>(h.baseline_threads));
  w.str(h.sandbox);
}
void decode(wire::Reader& r, Hello& h) {
  h.ok = r.u32();
  h.message = r.str();
  h.baseline_threads = static_cast<int32_t>(r.u32());
  h.sandbox = r.str();
}

}  // namespace kevolve::cpu
