import torch
import torch.nn as nn


class Model(nn.Module):
    """Layer normalization over the last dimension with a learnable affine (nn.LayerNorm)."""

    def __init__(self, normalized_shape: int):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


batch_size = 16
seq_len = 512
hidden = 1024


def get_inputs():
    x = torch.randn(batch_size, seq_len, hidden)
    return [x]


def get_init_inputs():
    return [hidden]
