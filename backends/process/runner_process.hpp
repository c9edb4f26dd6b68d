// RunnerProcess: a trusted evaluator's handle on one untrusted runner process — the mechanics every
// backend shares. It forks and execs the runner in a process group of its own with fixed fd numbers,
// exchanges length-prefixed frames with it (runtime/core/wire.hpp) under a wall-clock deadline, keeps
// the tail of its stderr, and turns its death into a RunnerFailure (status + reason + message). What
// the frames mean (hello, batch, reply) is each backend's protocol: backends/cpu/runner_protocol.hpp,
// backends/cuda/runner_protocol.hpp. Each spawn gets a cgroup of its own (eval_cgroup.hpp) that the child
// enters before exec: everything the runner ever starts is frozen with it, killed with it and checked gone.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

#include "backends/process/eval_cgroup.hpp"
#include "runtime/core/wire.hpp"
#include "runtime/records/evaluation.hpp"

namespace kevolve::process {


// Why a runner did not answer.
struct RunnerFailure {
  EvalStatus status = EvalStatus::runtime_error;
  std::string reason;  // harness / signal / timeout / cpu_limit / exit / isolation / load / protocol / cuda ...
  std::string message;
};

struct RunnerSpawn {
  std::vector<std::string> argv;  // argv[0]: the runner executable (an absolute path; no PATH lookup)
  bool inherit_env = false;       // true: the evaluator's environment (the CUDA driver reads it); else `env`
  std::vector<std::string> env;
  int command_fd = 3, reply_fd = 4;        // the frame pipes' numbers in the runner
  std::vector<std::pair<int, int>> extra;  // (evaluator fd, number in the runner), e.g. a shared arena
  // Exit classification: a runner killed by SIGSYS was stopped by its seccomp filter (isolation) when
  // `seccomp`; by SIGXCPU/SIGKILL it hit its CPU limit when `sandboxed` (CPU runners: both).
  bool sandboxed = false;
  bool seccomp = false;
  int64_t memory_limit_mb = 0;       // named in the message when the runner died of an allocation failure
  int64_t memory_cgroup_mb = 0;      // the runner's memory cgroup limit, where it makes one (named on SIGKILL)
  std::string timeout_consequence =  // appended to the timeout message
      "its runner was killed";
  // The runner's own cgroup: pids.max (threads count) and memory (0: none; the runner's rlimits bound it).
  CgroupLimits cgroup{0, 256};
};

// The same count for the calling thread (the evaluator's own waits for a CPU), -1 where unknown.
int64_t this_thread_waited_ns();

// The same count summed over every thread of this process (the reference's worker threads too), -1 where
// unknown. Threads that exited between two reads drop out of the sum: compare reads only over a window in
// which the process's threads live on (a reference call between two reads).
int64_t this_process_waited_ns();

class RunnerProcess {
 public:
  RunnerProcess() = default;
  RunnerProcess(const RunnerProcess&) = delete;
  RunnerProcess& operator=(const RunnerProcess&) = delete;
  ~RunnerProcess();

  // Forks and execs the runner. False (with `failure`) when the pipes or the fork failed.
  bool spawn(const RunnerSpawn& spec, RunnerFailure& failure);
  // Sends one frame; false (with the runner's exit classified) when the runner is gone.
  bool send(const std::vector<char>& frame, const char* during, RunnerFailure& failure);
  // Waits up to timeout_s for one frame. On a timeout the runner's whole group is killed and the
  // failure says `timeout`; when the runner died its exit is classified.
  bool receive(double timeout_s, std::vector<char>& frame, RunnerFailure& failure);
  bool running() const { return pid_ > 0; }

  // Freezes / thaws the runner's cgroup (every thread and every process it started, whatever its parent or
  // session), so that its leftovers cannot run while the evaluator times something else; where there is no
  // cgroup (or it did not freeze), SIGSTOP / SIGCONT to the runner's process group. Only between frames.
  void pause();
  void resume();
  // What the sandbox line says of the runner's cgroup: describe(), or "no cgroup (<why>)".
  std::string cgroup_line() const;
  bool has_cgroup() const { return cgroup_.has_value(); }
  // Whether the last runner's cgroup was found empty and removed when it ended (true while none ended).
  bool cgroup_clean() const { return cgroup_clean_; }
  // The runner's pid while it runs (-1 otherwise).
  pid_t pid() const { return pid_; }
  // Nanoseconds the runner's main thread has spent runnable but waiting for a CPU since it started, from
  // the kernel's /proc/<pid>/schedstat (read here, on the trusted side); -1 where the kernel does not say.
  int64_t waited_ns() const;

  // The last 4000 bytes the runner wrote to stderr.
  std::string log_tail();
  // Closes the command pipe, gives the runner `grace_s` to exit on its own, then kills its group.
  void stop(double grace_s = 0.1);

 private:
  RunnerFailure classify_exit(const char* during);
  void drain_stderr();
  // Once the runner has been waited for: whatever is left in its cgroup is killed, the cgroup checked empty
  // and removed (and a memory cgroup it made itself goes); pid_ is -1.
  void forget_exited();
  void kill_group();

  RunnerSpawn spec_;
  pid_t pid_ = -1;
  pid_t group_ = -1;  // the runner's process group (its pid), killed whole when the runner ends
  int cmd_ = -1, reply_ = -1, err_ = -1;
  bool paused_ = false;
  bool signal_stopped_ = false;  // paused by SIGSTOP (no cgroup, or it did not freeze)
  std::optional<EvalCgroup> cgroup_;
  std::string no_cgroup_;  // why the last spawn has none
  bool cgroup_clean_ = true;
  std::string stderr_;
};

// Decodes a frame the runner sent into `record` (its wire decode()). Nothing on success; a protocol failure
// saying the runner sent a malformed `what` otherwise (its memory may have been corrupted by the candidate).
template <class T>
std::optional<RunnerFailure> decode_frame(const std::vector<char>& frame, T& record, const std::string& what) {
  try {
    wire::Reader r(frame);
    decode(r, record);
  } catch (const wire::DecodeError&) {
    return RunnerFailure{EvalStatus::runtime_error, "protocol", "the runner sent a malformed " + what};
  }
  return std::nullopt;
}

}  // namespace kevolve::process
