# ---- kevolve kernel glue (backends/python/kevolve_kernel_glue.py, inlined into generated ModelNew files) ----
# Runs a kevolve kernel (the kevolve_kernel.h ABI) from a ModelNew, with no torch binding to compile.
# Why not load_inline: a binding that includes torch/extension.h costs 40-60 s of compilation per candidate
# on two cores, and the kernels need nothing from torch. So:
#  - CPU: the C++ kernel is built into a plain shared library by torch.utils.cpp_extension.load (the
#    machinery load_inline uses, with the flags kevolve's CPU backend uses; about a second without torch
#    headers) and called through ctypes with the tensors' data pointers, exactly as kevolve's runner calls it.
#  - CUDA: the kernel-only source is compiled in this process by NVRTC (through ctypes: torch's nvidia
#    packages or the CUDA toolkit) to a cubin for the device's own architecture, loaded with the driver API
#    and launched with cuLaunchKernel on torch's current stream, with the grid, block and shared memory its
#    `// @kevolve` lines give for the actual shapes, as kevolve's CUDA evaluator launches it.
# No try/except, threads, streams of its own or lower precision: the evaluator's static checks apply to this
# code like to any candidate's.
import ast
import ctypes
import ctypes.util
import glob
import hashlib
import math
import os
import shutil
import sys
import tempfile

import torch

_KV_MAX_DIMS = 8
_KV_MAX_TENSORS = 8
_KV_MAX_PARAMS = 8
# kv_dtype codes (kevolve_kernel.h); bool and uint8 (one byte per element) are passed to generated family
# kernels only, which read them as unsigned char
_KV_DTYPES = {torch.float32: 0, torch.float64: 1, torch.int32: 2, torch.int64: 3, torch.bool: 6, torch.uint8: 7}


class _KvTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("shape", ctypes.c_int64 * _KV_MAX_DIMS), ("strides", ctypes.c_int64 * _KV_MAX_DIMS)]


class _KvArgs(ctypes.Structure):
    _fields_ = [("inputs", ctypes.POINTER(_KvTensor)), ("n_inputs", ctypes.c_int32),
                ("outputs", ctypes.POINTER(_KvTensor)), ("n_outputs", ctypes.c_int32),
                ("params", ctypes.POINTER(ctypes.c_double)), ("n_params", ctypes.c_int32),
                ("stream", ctypes.c_void_p)]


class _KvCudaArgs(ctypes.Structure):  # passed BY VALUE to a kernel-only CUDA kernel
    _fields_ = [("inputs", _KvTensor * _KV_MAX_TENSORS), ("outputs", _KvTensor * _KV_MAX_TENSORS),
                ("params", ctypes.c_double * _KV_MAX_PARAMS), ("n_inputs", ctypes.c_int32),
                ("n_outputs", ctypes.c_int32), ("n_params", ctypes.c_int32)]


def _kv_describe(t):
    if t.dtype not in _KV_DTYPES:
        raise TypeError("kevolve kernel: tensors of dtype %s are not supported here" % t.dtype)
    d = _KvTensor()
    d.data = t.data_ptr()
    d.dtype = _KV_DTYPES[t.dtype]
    d.ndim = t.dim()
    for i in range(t.dim()):
        d.shape[i] = t.size(i)
        d.strides[i] = t.stride(i)
    return d


# ---- launch lines: `// @kevolve <key> <expr>`, evaluated as kevolve's evaluator does (runtime/core/expr.cpp) ----

_KV_LAUNCH_KEYS = ("kernel", "grid", "grid_y", "grid_z", "block", "block_y", "block_z", "smem")


