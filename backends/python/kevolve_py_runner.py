#!/usr/bin/env python3
"""kevolve's Python runner: runs ONE candidate (ModelNew) for kevolve_py_eval.py, in a process of its own.

This is the untrusted side of the trust split: the candidate's code runs here, so nothing this process says
is believed. It receives the constructor arguments and the reference's weights (a torch.save file the
evaluator wrote: the trusted-to-untrusted direction, read with weights_only where torch has it), then maps
the evaluator's buffers: the input sets and, per set, one output slot per output, all in memory the evaluator
allocated and shares (CPU: a memfd opened through /proc; CUDA: one device allocation opened by its IPC
handle). The evaluator writes the inputs there; the runner writes every call's outputs into the slots of that
call's set, after checking that each is a torch.Tensor of the slot's dtype, shape and device (else it answers
`rejected`, reason `outputs`). Answers are JSON lines only, each echoing its request's nonce; no object of the
candidate's is ever serialised. The runner never sees the reference outputs and is not told which calls will be
checked: the evaluator chooses them after the answer, and keeps this process stopped (SIGSTOP) in between.

Commands (JSON lines on stdin; answers on the original stdout, the candidate's own prints go to stderr):
  open {candidate, work}       a standby runner (started with "-") learns its one candidate
  load {model}                 imports the candidate, builds ModelNew under the evaluator's seed with the
                               reference's weights wherever names and shapes match
  bind {memory, layout, set_offsets}   maps the shared buffers
  run {set, values?}           one call on input set `set`; outputs into its slots
  time {sets, values?}         one timed call per listed set, in order (timed_calls); answers {"ns": [...]}
`values` carries the non-tensor inputs of sets the evaluator refilled, as {"SET": [value or null per input]}.

The evaluator imports this module for `timed_calls` (it times the reference with the same procedure, which is
also how it knows the loop's own overhead) and for the CUDA IPC helpers; everything with side effects runs
under main().
"""
import base64
import ctypes
import gc
import importlib.util
import json
import mmap
import os
import sys
import time

_clock = time.perf_counter_ns  # bound before any candidate code runs; looked up per `time` command

import torch  # noqa: E402

# Bound before any candidate code runs, like the clock: the event and stream functions the timing calls.
_Event = torch.cuda.Event
_EventBase = getattr(torch._C, "_CudaEventBase", None)
_ev_record = getattr(_EventBase, "record", None)
_ev_elapsed = getattr(_EventBase, "elapsed_time", None)
_ev_sync = getattr(_EventBase, "synchronize", None)
_current_stream = torch.cuda.current_stream
_synchronize = torch.cuda.synchronize

ALIGN = 4096  # every tensor of the shared region starts on a page


# ---- timing: one procedure for the candidate (here) and the reference (in the evaluator) --------------------

def _elapsed_ns(b, e):
    """The time between two recorded events (waits for the end event), through the functions bound above."""
    if _ev_elapsed is not None:
        _ev_sync(e)
        return int(_ev_elapsed(b, e) * 1e6)
    e.synchronize()
    return int(b.elapsed_time(e) * 1e6)


def _record(ev):
    if _ev_record is not None:
        _ev_record(ev, _current_stream())
    else:
        ev.record()


