# Crasher, for problems/kernelbench-small/1_relu.py: not valid Python (unbalanced parenthesis and a
# missing colon), so loading the file fails.
import torch
import torch.nn as nn


class ModelNew(nn.Module)
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu((x)