def _kv_launch_spec(source):
    spec = {"kernel": "", "grid": "1", "grid_y": "1", "grid_z": "1", "block": "1", "block_y": "1", "block_z": "1", "smem": "0"}
    for n, line in enumerate(source.splitlines(), 1):
        c = line.find("//")
        body = line[c + 2:].strip() if c >= 0 else ""
        if not body.startswith("@kevolve"):
            continue
        parts = body[len("@kevolve"):].split(None, 1)
        if len(parts) != 2 or parts[0] not in _KV_LAUNCH_KEYS:
            raise ValueError("kevolve kernel: line %d: expected '// @kevolve <%s> <value>'" % (n, "|".join(_KV_LAUNCH_KEYS)))
        spec[parts[0]] = parts[1].strip()
    if not spec["kernel"]:
        raise ValueError("kevolve kernel: no '// @kevolve kernel <name>' line in the CUDA source")
    return spec


def _kv_expr(text, symbols):
    """+ - * / in double precision, cdiv (rounds up), min, max over shape symbols; rounded down at the end."""
    def ev(n):
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool):
            return float(n.value)
        if isinstance(n, ast.Name) and n.id in symbols:
            return float(symbols[n.id])
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand)
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            a, b = ev(n.left), ev(n.right)
            if isinstance(n.op, ast.Div) and b == 0:
                raise ValueError("kevolve kernel: launch expression '%s': division by zero" % text)
            return a + b if isinstance(n.op, ast.Add) else a - b if isinstance(n.op, ast.Sub) else a * b if isinstance(n.op, ast.Mult) else a / b
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("cdiv", "min", "max") and len(n.args) == 2 and not n.keywords:
            a, b = ev(n.args[0]), ev(n.args[1])
            if n.func.id == "cdiv":
                if b == 0:
                    raise ValueError("kevolve kernel: launch expression '%s': division by zero" % text)
                return float(math.ceil(a / b))
            return min(a, b) if n.func.id == "min" else max(a, b)
        raise ValueError("kevolve kernel: launch expression '%s': unsupported or unknown '%s'" % (text, ast.dump(n)[:60]))
    return int(math.floor(ev(ast.parse(text.strip(), mode="eval"))))


def _kv_launch_dims(spec, symbols):
    """(grid, block, smem) for these shape symbols (and SMS), checked against the limits the evaluator uses."""
    grid = tuple(_kv_expr(spec[k], symbols) for k in ("grid", "grid_y", "grid_z"))
    block = tuple(_kv_expr(spec[k], symbols) for k in ("block", "block_y", "block_z"))
    smem = _kv_expr(spec["smem"], symbols)
    if min(grid) < 1 or grid[0] > 2147483647 or max(grid[1:]) > 65535:
        raise ValueError("kevolve kernel: grid %s out of range" % (grid,))
    if min(block) < 1 or block[0] * block[1] * block[2] > 1024:
        raise ValueError("kevolve kernel: block %s out of range" % (block,))
    if smem < 0 or smem > 227 * 1024:
        raise ValueError("kevolve kernel: %d bytes of shared memory" % smem)
    return grid, block, smem


# ---- CPU ------------------------------------------------------------------------------------------------

class _KvCpuKernel:
    def __init__(self, source, header, entry):
        from torch.utils.cpp_extension import load as _kv_load_extension  # here: it needs setuptools, CUDA kernels do not
        work = tempfile.mkdtemp(prefix="kevolve-kernel-")
        name = "kevolve_kernel_" + hashlib.sha256((source + header).encode()).hexdigest()[:16]
        with open(os.path.join(work, "kevolve_kernel.h"), "w") as f:
            f.write(header)
        with open(os.path.join(work, "kernel.cpp"), "w") as f:
            f.write(source)
        _kv_load_extension(name=name, sources=[os.path.join(work, "kernel.cpp")],
                           extra_cflags=["-O3", "-march=native", "-fopenmp", "-std=c++17"], extra_ldflags=["-fopenmp"],
                           extra_include_paths=[work], build_directory=work, is_python_module=False, verbose=False)
        self.lib = ctypes.CDLL(os.path.join(work, name + ".so"))
        shutil.rmtree(work, ignore_errors=True)  # the library stays mapped
        self.fn = getattr(self.lib, entry)
        self.fn.argtypes = [ctypes.POINTER(_KvArgs)]
        self.fn.restype = ctypes.c_int

    def __call__(self, inputs, outputs, params, symbols):
        ins = (_KvTensor * len(inputs))(*[_kv_describe(t) for t in inputs])
        outs = (_KvTensor * len(outputs))(*[_kv_describe(t) for t in outputs])
        ps = (ctypes.c_double * max(1, len(params)))(*params)
        a = _KvArgs(ins, len(inputs), outs, len(outputs), ps, len(params), None)
        rc = self.fn(ctypes.byref(a))
        if rc != 0:
            raise RuntimeError("kevolve kernel: the kernel returned %d" % rc)


