// CudaRunnerProcess: the CUDA evaluator's handle on one kevolve-cuda-runner — start it on the arena,
// send batches with a wall-clock deadline, and turn its death or a CUDA fault into a verdict.
#pragma once
#include <string>
#include <sys/types.h>
#include <vector>

#include "backends/cuda/runner_protocol.hpp"
#include "runtime/records/evaluation.hpp"

namespace kevolve::cuda {

struct RunnerFailure {
  EvalStatus status = EvalStatus::runtime_error;
  std::string reason;  // cuda / signal / timeout / exit / load / protocol
  std::string message;
};

class CudaRunnerProcess {
 public:
  ~CudaRunnerProcess();
  // Starts the runner, sends `setup`, waits for its hello (`hello` filled on success).
  bool start(const std::string& runner_path, const Setup& setup, int64_t memory_limit_mb, double timeout_s,
             Hello& hello, RunnerFailure& failure);
  // Runs one batch; false (and `failure`) when the runner faulted, crashed or hung past timeout_s.
  bool run(const Batch& b, double timeout_s, BatchReply& out, RunnerFailure& failure);
  std::string log_tail();
  void stop();

 private:
  bool read_reply(double timeout_s, std::vector<char>& frame, RunnerFailure& failure);
  RunnerFailure classify_exit(const char* during);
  void drain_stderr();

  pid_t pid_ = -1;
  int cmd_ = -1, reply_ = -1, err_ = -1;
  std::string stderr_;
};

}  // namespace kevolve::cuda
