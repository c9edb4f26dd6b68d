"""kevolve's Python interpreter, trusted side: one evaluation of a candidate against its problem.

evaluate(a) runs the procedure: the static check, the problem and its reference, the tolerance rule (eager-relative
with a float64 reference where it applies and fits, else fixed: kevolve_py_compare), the shared region, the runner
(mapped, confined, loaded), the verification trials, the refill check, the timing passes with their checks, the
torch.compile baseline; it returns the JSON result python_backend.cpp reads. The parts live beside it:
kevolve_py_static (the syntax-tree check), kevolve_py_inputs (problem, seeded inputs, reference),
kevolve_py_transport (the shared region), kevolve_py_process (the runner process), kevolve_py_compare (verdicts
and comparisons), kevolve_py_timing (statistics, bandwidth floor, compile cache).
"""
import os
import random
import secrets
import shutil
import statistics
import tempfile
import time
import traceback

import torch

import kevolve_py_roofline as roofline
import kevolve_py_runner as rt
from kevolve_py_compare import (EAGER_RELATIVE, FIXED, SAMPLES, STALE_SAMPLES, Expected, _Verdict, _num, bad_elements,
                                bad_expected, compare, expected_at, positions, sampled, stale, widen)
from kevolve_py_inputs import WideReference, as_list, generate_inputs, load_module, reference, sync
from kevolve_py_process import stop_strays, take_runner
from kevolve_py_resources import (GB, Phases, Reference, call_limit, describe_need, describe_usage, device_usage, free_memory,
                                  plan_memory, release_memory)
from kevolve_py_static import label_of, static_check
from kevolve_py_timing import (PASS_NS, TIMER_SLACK_NS, CopyBandwidth, IdleProbe, PassClock, ReferenceGuard, compile_cache_get, compile_cache_key,
                               compile_cache_put, median_settled, pin_to_one_core, summarize, timing_settle)
from kevolve_py_transport import MAX_SETS, SharedSets, _json_value, count_sets

DETECTORS = ["static", "input_mutation", "fresh_data", "pointer_reuse", "timed_outputs", "timer", "impossible_time",
             "queued_work"]
IDLE_WAIT_S = 5.0  # how long the evaluator waits for a busy GPU to become idle before a reference pass

# Reported as "sandbox" until the runner says what it put in force (its answer to `confine`, given before any
# candidate code ran in it; see kevolve_py_runner.py, "the sandbox").
SANDBOX_NONE = "none: the runner was not confined (it ended before its sandbox was set up)"

# The longest a candidate may take to import (its extensions are built then).
LOAD_TIMEOUT_S = 300


def _out_of_memory(e):
    """Whether an exception is an allocation failure (CUDA or host)."""
    return isinstance(e, MemoryError) or "out of memory" in str(e) or "can't allocate memory" in str(e)


def _memory_verdict(e, dev, what, outside=0):
    """The harness_error for an allocation that failed in this process while `what`: who held the memory when it
    failed (this process's tensors and cached blocks, its region, other processes: the runner among them), and what
    is free once the tensors of the frames it left are released (their locals are cleared here: the exception's
    traceback would otherwise keep every tensor of the evaluation alive until the verdict is gone). `outside`: this
    process's memory outside torch (the shared region)."""
    where = "device memory" if dev.type == "cuda" else "RAM"
    at_failure = describe_usage(device_usage(dev, outside), where)
    traceback.clear_frames(e.__traceback__)
    release_memory(dev)
    free = free_memory(dev)[0]
    text = str(e).splitlines()[0][:400] if str(e) else type(e).__name__
    return _Verdict("harness_error", "memory", "the problem does not fit: %s ran out of %s (when it failed: %s; %.3g GB free once "
                    "its tensors were released): %s" % (what, where, at_failure, free / GB, text))


def _wait_idle(probe, when):
    """Waits for a busy GPU (work of some other process) to become idle; a device that stays busy is a
    harness_error: its timings would not be the candidate's or the reference's."""
    busy = probe.busy()
    if busy and not probe.wait_idle(IDLE_WAIT_S)[1]:
        raise _Verdict("harness_error", "device_busy", "the GPU stayed busy with work of another process %s: a %d MiB copy took "
                       "%.3g ms, %.3g ms when idle, for more than %g s" % (
                           when, probe.BYTES >> 20, busy[0] / 1e6, busy[1] / 1e6, IDLE_WAIT_S))


