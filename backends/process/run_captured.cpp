#include "backends/process/run_captured.hpp"

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kevolve::process {

int run_captured(const std::vector<std::string>& argv, double timeout_s, std::string& output) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return -1;
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    // Never kevolve's own standard input (a terminal, a pipe, a file given to it).
    if (const int null = open("/dev/null", O_RDONLY | O_CLOEXEC); null >= 0) dup2(null, 0);
    dup2(p[1], 1);
    dup2(p[1], 2);
    std::vector<char*> a;
    for (auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    setpgid(0, 0);
    execvp(a[0], a.data());
    _exit(127);
  }
  close(p[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  bool timed_out = false;
  char buf[4096];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd pf{p[0], POLLIN, 0};
    if (poll(&pf, 1, static_cast<int>(left)) <= 0) continue;
    const ssize_t n = read(p[0], buf, sizeof buf);
    if (n <= 0) break;
    if (output.size() < (1u << 20)) output.append(buf, static_cast<size_t>(n));
  }
  close(p[0]);
  int status = 0;
  if (timed_out) {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
  }
  waitpid(pid, &status, 0);
  if (timed_out) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace kevolve::process
