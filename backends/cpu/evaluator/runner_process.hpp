// RunnerProcess: the CPU evaluator's handle on one sandboxed kevolve-cpu-runner — the CPU protocol
// (hello, batches; backends/cpu/runner_protocol.hpp) over the shared process mechanics of
// backends/process/runner_process.hpp (fork/exec, deadlines, exit classification).
#pragma once
#include <string>
#include <sys/types.h>
#include <vector>

#include "backends/cpu/runner_protocol.hpp"
#include "backends/process/runner_process.hpp"
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

using process::RunnerFailure;

class RunnerProcess {
 public:
  // Starts the runner and waits for its hello. On failure returns false and fills `failure`.
  bool start(const RunnerConfig& c, double timeout_s, RunnerFailure& failure);
  // Runs one batch; false (and `failure`) when the runner crashed, hung past timeout_s or misbehaved.
  bool run(const Batch& b, double timeout_s, std::vector<CallOutcome>& out, RunnerFailure& failure);
  int baseline_threads() const { return baseline_; }
  // The confinement the runner reported in its hello, and its cgroup ("" with the sandbox off).
  const std::string& sandbox() const { return sandbox_; }
  // Stops every thread of the runner and every process it started (its cgroup's freezer; SIGSTOP to its
  // process group where there is no cgroup) while the evaluator times the reference, so that a candidate's
  // leftovers cannot steal the reference's cores; resume() lets it run again. Call only between batches.
  void pause() { proc_.pause(); }
  void resume() { proc_.resume(); }
  // The tail of what the runner wrote to stderr (compiler-like diagnostics, "terminate called ...").
  std::string log_tail() { return proc_.log_tail(); }
  void stop() { proc_.stop(); }
  // See process::RunnerProcess::waited_ns.
  int64_t waited_ns() const { return proc_.waited_ns(); }

 private:
  process::RunnerProcess proc_;
  int baseline_ = 0;
  std::string sandbox_;
};

}  // namespace kevolve::cpu
