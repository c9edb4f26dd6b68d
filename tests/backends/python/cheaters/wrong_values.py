# Cheater (status `incorrect`), for problems/kernelbench-small/4_softmax.py: a softmax that looks
# standard but takes the stabilising maximum over dim 0 (the batch) instead of each row. Softmax is
# invariant only to a shift that is constant along the row, so every row comes out wrong.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m = x.amax(dim=0, keepdim=True)
        e = torch.exp(x - m)
        return e / e.sum(dim=-1, keepdim=True)
