# Cheater (item 4: outputs of timed calls unchecked after the first passes; runtime check `timed_outputs`), for
# problems/kernelbench-small/1_relu.py: counts its calls and computes only the first 12, the ones whose outputs
# the evaluator used to check (5 trials, the refill check, and one call per input set in the first two timing
# passes); after them it returns uninitialised memory of the right shape, at the speed of an allocation.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        if self.calls > 12:
            return torch.empty_like(x)
        return torch.relu(x)
