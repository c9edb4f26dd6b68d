#!/usr/bin/env python3
"""kevolve's Python runner: runs ONE candidate (ModelNew) for kevolve_py_eval.py, in a process of its own.

This is the untrusted side of the trust split: the candidate's code runs here, so nothing this process says
is believed. It receives the constructor arguments and the reference's weights (a torch.save file the
evaluator wrote: the trusted-to-untrusted direction, read with weights_only where torch has it), then maps
the evaluator's buffers: the input sets and, per set, one output slot per output, all in memory the evaluator
allocated and shares (CPU: a memfd the evaluator sends over a socket pair; CUDA: one device allocation opened by its IPC
handle). The evaluator writes the inputs there; the runner writes every call's outputs into the slots of that
call's set, after checking that each is a torch.Tensor of the slot's dtype, shape and device (else it answers
`rejected`, reason `outputs`). Answers are JSON lines only, each echoing its request's nonce; no object of the
candidate's is ever serialised. The runner never sees the reference outputs and is not told which calls will be
checked: the evaluator chooses them after the answer, and keeps this process stopped (SIGSTOP) in between.

Commands (JSON lines on stdin; answers on the original stdout, the candidate's own prints go to stderr):
  open {candidate, work}       a standby runner (started with "-") learns its one candidate
  bind {memory, layout, set_offsets}   maps the shared buffers (CPU: the memfd comes with it over the socket pair
                               whose end is fd $KEVOLVE_RUNNER_FDS; closed once received)
  confine {model, memory_mb, processes}   reads the candidate's source and the reference's weights (`model`, a
                               torch.save file), then confines itself (see "the sandbox" below; `processes` false:
                               no cgroup holds what it starts, so it may start none); answers {"sandbox": level}
  load {}                      imports the candidate, builds ModelNew under the evaluator's seed with the
                               reference's weights wherever names and shapes match; then the last seccomp stage
  run {set, values?}           one call on input set `set`; outputs into its slots
  time {sets, values?}         one timed call per listed set, in order (timed_calls); answers {"ns": [...]}
`values` carries the non-tensor inputs of sets the evaluator refilled, as {"SET": [value or null per input]}.

The evaluator imports this module for `timed_calls` (it times the reference with the same procedure, which is
also how it knows the loop's own overhead) and for the CUDA IPC helpers; everything with side effects runs
under main().
"""
import base64
import ctypes
import gc
import json
import mmap
import os
import resource
import signal
import socket
import sys
import tempfile
import time
import types

_clock = time.perf_counter_ns  # bound before any candidate code runs; looked up per `time` command

NOBODY = 65534  # the uid inside a user namespace (not root)
RUNNER_ID_BASE = 2000000000  # as root the runner takes uid/gid RUNNER_ID_BASE + its pid (backends/process/identity.hpp)


def runner_uid():
    """The uid (and gid) of this runner once confined as root: one of its own, unique among live processes, owned by
    no file or user, so that two runners cannot signal, trace or read each other."""
    return RUNNER_ID_BASE + os.getpid()
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 4, 36, 38
_namespaces = ("none", "the runner was not started as a process of its own")  # set by enter_namespaces()
_mount_ns = "not entered"  # enter_mount_namespace(): "" (a mount namespace of its own, its mounts private), or why not


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _errno_text():
    return os.strerror(ctypes.get_errno())


def enter_namespaces(cuda=False):
    """Runs first in the runner process, while it has one thread. Root: own network, IPC and UTS namespaces (the
    uid changes in confine(), once what only root may open is open). Not root: a user namespace (with those three)
    in which this process is uid/gid 65534, the evaluator's uid outside. Records (kind, detail) in _namespaces:
    kind "root" (detail: "" or why unshare failed), "userns", or "none" (detail: why).
    `cuda`: the same for root, the mount namespace included (legacy CUDA IPC needs the evaluator's PID namespace,
    which these leave alone; the uid changes after the driver is up and the region is mapped); not root, no user
    namespace (not tried with the driver): the runner keeps the evaluator's uid, and the level says so."""
    global _namespaces, _mount_ns
    libc = _libc()
    flags = 0x40000000 | 0x08000000 | 0x04000000  # CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    if cuda and os.geteuid() != 0:
        _namespaces = ("none", "CUDA device, not root: no user namespace with the CUDA driver")
        return
    if os.geteuid() == 0:
        _namespaces = ("root", "" if libc.unshare(flags) == 0 else _errno_text())
        enter_mount_namespace()  # CUDA too: the driver's device files and legacy IPC work inside one
        return
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(flags | 0x10000000) != 0:  # CLONE_NEWUSER
        _namespaces = ("none", "user namespaces refused: " + _errno_text())
        return
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", "%d %d 1" % (NOBODY, uid)), ("gid_map", "%d %d 1" % (NOBODY, gid))):
            with open("/proc/self/" + name, "w") as f:
                f.write(text)
        os.setresgid(NOBODY, NOBODY, NOBODY)
        os.setresuid(NOBODY, NOBODY, NOBODY)
    except OSError as e:
        _namespaces = ("none", "user namespace id maps: %s" % e)
        return
    _namespaces = ("userns", "")


# mount(2) flags
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 32, 4096, 16384, 1 << 18
TMP_MB = 256  # the private /tmp, which holds the build's scratch folder (docs/evaluation.md says why this size)
SCRATCH = "/tmp/kevolve-scratch"


