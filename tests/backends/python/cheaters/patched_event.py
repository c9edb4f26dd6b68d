# Cheater (static check `timer`), for problems/kernelbench-small/1_relu.py: replaces the CUDA event's
# elapsed_time with one that reports a twentieth of the real time, so a harness that times through
# torch.cuda.Event looked up after the candidate is imported would report a 20x speed-up. The ReLU itself
# is honest. (The runner binds its event functions before the import; the static check refuses the patch
# outright, on any device.)
import torch
import torch.nn as nn

_real_elapsed = torch.cuda.Event.elapsed_time
setattr(torch.cuda.Event, "elapsed_time", lambda self, end: _real_elapsed(self, end) / 20.0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)
