#!/usr/bin/env python3
"""kevolve's Python hardware interpreter: the trusted evaluator for KernelBench-format problems.

A problem is a Python file defining `Model(nn.Module)`, `get_inputs()` and `get_init_inputs()`; a candidate
is a Python file defining `ModelNew` with the same constructor and forward signature. This process loads
the problem, makes seeded inputs and reference outputs and verifies; the candidate itself only ever runs in
a separate runner process (kevolve_py_runner.py) that sees the inputs and weights, never the references.

Rules, as for the native harness:
- Static check of the candidate's syntax tree (names resolved through imports and assignments, strings built
  from constants folded): try/except fallback, the reference, threads and processes, extra streams, lower
  precision, patched timers or modules, and `dynamic` access the check cannot follow (getattr/__import__/
  sys.modules/__dict__ with computed names, eval/exec/compile, globals/vars, frames).
- Transport: tensors cross the trust boundary as raw bytes only. This process allocates one shared region (CPU:
  a memfd; CUDA: a cuMemAlloc allocation exported by its IPC handle) with S input sets and, per set, one slot
  per output, sized from the reference's outputs. Inputs are made here by the problem's own get_inputs() under
  seeds and written into the region, never through files; the runner writes each call's outputs into the slots
  of that call's set; what is checked is copied out of the region the moment the runner answers.
- Verification: `trials` calls on freshly generated inputs, alternating between two sets (a result cached by
  address or by tensor version shows as the answer to an earlier trial: `fresh_data`); outputs compared per
  element (atol + rtol*|ref| for floats, NaN never passes; integers exactly; for float32 outputs also accepted
  within atol + rtol*|ref64| + 2*|eager - ref64| of a float64 reference, the "eager-relative" tolerance of
  kevolve_py_compare, where it applies and fits); inputs compared after each call
  (`input_mutation`); then set 0 refilled with new data (`pointer_reuse`: what is left for it when fresh data
  is off). Hangs are killed at the deadline (`timeout`).
- Timing: passes alternate between the candidate (timed in the runner) and the reference (timed here by the
  same procedure, kevolve_py_runner.timed_calls: CUDA events after an L2 flush, or the wall clock on the CPU).
  Every pass regenerates the values of the sets it uses and makes one call per set, so no call sees inputs any
  earlier call saw. After the runner answers, this process samples every call's outputs at positions it draws
  then and copies some calls' outputs whole, chosen at random then too, and checks them against the reference
  pass (`timed_outputs`), in every pass. Its own clock around each pass bounds the times the runner reports
  (`timer`), and a median faster than the bytes that must move at the measured copy bandwidth is
  `impossible_time`. The reference is also timed under torch.compile where this torch has it.

Why a candidate cannot change this process's state (one --serve process evaluates many candidates): this
process never executes anything the candidate's process produced. Commands and answers are JSON lines,
parsed into plain dicts of numbers and strings, checked field by field and matched to their command by a
nonce; tensors come back only as bytes in memory this process allocated, read with the dtype and shape it
chose itself: nothing is unpickled, and torch.load is never called on anything the runner wrote (the model
file goes the other way only). The candidate's process group is stopped (SIGSTOP) whenever no command is out,
so it cannot rewrite the evidence or compete with the reference's timing, and it is killed with everything it
started when the evaluation ends. What this process does not control are the resources the runner shares as
the same user (files such as the torch.compile cache, signals, /proc): the sandbox of the trust split (own uid,
namespaces, seccomp) closes those.

Prints one JSON object (--json) or a readable report. Exit status 0 when the candidate was evaluated.
With --serve it stays: one request per stdin line, one JSON line back each (kevolve keeps one such process
per device: torch is imported once, and the runner of the next candidate is started while kevolve prepares
it; each candidate still runs in a fresh runner process of its own).

Modules (beside this file, one job each): kevolve_py_static (the syntax-tree check), kevolve_py_inputs (the
problem, seeded inputs, the reference), kevolve_py_transport (the shared region), kevolve_py_process (the runner
process seen from here), kevolve_py_compare (verdicts, comparisons), kevolve_py_timing (statistics, bounds,
compile cache), kevolve_py_evaluate (the procedure). This file is the entry point: arguments, one-shot and serve.
"""
import argparse
import json
import os
import sys

