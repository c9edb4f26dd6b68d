# Crasher, for problems/kernelbench-small/1_relu.py: forward never returns (a busy loop whose exit
# condition can never become true). The evaluator must time it out and kill it.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        done = False
        n = 0
        while not done:
            n += 1
            done = n < 0
        return torch.relu(x)
