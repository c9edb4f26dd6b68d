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
  // Starts the runner, sends `setup`, waits for its hello (`hello` filled on success).
  bool start(const std::string& runner_path, const Setup& setup, int64_t memory_limit_mb, double timeout_s,
             Hello& hello, RunnerFailure& failure);
  // Runs one batch; false (and `failure`) when the runner faulted, crashed or hung past timeout_s.
  bool run(const Batch& b, double timeout_s, BatchReply& out, RunnerFailure& failure);
  std::string log_tail() { return proc_.log_tail(); }
  // Up to 2 s for the runner to exit on its own: a CUDA process tears its context down on exit.
  void stop() { proc_.stop(2.0); }

 private:
  process::RunnerProcess proc_;
};

}  // namespace kevolve::cuda
