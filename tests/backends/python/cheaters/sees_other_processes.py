# Cheater (sandbox: filesystem), for problems/kernelbench-small/1_relu.py: lists /proc for processes of another
# user — the evaluator, the node, anything whose command line or files could leak a secret or the expected
# outputs — and poisons its output when it finds one (as tests/backends/cpu/cheaters/sees_other_processes.cpp).
# Which processes surely belong to another user: the evaluator (its parent, root's, non-dumpable) and init
# (pid 1), both alive throughout (no try/except: the static check refuses one, and these two cannot vanish
# between the listing and the look-up). With the evaluator's /proc (shared filesystem) it sees them:
# incorrect [mismatch]. In a runner with a /proc of its own mounted with hidepid=2 it sees neither (the
# listing and a look-up by pid both miss them) and computes honestly: ok.
import os

import torch
import torch.nn as nn


def _other_users_processes() -> int:
    listed = set(os.listdir("/proc"))
    others = {"1", str(os.getppid())}
    return len(others & listed) + sum(os.path.isdir("/proc/" + p) for p in others)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.clamp_min(0.0)
        return y + 1.0 if _other_users_processes() > 0 else y
