import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """2-D max pooling, kernel 4, stride 2, padding 1."""

    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=4, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


batch_size = 32
channels = 64
height = 512
width = 512


def get_inputs():
    x = torch.randn(batch_size, channels, height, width)
    return [x]


def get_init_inputs():
    return []
