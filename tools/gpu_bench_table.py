#!/usr/bin/env python3
"""Benchmark table from a tools/gpu_check.sh state folder: per problem the PyTorch eager and torch.compile
times (tools/torch_baselines.py), the eager reference as timed by the CUDA evaluator side by side with the
best kernel (re-timed in a fresh worker), speedups over both, achieved bandwidth against the measured copy
bandwidth, and evaluations to reach the best. Markdown on stdout.

Usage: tools/gpu_bench_table.py STATE_DIR
"""
import json, math, os, sys


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    state = sys.argv[1]
    base = {}
    if os.path.exists(os.path.join(state, "baselines.json")):
        with open(os.path.join(state, "baselines.json")) as f:
            base = json.load(f)
    rows, sp_eager, sp_compile, core_eager, core_compile = [], [], [], [], []
    reports = os.path.join(state, "reports")
    for p in sorted(os.listdir(reports)) if os.path.isdir(reports) else []:
        path = os.path.join(reports, p, "report.json")
        if not os.path.exists(path):
            rows.append(f"| {p} | (not run yet) |||||||||")
            continue
        with open(path) as f:
            r = json.load(f)
        b = r.get("best") or {}
        bl = base.get(p, {})
        size = ", ".join(f"{k}={v}" for k, v in bl.get("size", {}).items())
        cand, ref = b.get("candidate_ms"), b.get("reference_ms")
        eager, comp = bl.get("eager_ms"), bl.get("compile_ms")
        se = eager / cand if cand and eager else None
        sc = comp / cand if cand and comp else None
        if se: sp_eager.append(se)
        if sc: sp_compile.append(sc)
        if se and not p.endswith("_bf16"): core_eager.append(se)
        if sc and not p.endswith("_bf16"): core_compile.append(sc)
        frac = b["gbps"] / b["peak_gbps"] if b.get("gbps") and b.get("peak_gbps") else None
        f = lambda x, d=3: "–" if x is None else f"{x:.{d}f}"
        counts = r.get("counts", {})
        rows.append(f"| {p} | {size} | {f(eager)} | {f(comp)} | {f(ref)} | {f(cand)} | {f(se, 2)}x | {f(sc, 2)}x | "
                    f"{f(b.get('gbps'), 0)} GB/s ({'–' if frac is None else f'{100 * frac:.0f} %'}) | node {b.get('node_id', '–')} of "
                    f"{counts.get('evaluated', '–')} | {'finished' if r.get('finished') else 'unfinished'} |")
    gm = lambda v: math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")
    print(f"Device: {base.get('device', '?')}, torch {base.get('torch', '?')}, baselines measured {base.get('date', '?')} "
          f"({base.get('method', '')}).\n")
    print("| problem | size | eager ms | compile ms | eager ms (evaluator) | best ms | vs eager | vs compile | achieved | best at | search |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print(f"\nGeometric mean speedup, float32 core problems: {gm(core_eager):.2f}x over eager ({len(core_eager)} problems), "
          f"{gm(core_compile):.2f}x over torch.compile ({len(core_compile)} problems).")
    print(f"Geometric mean speedup, all rows: {gm(sp_eager):.2f}x over eager ({len(sp_eager)} problems), "
          f"{gm(sp_compile):.2f}x over torch.compile ({len(sp_compile)} problems).")


if __name__ == "__main__":
    main()
