#include "backends/cuda/runner_protocol.hpp"

namespace kevolve::cuda {
namespace {

void put(wire::Writer& w, const GpuTensor& t) {
  w.i64(t.offset);
  w.u32(static_cast<uint32_t>(t.dtype));
  w.u32(static_cast<uint32_t>(t.shape.size()));
  for (size_t i = 0; i < t.shape.size(); ++i) {
    w.i64(t.shape[i]);
    w.i64(t.strides[i]);
  }
  w.i64(t.bytes);
  w.i64(t.snapshot_offset);
}
void get(wire::Reader& r, GpuTensor& t) {
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
  t.bytes = r.i64();
  t.snapshot_offset = r.i64();
}

}  // namespace

void encode(wire::Writer& w, const Setup& s) {
  w.str(s.ipc_handle);
  w.i64(s.arena_bytes);
  w.i64(s.flush_bytes);
  w.i64(s.device_memory_cap_mb);
}
void decode(wire::Reader& r, Setup& s) {
  s.ipc_handle = r.str();
  s.arena_bytes = r.i64();
  s.flush_bytes = r.i64();
  s.device_memory_cap_mb = r.i64();
}

void encode(wire::Writer& w, const Load& l) {
  w.u32(static_cast<uint32_t>(l.kind));
  w.str(l.entry);
  w.str(l.bytes);
}
void decode(wire::Reader& r, Load& l) {
  const uint32_t kind = r.u32();
  if (kind > static_cast<uint32_t>(ArtifactKind::shared_object)) throw wire::DecodeError("unknown artifact kind");
  l.kind = static_cast<ArtifactKind>(kind);
  l.entry = r.str();
  l.bytes = r.str();
}

void encode(wire::Writer& w, const Hello& h) {
  w.u32(h.ok);
  w.str(h.message);
  w.str(h.device);
  w.u32(static_cast<uint32_t>(h.sms));
  w.i64(h.l2_bytes);
  w.str(h.arch);
  w.str(h.sandbox);
}
void decode(wire::Reader& r, Hello& h) {
  h.ok = r.u32();
  h.message = r.str();
  h.device = r.str();
  h.sms = static_cast<int32_t>(r.u32());
  h.l2_bytes = r.i64();
  h.arch = r.str();
  h.sandbox = r.str();
}

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
    for (int i = 0; i < 3; ++i) {
      w.i64(c.launch.grid[i]);
      w.i64(c.launch.block[i]);
    }
    w.i64(c.launch.smem);
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
    for (int i = 0; i < 3; ++i) {
      c.launch.grid[i] = r.i64();
      c.launch.block[i] = r.i64();
    }
    c.launch.smem = r.i64();
  }
}

void encode(wire::Writer& w, const BatchReply& b) {
  w.u32(static_cast<uint32_t>(b.calls.size()));
  for (auto& o : b.calls) {
    w.u32(static_cast<uint32_t>(o.rc));
    w.i64(o.ns);
    w.str(o.error);
  }
  w.i64(b.wall_ns);
  w.u32(b.fatal);
}
void decode(wire::Reader& r, BatchReply& b) {
  b.calls.resize(r.count());
  for (auto& o : b.calls) {
    o.rc = static_cast<int32_t>(r.u32());
    o.ns = r.i64();
    o.error = r.str();
  }
  b.wall_ns = r.i64();
  b.fatal = r.u32();
}

}  // namespace kevolve::cuda
