"""kevolve's Python interpreter, trusted side: the shared region that carries tensors to and from the runner.

Tensors cross the trust boundary as raw bytes only: one region this process allocates (CPU: a memfd sent to the
runner over a socket pair; CUDA: a cuMemAlloc allocation exported by its IPC handle) with S input sets and, per
set, one slot per output, sized from the reference's outputs; beside it this side's trusted copies of each set's
inputs. count_sets sizes S within a memory budget.
"""
import base64
import mmap
import os

import torch

import kevolve_py_runner as rt
from kevolve_py_compare import _Verdict, _same
from kevolve_py_resources import free_memory

MAX_SETS = 64        # input sets in the region, at most


def _dtype_name(dtype):
    return str(dtype).split(".", 1)[1]


def _tensor_spec(t, contiguous=False):
    """What the runner needs to see tensor `t`'s twin in the region: dtype, shape, strides, bytes spanned.
    Strides are kept when they describe a dense, non-overlapping layout (a permutation), else contiguous."""
    shape, stride = list(t.shape), list(t.stride())
    extent = 0 if t.numel() == 0 else 1 + sum((n - 1) * s for n, s in zip(shape, stride))
    if contiguous or not (t.is_contiguous() or (extent == t.numel() and all(s >= 1 for s in stride))):
        stride = rt._contiguous_strides(shape)
        extent = t.numel()
    return {"dtype": _dtype_name(t.dtype), "shape": shape, "stride": stride, "nbytes": extent * t.element_size()}


def _json_value(x):
    """Whether a non-tensor input can go to the runner as JSON (numbers, strings, None, lists of those)."""
    if x is None or isinstance(x, (bool, int, float, str)):
        return True
    return isinstance(x, (list, tuple)) and all(_json_value(v) for v in x)


