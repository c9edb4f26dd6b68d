// The Python interpreter's timer check on a machine that other work keeps busy: every core held by a spinning
// process. The runner then waits for a CPU between its calls, time its reported call times rightly leave out;
// the outside clock forgives that wait, and only that: an honest candidate is timed (or, where the load starved
// the reference far below its own earlier speed, the timing is refused as `harness_error [busy]`: never the
// candidate called a cheat), and a runner whose clock runs slow is still refused for the work its main thread
// was seen to do (or the timing is refused as busy: never ok). Run alone (SERIAL): its spinning processes would
// slow every test beside it.
#include <catch2/catch.hpp>

#include "tests/backends/python/python_eval_helpers.hpp"
#include "tests/test_support/busy_cores.hpp"

using namespace kevolve;
using namespace kevolve::test;

TEST_CASE(
    "on a machine whose every core is busy, an honest candidate is timed and a slow runner clock is still refused",
    "[python][timer][busy]") {
  if (no_torch_python()) return;
  BusyCores load;
  REQUIRE(!load.pids.empty());
  for (int k = 0; k < 3; ++k) {
    const EvalResult honest = eval_py(kRelu, "tests/backends/python/honest/1_relu__honest.py");
    INFO("honest, evaluation " << k << ": " << status_name(honest.status) << " [" << honest.reason << "] "
                               << honest.message);
    CHECK((honest.status == EvalStatus::ok || (honest.status == EvalStatus::harness_error && honest.reason == "busy")));
  }
  // The runner's main thread ran the whole ReLU; its clock, 20x slow, reported a twentieth: waiting for a CPU
  // excuses neither. The static check, which refuses the patch itself, is off. The outside clock (`timer`)
  // refuses it when at least half the passes disagree; where the CPU waits forgave enough passes, the median
  // a twentieth of the real one is below the bandwidth floor (`impossible_time`): either is the clock's lie
  // caught, and both are the evaluator's own measurements.
  EvalOptions o = quick_py();
  o.detectors.set(Detector::isolation, false);
  for (int k = 0; k < 2; ++k) {
    const EvalResult slow = eval_py(kRelu, "tests/backends/python/cheaters/patched_runner_clock.py", o);
    INFO("slow clock, evaluation " << k << ": " << status_name(slow.status) << " [" << slow.reason << "] "
                                   << slow.message);
    const bool busy = slow.status == EvalStatus::harness_error && slow.reason == "busy";
    CHECK((slow.status == EvalStatus::rejected || busy));
    CHECK((slow.reason == "timer" || slow.reason == "impossible_time" || busy));
  }
}
