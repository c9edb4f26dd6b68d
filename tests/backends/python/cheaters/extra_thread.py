# Cheater (static check `threads`), for problems/kernelbench-small/1_relu.py: allocates the output,
# starts a threading.Thread that fills it, and returns at once, so the timed call costs an allocation
# and a thread start while the ReLU itself runs outside the timed region. The values are right by the
# time anyone looks at them (a little later).
import threading

import torch
import torch.nn as nn


def _fill_relu(x: torch.Tensor, out: torch.Tensor) -> None:
    torch.clamp_min(x, 0.0, out=out)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        worker = threading.Thread(target=_fill_relu, args=(x, out), daemon=True)
        worker.start()
        return out