class SharedSets:
    """`nsets` input sets and, per set, one slot per output, in one region shared with the runner (CPU: a memfd
    the runner opens through /proc; CUDA: a device allocation of its own, exported by its IPC handle), and this
    side's trusted copies of every set's inputs (`priv`): the reference runs on those, and the shared copy must
    still equal them after a call. `inputs` and `outputs` are the first seed's inputs and reference outputs."""

    def __init__(self, inputs, outputs, nsets, dev):
        self.dev, self.nsets = dev, nsets
        self.in_specs, self.out_specs, off = [], [], 0
        for x in inputs:
            if isinstance(x, torch.Tensor):
                spec = dict(_tensor_spec(x), offset=off)
                off += -(-spec["nbytes"] // rt.ALIGN) * rt.ALIGN
            else:
                spec = {"value": x}
            self.in_specs.append(spec)
        for o in outputs:
            spec = dict(_tensor_spec(o, contiguous=True), offset=off)
            off += -(-spec["nbytes"] // rt.ALIGN) * rt.ALIGN
            self.out_specs.append(spec)
        self.set_bytes = max(rt.ALIGN, off)
        self.size = self.set_bytes * nsets
        self.bytes_moved = sum(x.numel() * x.element_size() for x in list(inputs) + list(outputs) if isinstance(x, torch.Tensor))
        self._free, self._fd, self._mm, self.fd = None, None, None, None
        self.inputs = self.slots = self.priv = None
        try:
            self._allocate(nsets, dev)
        except BaseException:  # a region half made (carving or poisoning ran out of memory) is freed here: the
            self.release()     # caller never got it to release
            raise

    def _allocate(self, nsets, dev):
        if dev.type == "cuda":
            region, handle, self._free = rt.cuda_exported(self.size, dev)
            self.memory = {"kind": "cuda", "handle": base64.b64encode(handle).decode(), "size": self.size}
            self.transport = "CUDA IPC (a cuMemAlloc allocation of its own)"
        else:
            self._fd = os.memfd_create("kevolve-io")
            os.ftruncate(self._fd, self.size)
            region = self._mm = mmap.mmap(self._fd, self.size)
            self.memory = {"kind": "cpu", "size": self.size}  # the memfd itself goes with the command (Runner.ask)
            self.fd = self._fd
            self.transport = "shared memory (memfd)"
        self.inputs = [[rt.carve(region, k * self.set_bytes + s["offset"], s, dev) if "value" not in s else None for s in self.in_specs]
                       for k in range(nsets)]
        self.slots = [[rt.carve(region, k * self.set_bytes + s["offset"], s, dev) for s in self.out_specs] for k in range(nsets)]
        self.priv = [None] * nsets
        self.new_values = {}
        self.has_values = any("value" in s for s in self.in_specs)
        for k in range(nsets):  # the slots' pages exist before any call writes them
            self.poison(k)

    def describe(self):
        """The `bind` command: where the region is and how it is laid out."""
        return {"op": "bind", "memory": self.memory, "layout": {"inputs": self.in_specs, "outputs": self.out_specs},
                "set_offsets": [k * self.set_bytes for k in range(self.nsets)]}

    def fill(self, k, xs, seed):
        """Makes `xs` (generated under `seed`) set k's inputs: the trusted copy, and the bytes in the region."""
        if len(xs) != len(self.in_specs) or any(
                isinstance(x, torch.Tensor) != ("value" not in s) or (isinstance(x, torch.Tensor) and
                                                                      (_dtype_name(x.dtype) != s["dtype"] or list(x.shape) != s["shape"]))
                for x, s in zip(xs, self.in_specs)):
            raise _Verdict("harness_error", "harness", "get_inputs() under seed %d gave inputs of other types or shapes than "
                                                       "under the first seed: the shared buffers cannot hold them" % seed)
        with torch.no_grad():
            for view, x in zip(self.inputs[k], xs):
                if view is not None:
                    view.copy_(x)
        self.priv[k] = xs
        if self.has_values:
            self.new_values[str(k)] = [None if isinstance(x, torch.Tensor) else x for x in xs]

    def take_values(self):
        """The non-tensor inputs of the sets filled since the last command (for the runner), or None."""
        v, self.new_values = self.new_values, {}
        return v or None

    def poison(self, k):
        """Fills set k's slots with NaN (floats) or 0x5A bytes (integers): a slot left unwritten shows."""
        for s in self.slots[k]:
            if s.is_floating_point() or s.is_complex():
                s.fill_(float("nan"))
            elif s.dtype != torch.bool:
                s.view(torch.uint8).fill_(0x5A) if s.is_contiguous() else s.fill_(0x5A)

    def mutated(self, k):
        """The index of the first input of set k whose shared copy no longer equals the trusted one, or None."""
        for i, (view, x) in enumerate(zip(self.inputs[k], self.priv[k])):
            if view is not None and not _same(view, x):
                return i
        return None

    def release(self):
        """Frees the region (after the runner is gone: CUDA memory is freed whether or not it still maps it)."""
        self.inputs = self.slots = self.priv = None
        if self._free:
            self._free()
        if self._mm is not None:
            try:
                self._mm.close()
            except BufferError:  # a view still alive somewhere: the mapping goes with it
                pass
        if self._fd is not None:
            os.close(self._fd)
        self._free = self._mm = self._fd = self.fd = None  # released once, however often called


def count_sets(per_set_bytes, dev, wanted, reserve=0):
    """How many input sets the region holds: as many as `wanted` (at most MAX_SETS) within a memory budget
    (CUDA: 35 % of the free device memory; CPU: a quarter of the available memory, at most 512 MiB; either way no
    more than what is free beyond `reserve`, the rest of the evaluation's need), at least one."""
    free = free_memory(dev)[0]
    budget = 0.35 * free if dev.type == "cuda" else min(0.25 * free, 512 << 20)
    budget = min(budget, free - reserve)
    return max(1, min(MAX_SETS, wanted, int(budget // max(1, per_set_bytes))))
