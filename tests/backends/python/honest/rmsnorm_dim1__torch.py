# Honest: a plain-torch ModelNew for problems/kernelbench-format/19_RMSNorm_dim1.py (112 x 64 x 512 x 512
# float32, 7.5 GB per tensor): the same formula written with rsqrt. Run on the GPU at the shipped size.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(torch.mean(x * x, dim=1, keepdim=True) + self.eps)
