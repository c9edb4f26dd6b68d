#include "backends/cpu/runner_protocol.hpp"

namespace kevolve::cpu {

void encode(wire::Writer& w, const Batch& b) {
  harness::encode_batch(w, b, [](wire::Writer&, const Call&) {});
}

void decode(wire::Reader& r, Batch& b) {
  harness::decode_batch(r, b, [](wire::Reader&, Call&) {});
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
  harness::put(w, h.status);
  w.u32(static_cast<uint32_t>(h.baseline_threads));
  w.str(h.sandbox);
}
void decode(wire::Reader& r, Hello& h) {
  harness::get(r, h.status);
  h.baseline_threads = static_cast<int32_t>(r.u32());
  h.sandbox = r.str();
}

}  // namespace kevolve::cpu
