# Cheater (item 6: a name no check can compute; static check `dynamic`), for problems/kernelbench-small/1_relu.py:
# as dynamic_precision.py, but the name of torch.float16 is decoded from bytes at run time, so no folding of
# constant strings recovers it: a getattr on a module with such a name is refused as such.
import torch
import torch.nn as nn

_half = getattr(torch, bytes([102, 108, 111, 97, 116, 49, 54]).decode())


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * (x.to(_half) > 0)
