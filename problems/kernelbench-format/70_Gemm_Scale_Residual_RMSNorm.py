import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Linear, scaled, the input added back, RMS norm over the features."""

    def __init__(self, features: int, eps: float):
        super().__init__()
        self.gemm = nn.Linear(features, features)
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.gemm(x) * 0.5 + x
        return y * torch.rsqrt(torch.mean(y * y, dim=-1, keepdim=True) + self.eps)


batch_size = 1024
features = 8192


def get_inputs():
    x = torch.randn(batch_size, features)
    return [x]


def get_init_inputs():
    return [features, 1e-6]
