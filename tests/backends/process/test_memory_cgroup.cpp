// A runner's memory cgroup (backends/process/memory_cgroup.hpp), tried where this machine lets root make one:
// shared anonymous memory (which RLIMIT_DATA does not count) beyond the limit ends the process.
#include <catch2/catch.hpp>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "backends/process/memory_cgroup.hpp"
#include "tests/test_support/skip.hpp"

using namespace kevolve;

TEST_CASE("a runner in its own memory cgroup is killed when its shared memory passes the limit", "[process][cgroup]") {
  if (geteuid() != 0) {
    test::say_skipped("making a memory cgroup needs root");
    return;
  }
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(pipe_fds[0]);
    std::string why_not;
    const std::string level = process::enter_memory_cgroup(int64_t{64} << 20, why_not);
    const std::string said = level.empty() ? "none: " + why_not : level;
    if (write(pipe_fds[1], said.data(), said.size()) < 0) _exit(3);
    close(pipe_fds[1]);
    if (level.empty()) _exit(2);
    // 256 MiB of shared anonymous memory, touched page by page.
    const size_t bytes = size_t{256} << 20;
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) _exit(4);
    std::memset(p, 1, bytes);
    _exit(0);  // not reached under the limit
  }
  close(pipe_fds[1]);
  std::string said;
  char buf[256];
  for (ssize_t n; (n = read(pipe_fds[0], buf, sizeof buf)) > 0;) said.append(buf, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  const std::string dir = process::runner_cgroup_path(pid);
  process::remove_runner_cgroup(pid);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
    test::say_skipped("no memory cgroup on this machine (" + said + ")");
    return;
  }
  INFO(said);
  CHECK(said.find("memory cgroup (v") == 0);
  CHECK(said.find(" 64 MiB") != std::string::npos);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
  // The evaluator removes the cgroup of a runner that has exited.
  CHECK_FALSE(dir.empty());
  CHECK_FALSE(std::filesystem::exists(dir));
}
