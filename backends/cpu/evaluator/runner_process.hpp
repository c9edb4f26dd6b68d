// RunnerProcess: the evaluator's handle on one sandboxed kevolve-cpu-runner — start it, send batches
// with a wall-clock deadline, and turn its death into a verdict (signal, timeout, sandbox violation).
#pragma once
#include <string>
#include <sys/types.h>
#include <vector>

#include "backends/cpu/runner_protocol.hpp"
#include "runtime/records/evaluation.hpp"

namespace kevolve::cpu {

struct RunnerConfig {
  std::string runner_path;  // the kevolve-cpu-runner executable
  std::string artifact, entry;
  int arena_fd = -1;
  int64_t arena_bytes = 0;
  int threads = 1;
  int64_t memory_limit_mb = 4096, cpu_limit_s = 600;
  bool sandbox = true;
};

// Why a batch did not complete.
struct RunnerFailure {
  EvalStatus status = EvalStatus::runtime_error;
  std::string reason;  // signal / timeout / exit / isolation / load
  std::string message;
};

class RunnerProcess {
 public:
  ~RunnerProcess();
  // Starts the runner and waits for its hello. On failure returns false and fills `failure`.
  bool start(const RunnerConfig& c, double timeout_s, RunnerFailure& failure);
  // Runs one batch; false (and `failure`) when the runner crashed, hung past timeout_s or misbehaved.
  bool run(const Batch& b, double timeout_s, std::vector<CallOutcome>& out, RunnerFailure& failure);
  int baseline_threads() const { return baseline_; }
  // The confinement the runner reported in its hello ("" with the sandbox off).
  const std::string& sandbox() const { return sandbox_; }
  // Stops every thread of the runner (SIGSTOP to its process group) while the evaluator times the
  // reference, so that a candidate's leftover threads cannot steal the reference's cores; resume()
  // lets it run again. Call only between batches.
  void pause();
  void resume();
  // The tail of what the runner wrote to stderr (compiler-like diagnostics, "terminate called ...").
  std::string log_tail();
  void stop();

 private:
  bool read_reply(double timeout_s, std::vector<char>& frame, RunnerFailure& failure);
  RunnerFailure classify_exit(const char* during);
  void drain_stderr();

  pid_t pid_ = -1;
  pid_t group_ = -1;  // the runner's process group (its id), killed whole when the runner ends
  int cmd_ = -1, reply_ = -1, err_ = -1;
  int baseline_ = 0;
  std::string sandbox_;
  bool paused_ = false;
  int64_t memory_limit_mb_ = 0;
  std::string stderr_;
};

}  // namespace kevolve::cpu