# ---- CUDA -----------------------------------------------------------------------------------------------

def _kv_nvrtc_candidates():
    """Where libnvrtc may be: $KEVOLVE_NVRTC, torch's nvidia wheels, torch/lib, the CUDA toolkit."""
    names = [os.environ.get("KEVOLVE_NVRTC", "")]
    roots = [os.path.dirname(os.path.dirname(torch.__file__))] + [p for p in sys.path if p]
    for root in roots:
        for pattern in ("nvidia/*/lib/libnvrtc.so*", "nvidia/*/*/lib/libnvrtc.so*"):
            names += sorted(glob.glob(os.path.join(root, pattern)), reverse=True)
    names += sorted(glob.glob(os.path.join(os.path.dirname(torch.__file__), "lib", "libnvrtc*.so*")), reverse=True)
    for home in (os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""), "/usr/local/cuda"):
        if home:
            names += sorted(glob.glob(os.path.join(home, "lib64", "libnvrtc.so*")))
    return [n for n in names if n and os.path.exists(n) and "builtins" not in os.path.basename(n)]


def _kv_nvrtc():
    found = _kv_nvrtc_candidates()
    if not found and ctypes.util.find_library("nvrtc"):
        found = [ctypes.util.find_library("nvrtc")]
    if not found:
        raise RuntimeError("kevolve kernel: NVRTC not found (torch's nvidia packages, torch/lib, $CUDA_HOME/lib64, "
                           "/usr/local/cuda/lib64); set KEVOLVE_NVRTC to libnvrtc.so")
    lib = ctypes.CDLL(found[0])
    lib.nvrtcGetErrorString.restype = ctypes.c_char_p
    lib.nvrtcCreateProgram.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int,
                                       ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p)]
    lib.nvrtcCompileProgram.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    for f in ("nvrtcGetProgramLogSize", "nvrtcGetCUBINSize"):
        getattr(lib, f).argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
    for f in ("nvrtcGetProgramLog", "nvrtcGetCUBIN"):
        getattr(lib, f).argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.nvrtcDestroyProgram.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    return lib, found[0]


def _kv_nvrtc_compile(source, header, arch):
    """The cubin of `source` for `arch` (sm_XY), as kevolve-nvrtc builds it; raises with NVRTC's log."""
    lib, path = _kv_nvrtc()
    prog = ctypes.c_void_p()
    headers = (ctypes.c_char_p * 1)(header.encode())
    names = (ctypes.c_char_p * 1)(b"kevolve_kernel.h")
    rc = lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"kernel.cu", 1, headers, names)
    if rc != 0:
        raise RuntimeError("kevolve kernel: nvrtcCreateProgram: %s" % lib.nvrtcGetErrorString(rc).decode())
    opts = ["--gpu-architecture=" + arch, "--std=c++17"]
    for home in (os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""), "/usr/local/cuda"):
        if home and os.path.isdir(os.path.join(home, "include")):
            opts.append("-I" + os.path.join(home, "include"))
    argv = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    rc = lib.nvrtcCompileProgram(prog, len(opts), argv)
    size = ctypes.c_size_t(0)
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(max(1, size.value))
    lib.nvrtcGetProgramLog(prog, log)
    if rc != 0:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
        raise RuntimeError("kevolve kernel: NVRTC (%s, %s) failed: %s\n%s" % (path, arch, lib.nvrtcGetErrorString(rc).decode(),
                                                                         log.value.decode(errors="replace")))
    lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    cubin = ctypes.create_string_buffer(max(1, size.value))
    rc = lib.nvrtcGetCUBIN(prog, cubin)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    if rc != 0 or size.value == 0:
        raise RuntimeError("kevolve kernel: NVRTC (%s) produced no cubin for %s" % (path, arch))
    return cubin.raw[:size.value]


