#include "backends/cpu/evaluator/runner_process.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kevolve::cpu {

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

RunnerProcess::~RunnerProcess() { stop(); }

bool RunnerProcess::start(const RunnerConfig& c, double timeout_s, RunnerFailure& failure) {
  memory_limit_mb_ = c.memory_limit_mb;
  int cmd[2], rep[2], err[2];
  if (pipe2(cmd, O_CLOEXEC) || pipe2(rep, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
    failure = {EvalStatus::harness_error, "harness", std::string("pipe: ") + std::strerror(errno)};
    return false;
  }
  const std::string bytes = std::to_string(c.arena_bytes), threads = std::to_string(c.threads),
                    mem = std::to_string(c.memory_limit_mb), cpu = std::to_string(c.cpu_limit_s);
  const std::string omp = "OMP_NUM_THREADS=" + threads;
  const char* argv[] = {c.runner_path.c_str(), c.artifact.c_str(),    c.entry.c_str(),
                        bytes.c_str(),         threads.c_str(),       mem.c_str(),
                        cpu.c_str(),           c.sandbox ? "1" : "0", nullptr};
  const char* envp[] = {omp.c_str(), "PATH=/usr/bin:/bin", nullptr};
  pid_ = fork();
  if (pid_ < 0) {
    failure = {EvalStatus::harness_error, "harness", std::string("fork: ") + std::strerror(errno)};
    return false;
  }
  if (pid_ == 0) {
    // Child: only async-signal-safe calls until exec. Its own process group, so that anything it might
    // start (only possible with the sandbox off) is killed with it. Move the fds to their fixed numbers.
    setpgid(0, 0);
    int fds[4] = {fcntl(c.arena_fd, F_DUPFD, 16), fcntl(cmd[0], F_DUPFD, 16), fcntl(rep[1], F_DUPFD, 16),
                  fcntl(err[1], F_DUPFD, 16)};
    dup2(fds[0], kArenaFd);
    dup2(fds[1], kCommandFd);
    dup2(fds[2], kReplyFd);
    dup2(fds[3], 2);
    int devnull = open("/dev/null", O_RDWR);
    dup2(devnull, 0);
    dup2(devnull, 1);
    for (int fd = 6; fd < 4096; ++fd) close(fd);
    execve(argv[0], const_cast<char* const*>(argv), const_cast<char* const*>(envp));
    _exit(127);
  }
  setpgid(pid_, pid_);  // also here, so the group exists before the child runs
  group_ = pid_;
  close(cmd[0]);
  close(rep[1]);
  close(err[1]);
  cmd_ = cmd[1];
  reply_ = rep[0];
  err_ = err[0];
  fcntl(err_, F_SETFL, O_NONBLOCK);
  std::vector<char> frame;
  if (!read_reply(timeout_s, frame, failure)) return false;
  Hello h;
  try {
    wire::Reader r(frame);
    decode(r, h);
  } catch (const wire::DecodeError&) {
    failure = {EvalStatus::runtime_error, "protocol", "the runner sent a malformed hello"};
    return false;
  }
  if (!h.ok) {
    if (h.message.rfind("isolation:", 0) == 0)
      failure = {EvalStatus::rejected, "isolation", h.message.substr(11)};
    else if (h.message.rfind("sandbox unavailable", 0) == 0)
      failure = {EvalStatus::harness_error, "sandbox", h.message};
    else
      failure = {EvalStatus::runtime_error, "load", h.message};
    stop();
    return false;
  }
  baseline_ = h.baseline_threads;
  sandbox_ = h.sandbox;
  return true;
}

void RunnerProcess::pause() {
  if (group_ > 0 && !paused_) {
    kill(-group_, SIGSTOP);
    paused_ = true;
  }
}

void RunnerProcess::resume() {
  if (group_ > 0 && paused_) kill(-group_, SIGCONT);
  paused_ = false;
}

bool RunnerProcess::run(const Batch& b, double timeout_s, std::vector<CallOutcome>& out, RunnerFailure& failure) {
  resume();
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
    failure = {EvalStatus::runtime_error, "protocol",
               "the runner sent a malformed reply (memory corrupted by the candidate?)"};
    return false;
  }
  if (out.size() != b.calls.size()) {
    failure = {EvalStatus::runtime_error, "protocol", "the runner answered for the wrong number of calls"};
    return false;
  }
  return true;
}

void RunnerProcess::drain_stderr() {
  char buf[4096];
  for (;;) {
    const ssize_t n = read(err_, buf, sizeof buf);
    if (n <= 0) break;
    stderr_.append(buf, static_cast<size_t>(n));
    if (stderr_.size() > 64 * 1024) stderr_.erase(0, stderr_.size() - 32 * 1024);
  }
}

bool RunnerProcess::read_reply(double timeout_s, std::vector<char>& frame, RunnerFailure& failure) {
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
                 "the candidate did not return within " + std::to_string(static_cast<int>(timeout_s)) +
                     " s (wall clock); its runner was killed"};
      return false;
    }
  }
}

RunnerFailure RunnerProcess::classify_exit(const char* during) {
  int status = 0;
  if (pid_ > 0) {
    waitpid(pid_, &status, 0);
    kill(-pid_, SIGKILL);  // whatever the runner left behind in its process group
  }
  pid_ = -1;
  drain_stderr();
  const std::string when = std::string(" ") + during;
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    if (sig == SIGSYS)
      return {EvalStatus::rejected, "isolation",
              "killed by the sandbox (SIGSYS)" + when +
                  ": the candidate made a forbidden system call (new process, exec, socket, file write, or executable "
                  "memory)"};
    if (sig == SIGXCPU || sig == SIGKILL)
      return {EvalStatus::timeout, "cpu_limit", "the runner exceeded its CPU-time limit" + when};
    std::string msg = std::string("crashed with signal ") + std::to_string(sig) + " (" + strsignal(sig) + ")" + when;
    if (stderr_.find("bad_alloc") != std::string::npos || stderr_.find("Cannot allocate") != std::string::npos)
      msg += "; it ran out of memory (data limit " + std::to_string(memory_limit_mb_) + " MiB above start-up)";
    return {EvalStatus::runtime_error, "signal", msg};
  }
  if (WIFEXITED(status))
    return {EvalStatus::runtime_error, "exit",
            "the runner exited with status " + std::to_string(WEXITSTATUS(status)) + when +
                " (the candidate called exit?)"};
  return {EvalStatus::runtime_error, "exit", "the runner disappeared" + when};
}

std::string RunnerProcess::log_tail() {
  if (err_ >= 0) drain_stderr();
  return stderr_.size() > 4000 ? stderr_.substr(stderr_.size() - 4000) : stderr_;
}

void RunnerProcess::stop() {
  resume();  // a stopped runner would not see the end of its command pipe
  if (cmd_ >= 0) {
    close(cmd_);
    cmd_ = -1;
  }
  if (pid_ > 0) {
    // Give it a moment to exit on EOF, then make sure.
    for (int i = 0; i < 100; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      usleep(1000);
    }
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  if (group_ > 0) kill(-group_, SIGKILL);  // stray processes of the runner's group
  group_ = -1;
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

}  // namespace kevolve::cpu
