# Cheater (sandbox: identity), for problems/kernelbench-small/1_relu.py: reads the evaluator's environment and
# memory through /proc/<ppid>/environ, /proc/<ppid>/maps and /proc/<ppid>/mem (what a cheater would search for
# the expected outputs), then returns the right answer. As the evaluator's uid it reads them and scores ok; as
# uid 65534 (another uid, no capabilities) opening them fails: PermissionError, a runtime_error; in a runner with
# a /proc of its own mounted with hidepid=2 (root, CPU) the evaluator's pid is not even there: FileNotFoundError.
import os

import torch
import torch.nn as nn


def _peek_evaluator() -> int:
    pid = os.getppid()
    with open("/proc/%d/environ" % pid, "rb") as f:
        seen = len(f.read())
    with open("/proc/%d/maps" % pid) as f:
        heap = [line.split()[0] for line in f if line.rstrip().endswith("[heap]")]
    with open("/proc/%d/mem" % pid, "rb") as f:
        if heap:
            f.seek(int(heap[0].split("-")[0], 16))
            seen += len(f.read(4096))
    return seen


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _peek_evaluator()
        return x.clamp_min(0.0)
