#!/usr/bin/env python3
"""Times the generated family kernels (backends/python/kevolve_py_families*.py) against eager PyTorch and
torch.compile on one GPU, problem by problem, at each problem's own sizes.

    python3 tools/families_bench.py [--problems DIR] [--only 1,16,19] [--points 3] [--budget 420]
                                    [--compile-budget 200] [--out DIR] [--resume FILE] [--focus]

Per problem: the family match; the module's inputs made on the GPU by its own get_inputs() under two seeds
(two input sets, alternated so that no call sees the inputs of the call before); eager time; for a matched
family, `--points` parameter points (the defaults, then variations the search space allows; with --focus the
defaults and every point FOCUS lists for the problem), each compiled
as a complete ModelNew file, checked against the eager outputs on both sets (|got - ref| <= 1e-4 + 1e-4 |ref|
per element, the evaluator's default tolerance; integer outputs exactly) and timed; then, while
`--compile-budget` seconds remain, torch.compile (default mode) of the module. Timing: CUDA events around
one call on the current stream, an L2 flush (a 256 MB write) before each call, 3 warm-up calls, the median of
`--reps` calls. These are the generated kernels alone, run by this script: not the kevolve evaluator's
verdicts (no sandbox, no static check, no search).

Writes one JSON line per problem to OUT/families_bench.jsonl (with --resume, problems already in that file are
skipped and its lines kept) and prints a table at the end.
"""
import argparse
import copy
import glob
import json
import os
import statistics
import sys
import time
import traceback
import types

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "backends", "python"))

import kevolve_py_families as fam  # noqa: E402
import kevolve_py_families_gen as gen  # noqa: E402

ATOL = RTOL = 1e-4

# variations tried after the defaults, per layout, in order (those outside the space are skipped)
VARIATIONS = {
    "pointwise": [{"threads": 512, "unroll": 2}, {"threads": 128, "vec": 4}, {"vec": 2}],
    "inner": [{"cache": "none"}, {"threads": 512}, {"team": 32}, {"split": 16}, {"online": 0}, {"cache": "smem"}],
    "outer": [{"ty": 4, "cache": "none"}, {"cache": "regs", "items": 64, "vec": 1}, {"vec": 2, "ty": 2}, {"online": 0}],
    "scan_inner": [{"threads": 512}, {"vec": 1}],
    "scan_outer": [{"threads": 256}, {"vec": 1}],
}


# --focus: the points measured per problem (after the defaults) instead of VARIATIONS: the algorithm choices
# of the search space on the problems where the generated kernels trailed torch.compile (bias: the
# convolution's bias added by the fused kernel; cl: the convolution in channels_last; plane: pointwise by
# planes; online 2: mean and variance from double sums, or each thread's two passes over its registers)
FOCUS = {
    19: [{"ty": 4, "cache": "regs", "items": 16}, {"ty": 2, "cache": "regs", "items": 32}, {"ty": 4, "cache": "none"}],
    20: [{"online": 2}],
    21: [{"online": 2}],
    22: [{"online": 2}, {"online": 2, "split": 2}, {"online": 2, "threads": 512}],
    23: [{"plane": 1}, {"plane": 1, "threads": 512}, {"plane": 1, "unroll": 4}, {"threads": 512, "unroll": 2}],
    34: [{"online": 2}, {"online": 2, "cache": "none"}, {"online": 2, "threads": 512, "items": 8}],
    50: [{"online": 2}, {"online": 0}, {"online": 2, "threads": 512}, {"online": 2, "team": 32, "threads": 256, "cache": "none"}],
    51: [{"threads": 256}, {"threads": 512}, {"team": 32, "threads": 256}],
    52: [{"threads": 256}, {"threads": 512}, {"team": 32, "threads": 256}],
    60: [{"bias": 0}, {"plane": 1}, {"cl": 1}, {"cl": 1, "threads": 512, "unroll": 2}],
    61: [{"bias": 0}, {"online": 2}, {"online": 2, "split": 2}],
    64: [{"bias": 0}, {"plane": 1}, {"cl": 1}, {"cl": 1, "threads": 512, "unroll": 2}],
    66: [{"bias": 0}, {"cache": "none", "team": 0, "threads": 1024}],
    69: [{"bias": 0}, {"online": 2}, {"online": 2, "cache": "none"}],
    71: [{"bias": 0}, {"cl": 1}, {"cl": 1, "online": 2}, {"cl": 1, "online": 0}],
}


def number(path):
    try:
        return int(os.path.basename(path).split("_")[0])
    except ValueError:
        return 1 << 30


def points(an, n, focus=None):
    space, defaults = fam.search_space(an, "cuda")
    out = [dict(defaults)]
    if focus is not None:
        for v in focus:
            if all(k in space and val in space[k] for k, val in v.items()) and dict(defaults, **v) not in out:
                out.append(dict(defaults, **v))
        return out
    for v in VARIATIONS.get(an.layout["kind"], []):
        p = dict(defaults)
        if all(k in space and val in space[k] for k, val in v.items()):
            p.update(v)
            if p not in out:
                out.append(p)
        if len(out) >= n:
            break
    return out


