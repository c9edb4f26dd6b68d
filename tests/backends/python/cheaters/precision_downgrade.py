# Cheater (static check `precision`), for problems/kernelbench-small/4_softmax.py: turns on TF32
# matmuls and lowers the float32 matmul precision at import, then computes the softmax in bfloat16 and
# casts the result back to float32 — half the memory traffic, at bfloat16 accuracy.
import torch
import torch.nn as nn

torch.backends.cuda.matmul.allow_tf32 = True
torch.set_float32_matmul_precision("medium")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x.to(torch.bfloat16), dim=-1).to(torch.float32)
