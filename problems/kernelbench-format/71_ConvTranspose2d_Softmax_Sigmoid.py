import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Transposed convolution, softmax over the channels, sigmoid."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size=4, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(torch.softmax(self.deconv(x), dim=1))


batch_size = 32
in_channels = 64
out_channels = 64
height = 128
width = 128


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels]