def close(got, ref):
    """(all within tolerance, max abs error), computed in chunks on the GPU."""
    if got.shape != ref.shape or got.dtype != ref.dtype:
        return False, float("inf")
    g, e = got.reshape(-1), ref.reshape(-1)
    if not g.dtype.is_floating_point:
        return bool((g == e).all()), float((g != e).sum())
    worst, ok = 0.0, True
    step = 1 << 26
    for s in range(0, g.numel(), step):
        d = (g[s:s + step].double() - e[s:s + step].double()).abs()
        lim = ATOL + RTOL * e[s:s + step].double().abs()
        ok = ok and bool((d <= lim).all())
        worst = max(worst, float(d.max()) if d.numel() else 0.0)
    return ok, worst


def timed(fn, sets, reps, flush):
    times = []
    with torch.no_grad():
        for i in range(3):
            out = fn(*sets[i % len(sets)])
            del out
        torch.cuda.synchronize()
        for i in range(reps):
            args = sets[i % len(sets)]
            flush.fill_(float(i))
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            out = fn(*args)
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e))
            del out
    return statistics.median(times), min(times), max(times)


def bytes_of(tensors):
    return sum(t.numel() * t.element_size() for t in tensors if isinstance(t, torch.Tensor))


def bench_problem(path, args, flush, deadline):
    res = {"problem": os.path.basename(path)[:-3]}
    t0 = time.time()
    match = fam.analyse(path)
    res["family"], res["reason"] = match["family"], match["reason"]
    problem = fam.load_problem(path)
    # the sizes, without allocating: refuse what would not fit
    model_meta, inputs_meta = fam.meta_instance(problem)
    in_bytes = bytes_of(inputs_meta)
    free = torch.cuda.mem_get_info()[0]
    if 6 * in_bytes > free:
        res["status"] = "skipped: inputs of %.1f GB need about %.1f GB, %.1f GB free" % (in_bytes / 1e9, 6 * in_bytes / 1e9, free / 1e9)
        return res
    torch.set_default_device("cuda")
    try:
        torch.manual_seed(1)
        init = problem.get_init_inputs()
        torch.manual_seed(1)
        model = problem.Model(*init).cuda().eval()
        sets = []
        for seed in (11, 12):
            torch.manual_seed(seed)
            sets.append([x.cuda() if isinstance(x, torch.Tensor) else x for x in problem.get_inputs()])
    finally:
        torch.set_default_device("cpu")
    with torch.no_grad():
        refs = [model(*s) for s in sets]
    out_bytes = bytes_of(refs[:1])
    res["bytes"] = in_bytes + out_bytes
    res["eager_ms"], _, _ = timed(model, sets, args.reps, flush)
    res["points"] = []
    # a float64 run of the module on the first input set, where it fits: how far eager float32 itself is from
    # the exact answer at the evaluator's tolerance (a sum of millions of floats can miss 1e-4 either way)
    ref64 = None
    if match["family"] and 12 * in_bytes < torch.cuda.mem_get_info()[0]:
        try:
            m64 = copy.deepcopy(model).double()
            with torch.no_grad():
                ref64 = m64(*[x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in sets[0]])
            del m64
            res["eager_within_tol_of_fp64"], res["eager_max_err_vs_fp64"] = close(refs[0].to(ref64.dtype), ref64)
        except Exception as e:
            res["fp64_error"] = "%s: %s" % (type(e).__name__, str(e)[:200])
            ref64 = None
    if match["family"]:
        an = fam.Analysis(path)
        for p in points(an, args.points, FOCUS.get(number(path), []) if args.focus else None):
            if time.time() > deadline:
                break
            pt = {"params": p}
            try:
                r = gen.generate(path, "cuda", p)
                if "error" in r:
                    pt["error"] = r["error"]
                    res["points"].append(pt)
                    continue
                mod = types.ModuleType("kevolve_candidate")
                tc = time.time()
                exec(compile(r["source"], "ModelNew(%s)" % res["problem"], "exec"), mod.__dict__)
                torch.manual_seed(1)
                with torch.device("cuda"):
                    cand = mod.ModelNew(*init).eval()
                cand.load_state_dict(model.state_dict())
                with torch.no_grad():
                    oks = []
                    for s, ref in zip(sets, refs):
                        got = cand(*s)
                        ok, err = close(got, ref)
                        del got
                        oks.append(ok)
                        pt["max_abs_err"] = max(pt.get("max_abs_err", 0.0), err)
                torch.cuda.synchronize()
                pt["build_s"] = round(time.time() - tc, 2)
                pt["correct"] = all(oks)
                pt["ms"], pt["min_ms"], pt["max_ms"] = timed(cand, sets, args.reps, flush)
                with torch.no_grad():  # the outputs of the timed calls checked too
                    got = cand(*sets[0])
                    pt["correct"] = pt["correct"] and close(got, refs[0])[0]
                    if ref64 is not None:
                        pt["within_tol_of_fp64"], pt["max_err_vs_fp64"] = close(got.to(ref64.dtype), ref64)
                    del got
                del cand
            except Exception as e:  # a kernel that fails to build or launch: recorded, the next point goes on
                pt["error"] = "%s: %s" % (type(e).__name__, str(e)[:400])
                torch.cuda.synchronize()
            res["points"].append(pt)
        good = [p for p in res["points"] if p.get("correct")]
        if good:
            best = min(good, key=lambda p: p["ms"])
            res["best_ms"], res["best_params"] = best["ms"], best["params"]
            res["best_gbs"] = res["bytes"] / best["ms"] / 1e6
    res["status"] = "ok"
    res["seconds"] = round(time.time() - t0, 1)
    del refs, sets, model, ref64
    torch.cuda.empty_cache()
    return res


