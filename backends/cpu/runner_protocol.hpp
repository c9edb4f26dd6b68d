// Protocol between the trusted CPU evaluator and its sandboxed runner (framed, runtime/core/wire.hpp).
//
//   evaluator                                  runner (no libtorch; candidate loaded RTLD_LOCAL)
//   fork+exec with fds: 3 arena memfd, 4 commands, 5 replies, 2 stderr pipe
//                        <- Hello {status, baseline_threads, sandbox}
//   Batch {flags, params, calls[]} ->          poison outputs (flag), then per call: time it,
//                                              snapshot outputs (flag), wait for stray threads
//                        <- BatchReply {per call: rc, ns, late_threads}
//   (close command pipe)                       exits
//
// Tensors are offsets into the shared arena, so the runner never sees evaluator memory.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "backends/harness/tensor_codec.hpp"
#include "runtime/core/wire.hpp"

namespace kevolve::cpu {

constexpr int kArenaFd = 3, kCommandFd = 4, kReplyFd = 5;

using ArenaTensor = harness::ArenaTensor;  // outputs: snapshot_offset, where to copy them as the call returns

struct Call {
  std::vector<ArenaTensor> inputs, outputs;
};

// kDry: do everything a call does except calling the candidate (poison, snapshot, thread count), so the
// evaluator can measure the runner's own cost of a pass on its clock.
enum BatchFlags : uint32_t { kPoison = 1, kSnapshot = 2, kDry = 4 };

struct Batch {
  uint32_t flags = 0;
  std::vector<double> params;
  std::vector<Call> calls;
};

struct CallOutcome {
  int32_t rc = 0;
  int64_t ns = 0;
  int32_t late_threads =
      0;  // threads beyond the baseline alive when the call returned (the runner waits up to 0.5 s for them)
};

// The runner's answer once the candidate is loaded: a failure's code says what kind it is (unavailable: the
// sandbox cannot be made on this machine; invalid_argument: the candidate breaks isolation; failed: it
// does not load) and its message says why.
struct Hello {
  Status status = Status::failure(Errc::failed, "the runner said nothing");
  int32_t baseline_threads = 0;
  std::string sandbox;  // the confinement in force ("" with the sandbox off)
};

void encode(wire::Writer& w, const Batch& b);
void decode(wire::Reader& r, Batch& b);
void encode(wire::Writer& w, const std::vector<CallOutcome>& v);
void decode(wire::Reader& r, std::vector<CallOutcome>& v);
void encode(wire::Writer& w, const Hello& h);
void decode(wire::Reader& r, Hello& h);

}  // namespace kevolve::cpu
