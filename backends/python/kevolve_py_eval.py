#!/usr/bin/env python3
"""kevolve's Python hardware interpreter: the trusted evaluator for KernelBench-format problems.

A problem is a Python file defining `Model(nn.Module)`, `get_inputs()` and `get_init_inputs()`; a candidate
is a Python file defining `ModelNew` with the same constructor and forward signature. This process loads
the problem, makes seeded inputs and reference outputs and verifies; the candidate itself only ever runs in
a separate runner process (kevolve_py_runner.py) that sees the inputs and weights, never the references.

Rules, as for the native harness: a static check of the candidate's source for the hacks Python makes easy
(try/except fallback, calling the reference, threads, extra streams, precision downgrades, patched timers);
`trials` verification calls, each with fresh seeded inputs and the reference model's weights; outputs
compared per element (atol + rtol*|ref|, NaN never passes); inputs must come back unchanged; an output that
equals an earlier trial's answer is a stale answer; crash and hang containment (the runner is killed at the
deadline). Timing alternates candidate and reference passes over rotating input sets, each side timed the
same way in its own process (CUDA: events around the call on the current stream, the L2 flushed before
each call; CPU: the wall clock), median of the runs; the reference is also timed under torch.compile where
this torch has it.

Prints one JSON object (--json) or a readable report. Exit status 0 when the candidate was evaluated.
With --serve it stays: one request per stdin line, one JSON line back each (kevolve keeps one such process
per device: torch is imported once, and the runner of the next candidate is started while kevolve prepares
it; each candidate still runs in a fresh runner process of its own).
"""
import argparse
import hashlib
import ast
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# Candidate and reference run in two processes, one at a time: idle OpenMP threads must sleep, not spin on
# the cores the other side is being timed on (set before torch starts its thread pool; the runner inherits it).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DETECTORS = ["static", "input_mutation", "fresh_data", "pointer_reuse", "timed_outputs"]


# ---- static check -----------------------------------------------------------------------------------

PRECISION_NAMES = {"allow_tf32", "set_float32_matmul_precision", "allow_fp16_reduced_precision_reduction",
                   "allow_bf16_reduced_precision_reduction", "autocast", "half", "bfloat16", "float16"}
THREAD_MODULES = {"threading", "_thread", "multiprocessing", "concurrent", "asyncio", "subprocess"}
KERNEL_MARKERS = ("load_inline", "cpp_extension", "nvrtc", "triton", "cupy", "numba")
# In C++/CUDA source carried as strings (load_inline): work queued on a stream of its own escapes the timer.
NATIVE_STREAM_TOKENS = ("cudaStreamCreate", "getStreamFromPool", "cudaStreamNonBlocking", "getStreamFromExternal")
# Settings of torch a candidate may assign (performance switches that change no precision).
PATCH_ALLOWED = ("torch.backends.cudnn.benchmark", "torch.backends.cudnn.deterministic", "torch._dynamo.config.",
                 "torch._inductor.config.")


