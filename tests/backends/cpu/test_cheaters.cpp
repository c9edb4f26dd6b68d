// Every reward hack that can happen on a CPU has a cheating candidate in cheaters/. Each must be caught
// by the detector meant for it (the rejection names that detector), and with that detector off the same
// cheater must score ok — so no cheater is caught by accident. Where a second detector is a backstop for
// the same hack (the evaluator's clock behind the snapshot, fresh timing values behind the refill check),
// the case names it and switches it off too, so each detector is still shown to be the one that acts.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>
#include <algorithm>
#include <cstdlib>
#include <unistd.h>

#include "eval_helpers.hpp"
#include "tests/test_support/skip.hpp"

using namespace kevolve;
using kevolve::test::eval_file;
using kevolve::test::quick_options;

namespace {

struct Case {
  const char* cheater;
  const char* spec;
  Detector detector;
  std::vector<Detector> backstops = {};  // also off in the run that must pass
};

const char* kSmall = "tests/fixtures/problems/softmax_small/problem.toml";
const char* kLoose = "tests/fixtures/problems/softmax_loose/problem.toml";

void check_case(const Case& c) {
  const std::string file = std::string("tests/backends/cpu/cheaters/") + c.cheater;
  INFO("cheater " << c.cheater << ", detector " << detector_name(c.detector));
  // "busy" (the machine too loaded to time on) is no verdict, never a pass: a search evaluates again, and so
  // does this test, three times at most.
  EvalResult caught = eval_file(c.spec, file);
  for (int again = 0; again < 2 && caught.reason == "busy"; ++again) caught = eval_file(c.spec, file);
  INFO("all detectors on: " << status_name(caught.status) << " [" << caught.reason << "] " << caught.message);
  CHECK(caught.status == EvalStatus::rejected);
  CHECK(caught.reason == detector_name(c.detector));

  EvalOptions off = quick_options();
  // Slow cheats (a torch subprocess per call) must finish to show they pass: a loaded machine gets time.
  off.call_timeout_s = 60;
  off.detectors.set(c.detector, false);
  for (Detector d : c.backstops) off.detectors.set(d, false);
  const EvalResult passes = eval_file(c.spec, file, off);
  INFO("detector off: " << status_name(passes.status) << " [" << passes.reason << "] " << passes.message);
  CHECK(passes.status == EvalStatus::ok);
}

}  // namespace

TEST_CASE("cheater: work escaping the timer on a thread is caught by escaped_work", "[cheaters]") {
  check_case({"escaped_thread.cpp", kSmall, Detector::escaped_work, {Detector::impossible_time}});
}

TEST_CASE("cheater: results cached by pointer are caught by pointer_reuse", "[cheaters]") {
  check_case({"pointer_cache.cpp", kSmall, Detector::pointer_reuse, {Detector::fresh_data, Detector::impossible_time}});
}

TEST_CASE("cheater: a kernel that mutates its input is caught by input_mutation", "[cheaters]") {
  check_case({"input_mutation.cpp", kSmall, Detector::input_mutation});
}

TEST_CASE("cheater: a constant output under a loose tolerance is caught by magnitude", "[cheaters]") {
  check_case({"constant_output.cpp", kLoose, Detector::magnitude, {Detector::impossible_time}});
}

TEST_CASE("cheater: doing nothing on buffers seen before is caught by poison", "[cheaters]") {
  check_case({"skip_seen_outputs.cpp", kSmall, Detector::poison, {Detector::fresh_data, Detector::impossible_time}});
}

TEST_CASE("cheater: returning stale memory instead of computing is caught by fresh_data", "[cheaters]") {
  // Doing no work at all, it may also beat this machine's copy bandwidth: impossible_time is its backstop.
  check_case({"stale_memory.cpp", kSmall, Detector::fresh_data, {Detector::impossible_time}});
}

TEST_CASE("cheater: behaving differently when timed is caught by timed_outputs", "[cheaters]") {
  check_case({"timed_zeros.cpp", kSmall, Detector::timed_outputs, {Detector::impossible_time}});
}

