// RunnerProcess with its cgroup (backends/process/runner_process.hpp), with a real runner: a shell that starts
// a spinning process in a session of its own (setsid), out of reach of its process group. pause() stops that
// process too (its CPU time does not move), resume() lets it run, stop() leaves nothing of it running, and
// the runner learns its cgroup through KEVOLVE_EVAL_CGROUP.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backends/process/runner_process.hpp"
#include "tests/test_support/skip.hpp"

using namespace kevolve;

namespace {

// utime + stime in clock ticks and the state letter of `pid` ('\0': gone).
std::pair<long, char> cpu_of(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos) return {0, '\0'};
  std::istringstream rest(text.substr(paren + 2));
  std::vector<std::string> w;
  for (std::string s; rest >> s;) w.push_back(s);
  if (w.size() < 13) return {0, '\0'};
  return {std::stol(w[11]) + std::stol(w[12]), w[0][0]};
}

bool advances(pid_t pid, long from) {
  for (int i = 0; i < 1000; ++i) {
    if (cpu_of(pid).first > from) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace

TEST_CASE("a runner's process in a session of its own is frozen with the runner and gone when it stops",
          "[process][cgroup]") {
  if (geteuid() != 0) {
    test::say_skipped("a runner's cgroup needs root");
    return;
  }
  process::RunnerProcess runner;
  process::RunnerSpawn spec;
  spec.argv = {"/bin/sh", "-c",
               "echo \"CGROUP $KEVOLVE_EVAL_CGROUP\" >&2; "
               "setsid sh -c 'echo SPIN $$ >&2; while :; do :; done' & exec sleep 1000"};
  spec.env = {"PATH=/usr/bin:/bin"};
  process::RunnerFailure failure;
  REQUIRE(runner.spawn(spec, failure));
  if (!runner.has_cgroup()) {
    runner.stop();
    test::say_skipped("no cgroup for the runner here: " + runner.cgroup_line());
    return;
  }
  std::smatch m;
  std::string log;
  const std::regex spin("SPIN ([0-9]+)");
  for (int i = 0; i < 1000 && !std::regex_search(log, m, spin); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    log = runner.log_tail();
  }
  REQUIRE(std::regex_search(log, m, spin));
  const pid_t spinner = static_cast<pid_t>(std::stol(m[1]));
  INFO(log);
  CHECK(log.find("CGROUP " + runner.cgroup_line()) != std::string::npos);
  CHECK(runner.cgroup_line().rfind("cgroup v", 0) == 0);
  CHECK(getsid(spinner) != runner.pid());  // out of the runner's session and process group
  REQUIRE(advances(spinner, cpu_of(spinner).first));

  runner.pause();
  const long frozen_at = cpu_of(spinner).first;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // 30 ticks of a spinning process, were it running
  CHECK(cpu_of(spinner).first == frozen_at);
  runner.resume();
  CHECK(advances(spinner, frozen_at));

  runner.stop();
  const char state = cpu_of(spinner).second;
  CHECK((state == '\0' || state == 'Z' || state == 'X'));
  CHECK(runner.cgroup_clean());
}
