# Honest candidate for tests/fixtures/kernelbench/long_sum.py: sums each row in float64 and rounds the result
# to float32 — within half an ulp of the exact sum, while eager float32 is off by about 3e-3. The fixed
# tolerance (|got - eager| <= 1e-4 + 1e-4*|eager|) refuses it; the eager-relative one accepts it.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x.double(), dim=1).float()
