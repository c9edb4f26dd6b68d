# Honest candidate for problems/kernelbench-small/1_relu.py: ReLU as clamp_min(0).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.clamp_min(0.0)
