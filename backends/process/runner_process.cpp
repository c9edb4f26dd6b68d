#include "backends/process/runner_process.hpp"

#include "backends/process/memory_cgroup.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/core/wire.hpp"

extern char** environ;

namespace kevolve::process {

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

RunnerProcess::~RunnerProcess() { stop(); }

bool RunnerProcess::spawn(const RunnerSpawn& spec, RunnerFailure& failure) {
  stop();
  spec_ = spec;
  stderr_.clear();
  int cmd[2], rep[2], err[2];
  if (pipe2(cmd, O_CLOEXEC) || pipe2(rep, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
    failure = {EvalStatus::harness_error, "harness", std::string("pipe: ") + std::strerror(errno)};
    return false;
  }
  // A cgroup of its own, entered by the child before exec; without one, the runner is told so (its seccomp
  // filter is then what refuses new processes) and the pause falls back to SIGSTOP.
  if (auto g = EvalCgroup::create("eval", spec.cgroup)) {
    cgroup_.emplace(std::move(*g));
    no_cgroup_.clear();
    if (cgroup_->memory_bytes() > 0 && spec_.memory_cgroup_mb == 0) spec_.memory_cgroup_mb = cgroup_->memory_bytes() >> 20;
  } else {
    no_cgroup_ = g.error();
  }
  // Everything the child needs is laid out before fork: between fork and exec only async-signal-safe calls.
  std::vector<std::string> argv_s = spec.argv, env_s = spec.env;
  if (spec.inherit_env)
    for (char** e = environ; *e; ++e)
      if (std::strncmp(*e, kEvalCgroupEnv, std::strlen(kEvalCgroupEnv)) != 0) env_s.emplace_back(*e);
  env_s.push_back(std::string(kEvalCgroupEnv) + "=" + (cgroup_ ? cgroup_->describe() : "none: " + no_cgroup_));
  std::vector<char*> argv = c_strings(argv_s), envp = c_strings(env_s);
  char* const* env = envp.data();
  const EvalCgroup* cgroup = cgroup_ ? &*cgroup_ : nullptr;
  std::vector<std::pair<int, int>> moves = spec.extra;
  moves.push_back({cmd[0], spec.command_fd});
  moves.push_back({rep[1], spec.reply_fd});
  moves.push_back({err[1], 2});
  std::vector<int> staged(moves.size(), -1);
  std::vector<char> keep(4096, 0);
  for (auto& m : moves)
    if (m.second >= 0 && m.second < 4096) keep[static_cast<size_t>(m.second)] = 1;

  pid_ = fork();
  if (pid_ < 0) {
    failure = {EvalStatus::harness_error, "harness", std::string("fork: ") + std::strerror(errno)};
    for (int fd : {cmd[0], cmd[1], rep[0], rep[1], err[0], err[1]}) close(fd);
    cgroup_.reset();
    return false;
  }
  if (pid_ == 0) {
    // Into its cgroup first: from here on, everything it starts is inside. Its own process group too (the
    // fallback without a cgroup). Each fd goes first above every target number, then to its target, so
    // that no move overwrites a source still to be moved.
    if (cgroup && cgroup->enter_from_child() != 0) {
      static const char kWhy[] = "kevolve: the runner could not enter its evaluation's cgroup\n";
      if (write(err[1], kWhy, sizeof kWhy - 1) < 0) _exit(126);
      _exit(126);
    }
    setpgid(0, 0);
    for (size_t i = 0; i < moves.size(); ++i) staged[i] = fcntl(moves[i].first, F_DUPFD, 64);
    for (size_t i = 0; i < moves.size(); ++i) dup2(staged[i], moves[i].second);
    const int devnull = open("/dev/null", O_RDWR);
    dup2(devnull, 0);
    dup2(devnull, 1);
    for (int fd = 3; fd < 4096; ++fd)
      if (!keep[static_cast<size_t>(fd)]) close(fd);
    execve(argv[0], argv.data(), env);
    _exit(127);
  }
  setpgid(pid_, pid_);  // also here, so that the group exists before the child runs
  group_ = pid_;
  close(cmd[0]);
  close(rep[1]);
  close(err[1]);
  cmd_ = cmd[1];
  reply_ = rep[0];
  err_ = err[0];
  fcntl(err_, F_SETFL, O_NONBLOCK);
  return true;
}

bool RunnerProcess::send(const std::vector<char>& frame, const char* during, RunnerFailure& failure) {
  if (pid_ <= 0) {
    failure = {EvalStatus::harness_error, "harness", "no runner is running"};
    return false;
  }
  resume();
  if (!wire::write_frame(cmd_, frame)) {
    failure = classify_exit(during);
    return false;
  }
  return true;
}

void RunnerProcess::pause() {
  if (group_ > 0 && !paused_) {
    if (!cgroup_ || !cgroup_->freeze()) {
      kill(-group_, SIGSTOP);
      signal_stopped_ = true;
    }
    paused_ = true;
  }
}

void RunnerProcess::resume() {
  if (paused_) {
    if (cgroup_ && cgroup_->frozen()) cgroup_->thaw();
    if (signal_stopped_ && group_ > 0) kill(-group_, SIGCONT);
  }
  paused_ = signal_stopped_ = false;
}

std::string RunnerProcess::cgroup_line() const {
  return cgroup_ ? cgroup_->describe() : "no cgroup (" + no_cgroup_ + ")";
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

void RunnerProcess::kill_group() {
  if (group_ > 0) kill(-group_, SIGKILL);
  if (pid_ > 0) kill(pid_, SIGKILL);
}

bool RunnerProcess::receive(double timeout_s, std::vector<char>& frame, RunnerFailure& failure) {
  if (pid_ <= 0) {
    failure = {EvalStatus::harness_error, "harness", "no runner is running"};
    return false;
  }
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
      kill_group();
      waitpid(pid_, nullptr, 0);
      forget_exited();
      drain_stderr();
      failure = {EvalStatus::timeout, "timeout",
                 "the candidate did not finish within " + std::to_string(static_cast<int>(timeout_s)) +
                     " s (wall clock): " + spec_.timeout_consequence};
      return false;
    }
  }
}

RunnerFailure RunnerProcess::classify_exit(const char* during) {
  int status = 0;
  if (pid_ > 0) {
    waitpid(pid_, &status, 0);
    kill_group();  // whatever the runner left behind in its process group
    forget_exited();
  }
  drain_stderr();
  const std::string when = std::string(" ") + during;
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    if ((spec_.sandboxed || spec_.seccomp) && sig == SIGSYS)
      return {EvalStatus::rejected, "isolation",
              "killed by the sandbox (SIGSYS)" + when +
                  ": the candidate made a forbidden system call (new process, exec, socket, file write, or executable "
                  "memory)"};
    if (spec_.sandboxed && (sig == SIGXCPU || sig == SIGKILL))
      return {EvalStatus::timeout, "cpu_limit", "the runner exceeded its CPU-time limit" + when};
    std::string msg =
        std::string("the runner crashed with signal ") + std::to_string(sig) + " (" + strsignal(sig) + ")" + when;
    if (sig == SIGKILL && spec_.memory_cgroup_mb > 0)
      msg += "; killed by the kernel: its memory cgroup's limit is " + std::to_string(spec_.memory_cgroup_mb) +
             " MiB (a SIGKILL the evaluator did not send)";
    if (spec_.memory_limit_mb > 0 &&
        (stderr_.find("bad_alloc") != std::string::npos || stderr_.find("Cannot allocate") != std::string::npos))
      msg += "; it ran out of memory (data limit " + std::to_string(spec_.memory_limit_mb) + " MiB above start-up)";
    return {EvalStatus::runtime_error, "signal", msg};
  }
  if (WIFEXITED(status))
    return {EvalStatus::runtime_error, "exit",
            "the runner exited with status " + std::to_string(WEXITSTATUS(status)) + when +
                " (the candidate called exit?)"};
  return {EvalStatus::runtime_error, "exit", "the runner disappeared" + when};
}