def _check_queued_work(probe, passes):
    """The runner is stopped now, after its answer: the GPU must be idle before the reference is timed. Work the
    runner left queued (in another CUDA context, from a thread after its last synchronisation, ...) would run
    during the reference's pass and slow it down: `rejected [queued_work]`, once the device has drained."""
    busy = probe.busy()
    if not busy:
        return
    waited, idle = probe.wait_idle(IDLE_WAIT_S)
    raise _Verdict("rejected", "queued_work", "the candidate left work running on the GPU after the runner answered timing pass %d "
                   "(and was stopped): a %d MiB copy took %.3g ms, %.3g ms when idle, and the device %s; that work would have "
                   "slowed the reference's pass" % (passes, probe.BYTES >> 20, busy[0] / 1e6, busy[1] / 1e6,
                                                     "became idle %.3g s later" % waited if idle else
                                                     "was still busy %g s later" % IDLE_WAIT_S), "timing pass %d" % passes)


def _tolerance(res, wide):
    """Puts the tolerance rule in force in the result: eager-relative while the float64 reference is on, else fixed
    and why (`tolerance_note`)."""
    res["tolerance"] = EAGER_RELATIVE if wide.on else FIXED
    if wide.on:
        res.pop("tolerance_note", None)
    else:
        res["tolerance_note"] = wide.why


def _ok(r, where):
    """Raises the verdict of a runner's answer that is not ok."""
    if r["status"] != "ok":
        raise _Verdict(r["status"], r.get("reason") or r["status"], "%s (%s)" % (r["message"], where), where)


def evaluate(a):
    """Evaluates the candidate `a` names against its problem; returns the JSON result (python_backend.cpp reads
    its fields)."""
    res = {"status": "harness_error", "reason": "", "message": "", "where": "", "max_abs_err": 0.0, "max_rel_err": 0.0,
           "trials": 0, "shapes": 1, "speedup": 0.0, "reference": summarize([], a.threads), "candidate": summarize([], a.threads),
           "compile": None, "compile_speedup": 0.0, "label": "", "detectors_off": a.detector_off, "device": a.device}
    on = lambda d: d not in a.detector_off
    ph = Phases()
    torch.set_num_threads(a.threads)
    stem = os.path.splitext(os.path.basename(a.problem))[0]
    try:
        with open(a.candidate) as f:
            source = f.read()
    except OSError as e:
        res["message"] = "cannot read the candidate: %s" % e
        return res
    res["label"] = label_of(source)
    fresh = dict(res)
    with ph("load"):
        _prepare(a, res, on, ph, source, stem)
    if res["status"] == "rejected" and res["reason"] == "timer":
        # The outside clock also counts time the runner spent waiting for a CPU that other processes held, so a
        # loaded machine can make honest times disagree with it. The refusal stands only if a second, complete
        # evaluation (a fresh runner) disagrees too; an evaluation that agrees was timed honestly.
        first = res["message"]
        res = dict(fresh)
        with ph("load"):
            _prepare(a, res, on, ph, source, stem)
        if res["status"] == "rejected" and res["reason"] == "timer":
            res["message"] += " (in two complete evaluations; the first: %s)" % first
    res["phases"] = ph.report()
    return res


def _prepare(a, res, on, ph, source, stem):
    """The static check, the problem, the device and the work folder; then the evaluation proper."""
    if on("static"):
        hit = static_check(source, stem)
        if hit:
            kind, line, why = hit
            res.update(status="compile_error" if kind == "syntax" else "rejected", reason=kind, message="line %d: %s" % (line, why))
            return res
    try:
        problem = load_module(a.problem, "kevolve_problem_" + stem.replace("-", "_"))
    except Exception as e:
        res["message"] = "%s: cannot load the problem: %s: %s" % (a.problem, type(e).__name__, e)
        return res
    for need in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(problem, need):
            res["message"] = "%s: a KernelBench problem defines Model, get_inputs and get_init_inputs; '%s' is missing" % (a.problem, need)
            return res
    dev = torch.device(a.device)
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            res.update(reason="harness", message="no usable CUDA device: torch %s on this machine sees none (torch.cuda.is_available() is false)" % torch.__version__)
            return res
        dev = torch.device("cuda", torch.cuda.current_device())
        res["core"] = pin_to_one_core()
    # Nothing of an earlier evaluation may hold memory when this one plans its own: a runner not closed (its
    # evaluation ended on an error before handing it over) is killed, the garbage collected (a problem module, a
    # traceback's frames), torch.compile's caches of another problem and the allocator's cached blocks dropped.
    stop_strays()
    release_memory(dev, os.path.abspath(a.problem))
    work = tempfile.mkdtemp(prefix="kevolve-py-")
    scratch = os.path.join(work, "scratch")  # the runner's only writable folder (TMPDIR: a kernel's build)
    os.mkdir(scratch, 0o700)
    if os.geteuid() == 0:  # the runner takes a uid of its own (and the scratch with it): it may enter `work`, not list it
        os.chmod(work, 0o711)
    res["sandbox"] = SANDBOX_NONE
    held = {}  # what _evaluate started: the runner, the shared sets
    try:
        _evaluate(a, res, on, problem, dev, work, held, ph)
    except _Verdict as v:
        res.update(status=v.status, reason=v.reason, message=v.message, where=v.where)
    except Exception as e:
        res.update(status="harness_error", reason="harness", message="evaluator error: %s: %s" % (type(e).__name__, e))
    finally:
        ph.enter("release")
        runner, sets = held.get("runner"), held.get("sets")
        if runner:
            tail = runner.stderr_tail()
            if tail and res["status"] != "ok":
                res["runner_log"] = tail
            runner.close()
        if sets:
            sets.release()
        shutil.rmtree(work, ignore_errors=True)
        ph.leave()


