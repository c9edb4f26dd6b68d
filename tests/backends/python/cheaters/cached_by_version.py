# Cheater (runtime checks `pointer_reuse` / `fresh_data`; no static check catches it), for
# problems/kernelbench-small/4_softmax.py: remembers each answer under (storage address, tensor._version)
# and returns it whenever the same tensor comes back unmodified: an in-place refill with copy_() bumps
# _version, so a refill check that writes that way sees a fresh answer, while timing calls on the same
# tensors all hit the cache. The refill check writes through a DLPack alias (a version counter of its
# own), so the stale answer shows.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._answers = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = (x.data_ptr(), x._version, tuple(x.shape))
        out = self._answers.get(key)
        if out is None:
            out = torch.softmax(x, dim=-1)
            self._answers[key] = out
        return out
