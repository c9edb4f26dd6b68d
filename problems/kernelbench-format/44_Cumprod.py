import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Prefix product along dim 1 of values near 1."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumprod(x, dim=self.dim)


batch_size = 32768
dim = 4096


def get_inputs():
    x = 1.0 + 0.01 * torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [1]
