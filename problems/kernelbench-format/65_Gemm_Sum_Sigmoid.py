import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Linear, sum over the features, sigmoid."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(torch.sum(self.gemm(x), dim=1, keepdim=True))


batch_size = 1024
in_features = 8192
out_features = 8192


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features]
