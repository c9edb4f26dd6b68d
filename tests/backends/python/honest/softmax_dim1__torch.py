# Honest: a ModelNew that only calls torch.softmax, for problems/kernelbench-format/16_Softmax.py at its shipped
# size (4096 x 393216 float32, 6.4 GB per tensor).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)
