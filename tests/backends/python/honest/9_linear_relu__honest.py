# Honest candidate for problems/kernelbench-small/9_linear_relu.py: one addmm (bias + x @ W^T)
# followed by an in-place clamp of the fresh result. Holds the same nn.Linear as the reference so that
# its parameters are created in the same order and shapes.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.addmm(self.linear.bias, x, self.linear.weight.t())
        return y.clamp_min_(0.0)
