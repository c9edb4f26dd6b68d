#!/usr/bin/env python3
"""The GPU timing's stopping rule against the last one, side by side in one run on one GPU: A times each side
until min_time (KEVOLVE_TIMING_SETTLE=0, the rule before), B stops a side once its median is settled (the
default). Every CUDA template of knowledge/templates/cuda at its defaults (rendered by `kevolve kb template
--hardware nvidia-hopper`), and any KernelBench-format pairs given with --py, each evaluated by `kevolve eval
--backend cuda --json` under A and B in alternation (A B, then B A, ...). Prints, per candidate, the kernel's
median and speedup under each rule, the timing phase's seconds, the calls timed and the whole evaluation's wall
time; then geometric means of the ratios B/A.

Usage: tools/bench_timing_ab.py [--kevolve PATH] [--rounds N] [--only a,b] [--py PROBLEM.py:MODELNEW.py ...]
  Needs the CUDA worker (KEVOLVE_CUDA_WORKER or beside kevolve) and, for --py, KEVOLVE_PY_EVAL."""
import json, math, os, re, statistics, subprocess, sys, tempfile, time

TIMING = re.compile(r"\btiming ([0-9.]+) s")


def evaluate(kevolve, problem, cand, settle):
    env = dict(os.environ)
    if settle is None:
        env.pop("KEVOLVE_TIMING_SETTLE", None)
    else:
        env["KEVOLVE_TIMING_SETTLE"] = settle
    t0 = time.monotonic()
    p = subprocess.run([kevolve, "eval", "--backend", "cuda", "--json", "-p", problem, "-c", cand],
                       capture_output=True, text=True, env=env)
    wall = time.monotonic() - t0
    try:
        r = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"status": "no JSON", "message": (p.stderr or p.stdout)[-300:], "wall": wall}
    m = TIMING.search(r.get("profile", ""))
    r["timing_s"] = float(m.group(1)) if m else float("nan")
    r["wall"] = wall
    return r


def geomean(xs):
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def main():
    args = sys.argv[1:]
    if args[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    kevolve, rounds, only, py = os.path.join(root, "build", "bin", "kevolve"), 2, None, []
    while args:
        a = args.pop(0)
        if a == "--kevolve":
            kevolve = os.path.abspath(args.pop(0))
        elif a == "--rounds":
            rounds = int(args.pop(0))
        elif a == "--only":
            only = set(args.pop(0).split(","))
        elif a == "--py":
            py.append(tuple(args.pop(0).split(":", 1)))
        else:
            print("bench_timing_ab: unknown argument %s (see --help)" % a, file=sys.stderr)
            return 2
    tmp = tempfile.mkdtemp(prefix="kevolve-timing-ab-")
    cases = []
    for name in sorted(os.listdir(os.path.join(root, "knowledge", "templates", "cuda"))):
        if only and name not in only:
            continue
        problem = os.path.join(root, "problems", "core", name, "problem.toml")
        if not os.path.exists(problem):
            continue
        src = subprocess.run([kevolve, "kb", "template", name, "--hardware", "nvidia-hopper", "--knowledge",
                              os.path.join(root, "knowledge")], capture_output=True, text=True)
        if src.returncode != 0:
            print("bench_timing_ab: %s: %s" % (name, src.stderr.strip()), file=sys.stderr)
            continue
        path = os.path.join(tmp, name + ".cu")
        open(path, "w").write(src.stdout)
        cases.append((name, problem, path))
    for prob, cand in py:
        cases.append((os.path.basename(prob), os.path.abspath(prob), os.path.abspath(cand)))
    print("date: %s; rounds: %d; A: KEVOLVE_TIMING_SETTLE=0 (min_time decides); B: default (median settled to "
          "+-0.5 %% or min_time); kevolve eval defaults otherwise" % (time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), rounds))
    print()
    print("| candidate | A ms | B ms | B/A kernel | A speedup | B speedup | A calls | B calls | A timing s | B timing s "
          "| A eval s | B eval s | B/A eval |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    kr, sr, tr, er = [], [], [], []
    for name, problem, cand in cases:
        got = {"A": [], "B": []}
        for k in range(rounds):
            for side in (("A", "B") if k % 2 == 0 else ("B", "A")):
                got[side].append(evaluate(kevolve, problem, cand, "0" if side == "A" else None))
        bad = [r for side in got.values() for r in side if r.get("status") != "ok"]
        if bad:
            print("| %s | %s: %s |" % (name, bad[0].get("status"), bad[0].get("message", "")[:200].replace("|", "/")))
            continue
        f = {s: {key: statistics.median([r[key] for r in got[s]]) for key in
                 ("candidate_ms", "speedup", "samples", "reference_samples", "timing_s", "wall")} for s in got}
        ratio = lambda key: f["B"][key] / f["A"][key] if f["A"][key] > 0 else float("nan")
        kr.append(ratio("candidate_ms"))
        sr.append(ratio("speedup"))
        tr.append(ratio("timing_s"))
        er.append(ratio("wall"))
        print("| %s | %.4g | %.4g | %.3f | %.3g | %.3g | %d+%d | %d+%d | %.2f | %.2f | %.1f | %.1f | %.3f |" % (
            name, f["A"]["candidate_ms"], f["B"]["candidate_ms"], kr[-1], f["A"]["speedup"], f["B"]["speedup"],
            f["A"]["samples"], f["A"]["reference_samples"], f["B"]["samples"], f["B"]["reference_samples"],
            f["A"]["timing_s"], f["B"]["timing_s"], f["A"]["wall"], f["B"]["wall"], er[-1]))
    print()
    print("geomean B/A over %d candidates: kernel median %.3f, speedup %.3f, timing phase %.3f, whole evaluation %.3f"
          % (len(kr), geomean(kr), geomean(sr), geomean(tr), geomean(er)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
