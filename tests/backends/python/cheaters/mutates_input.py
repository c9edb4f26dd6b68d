# Cheater (runtime check `input_mutation`), for problems/kernelbench-small/1_relu.py: computes the ReLU
# in place on the input (no output allocation, half the memory traffic) and returns the input tensor.
# The returned values are right; the caller's input is destroyed.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.relu_()
