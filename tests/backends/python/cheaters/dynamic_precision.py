# Cheater (item 6: lower precision reached through a built name; static check `precision`), for
# problems/kernelbench-small/1_relu.py: gets torch.float16 with getattr and a name made of two strings, which a
# check of the source text does not see, and computes the ReLU's sign test in half precision. It passes the
# tolerance: values that round to zero in float16 are far below atol.
import torch
import torch.nn as nn

_half = getattr(torch, "float" + "16")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * (x.to(_half) > 0)
