# Crasher, for problems/kernelbench-small/1_relu.py: forward raises a RuntimeError on every call.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise RuntimeError("relu kernel launch failed: invalid configuration argument")