def _kv_driver():
    lib = ctypes.CDLL("libcuda.so.1")  # loaded already by torch's CUDA runtime
    vp, u = ctypes.c_void_p, ctypes.c_uint
    lib.cuInit.argtypes = [u]
    lib.cuGetErrorString.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    lib.cuDeviceGet.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    lib.cuDevicePrimaryCtxRetain.argtypes = [ctypes.POINTER(vp), ctypes.c_int]
    lib.cuCtxSetCurrent.argtypes = [vp]
    lib.cuModuleLoadData.argtypes = [ctypes.POINTER(vp), ctypes.c_char_p]
    lib.cuModuleGetFunction.argtypes = [ctypes.POINTER(vp), vp, ctypes.c_char_p]
    lib.cuFuncSetAttribute.argtypes = [vp, ctypes.c_int, ctypes.c_int]
    lib.cuLaunchKernel.argtypes = [vp, u, u, u, u, u, u, u, vp, ctypes.POINTER(vp), ctypes.POINTER(vp)]
    return lib


def _kv_cu_check(drv, rc, what):
    if rc != 0:
        msg = ctypes.c_char_p()
        drv.cuGetErrorString(rc, ctypes.byref(msg))
        raise RuntimeError("kevolve kernel: %s: CUDA error %d (%s)" % (what, rc, msg.value.decode() if msg.value else "?"))


class _KvCudaKernel:
    _CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8

    def __init__(self, source, header, entry):
        self.launch = _kv_launch_spec(source)
        major, minor = torch.cuda.get_device_capability()
        self.cubin = _kv_nvrtc_compile(source, header, "sm_%d%d" % (major, minor))
        self.drv = None
        self.loaded = {}  # device index -> (primary context, function, SMS)
        self.plans = {}   # (device, tensor layouts, params) -> a filled argument block and its launch: built once per layout

    def _function(self, index):
        if index not in self.loaded:
            drv = self.drv = self.drv or _kv_driver()
            _kv_cu_check(drv, drv.cuInit(0), "cuInit")
            handle, ctx, module, fn = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
            _kv_cu_check(drv, drv.cuDeviceGet(ctypes.byref(handle), index), "cuDeviceGet")
            # torch's CUDA runtime works in the device's primary context: the kernel is loaded and launched there
            _kv_cu_check(drv, drv.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), handle.value), "cuDevicePrimaryCtxRetain")
            _kv_cu_check(drv, drv.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
            _kv_cu_check(drv, drv.cuModuleLoadData(ctypes.byref(module), self.cubin), "cuModuleLoadData")
            _kv_cu_check(drv, drv.cuModuleGetFunction(ctypes.byref(fn), module, self.launch["kernel"].encode()),
                         "cuModuleGetFunction(%s)" % self.launch["kernel"])
            self.loaded[index] = (ctx, fn, torch.cuda.get_device_properties(index).multi_processor_count)
        return self.loaded[index]

    def __call__(self, inputs, outputs, params, symbols):
        if len(inputs) > _KV_MAX_TENSORS or len(outputs) > _KV_MAX_TENSORS or len(params) > _KV_MAX_PARAMS:
            raise ValueError("kevolve kernel: more tensors or parameters than kv_cuda_args holds")
        device = inputs[0].device
        index = device.index if device.index is not None else torch.cuda.current_device()
        # Per call only the data pointers change: the argument block (shapes, strides, parameters) and the
        # launch dimensions are built once per layout and reused (a forward costs microseconds on the GPU).
        key = (index, tuple((t.dtype, t.shape, t.stride()) for t in inputs), tuple((t.dtype, t.shape, t.stride()) for t in outputs),
               tuple(params), tuple(sorted(symbols.items())))
        plan = self.plans.get(key)
        if plan is None:
            ctx, fn, sms = self._function(index)
            grid, block, smem = _kv_launch_dims(self.launch, dict(symbols, SMS=sms))
            a = _KvCudaArgs()
            for i, t in enumerate(inputs):
                a.inputs[i] = _kv_describe(t)
            for i, t in enumerate(outputs):
                a.outputs[i] = _kv_describe(t)
            for i, p in enumerate(params):
                a.params[i] = p
            a.n_inputs, a.n_outputs, a.n_params = len(inputs), len(outputs), len(params)
            kernel_params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.pointer(a), ctypes.c_void_p))
            plan = self.plans[key] = (ctx, fn, a, kernel_params, grid, block, smem)
        ctx, fn, a, kernel_params, grid, block, smem = plan
        for i, t in enumerate(inputs):
            a.inputs[i].data = t.data_ptr()
        for i, t in enumerate(outputs):
            a.outputs[i].data = t.data_ptr()
        drv = self.drv
        _kv_cu_check(drv, drv.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        if smem > 48 * 1024:  # a property of the function, not of this layout: set for every such launch
            _kv_cu_check(drv, drv.cuFuncSetAttribute(fn, self._CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem), "cuFuncSetAttribute")
        queue = torch.cuda.current_stream(device).cuda_stream  # the caller's stream, as any PyTorch op uses
        # cuLaunchKernel copies the argument block at the call: reusing `a` for the next call is safe.
        _kv_cu_check(drv, drv.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], smem,
                                             ctypes.c_void_p(queue), kernel_params, None), "cuLaunchKernel(%s)" % self.launch["kernel"])


