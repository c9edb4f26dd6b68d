// The timing on a machine that other work keeps busy: every core held by a spinning process while an
// honest kernel is evaluated against a reference that runs on all cores. A reference call slowed by the
// wait for a CPU must not inflate the speedup: the evaluation times it again, and counts one still starved
// less its threads' waits; or it says the machine is too busy to time the candidate on (a harness error,
// retried by a search). Run alone (SERIAL): its spinning processes would slow every test beside it.
#include <catch2/catch.hpp>

#include <csignal>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "tests/backends/cpu/eval_helpers.hpp"
#include "tests/test_support/busy_cores.hpp"

using namespace kevolve;

namespace {

const char* kSmall = "tests/fixtures/problems/softmax_small/problem.toml";
const char* kHonest = "tests/backends/cpu/honest/softmax_rows.cpp";

}  // namespace

TEST_CASE("a reference slowed by other work on every core is timed again: the speedup stays near the unloaded one",
          "[cpu][timing][busy]") {
  const EvalResult quiet = test::eval_file(kSmall, kHonest);
  INFO("unloaded: " << status_name(quiet.status) << " [" << quiet.reason << "] " << quiet.message << " "
                    << quiet.speedup << "x");
  REQUIRE(quiet.status == EvalStatus::ok);
  test::BusyCores hogs;
  REQUIRE(!hogs.pids.empty());
  int timed = 0;
  for (int k = 0; k < 6; ++k) {
    const EvalResult busy = test::eval_file(kSmall, kHonest);
    INFO("loaded, evaluation " << k << ": " << status_name(busy.status) << " [" << busy.reason << "] " << busy.message
                               << " " << busy.speedup << "x against " << quiet.speedup << "x unloaded");
    if (busy.status == EvalStatus::harness_error) {
      CHECK(busy.reason == "busy");  // said, not timed (the candidate's side waited)
      continue;
    }
    REQUIRE(busy.status == EvalStatus::ok);
    ++timed;
    // Unguarded, a starved reference made this kernel read 120x to 210x faster than it is. Guarded, most
    // loaded evaluations land within 1.5x of the unloaded speedup; a reference starved on every take still
    // carries some inflation its threads' waits do not account for (up to 14x seen on a 2-core VM).
    CHECK(busy.speedup < 40 * quiet.speedup);
  }
  INFO(timed << " of 6 loaded evaluations were timed");
  CHECK(timed > 0);  // retaking a starved call gets most of them through
}