def compile_problem(path, args, flush, res):
    problem = fam.load_problem(path)
    torch.set_default_device("cuda")
    try:
        torch.manual_seed(1)
        init = problem.get_init_inputs()
        torch.manual_seed(1)
        model = problem.Model(*init).cuda().eval()
        sets = []
        for seed in (11, 12):
            torch.manual_seed(seed)
            sets.append([x.cuda() if isinstance(x, torch.Tensor) else x for x in problem.get_inputs()])
    finally:
        torch.set_default_device("cpu")
    t = time.time()
    try:
        cm = torch.compile(model)
        with torch.no_grad():
            cm(*sets[0])
        torch.cuda.synchronize()
        res["compile_build_s"] = round(time.time() - t, 1)
        res["compile_ms"], _, _ = timed(cm, sets, args.reps, flush)
    except Exception as e:
        res["compile_error"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:300] if str(e) else "")
    del sets, model
    torch.cuda.empty_cache()


def table(rows):
    lines = ["| problem | family | eager ms | compile ms | best kernel ms | correct points | vs eager | vs compile | GB/s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        pts = r.get("points", [])
        ok = sum(1 for p in pts if p.get("correct"))
        e, c, b = r.get("eager_ms"), r.get("compile_ms"), r.get("best_ms")
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["problem"], r.get("family") or "– (%s)" % r.get("reason", "")[:60],
            "%.3f" % e if e else "–", "%.3f" % c if c else ("error" if r.get("compile_error") else "–"),
            "%.3f" % b if b else "–", "%d of %d" % (ok, len(pts)) if pts else "–",
            "%.2fx" % (e / b) if e and b else "–", "%.2fx" % (c / b) if c and b else "–",
            "%.0f" % r["best_gbs"] if r.get("best_gbs") else "–"))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problems", default=os.path.join(ROOT, "problems", "kernelbench-format"))
    ap.add_argument("--only", default="")
    ap.add_argument("--points", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--budget", type=float, default=420.0, help="seconds for the eager + kernel pass")
    ap.add_argument("--compile-budget", type=float, default=0.0, help="seconds for the torch.compile pass after it")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--resume", default="")
    ap.add_argument("--focus", action="store_true", help="measure the defaults and the FOCUS points of each problem "
                    "(all of them: --points is ignored) instead of the defaults and VARIATIONS")
    a = ap.parse_args()
    start = time.time()
    paths = sorted(glob.glob(os.path.join(a.problems, "*.py")), key=number)
    if a.only:
        want = set(int(x) for x in a.only.split(","))
        paths = [p for p in paths if number(p) in want]
    done = {}
    if a.resume and os.path.exists(a.resume):
        with open(a.resume) as f:
            for line in f:
                r = json.loads(line)
                done[r["problem"]] = r
    os.makedirs(a.out, exist_ok=True)
    out_path = os.path.join(a.out, "families_bench.jsonl")
    rows = list(done.values())
    flush = torch.empty(64 << 20, dtype=torch.float32, device="cuda")
    print("device: %s, torch %s" % (torch.cuda.get_device_name(), torch.__version__), flush=True)
    deadline = start + a.budget
    for p in paths:
        name = os.path.basename(p)[:-3]
        if name in done:
            continue
        if time.time() > deadline:
            print("budget spent before %s" % name, flush=True)
            break
        try:
            r = bench_problem(p, a, flush, deadline)
        except Exception as e:
            r = {"problem": name, "status": "error: %s: %s" % (type(e).__name__, str(e)[:300]), "trace": traceback.format_exc()[-1500:]}
            torch.cuda.empty_cache()
        rows.append(r)
        print(json.dumps({k: v for k, v in r.items() if k not in ("points", "trace")}), flush=True)
        with open(out_path, "w") as f:
            for x in rows:
                f.write(json.dumps(x) + "\n")
    cdead = time.time() + a.compile_budget
    for r in rows:
        if a.compile_budget <= 0 or time.time() > cdead:
            break
        if r.get("compile_ms") or r.get("compile_error") or not r.get("family") or r.get("status") != "ok":
            continue
        path = os.path.join(a.problems, r["problem"] + ".py")
        compile_problem(path, a, flush, r)
        print("compile %s: %s" % (r["problem"], r.get("compile_ms", r.get("compile_error"))), flush=True)
        with open(out_path, "w") as f:
            for x in rows:
                f.write(json.dumps(x) + "\n")
    print(table(rows))
    print("total %.0f s" % (time.time() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