# Candidate and reference run in two processes, one at a time: idle OpenMP threads must sleep, not spin on
# the cores the other side is being timed on (set before torch starts its thread pool; the runner inherits it).
# OpenBLAS's workers busy-wait about 0.1 s after each call unless told otherwise (2^4 cycles here): the
# evaluator's would take the cores from the candidate's next pass (measured: the reference against itself
# 0.71-0.77x with the default, 0.99x with this).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kevolve_py_runner as rt  # noqa: E402  (the timing procedure and the region's layout, shared with the runner)

rt.keep_freed_memory()  # as the runner does: both sides allocate on the same terms

# The parts, re-exported under this module's name (scripts and tests import kevolve_py_eval).
from kevolve_py_static import static_check, label_of  # noqa: E402,F401
from kevolve_py_inputs import load_module, as_list, sync, generate_inputs, reference  # noqa: E402,F401
from kevolve_py_compare import (_Verdict, _same, bad_elements, compare, positions, sampled, samples_match,  # noqa: E402,F401
                                stale)
from kevolve_py_transport import SharedSets, count_sets, MAX_SETS  # noqa: E402,F401
from kevolve_py_process import Runner, take_runner, start_standby, stop_standby  # noqa: E402,F401
from kevolve_py_timing import (summarize, CopyBandwidth, compile_cache_key, compile_cache_get,  # noqa: E402,F401
                               compile_cache_put, pin_to_one_core)
from kevolve_py_evaluate import evaluate, DETECTORS  # noqa: E402,F401
from kevolve_py_resources import release_memory, device_usage  # noqa: E402,F401

__all__ = ["static_check", "label_of", "load_module", "as_list", "sync", "generate_inputs", "reference", "_Verdict", "_same",
           "bad_elements", "compare", "positions", "sampled", "samples_match", "stale", "SharedSets", "count_sets", "MAX_SETS",
           "Runner", "take_runner", "start_standby", "stop_standby", "summarize", "CopyBandwidth", "compile_cache_key",
           "compile_cache_get", "compile_cache_put", "pin_to_one_core", "evaluate", "DETECTORS", "arguments", "checked",
           "serve", "serve_request", "release_memory", "device_usage", "main"]


def arguments():
    ap = argparse.ArgumentParser(description="Evaluate a KernelBench-format candidate (ModelNew) against its problem (Model).")
    ap.add_argument("--problem", help="the problem file (defines Model, get_inputs, get_init_inputs)")
    ap.add_argument("--candidate", help="the candidate file (defines ModelNew)")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--threads", type=int, default=max(1, os.cpu_count() or 1), help="threads for candidate and reference alike")
    ap.add_argument("--trials", type=int, default=5, help="verification trials, each with fresh seeded inputs (>= 5)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--tolerance", default="eager-relative", choices=["eager-relative", "fixed"],
                    help="eager-relative: float32 outputs may also be within atol + rtol*|ref64| + 2*|eager - ref64| of a "
                         "float64 reference (where it applies and fits; else fixed); fixed: atol + rtol*|eager| only")
    ap.add_argument("--sets", type=int, default=3, help="calls (each on an input set of its own) in the first two timing passes")
    ap.add_argument("--full-checks", type=int, default=1, help="timed calls per pass whose outputs are checked whole (all of "
                    "them are checked at sampled positions)")
    ap.add_argument("--min-reps", type=int, default=10)
    ap.add_argument("--max-reps", type=int, default=1000)
    ap.add_argument("--min-time", type=float, default=0.3, help="seconds of timed runs per side, at least")
    ap.add_argument("--timeout", type=float, default=30, help="wall-clock seconds one command of the runner may take")
    ap.add_argument("--memory-mb", type=int, default=4096, help="address space the runner may add after start-up, in MiB "
                    "(RLIMIT_AS on the CPU, with 1 GiB and 72 MiB per thread of room)")
    ap.add_argument("--detector-off", action="append", default=[], choices=DETECTORS)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--roofline", action="store_true", help="also measure the problem's roofline: bytes and FLOPs of one "
                    "call, the device's matmul rate for its dtype, and the memory and compute floors")
    ap.add_argument("--compile-cache", default="", help="JSON file keeping the reference's torch.compile timing per problem, "
                    "device, torch and thread count (measured once, reused; empty: measure every time)")
    ap.add_argument("--serve", action="store_true", help="evaluate one request per line of stdin ({\"argv\": [the arguments "
                    "above]}), one JSON line back each; torch stays imported and a runner is started ahead for the next request")
    return ap


