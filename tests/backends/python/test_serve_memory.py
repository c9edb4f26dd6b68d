#!/usr/bin/env python3
"""The served Python evaluator (kevolve_py_eval.py --serve) holds nothing of one problem when it plans the next.

Run: /usr/bin/python3 tests/backends/python/test_serve_memory.py     (exit status 0 when every check passed)

No GPU needed; CPU, about 20-30 s on 2 cores. Requests go through serve_request(), the serve loop's body (evaluate,
answer, release, start the standby runner), in this process, so that the evaluator's own memory can be inspected:
  1. problem A (40 MiB float32 tensors; its module keeps a 48 MiB tensor and its forward makes a reference cycle
     holding a 48 MiB tensor: garbage only the cyclic collector frees), then problem B: once A's request is
     answered, every tensor A's problem made (inputs, outputs, the module's and the cycle's) is gone (weak
     references dead), no tensor is left in the process (gc), and the resident memory (/proc/self/status, after
     malloc_trim) is back within 60 MiB of what it was before A; B is evaluated `ok` after it;
  2. an allocation that fails in the evaluator during the timing passes (the reference raises MemoryError there)
     is `harness_error [memory]` naming the phase ("phase timing", not "phase ?"), saying who held the memory, and
     the evaluation's tensors are released all the same;
  3. a runner of an earlier evaluation left running (never closed) is killed before the next evaluation plans its
     memory; afterwards only the standby runner is alive;
  4. a shared region whose making fails half-way (carving runs out of memory) closes its memfd;
  5. the timed loop (kevolve_py_runner.timed_calls, both sides') never runs a call while the previous call's
     outputs are still alive;
  6. Phases.failed_in names the phase an exception was raised in, not one an earlier caught exception left.
"""
import ctypes
import gc
import os
import sys
import tempfile
import textwrap
import types
import weakref

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "backends", "python"))
sys.argv = sys.argv[:1]

import torch  # noqa: E402

import kevolve_py_eval as ev  # noqa: E402
import kevolve_py_process as proc  # noqa: E402
import kevolve_py_runner as rt  # noqa: E402
import kevolve_py_transport as transport  # noqa: E402
from kevolve_py_resources import Phases  # noqa: E402

FAILED = []


