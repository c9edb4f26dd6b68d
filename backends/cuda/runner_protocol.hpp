// Protocol between the trusted CUDA evaluator (kevolve-cuda-eval) and its runner (kevolve-cuda-runner,
// no libtorch), framed over pipes (runtime/core/wire.hpp):
//
//   evaluator                                   runner
//   fork+exec with fds: 3 commands, 4 replies, 2 stderr pipe
//   Setup {arena IPC handle, flush size}  ->   confines itself, makes its device context, opens the arena
//                         <- Hello {status, prepared, device facts}    (the runner is prepared: "standby")
//   Load {kind, entry, the candidate's bytes} -> drops its identity, loads the candidate
//                         <- Hello {status, device facts, sandbox}
//   Batch {flags, params, calls[]}   ->        per call: poison outputs, flush L2, event, launch, event;
//                                              snapshot outputs right after the end event (kSnapshot)
//                         <- BatchReply {per call: rc, ns, error text; batch wall time (kWall)}
//   (close command pipe)                        exits
//
// Tensors are offsets into the evaluator's device arena: the runner sees no other evaluator memory.
// A CUDA error in the runner (illegal address, misaligned access) is answered once with its text and the
// runner exits: its context is gone, the evaluator starts a fresh runner for the next candidate.
// Setup and Load are two steps so that the evaluator can prepare the next candidate's runner (process,
// confinement, device context: the slow part) while it waits for that candidate; a runner runs one
// candidate only, as before. The candidate travels as bytes: the runner never opens the evaluator's files.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "backends/harness/tensor_codec.hpp"
#include "runtime/core/wire.hpp"

namespace kevolve::cuda {

constexpr int kCommandFd = 3, kReplyFd = 4;
// Host memory of one runner, where it can make a memory cgroup of its own (root): the driver's context and
// staging buffers, the candidate's host allocations and shared mappings together.
constexpr int64_t kRunnerHostMemoryMb = 6144;

enum class ArtifactKind : uint32_t { cubin = 0, shared_object = 1 };

struct Setup {
  std::string ipc_handle;  // cudaIpcMemHandle_t bytes of the evaluator's arena
  int64_t arena_bytes = 0;
  int64_t flush_bytes = 0;              // L2 flush buffer the runner allocates for itself
  int64_t device_memory_cap_mb = 1024;  // host-code candidates may not keep more device memory than this
};

struct Load {
  ArtifactKind kind = ArtifactKind::cubin;
  std::string entry;  // kernel name (cubin) or host entry point (.so)
  std::string bytes;  // the .cubin (kernel-only, launched by the runner) or the .so (host code, kevolve_kernel)
};

// The runner's answer to Setup and to Load: on failure the status says why (unavailable: no device or no
// sandbox on this machine; failed: anything else).
struct Hello {
  Status status = Status::failure(Errc::failed, "the runner said nothing");
  std::string prepared;  // answering Setup with success: what preparing took
  std::string device;  // name, e.g. "NVIDIA H200"
  int32_t sms = 0;
  int64_t l2_bytes = 0;
  std::string arch;     // sm_XY of the device
  std::string sandbox;  // the confinement in force when the candidate was loaded
};

using GpuTensor = harness::ArenaTensor;  // outputs: snapshot_offset, where to copy them after the end event

struct Launch {
  int64_t grid[3] = {1, 1, 1};
  int64_t block[3] = {1, 1, 1};
  int64_t smem = 0;
};

struct Call {
  std::vector<GpuTensor> inputs, outputs;
  Launch launch;  // cubin candidates only
};

enum BatchFlags : uint32_t {
  kPoison = 1,     // fill outputs with the poison pattern before each call
  kSnapshot = 2,   // copy outputs to their snapshot right after the end event completes
  kFlush = 4,      // write the L2 flush buffer before each call
  kWall = 8,       // no per-call wait: launch all back to back, end with a device synchronisation, report wall time
  kNoLaunch = 16,  // everything but the candidate (the wall batch's overhead)
};

struct Batch {
  uint32_t flags = 0;
  std::vector<double> params;
  std::vector<Call> calls;
};

struct CallOutcome {
  int32_t rc = 0;  // 0 ok; the kernel's return code (.so); -1 a CUDA error (see error)
  int64_t ns = 0;  // CUDA-event time between the start and end events
  std::string error;
};

struct BatchReply {
  std::vector<CallOutcome> calls;
  int64_t wall_ns = 0;  // kWall: host clock from before the first launch to after the device synchronisation
  bool fatal = false;   // the runner's CUDA context is unusable; it exits after this reply
};

void encode(wire::Writer& w, const Setup& s);
void decode(wire::Reader& r, Setup& s);
void encode(wire::Writer& w, const Load& l);
void decode(wire::Reader& r, Load& l);
void encode(wire::Writer& w, const Hello& h);
void decode(wire::Reader& r, Hello& h);
void encode(wire::Writer& w, const Batch& b);
void decode(wire::Reader& r, Batch& b);
void encode(wire::Writer& w, const BatchReply& b);
void decode(wire::Reader& r, BatchReply& b);

}  // namespace kevolve::cuda
