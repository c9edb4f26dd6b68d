// EvalStatus, Detector and EvalResult: the verdict on one candidate, carried as data end to end.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kevolve {

enum class EvalStatus : int32_t {
  ok = 0,             // correct on every shape and trial; timed
  compile_error = 1,  // the compiler rejected it
  runtime_error = 2,  // crashed (signal), returned non-zero, or ran out of memory
  timeout = 3,        // exceeded the wall-clock or CPU-time limit
  incorrect = 4,      // wrong results (mismatch, NaN/Inf, unwritten elements)
  rejected = 5,       // a cheat or forbidden construct was caught; `reason` names the detector
  harness_error = 6,  // the evaluator itself failed (bad reference, sandbox unavailable, ...)
};
const char* status_name(EvalStatus s);

// Each anti-cheat detector can be switched off on its own (to test the evaluator); all are on by default.
enum class Detector : uint32_t {
  isolation = 0,        // static source scan + seccomp sandbox: no processes, exec, sockets, file writes, JIT
  escaped_work = 1,     // outputs snapshotted the instant the call returns must equal the outputs later
  pointer_reuse = 2,    // the same input buffers refilled with new data must give the new answer
  input_mutation = 3,   // inputs compared before/after every call
  magnitude = 4,        // relative L2 error bound on top of the elementwise tolerance
  poison = 5,           // outputs poisoned before every call; every element must be written
  fresh_data = 6,       // every trial and timing set has its own seed; stale answers are recognised
  timed_outputs = 7,    // outputs of timed runs are verified too
  impossible_time = 8,  // the evaluator's own clock bounds every timed pass; a time far below that bound or
                        // below the bytes the problem must move at the machine's measured bandwidth is refused
  queued_work = 9,      // GPU work a candidate leaves running past its answer (probed before and after each
                        // runner pass; the Python interpreter on CUDA)
  count_ = 10,
};
const char* detector_name(Detector d);
bool parse_detector(const std::string& s, Detector& out);
std::vector<std::string> detector_names();

struct DetectorSet {
  uint32_t bits = (1u << static_cast<uint32_t>(Detector::count_)) - 1;
  bool on(Detector d) const { return bits & (1u << static_cast<uint32_t>(d)); }
  void set(Detector d, bool enabled) {
    const uint32_t m = 1u << static_cast<uint32_t>(d);
    bits = enabled ? (bits | m) : (bits & ~m);
  }
  bool all_on() const { return bits == DetectorSet{}.bits; }
};

struct Timing {
  double median_ms = 0, p10_ms = 0, p90_ms = 0;
  int64_t samples = 0;
  int threads = 0;
};

struct EvalResult {
  EvalStatus status = EvalStatus::harness_error;
  std::string
      reason;  // for rejected: the detector; otherwise the failing check (mismatch, nan, unwritten, signal, ...)
  std::string message;  // human-readable explanation
  std::string where;    // shape / trial / output / element of the worst error, when relevant
  double max_abs_err = 0;
  double max_rel_err = 0;
  int trials = 0;  // verification trials run per shape
  int shapes = 0;  // shapes verified (verify shapes + bench)
  Timing reference;
  Timing candidate;
  double speedup = 0;         // reference median / candidate median (0 unless ok)
  double candidate_gbps = 0;  // achieved bytes/s from the roofline bytes, GB/s
  double candidate_gflops = 0;
  double peak_gbps = 0;  // the device's measured copy bandwidth (CUDA: D2D copy at worker start; CPU: a copy over
                         // the timing's working set with the evaluation's threads), 0 if unknown
  std::string device;    // where it ran (e.g. "NVIDIA H200 (sm_90), driver 13000")
  std::string
      device_class;  // the class of the device that gave this verdict ("cuda:sm_90 NVIDIA H200"; backends/device_info.hpp), set by the device actor
  std::string profile;         // backend profile feedback: resource use, instruction mix, bound classification
  Timing compiled;             // the reference under torch.compile, where the backend measures it (python)
  double compile_speedup = 0;  // torch.compile median / candidate median (0 if not measured)
  std::string
      kind;  // python: "kernel" (brings its own kernel code), "framework" (rearranges PyTorch calls), "reference"
  std::string compile_log;
  std::string runner_log;  // tail of the runner's stderr
  std::string sandbox;  // the runner's confinement in force when it ran (uid, namespaces, seccomp, limits); "" if none
  DetectorSet detectors;
  // The GPU that gave the verdict (CUDA: from the device's properties): its multiprocessors and L2 cache;
  // 0 when unknown or not a GPU. With `device` and `peak_gbps` they describe the machine to an operator.
  int32_t sms = 0;
  int64_t l2_bytes = 0;
  // The evaluator process's peak resident memory during this evaluation (MiB; its data cache included),
  // measured by the worker around each request; 0 when unknown.
  double evaluator_peak_rss_mb = 0;
  // The problem's roofline where the evaluator was asked for it (python: the reference baseline): the bytes one
  // call must move (its inputs and outputs), its FLOPs (matmuls and convolutions, as PyTorch's flop counter
  // counts them) and the device's measured matmul rate for the problem's dtype (GFLOP/s); 0 = not measured.
  // With peak_gbps they give the floors: bytes / peak_gbps and flops / peak_gflops.
  double roofline_bytes = 0, roofline_flops = 0, peak_gflops = 0;
};

}  // namespace kevolve
