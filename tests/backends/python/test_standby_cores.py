#!/usr/bin/env python3
"""The standby runner starts on the cores the evaluator is not pinned to, and is moved onto the evaluator's core
before it is used (backends/python/kevolve_py_process.py, kevolve_py_timing.spare_cores): its start-up overlaps
an evaluation without slowing it, and the candidate is still timed on the reference's core.

Run: /usr/bin/python3 tests/backends/python/test_standby_cores.py   (exit 0 when every check passed; prints
KEVOLVE-SKIPPED on a machine with one core)
"""
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "backends", "python"))

import kevolve_py_process as P  # noqa: E402
import kevolve_py_timing as T  # noqa: E402

if len(os.sched_getaffinity(0)) < 2:
    print("KEVOLVE-SKIPPED: one core: a standby runner cannot start on another core here")
    sys.exit(0)

failures = []


def check(name, ok, detail=""):
    if not ok:
        failures.append(name + (": " + detail if detail else ""))


def thread_cores(pid):
    return {t: os.sched_getaffinity(int(t)) for t in os.listdir("/proc/%d/task" % pid)}


before = os.sched_getaffinity(0)
check("no spare cores before pinning", T.spare_cores() == set())
core = T.pin_to_one_core()
check("pinned to one of its cores", core in before and os.sched_getaffinity(0) == {core})
spare = T.spare_cores()
check("the spare cores are the others", spare == before - {core}, "%r" % spare)

P.start_standby("cpu", 1, 60)
r = P._standby
try:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(os.listdir("/proc/%d/task" % r.p.pid)) < 2 and r.p.poll() is None:
        time.sleep(0.2)  # torch's import starts threads: wait for a few
    cores = thread_cores(r.p.pid)
    check("every thread of the standby starts off the evaluator's core",
          all(c <= spare for c in cores.values()), "%r" % cores)
    check("the standby is marked to be moved", r.spread)
    check("pin() moves it", r.pin())
    cores = thread_cores(r.p.pid)
    check("every thread now on the evaluator's core", all(c == {core} for c in cores.values()), "%r" % cores)
    check("a moved runner is not moved again", r.pin() and not r.spread)
finally:
    P.stop_standby()

fresh = P.Runner("-", None, "cpu", 1, 60)  # a runner started for immediate use inherits the pinned core
try:
    check("a fresh runner is on the evaluator's core", os.sched_getaffinity(fresh.p.pid) == {core})
    check("a fresh runner needs no move", fresh.pin() and not fresh.spread)
finally:
    fresh.close()

for f in failures:
    print("FAILED", f)
print("%d checks failed" % len(failures) if failures else "all standby-core checks passed")
sys.exit(1 if failures else 0)
