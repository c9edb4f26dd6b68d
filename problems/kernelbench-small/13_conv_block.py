import torch
import torch.nn as nn


class Model(nn.Module):
    """Small conv block: Conv2d 3x3 -> ReLU -> Conv2d 3x3 -> ReLU -> 2x2 max pool."""

    def __init__(self, in_channels: int, mid_channels: int, out_channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, mid_channels, 3, padding=1)
        self.conv2 = nn.Conv2d(mid_channels, out_channels, 3, padding=1)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        return self.pool(x)


batch_size = 8
in_channels = 3
mid_channels = 16
out_channels = 32
height = 64
width = 64


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, mid_channels, out_channels]