def check(ok, what):
    print("%s %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        FAILED.append(what)


def rss_mib():
    """Resident memory in MiB, once glibc has returned its free heap (the evaluator keeps freed memory for reuse:
    kevolve_py_runner.keep_freed_memory) to the system: what is left is what is in use."""
    gc.collect()
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def live_tensors():
    """(count, MiB) of the tensors alive in this process."""
    n = b = 0
    for o in gc.get_objects():
        try:
            if isinstance(o, torch.Tensor):
                n += 1
                b += o.numel() * o.element_size()
        except Exception:
            pass
    return n, b / (1 << 20)


# The problems register weak references to what they make in this module (imported by name from their files).
probe = types.ModuleType("kv_serve_memory_probe")
probe.refs = []
sys.modules[probe.__name__] = probe

PROBLEM_A = textwrap.dedent("""
    import torch, torch.nn as nn, weakref
    import kv_serve_memory_probe as probe

    KEPT = torch.ones(12 << 20)                      # 48 MiB held by the module (a cycle: freed by gc only)
    probe.refs.append(weakref.ref(KEPT))

    class _Cycle:
        pass

    class Model(nn.Module):
        def __init__(self):
            super().__init__()

        def forward(self, x):
            c = _Cycle()
            c.me, c.t = c, torch.zeros(12 << 20)     # cyclic garbage holding 48 MiB, left by every call
            probe.refs.append(weakref.ref(c.t))
            y = torch.relu(x)
            probe.refs.append(weakref.ref(y))
            return y

    def get_inputs():
        x = torch.randn(4, 10 << 18)                 # 40 MiB
        probe.refs.append(weakref.ref(x))
        return [x]

    def get_init_inputs():
        return []
""")

PROBLEM_B = textwrap.dedent("""
    import torch, torch.nn as nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()

        def forward(self, x):
            return torch.relu(x) * 2

    def get_inputs():
        return [torch.randn(64, 1024)]

    def get_init_inputs():
        return []
""")

PROBLEM_OOM = textwrap.dedent("""
    # The reference fails to allocate inside its timed loop (the only place the garbage collector is off).
    import gc, torch, torch.nn as nn, weakref
    import kv_serve_memory_probe as probe

    class Model(nn.Module):
        def __init__(self):
            super().__init__()

        def forward(self, x):
            if not gc.isenabled():
                raise MemoryError("can't allocate memory (test: the reference's timed call)")
            y = torch.relu(x)
            probe.refs.append(weakref.ref(y))
            return y

    def get_inputs():
        x = torch.randn(4, 10 << 18)
        probe.refs.append(weakref.ref(x))
        return [x]

    def get_init_inputs():
        return []
""")

CANDIDATE_RELU = textwrap.dedent("""
    import torch, torch.nn as nn

    class ModelNew(nn.Module):
        def __init__(self):
            super().__init__()

        def forward(self, x):
            return torch.relu(x)
""")

CANDIDATE_B = textwrap.dedent("""
    import torch, torch.nn as nn

    class ModelNew(nn.Module):
        def __init__(self):
            super().__init__()

        def forward(self, x):
            return torch.relu(x) * 2
""")


def main():
    work = tempfile.mkdtemp(prefix="kv-serve-memory-")
    os.chmod(work, 0o755)
    files = {}
    for name, text in (("problem_a.py", PROBLEM_A), ("problem_b.py", PROBLEM_B), ("problem_oom.py", PROBLEM_OOM),
                       ("cand_relu.py", CANDIDATE_RELU), ("cand_b.py", CANDIDATE_B)):
        files[name] = os.path.join(work, name)
        with open(files[name], "w") as f:
            f.write(text)
        os.chmod(files[name], 0o644)
    ap = ev.arguments()
    answers = []

    def request(problem, candidate):
        argv = ["--problem", files[problem], "--candidate", files[candidate], "--threads", "1", "--trials", "5",
                "--sets", "2", "--min-reps", "2", "--max-reps", "4", "--min-time", "0.01", "--timeout", "60", "--json"]
        ev.serve_request(ap, '{"argv": %s}' % __import__("json").dumps(argv), answers.append)
        return answers[-1]

    # A warm-up request (B): torch's thread pools, the allocator's arenas, the standby runner exist before A.
    r = request("problem_b.py", "cand_b.py")
    check(r["status"] == "ok", "warm-up: problem B evaluated ok (%s: %s)" % (r["status"], r["message"][:200]))
    gc.collect()
    base_rss, base_live = rss_mib(), live_tensors()

    # 1. Problem A, then what is left of it.
    r = request("problem_a.py", "cand_relu.py")
    check(r["status"] == "ok", "problem A evaluated ok (%s: %s)" % (r["status"], r["message"][:200]))
    made = len(probe.refs)
    alive = [w for w in probe.refs if w() is not None]
    check(made >= 10, "problem A registered the tensors it made (%d)" % made)
    check(not alive, "after A's request: none of the %d tensors A's problem made is alive (%d are: %s)" % (
        made, len(alive), ", ".join("%.0f MiB" % (w().numel() * w().element_size() / 2**20) for w in alive[:5])))
    now_live = live_tensors()
    check(now_live[1] <= base_live[1] + 1, "after A's request: no tensor left in the evaluator (%d tensors, %.1f MiB; %d, %.1f "
          "MiB before A)" % (now_live + base_live))
    rss = rss_mib()
    check(rss < base_rss + 60, "after A's request: resident memory %.0f MiB, %.0f MiB before A (A held over 200 MiB at once)" % (
        rss, base_rss))
    check(r.get("memory", {}).get("others_gb") is not None and r["memory"].get("held_gb") is not None,
          "the plan reports what this process and the others hold (%s)" % r.get("memory"))
    r = request("problem_b.py", "cand_b.py")
    check(r["status"] == "ok", "problem B evaluated ok after A (%s: %s)" % (r["status"], r["message"][:200]))

    # 2. An allocation failing in the timing phase: the phase named, the memory released.
    probe.refs.clear()
    r = request("problem_oom.py", "cand_relu.py")
    check(r["status"] == "harness_error" and r["reason"] == "memory", "a failed allocation of the evaluator is harness_error "
          "[memory] (%s [%s])" % (r["status"], r["reason"]))
    check("phase timing" in r["message"] and "phase ?" not in r["message"], "its message names the phase: %s" % r["message"][:300])
    check("when it failed" in r["message"] and "other processes" in r["message"], "and says who held the memory")
    alive = [w for w in probe.refs if w() is not None]
    check(probe.refs and not alive, "after the failed request: none of its %d tensors is alive (%d are)" % (len(probe.refs), len(alive)))

    # 3. A runner of an earlier evaluation never closed: killed before the next plan; then only the standby lives.
    stray = proc.Runner("-", None, "cpu", 1, 60)
    r = request("problem_b.py", "cand_b.py")
    check(r["status"] == "ok", "problem B evaluated ok with a stray runner about (%s: %s)" % (r["status"], r["message"][:200]))
    check(stray.p.poll() is not None, "the stray runner (pid %d) was killed before the evaluation planned its memory" % stray.p.pid)
    standby = proc._standby
    check(standby is not None and proc.live_runners() == [standby.p.pid],
          "after the request only the standby runner is alive (%s)" % proc.live_runners())
    ev.stop_standby()
    check(proc.live_runners() == [], "stop_standby leaves no runner (%s)" % proc.live_runners())

    # 4. A shared region that fails half-way frees itself.
    def fds():
        return len(os.listdir("/proc/self/fd"))
    before, carve = fds(), rt.carve
    calls = []

    def failing_carve(*args):
        calls.append(1)
        if len(calls) > 1:
            raise MemoryError("can't allocate memory (test: carving)")
        return carve(*args)
    rt.carve = failing_carve
    try:
        transport.SharedSets([torch.zeros(1 << 20)], [torch.zeros(1 << 20)], 2, torch.device("cpu"))
        raised = False
    except MemoryError:
        raised = True
    finally:
        rt.carve = carve
    gc.collect()
    check(raised and fds() == before, "a region failing half-way raises and closes its memfd (%d descriptors, %d before)" % (
        fds(), before))

    # 5. The timed loop: no call runs beside the previous call's outputs.
    prev, beside = [None], []

    def fn(x):
        beside.append(prev[0] is not None and prev[0]() is not None)
        y = x * 2
        prev[0] = weakref.ref(y)
        return y
    xs = [[torch.ones(1000)] for _ in range(4)]
    rt.timed_calls(fn, xs, lambda i, outs: None, torch.device("cpu"), None, __import__("time").perf_counter_ns)
    check(beside == [False] * 4, "timed_calls: no call ran while the previous call's outputs were alive (%s)" % beside)

    # 6. The phase of an exception.
    ph = Phases()
    try:
        with ph("float64_reference"):
            raise ValueError("caught inside")
    except ValueError:
        pass
    ph.enter("timing")
    try:
        raise MemoryError("later")
    except MemoryError as e:
        check(ph.failed_in(e) == "timing", "an exception in an entered phase is named by it (%s), not by an earlier caught one" % ph.failed_in(e))
    try:
        with ph("inputs"):
            raise MemoryError("in a with")
    except MemoryError as e:
        check(ph.failed_in(e) == "inputs", "an exception leaving a `with` phase is named by it (%s)" % ph.failed_in(e))
    ph.leave()

    print("%d check(s) failed" % len(FAILED) if FAILED else "all checks passed")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
