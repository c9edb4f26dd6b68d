# Cheater (sandbox: seccomp), for problems/kernelbench-small/1_relu.py: renices the evaluator to the lowest
# priority and pins it to one core, so that the reference it times runs slower, then returns the right answer.
# Through libc by ctypes (the static check refuses os.setpriority / os.sched_setaffinity by name). As the
# evaluator's uid both work (ok); in the sandbox setpriority kills the process (SIGSYS): rejected [isolation].
import ctypes
import os

import torch
import torch.nn as nn

_libc = ctypes.CDLL("libc.so.6", use_errno=True)  # by name: CDLL(None) would reach the Python C API (refused by the static check)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        evaluator = os.getppid()
        _libc.setpriority(0, evaluator, 19)  # PRIO_PROCESS
        one_core = ctypes.c_ulong(1)
        _libc.sched_setaffinity(evaluator, ctypes.sizeof(one_core), ctypes.byref(one_core))
        return x.clamp_min(0.0)
