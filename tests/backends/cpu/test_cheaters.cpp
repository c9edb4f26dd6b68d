// Every reward hack that can happen on a CPU has a cheating candidate in cheaters/. Each must be caught
// by the detector meant for it (the rejection names that detector), and with that one detector off the
// same cheater must score ok — so no cheater is caught by accident.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "eval_helpers.hpp"

using namespace kevolve;
using kevolve::test::eval_file;
using kevolve::test::quick_options;

namespace {

struct Case {
  const char* cheater;
  const char* spec;
  Detector detector;
};

const char* kSmall = "tests/fixtures/problems/softmax_small/problem.toml";
const char* kLoose = "tests/fixtures/problems/softmax_loose/problem.toml";

void check_case(const Case& c) {
  const std::string file = std::string("tests/backends/cpu/cheaters/") + c.cheater;
  INFO("cheater " << c.cheater << ", detector " << detector_name(c.detector));
  const EvalResult caught = eval_file(c.spec, file);
  INFO("all detectors on: " << status_name(caught.status) << " [" << caught.reason << "] " << caught.message);
  CHECK(caught.status == EvalStatus::rejected);
  CHECK(caught.reason == detector_name(c.detector));

  EvalOptions off = quick_options();
  off.detectors.set(c.detector, false);
  const EvalResult passes = eval_file(c.spec, file, off);
  INFO("detector off: " << status_name(passes.status) << " [" << passes.reason << "] " << passes.message);
  CHECK(passes.status == EvalStatus::ok);
}

}  // namespace

TEST_CASE("cheater: work escaping the timer on a thread is caught by escaped_work", "[cheaters]") {
  check_case({"escaped_thread.cpp", kSmall, Detector::escaped_work});
}

TEST_CASE("cheater: results cached by pointer are caught by pointer_reuse", "[cheaters]") {
  check_case({"pointer_cache.cpp", kSmall, Detector::pointer_reuse});
}

TEST_CASE("cheater: a kernel that mutates its input is caught by input_mutation", "[cheaters]") {
  check_case({"input_mutation.cpp", kSmall, Detector::input_mutation});
}

TEST_CASE("cheater: a constant output under a loose tolerance is caught by magnitude", "[cheaters]") {
  check_case({"constant_output.cpp", kLoose, Detector::magnitude});
}

TEST_CASE("cheater: doing nothing on buffers seen before is caught by poison", "[cheaters]") {
  check_case({"skip_seen_outputs.cpp", kSmall, Detector::poison});
}

TEST_CASE("cheater: returning stale memory instead of computing is caught by fresh_data", "[cheaters]") {
  check_case({"stale_memory.cpp", kSmall, Detector::fresh_data});
}

TEST_CASE("cheater: behaving differently when timed is caught by timed_outputs", "[cheaters]") {
  check_case({"timed_zeros.cpp", kSmall, Detector::timed_outputs});
}

TEST_CASE("cheater: falling back to PyTorch in a subprocess is caught by isolation", "[cheaters]") {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
    WARN("skipped: /usr/bin/python3 cannot import torch (Debian's python3-torch is not installed), so the "
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
