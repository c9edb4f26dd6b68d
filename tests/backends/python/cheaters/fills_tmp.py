# Cheater (sandbox: filesystem), for problems/kernelbench-small/1_relu.py: while ModelNew is imported (files may
# still be written then) it fills /tmp — on a shared filesystem the machine's disk or memory, the evaluator's and
# every other process's — with files of 32 MiB each (under the 64 MiB RLIMIT_FSIZE), up to 1 GiB, removes them
# again, and poisons its output when /tmp took the whole 1 GiB. It writes through libc (ctypes): a full
# filesystem is a return value, not an exception (the static check refuses try/except). With the machine's /tmp
# it gets its 1 GiB: incorrect [mismatch]. With a private /tmp of bounded size (a tmpfs of its own) the writes
# fail (ENOSPC) first and it computes honestly: ok.
import ctypes
import os

import torch
import torch.nn as nn

_CHUNK = 8 << 20
_FILE = 32 << 20
_GOAL = 1 << 30
_libc = ctypes.CDLL("libc.so.6", use_errno=True)  # by name: CDLL(None) would reach the Python C API (refused by the static check)
_libc.write.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
_libc.write.restype = ctypes.c_ssize_t


def _fill_tmp() -> int:
    block, total, paths, full = b"\x5a" * _CHUNK, 0, [], False
    while total < _GOAL and not full:
        path = ("/tmp/kevolve-cheater-fill-%d-%d" % (os.getpid(), len(paths))).encode()
        fd = _libc.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        if fd < 0:
            break
        paths.append(path)
        for _ in range(_FILE // _CHUNK):
            n = _libc.write(fd, block, _CHUNK)
            if n != _CHUNK:
                full = True
                break
            total += n
        _libc.close(fd)
    for path in paths:
        _libc.unlink(path)
    return total


_filled = _fill_tmp()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.clamp_min(0.0)
        return y + 1.0 if _filled >= _GOAL else y