def checked(ap, argv):
    a = ap.parse_args(argv)
    if not a.problem or not a.candidate:
        ap.error("--problem and --candidate are required")
    if a.trials < 5:
        ap.error("--trials must be at least 5")
    return a


def serve_request(ap, line, answer):
    """One request of serve mode: evaluates it, calls answer(result) at once, then releases what the evaluation
    left (the garbage collected, CUDA's cached blocks returned: the evaluator holds no memory between requests but
    torch's and CUDA's own) and starts the standby runner for the next request."""
    a = None
    try:
        a = checked(ap, json.loads(line)["argv"])
        r = evaluate(a)
    except SystemExit:  # argparse's error, already printed to stderr
        r = {"status": "harness_error", "reason": "arguments", "message": "the Python evaluator refused its arguments: %s" % line.strip()[:500]}
    except Exception as e:
        r = {"status": "harness_error", "reason": "harness", "message": "evaluator error: %s: %s" % (type(e).__name__, e)}
    answer(r)
    r = None
    if a is not None:
        release_memory(torch.device(a.device) if a.device != "cuda" or torch.cuda.is_available() else torch.device("cpu"))
        start_standby(a.device, a.threads, a.timeout)


def serve(ap):
    # Replies go to a private copy of stdout; anything else printed (a problem file's own prints) to stderr.
    reply = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def answer(r):
        reply.write(json.dumps(r) + "\n")
        reply.flush()
    for line in sys.stdin:
        serve_request(ap, line, answer)
    stop_standby()
    return 0


def not_dumpable():
    """PR_SET_DUMPABLE 0: this process's /proc files (mem, environ, maps, fds) belong to root and neither ptrace nor
    process_vm_readv reach it without CAP_SYS_PTRACE, which no runner has, whatever uid the runner keeps (on
    CUDA, not root, it keeps this process's). Its runners are dumpable again after their exec. False if refused."""
    import ctypes
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) == 0  # PR_SET_DUMPABLE
    except (OSError, AttributeError):
        return False


def main():
    not_dumpable()
    ap = arguments()
    if "--serve" in sys.argv[1:]:
        return serve(ap)
    a = checked(ap, sys.argv[1:])
    r = evaluate(a)
    if a.json:
        print(json.dumps(r))
    else:
        print("status:    %s%s" % (r["status"], " [%s]" % r["reason"] if r["reason"] and r["status"] != "ok" else ""))
        print("message:   %s" % r["message"])
        if r["status"] == "ok":
            print("eager:     %.4g ms, candidate %.4g ms, speedup %.3gx (%s)" % (r["reference"]["median_ms"], r["candidate"]["median_ms"], r["speedup"], r["label"]))
            c = r["compile"] or {}
            print("compile:   %s" % (c.get("unavailable") or "%.4g ms (%.3gx)" % (c["median_ms"], r["compile_speedup"])))
        if r.get("phases"):
            print("phases:    %s" % ", ".join("%s %.3g s" % kv for kv in r["phases"].items()))
    return 0 if r["status"] != "harness_error" else 3


if __name__ == "__main__":
    sys.exit(main())