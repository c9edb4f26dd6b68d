#!/usr/bin/env python3
"""This version against another, side by side in one run: every problem of problems/core, its naive and its
fast candidate, each evaluated by `kevolve eval --json` of both builds in alternation (A, B, A, B ... so that
drift of the machine falls on both). Prints, per candidate, the measured kernel time and speedup of each build
and the wall time of the whole evaluation (compile, verify, time), then the geometric means of the ratios.

Usage: tools/bench_core_ab.py OTHER_KEVOLVE [--rounds N] [extra `kevolve eval` options]
  OTHER_KEVOLVE: the other build's kevolve binary (its evaluator and runner beside it), e.g. a worktree of an
  earlier commit built with tools/build.sh; this tree's build/bin/kevolve is the other side."""
import json, math, os, subprocess, sys, time

def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    other = os.path.abspath(args.pop(0))
    rounds = 2
    if args[:1] == ["--rounds"]:
        rounds = int(args[1])
        args = args[2:]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    this = os.path.join(root, "build", "bin", "kevolve")
    for exe in (other, this):
        if not os.access(exe, os.X_OK):
            print(f"bench_core_ab: {exe} is not an executable kevolve (build it first)", file=sys.stderr)
            return 2
    core = os.path.join(root, "problems", "core")
    print(f"date: {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}; cores: {os.cpu_count()}; rounds: {rounds}; "
          f"A: {other}; B: {this}; options: {' '.join(args) or '(defaults)'}")
    print()
    print("| problem | candidate | A ms | B ms | B/A kernel | A speedup | B speedup | A eval s | B eval s | B/A eval |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    kernel_ratios, eval_ratios = [], []
    for name in sorted(os.listdir(core)):
        for cand in ("naive.cpp", "fast.cpp"):
            path = os.path.join(core, name, cand)
            if not os.path.exists(path):
                continue
            got = {"A": [], "B": []}
            for _ in range(rounds):
                for side, exe in (("A", other), ("B", this)):
                    t0 = time.monotonic()
                    p = subprocess.run([exe, "eval", "--json", "--problem", name, "--candidate", path, *args],
                                       cwd=root, capture_output=True, text=True)
                    wall = time.monotonic() - t0
                    try:
                        v = json.loads(p.stdout)
                    except ValueError:
                        v = {"status": "no json", "message": p.stderr[-300:]}
                    got[side].append((v, wall))
            def summary(side):
                runs = got[side]
                if any(v.get("status") != "ok" for v, _ in runs):
                    bad = next(v for v, _ in runs if v.get("status") != "ok")
                    return None, f"{bad.get('status')}: {str(bad.get('message', ''))[:80]}"
                ms = sorted(v["candidate_ms"] for v, _ in runs)[len(runs) // 2]
                sp = sorted(v["speedup"] for v, _ in runs)[len(runs) // 2]
                wall = sorted(w for _, w in runs)[len(runs) // 2]
                return (ms, sp, wall), ""
            a, why_a = summary("A")
            b, why_b = summary("B")
            if not a or not b:
                print(f"| {name} | {cand} | not ok: A {why_a or 'ok'}; B {why_b or 'ok'} |")
                continue
            kernel_ratios.append(b[0] / a[0])
            eval_ratios.append(b[2] / a[2])
            print(f"| {name} | {cand} | {a[0]:.4g} | {b[0]:.4g} | {b[0] / a[0]:.2f} | {a[1]:.3g}x | {b[1]:.3g}x | "
                  f"{a[2]:.1f} | {b[2]:.1f} | {b[2] / a[2]:.2f} |")
    geo = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")
    print()
    print(f"geomean B/A: kernel time {geo(kernel_ratios):.3f} over {len(kernel_ratios)} candidates; "
          f"evaluation wall time {geo(eval_ratios):.3f} (medians of {rounds} runs each)")
    return 0

if __name__ == "__main__":
    sys.exit(main())
