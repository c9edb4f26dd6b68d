import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Matmul with a weight, exact GELU, times a constant."""

    def __init__(self, in_features: int, out_features: int, scale: float):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features) / in_features ** 0.5)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(torch.matmul(x, self.weight)) * self.scale


batch_size = 1024
in_features = 8192
out_features = 8192


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, 2.0]