def enter_mount_namespace():
    """Root, at start (unshare(CLONE_NEWNS) implies CLONE_FS, refused once a second thread shares this
    process's fs_struct, hence here, before torch starts its threads): a mount namespace of its own, every
    mount in it private, so that nothing mounted here reaches the evaluator's namespace. The mounts
    themselves wait for `confine` (private_filesystem): a standby runner learns its work folder, in the
    evaluator's /tmp, only later. Sets _mount_ns: "" when in force, else why not (then nothing is mounted: a
    mount under a shared "/" would reach the evaluator's namespace)."""
    global _mount_ns
    libc = _libc()
    if libc.unshare(0x00020000) != 0:  # CLONE_NEWNS
        _mount_ns = "unshare: " + _errno_text()
    elif libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        _mount_ns = "its mounts could not be made private: " + _errno_text()
    else:
        _mount_ns = ""


def private_filesystem():
    """Root, at `confine`, once the candidate's source and the reference's weights are read and before the
    uid changes (as kevolve-cpu-runner, backends/process/identity.cpp): in the mount namespace entered at start,
    a private tmpfs on /tmp (TMP_MB, mode 1777) and on /dev/shm (64 MiB, noexec), a /proc of its own with
    hidepid=2 (as nobody it sees no process of another user: not the evaluator, not the node, not their command
    lines), then the root filesystem bound read-only. The scratch folder (TMPDIR: a kernel's build) is made in
    the private /tmp, owned by nobody, and becomes the working directory (the evaluator's work folder, under the
    machine's /tmp and now read-only, is left: through it ".." would reach the machine's /tmp). Returns (the
    filesystem part of the sandbox level, the scratch folder or None: the evaluator's scratch stays)."""
    if _mount_ns:
        return "shared filesystem (no mount namespace: %s)" % _mount_ns, None
    libc = _libc()
    done, failed = ["private mounts"], []

    def note(ok, what):
        (done if ok else failed).append(what if ok else "%s (%s)" % (what, _errno_text()))
        return ok
    scratch = None
    if note(libc.mount(b"tmpfs", b"/tmp", b"tmpfs", MS_NOSUID | MS_NODEV, b"size=%dm,mode=1777" % TMP_MB) == 0,
            "private /tmp (%d MiB)" % TMP_MB):
        os.mkdir(SCRATCH, 0o700)
        os.chown(SCRATCH, runner_uid(), runner_uid())
        os.chdir(SCRATCH)
        scratch = SCRATCH
    note(libc.mount(b"tmpfs", b"/dev/shm", b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, b"size=64m,mode=1777") == 0,
         "private /dev/shm")
    note(libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, b"hidepid=2") == 0,
         "own /proc showing no other user's process")
    if scratch is None:  # the build writes into the evaluator's scratch folder, under the machine's /tmp: left writable
        failed.append("read-only root (no private /tmp for the build)")
    else:
        note(libc.mount(None, b"/", None, MS_BIND | MS_REMOUNT | MS_RDONLY, None) == 0, "read-only root")
    return ", ".join(done) + (" (not in force: %s)" % ", ".join(failed) if failed else ""), scratch


if __name__ == "__main__":  # the runner process (not the evaluator, which imports this module): before torch's threads
    enter_namespaces(cuda=len(sys.argv) > 2 and sys.argv[2].startswith("cuda"))

import torch  # noqa: E402

# Bound before any candidate code runs, like the clock: the event and stream functions the timing calls.
_Event = torch.cuda.Event
_EventBase = getattr(torch._C, "_CudaEventBase", None)
_ev_record = getattr(_EventBase, "record", None)
_ev_elapsed = getattr(_EventBase, "elapsed_time", None)
_ev_sync = getattr(_EventBase, "synchronize", None)
_current_stream = torch.cuda.current_stream
_synchronize = torch.cuda.synchronize

ALIGN = 4096  # every tensor of the shared region starts on a page


# ---- timing: one procedure for the candidate (here) and the reference (in the evaluator) --------------------

def _elapsed_ns(b, e):
    """The time between two recorded events (waits for the end event), through the functions bound above."""
    if _ev_elapsed is not None:
        _ev_sync(e)
        return int(_ev_elapsed(b, e) * 1e6)
    e.synchronize()
    return int(b.elapsed_time(e) * 1e6)


def _record(ev):
    if _ev_record is not None:
        _ev_record(ev, _current_stream())
    else:
        ev.record()


