#!/usr/bin/env python3
"""PyTorch baselines for the CUDA benchmark: eager (the fused op where torch has one) and torch.compile of
the same function, on each core problem at its [shapes.bench_cuda] size, timed like the CUDA evaluator
times candidates: CUDA events around each run, the L2 flushed before each (a write of 2x its size),
warm-up first, median of many runs. Inputs follow the problem's generators in distribution (the exact
values do not matter for these ops' speed).

Usage: tools/torch_baselines.py [--problems DIR] [--out FILE.json] [--only NAME,...]
Prints one line per problem and writes JSON {problem: {eager_ms, compile_ms, ...}}. An existing --out file
is kept and completed: only problems missing from it are measured. --max-autotune NAMES also times
torch.compile(mode="max-autotune-no-cudagraphs") for those problems (Inductor tunes its kernel configs) and
keeps the faster mode as compile_ms, both recorded under compile_modes.
"""
import argparse, json, os, sys, time, tomllib

import torch
import torch.nn.functional as F


def sizes(problem_dir):
    with open(os.path.join(problem_dir, "problem.toml"), "rb") as f:
        spec = tomllib.load(f)
    shapes = spec["shapes"]
    params = {p["name"]: p["value"] for p in spec.get("params", [])}
    dtype = spec["inputs"][0]["dtype"]
    return dict(shapes.get("bench_cuda", shapes["bench"])), params, dtype


def make(name, s, p, dtype):
    dev = "cuda"
    dt = {"float32": torch.float32, "bfloat16": torch.bfloat16}.get(dtype, torch.float32)
    base = name.replace("_bf16", "")
    if base in ("rmsnorm_fwd", "layernorm_fwd", "rmsnorm_bwd"):
        T, H = s["T"], s["H"]
        x = torch.randn(T, H, device=dev, dtype=dt)
        w = torch.empty(H, device=dev, dtype=dt).uniform_(0.5, 1.5)
        eps = p.get("eps", 1e-6)
        if base == "rmsnorm_fwd":
            return (lambda x, w: F.rms_norm(x, (H,), w, eps)), (x, w), True
        if base == "layernorm_fwd":
            b = torch.randn(H, device=dev, dtype=dt)
            return (lambda x, w, b: F.layer_norm(x, (H,), w, b, eps)), (x, w, b), True
        dy = torch.randn(T, H, device=dev, dtype=dt)
        xr = x.clone().requires_grad_(True)
        wr = w.clone().requires_grad_(True)
        y = F.rms_norm(xr, (H,), wr, eps)
        return (lambda: torch.autograd.grad([y], [xr, wr], [dy], retain_graph=True)), (), False
    if base == "softmax_rows":
        R, C = s["R"], s["C"]
        x = torch.randn(R, C, device=dev, dtype=dt) * 3
        return (lambda x: torch.softmax(x, -1)), (x,), True
    if base == "gelu":
        x = torch.randn(s["N"], device=dev)
        return (lambda x: F.gelu(x)), (x,), True
    if base == "map_id":
        K, N = s["K"], s["N"]
        keys = torch.unique(torch.randint(0, 10**12, (int(K * 1.02) + 16,), device=dev))[:K]
        hit = keys[torch.randint(0, keys.numel(), (N,), device=dev)]
        miss = torch.randint(0, 10**12, (N,), device=dev)
        ids = torch.where(torch.rand(N, device=dev) < 0.5, hit, miss)

        def f(ids, keys):
            idx = torch.searchsorted(keys, ids).clamp(max=keys.numel() - 1)
            return torch.where(keys[idx] == ids, idx, -1)
        return f, (ids, keys), True
    if base == "merge_bucketized_dense":
        B, Fn = s["B"], s["F"]
        x = torch.randn(B, Fn, device=dev) * 1.5
        lens = torch.randint(1, 65, (Fn,))
        off = torch.cat([torch.zeros(1, dtype=torch.long), lens.cumsum(0)])
        bounds = torch.cat([torch.sort(torch.empty(int(l)).uniform_(-3, 3))[0] for l in lens]).to(dev)
        offl = off.tolist()

        def f(x, bounds):
            cols, base_ = [], 0
            for i in range(Fn):
                cols.append(torch.bucketize(x[:, i], bounds[offl[i]:offl[i + 1]]) + base_)
                base_ += offl[i + 1] - offl[i] + 1
            return torch.stack(cols, 1)
        return f, (x, bounds), True
    if base == "batch_event_truncate":
        B, K = s["B"], int(p.get("K", 16))
        lengths = torch.randint(0, 64, (B,), device=dev)
        n = int(lengths.sum())
        values = torch.randint(0, 10**9, (n,), device=dev)

        def f(values, lengths):
            seg = torch.repeat_interleave(torch.arange(B, device=dev), lengths)
            starts = lengths.cumsum(0) - lengths
            pos = torch.arange(values.numel(), device=dev) - starts[seg]
            keep = pos >= (lengths[seg] - K)
            return values[keep], lengths.clamp(max=K)
        return f, (values, lengths), True  # data-dependent output size: torch.compile breaks the graph there
    if base == "fm_interaction":
        e = torch.randn(s["B"], s["F"], s["D"], device=dev) * 0.1

        def f(e):
            sm = e.sum(1)
            return 0.5 * (sm * sm - (e * e).sum(1)).sum(-1)
        return f, (e,), True
    raise KeyError(name)