def _kv_build(backend, source, header, entry):
    return _KvCudaKernel(source, header, entry) if backend == "cuda" else _KvCpuKernel(source, header, entry)


# ---- from the module's forward to the kernel's arguments ---------------------------------------------------

def _kv_attr(model, path):
    obj = model
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _kv_call(model, kernel, args, inputs, outputs, params, like):
    """Calls `kernel` for one forward. inputs: per kernel input (source, key, shape symbols) with source "arg"
    (a forward argument) or "state" (a parameter or buffer of the module); each tensor is made contiguous and
    seen with as many dimensions as the kernel's spec gives it (leading dimensions folded), which binds the
    symbols. outputs: per kernel output, its shape symbols. params: per scalar ("attr", path) or ("value", x).
    The first output comes back with the shape of forward argument `like`."""
    tensors, symbols = [], {}
    for source, key, shape in inputs:
        t = args[key] if source == "arg" else _kv_attr(model, key)
        if not isinstance(t, torch.Tensor) or t.dtype != torch.float32:
            raise TypeError("kevolve kernel: %s %s must be a float32 tensor" % (source, key))
        if t.dim() < len(shape):
            raise ValueError("kevolve kernel: %s %s has %d dimensions, the kernel wants %d" % (source, key, t.dim(), len(shape)))
        t = t.contiguous()
        t = t.reshape([-1] + list(t.shape[t.dim() - len(shape) + 1:])) if len(shape) else t
        for name, n in zip(shape, t.shape):
            if symbols.setdefault(name, n) != n:
                raise ValueError("kevolve kernel: %s %s: %s = %d, elsewhere %d" % (source, key, name, n, symbols[name]))
        tensors.append(t)
    out = [torch.empty([symbols[s] for s in shape], dtype=torch.float32, device=tensors[0].device) for shape in outputs]
    values = [float(_kv_attr(model, key)) if source == "attr" else float(key) for source, key in params]
    kernel(tensors, out, values, symbols)
    return out[0].view(args[like].shape)
