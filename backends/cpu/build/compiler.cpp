#include "backends/cpu/build/compiler.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kevolve::cpu {

namespace {
#include "kevolve_kernel_header.inc"  // kKernelHeader: backends/kevolve_kernel.h, embedded at build time
}

int run_captured(const std::vector<std::string>& argv, double timeout_s, std::string& output) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return -1;
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
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
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) { timed_out = true; break; }
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

BuildResult compile_cpu(const Candidate& c, const std::string& dir, const CompileOptions& o) {
  BuildResult r;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string src = dir + "/candidate.cpp", so = dir + "/candidate.so";
  std::ofstream(dir + "/kevolve_kernel.h") << kKernelHeader;
  std::ofstream(src) << c.source;
  std::vector<std::string> argv{o.compiler};
  argv.insert(argv.end(), o.flags.begin(), o.flags.end());
  for (const std::string& a : {std::string("-I") + dir, src, std::string("-o"), so}) argv.push_back(a);
  const int rc = run_captured(argv, o.timeout_s, r.log);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (rc == -1 && r.log.empty()) r.log = "the compiler did not finish within " + std::to_string(int(o.timeout_s)) + " s";
  r.ok = rc == 0 && std::filesystem::exists(so);
  if (r.ok) r.artifact = so;
  // Compiler messages name the private temp path; show the candidate's own name instead.
  for (size_t pos; (pos = r.log.find(src)) != std::string::npos;) r.log.replace(pos, src.size(), "candidate.cpp");
  return r;
}

}  // namespace kevolve::cpu
