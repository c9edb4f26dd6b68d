#include "backends/cuda/evaluator/runner_process.hpp"

#include <unistd.h>

#include "backends/cuda/device_names.hpp"

namespace kevolve::cuda {

bool CudaRunnerProcess::begin(const std::string& runner_path, const Setup& setup, int64_t memory_limit_mb,
                              RunnerFailure& failure) {
  process::RunnerSpawn spawn;
  spawn.argv = {runner_path};
  spawn.inherit_env = true;  // the driver reads CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES and friends
  spawn.command_fd = kCommandFd;
  spawn.reply_fd = kReplyFd;
  spawn.memory_limit_mb = memory_limit_mb;
  spawn.seccomp = true;  // its allow-list kills forbidden calls with SIGSYS (where the filter is in force)
  if (geteuid() == 0) spawn.memory_cgroup_mb = kRunnerHostMemoryMb;  // in its evaluation's cgroup, else its own
  // Its evaluation's cgroup carries the host-memory bound (RLIMIT_AS would break the driver); pids.max: the
  // driver's threads and the candidate's, no processes.
  spawn.cgroup = {kRunnerHostMemoryMb << 20, 256};
  spawn.timeout_consequence = "its runner was killed, which ends its kernel";
  if (!proc_.spawn(spawn, failure)) return false;
  wire::Writer w;
  encode(w, setup);
  return proc_.send(w.bytes(), "at start-up", failure);
}

bool CudaRunnerProcess::ready(double timeout_s, Hello& hello, RunnerFailure& failure) {
  std::vector<char> frame;
  if (!proc_.receive(timeout_s, frame, failure)) return false;
  if (auto f = process::decode_frame(frame, hello, "hello")) {
    failure = *f;
    return false;
  }
  if (!hello.status.ok()) {
    failure = {EvalStatus::runtime_error, "load", hello.status.message};
    stop();
    return false;
  }
  return true;
}

bool CudaRunnerProcess::load(const Load& candidate, double timeout_s, Hello& hello, RunnerFailure& failure) {
  wire::Writer w;
  encode(w, candidate);
  return proc_.send(w.bytes(), "while loading the candidate", failure) && ready(timeout_s, hello, failure);
}

namespace {

// A device fault that ended the runner by a signal instead of an error code: ROCr prints "Memory access
// fault by GPU node-..." and aborts the process (CUDA returns the error, handled in run()). The verdict is then
// the device fault it was, with the runtime's own line.
void name_device_fault(RunnerFailure& f, const std::string& log) {
  const auto at = log.find("Memory access fault by GPU");
  if (f.reason != "signal" || at == std::string::npos) return;
  const auto end = log.find('\n', at);
  f.reason = kGpuReason;
  f.message = std::string(kGpuApi) + " error in the candidate's kernel: " +
              log.substr(at, end == std::string::npos ? std::string::npos : end - at) + " (" + f.message + ")";
}

}  // namespace

bool CudaRunnerProcess::run(const Batch& b, double timeout_s, BatchReply& out, RunnerFailure& failure) {
  wire::Writer w;
  encode(w, b);
  std::vector<char> frame;
  if (!proc_.send(w.bytes(), "before the call", failure) || !proc_.receive(timeout_s, frame, failure)) {
    name_device_fault(failure, proc_.log_tail());
    return false;
  }
  if (auto f = process::decode_frame(frame, out, "reply")) {
    failure = *f;
    return false;
  }
  if (out.calls.size() != b.calls.size()) {
    failure = {EvalStatus::runtime_error, "protocol", "the runner answered for the wrong number of calls"};
    return false;
  }
  if (out.fatal) {  // the context is dead: the runner exits; collect it
    std::string text;
    for (auto& c : out.calls)
      if (!c.error.empty()) text = c.error;
    stop();
    failure = {EvalStatus::runtime_error, kGpuReason,
               std::string(kGpuApi) + " error in the candidate's kernel: " + text};
    return false;
  }
  return true;
}

}  // namespace kevolve::cuda