TEST_CASE("cheater: falling back to PyTorch in a subprocess is caught by isolation", "[cheaters]") {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
    test::say_skipped(
        "/usr/bin/python3 cannot import torch (Debian's python3-torch is not installed), so the "
        "cheater has nothing to fall back to");
    return;
  }
  check_case({"shell_to_torch.cpp", kSmall, Detector::isolation});
  // With the sandbox off the cheater's Python got started; it must not outlive the runner.
  CHECK(std::system("pgrep -f 'import sys, struct, torc[h]' >/dev/null") != 0);
}

TEST_CASE("the seccomp half of isolation stops what the source scan does not see", "[cheaters]") {
  const EvalResult r = eval_file(kSmall, "tests/backends/cpu/crashers/writes_file.cpp");
  INFO(r.message);
  CHECK(r.status == EvalStatus::rejected);
  CHECK(r.reason == "isolation");
  CHECK(r.message.find("SIGSYS") != std::string::npos);
}

TEST_CASE("a candidate that starts a process of its own session when loaded is rejected and leaves none", "[cheaters]") {
  const EvalResult r = eval_file(kSmall, "tests/backends/cpu/crashers/daemon_spinner.cpp");
  INFO(r.message);
  CHECK(r.status == EvalStatus::rejected);
  CHECK(r.reason == "isolation");
  CHECK(r.message.find("SIGSYS") != std::string::npos);
  CHECK(std::system("grep -qx kvdaemonspin /proc/[0-9]*/comm 2>/dev/null") != 0);
}

TEST_CASE("an honest candidate on a machine busy with other work is never called a cheater", "[cheaters]") {
  // Twice as many spinning threads as cores, for the whole evaluation: the runner is descheduled between its
  // calls, so the evaluator's clock runs ahead of the runner's. That may make the timing worthless (harness
  // error "busy"), never the candidate a cheat.
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  const unsigned n = 2 * std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < n; ++i)
    spinners.emplace_back([&stop] {
      volatile uint64_t x = 0;
      while (!stop.load(std::memory_order_relaxed)) x = x + 1;
    });
  const EvalResult r = eval_file(kSmall, "problems/core/softmax_rows/naive.cpp");
  stop = true;
  for (auto& t : spinners) t.join();
  INFO(status_name(r.status) << " [" << r.reason << "] " << r.message);
  CHECK(r.status != EvalStatus::rejected);
  CHECK((r.status == EvalStatus::ok || (r.status == EvalStatus::harness_error && r.reason == "busy")));
}

TEST_CASE("an honest candidate passes with every detector on", "[cheaters]") {
  const EvalResult r = eval_file(kSmall, "problems/core/softmax_rows/naive.cpp");
  INFO(r.message);
  CHECK(r.status == EvalStatus::ok);
  CHECK(r.speedup > 0);
  CHECK(r.trials == 5);
  CHECK(r.shapes == 3);
}

TEST_CASE("an honest kernel that asks for more OpenMP threads than there are cores is not a cheater", "[cheaters]") {
  const EvalResult r = eval_file(kSmall, "tests/backends/cpu/honest/oversubscribed_threads.cpp");
  INFO(r.message);
  CHECK(r.status == EvalStatus::ok);
}

// The runner's confinement and the evaluator's own evidence (docs/evaluation.md, threat model).

TEST_CASE("cheater: a runner that would read the evaluator's memory finds /proc/<ppid>/mem closed",
          "[cheaters][sandbox]") {
  const EvalResult r = eval_file(kSmall, "tests/backends/cpu/cheaters/reads_evaluator_memory.cpp");
  INFO(status_name(r.status) << " [" << r.reason << "] " << r.message << "\nsandbox: " << r.sandbox);
  CHECK(r.status == EvalStatus::runtime_error);
  CHECK(r.reason == "return_code");
  CHECK(r.message.find("returned 7") != std::string::npos);
  CHECK(r.sandbox.find("uid") != std::string::npos);
  if (geteuid() != 0) return;  // below: only root's runner could open it before
  EvalOptions off = quick_options();
  off.detectors.set(Detector::isolation, false);
  const EvalResult open = eval_file(kSmall, "tests/backends/cpu/cheaters/reads_evaluator_memory.cpp", off);
  INFO("sandbox off: " << status_name(open.status) << " [" << open.reason << "] " << open.message);
  CHECK(open.status == EvalStatus::ok);
}

