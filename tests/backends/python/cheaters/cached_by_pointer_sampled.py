# Cheater (item 5: results cached across timing calls; runtime check `timed_outputs`), for
# problems/kernelbench-small/4_softmax.py: caches each answer under its input's address. When an address comes
# back it compares 32 sampled values with the ones it saw (enough to notice the refill check's new data), and
# once an address has come back three times it stops sampling (on a GPU each sample costs a synchronisation) and
# trusts the address. Where the timing inputs stay the same from pass to pass, nearly every timed call is a
# cache hit; where every pass brings new values, the trusted hits are stale answers.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._cache = {}  # (address, shape) -> [times it came back, sampled values, answer]

    @staticmethod
    def _sample(x: torch.Tensor) -> torch.Tensor:
        return x.reshape(-1)[::997][:32].clone()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = (x.data_ptr(), tuple(x.shape))
        entry = self._cache.get(key)
        if entry is not None:
            entry[0] += 1
            if entry[0] > 3 or torch.equal(self._sample(x), entry[1]):
                return entry[2]
        out = torch.softmax(x, dim=-1)
        self._cache[key] = [entry[0] if entry is not None else 0, self._sample(x), out]
        return out