def timed_calls(fn, sets, store, dev, flush, clock, after=None):
    """Calls fn(*inputs) once per input list of `sets`, in order, each timed alone: CUDA, by events on the
    current stream with the L2 flushed (`flush.fill_`) before the start event; CPU, by `clock` around the
    call. store(i, outputs) runs right after call i, outside its timing (on CUDA the span waits for what it
    queued, so that both sides' spans hold the same device work); after(i, outputs), if given, after that and
    outside the span. The garbage collector is off meanwhile (as timeit does). Returns (ns, spans): each call's
    time, and each call's whole span by `clock` (flush, call, store), both in ns."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _timed_calls(fn, sets, store, dev, flush, clock, after)
    finally:
        if collecting:
            gc.enable()


def _timed_calls(fn, sets, store, dev, flush, clock, after):
    ns, spans = [], []
    for i, inputs in enumerate(sets):
        s0 = clock()
        if dev.type == "cuda":
            # Everything but the call before the flush: the flush keeps the device busy (about 30 us on an H200)
            # while the start event and the call are queued, so host overhead up to that is hidden on both sides.
            b, e = _Event(enable_timing=True), _Event(enable_timing=True)
            with torch.no_grad():
                flush.fill_(1)
                _record(b)
                outs = fn(*inputs)
                _record(e)
            t = _elapsed_ns(b, e)
        else:
            t0 = clock()
            with torch.no_grad():
                outs = fn(*inputs)
            t = clock() - t0
        store(i, outs)
        if dev.type == "cuda":
            _synchronize()
        spans.append(clock() - s0)
        ns.append(t)
        if after is not None:
            after(i, outs)
        outs = None  # freed before the next call, outside its span: a call never runs beside the last one's outputs
    return ns, spans


# ---- the shared region ------------------------------------------------------------------------------------

def carve(region, offset, spec, dev):
    """The tensor `spec` ({dtype, shape, stride, nbytes}) describes at byte `offset` of `region` (a mmap, or
    the device address of a CUDA allocation). Each tensor gets a storage of its own, so a write into one (an
    output slot) does not bump the version counter of another (an input)."""
    dtype, n = getattr(torch, spec["dtype"]), spec["nbytes"]
    if n == 0:
        flat = torch.empty(0, dtype=dtype, device=dev)
    elif isinstance(region, int):
        flat = torch.as_tensor(_DeviceMemory(region + offset, n), device=dev).view(dtype)
    else:
        flat = torch.frombuffer(region, dtype=torch.uint8, count=n, offset=offset).view(dtype)
    return flat.as_strided(spec["shape"], spec.get("stride") or _contiguous_strides(spec["shape"]))


def _contiguous_strides(shape):
    strides, n = [], 1
    for d in reversed(shape):
        strides.append(n)
        n *= max(1, d)
    return list(reversed(strides))


class _CUipcMemHandle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * 64)]


class _DeviceMemory:
    """Device memory torch did not allocate, seen as one uint8 tensor through __cuda_array_interface__."""

    def __init__(self, ptr, size):
        self.__cuda_array_interface__ = {"shape": (size,), "typestr": "|u1", "data": (ptr, False), "version": 2, "strides": None}


_driver = None


def cuda_driver():
    """The CUDA driver library with the few entry points the shared region uses (after torch set the device
    up, so its primary context is current)."""
    global _driver
    if _driver is None:
        lib = ctypes.CDLL("libcuda.so.1")
        u64p = ctypes.POINTER(ctypes.c_uint64)
        lib.cuMemAlloc_v2.argtypes = [u64p, ctypes.c_size_t]
        lib.cuMemFree_v2.argtypes = [ctypes.c_uint64]
        lib.cuIpcGetMemHandle.argtypes = [ctypes.POINTER(_CUipcMemHandle), ctypes.c_uint64]
        lib.kv_ipc_open = getattr(lib, "cuIpcOpenMemHandle_v2", None) or lib.cuIpcOpenMemHandle
        lib.kv_ipc_open.argtypes = [u64p, _CUipcMemHandle, ctypes.c_uint]
        lib.cuGetErrorString.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        _driver = lib
    return _driver


def cuda_check(rc, what):
    if rc != 0:
        msg = ctypes.c_char_p()
        cuda_driver().cuGetErrorString(rc, ctypes.byref(msg))
        raise RuntimeError("%s: CUDA error %d (%s)" % (what, rc, msg.value.decode() if msg.value else "?"))


def cuda_exported(size, dev):
    """A device allocation of its own (cuMemAlloc, not torch's caching allocator: no other tensor of the
    evaluator can share its block, and no IPC reference counting keeps it alive after a killed runner): its
    address, its IPC handle (64 bytes) and the function that frees it."""
    torch.zeros(1, device=dev)  # torch's context for the device is current on this thread
    lib = cuda_driver()
    ptr, handle = ctypes.c_uint64(), _CUipcMemHandle()
    cuda_check(lib.cuMemAlloc_v2(ctypes.byref(ptr), size), "cuMemAlloc")
    try:
        cuda_check(lib.cuIpcGetMemHandle(ctypes.byref(handle), ptr.value), "cuIpcGetMemHandle")
    except BaseException:  # not exported: freed here, nobody else knows its address
        lib.cuMemFree_v2(ptr.value)
        raise

    def free():
        torch.cuda.synchronize(dev)
        lib.cuMemFree_v2(ptr.value)
    return ptr.value, ctypes.string_at(ctypes.addressof(handle), 64), free


def cuda_imported(handle):
    """The address, in this process, of the evaluator's allocation with IPC handle `handle` (64 bytes)."""
    lib = cuda_driver()
    h, ptr = _CUipcMemHandle(), ctypes.c_uint64()
    ctypes.memmove(ctypes.addressof(h), handle, 64)
    cuda_check(lib.kv_ipc_open(ctypes.byref(ptr), h, 1), "cuIpcOpenMemHandle")  # 1: lazy peer access
    return ptr.value


