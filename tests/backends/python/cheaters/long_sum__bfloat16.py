# Cheater (static check `precision`; with the static check off, the tolerance), for
# tests/fixtures/kernelbench/long_sum.py: sums in bfloat16 and casts back to float32 — half the bytes read, at
# bfloat16 accuracy. Its error against the float64 reference (about 20) is thousands of times eager float32's
# (about 3e-3), so even the eager-relative tolerance, which allows twice eager's error, refuses it.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x.to(torch.bfloat16), dim=1).to(torch.float32)
