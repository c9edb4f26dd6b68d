#!/usr/bin/env python3
"""The GPU timing's stopping rule on the Python side (backends/python/kevolve_py_timing.py) is the C++ one
(backends/harness/stats.cpp, median_settled): the same samples settle or not on both sides.

Run: /usr/bin/python3 tests/backends/python/test_timing.py     (exit status 0 when every check passed)
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "backends", "python"))

import kevolve_py_timing as T  # noqa: E402

failures = []


def check(name, got, want):
    if got != want:
        failures.append("%s: got %r, want %r" % (name, got, want))


steady = [6.0e6 * (1 + 0.001 * ((i * 7) % 5 - 2) / 2) for i in range(10)]  # 6.00 ms +- 0.1 %
check("steady settles to 0.5 %", T.median_settled(steady, 0.005), True)
check("steady does not settle to 0.01 %", T.median_settled(steady, 0.0001), False)
check("rel 0 never settles", T.median_settled(steady, 0), False)
check("7 samples are too few", T.median_settled(steady[:7], 0.005), False)
noisy = [6.0e6 * (0.9 + 0.2 * i / 9) for i in range(10)]  # +-10 %, evenly spread
check("10 noisy samples do not settle", T.median_settled(noisy, 0.005), False)
check("one slow outlier does not keep a steady side from settling", T.median_settled(steady + [60e6], 0.005), True)
tails = [9e6 if i % 10 == 0 else 3e6 if i % 10 == 1 else 6e6 + (i % 7) * 1e3 for i in range(400)]
check("a dense middle with wide tails settles", T.median_settled(tails, 0.005), True)

os.environ["KEVOLVE_TIMING_SETTLE"] = "0"
check("KEVOLVE_TIMING_SETTLE=0 turns settling off", T.timing_settle(), 0.0)
os.environ["KEVOLVE_TIMING_SETTLE"] = "not a number"
check("a malformed KEVOLVE_TIMING_SETTLE keeps the default", T.timing_settle(), 0.005)
del os.environ["KEVOLVE_TIMING_SETTLE"]
check("the default", T.timing_settle(), 0.005)

# The reference guard (ReferenceGuard), with real processes: a pass of pure-Python work on one core is timed
# alone, then while three spinning processes share that core. Alone it is accepted (unless the machine was in
# fact busy: its threads then waited for a CPU, which the guard reports); shared, its calls take about four
# times as long while this process waits for the core most of the time: `busy`, after the retakes.
import subprocess  # noqa: E402
import time  # noqa: E402


def work_pass():
    times = []
    for _ in range(5):
        t0 = time.perf_counter_ns()
        sum(i * i for i in range(600000))  # about 15 ms: longer than a scheduler slice
        times.append(time.perf_counter_ns() - t0)
    return times, None


if T.process_waited_ns() is None:
    print("KEVOLVE-SKIPPED: no /proc/<pid>/schedstat on this kernel (the reference guard reads it)")
else:
    core = min(os.sched_getaffinity(0))
    mine = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {core})
    try:
        calibration = min(min(work_pass()[0]) for _ in range(5))
        guard = T.ReferenceGuard(calibration)
        _, why, share = guard.take(work_pass)
        check("a pass alone on its core is accepted (or the machine was busy: %.0f%% waited)" % (100 * share),
              why is None or share > T.BUSY_WAITED, True)
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(3)]
        try:
            for h in hogs:
                os.sched_setaffinity(h.pid, {core})
            time.sleep(0.2)
            _, why, share = guard.take(work_pass)
            check("a pass sharing its core with three spinning processes is refused as busy", why is not None, True)
            check("the refusal says the reference waited for a CPU", "waited for a CPU" in (why or ""), True)
            check("it was timed again before being refused", guard.retimed >= T.BUSY_RETAKES, True)
        finally:
            for h in hogs:
                h.kill()
                h.wait()
    finally:
        os.sched_setaffinity(0, mine)

for f in failures:
    print("FAILED", f)
print("%d checks failed" % len(failures) if failures else "all timing checks passed")
sys.exit(1 if failures else 0)
