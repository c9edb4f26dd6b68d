#!/usr/bin/env python3
"""A rendered kevolve CUDA kernel side by side with eager PyTorch and torch.compile, in one process, timed the
same way (tools/torch_baselines.py's bench: CUDA events around each run, the L2 flushed before each by a write
of twice its size, warm-up first, median of the runs), in interleaved rounds so that a drift of the machine
falls on every contender alike.

The kernel is a kernel-only candidate (`// @kevolve kernel|grid|block|smem` lines, one `extern "C"
__global__` function taking kv_cuda_args by value), built here with nvcc into a cubin and launched through
the driver API on torch's stream. Its inputs are the baseline's own tensors (torch_baselines.make), so the
problem's inputs must be exactly the baseline function's arguments, in order; every kernel's output is
checked against eager with the problem's tolerance before it is timed.

--show-inductor prints the kernel configuration Inductor's autotuning chose for each compile mode (its
`*.best_config` files, read from TORCHINDUCTOR_CACHE_DIR or /tmp/torchinductor_$USER).

--out-offset BYTES places the kernel's output that many bytes into a larger buffer (the placement of an
output relative to its input can change the DRAM's efficiency; this measures it).

Usage: tools/kernel_vs_torch.py --problem rmsnorm_fwd [--problems problems/core] --kernel A.cu [--kernel B.cu]
       [--modes eager,default,max-autotune] [--rounds 3] [--reps 50] [--out-offset 0,4096] [--show-inductor]
Prints one line per contender per round, then the median over rounds of each and its ratio to eager.
Needs a CUDA device, torch and nvcc (CUDA_HOME or /usr/local/cuda).
"""
import argparse, ctypes, getpass, glob, json, os, re, statistics, subprocess, sys, tempfile, tomllib

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_baselines as tb  # noqa: E402

MAX_DIMS, MAX_TENSORS, MAX_PARAMS = 8, 8, 8
DTYPES = {torch.float32: 0, torch.float64: 1, torch.int32: 2, torch.int64: 3, torch.bfloat16: 4, torch.float16: 5}


class KvTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("shape", ctypes.c_int64 * MAX_DIMS), ("strides", ctypes.c_int64 * MAX_DIMS)]


class KvCudaArgs(ctypes.Structure):  # backends/kevolve_kernel.h, kv_cuda_args
    _fields_ = [("inputs", KvTensor * MAX_TENSORS), ("outputs", KvTensor * MAX_TENSORS),
                ("params", ctypes.c_double * MAX_PARAMS), ("n_inputs", ctypes.c_int32),
                ("n_outputs", ctypes.c_int32), ("n_params", ctypes.c_int32)]


def describe(t, slot):
    slot.data = t.data_ptr()
    slot.dtype = DTYPES[t.dtype]
    slot.ndim = t.dim()
    for d in range(t.dim()):
        slot.shape[d] = t.shape[d]
        slot.strides[d] = t.stride(d)