def timed_calls(fn, sets, store, dev, flush, clock, after=None):
    """Calls fn(*inputs) once per input list of `sets`, in order, each timed alone: CUDA, by events on the
    current stream with the L2 flushed (`flush.fill_`) before the start event; CPU, by `clock` around the
    call. store(i, outputs) runs right after call i, outside its timing (on CUDA the span waits for what it
    queued, so that both sides' spans hold the same device work); after(i, outputs), if given, after that and
    outside the span. The garbage collector is off meanwhile (as timeit does). Returns (ns, spans): each call's
    time, and each call's whole span by `clock` (flush, call, store), both in ns."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _timed_calls(fn, sets, store, dev, flush, clock, after)
    finally:
        if collecting:
            gc.enable()


def _timed_calls(fn, sets, store, dev, flush, clock, after):
    ns, spans = [], []
    for i, inputs in enumerate(sets):
        s0 = clock()
        if dev.type == "cuda":
            # Everything but the call before the flush: the flush keeps the device busy (about 30 us on an H200)
            # while the start event and the call are queued, so host overhead up to that is hidden on both sides.
            b, e = _Event(enable_timing=True), _Event(enable_timing=True)
            with torch.no_grad():
                flush.fill_(1)
                _record(b)
                outs = fn(*inputs)
                _record(e)
            t = _elapsed_ns(b, e)
        else:
            t0 = clock()
            with torch.no_grad():
                outs = fn(*inputs)
            t = clock() - t0
        store(i, outs)
        if dev.type == "cuda":
            _synchronize()
        spans.append(clock() - s0)
        ns.append(t)
        if after is not None:
            after(i, outs)
    return ns, spans


# ---- the shared region ------------------------------------------------------------------------------------

def carve(region, offset, spec, dev):
    """The tensor `spec` ({dtype, shape, stride, nbytes}) describes at byte `offset` of `region` (a mmap, or
    the device address of a CUDA allocation). Each tensor gets a storage of its own, so a write into one (an
    output slot) does not bump the version counter of another (an input)."""
    dtype, n = getattr(torch, spec["dtype"]), spec["nbytes"]
    if n == 0:
        flat = torch.empty(0, dtype=dtype, device=dev)
    elif isinstance(region, int):
        flat = torch.as_tensor(_DeviceMemory(region + offset, n), device=dev).view(dtype)
    else:
        flat = torch.frombuffer(region, dtype=torch.uint8, count=n, offset=offset).view(dtype)
    return flat.as_strided(spec["shape"], spec.get("stride") or _contiguous_strides(spec["shape"]))


def _contiguous_strides(shape):
    strides, n = [], 1
    for d in reversed(shape):
        strides.append(n)
        n *= max(1, d)
    return list(reversed(strides))


class _CUipcMemHandle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * 64)]


class _DeviceMemory:
    """Device memory torch did not allocate, seen as one uint8 tensor through __cuda_array_interface__."""

    def __init__(self, ptr, size):
        self.__cuda_array_interface__ = {"shape": (size,), "typestr": "|u1", "data": (ptr, False), "version": 2, "strides": None}


_driver = None


def cuda_driver():
    """The CUDA driver library with the few entry points the shared region uses (after torch set the device
    up, so its primary context is current)."""
    global _driver
    if _driver is None:
        lib = ctypes.CDLL("libcuda.so.1")
        u64p = ctypes.POINTER(ctypes.c_uint64)
        lib.cuMemAlloc_v2.argtypes = [u64p, ctypes.c_size_t]
        lib.cuMemFree_v2.argtypes = [ctypes.c_uint64]
        lib.cuIpcGetMemHandle.argtypes = [ctypes.POINTER(_CUipcMemHandle), ctypes.c_uint64]
        lib.kv_ipc_open = getattr(lib, "cuIpcOpenMemHandle_v2", None) or lib.cuIpcOpenMemHandle
        lib.kv_ipc_open.argtypes = [u64p, _CUipcMemHandle, ctypes.c_uint]
        lib.cuGetErrorString.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        _driver = lib
    return _driver


def cuda_check(rc, what):
    if rc != 0:
        msg = ctypes.c_char_p()
        cuda_driver().cuGetErrorString(rc, ctypes.byref(msg))
        raise RuntimeError("%s: CUDA error %d (%s)" % (what, rc, msg.value.decode() if msg.value else "?"))


def cuda_exported(size, dev):
    """A device allocation of its own (cuMemAlloc, not torch's caching allocator: no other tensor of the
    evaluator can share its block, and no IPC reference counting keeps it alive after a killed runner): its
    address, its IPC handle (64 bytes) and the function that frees it."""
    torch.zeros(1, device=dev)  # torch's context for the device is current on this thread
    lib = cuda_driver()
    ptr, handle = ctypes.c_uint64(), _CUipcMemHandle()
    cuda_check(lib.cuMemAlloc_v2(ctypes.byref(ptr), size), "cuMemAlloc")
    cuda_check(lib.cuIpcGetMemHandle(ctypes.byref(handle), ptr.value), "cuIpcGetMemHandle")

    def free():
        torch.cuda.synchronize(dev)
        lib.cuMemFree_v2(ptr.value)
    return ptr.value, ctypes.string_at(ctypes.addressof(handle), 64), free


def cuda_imported(handle):
    """The address, in this process, of the evaluator's allocation with IPC handle `handle` (64 bytes)."""
    lib = cuda_driver()
    h, ptr = _CUipcMemHandle(), ctypes.c_uint64()
    ctypes.memmove(ctypes.addressof(h), handle, 64)
    cuda_check(lib.kv_ipc_open(ctypes.byref(ptr), h, 1), "cuIpcOpenMemHandle")  # 1: lazy peer access
    return ptr.value


