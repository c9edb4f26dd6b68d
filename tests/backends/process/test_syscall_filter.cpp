// The GPU runner's seccomp filter (backends/process/syscall_filter.hpp), tried on the CPU: each case runs in
// a forked child that installs the filter and reports what happened through its exit status and stderr.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <functional>
#include <string>
#include <thread>

#include "backends/process/syscall_filter.hpp"
#include "tests/test_support/skip.hpp"

using namespace kevolve;

namespace {

struct ChildOutcome {
  bool signalled = false;
  int signal = 0;
  int exit_code = -1;
  std::string err;  // what the child wrote to stderr
};

// Runs `body` in a child under the filter; `body` returns the child's exit code.
ChildOutcome under_filter(const process::GpuFilterOptions& o, const std::function<int()>& body) {
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    if (!process::install_gpu_runner_filter(o).empty()) _exit(100);
    _exit(body());
  }
  close(pipe_fds[1]);
  ChildOutcome out;
  char buf[512];
  for (ssize_t n; (n = read(pipe_fds[0], buf, sizeof buf)) > 0;) out.err.append(buf, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  out.signalled = WIFSIGNALED(status);
  out.signal = out.signalled ? WTERMSIG(status) : 0;
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

bool x86_64() {
#if defined(__x86_64__)
  return true;
#else
  return false;
#endif
}

}  // namespace

TEST_CASE("the GPU runner's filter lets a process compute, use threads and read files", "[process][seccomp]") {
  if (!x86_64()) {
    test::say_skipped("the filter is written for x86-64 only");
    return;
  }
  const ChildOutcome c = under_filter({}, [] {
    std::atomic<int> sum{0};
    std::thread t([&] { sum += 41; });
    t.join();
    const int fd = open("/proc/self/status", O_RDONLY);
    char b[16];
    const bool read_ok = fd >= 0 && read(fd, b, sizeof b) > 0;
    return (sum + 1 == 42 && read_ok) ? 0 : 1;
  });
  INFO(c.err);
  CHECK_FALSE(c.signalled);
  CHECK(c.exit_code == 0);
}

TEST_CASE("the GPU runner's filter kills a process that opens a socket, forks or signals another",
          "[process][seccomp]") {
  if (!x86_64()) {
    test::say_skipped("the filter is written for x86-64 only");
    return;
  }
  const std::function<int()> bodies[] = {
      [] { return socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 0 : 2; },
      [] { return static_cast<int>(syscall(SYS_fork)) >= 0 ? 0 : 2; },
      [] { return kill(getppid(), 0) == 0 ? 0 : 2; },
  };
  for (const auto& body : bodies) {
    const ChildOutcome c = under_filter({}, body);
    INFO(c.err);
    CHECK(c.signalled);
    CHECK(c.signal == SIGSYS);
  }
}

TEST_CASE("the GPU runner's filter refuses a call it does not list with EPERM and names it", "[process][seccomp]") {
  if (!x86_64()) {
    test::say_skipped("the filter is written for x86-64 only");
    return;
  }
  // getpgid is harmless but not listed: refused, not fatal, and the log line names its number.
  const ChildOutcome c = under_filter({}, [] { return syscall(SYS_getpgid, 0) == -1 && errno == EPERM ? 0 : 1; });
  CHECK_FALSE(c.signalled);
  CHECK(c.exit_code == 0);
  CHECK(c.err.find("system call " + std::to_string(SYS_getpgid) + " refused by the sandbox") != std::string::npos);
}

TEST_CASE("the GPU runner's filter opens files for writing only inside a private filesystem", "[process][seccomp]") {
  if (!x86_64()) {
    test::say_skipped("the filter is written for x86-64 only");
    return;
  }
  char path[] = "/tmp/kevolve-filter-XXXXXX";
  const int made = mkstemp(path);
  REQUIRE(made >= 0);
  close(made);
  const std::string file = path;
  auto open_rw = [file] { return open(file.c_str(), O_RDWR) >= 0 ? 0 : (errno == EPERM ? 3 : 1); };
  auto create = [file] {
    return open((file + ".new").c_str(), O_WRONLY | O_CREAT, 0600) >= 0 ? 0 : (errno == EPERM ? 3 : 1);
  };
  CHECK(under_filter({}, open_rw).exit_code == 3);  // shared filesystem: read-only opens only
  process::GpuFilterOptions priv;
  priv.private_filesystem = true;
  CHECK(under_filter(priv, open_rw).exit_code == 0);  // the mounts make "/" read-only: writing is then safe
  CHECK(under_filter(priv, create).exit_code == 3);   // creating a file never is
  unlink(path);
}

TEST_CASE("the GPU runner's filter loads a library only until loading is closed", "[process][seccomp]") {
  if (!x86_64()) {
    test::say_skipped("the filter is written for x86-64 only");
    return;
  }
  process::GpuFilterOptions o;
  o.loading = true;
  const ChildOutcome c = under_filter(o, [] {
    const int fd = open("/proc/self/exe", O_RDONLY);
    void* before = mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
    if (before == MAP_FAILED) return 1;
    if (!process::close_loading().empty()) return 2;
    void* after = mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
    return after == MAP_FAILED && errno == EPERM ? 0 : 3;
  });
  INFO(c.err);
  CHECK(c.exit_code == 0);
}
