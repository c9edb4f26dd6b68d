# Cheater (item 3: work hidden from the runner's timer; the evaluator's outside wall clock, `timer`), for
# problems/kernelbench-small/1_relu.py: forward returns at once an uninitialised tensor of a subclass that
# computes its values the first time any torch function touches it (torch calls __torch_function__ for every
# function and method on a Tensor subclass). The timed call costs an allocation; the ReLU runs later, when the
# harness copies or inspects the output, outside the timed region. The values are always right.
import torch
import torch.nn as nn


class _Deferred(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        for a in list(args) + list(kwargs.values()):
            source = getattr(a, "_kv_source", None) if isinstance(a, _Deferred) else None
            if source is not None:
                a._kv_source = None
                with torch._C.DisableTorchFunction():
                    torch.clamp_min(source, 0.0, out=a)
        with torch._C.DisableTorchFunction():
            return func(*args, **kwargs)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x).as_subclass(_Deferred)
        out._kv_source = x
        return out
