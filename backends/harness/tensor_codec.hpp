// The tensor and batch frames both runner protocols carry (backends/cpu/runner_protocol.hpp,
// backends/cuda/runner_protocol.hpp), and the Status their hellos answer with. A tensor is an offset into
// the arena the evaluator shares with its runner, never a pointer into evaluator memory. Header-only: the
// standalone CUDA runner build uses it too. A frame that does not decode throws wire::DecodeError (the
// runner then answers nothing and exits).
#pragma once
#include <cstdint>
#include <vector>

#include "runtime/core/status.hpp"
#include "runtime/core/wire.hpp"

namespace kevolve::harness {

struct ArenaTensor {
  int64_t offset = 0;
  int32_t dtype = 0;
  std::vector<int64_t> shape, strides;
  int64_t bytes = 0;
  int64_t snapshot_offset = -1;  // outputs: where the runner copies the output right after the call ends
};

constexpr uint32_t kMaxDims = 8;

inline void put(wire::Writer& w, const ArenaTensor& t) {
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

inline void get(wire::Reader& r, ArenaTensor& t) {
  t.offset = r.i64();
  t.dtype = static_cast<int32_t>(r.u32());
  const uint32_t nd = r.u32();
  if (nd > kMaxDims) throw wire::DecodeError("too many dimensions");
  t.shape.resize(nd);
  t.strides.resize(nd);
  for (uint32_t i = 0; i < nd; ++i) {
    t.shape[i] = r.i64();
    t.strides[i] = r.i64();
  }
  t.bytes = r.i64();
  t.snapshot_offset = r.i64();
}

// A Status: its code (u32) and message.
inline void put(wire::Writer& w, const Status& s) {
  w.u32(static_cast<uint32_t>(s.code));
  w.str(s.message);
}

inline void get(wire::Reader& r, Status& s) {
  const uint32_t code = r.u32();
  if (code > static_cast<uint32_t>(Errc::timeout)) throw wire::DecodeError("unknown status code");
  s.code = static_cast<Errc>(code);
  s.message = r.str();
}

// A batch: its flags, the candidate's parameters, and per call its input and output tensors followed by
// what `put_extra(w, call)` writes (the CUDA launch geometry; nothing on the CPU).
template <class Batch, class PutExtra>
void encode_batch(wire::Writer& w, const Batch& b, PutExtra put_extra) {
  w.u32(b.flags);
  w.u32(static_cast<uint32_t>(b.params.size()));
  for (double p : b.params) w.f64(p);
  w.u32(static_cast<uint32_t>(b.calls.size()));
  for (auto& c : b.calls) {
    w.u32(static_cast<uint32_t>(c.inputs.size()));
    for (auto& t : c.inputs) put(w, t);
    w.u32(static_cast<uint32_t>(c.outputs.size()));
    for (auto& t : c.outputs) put(w, t);
    put_extra(w, c);
  }
}

// The inverse of encode_batch; `get_extra(r, call)` reads what put_extra wrote.
template <class Batch, class GetExtra>
void decode_batch(wire::Reader& r, Batch& b, GetExtra get_extra) {
  b.flags = r.u32();
  b.params.resize(r.count());
  for (auto& p : b.params) p = r.f64();
  b.calls.resize(r.count());
  for (auto& c : b.calls) {
    c.inputs.resize(r.count());
    for (auto& t : c.inputs) get(r, t);
    c.outputs.resize(r.count());
    for (auto& t : c.outputs) get(r, t);
    get_extra(r, c);
  }
}

}  // namespace kevolve::harness
