# Cheater (static check `reference`), for problems/kernelbench-small/4_softmax.py: finds the problem's
# reference `Model` among the loaded modules, constructs it, and calls its forward, so the "candidate"
# is the reference itself. Falls back to torch.softmax when the reference module is not loaded.
import sys

import torch
import torch.nn as nn


def _find_reference_model():
    for module in list(sys.modules.values()):
        ref = getattr(module, "Model", None)
        if isinstance(ref, type) and issubclass(ref, nn.Module) and hasattr(module, "get_inputs"):
            return ref
    return None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        Model = _find_reference_model()
        self.ref = Model() if Model is not None else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.ref is not None:
            return self.ref.forward(x)
        return torch.softmax(x, dim=-1)