def launch_expr(expr, symbols):
    """Evaluates a `@kevolve grid/block/smem` expression: + - * / ( ), cdiv, min, max over the shape symbols."""
    env = dict(symbols, cdiv=lambda a, b: -(-a // b), min=min, max=max)
    if not re.fullmatch(r"[\w\s+\-*/(),]*", expr):
        raise ValueError(f"unsupported launch expression: {expr}")
    return int(eval(expr.replace("/", "//"), {"__builtins__": {}}, env))


class Kernel:
    """A kernel-only candidate built with nvcc and loaded through the driver API in torch's context."""

    def __init__(self, path, arch):
        src = open(path).read()
        self.name = os.path.basename(path)
        self.launch = dict(re.findall(r"^//\s*@kevolve\s+(\w+)\s+(.+?)\s*$", src, re.M))
        if "kernel" not in self.launch:
            sys.exit(f"kernel_vs_torch: {path} has no `// @kevolve kernel NAME` line (not a kernel-only candidate)")
        nvcc = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")
        inc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "backends")
        cubin = tempfile.NamedTemporaryFile(suffix=".cubin", delete=False).name
        r = subprocess.run([nvcc, "-cubin", f"-arch=sm_{arch}", "-O3", "-I", inc, "-o", cubin, "-x", "cu", path],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"kernel_vs_torch: nvcc failed on {path}:\n{r.stderr[-2000:]}")
        self.cu = ctypes.CDLL("libcuda.so.1")
        self.mod, self.fn = ctypes.c_void_p(), ctypes.c_void_p()
        self.check(self.cu.cuModuleLoad(ctypes.byref(self.mod), cubin.encode()), "cuModuleLoad")
        self.check(self.cu.cuModuleGetFunction(ctypes.byref(self.fn), self.mod, self.launch["kernel"].encode()),
                   "cuModuleGetFunction")
        os.unlink(cubin)

    def check(self, rc, what):
        if rc != 0:
            sys.exit(f"kernel_vs_torch: {what} failed for {self.name} (CUresult {rc})")

    def bind(self, inputs, outputs, params, symbols):
        """Fixes the arguments and the launch; returns a callable that launches on torch's current stream."""
        args = KvCudaArgs()
        for i, t in enumerate(inputs):
            describe(t, args.inputs[i])
        for i, t in enumerate(outputs):
            describe(t, args.outputs[i])
        for i, p in enumerate(params):
            args.params[i] = p
        args.n_inputs, args.n_outputs, args.n_params = len(inputs), len(outputs), len(params)
        dims = [launch_expr(self.launch.get(k, "1"), symbols) for k in ("grid", "grid_y", "grid_z",
                                                                         "block", "block_y", "block_z")]
        smem = launch_expr(self.launch.get("smem", "0"), symbols)
        if smem > 48 * 1024:  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            self.check(self.cu.cuFuncSetAttribute(self.fn, 8, smem), "cuFuncSetAttribute")
        holder = (ctypes.c_void_p * 1)(ctypes.addressof(args))

        def run(keep=args):  # keep: the argument block outlives every launch that points at it
            stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
            self.check(self.cu.cuLaunchKernel(self.fn, *[ctypes.c_uint(d) for d in dims], ctypes.c_uint(smem),
                                              stream, holder, None), "cuLaunchKernel")
        return run


def inductor_choices(seen):
    """The autotuning choices (`*.best_config` files) written since `seen` (a set of paths, updated)."""
    root = os.environ.get("TORCHINDUCTOR_CACHE_DIR") or os.path.join(tempfile.gettempdir(),
                                                                      f"torchinductor_{getpass.getuser()}")
    out = []
    for path in sorted(glob.glob(os.path.join(root, "**", "*.best_config"), recursive=True)):
        if path in seen:
            continue
        seen.add(path)
        try:
            with open(path) as f:
                cfg = json.load(f)
        except (OSError, ValueError) as e:
            out.append(f"{path}: unreadable ({e})")
            continue
        kernel = os.path.basename(path).split(".")[0]
        try:  # the kernel's own name, from the generated source beside its choice
            with open(os.path.splitext(path)[0] + ".py") as f:
                m = re.search(r"^def (triton_\w+)\(", f.read(), re.M)
            kernel = m.group(1) if m else kernel
        except OSError:
            pass
        keep = {k: v for k, v in cfg.items() if k not in ("configs_hash", "triton_cache_hash")}
        out.append(f"{kernel}: {keep}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problem", required=True)
    ap.add_argument("--problems", default="problems/core")
    ap.add_argument("--kernel", action="append", default=[], help="a rendered kernel-only candidate (repeatable)")
    ap.add_argument("--modes", default="eager,default,max-autotune")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--out-offset", default="0", help="byte offsets of the kernel's output in a larger buffer")
    ap.add_argument("--show-inductor", action="store_true", help="print the configurations Inductor chose")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("kernel_vs_torch: no CUDA device")
    torch.manual_seed(0)
    d = os.path.join(a.problems, a.problem)
    with open(os.path.join(d, "problem.toml"), "rb") as f:
        spec = tomllib.load(f)
    s, p, dtype = tb.sizes(d)
    fn, args, compilable = tb.make(a.problem, s, p, dtype)
    if not compilable:
        sys.exit(f"kernel_vs_torch: the baseline of {a.problem} is not a function of the problem's inputs")
    symbols = dict(s, SMS=torch.cuda.get_device_properties(0).multi_processor_count)
    for inp, t in zip(spec["inputs"], args):
        want = [symbols[x] if isinstance(x, str) else x for x in inp["shape"]]
        if list(t.shape) != want:
            sys.exit(f"kernel_vs_torch: input {inp['name']} of {a.problem}: the baseline passes shape "
                     f"{list(t.shape)}, the problem declares {want}")
    ref = fn(*args)
    refs = list(ref) if isinstance(ref, (tuple, list)) else [ref]
    tol = spec.get("tolerance", {}).get(str(refs[0].dtype).replace("torch.", ""), {})
    params = [q["value"] for q in spec.get("params", [])]
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(max(2 * l2, 64 << 20), dtype=torch.uint8, device="cuda")
    major, minor = torch.cuda.get_device_capability(0)

    contenders = {}
    seen = set()
    if a.show_inductor:
        inductor_choices(seen)  # choices from earlier runs are not this run's
    for mode in a.modes.split(","):
        if mode == "eager":
            contenders["eager"] = lambda: fn(*args)
        else:
            cfn = torch.compile(fn) if mode == "default" else torch.compile(fn, mode=f"{mode}-no-cudagraphs")
            cfn(*args)  # compile (and tune) before any timing
            if a.show_inductor:
                for line in inductor_choices(seen) or ["no autotuning choice written (a cached one was reused?)"]:
                    print(f"compile {mode}: {line}", flush=True)
            contenders[f"compile {mode}"] = (lambda c: lambda: c(*args))(cfn)
    buffers = []  # the kernels' outputs: their argument blocks hold only the addresses
    for path in a.kernel:
        k = Kernel(path, f"{major}{minor}")
        for off in (int(x) for x in a.out_offset.split(",")):
            outs = []
            for r in refs:
                buf = torch.empty(r.numel() * r.element_size() + off, dtype=torch.uint8, device="cuda")
                outs.append(buf[off:].view(r.dtype).view(r.shape))
                buffers.append(buf)
            run = k.bind(list(args), outs, params, symbols)
            run()
            torch.cuda.synchronize()
            for r, o in zip(refs, outs):
                if not torch.allclose(o.float(), r.float(), rtol=tol.get("rtol", 0), atol=tol.get("atol", 0)):
                    sys.exit(f"kernel_vs_torch: {k.name} (output offset {off}) disagrees with eager: "
                             f"max abs diff {(o.float() - r.float()).abs().max().item():g}")
            contenders[f"{k.name} +{off}"] = run
    meds = {name: [] for name in contenders}
    for rnd in range(a.rounds):
        for name, c in contenders.items():
            m, p10, p90 = tb.bench(c, (), flush, reps=a.reps)
            meds[name].append(m)
            print(f"round {rnd + 1}: {name}: {m:.4f} ms (p10 {p10:.4f}, p90 {p90:.4f})", flush=True)
    base = statistics.median(meds["eager"]) if "eager" in meds else None
    print(f"== {a.problem} {s}: median over {a.rounds} rounds of the median of {a.reps} runs")
    for name, ms in meds.items():
        m = statistics.median(ms)
        print(f"{name}: {m:.4f} ms (rounds {min(ms):.4f}-{max(ms):.4f})"
              + (f", {base / m:.3f}x eager" if base else ""))


if __name__ == "__main__":
    main()
