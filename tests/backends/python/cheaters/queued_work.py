# Cheater (GPU: queued_work), for problems/kernelbench-small/4_softmax.py (or any 2-D softmax) on a CUDA device:
# computes the right answer, and at the end of every timing pass leaves a kernel running on the GPU, for about as
# long as its own pass took, that the runner's final device synchronisation does not wait for: it runs in a CUDA
# context of its own (made through the driver API with ctypes), so it is still busy when the runner answers and is
# stopped, while the reference's next pass is timed. The end of a pass is when the runner drops the newest output
# the candidate made. It passes the static check (ctypes and the driver API, as the kernel glue uses them). Caught
# by the evaluator's idle probe: `rejected [queued_work]`. With that detector off it scores ok; on the H200 it
# gained nothing there (1.01x on a 6 ms softmax: the GPU time-slices the two contexts and the reference's CUDA
# events did not count the other context's slices), which a GPU that shares its time otherwise need not repeat.
# On the CPU it is an honest softmax.
import ctypes
import time

import torch
import torch.nn as nn

_PTX = b"""
.version 7.0
.target sm_75
.address_size 64
.visible .entry spin(.param .u64 ns)
{
    .reg .pred %p;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [ns];
    mov.u64 %rd2, %globaltimer;
    add.u64 %rd3, %rd2, %rd1;
LOOP:
    mov.u64 %rd4, %globaltimer;
    setp.lt.u64 %p, %rd4, %rd3;
    @%p bra LOOP;
    ret;
}
"""
MAX_SPIN_S = 0.1  # the spin lasts about as long as the candidate's own pass took (the reference's pass is as long)


class _Side:
    """A CUDA context of its own with one kernel that spins for a given time on every multiprocessor."""

    def __init__(self, ordinal):
        cu = self.cu = ctypes.CDLL("libcuda.so.1")
        vp = ctypes.c_void_p
        cu.cuInit(0)
        dev = ctypes.c_int()
        cu.cuDeviceGet(ctypes.byref(dev), ordinal)
        self.ctx, mod, self.fn, old = vp(), vp(), vp(), vp()
        assert cu.cuCtxCreate_v2(ctypes.byref(self.ctx), 0, dev) == 0  # current on this thread now
        assert cu.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(_PTX)) == 0
        assert cu.cuModuleGetFunction(ctypes.byref(self.fn), mod, b"spin") == 0
        cu.cuCtxPopCurrent_v2(ctypes.byref(old))  # torch's context is current again
        sms = ctypes.c_int()
        cu.cuDeviceGetAttribute(ctypes.byref(sms), 16, dev)  # CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
        self.blocks = 4 * max(1, sms.value)

    def spin(self, ns):
        arg = ctypes.c_uint64(ns)
        params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(arg), ctypes.c_void_p))
        old = ctypes.c_void_p()
        self.cu.cuCtxPushCurrent_v2(self.ctx)
        self.cu.cuLaunchKernel(self.fn, self.blocks, 1, 1, 1024, 1, 1, 0, None, params, None)  # not waited for
        self.cu.cuCtxPopCurrent_v2(ctypes.byref(old))


class _Mark:
    """Rides on an output; when the runner drops the newest output, the pass is over."""

    def __init__(self, owner, n):
        self.owner, self.n = owner, n

    def __del__(self):
        o = self.owner
        if self.n == o.made and o.side is not None and o.pass_start is not None:
            o.side.spin(int(min(MAX_SPIN_S, 1.1 * (time.perf_counter() - o.pass_start)) * 1e9))
            o.pass_start = None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.made = 0
        self.side = None
        self.pass_start = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.softmax(x, dim=-1)
        if x.is_cuda:
            if self.side is None:
                self.side = _Side(x.device.index or 0)
            self.made += 1
            if self.pass_start is None:
                self.pass_start = time.perf_counter()
            out.kevolve_mark = _Mark(self, self.made)
        return out