# ---- the runner process ------------------------------------------------------------------------------------

class _Rejected(Exception):
    """The candidate's outputs do not fit the slots (not tensors, or another dtype, shape, device or count)."""


def keep_freed_memory():
    """glibc keeps what is freed instead of returning it to the system (no trimming; blocks below 32 MiB from
    the heap): a fresh runner then pays no more page faults per allocation than the long-running evaluator
    that times the reference, which calls this too."""
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(-1, (1 << 31) - 1)  # M_TRIM_THRESHOLD
        libc.mallopt(-3, 32 << 20)       # M_MMAP_THRESHOLD (its maximum)
    except (OSError, AttributeError):
        pass


def _die_with_parent():
    """Killed with its evaluator: a candidate stuck in a loop must not outlive the process that watches it."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError):
        pass


def _type_name(o):
    t = type(o)
    return "%s.%s" % (t.__module__, t.__qualname__) if t.__module__ not in ("builtins", None) else t.__qualname__


class _Io:
    """The mapped region: per set, its input tensors (and non-tensor values) and its output slots."""

    def __init__(self, cmd, dev):
        mem = cmd["memory"]
        if mem["kind"] == "cpu":
            fd = os.open(mem["path"], os.O_RDWR)
            try:  # populated now: no page fault of this mapping lands in a timed pass
                region = mmap.mmap(fd, mem["size"], flags=mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0))
            finally:
                os.close(fd)
        else:
            torch.zeros(1, device=dev)  # torch's context for the device is current on this thread
            region = cuda_imported(base64.b64decode(mem["handle"]))
        layout = cmd["layout"]
        self.inputs, self.slots, self.values = [], [], []
        for off in cmd["set_offsets"]:
            self.inputs.append([carve(region, off + s["offset"], s, dev) if "value" not in s else None for s in layout["inputs"]])
            self.slots.append([carve(region, off + s["offset"], s, dev) for s in layout["outputs"]])
            self.values.append([s.get("value") for s in layout["inputs"]])

    def update(self, values):
        for k, vals in (values or {}).items():
            self.values[int(k)] = vals

    def args(self, k):
        return [t if t is not None else v for t, v in zip(self.inputs[k], self.values[k])]

    def store(self, k, outs):
        """Copies one call's outputs into set k's slots, after checking they fit them."""
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        slots = self.slots[k]
        if len(outs) != len(slots):
            raise _Rejected("ModelNew returned %d outputs, the reference returns %d" % (len(outs), len(slots)))
        for i, (o, s) in enumerate(zip(outs, slots)):
            if not isinstance(o, torch.Tensor):
                raise _Rejected("output %d is a %s, not a torch.Tensor" % (i, _type_name(o)))
            if o.dtype != s.dtype or tuple(o.shape) != tuple(s.shape) or o.device != s.device:
                raise _Rejected("output %d is a %s tensor of shape %s on %s; expected %s, shape %s, on %s" % (
                    i, o.dtype, tuple(o.shape), o.device, s.dtype, tuple(s.shape), s.device))
            s.copy_(o)


def main():
    """kevolve_py_runner.py CANDIDATE|- DEVICE THREADS: answers the evaluator's commands until its stdin closes."""
    path, device, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    _die_with_parent()
    keep_freed_memory()
    if str(os.getppid()) != os.environ.get("KEVOLVE_RUNNER_PARENT", str(os.getppid())):  # its evaluator is already gone
        sys.exit(1)
    reply = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    torch.set_num_threads(threads)
    dev = torch.device(device)
    if dev.type == "cuda" and torch.cuda.is_available():
        dev = torch.device("cuda", torch.cuda.current_device())
        torch.zeros(1, device=dev)  # the device's context, before the candidate's clock starts
    model, io, flush = None, None, None
    for line in sys.stdin:
        cmd = json.loads(line)
        op, nonce = cmd.get("op"), cmd.get("nonce")

        def answer(**kw):
            kw["nonce"] = nonce
            reply.write(json.dumps(kw) + "\n")
            reply.flush()
        try:
            if op == "open":  # a standby runner learns its one candidate
                if path != "-":
                    answer(status="runtime_error", reason="exception", message="this runner already has its candidate")
                    continue
                path = cmd["candidate"]
                os.chdir(cmd["work"])
                answer(status="ok", message="")
            elif op == "load":
                spec = importlib.util.spec_from_file_location("kevolve_candidate", path)
                mod = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(mod)
                if not hasattr(mod, "ModelNew"):
                    answer(status="runtime_error", reason="load", message="the candidate defines no ModelNew")
                    continue
                try:
                    m = torch.load(cmd["model"], weights_only=True)
                except Exception:  # a torch without weights_only, or init args it refuses (torch 1.13: floats)
                    m = torch.load(cmd["model"])  # the evaluator's file, read in this (untrusted) process only
                torch.manual_seed(m["seed"])
                model = mod.ModelNew(*m["init"]).to(dev).eval()
                mine = model.state_dict()
                same = {k: v for k, v in m["state"].items() if k in mine and mine[k].shape == v.shape}
                model.load_state_dict(same, strict=False)  # the reference's weights wherever the names match
                answer(status="ok", copied=len(same), message="")
            elif op == "bind":
                io = _Io(cmd, dev)
                answer(status="ok", message="")
            elif op == "run":
                io.update(cmd.get("values"))
                k = int(cmd["set"])
                with torch.no_grad():
                    outs = model(*io.args(k))
                io.store(k, outs)
                if dev.type == "cuda":
                    torch.cuda.synchronize()
                answer(status="ok", message="")
            elif op == "time":
                io.update(cmd.get("values"))
                ks = [int(k) for k in cmd["sets"]]
                if dev.type == "cuda" and flush is None:
                    flush = torch.empty(int(2 * torch.cuda.get_device_properties(dev).L2_cache_size), dtype=torch.uint8, device=dev)
                ns, _ = timed_calls(model, [io.args(k) for k in ks], lambda i, outs: io.store(ks[i], outs), dev, flush, _clock)
                if dev.type == "cuda":
                    torch.cuda.synchronize()
                answer(status="ok", ns=ns, message="")
            else:
                answer(status="runtime_error", reason="exception", message="unknown command %r" % op)
        except _Rejected as e:
            answer(status="rejected", reason="outputs", message=str(e))
        except Exception as e:  # the candidate's failure, reported with its type
            answer(status="runtime_error", reason="exception", message="%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))


if __name__ == "__main__":
    main()
