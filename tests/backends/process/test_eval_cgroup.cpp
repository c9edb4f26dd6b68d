// One evaluation's cgroup (backends/process/eval_cgroup.hpp), with real processes: whatever a child that
// entered it before exec starts — a double fork with setsid, a clone(CLONE_PARENT) whose parent is this
// test — is inside, stops while frozen (its CPU time does not move), is gone after kill_all; pids.max
// refuses the fork past the limit; the memory limit kills; the folders go with the object.
#include <catch2/catch.hpp>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backends/process/eval_cgroup.hpp"
#include "tests/test_support/skip.hpp"

using namespace kevolve;
using process::CgroupLimits;
using process::EvalCgroup;

namespace {

// The cgroup, or nothing (with the skip said) where this machine cannot make one.
std::optional<EvalCgroup> make_or_skip(const CgroupLimits& limits) {
  if (geteuid() != 0) {
    test::say_skipped("making a cgroup needs root");
    return std::nullopt;
  }
  auto g = EvalCgroup::create("test", limits);
  if (!g) {
    test::say_skipped("no cgroup on this machine: " + g.error());
    return std::nullopt;
  }
  return std::move(*g);
}

[[noreturn]] void spin() {
  volatile uint64_t i = 0;
  for (;;) i = i + 1;
}

void send_pid(int fd, pid_t p) {
  if (write(fd, &p, sizeof p) != sizeof p) _exit(5);
}

// utime + stime in clock ticks, and the state letter; state '\0' when the process is gone.
struct CpuState {
  long ticks = 0;
  char state = '\0';
};
CpuState cpu_of(pid_t p) {
  std::ifstream f("/proc/" + std::to_string(p) + "/stat");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t close_paren = text.rfind(')');
  if (close_paren == std::string::npos) return {};
  std::istringstream rest(text.substr(close_paren + 2));
  std::vector<std::string> fields;
  for (std::string w; rest >> w;) fields.push_back(w);
  if (fields.size() < 13) return {};
  return {std::stol(fields[11]) + std::stol(fields[12]), fields[0][0]};
}

bool gone_or_zombie(pid_t p) {
  const char s = cpu_of(p).state;
  return s == '\0' || s == 'Z' || s == 'X';
}

// Waits (bounded) until every one of `ps` has used more CPU than in `before`.
bool all_advance(const std::vector<pid_t>& ps, const std::vector<long>& before) {
  for (int i = 0; i < 1000; ++i) {
    bool all = true;
    for (size_t k = 0; k < ps.size(); ++k) all = all && cpu_of(ps[k]).ticks > before[k];
    if (all) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

std::vector<long> ticks_of(const std::vector<pid_t>& ps) {
  std::vector<long> t;
  for (pid_t p : ps) t.push_back(cpu_of(p).ticks);
  return t;
}

}  // namespace

TEST_CASE("every process started from inside an evaluation's cgroup is inside it, frozen with it and killed with it",
          "[process][cgroup]") {
  auto g = make_or_skip({int64_t{256} << 20, 64});
  if (!g) return;
  INFO(g->describe());
  CHECK(g->describe().find("cgroup v" + std::to_string(g->version()) + " " + g->name() + " (pids.max 64") == 0);
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(fds[0]);
    if (g->enter_from_child() != 0) _exit(2);
    // A double fork with setsid: its grandchild belongs to no process of ours, in a session of its own.
    const pid_t a = fork();
    if (a == 0) {
      if (fork() == 0) {
        setsid();
        send_pid(fds[1], getpid());
        spin();
      }
      _exit(0);
    }
    waitpid(a, nullptr, 0);
    // clone(CLONE_PARENT): its parent is the test process, not this child.
    const long c = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0);
    if (c == 0) {
      setsid();
      send_pid(fds[1], getpid());
      spin();
    }
    send_pid(fds[1], getpid());
    spin();
  }
  close(fds[1]);
  std::vector<pid_t> started;
  for (pid_t p; started.size() < 3 && read(fds[0], &p, sizeof p) == sizeof p;) started.push_back(p);
  close(fds[0]);
  REQUIRE(started.size() == 3);

  const std::vector<pid_t> inside = g->pids();
  for (pid_t p : started) {
    INFO("pid " << p);
    CHECK(std::find(inside.begin(), inside.end(), p) != inside.end());
  }
  // Running: each one's CPU time moves.
  REQUIRE(all_advance(started, ticks_of(started)));

  REQUIRE(g->freeze());
  CHECK(g->frozen());
  const std::vector<long> at_freeze = ticks_of(started);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // 30 ticks of a spinning process, were it running
  CHECK(ticks_of(started) == at_freeze);
  REQUIRE(g->thaw());
  CHECK(all_advance(started, at_freeze));

  CHECK(g->kill_all());
  CHECK(g->empty());
  for (pid_t p : started) {
    INFO("pid " << p);
    CHECK(gone_or_zombie(p));
  }
  // kill_all reaped this test's children (the first child and the CLONE_PARENT one): nothing left to wait for.
  CHECK(waitpid(child, nullptr, WNOHANG) == -1);
  CHECK(errno == ECHILD);
}

TEST_CASE("pids.max refuses the fork past the limit inside an evaluation's cgroup", "[process][cgroup]") {
  constexpr int kMax = 8;
  auto g = make_or_skip({0, kMax});
  if (!g) return;
  if (g->describe().find("no pids.max") != std::string::npos) {
    test::say_skipped("no pids controller for this process: " + g->describe());
    return;
  }
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(fds[0]);
    if (g->enter_from_child() != 0) _exit(2);
    int made = 0, err = 0;
    for (int i = 0; i < 3 * kMax; ++i) {
      const pid_t p = fork();
      if (p == 0) {
        pause();
        _exit(0);
      }
      if (p < 0) {
        err = errno;
        break;
      }
      ++made;
    }
    const int report[2] = {made, err};
    if (write(fds[1], report, sizeof report) != sizeof report) _exit(3);
    pause();
    _exit(0);
  }
  close(fds[1]);
  int report[2] = {-1, -1};
  REQUIRE(read(fds[0], report, sizeof report) == sizeof report);
  close(fds[0]);
  CHECK(report[0] == kMax - 1);  // the child itself is one of the kMax
  CHECK(report[1] == EAGAIN);
  CHECK(g->pids().size() == static_cast<size_t>(kMax));
  CHECK(g->kill_all());
  CHECK(g->empty());
}

TEST_CASE("an evaluation's cgroup bounds its memory and goes with its object", "[process][cgroup]") {
  std::vector<std::string> folders;
  {
    auto g = make_or_skip({int64_t{64} << 20, 64});
    if (!g) return;
    folders = g->folders();
    if (g->memory_bytes() == 0) {
      test::say_skipped("no memory controller for this process: " + g->describe());
      return;
    }
    CHECK(g->describe().find(", memory 64 MiB") != std::string::npos);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      if (g->enter_from_child() != 0) _exit(2);
      // 256 MiB of shared anonymous memory (which RLIMIT_DATA does not count), touched page by page.
      const size_t bytes = size_t{256} << 20;
      void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) _exit(4);
      std::memset(p, 1, bytes);
      _exit(0);  // not reached under the limit
    }
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));
    if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == SIGKILL);
    REQUIRE_FALSE(folders.empty());
    for (const auto& f : folders) CHECK(access(f.c_str(), F_OK) == 0);
  }
  for (const auto& f : folders) {
    INFO(f);
    CHECK(access(f.c_str(), F_OK) != 0);
  }
}