def bench(fn, args, flush, reps=50, warm=5):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(warm):
        fn(*args)
    torch.cuda.synchronize()
    ms = []
    for i in range(reps):
        flush.fill_(i & 0xff)
        s.record()
        fn(*args)
        e.record()
        e.synchronize()
        ms.append(s.elapsed_time(e))
    ms.sort()
    return ms[len(ms) // 2], ms[len(ms) // 10], ms[(9 * len(ms)) // 10]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problems", default="problems/core")
    ap.add_argument("--out", default="")
    ap.add_argument("--only", default="")
    ap.add_argument("--max-autotune", default="", help="problems also timed with max-autotune-no-cudagraphs")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_baselines: no CUDA device")
    torch.manual_seed(0)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(max(2 * l2, 64 << 20), dtype=torch.uint8, device="cuda")
    names = sorted(os.listdir(a.problems)) if not a.only else a.only.split(",")
    kept = {}
    if a.out and os.path.isfile(a.out):
        with open(a.out) as f:
            kept = json.load(f)
        tune = set(a.max_autotune.split(",")) if a.max_autotune else set()
        names = [n for n in names if n not in kept or (n in tune and "compile_modes" not in kept[n])]
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "date": time.strftime("%Y-%m-%d"),
           "method": "CUDA events per run, L2 flushed (2x L2 write) before each, 5 warm-ups, median of 50"}
    for name in names:
        d = os.path.join(a.problems, name)
        if not os.path.isfile(os.path.join(d, "problem.toml")):
            continue
        s, p, dtype = sizes(d)
        try:
            fn, args, compilable = make(name, s, p, dtype)
        except KeyError:
            print(f"{name}: no baseline written for this problem", flush=True)
            continue
        eager = bench(fn, args, flush)
        row = {"size": s, "eager_ms": eager[0], "eager_p10": eager[1], "eager_p90": eager[2], "compile_ms": None}
        if compilable:
            modes = ["default"] + (["max-autotune-no-cudagraphs"] if name in a.max_autotune.split(",") else [])
            for mode in modes:
                try:
                    torch._dynamo.reset()
                    cfn = torch.compile(fn) if mode == "default" else torch.compile(fn, mode=mode)
                    ms = bench(cfn, args, flush, warm=3)[0]
                    row.setdefault("compile_modes", {})[mode] = ms
                    row["compile_ms"] = ms if row["compile_ms"] is None else min(row["compile_ms"], ms)
                except Exception as ex:  # report, never hide
                    row.setdefault("compile_error", {})[mode] = str(ex).splitlines()[0][:200]
        out[name] = row
        print(f"{name}: {s} eager {eager[0]:.4f} ms, compile {row.get('compile_modes', {})} ms", flush=True)
        del fn, args
        torch.cuda.empty_cache()
        save(a.out, out, kept)  # after every problem: a run cut short keeps what it measured


def save(path, out, kept):
    if not path:
        return
    merged = dict(kept)  # problems measured by an earlier run, unless measured again now
    merged.update(out)
    with open(path + ".tmp", "w") as f:
        json.dump(merged, f, indent=1)
    os.replace(path + ".tmp", path)



if __name__ == "__main__":
    main()