# ---- the sandbox: the runner confines itself before any candidate code runs ---------------------------------
# As kevolve-cpu-runner does (backends/cpu/runner/sandbox.cpp; docs/evaluation.md, "Threat model of the CPU
# runner"): another uid without capabilities in empty network, IPC and UTS namespaces, resource limits, and on the
# CPU a seccomp filter in two stages (libseccomp through ctypes). Order in the runner process:
#   start (one thread)  enter_namespaces(): network + IPC + UTS namespaces (root), or a user namespace in which it
#                       is nobody (not root); unshare acts on the calling thread only, so this runs before torch
#                       starts its threads. Root: also a mount namespace, its mounts made private
#   bind                the shared region is mapped (its memfd comes over a socket pair, closed then)
#   confine             the candidate's source and the reference's weights are read; then (root) the private
#                       filesystem: tmpfs on /tmp (the build's scratch folder, the working directory) and /dev/shm,
#                       /proc with hidepid=2, "/" read-only; then a uid/gid of its own (root: RUNNER_ID_BASE + pid),
#                       limits, and seccomp stage 1: a deny-list that kills what an escape needs and no compiler
#                       does, for the candidate's import and constructor (which may build its kernel: the compiler
#                       runs as child processes under it)
#   load                the candidate is imported and built; then no process of its own may be left, and seccomp
#                       stage 2, an allow-list (no processes, no file writes, no sockets), holds until the end
# On CUDA (root): the same namespaces and private filesystem (not PID: legacy CUDA IPC refuses a handle from another
# PID namespace), the driver started and the region mapped by its IPC handle at bind while still root, then at
# confine the runner's own uid/gid
# and stage 1; RLIMIT_DATA instead of RLIMIT_AS (the driver reserves address space beyond any limit); stage 2
# after the first call (Triton and torch.compile build at their first call), with the driver's ioctls allowed.
# Not root on CUDA: the evaluator's uid, no namespaces, seccomp as above; the evaluator is non-dumpable
# (kevolve_py_eval.py), so a runner of its uid still cannot read or trace it. The level says which.

class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _drop_capabilities():
    """Empties this process's capability sets (in a user namespace, its first process keeps all of them however
    its uid is mapped). True when done."""
    hdr, data = _CapHeader(0x20080522, 0), (_CapData * 2)()  # _LINUX_CAPABILITY_VERSION_3
    return _libc().capset(ctypes.byref(hdr), data) == 0


def drop_identity(scratch):
    """Makes the runner a uid of its own without capabilities (after enter_namespaces); as root, `scratch` (its one
    writable folder) is handed to that uid first. Returns the identity part of the sandbox level; raises OSError
    when a step that must work fails."""
    kind, detail = _namespaces
    libc = _libc()
    if kind == "root":
        me = runner_uid()
        os.chown(scratch, me, me)
        os.setgroups([])
        os.setresgid(me, me, me)
        os.setresuid(me, me, me)  # glibc applies it to every thread
        if os.getresuid() != (me,) * 3 or os.getresgid() != (me,) * 3 or os.getgroups():
            raise OSError("the uid did not change")
        level = "uid %d (its own) without capabilities or groups" % me + (
            ", own network + IPC + UTS namespaces (no network)" if not detail else ", shared network (unshare refused: %s)" % detail)
    elif kind == "userns":
        if not _drop_capabilities():
            raise OSError("capset: " + _errno_text())
        level = ("user namespace (nobody without capabilities; the evaluator's uid outside, yet its /proc was refused "
                 "in a test), own network + IPC + UTS namespaces (no network)")
    else:
        level = "same uid %d as the evaluator (not root, %s)" % (os.getuid(), detail)
    # A change of uid makes the process non-dumpable (its /proc/self would be root's) and clears the parent-death
    # signal: both set again. ptrace and process_vm_* stay forbidden by seccomp.
    libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:  # no exec regains a privilege (seccomp_load sets it too)
        raise OSError("PR_SET_NO_NEW_PRIVS: " + _errno_text())
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # a process the candidate leaves behind stays this one's child
    return level


FILE_LIMIT = 64 << 20  # RLIMIT_FSIZE: the kernel build in the scratch folder, and the log (stderr is a file)


