#include "backends/cpu/evaluator/runner_process.hpp"

namespace kevolve::cpu {

bool RunnerProcess::start(const RunnerConfig& c, double timeout_s, RunnerFailure& failure) {
  process::RunnerSpawn spawn;
  spawn.argv = {c.runner_path,
                c.artifact,
                c.entry,
                std::to_string(c.arena_bytes),
                std::to_string(c.threads),
                std::to_string(c.memory_limit_mb),
                std::to_string(c.cpu_limit_s),
                c.sandbox ? "1" : "0"};
  spawn.env = {"OMP_NUM_THREADS=" + std::to_string(c.threads), "PATH=/usr/bin:/bin"};
  spawn.command_fd = kCommandFd;
  spawn.reply_fd = kReplyFd;
  spawn.extra = {{c.arena_fd, kArenaFd}};
  spawn.sandboxed = true;
  spawn.memory_limit_mb = c.memory_limit_mb;
  // Its cgroup: pids.max (the runner's threads, no processes); its memory stays bounded by RLIMIT_AS.
  spawn.cgroup = {0, 256};
  if (!proc_.spawn(spawn, failure)) return false;
  std::vector<char> frame;
  if (!proc_.receive(timeout_s, frame, failure)) return false;
  Hello h;
  if (auto f = process::decode_frame(frame, h, "hello")) {
    failure = *f;
    return false;
  }
  if (!h.status.ok()) {
    if (h.status.code == Errc::invalid_argument)
      failure = {EvalStatus::rejected, "isolation", h.status.message};
    else if (h.status.code == Errc::unavailable)
      failure = {EvalStatus::harness_error, "sandbox", h.status.message};
    else
      failure = {EvalStatus::runtime_error, "load", h.status.message};
    proc_.stop();
    return false;
  }
  baseline_ = h.baseline_threads;
  sandbox_ = h.sandbox;
  if (c.sandbox && !sandbox_.empty())
    sandbox_ += ", " + (proc_.has_cgroup() ? proc_.cgroup_line()
                                           : proc_.cgroup_line() + ": new processes are refused by the seccomp allow-list");
  return true;
}

bool RunnerProcess::run(const Batch& b, double timeout_s, std::vector<CallOutcome>& out, RunnerFailure& failure) {
  wire::Writer w;
  encode(w, b);
  std::vector<char> frame;
  if (!proc_.send(w.bytes(), "before the call", failure) || !proc_.receive(timeout_s, frame, failure)) return false;
  if (auto f = process::decode_frame(frame, out, "reply")) {
    failure = *f;
    return false;
  }
  if (out.size() != b.calls.size()) {
    failure = {EvalStatus::runtime_error, "protocol", "the runner answered for the wrong number of calls"};
    return false;
  }
  return true;
}

}  // namespace kevolve::cpu
