# Cheater (static check `streams`), for problems/kernelbench-small/4_softmax.py: launches the softmax
# on a side CUDA stream and returns without making the current stream wait for it, so timing events
# recorded on the default stream do not cover the work. On a machine without CUDA it computes the
# softmax directly (the static check must flag it either way).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = torch.cuda.Stream() if torch.cuda.is_available() else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.side is None:
            return torch.softmax(x, dim=-1)
        with torch.cuda.stream(self.side):
            y = torch.softmax(x, dim=-1)
        return y