void RunnerProcess::forget_exited() {
  if (cgroup_) {
    cgroup_clean_ = cgroup_->kill_all();  // a frozen cgroup is thawed by it
    cgroup_clean_ = cgroup_->remove() && cgroup_clean_;
    cgroup_.reset();
    paused_ = signal_stopped_ = false;
  }
  remove_runner_cgroup(pid_);
  pid_ = -1;
}

namespace {
int64_t schedstat_wait(const std::string& path) {
  std::ifstream f(path);
  int64_t on_cpu = 0, waiting = -1;
  if (!(f >> on_cpu >> waiting)) return -1;
  return waiting;
}
}  // namespace

int64_t RunnerProcess::waited_ns() const {
  return pid_ > 0 ? schedstat_wait("/proc/" + std::to_string(pid_) + "/schedstat") : -1;
}

int64_t this_thread_waited_ns() { return schedstat_wait("/proc/thread-self/schedstat"); }

int64_t this_process_waited_ns() {
  DIR* d = opendir("/proc/self/task");
  if (!d) return -1;
  int64_t sum = 0;
  bool any = false;
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const int64_t w = schedstat_wait(std::string("/proc/self/task/") + e->d_name + "/schedstat");
    if (w >= 0) {
      sum += w;
      any = true;
    }
  }
  closedir(d);
  return any ? sum : -1;
}

std::string RunnerProcess::log_tail() {
  if (err_ >= 0) drain_stderr();
  return stderr_.size() > 4000 ? stderr_.substr(stderr_.size() - 4000) : stderr_;
}

void RunnerProcess::stop(double grace_s) {
  resume();  // a stopped runner would not see the end of its command pipe
  if (cmd_ >= 0) {
    close(cmd_);
    cmd_ = -1;
  }
  if (pid_ > 0) {
    // Let it exit on EOF (a CUDA process tears its context down), then make sure.
    const int tries = std::max(1, static_cast<int>(grace_s * 1000));
    for (int i = 0; i < tries; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        forget_exited();
        break;
      }
      usleep(1000);
    }
    if (pid_ > 0) {
      kill_group();
      waitpid(pid_, nullptr, 0);
      forget_exited();
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

}  // namespace kevolve::process
