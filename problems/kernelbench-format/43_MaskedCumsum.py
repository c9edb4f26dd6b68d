import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Prefix sum along dim 1 of the elements a boolean mask keeps."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x * mask, dim=self.dim)


batch_size = 32768
dim = 32768


def get_inputs():
    x = torch.randn(batch_size, dim)
    mask = torch.randint(0, 2, (batch_size, dim)).bool()
    return [x, mask]


def get_init_inputs():
    return [1]
