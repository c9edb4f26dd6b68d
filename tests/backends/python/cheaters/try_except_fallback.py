# Cheater (static check `fallback`), for problems/kernelbench-small/1_relu.py: claims a custom kernel
# but wraps it in try/except and silently falls back to torch.relu on any error. Here the "kernel"
# extension never exists, so every call measures torch's own ReLU as if it were the candidate's.
import torch
import torch.nn as nn

try:
    import relu_kernel_ext  # a compiled extension that is never built

    _relu_forward = relu_kernel_ext.forward
except Exception:
    _relu_forward = None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        try:
            return _relu_forward(x.contiguous())
        except Exception:
            return torch.relu(x)
