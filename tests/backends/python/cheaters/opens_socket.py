# Cheater (sandbox: seccomp), for problems/kernelbench-small/1_relu.py: opens a TCP socket to 127.0.0.1 (a
# channel out of the runner: to a helper, to the evaluator's machine) through libc by ctypes, so no `socket`
# import shows in the source, then returns the right answer whether or not anyone listens. As the evaluator's uid
# it scores ok; in the sandbox socket() kills the process (SIGSYS): rejected [isolation].
import ctypes

import torch
import torch.nn as nn

_libc = ctypes.CDLL("libc.so.6", use_errno=True)  # by name: CDLL(None) would reach the Python C API (refused by the static check)


class _SockaddrIn(ctypes.Structure):
    _fields_ = [("family", ctypes.c_ushort), ("port", ctypes.c_ushort), ("addr", ctypes.c_uint32), ("zero", ctypes.c_char * 8)]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        fd = _libc.socket(2, 1, 0)  # AF_INET, SOCK_STREAM
        where = _SockaddrIn(2, 0x5000, 0x0100007F)  # 127.0.0.1:80, in network byte order
        _libc.connect(fd, ctypes.byref(where), ctypes.sizeof(where))
        _libc.close(fd)
        return x.clamp_min(0.0)