def _evaluate(a, res, on, problem, dev, work, held, ph):
    """The evaluation proper: raises _Verdict, or fills `res` for an `ok`. Puts the runner and the shared sets
    it starts in `held` (the caller releases them); times its phases in `ph`."""
    try:
        return _evaluate_phases(a, res, on, problem, dev, work, held, ph)
    except _Verdict:
        raise
    except Exception as e:  # an allocation of this process that failed: the problem does not fit here
        if _out_of_memory(e):
            sets = held.get("sets")
            raise _memory_verdict(e, dev, "the evaluator (phase %s)" % ph.failed_in(e), sets.size if sets is not None and dev.type == "cuda" else 0)
        raise


def _evaluate_phases(a, res, on, problem, dev, work, held, ph):
    with ph("load"):
        torch.manual_seed(a.seed)
        init = problem.get_init_inputs()
        torch.manual_seed(a.seed)
        model = problem.Model(*init).to(dev).eval()
        torch.save({"init": init, "state": model.state_dict(), "seed": a.seed}, os.path.join(work, "model.pt"))
    base_seed = a.seed * 1000003
    trial_seed = lambda t: base_seed + (t if on("fresh_data") else 0)
    timing_seed = lambda p, k: base_seed + (100003 + p * MAX_SETS + k if on("fresh_data") else 0)

    # The first trial's inputs and reference outputs fix the layout of the shared region.
    with ph("inputs"):
        first = generate_inputs(problem, dev, trial_seed(0))
    for i, x in enumerate(first):
        if not isinstance(x, torch.Tensor) and not _json_value(x):
            raise _Verdict("harness_error", "harness", "input %d of get_inputs() is a %s: only tensors, numbers and strings "
                                                       "can be passed to the candidate" % (i, type(x).__name__))
    with ph("reference"):
        warm = reference(model, first)  # warm-up (and, against the next call, whether eager is deterministic)
        sync(dev)
        measured = Reference(dev)
        first_exp = measured.measure(lambda: reference(model, first))
        # Whether eager is deterministic (two calls on the same inputs agree), for the tolerance rule below.
        deterministic = len(warm) == len(first_exp) and all(isinstance(w, torch.Tensor) and compare(w, e, a.atol, a.rtol, stats=False)[0]
                                                            for w, e in zip(warm, first_exp) if isinstance(e, torch.Tensor))
        warm = None
    ref_ns = measured.ns
    limit, why = call_limit(a.timeout, ref_ns / 1e9)  # one call of the candidate, at most
    res["limits"] = {"call_s": round(limit, 3), "reference_ms": ref_ns / 1e6}
    for i, o in enumerate(first_exp):
        if not isinstance(o, torch.Tensor):
            raise _Verdict("harness_error", "harness", "the reference's output %d is a %s: only tensor outputs are supported" % (i, type(o).__name__))
    in_bytes = sum(x.numel() * x.element_size() for x in first if isinstance(x, torch.Tensor))
    out_bytes = sum(o.numel() * o.element_size() for o in first_exp)
    # Memory: what the evaluation holds at its peak, from the real sizes and the reference's measured working
    # memory, against what is free now; the region gets as many input sets as fit beside the rest.
    per_set = 2 * in_bytes + out_bytes + 2 * rt.ALIGN * (len(first) + len(first_exp))  # region (inputs, outputs) + trusted inputs
    if dev.type == "cuda":
        l2 = torch.cuda.get_device_properties(dev).L2_cache_size
        extra = 2 * l2 + 2 * min(1 << 30, max(1 << 20, in_bytes + out_bytes)) + 2 * IdleProbe.BYTES + 24 * (1 << 26)
    else:
        extra = 2 * min(1 << 28, max(1 << 20, in_bytes + out_bytes)) + 24 * (1 << 22)
    ref_work = measured.work or (in_bytes + out_bytes)  # measured on CUDA; the input clones and outputs on the CPU
    items, _ = plan_memory(dev, in_bytes, out_bytes, per_set, ref_work, extra)
    others = sum(items.values()) - in_bytes - out_bytes  # the first inputs and outputs are held already
    free, where = free_memory(dev)  # after the allocator's cached blocks are returned: what other processes hold is used
    usage = device_usage(dev)
    res["memory"] = {"free_gb": free / GB, "need_gb": (others + per_set) / GB, "per_set_gb": per_set / GB,
                     "reference_work_gb": ref_work / GB, "held_gb": usage["allocated"] / GB, "others_gb": usage["others"] / GB}
    if others + per_set > free:
        raise _Verdict("harness_error", "memory", "the problem does not fit: the evaluation needs %.3g GB more %s, %.3g GB free "
                       "(inputs %.3g GB and outputs %.3g GB per call; %s; now: %s)" % (
                           (others + per_set) / GB, where, free / GB, in_bytes / GB, out_bytes / GB, describe_need(items, per_set, 1),
                           describe_usage(usage, where)))
    # The tolerance rule: eager-relative where the float64 reference applies, fits beside the rest and eager is
    # deterministic (a forward that draws random numbers would draw others in float64: an unbounded slack).
    wide = WideReference(model, first, first_exp)
    if getattr(a, "tolerance", "eager-relative") == "fixed":
        wide.off("--tolerance fixed")
    if wide.on and not deterministic:
        wide.off("eager's outputs differ between two calls on the same inputs")
    if wide.on:
        out32 = sum(o.numel() * 4 for o in first_exp if o.dtype == torch.float32)
        # the float64 model, its forward (the reference's working memory at twice the width; its outputs stay as
        # the expected values' centre) and the slack beside them
        wide_bytes = wide.model_bytes + 2 * ref_work + 2 * out32
        if others + per_set + wide_bytes > free:
            wide.off("the float64 reference does not fit: it needs %.3g GB more %s beside the evaluation's %.3g GB, %.3g GB free" % (
                wide_bytes / GB, where, (others + per_set) / GB, free / GB))
        else:
            try:
                wide.start()
            except Exception as e:
                wide.off("the model cannot be copied to float64: %s: %s" % (type(e).__name__, str(e).splitlines()[0][:200] if str(e) else ""))
            else:
                items["float64 reference"] = wide_bytes
                others += wide_bytes
                res["memory"]["need_gb"] = (others + per_set) / GB
    _tolerance(res, wide)
    wanted = max(a.sets, 2, -(-int(PASS_NS) // max(1, ref_ns)))  # enough sets for a pass of PASS_NS at the reference's speed
    nsets = count_sets(per_set, dev, wanted, reserve=others)
    res["memory"]["sets"] = nsets
    with ph("transport"):
        sets = held["sets"] = SharedSets(first, first_exp, nsets, dev)
        probe = IdleProbe(dev) if dev.type == "cuda" and on("queued_work") else None  # idle: no candidate code has run yet

    # The runner maps the region, confines itself (and says how), and only then imports the candidate. The CPU
    # runner may add --memory-mb beyond its start-up, plus what a call of the problem works on.
    runner_mb = a.memory_mb + (items["runner working memory"] >> 20)
    with ph("runner"):
        runner = held["runner"] = take_runner(os.path.abspath(a.candidate), work, a.device, a.threads, a.timeout)
        _ok(runner.ask(sets.describe(), timeout=max(60, a.timeout) + sets.size / GB, fd=sets.fd), "mapping the shared buffers")
        res["transport"] = sets.transport
        # Without a cgroup of its own, nothing would hold what the candidate starts: it may then start no process.
        r = runner.ask({"op": "confine", "model": os.path.join(work, "model.pt"), "memory_mb": runner_mb,
                        "processes": runner.cgroup is not None}, timeout=max(60, a.timeout))
        if r["status"] != "ok" or "sandbox" not in r:
            raise _Verdict("harness_error", "sandbox", "confining the runner: %s" % (r["message"] or "it did not say how"))
        res["sandbox"] = r["sandbox"] + ", " + runner.cgroup_line()
    with ph("compile"):
        # Importing ModelNew builds its extensions (load_inline: 40-60 s for a C++ one on an idle 2-core
        # machine, more for nvcc or on a loaded one): the import gets minutes, not the per-call limit.
        r = runner.ask({"op": "load"}, timeout=max(LOAD_TIMEOUT_S, a.timeout))
        if r["status"] != "ok":
            raise _Verdict(r["status"], "load" if r["status"] != "rejected" else r["reason"], "loading ModelNew: " + r["message"])

    rng = torch.Generator()
    rng.manual_seed(secrets.randbits(63))  # positions and choices nobody can predict, drawn after each answer
    pick = random.SystemRandom()
    n_outputs = len(first_exp)

    out_shapes = [(o.dtype, tuple(o.shape)) for o in first_exp]

    def wide_outputs(inputs, where):
        """The float64 reference's outputs on `inputs` (None under the fixed rule). Should it fail, or give other
        outputs than eager's (count, shapes), the fixed rule holds from now on and the verdict says where."""
        if not wide.on:
            return None
        try:
            with ph("float64_reference"):
                r = wide.outputs(inputs)
            if len(r) != n_outputs:
                raise ValueError("the float64 model gives %d outputs, eager %d" % (len(r), n_outputs))
            for j, (w, (dtype, shape)) in enumerate(zip(r, out_shapes)):
                if dtype == torch.float32 and not (isinstance(w, torch.Tensor) and w.is_floating_point() and tuple(w.shape) == shape):
                    raise ValueError("its output %d is %s, eager's a float32 tensor of shape %s" % (
                        j, "of shape %s, %s" % (tuple(w.shape), w.dtype) if isinstance(w, torch.Tensor) else "a " + type(w).__name__, shape))
            return r
        except Exception as e:
            wide.off("the float64 reference failed (%s): %s: %s" % (where, type(e).__name__, str(e).splitlines()[0][:200] if str(e) else ""))
            if dev.type == "cuda":
                torch.cuda.empty_cache()
            _tolerance(res, wide)
            return None

    def expect(outs, inputs, where):
        """Each output's Expected under the rule in force (the float64 reference computed here on `inputs`)."""
        r = wide_outputs(inputs, where)
        if r is None:
            return [Expected(o) for o in outs]
        with ph("float64_reference"):
            exp = [widen(o, w) for o, w in zip(outs, r)]
        res["eager_max_abs_err"] = max([res.get("eager_max_abs_err", 0.0)] + [x.eager_error() for x in exp])
        return exp

    # Verification: fresh inputs for every trial, alternating between two sets.
    stale_at = [positions(o.numel(), STALE_SAMPLES, rng, dev) for o in first_exp]
    earlier, slowest = [], 0.0
    ph.enter("trials")
    for t in range(a.trials):
        k, where = t % min(2, nsets), "trial %d" % t
        with ph("inputs"):
            xs = first if t == 0 else generate_inputs(problem, dev, trial_seed(t))
            sets.fill(k, xs, trial_seed(t))
        exp = None  # the previous trial's (large outputs must not stay twice)
        with ph("reference"):
            eager = first_exp if t == 0 else reference(model, sets.priv[k])
        exp, eager = expect(eager, sets.priv[k], where), None
        sets.poison(k)
        sync(dev)
        t0 = time.perf_counter()
        r = runner.ask({"op": "run", "set": k, "values": sets.take_values()}, timeout=limit, why=why)
        slowest = max(slowest, time.perf_counter() - t0)
        _ok(r, where)
        got = [s.clone() for s in sets.slots[k]]  # the evidence, copied out the moment the runner answered
        if on("input_mutation") and sets.mutated(k) is not None:
            raise _Verdict("rejected", "input_mutation", "ModelNew modified its input %d (%s)" % (sets.mutated(k), where), where)
        for i, (g, e) in enumerate(zip(got, exp)):
            ok, ma, mr, text = compare(g, e, a.atol, a.rtol)
            res["max_abs_err"] = max(res["max_abs_err"], ma)
            res["max_rel_err"] = max(res["max_rel_err"], mr)
            if ok:
                continue
            if on("fresh_data") and stale(got, exp, earlier, stale_at, a.atol, a.rtol):
                raise _Verdict("rejected", "fresh_data", "output %d is the answer for an earlier trial's inputs: a stale result (%s)" % (i, where), where)
            raise _Verdict("incorrect", "mismatch", "output %d: %s (%s)" % (i, text, where), where)
        earlier.append(expected_at(exp, stale_at))
        got = None  # not kept beside the next trial's inputs, reference and float64 reference
    first = first_exp = exp = None  # what is kept of the trials are samples (large outputs must not stay twice)
    if on("pointer_reuse"):
        # Set 0's very buffers, refilled with new data: a result cached by address or by tensor version shows.
        where = "refilled inputs"
        with ph("inputs"):
            sets.fill(0, generate_inputs(problem, dev, base_seed + 1000), base_seed + 1000)
        with ph("reference"):
            exp = reference(model, sets.priv[0])
        exp = expect(exp, sets.priv[0], where)
        sets.poison(0)
        sync(dev)
        _ok(runner.ask({"op": "run", "set": 0, "values": sets.take_values()}, timeout=limit, why=why), where)
        got = [s.clone() for s in sets.slots[0]]
        for i, (g, e) in enumerate(zip(got, exp)):
            if compare(g, e, a.atol, a.rtol, stats=False)[0]:
                continue
            if stale(got, exp, earlier, stale_at, a.atol, a.rtol):
                raise _Verdict("rejected", "pointer_reuse", "refilled with new data, the same input buffers gave the answer for "
                                                            "their previous data: results are cached by address or identity", where)
            raise _Verdict("incorrect", "mismatch", "output %d wrong on refilled inputs" % i, where)
    exp = got = None  # the refill's expected outputs (float64 ones among them) are not kept through the timing passes
    res["trials"] = a.trials
    ph.leave()

    # Timing: alternating passes, one call per set, every set of a pass refilled with values never seen before.
    ph.enter("timing")
    flush = torch.empty(int(2 * torch.cuda.get_device_properties(dev).L2_cache_size), dtype=torch.uint8, device=dev) \
        if dev.type == "cuda" else None
    scratch = [torch.empty_like(s) for s in sets.slots[0]]  # the reference's outputs are stored as the runner stores its own

    def store_reference(i, outs):
        for s, o in zip(scratch, as_list(outs)):
            s.copy_(o)

    clock = time.perf_counter_ns
    copies = CopyBandwidth(dev, sets.bytes_moved)
    cand, ref, passes, timer_log, checked, checked_full = [], [], 0, [], 0, 0
    outside, own = PassClock(runner.p.pid), PassClock()
    guard = ReferenceGuard(ref_ns)  # the reference's own call time, measured before any candidate code ran
    per_call_s = slowest
    n = min(max(1, a.sets), nsets)  # calls per pass: a.sets for the first two passes, then about PASS_NS worth
    deadline = time.monotonic() + max(10.0, 40 * a.min_time)
    settle = timing_settle() if dev.type == "cuda" else 0.0
    while True:
        with ph("inputs"):
            for k in range(n):
                sets.fill(k, generate_inputs(problem, dev, timing_seed(passes, k)), timing_seed(passes, k))
        sync(dev)
        if probe is not None:  # idle before the runner's pass: what is found busy after it, the runner left
            _wait_idle(probe, "before timing pass %d (the runner stopped since its last answer)" % passes)
        # The outside clock spans the pass from the runner's thaw to its answer (freezing and thawing its cgroup take
        # milliseconds that are not the runner's).
        r = runner.ask({"op": "time", "sets": list(range(n)), "values": sets.take_values()},
                       timeout=limit + 4 * n * per_call_s, why=why + ", + 4 x the pass's calls at the slowest call so far",
                       clock=outside)
        _ok(r, "timing pass %d" % passes)
        spent = runner.spent
        ns = r.get("ns")
        if not (isinstance(ns, list) and len(ns) == n and all(isinstance(x, int) and 0 <= x < 10 ** 13 for x in ns)):
            raise _Verdict("rejected", "protocol", "the runner's times for timing pass %d are not %d call times in ns" % (passes, n))
        # The evidence, decided and copied now that the runner has answered: every call sampled at fresh
        # positions, some calls whole.
        at = [positions(s.numel(), SAMPLES, rng, dev) for s in sets.slots[0]]
        got = [sampled(sets.slots[k], at) for k in range(n)]
        whole = set(pick.sample(range(n), min(n, max(0, a.full_checks))))
        got_whole = {k: [s.clone() for s in sets.slots[k]] for k in whole}
        if on("input_mutation"):
            for k in range(n):
                if sets.mutated(k) is not None:
                    raise _Verdict("rejected", "input_mutation", "ModelNew modified its input %d (timing pass %d, call %d)" % (
                        sets.mutated(k), passes, k), "timing pass %d" % passes)

        # During the reference's pass, between two calls, the evaluator only gathers the reference's outputs at the
        # sampled positions (and keeps the output of a call checked whole): about what the runner does between its
        # calls. The checks come after the pass (run in between, they made the next call measurably slower).
        ref_at, ref_whole = [], {}

        def keep(i, outs):
            outs = as_list(outs)
            ref_at.append(sampled(outs, at))
            if i in whole:
                ref_whole[i] = outs
        if probe is not None:
            _check_queued_work(probe, passes)

        def reference_pass():
            ref_at.clear()
            ref_whole.clear()
            own.start()
            ns_, spans_ = rt.timed_calls(model, [sets.priv[k] for k in range(n)], store_reference, dev, flush, clock, keep)
            return ns_, spans_, own.stop()
        (ns_ref, spans_ref, own_spent), starved, _ = guard.take(reference_pass)
        if starved and on("impossible_time"):
            raise _Verdict("harness_error", "busy", starved + " (timing pass %d)" % passes, "timing pass %d" % passes)
        for k in range(n) if on("timed_outputs") else ():
            # Checked by the fixed rule first; where it refuses, by the eager-relative rule, with call k's float64
            # reference computed then (on the pass's inputs, or, if the reference wrote into them, the same seed's).
            r64 = None
            for j in range(n_outputs):
                bad = bad_elements(got[k][j], ref_at[k][j], a.atol, a.rtol)
                if bool(bad.any()) and wide.on and ref_at[k][j].dtype == torch.float32:
                    if r64 is None:
                        r64 = wide_outputs(sets.priv[k] if sets.mutated(k) is None else generate_inputs(problem, dev, timing_seed(passes, k)),
                                           "timing pass %d, call %d" % (passes, k))
                    if r64 is not None:
                        bad = bad_expected(got[k][j], widen(ref_at[k][j], r64[j].reshape(-1).index_select(0, at[j])), a.atol, a.rtol)
                if bool(bad.any()):
                    i = int(bad.nonzero()[0])
                    raise _Verdict("rejected", "timed_outputs", "a timed call gave wrong results while the verification calls were right "
                                   "(timing pass %d, call %d, output %d: %d of %d sampled elements wrong, e.g. flat index %d: %s, expected %s)" % (
                                       passes, k, j, int(bad.sum()), bad.numel(), int(at[j][i]), _num(got[k][j][i]), _num(ref_at[k][j][i])),
                                   "timing pass %d" % passes)
                if k in whole:
                    ok, _, _, text = compare(got_whole[k][j], ref_whole[k][j], a.atol, a.rtol, stats=False)
                    if not ok and wide.on and ref_whole[k][j].dtype == torch.float32:
                        if r64 is None:
                            r64 = wide_outputs(sets.priv[k] if sets.mutated(k) is None else generate_inputs(problem, dev, timing_seed(passes, k)),
                                               "timing pass %d, call %d" % (passes, k))
                        if r64 is not None:
                            ok, _, _, text = compare(got_whole[k][j], widen(ref_whole[k][j], r64[j]), a.atol, a.rtol, stats=False)
                    if not ok:
                        raise _Verdict("rejected", "timed_outputs", "a timed call gave wrong results while the verification calls were "
                                       "right (timing pass %d, call %d, output %d: %s)" % (passes, k, j, text), "timing pass %d" % passes)
        del ref_at, ref_whole
        checked += n
        checked_full += len(whole)
        # The outside clock: the pass kept the runner busy for `spent["busy"]`; the runner's loop costs what the same
        # loop cost the reference around its calls (ovh per call, less what this thread waited for a CPU meanwhile),
        # so the reported times must explain the rest.
        between = max(0, sum(spans_ref) - sum(ns_ref))
        ovh = max(0, between - min(between, own_spent["waited"] + own_spent["stolen"])) / n
        timer_log.append((spent, sum(ns), 1.5 * sum(ns) + 1.15 * n * ovh + TIMER_SLACK_NS))
        copies.sample()
        if passes >= 1:
            cand += ns
            ref += ns_ref
        passes += 1
        per_call_s = max(ns + ns_ref) / 1e9
        if passes >= 2:
            n = max(1, min(nsets, int(PASS_NS / max(1.0, statistics.median(ns + ns_ref)))))
        # On the GPU a side also has enough once its median is settled (events time a call to well under a
        # microsecond; a multi-GB call need not be repeated for min_time): kevolve_py_timing.median_settled.
        enough = lambda s: len(s) >= a.min_reps and (sum(s) >= a.min_time * 1e9 or median_settled(s, settle))
        if (enough(cand) and enough(ref)) or len(cand) >= a.max_reps or time.monotonic() > deadline:
            break
    res["candidate"], res["reference"] = summarize(cand, a.threads), summarize(ref, a.threads)
    bw = copies.best
    del copies
    floor_ms = sets.bytes_moved / (2 * bw) * 1e3
    # A pass is out of line when the runner reports more time than passed, or when the time it kept a CPU busy or
    # slept (the wall time less its waits for a CPU, never less than what its timed loop ran) exceeds what its
    # reported times and the loop's overhead explain.
    violations = [(w["busy"], w["wall"], s, allowed) for w, s, allowed in timer_log if s > w["wall"] or w["busy"] > allowed]
    res["checks"] = {"transport": sets.transport, "sets": nsets, "passes": passes, "timed_calls_checked": checked,
                     "timed_calls_checked_whole": checked_full, "sampled_per_output": SAMPLES, "timer_violations": len(violations),
                     "copy_gbps": bw / 1e9, "floor_ms": floor_ms, "settle": settle,
                     "cpu_wait_ms": sum(w["waited"] + w["stolen"] for w, _, _ in timer_log) / 1e6,
                     "reference_retimed": guard.retimed}
    if on("timer") and len(violations) >= max(2, (len(timer_log) + 1) // 2):
        busy, w, s, allowed = sorted(violations)[len(violations) // 2]
        raise _Verdict("rejected", "timer", "the runner's times disagree with the evaluator's outside wall clock in %d of %d timing passes "
                       "(e.g. %.3g ms reported for a pass that took %.3g ms, %.3g ms of it not waiting for a CPU; the timing loop's own "
                       "overhead explains at most %.3g ms)" % (len(violations), len(timer_log), s / 1e6, w / 1e6, busy / 1e6, allowed / 1e6),
                       "timing")
    if on("impossible_time") and res["candidate"]["median_ms"] < floor_ms <= res["reference"]["median_ms"]:
        raise _Verdict("rejected", "impossible_time", "a median of %.4g ms is faster than moving the %d bytes of inputs and outputs "
                       "allows (at twice the measured copy bandwidth, %.3g GB/s: %.4g ms)" % (
                           res["candidate"]["median_ms"], sets.bytes_moved, bw / 1e9, floor_ms), "timing")
    if res["candidate"]["median_ms"] > 0:
        res["speedup"] = res["reference"]["median_ms"] / res["candidate"]["median_ms"]
    ph.leave()
    if hasattr(torch, "compile"):
        ph.enter("torch_compile")
        key = compile_cache_key(a, dev)
        cached = compile_cache_get(a.compile_cache, key)
        if cached is not None:
            res["compile"] = cached
        else:
            timing_sets = [sets.priv[k] for k in range(min(max(1, a.sets), nsets))]
            noop = lambda i, outs: None
            try:
                compiled = torch.compile(model)
                rt.timed_calls(compiled, timing_sets, noop, dev, flush, clock)  # warm-up: compilation
                ct = []
                while len(ct) < a.min_reps:
                    ct += rt.timed_calls(compiled, timing_sets, noop, dev, flush, clock)[0]
                res["compile"] = summarize(ct, a.threads)
                res["compile"]["measured"] = time.strftime("%Y-%m-%d %H:%M:%S")
                compile_cache_put(a.compile_cache, key, res["compile"])
            except Exception as e:
                res["compile"] = {"unavailable": "torch.compile failed: %s" % str(e).splitlines()[0][:200]}
        ph.leave()
        if "median_ms" in res["compile"] and res["candidate"]["median_ms"] > 0:
            res["compile_speedup"] = res["compile"]["median_ms"] / res["candidate"]["median_ms"]
    else:
        res["compile"] = {"unavailable": "torch %s has no torch.compile" % torch.__version__}
    if getattr(a, "roofline", False):
        with ph("roofline"):
            res["roofline"] = roofline.measure(model, sets.priv[0], dev, sets.bytes_moved, 2 * bw / 1e9, a.threads)
    res["status"] = "ok"
    res["message"] = "correct on %d trials; candidate %.4g ms vs eager %.4g ms (%.3gx); tolerance: %s%s" % (
        a.trials, res["candidate"]["median_ms"], res["reference"]["median_ms"], res["speedup"], res["tolerance"],
        " (%s)" % res["tolerance_note"] if res.get("tolerance_note") else "")
