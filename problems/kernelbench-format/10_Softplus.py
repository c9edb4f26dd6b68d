import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Softplus: log(1 + exp(x)) (linear above the threshold)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softplus(x)


batch_size = 4096
dim = 393216


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
