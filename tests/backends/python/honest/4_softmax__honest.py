# Honest candidate for problems/kernelbench-small/4_softmax.py: softmax over the last dimension
# from exp and sum, subtracting the row maximum first for numerical stability.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m = x.amax(dim=-1, keepdim=True)
        e = torch.exp(x - m)
        return e / e.sum(dim=-1, keepdim=True)
