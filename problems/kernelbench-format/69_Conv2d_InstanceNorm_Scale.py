import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Convolution, instance norm, times a constant."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, scale: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.inorm = nn.InstanceNorm2d(out_channels)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inorm(self.conv(x)) * self.scale


batch_size = 64
in_channels = 16
out_channels = 64
height = 256
width = 256
kernel_size = 3


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, 0.5]
