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
