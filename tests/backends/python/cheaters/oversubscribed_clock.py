# Cheater (the thread count; static check `threads`), for problems/kernelbench-small/1_relu.py: it asks torch for
# 64 threads on the cores the reference is timed on, so that the runner's main thread mostly waits for a CPU (time
# the evaluator's outside clock forgives as load), and reports every timed call 20x faster than it ran by
# replacing the runner's clock. The ReLU itself is honest.
import sys
import time

import torch
import torch.nn as nn

torch.set_num_threads(64)
_real = time.perf_counter_ns
_t0 = _real()


def _slow_clock() -> int:
    return _t0 + (_real() - _t0) // 20


sys.modules["__main__"].__dict__["_cl" + "ock"] = _slow_clock


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)