TEST_CASE("a runner sees no process of another user, and its root is read-only with a private /tmp",
          "[cheaters][sandbox]") {
  if (geteuid() != 0) {
    kevolve::test::say_skipped("a mount namespace needs root (the runner uses a user namespace here)");
    return;
  }
  const EvalResult r = eval_file(kSmall, "tests/backends/cpu/cheaters/sees_other_processes.cpp");
  INFO(status_name(r.status) << " [" << r.reason << "] " << r.message << "\nsandbox: " << r.sandbox);
  if (r.sandbox.find("no mount namespace") != std::string::npos) {  // an unprivileged container: said, not hidden
    kevolve::test::say_skipped("this machine refuses the runner a mount namespace (" + r.sandbox + ")");
    return;
  }
  CHECK(r.status == EvalStatus::ok);  // it saw no other user's process, so it computed honestly
  CHECK(r.sandbox.find("own /proc") != std::string::npos);
  CHECK(r.sandbox.find("read-only root") != std::string::npos);
  CHECK(r.sandbox.find("private /tmp") != std::string::npos);
  EvalOptions off = quick_options();
  off.detectors.set(Detector::isolation, false);
  const EvalResult open = eval_file(kSmall, "tests/backends/cpu/cheaters/sees_other_processes.cpp", off);
  INFO("sandbox off: " << status_name(open.status) << " " << open.message);
  CHECK(open.status == EvalStatus::runtime_error);
  CHECK(open.message.find("returned 8") != std::string::npos);
}

TEST_CASE("cheater: a runner clock patched through the GOT to run 3x slower is caught by impossible_time",
          "[cheaters][sandbox]") {
  check_case({"slowed_clock.cpp", kSmall, Detector::impossible_time});
}

TEST_CASE("cheater: renicing and pinning the evaluator is caught by isolation", "[cheaters][sandbox]") {
  // Only the caught half: with the sandbox off it would renice this test binary's shared evaluator.
  const EvalResult r = eval_file(kSmall, "tests/backends/cpu/cheaters/starves_reference.cpp");
  INFO(status_name(r.status) << " [" << r.reason << "] " << r.message);
  CHECK(r.status == EvalStatus::rejected);
  CHECK(r.reason == "isolation");
}

TEST_CASE("cheater: a FIFO made in /tmp is caught by isolation", "[cheaters][sandbox]") {
  check_case({"makes_fifo.cpp", kSmall, Detector::isolation});
  std::system("rm -f /tmp/kevolve-cheater-fifo-*");
}

TEST_CASE("cheater: 3 GiB of shared anonymous memory is refused by the address-space limit", "[cheaters][sandbox]") {
  EvalOptions o = quick_options();
  o.memory_limit_mb = 256;
  const EvalResult r = eval_file(kSmall, "tests/backends/cpu/cheaters/shared_memory_hog.cpp", o);
  INFO(status_name(r.status) << " [" << r.reason << "] " << r.message);
  CHECK(r.status == EvalStatus::runtime_error);
  CHECK(r.message.find("returned 9") != std::string::npos);
}