def _chain(node):
    """'a.b.c' for an attribute chain rooted at a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _patches_module(chain, aliases):
    """Whether assigning `chain` replaces something of torch or time (through any alias), other than an
    allowed setting."""
    if not chain or "." not in chain:
        return False
    root, rest = chain.split(".", 1)
    if root not in aliases:
        return False
    full = aliases[root] + "." + rest
    return not any(full == a or (a.endswith(".") and full.startswith(a)) for a in PATCH_ALLOWED)


def static_check(source, problem_stem):
    """Returns (hack, line, why) for the first forbidden construct, or None."""
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        return ("syntax", e.lineno or 0, "the candidate is not valid Python: %s" % e.msg)
    for n, text in enumerate(source.splitlines(), 1):
        for token in NATIVE_STREAM_TOKENS:
            if token in text:
                return ("streams", n, "'%s' in native source: work on another stream escapes the timer" % token)
    aliases = {}  # local name -> the module it stands for ("torch", "torch.cuda", "time", ...)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in ("torch", "time"):
                    aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("torch", "time"):
            for a in node.names:
                aliases[a.asname or a.name] = node.module + "." + a.name
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Try):
            only_imports = all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in node.body)
            if not only_imports:
                return ("fallback", line, "try/except around computation: a kernel that fails must fail, not fall back to PyTorch")
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            for n in names:
                root = n.split(".")[0]
                if root in THREAD_MODULES:
                    return ("threads", line, "'%s': work on other threads or processes escapes the timer" % n)
                if root == problem_stem or n.endswith(problem_stem):
                    return ("reference", line, "importing the problem module: the reference must not be called")
            if isinstance(node, ast.ImportFrom) and any(a.name == "Model" for a in node.names):
                return ("reference", line, "importing Model: the reference must not be called")
        if isinstance(node, ast.Name) and node.id == "Model":
            return ("reference", line, "the reference Model is used")
        if isinstance(node, ast.Attribute):
            if node.attr in ("Stream", "stream", "ExternalStream", "set_stream"):
                return ("streams", line, "'%s': work on another stream escapes the timer" % node.attr)
            if node.attr in PRECISION_NAMES:
                return ("precision", line, "'%s': lower precision than the reference computes in" % node.attr)
            if node.attr in ("perf_counter", "perf_counter_ns", "time", "monotonic", "Event", "synchronize", "elapsed_time") and \
                    isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)):
                return ("timer", line, "assigning '%s': timers must not be patched" % node.attr)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" and node.args:
            target = _chain(node.args[0]) or ""
            if target.split(".")[0] in aliases:
                return ("timer", line, "setattr on '%s': torch's and the time module's functions (timers, events, streams, "
                                       "copies) must not be patched" % target)
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for t in targets:
            chain = _chain(t)
            if chain and chain.split(".")[-1] in PRECISION_NAMES:
                continue  # a precision switch: the precision rule below names it
            if _patches_module(chain, aliases):
                return ("timer", line, "assigning '%s': torch's and the time module's functions (timers, events, streams, copies) "
                                       "must not be patched" % chain)
        if isinstance(node, ast.Name) and node.id in ("float16", "bfloat16"):
            return ("precision", line, "'%s': lower precision than the reference computes in" % node.id)
    return None


def label_of(source):
    """kernel: the candidate brings its own kernel code; framework: it rearranges PyTorch calls."""
    return "kernel" if any(m in source for m in KERNEL_MARKERS) else "framework"


# ---- the runner process -------------------------------------------------------------------------------

class Runner:
    """The candidate's process: commands as JSON lines on its stdin, answers on its stdout. candidate "-"
    starts a standby runner (torch imported, device set up) that learns its candidate later (take_runner)."""

    def __init__(self, candidate, workdir, device, threads, timeout):
        self.timeout = timeout
        self.device, self.threads = device, threads
        env = dict(os.environ)
        env["OMP_NUM_THREADS"] = str(threads)
        env["KEVOLVE_RUNNER_PARENT"] = str(os.getpid())
        self.p = subprocess.Popen([sys.executable, os.path.join(HERE, "kevolve_py_runner.py"), candidate, device, str(threads)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  cwd=workdir, env=env, start_new_session=True)

    def ask(self, cmd, timeout=None):
        self.p.stdin.write(json.dumps(cmd) + "\n")
        self.p.stdin.flush()
        import select
        ready, _, _ = select.select([self.p.stdout], [], [], timeout or self.timeout)
        if not ready:
            self.kill()
            return {"status": "timeout", "message": "the candidate did not finish within %g s (wall clock); its process was killed" % (timeout or self.timeout)}
        line = self.p.stdout.readline()
        if not line:
            self.p.wait()
            err = self.p.stderr.read()[-2000:]
            return {"status": "runtime_error", "message": "the candidate's process died (exit %s): %s" % (self.p.returncode, err.strip())}
        return json.loads(line)

    def kill(self):
        try:
            os.killpg(self.p.pid, 9)
        except OSError:
            pass
        self.p.wait()

    def close(self):
        if self.p.poll() is None:
            try:
                self.p.stdin.close()
                self.p.wait(timeout=5)
            except Exception:
                self.kill()

    def stderr_tail(self):
        try:
            return self.p.stderr.read()[-2000:] if self.p.poll() is not None else ""
        except Exception:
            return ""


_standby = None  # serve mode: a runner started after each evaluation, for the next one


def take_runner(candidate, workdir, device, threads, timeout):
    """A runner of its own for `candidate`: the standby runner when one was started for this device and
    thread count (it opens the candidate now), else a fresh process."""
    global _standby
    r, _standby = _standby, None
    if r is not None:
        if (r.device, r.threads) == (device, threads) and r.p.poll() is None:
            r.timeout = timeout
            try:
                if r.ask({"op": "open", "candidate": candidate, "work": workdir}, timeout=max(60, timeout)).get("status") == "ok":
                    return r
            except (OSError, ValueError):  # it died in between: a fresh one below
                pass
        r.kill()
    return Runner(candidate, workdir, device, threads, timeout)


def start_standby(device, threads, timeout):
    global _standby
    if _standby is None:
        _standby = Runner("-", None, device, threads, timeout)


# ---- evaluation ---------------------------------------------------------------------------------------

def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def compare(got, exp, atol, rtol):
    """(ok, max_abs, max_rel, text) for one output."""
    if not isinstance(got, torch.Tensor):
        return False, 0.0, 0.0, "the output is a %s, not a tensor" % type(got).__name__
    if got.shape != exp.shape:
        return False, 0.0, 0.0, "shape %s, expected %s" % (tuple(got.shape), tuple(exp.shape))
    if got.dtype != exp.dtype:
        return False, 0.0, 0.0, "dtype %s, expected %s" % (got.dtype, exp.dtype)
    g, e = got.double().cpu(), exp.double().cpu()
    if exp.is_floating_point() and not torch.isfinite(g[torch.isfinite(e)]).all():
        return False, float("inf"), float("inf"), "NaN/Inf where the reference is finite"
    err = (g - e).abs()
    max_abs = float(err.max()) if err.numel() else 0.0
    max_rel = float((err / e.abs().clamp_min(1e-30)).max()) if err.numel() else 0.0
    bad = err > (atol + rtol * e.abs())
    if bad.any():
        idx = int(bad.reshape(-1).nonzero()[0])
        return False, max_abs, max_rel, "%d of %d elements outside atol %g + rtol %g*|ref| (first at flat index %d: %g vs %g)" % (
            int(bad.sum()), bad.numel(), atol, rtol, idx, float(g.reshape(-1)[idx]), float(e.reshape(-1)[idx]))
    return True, max_abs, max_rel, ""


def summarize(samples_ns, threads):
    if not samples_ns:
        return {"median_ms": 0, "p10_ms": 0, "p90_ms": 0, "samples": 0, "threads": threads}
    s = sorted(samples_ns)
    pick = lambda q: s[min(len(s) - 1, int(q * len(s)))] / 1e6
    return {"median_ms": statistics.median(s) / 1e6, "p10_ms": pick(0.1), "p90_ms": pick(0.9), "samples": len(s), "threads": threads}


def compile_cache_key(a, dev):
    """The reference's torch.compile timing depends on the problem file, the device, torch and the thread
    count: measured once per such key (it costs a compilation) and reused by later candidates."""
    with open(a.problem, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else platform.processor() or platform.machine()
    return "%s|%s|%s|torch %s|%d threads|seed %d|min_reps %d" % (os.path.basename(a.problem), digest, name, torch.__version__,
                                                                 a.threads, a.seed, a.min_reps)


def compile_cache_get(path, key):
    if not path:
        return None
    try:
        with open(path) as f:
            entry = json.load(f).get(key)
    except (OSError, ValueError):
        return None
    if entry is None:
        return None
    entry = dict(entry)
    entry["cached"] = True  # measured by an earlier evaluation (entry["measured"] says when), not in this one
    return entry


def compile_cache_put(path, key, value):
    """Adds one entry; concurrent evaluators may race, the last writer wins (an entry is only ever re-measured)."""
    if not path:
        return
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError):
            data = {}
        data[key] = value
        tmp = "%s.%d.tmp" % (path, os.getpid())
        with open(tmp, "w") as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, path)
    except OSError:
        pass  # a cache that cannot be written only costs time


def evaluate(a):
    res = {"status": "harness_error", "reason": "", "message": "", "where": "", "max_abs_err": 0.0, "max_rel_err": 0.0,
           "trials": 0, "shapes": 1, "speedup": 0.0, "reference": summarize([], a.threads), "candidate": summarize([], a.threads),
           "compile": None, "compile_speedup": 0.0, "label": "", "detectors_off": a.detector_off, "device": a.device}
    on = lambda d: d not in a.detector_off
    torch.set_num_threads(a.threads)
    stem = os.path.splitext(os.path.basename(a.problem))[0]
    try:
        with open(a.candidate) as f:
            source = f.read()
    except OSError as e:
        res["message"] = "cannot read the candidate: %s" % e
        return res
    res["label"] = label_of(source)
    if on("static"):
        hit = static_check(source, stem)
        if hit:
            kind, line, why = hit
            res.update(status="compile_error" if kind == "syntax" else "rejected", reason=kind if kind != "syntax" else "syntax",
                       message="line %d: %s" % (line, why))
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
    if dev.type == "cuda" and not torch.cuda.is_available():
        res.update(reason="harness", message="no usable CUDA device: torch %s on this machine sees none (torch.cuda.is_available() is false)" % torch.__version__)
        return res
    work = tempfile.mkdtemp(prefix="kevolve-py-")
    runner = None
    try:
        torch.manual_seed(a.seed)
        init = problem.get_init_inputs()
        torch.manual_seed(a.seed)
        model = problem.Model(*init).to(dev).eval()
        torch.save({"init": init, "state": model.state_dict(), "seed": a.seed}, os.path.join(work, "model.pt"))
        runner = take_runner(os.path.abspath(a.candidate), work, a.device, a.threads, a.timeout)
        r = runner.ask({"op": "load", "model": os.path.join(work, "model.pt")}, timeout=max(60, a.timeout))
        if r["status"] != "ok":
            res.update(status=r["status"], reason="load", message="loading ModelNew: " + r["message"])
            return res

        def make_inputs(k):
            torch.manual_seed(a.seed * 1000003 + (k if on("fresh_data") else 0))
            return [x.to(dev) if isinstance(x, torch.Tensor) else x for x in problem.get_inputs()]

        def reference(inputs):
            with torch.no_grad():
                return [o.detach() for o in as_list(model(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]))]

        earlier = []
        for t in range(a.trials):
            inputs = make_inputs(t)
            exp = reference(inputs)
            path_in, path_out = os.path.join(work, "in.pt"), os.path.join(work, "out.pt")
            torch.save(inputs, path_in)
            r = runner.ask({"op": "run", "inputs": path_in, "outputs": path_out})
            where = "trial %d" % t
            if r["status"] != "ok":
                res.update(status=r["status"], reason=r.get("reason", r["status"]), message=r["message"] + " (" + where + ")", where=where)
                return res
            got = torch.load(path_out)
            outs, back = got["outputs"], got["inputs_after"]
            if on("input_mutation"):
                for i, (x0, x1) in enumerate(zip(inputs, back)):
                    if isinstance(x0, torch.Tensor) and not torch.equal(x0.cpu(), x1.cpu()):
                        res.update(status="rejected", reason="input_mutation", message="ModelNew modified its input %d (%s)" % (i, where), where=where)
                        return res
            if len(outs) != len(exp):
                res.update(status="incorrect", reason="outputs", message="%d outputs, the reference gives %d (%s)" % (len(outs), len(exp), where))
                return res
            for i, (g, e) in enumerate(zip(outs, exp)):
                ok, ma, mr, text = compare(g, e, a.atol, a.rtol)
                res["max_abs_err"] = max(res["max_abs_err"], ma)
                res["max_rel_err"] = max(res["max_rel_err"], mr)
                if ok:
                    continue
                for prev in earlier:
                    if compare(g, prev[i], a.atol, a.rtol)[0]:
                        res.update(status="rejected", reason="fresh_data", where=where,
                                   message="output %d is the answer for an earlier trial's inputs: a stale result (%s)" % (i, where))
                        return res
                res.update(status="incorrect", reason="mismatch", message="output %d: %s (%s)" % (i, text, where), where=where)
                return res
            earlier.append(exp)
        if on("pointer_reuse"):
            # Trial 0's very tensors, refilled with new data: a result cached by address or identity shows.
            inputs = make_inputs(1000)
            exp = reference(inputs)
            path_in, path_out = os.path.join(work, "in.pt"), os.path.join(work, "out.pt")
            torch.save(inputs, path_in)
            r = runner.ask({"op": "refill", "inputs": path_in, "outputs": path_out})
            if r["status"] != "ok":
                res.update(status=r["status"], reason=r.get("reason", r["status"]), message=r["message"] + " (refilled inputs)")
                return res
            outs = torch.load(path_out)["outputs"]
            for i, (g, e) in enumerate(zip(outs, exp)):
                if compare(g, e, a.atol, a.rtol)[0]:
                    continue
                if compare(g, earlier[0][i], a.atol, a.rtol)[0]:
                    res.update(status="rejected", reason="pointer_reuse",
                               message="refilled with new data, the same input tensors gave the answer for their previous data: "
                                       "results are cached by address or identity")
                else:
                    res.update(status="incorrect", reason="mismatch", message="output %d wrong on refilled inputs" % i)
                return res
        res["trials"] = a.trials

        # Timing: rotating input sets, alternating candidate and reference passes.
        sets = [make_inputs(100 + k) for k in range(a.sets)]
        paths = []
        for k, s in enumerate(sets):
            p = os.path.join(work, "time%d.pt" % k)
            torch.save(s, p)
            paths.append(p)
        expected = [reference(s) for s in sets]
        flush = torch.empty(int(2 * torch.cuda.get_device_properties(dev).L2_cache_size), dtype=torch.uint8, device=dev) \
            if dev.type == "cuda" else None

        def time_reference(fn, reps=1):
            # The runner times the candidate with this very procedure (kevolve_py_runner.py, op "time").
            out = []
            for s in sets:
                for _ in range(reps):
                    if dev.type == "cuda":
                        flush.fill_(1)
                        b, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        b.record()
                        with torch.no_grad():
                            fn(*s)
                        e.record()
                        e.synchronize()
                        out.append(b.elapsed_time(e) * 1e6)
                    else:
                        t0 = time.perf_counter_ns()
                        with torch.no_grad():
                            fn(*s)
                        out.append(time.perf_counter_ns() - t0)
            return out

        cand, ref = [], []
        passes = 0
        reps = 1  # calls per input set and pass: raised so that a pass lasts about 20 ms (few round trips)
        deadline = time.monotonic() + max(10.0, 40 * a.min_time)
        while True:
            r = runner.ask({"op": "time", "inputs": paths, "check": passes < 2, "reps": reps})
            if r["status"] != "ok":
                res.update(status=r["status"], reason=r.get("reason", r["status"]), message=r["message"] + " (timing)")
                return res
            if passes < 2 and on("timed_outputs"):
                got = torch.load(r["outputs"])
                for k, outs in enumerate(got):
                    for g, e in zip(outs, expected[k]):
                        if not compare(g, e, a.atol, a.rtol)[0]:
                            res.update(status="rejected", reason="timed_outputs",
                                       message="a timed run gave wrong results while the verification runs were right")
                            return res
            if passes >= 1:
                cand += r["ns"]
            ref_times = time_reference(model, reps)
            if passes >= 1:
                ref += ref_times
            passes += 1
            if passes >= 2:
                per_call = max(1.0, statistics.median(r["ns"] + ref_times))
                reps = max(1, min(200, int(20e6 / per_call / len(sets))))
            enough = lambda s: len(s) >= a.min_reps and sum(s) >= a.min_time * 1e9
            if (enough(cand) and enough(ref)) or len(cand) >= a.max_reps or time.monotonic() > deadline:
                break
        res["candidate"], res["reference"] = summarize(cand, a.threads), summarize(ref, a.threads)
        if res["candidate"]["median_ms"] > 0:
            res["speedup"] = res["reference"]["median_ms"] / res["candidate"]["median_ms"]
        if hasattr(torch, "compile"):
            key = compile_cache_key(a, dev)
            cached = compile_cache_get(a.compile_cache, key)
            if cached is not None:
                res["compile"] = cached
            else:
                try:
                    compiled = torch.compile(model)
                    time_reference(compiled)  # warm-up: compilation
                    ct = []
                    while len(ct) < a.min_reps:
                        ct += time_reference(compiled)
                    res["compile"] = summarize(ct, a.threads)
                    res["compile"]["measured"] = time.strftime("%Y-%m-%d %H:%M:%S")
                    compile_cache_put(a.compile_cache, key, res["compile"])
                except Exception as e:
                    res["compile"] = {"unavailable": "torch.compile failed: %s" % str(e).splitlines()[0][:200]}
            if "median_ms" in res["compile"] and res["candidate"]["median_ms"] > 0:
                res["compile_speedup"] = res["compile"]["median_ms"] / res["candidate"]["median_ms"]
        else:
            res["compile"] = {"unavailable": "torch %s has no torch.compile" % torch.__version__}
        res["status"] = "ok"
        res["message"] = "correct on %d trials; candidate %.4g ms vs eager %.4g ms (%.3gx)" % (
            a.trials, res["candidate"]["median_ms"], res["reference"]["median_ms"], res["speedup"])
        return res
    except Exception as e:
        res.update(status="harness_error", reason="harness", message="evaluator error: %s: %s" % (type(e).__name__, e))
        return res
    finally:
        if runner:
            tail = runner.stderr_tail()
            if tail:
                res["runner_log"] = tail
            runner.close()
        shutil.rmtree(work, ignore_errors=True)


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
    ap.add_argument("--sets", type=int, default=3, help="input sets the timing rotates through")
    ap.add_argument("--min-reps", type=int, default=10)
    ap.add_argument("--max-reps", type=int, default=1000)
    ap.add_argument("--min-time", type=float, default=0.3, help="seconds of timed runs per side, at least")
    ap.add_argument("--timeout", type=float, default=30, help="wall-clock seconds one command of the runner may take")
    ap.add_argument("--detector-off", action="append", default=[], choices=DETECTORS)
    ap.add_argument("--json", action="store_true")
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


def serve(ap):
    # Replies go to a private copy of stdout; anything else printed (a problem file's own prints) to stderr.
    reply = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in sys.stdin:
        a = None
        try:
            a = checked(ap, json.loads(line)["argv"])
            r = evaluate(a)
        except SystemExit:  # argparse's error, already printed to stderr
            r = {"status": "harness_error", "reason": "arguments", "message": "the Python evaluator refused its arguments: %s" % line.strip()[:500]}
        except Exception as e:
            r = {"status": "harness_error", "reason": "harness", "message": "evaluator error: %s: %s" % (type(e).__name__, e)}
        reply.write(json.dumps(r) + "\n")
        reply.flush()
        if a is not None:
            if a.device == "cuda" and torch.cuda.is_available():
                torch.cuda.empty_cache()
            start_standby(a.device, a.threads, a.timeout)
    if _standby is not None:
        _standby.kill()
    return 0


def main():
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
    return 0 if r["status"] != "harness_error" else 3


if __name__ == "__main__":
    sys.exit(main())
