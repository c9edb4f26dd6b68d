# Cheater (runtime check `fresh_data`; no static check catches it), for
# problems/kernelbench-small/4_softmax.py: keeps one output buffer per input layout (shape, strides,
# dtype, device) and only fills it when the buffer is first created, so every later call with the same
# layout returns the first call's answer without reading its input. Right as long as the data never
# changes; fresh inputs for each trial expose the stale result.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._out_buffers = {}

    @staticmethod
    def _layout(x: torch.Tensor):
        return (tuple(x.shape), tuple(x.stride()), x.dtype, x.device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = self._layout(x)
        out = self._out_buffers.get(key)
        if out is None:
            out = torch.empty_like(x)
            torch.exp(x - x.amax(dim=-1, keepdim=True), out=out)
            out.div_(out.sum(dim=-1, keepdim=True))
            if len(self._out_buffers) >= 8:
                self._out_buffers.clear()
            self._out_buffers[key] = out
        return out