TEST_CASE("cheater: an output cache keyed on pointer and sampled values gains nothing: timing values change every pass",
          "[cheaters]") {
  EvalOptions plain = quick_options();
  plain.detectors.set(Detector::isolation, false);  // the same softmax, computed every call
  // Two evaluations of each, interleaved, and the faster of each compared: load that comes and goes on a shared
  // machine (other tests run beside this one) slows one evaluation, seldom both of one side.
  const EvalResult cached = eval_file(kSmall, "tests/backends/cpu/cheaters/value_cache.cpp");
  const EvalResult honest = eval_file(kSmall, "tests/backends/cpu/cheaters/reads_evaluator_memory.cpp", plain);
  const EvalResult cached2 = eval_file(kSmall, "tests/backends/cpu/cheaters/value_cache.cpp");
  const EvalResult honest2 = eval_file(kSmall, "tests/backends/cpu/cheaters/reads_evaluator_memory.cpp", plain);
  INFO("cache: " << status_name(cached.status) << " " << cached.speedup << "x, " << cached.candidate.median_ms
                 << " ms, then " << cached2.candidate.median_ms
                 << " ms; the same kernel without it: " << status_name(honest.status) << " " << honest.speedup << "x, "
                 << honest.candidate.median_ms << " ms, then " << honest2.candidate.median_ms << " ms");
  REQUIRE(cached.status == EvalStatus::ok);
  REQUIRE(cached2.status == EvalStatus::ok);
  // Compared on the candidate's own times, which no noise in the reference's timing moves.
  if (geteuid() == 0) {
    REQUIRE(honest.status == EvalStatus::ok);
    REQUIRE(honest2.status == EvalStatus::ok);
    const double cache_ms = std::min(cached.candidate.median_ms, cached2.candidate.median_ms);
    const double honest_ms = std::min(honest.candidate.median_ms, honest2.candidate.median_ms);
    CHECK(cache_ms > honest_ms / 1.5);
  }
  // With fresh values off the cache hits on every timed pass: the detector is what takes its gain away.
  EvalOptions off = quick_options();
  off.detectors.set(Detector::fresh_data, false);
  off.detectors.set(Detector::impossible_time, false);  // a cached copy can outrun this machine's copy bound
  const EvalResult cheats = eval_file(kSmall, "tests/backends/cpu/cheaters/value_cache.cpp", off);
  INFO("fresh_data off: " << status_name(cheats.status) << " [" << cheats.reason << "] " << cheats.speedup << "x, "
                          << cheats.candidate.median_ms << " ms against " << cached.candidate.median_ms << " ms");
  CHECK(cheats.status == EvalStatus::ok);
  CHECK(3 * cheats.candidate.median_ms < cached.candidate.median_ms);
}

TEST_CASE(
    "cheater: work finished after the return with a forged snapshot is caught by escaped_work on the evaluator's clock",
    "[cheaters]") {
  check_case({"forged_snapshot.cpp", kSmall, Detector::escaped_work, {Detector::impossible_time}});
}

// On buffers of 16 MiB and more, verification trials from 2 on refill trial 0's buffers instead of taking fresh
// ones (each fresh page costs a first touch in both processes). The cheats that fresh buffers caught are still
// caught there, by the same detectors, and an honest kernel still passes.
const char* kLarge = "tests/fixtures/problems/softmax_large/problem.toml";

TEST_CASE("on large buffers results cached by pointer are caught by pointer_reuse in a refilled trial", "[cheaters]") {
  const EvalResult r = eval_file(kLarge, "tests/backends/cpu/cheaters/pointer_cache.cpp");
  INFO(status_name(r.status) << " [" << r.reason << "] " << r.message);
  CHECK(r.status == EvalStatus::rejected);
  CHECK(r.reason == "pointer_reuse");
  CHECK(r.where.find("trial 2 on trial 0's buffers refilled") != std::string::npos);
}

TEST_CASE("on large buffers skipping work on outputs seen before is caught by poison in a refilled trial",
          "[cheaters]") {
  const EvalResult r = eval_file(kLarge, "tests/backends/cpu/cheaters/skip_seen_outputs.cpp");
  INFO(status_name(r.status) << " [" << r.reason << "] " << r.message);
  CHECK(r.status == EvalStatus::rejected);
  CHECK(r.reason == "poison");
  CHECK(r.message.find("on buffers refilled with new data") != std::string::npos);
}

TEST_CASE("on large buffers stale memory is caught by fresh_data on trial 1's fresh buffers", "[cheaters]") {
  const EvalResult r = eval_file(kLarge, "tests/backends/cpu/cheaters/stale_memory.cpp");
  INFO(status_name(r.status) << " [" << r.reason << "] " << r.message);
  CHECK(r.status == EvalStatus::rejected);
  CHECK(r.reason == "fresh_data");
  CHECK(r.where.find("trial 1") != std::string::npos);
}

TEST_CASE("on large buffers an honest kernel passes every refilled trial", "[cheaters]") {
  const EvalResult r = eval_file(kLarge, "problems/core/softmax_rows/naive.cpp");
  INFO(status_name(r.status) << " [" << r.reason << "] " << r.message);
  CHECK(r.status == EvalStatus::ok);
}
