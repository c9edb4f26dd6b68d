// CudaRunnerProcess: the CUDA evaluator's handle on one kevolve-cuda-runner — the CUDA protocol (setup,
// hello, batches; backends/cuda/runner_protocol.hpp) over the shared process mechanics of
// backends/process/runner_process.hpp (fork/exec, deadlines, exit classification). A CUDA fault in the
// candidate ends the runner; it becomes a runtime_error with the fault's text.
#pragma once
#include <string>
#include <vector>

#include "backends/cuda/runner_protocol.hpp"
#include "backends/process/runner_process.hpp"
#include "runtime/records/evaluation.hpp"

namespace kevolve::cuda {

using process::RunnerFailure;

class CudaRunnerProcess {
 public:
  // Starts the runner and sends `setup` without waiting: the runner confines itself and makes its device
  // context meanwhile (the slow part of a start), so it can be begun before its candidate is known.
  bool begin(const std::string& runner_path, const Setup& setup, int64_t memory_limit_mb, RunnerFailure& failure);
  // Waits up to timeout_s for the runner's next hello: after begin(), that it is prepared (`hello`: the
  // device's facts); load() uses it for the candidate's.
  bool ready(double timeout_s, Hello& hello, RunnerFailure& failure);
  // Sends the candidate to a prepared runner and waits up to timeout_s for it to load (`hello`: the device's
  // facts and the sandbox in force).
  bool load(const Load& candidate, double timeout_s, Hello& hello, RunnerFailure& failure);
  // Runs one batch; false (and `failure`) when the runner faulted, crashed or hung past timeout_s.
  bool run(const Batch& b, double timeout_s, BatchReply& out, RunnerFailure& failure);
  std::string log_tail() { return proc_.log_tail(); }
  // Up to 2 s for the runner to exit on its own: a CUDA process tears its context down on exit.
  void stop() { proc_.stop(2.0); }

 private:
  process::RunnerProcess proc_;
};

}  // namespace kevolve::cuda
