"""The roofline of a KernelBench-format problem, measured by the trusted evaluator for its reference baseline:
the bytes one call must move (its inputs and outputs), its FLOPs (matmuls, convolutions and the other ops
PyTorch's flop counter or profiler knows, counted over one call of the reference model) and the device's measured matmul
rate for the problem's dtype. With the copy bandwidth the evaluator measured beside its timing, they give the
two floors no kernel can beat: bytes / bandwidth and FLOPs / peak rate.
"""
import time

import torch

_PEAKS = {}  # (device, dtype, threads) -> GFLOP/s, measured once per evaluator process


def count_flops(model, inputs):
    """FLOPs of one call of `model` on `inputs` as torch.utils.flop_counter counts them (torch >= 2.1), else as
    the profiler's with_flops estimates them (matmuls and convolutions, from their shapes); None when neither
    can count (the problem then has no compute floor)."""
    try:
        from torch.utils.flop_counter import FlopCounterMode
        with torch.no_grad(), FlopCounterMode(display=False) as fc:
            model(*inputs)
        return int(fc.get_total_flops())
    except ImportError:
        pass
    except Exception:
        return None
    try:
        from torch.profiler import ProfilerActivity, profile
        with torch.no_grad(), profile(activities=[ProfilerActivity.CPU], with_flops=True) as prof:
            model(*inputs)
        return int(sum(e.flops or 0 for e in prof.key_averages()))
    except Exception:
        return None


def problem_dtype(inputs):
    """The dtype the problem computes in: its first floating-point input's (float32 when it has none)."""
    for x in inputs:
        if isinstance(x, torch.Tensor) and x.is_floating_point():
            return x.dtype
    return torch.float32


def peak_gflops(dev, dtype, threads):
    """The best of five timed square matmuls in `dtype` on `dev` (8192 on a GPU, 1024 on the CPU with the
    evaluation's threads), in GFLOP/s; measured once per process and kept."""
    key = (str(dev), str(dtype), threads)
    if key in _PEAKS:
        return _PEAKS[key]
    n = 8192 if dev.type == "cuda" else 1024
    if dtype not in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        dtype = torch.float32
    a = torch.randn(n, n, device=dev).to(dtype)
    b = torch.randn(n, n, device=dev).to(dtype)
    best = float("inf")
    for i in range(6):
        if dev.type == "cuda":
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            torch.matmul(a, b)
            e.record()
            e.synchronize()
            secs = s.elapsed_time(e) / 1e3
        else:
            t0 = time.perf_counter()
            torch.matmul(a, b)
            secs = time.perf_counter() - t0
        if i > 0:  # the first call warms up (library selection, caches)
            best = min(best, secs)
    _PEAKS[key] = 2.0 * n ** 3 / best / 1e9
    return _PEAKS[key]


def measure(model, inputs, dev, bytes_moved, traffic_gbps, threads):
    """The roofline record the evaluator reports: bytes, flops (0 when not counted), the traffic rate the copy
    measurement implies (bytes read + written per second), the matmul peak, and the floors in ms."""
    flops = count_flops(model, inputs) or 0
    dtype = problem_dtype(inputs)
    peak = peak_gflops(dev, dtype, threads) if flops > 0 else 0.0
    memory_ms = bytes_moved / (traffic_gbps * 1e9) * 1e3 if traffic_gbps > 0 else 0.0
    compute_ms = flops / (peak * 1e9) * 1e3 if peak > 0 else 0.0
    return {"bytes": bytes_moved, "flops": flops, "dtype": str(dtype).replace("torch.", ""), "traffic_gbps": traffic_gbps,
            "peak_gflops": peak, "memory_floor_ms": memory_ms, "compute_floor_ms": compute_ms}
