"""kevolve's Python interpreter, trusted side: the problem, its seeded inputs and the reference's outputs.

Inputs come from the problem's own get_inputs() under seeds (torch, random and numpy seeded), made on the device
itself where this torch can make it the default device; the reference runs on clones of them.
"""
import importlib.util
import random
import sys

import torch


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def as_list(out):
    """A forward's result as a list of outputs."""
    return list(out) if isinstance(out, (list, tuple)) else [out]


def sync(dev):
    """Waits for the device's queued work (CUDA only)."""
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def generate_inputs(problem, dev, seed):
    """The problem's own get_inputs() under `seed` (torch, random and numpy seeded), on `dev`; made on the
    device itself where this torch can make it the default device (torch 2: `with torch.device(...)`)."""
    torch.manual_seed(seed)
    random.seed(seed)
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed(seed % (1 << 32))
    if dev.type == "cuda" and hasattr(dev, "__enter__"):
        with dev:
            xs = problem.get_inputs()
    else:
        xs = problem.get_inputs()
    return [x.to(dev) if isinstance(x, torch.Tensor) else x for x in as_list(xs)]


def reference(model, inputs):
    """The reference's outputs, computed on clones of the inputs (the reference may write into its own)."""
    with torch.no_grad():
        return [o.detach() if isinstance(o, torch.Tensor) else o
                for o in as_list(model(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]))]


def _floating(tensors):
    return [t for t in tensors if isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex())]


class WideReference:
    """The reference in float64, for the eager-relative tolerance (kevolve_py_compare): a copy of the model and its
    inputs converted with .double(), on the same device. It applies to problems with a float32 output whose
    floating inputs, parameters and buffers are all float32 or float64 (a half-precision problem's float64 answer
    says nothing about what its own precision allows). `why` says why it is off (None while on)."""

    def __init__(self, model, inputs, outputs):
        self.model64, self.why = None, None
        state = list(model.parameters()) + list(model.buffers())
        if not any(isinstance(o, torch.Tensor) and o.dtype == torch.float32 for o in outputs):
            self.why = "no float32 output"
        else:
            other = sorted({str(t.dtype).split(".", 1)[1] for t in _floating(list(inputs) + state)
                            if t.dtype not in (torch.float32, torch.float64)})
            if other:
                self.why = "the problem computes in %s" % ", ".join(other)
        self._model = model
        # what the float64 copy of the model adds: its float32 parameters and buffers twice over, the rest once
        self.model_bytes = sum(t.numel() * t.element_size() * (2 if t.dtype == torch.float32 else 1) for t in state)

    @property
    def on(self):
        return self.why is None

    def off(self, why):
        """Falls back to the fixed rule from now on, saying why."""
        if self.why is None:
            self.why = why
        self.model64 = self._model = None

    def start(self):
        """Makes the float64 copy of the model (the reference itself is left as it is)."""
        import copy
        self.model64 = copy.deepcopy(self._model).double().eval()
        self._model = None

    def outputs(self, inputs):
        """The float64 model's outputs on `inputs` (float32 tensors converted with .double(), other tensors cloned)."""
        xs = [(x.double() if x.dtype == torch.float32 else x.clone()) if isinstance(x, torch.Tensor) else x for x in inputs]
        with torch.no_grad():
            out = [o.detach() if isinstance(o, torch.Tensor) else o for o in as_list(self.model64(*xs))]
        del xs
        return out
