#include "backends/cuda/runner_protocol.hpp"

namespace kevolve::cuda {

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
  harness::put(w, h.status);
  w.str(h.prepared);
  w.str(h.device);
  w.u32(static_cast<uint32_t>(h.sms));
  w.i64(h.l2_bytes);
  w.str(h.arch);
  w.str(h.sandbox);
}
void decode(wire::Reader& r, Hello& h) {
  harness::get(r, h.status);
  h.prepared = r.str();
  h.device = r.str();
  h.sms = static_cast<int32_t>(r.u32());
  h.l2_bytes = r.i64();
  h.arch = r.str();
  h.sandbox = r.str();
}

void encode(wire::Writer& w, const Batch& b) {
  harness::encode_batch(w, b, [](wire::Writer& out, const Call& c) {
    for (int i = 0; i < 3; ++i) {
      out.i64(c.launch.grid[i]);
      out.i64(c.launch.block[i]);
    }
    out.i64(c.launch.smem);
  });
}
void decode(wire::Reader& r, Batch& b) {
  harness::decode_batch(r, b, [](wire::Reader& in, Call& c) {
    for (int i = 0; i < 3; ++i) {
      c.launch.grid[i] = in.i64();
      c.launch.block[i] = in.i64();
    }
    c.launch.smem = in.i64();
  });
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
