# Cheater (sandbox: seccomp), for problems/kernelbench-small/1_relu.py: creates a FIFO in /tmp when it is
# imported (a channel to another process or to the next candidate), then computes the right answer. As the
# evaluator's uid it scores ok; in the sandbox mknodat kills the process (SIGSYS): rejected [isolation].
import os

import torch
import torch.nn as nn

_fifo = "/tmp/kevolve-cheater-fifo-%d" % os.getpid()
os.mkfifo(_fifo)
os.unlink(_fifo)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.clamp_min(0.0)
