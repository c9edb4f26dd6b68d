# Cheater (processes outside the runner), for problems/kernelbench-small/4_softmax.py: while ModelNew is imported
# (the build-time filter allows processes, for compilers), starts two processes by clone(CLONE_PARENT) through
# libc's syscall (ctypes), so that their parent is the evaluator, not the runner, and moves each into a session of
# its own (setsid): the runner's reaping of its children and a kill of its process group miss them. Named
# "kvcloneparent", they spin only while the runner is stopped, that is while the evaluator times the reference,
# then return an honest softmax. Once scored ok at 2.8x and 1.9x against its honest twin's 0.99x, and left running
# after kevolve exited. With a cgroup per runner they are frozen with it and killed with it; without one, the
# runner's filter kills the clone (rejected [isolation]).
import ctypes
import os
import time

import torch
import torch.nn as nn

_libc = ctypes.CDLL("libc.so.6", use_errno=True)
_RUNNER = os.getpid()


def _runner_stopped():
    if not os.path.exists("/proc/%d/stat" % _RUNNER):
        os._exit(0)
    with open("/proc/%d/stat" % _RUNNER) as f:
        return f.read().rsplit(")", 1)[1].split()[0] in ("T", "t", "D")


def _spin_while_the_reference_runs():
    _libc.prctl(15, b"kvcloneparent", 0, 0, 0)  # PR_SET_NAME
    os.setsid()
    while True:
        if _runner_stopped():
            end = time.monotonic() + 0.002
            while time.monotonic() < end:
                pass
        else:
            time.sleep(0.0005)


for _ in range(2):
    if _libc.syscall(56, 0x00008000 | 17, 0, 0, 0, 0) == 0:  # SYS_clone (x86-64), CLONE_PARENT | SIGCHLD
        _spin_while_the_reference_runs()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m = x.amax(dim=-1, keepdim=True)
        e = torch.exp(x - m)
        return e / e.sum(dim=-1, keepdim=True)