def limit_resources(dev, memory_mb, threads):
    """RLIMIT_CORE 0, RLIMIT_NPROC 4096 (per uid: a thread or fork bomb fails instead of exhausting the machine),
    RLIMIT_FSIZE (64 MiB; SIGXFSZ ignored, so an over-long write fails instead of killing), and on the CPU
    RLIMIT_AS: the present address space + `memory_mb` + room for thread stacks and malloc arenas. On CUDA, whose
    driver reserves address space far beyond any limit, RLIMIT_DATA instead (private writable memory: the present
    + `memory_mb` + the same room), set once the driver is up. Returns the limits' part of the sandbox level."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NPROC, (4096, 4096))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))
    names = ["NPROC", "CORE", "FSIZE"]
    key, limit = ("VmData:", resource.RLIMIT_DATA) if dev.type == "cuda" else ("VmSize:", resource.RLIMIT_AS)
    vm = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                vm = int(line.split()[1]) * 1024
    room = (1 << 30) + max(1, threads) * (72 << 20)  # per thread: an 8 MiB stack, a 64 MiB malloc arena
    total = vm + (int(memory_mb) << 20) + room
    resource.setrlimit(limit, (total, total))
    names.insert(0, "DATA" if dev.type == "cuda" else "AS")
    return "RLIMIT_" + "/".join(names)


# libseccomp (through ctypes: seccomp_rule_add_array, not the variadic seccomp_rule_add).
SCMP_ACT_KILL_PROCESS, SCMP_ACT_ALLOW = 0x80000000, 0x7FFF0000
SCMP_CMP_NE, SCMP_CMP_EQ, SCMP_CMP_MASKED_EQ = 1, 4, 7
SCMP_FLTATR_CTL_TSYNC, SCMP_FLTATR_CTL_OPTIMIZE = 4, 8


def SCMP_ACT_ERRNO(e):
    return 0x00050000 | (e & 0xFFFF)


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("a", ctypes.c_uint64), ("b", ctypes.c_uint64)]


class _Filter:
    """One seccomp filter under construction: allow/kill/fail rules, then load() (on every thread: TSYNC)."""

    def __init__(self, default):
        lib = self.lib = ctypes.CDLL("libseccomp.so.2")
        lib.seccomp_init.restype = ctypes.c_void_p
        lib.seccomp_init.argtypes = [ctypes.c_uint32]
        lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(_ArgCmp)]
        lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
        lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
        lib.seccomp_load.argtypes = [ctypes.c_void_p]
        lib.seccomp_release.argtypes = [ctypes.c_void_p]
        self.ctx = lib.seccomp_init(default)
        if not self.ctx:
            raise OSError("seccomp_init failed")

    def rule(self, action, names, *conds):
        """`action` for each system call of `names` (unknown to this kernel's table: skipped) when all `conds`
        ((arg, op, a, b) tuples) hold."""
        arr = (_ArgCmp * max(1, len(conds)))(*[_ArgCmp(*c) for c in conds])
        for name in names.split():
            nr = self.lib.seccomp_syscall_resolve_name(name.encode())
            if nr < 0:
                continue
            rc = self.lib.seccomp_rule_add_array(self.ctx, action, nr, len(conds), arr)
            if rc != 0:
                raise OSError("seccomp rule for %s: %s" % (name, os.strerror(-rc)))

    def load(self):
        try:
            rc = self.lib.seccomp_attr_set(self.ctx, SCMP_FLTATR_CTL_TSYNC, 1)  # every thread, torch's pool too
            if rc != 0:
                raise OSError("seccomp TSYNC: " + os.strerror(-rc))
            self.lib.seccomp_attr_set(self.ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)  # a binary tree: cheaper per call (optional)
            rc = self.lib.seccomp_load(self.ctx)  # sets no_new_privs first
            if rc != 0:
                raise OSError("seccomp_load: " + os.strerror(-rc))
        finally:
            self.lib.seccomp_release(self.ctx)


# Killed in both stages: what an escape needs and neither Python, torch nor a compiler does. Sockets (the network
# namespace is empty anyway), tracing and other processes' memory, devices and FIFOs, extended attributes,
# io_uring (which would bypass the filter), scheduling (own threads' affinity aside), mounts, namespaces, BPF,
# perf, userfaultfd, keys, modules, uid changes.
_KILL_ALWAYS = ("socket connect bind listen accept accept4 ptrace process_vm_readv process_vm_writev pidfd_getfd "
                "pidfd_send_signal kcmp process_madvise mknod mknodat setxattr lsetxattr fsetxattr removexattr "
                "lremovexattr fremovexattr io_uring_setup io_uring_enter io_uring_register setpriority "
                "sched_setscheduler sched_setparam sched_setattr ioprio_set mount umount2 chroot pivot_root setns "
                "unshare fsopen fsmount move_mount open_tree bpf perf_event_open userfaultfd keyctl add_key request_key "
                "init_module finit_module delete_module kexec_load kexec_file_load name_to_handle_at open_by_handle_at "
                "setuid setgid setreuid setregid setresuid setresgid setgroups setfsuid setfsgid capset iopl ioperm "
                "modify_ldt pkey_mprotect pkey_alloc")


def _kill_signals_to_evaluator(f):
    """Signals and affinity aimed at the evaluator (its pid or process group) or at everyone (-1) kill. pid_t is
    32 bits: compared under a 32-bit mask, whatever the register's upper half holds."""
    ppid = os.getppid()
    for target in (ppid, -ppid & 0xFFFFFFFF, 0xFFFFFFFF):
        f.rule(SCMP_ACT_KILL_PROCESS, "kill tkill tgkill sched_setaffinity", (0, SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, target))


def _kill_new_processes(f):
    """fork, vfork and clone without CLONE_THREAD kill; clone3 (its flags in memory seccomp cannot read) fails with
    ENOSYS, so that glibc falls back to clone for its threads."""
    import errno
    CLONE_THREAD = 0x00010000
    f.rule(SCMP_ACT_KILL_PROCESS, "fork vfork")
    f.rule(SCMP_ACT_KILL_PROCESS, "clone", (0, SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0))
    f.rule(SCMP_ACT_ERRNO(errno.ENOSYS), "clone3")


def seccomp_stage1(processes=True):
    """Before the candidate's import: everything is allowed (it may build its kernel with a compiler, as child
    processes) except _KILL_ALWAYS and signals or affinity aimed at the evaluator, which kill. `processes` False
    (the evaluator could make no cgroup to hold what the candidate starts): new processes kill too, from the
    candidate's first instruction on."""
    f = _Filter(SCMP_ACT_ALLOW)
    f.rule(SCMP_ACT_KILL_PROCESS, _KILL_ALWAYS)
    _kill_signals_to_evaluator(f)
    if not processes:
        _kill_new_processes(f)
    f.load()


_ALLOW = ("read readv pread64 preadv write writev pwrite64 lseek close dup fstat newfstatat statx stat lstat "
          "getdents64 readlink readlinkat access faccessat faccessat2 getcwd fcntl fstatfs statfs fadvise64 munmap "
          "mremap madvise brk mincore futex futex_waitv set_robust_list get_robust_list rseq set_tid_address exit "
          "exit_group rt_sigaction rt_sigprocmask rt_sigreturn rt_sigtimedwait sigaltstack getpid gettid getppid "
          "getpgrp getpgid getsid getuid geteuid getgid getegid getresuid getresgid getgroups sched_yield "
          "sched_getaffinity sched_getparam sched_getscheduler sched_getattr sched_get_priority_max "
          "sched_get_priority_min getpriority getcpu clock_gettime clock_getres clock_nanosleep nanosleep gettimeofday "
          "time times getrandom getrlimit getrusage sysinfo uname membarrier arch_prctl prctl poll ppoll select "
          "pselect6 get_mempolicy restart_syscall")
# Killed after the candidate is built: processes and exec, the rest of the socket calls, signals to anyone,
# file creation, removal and changes, memfd, splicing, SysV IPC.
_KILL_AFTER_LOAD = ("fork vfork execve execveat socketpair sendto sendmsg sendmmsg recvfrom recvmsg recvmmsg kill tkill "
                    "pidfd_open creat unlink unlinkat rename renameat renameat2 mkdir mkdirat rmdir truncate ftruncate "
                    "fallocate link linkat symlink symlinkat chmod fchmod fchmodat chown fchown lchown fchownat utime "
                    "utimes utimensat futimesat memfd_create memfd_secret splice tee vmsplice sendfile copy_file_range "
                    "shmget shmat shmctl msgget msgsnd msgrcv semget semop mq_open seccomp personality")


# What the CUDA driver also needs once it is up: ioctls and device mappings (mmap of its device files, allowed
# above as any mapping that is not executable), its event threads' polling, pinned host memory.
_ALLOW_CUDA = "ioctl epoll_create1 epoll_ctl epoll_wait epoll_pwait eventfd2 pipe2 mlock munlock mlock2 memfd_create"


def seccomp_stage2(jit, cuda=False):
    """After the candidate is built, stacked on stage 1 (a filter can only be added): an allow-list. Any system call
    not allowed fails with EPERM; the named ones kill; files open for reading only (any write flag kills); threads
    (clone with CLONE_THREAD) but no processes; executable mappings only of files (libraries), never anonymous ones,
    and, unless `jit` (oneDNN's JIT), no memory made executable by mprotect; signals only within this process;
    affinity of its own threads only. `cuda`: also _ALLOW_CUDA, and files may be opened read-write (the driver
    opens its device files so), still never created, truncated, appended to or opened write-only."""
    import errno
    f = _Filter(SCMP_ACT_ERRNO(errno.EPERM))
    f.rule(SCMP_ACT_ALLOW, _ALLOW + (" " + _ALLOW_CUDA if cuda else ""))
    kill = _KILL_ALWAYS + " " + _KILL_AFTER_LOAD
    if cuda:
        kill = " ".join(k for k in kill.split() if k not in _ALLOW_CUDA.split())
    f.rule(SCMP_ACT_KILL_PROCESS, kill)
    f.rule(SCMP_ACT_ALLOW, "tgkill", (0, SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, os.getpid()))  # abort(), own threads
    f.rule(SCMP_ACT_ALLOW, "sched_setaffinity", (0, SCMP_CMP_EQ, 0, 0))
    f.rule(SCMP_ACT_ALLOW, "prlimit64", (0, SCMP_CMP_EQ, 0, 0))  # its own (lowering only: raising needs a capability)
    f.rule(SCMP_ACT_ALLOW, "prlimit64", (2, SCMP_CMP_EQ, 0, 0))  # reading any
    flags = (os.O_WRONLY, os.O_CREAT, os.O_TRUNC, os.O_APPEND) + (() if cuda else (os.O_RDWR,))
    write = 0
    for flag in flags:
        write |= flag
    f.rule(SCMP_ACT_ALLOW, "open", (1, SCMP_CMP_MASKED_EQ, write, 0))
    f.rule(SCMP_ACT_ALLOW, "openat", (2, SCMP_CMP_MASKED_EQ, write, 0))
    for flag in flags:
        f.rule(SCMP_ACT_KILL_PROCESS, "open", (1, SCMP_CMP_MASKED_EQ, flag, flag))
        f.rule(SCMP_ACT_KILL_PROCESS, "openat", (2, SCMP_CMP_MASKED_EQ, flag, flag))
    f.rule(SCMP_ACT_ERRNO(errno.ENOSYS), "openat2 clone3")  # arguments in memory seccomp cannot read: glibc falls back
    CLONE_THREAD = 0x00010000
    f.rule(SCMP_ACT_ALLOW, "clone", (0, SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD))
    f.rule(SCMP_ACT_KILL_PROCESS, "clone", (0, SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0))
    PROT_EXEC, MAP_ANONYMOUS = 0x4, 0x20
    f.rule(SCMP_ACT_ALLOW, "mmap", (2, SCMP_CMP_MASKED_EQ, PROT_EXEC, 0))
    f.rule(SCMP_ACT_ALLOW, "mmap", (2, SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC), (3, SCMP_CMP_MASKED_EQ, MAP_ANONYMOUS, 0))
    f.rule(SCMP_ACT_KILL_PROCESS, "mmap", (2, SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC), (3, SCMP_CMP_MASKED_EQ, MAP_ANONYMOUS, MAP_ANONYMOUS))
    if jit:  # oneDNN generates its kernels (convolutions, GELU, ...) into heap memory it makes RWX with mprotect
        f.rule(SCMP_ACT_ALLOW, "mprotect")
    else:
        f.rule(SCMP_ACT_ALLOW, "mprotect", (2, SCMP_CMP_MASKED_EQ, PROT_EXEC, 0))
        f.rule(SCMP_ACT_KILL_PROCESS, "mprotect", (2, SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC))
    f.load()


def jit_memory():
    """Whether torch's CPU kernels need executable heap memory: oneDNN (mkldnn) JIT-compiles its kernels."""
    return bool(torch.backends.mkldnn.is_available())


def reap_strays():
    """Kills the processes the candidate's import left behind (this process is their subreaper, so they are its
    children however they were started). Returns how many there were."""
    strays = set()
    for tid in os.listdir("/proc/self/task"):
        try:
            with open("/proc/self/task/%s/children" % tid) as f:
                strays.update(int(p) for p in f.read().split())
        except OSError:
            pass
    for pid in strays:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return len(strays)


# ---- the runner process ------------------------------------------------------------------------------------

class _Rejected(Exception):
    """The candidate's outputs do not fit the slots (not tensors, or another dtype, shape, device or count)."""


def keep_freed_memory():
    """glibc keeps what is freed instead of returning it to the system (no trimming; blocks below 32 MiB from
    the heap): a fresh runner then pays no more page faults per allocation than the long-running evaluator
    that times the reference, which calls this too."""
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(-1, (1 << 31) - 1)  # M_TRIM_THRESHOLD
        libc.mallopt(-3, 32 << 20)       # M_MMAP_THRESHOLD (its maximum)
    except (OSError, AttributeError):
        pass


def _die_with_parent():
    """Killed with its evaluator: a candidate stuck in a loop must not outlive the process that watches it."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError):
        pass


def _type_name(o):
    t = type(o)
    return "%s.%s" % (t.__module__, t.__qualname__) if t.__module__ not in ("builtins", None) else t.__qualname__


class _Io:
    """The mapped region: per set, its input tensors (and non-tensor values) and its output slots."""

    def __init__(self, cmd, dev):
        mem = cmd["memory"]
        if mem["kind"] == "cpu":
            with socket.socket(fileno=int(os.environ["KEVOLVE_RUNNER_FDS"])) as chan:  # the evaluator's memfd
                fds = socket.recv_fds(chan, 1, 1)[1]
            if len(fds) != 1:
                raise RuntimeError("the evaluator sent no memory descriptor")
            fd = fds[0]
            try:  # populated now: no page fault of this mapping lands in a timed pass
                region = mmap.mmap(fd, mem["size"], flags=mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0))
            finally:
                os.close(fd)
        else:
            torch.zeros(1, device=dev)  # torch's context for the device is current on this thread
            region = cuda_imported(base64.b64decode(mem["handle"]))
            os.close(int(os.environ["KEVOLVE_RUNNER_FDS"]))  # the evaluator's socket pair: not needed on CUDA
        layout = cmd["layout"]
        self.inputs, self.slots, self.values = [], [], []
        for off in cmd["set_offsets"]:
            self.inputs.append([carve(region, off + s["offset"], s, dev) if "value" not in s else None for s in layout["inputs"]])
            self.slots.append([carve(region, off + s["offset"], s, dev) for s in layout["outputs"]])
            self.values.append([s.get("value") for s in layout["inputs"]])

    def update(self, values):
        for k, vals in (values or {}).items():
            self.values[int(k)] = vals

    def args(self, k):
        return [t if t is not None else v for t, v in zip(self.inputs[k], self.values[k])]

    def store(self, k, outs):
        """Copies one call's outputs into set k's slots, after checking they fit them."""
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        slots = self.slots[k]
        if len(outs) != len(slots):
            raise _Rejected("ModelNew returned %d outputs, the reference returns %d" % (len(outs), len(slots)))
        for i, (o, s) in enumerate(zip(outs, slots)):
            if not isinstance(o, torch.Tensor):
                raise _Rejected("output %d is a %s, not a torch.Tensor" % (i, _type_name(o)))
            if o.dtype != s.dtype or tuple(o.shape) != tuple(s.shape) or o.device != s.device:
                raise _Rejected("output %d is a %s tensor of shape %s on %s; expected %s, shape %s, on %s" % (
                    i, o.dtype, tuple(o.shape), o.device, s.dtype, tuple(s.shape), s.device))
            s.copy_(o)


def main():
    """kevolve_py_runner.py CANDIDATE|- DEVICE THREADS: answers the evaluator's commands until its stdin closes."""
    path, device, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    _die_with_parent()
    keep_freed_memory()
    if str(os.getppid()) != os.environ.get("KEVOLVE_RUNNER_PARENT", str(os.getppid())):  # its evaluator is already gone
        sys.exit(1)
    reply = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    torch.set_num_threads(threads)
    dev = torch.device(device)
    if dev.type == "cuda" and torch.cuda.is_available():
        dev = torch.device("cuda", torch.cuda.current_device())
        torch.zeros(1, device=dev)  # the device's context, before the candidate's clock starts
    model, io, flush, stage2_pending = None, None, None, False
    sandbox, source, weights = None, None, None  # the sandbox level once confined; what confine read for load
    for line in sys.stdin:
        cmd = json.loads(line)
        op, nonce = cmd.get("op"), cmd.get("nonce")

        def answer(**kw):
            kw["nonce"] = nonce
            reply.write(json.dumps(kw) + "\n")
            reply.flush()
        try:
            if op == "open":  # a standby runner learns its one candidate
                if path != "-":
                    answer(status="runtime_error", reason="exception", message="this runner already has its candidate")
                    continue
                path = cmd["candidate"]
                os.chdir(cmd["work"])
                answer(status="ok", message="")
            elif op == "confine":  # before the candidate: what only the evaluator's uid may read, then the sandbox
                if sandbox is not None:
                    raise RuntimeError("this runner is confined already")
                with open(path) as f:
                    source = f.read()
                try:
                    weights = torch.load(cmd["model"], weights_only=True)
                except Exception:  # a torch without weights_only, or init args it refuses (torch 1.13: floats)
                    weights = torch.load(cmd["model"])  # the evaluator's file, read before any candidate code
                try:
                    files, scratch = None, None
                    if _namespaces[0] == "root":  # as root, before the uid changes
                        files, scratch = private_filesystem()
                    scratch = scratch or os.path.join(os.getcwd(), "scratch")  # else the evaluator's, writable for the runner
                    for var in ("TMPDIR", "TORCH_EXTENSIONS_DIR", "TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR",
                                "XDG_CACHE_HOME", "CUDA_CACHE_PATH"):
                        os.environ[var] = scratch
                    tempfile.tempdir = scratch
                    sys.dont_write_bytecode = True  # no __pycache__ writes (file writes kill after the load)
                    level = drop_identity(scratch) + (", " + files if files else "") + ", " + limit_resources(
                        dev, cmd.get("memory_mb", 4096), threads)
                    processes = cmd.get("processes") is True
                    seccomp_stage1(processes)
                    if not processes:
                        level += ", no new processes from the candidate's import on (no cgroup to hold them: its kernel cannot be built by a compiler)"
                    if dev.type == "cuda":
                        level += (", no_new_privs, seccomp (a deny-list while ModelNew is imported, built and first called, "
                                  "then an allow-list with the CUDA driver's ioctls; files may be opened read-write, never "
                                  "created or truncated)")
                    else:
                        level += ", seccomp (a deny-list while ModelNew is imported and built, then an allow-list%s)" % (
                            "; mprotect may make memory executable, for oneDNN's JIT" if jit_memory() else "")
                except OSError as e:
                    answer(status="runtime_error", reason="exception", message="the sandbox could not be set up: %s" % e)
                    return
                sandbox = level
                answer(status="ok", sandbox=level, message="")
            elif op == "load":
                if sandbox is None:
                    raise RuntimeError("the runner loads a candidate only once confined")
                mod = types.ModuleType("kevolve_candidate")
                mod.__file__ = path
                exec(compile(source, path, "exec"), mod.__dict__)
                if not hasattr(mod, "ModelNew"):
                    answer(status="runtime_error", reason="load", message="the candidate defines no ModelNew")
                    continue
                m, weights = weights, None
                torch.manual_seed(m["seed"])
                model = mod.ModelNew(*m["init"]).to(dev).eval()
                mine = model.state_dict()
                same = {k: v for k, v in m["state"].items() if k in mine and mine[k].shape == v.shape}
                model.load_state_dict(same, strict=False)  # the reference's weights wherever the names match
                strays = reap_strays()
                if strays:
                    answer(status="rejected", reason="isolation", message="loading ModelNew left %d process(es) running" % strays)
                    return
                if dev.type != "cuda":
                    seccomp_stage2(jit_memory())
                else:  # Triton and torch.compile build their kernels at the first call, with compilers as child processes
                    stage2_pending = True
                answer(status="ok", copied=len(same), message="")
            elif op == "bind":
                io = _Io(cmd, dev)
                answer(status="ok", message="")
            elif op == "run":
                io.update(cmd.get("values"))
                k = int(cmd["set"])
                with torch.no_grad():
                    outs = model(*io.args(k))
                io.store(k, outs)
                outs = None  # in its slot now: not kept while stopped, nor beside the next call
                if dev.type == "cuda":
                    _synchronize()  # bound before the candidate ran: what it queued is done before the answer
                if stage2_pending:
                    stage2_pending = False
                    strays = reap_strays()
                    if strays:
                        answer(status="rejected", reason="isolation", message="the first call of ModelNew left %d process(es) running" % strays)
                        return
                    seccomp_stage2(jit_memory(), cuda=True)
                answer(status="ok", message="")
            elif op == "time":
                io.update(cmd.get("values"))
                ks = [int(k) for k in cmd["sets"]]
                if dev.type == "cuda" and flush is None:
                    flush = torch.empty(int(2 * torch.cuda.get_device_properties(dev).L2_cache_size), dtype=torch.uint8, device=dev)
                ns, _ = timed_calls(model, [io.args(k) for k in ks], lambda i, outs: io.store(ks[i], outs), dev, flush, _clock)
                if dev.type == "cuda":
                    _synchronize()
                answer(status="ok", ns=ns, message="")
            else:
                answer(status="runtime_error", reason="exception", message="unknown command %r" % op)
        except _Rejected as e:
            answer(status="rejected", reason="outputs", message=str(e))
        except Exception as e:  # the candidate's failure, reported with its type
            answer(status="runtime_error", reason="exception", message="%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))


if __name__ == "__main__":
    main()
