#include "backends/cuda/evaluator/runner_process.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace kevolve::cuda {
namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

CudaRunnerProcess::~CudaRunnerProcess() { stop(); }

bool CudaRunnerProcess::start(const std::string& runner_path, const Setup& setup, int64_t, double timeout_s,
                              Hello& hello, RunnerFailure& failure) {
  int cmd[2], rep[2], err[2];
  if (pipe2(cmd, O_CLOEXEC) || pipe2(rep, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
    failure = {EvalStatus::harness_error, "harness", std::string("pipe: ") + std::strerror(errno)};
    return false;
  }
  const char* argv[] = {runner_path.c_str(), nullptr};
  pid_ = fork();
  if (pid_ < 0) {
    failure = {EvalStatus::harness_error, "harness", std::string("fork: ") + std::strerror(errno)};
    return false;
  }
  if (pid_ == 0) {
    // Own process group (killed whole), fixed fd numbers, nothing else inherited. The environment is
    // kept: the CUDA driver reads CUDA_VISIBLE_DEVICES and friends.
    setpgid(0, 0);
    int fds[3] = {fcntl(cmd[0], F_DUPFD, 16), fcntl(rep[1], F_DUPFD, 16), fcntl(err[1], F_DUPFD, 16)};
    dup2(fds[0], kCommandFd);
    dup2(fds[1], kReplyFd);
    dup2(fds[2], 2);
    int devnull = open("/dev/null", O_RDWR);
    dup2(devnull, 0);
    dup2(devnull, 1);
    for (int fd = 5; fd < 4096; ++fd) close(fd);
    execve(argv[0], const_cast<char* const*>(argv), environ);
    _exit(127);
  }
  setpgid(pid_, pid_);
  close(cmd[0]);
  close(rep[1]);
  close(err[1]);
  cmd_ = cmd[1];
  reply_ = rep[0];
  err_ = err[0];
  fcntl(err_, F_SETFL, O_NONBLOCK);
  wire::Writer w;
  encode(w, setup);
  if (!wire::write_frame(cmd_, w.bytes())) {
    failure = classify_exit("at start-up");
    return false;
  }
  std::vector<char> frame;
  if (!read_reply(timeout_s, frame, failure)) return false;
  try {
    wire::Reader r(frame);
    decode(r, hello);
  } catch (const wire::DecodeError&) {
    failure = {EvalStatus::runtime_error, "protocol", "the runner sent a malformed hello"};
    return false;
  }
  if (!hello.ok) {
    failure = {EvalStatus::runtime_error, "load", hello.message};
    stop();
    return false;
  }
  return true;
}

bool CudaRunnerProcess::run(const Batch& b, double timeout_s, BatchReply& out, RunnerFailure& failure) {
  if (pid_ <= 0) {
    failure = {EvalStatus::harness_error, "harness", "no runner"};
    return false;
  }
  wire::Writer w;
  encode(w, b);
  if (!wire::write_frame(cmd_, w.bytes())) {
    failure = classify_exit("before the call");
    return false;
  }
  std::vector<char> frame;
  if (!read_reply(timeout_s, frame, failure)) return false;
  try {
    wire::Reader r(frame);
    decode(r, out);
  } catch (const wire::DecodeError&) {
    failure = {EvalStatus::runtime_error, "protocol", "the runner sent a malformed reply"};
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
    failure = {EvalStatus::runtime_error, "cuda", "CUDA error in the candidate's kernel: " + text};
    return false;
  }
  return true;
}

void CudaRunnerProcess::drain_stderr() {
  char buf[4096];
  for (;;) {
    const ssize_t n = read(err_, buf, sizeof buf);
    if (n <= 0) break;
    stderr_.append(buf, static_cast<size_t>(n));
    if (stderr_.size() > 64 * 1024) stderr_.erase(0, stderr_.size() - 32 * 1024);
  }
}

bool CudaRunnerProcess::read_reply(double timeout_s, std::vector<char>& frame, RunnerFailure& failure) {
  const double deadline = now_s() + timeout_s;
  for (;;) {
    pollfd p[2] = {{reply_, POLLIN, 0}, {err_, POLLIN, 0}};
    const int wait_ms = static_cast<int>(std::max(0.0, deadline - now_s()) * 1000) + 1;
    const int n = poll(p, 2, wait_ms);
    if (n < 0 && errno == EINTR) continue;
    if (p[1].revents) drain_stderr();
    if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      auto f = wire::read_frame(reply_);
      if (!f) {
        failure = classify_exit("while running the candidate");
        return false;
      }
      frame = std::move(*f);
      return true;
    }
    if (now_s() >= deadline) {
      kill(-pid_, SIGKILL);
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
      drain_stderr();
      failure = {EvalStatus::timeout, "timeout",
                 "the candidate did not finish within " + std::to_string(static_cast<int>(timeout_s)) +
                     " s (wall clock): its runner was killed, which ends its kernel"};
      return false;
    }
  }
}

RunnerFailure CudaRunnerProcess::classify_exit(const char* during) {
  int status = 0;
  if (pid_ > 0) {
    waitpid(pid_, &status, 0);
    kill(-pid_, SIGKILL);
  }
  pid_ = -1;
  drain_stderr();
  const std::string when = std::string(" ") + during;
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return {EvalStatus::runtime_error, "signal",
            std::string("the runner crashed with signal ") + std::to_string(sig) + " (" + strsignal(sig) + ")" + when};
  }
  if (WIFEXITED(status))
    return {EvalStatus::runtime_error, "exit",
            "the runner exited with status " + std::to_string(WEXITSTATUS(status)) + when};
  return {EvalStatus::runtime_error, "exit", "the runner disappeared" + when};
}

std::string CudaRunnerProcess::log_tail() {
  if (err_ >= 0) drain_stderr();
  return stderr_.size() > 4000 ? stderr_.substr(stderr_.size() - 4000) : stderr_;
}

void CudaRunnerProcess::stop() {
  if (cmd_ >= 0) {
    close(cmd_);
    cmd_ = -1;
  }
  if (pid_ > 0) {
    for (int i = 0; i < 2000; ++i) {  // up to 2 s: a CUDA process tears its context down on exit
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      usleep(1000);
    }
    if (pid_ > 0) {
      kill(-pid_, SIGKILL);
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  if (err_ >= 0) {
    drain_stderr();
    close(err_);
    err_ = -1;
  }
  if (reply_ >= 0) {
    close(reply_);
    reply_ = -1;
  }
}

}  // namespace kevolve::cuda
