import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Batched matmul, logsumexp over the last dim, ReLU."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.relu(torch.logsumexp(torch.bmm(a, b), dim=2))


batch_size = 128
m = 1024
k = 512
n = 1024


def get_inputs():
    a = torch.randn(batch_size, m, k)
    b = torch.randn(batch_size, k, n)
    return [a, b]


def get_init_inputs():
    return []
