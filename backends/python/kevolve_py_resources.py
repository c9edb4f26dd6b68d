"""kevolve's Python interpreter, trusted side: what an evaluation costs, in time and memory, at the problem's real sizes.

- Phases: the wall time of each phase of one evaluation (load, inputs, reference, compile, trials, timing,
  torch_compile), exclusive: a phase entered inside another pauses it, so the phases add up to the total.
- Call limits: how long one command of the runner may take follows the reference's own measured time: a
  start-up allowance (`--timeout`) plus CALL_FACTOR times the reference's call, so a problem whose eager
  forward takes 30 ms is never cut at a fixed limit on a cold start, and one that takes 2 s gets 200 s more.
- Memory: before the region is made and the runner started, what the evaluation will hold at its peak is
  counted from the problem's real sizes and the reference's measured working memory, and compared with the
  free device memory (CUDA) or the available RAM (CPU); a problem that cannot fit ends as `harness_error`
  with the figures ("needs 19.3 GB, 12.1 GB free"). The float64 reference of the eager-relative tolerance is
  added to the plan by kevolve_py_evaluate only where it fits beside the rest (else the tolerance is fixed).
- Release: one --serve process evaluates problem after problem; release_memory() drops what nothing refers to any
  more before a plan is made (Python's cyclic garbage: a problem module and its class, a traceback's frames,
  torch.compile's caches of another problem; then the CUDA allocator's cached blocks), and device_usage() says
  who holds the device's memory (this process's tensors, its cached blocks, its own allocations outside torch
  such as the shared region, other processes).
"""
import gc
import os
import time

import torch

CALL_FACTOR = 100        # a command may take this many times the reference's call, beyond the allowance
CUDA_CONTEXT = 1 << 30   # a runner's CUDA context and libraries on the device, about (0.5-1 GB measured)
GB = 1e9


class Phases:
    """Exclusive wall time per named phase, in seconds (`with phases("inputs"): ...`)."""

    def __init__(self):
        self.seconds, self._stack, self._t0 = {}, [], time.perf_counter()
        self.failed = None  # the innermost phase the last exception left (by a `with`)

    def __call__(self, name):
        return _Phase(self, name)

    def enter(self, name):
        """Starts phase `name` (pausing the one running) until leave()."""
        _Phase(self, name).__enter__()

    def leave(self):
        """Ends the phase entered last; the one it paused runs on."""
        self._switch(time.perf_counter())
        self._stack.pop()

    def _switch(self, now):
        if self._stack:
            top = self._stack[-1]
            self.seconds[top] = self.seconds.get(top, 0.0) + now - self._mark
        self._mark = now

    def current(self):
        """The innermost phase running now (None outside any)."""
        return self._stack[-1] if self._stack else None

    def failed_in(self, exc):
        """The phase exception `exc` was raised in: the innermost `with` phase it left, else the phase running now
        (one entered by enter(), which an exception does not leave)."""
        return getattr(exc, "kevolve_phase", None) or self.current() or "?"

    def report(self):
        """The phases in seconds (rounded to the ms), with their total since this object was made (a phase still
        running, after an exception, counts up to now)."""
        self._switch(time.perf_counter())
        out = {k: round(v, 3) for k, v in self.seconds.items()}
        out["total"] = round(time.perf_counter() - self._t0, 3)
        return out


class _Phase:
    def __init__(self, phases, name):
        self.p, self.name = phases, name

    def __enter__(self):
        self.p._switch(time.perf_counter())
        self.p._stack.append(self.name)

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and not getattr(exc, "kevolve_phase", None):  # the innermost phase it leaves
            self.p.failed = self.name
            try:
                exc.kevolve_phase = self.name  # on the exception itself: a reference here would keep its frames alive
            except (AttributeError, TypeError):
                pass
        self.p._switch(time.perf_counter())
        self.p._stack.pop()
        return False


def call_limit(allowance_s, ref_s):
    """Seconds one command of the runner may take: the start-up allowance plus CALL_FACTOR times the
    reference's measured call (`ref_s`), and the text that says so when it trips."""
    limit = allowance_s + CALL_FACTOR * ref_s
    why = "the start-up allowance of %g s + %d x the reference's measured %.4g ms" % (allowance_s, CALL_FACTOR, ref_s * 1e3)
    return limit, why


def available_ram():
    """Bytes of memory available (MemAvailable), else half the physical memory."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2


def free_memory(dev):
    """(bytes free for new allocations on `dev`, where): CUDA, the device's free memory once this process's
    cached blocks are returned (the region and the runner allocate outside this process's cache); CPU, the
    available RAM."""
    if dev.type == "cuda":
        torch.cuda.empty_cache()
        return torch.cuda.mem_get_info(dev)[0], "device memory"
    return available_ram(), "RAM"


_last_problem = {}  # device -> the problem file this process evaluated last (serve mode)


def release_memory(dev, problem=None):
    """Before a new plan: returns to the system (CUDA: to the device) what earlier evaluations left and nothing
    refers to any more. The cyclic garbage collector runs (a problem module is a cycle: its functions refer to
    its globals; so is a traceback kept past its handler, with the frames' tensors), torch.compile's caches are
    dropped when `problem` is not the one evaluated last on this device (its compiled graphs and guards belong to
    the other problem's model), and on CUDA the caching allocator's unused blocks are returned. Nothing of the
    trusted side is kept across evaluations but numbers (copy bandwidth, idle time, compile baselines): there is
    no cache of tensors to keep or drop."""
    key = str(dev)
    if problem is not None:
        if _last_problem.get(key) not in (None, problem):
            dynamo = getattr(torch, "_dynamo", None)
            if dynamo is not None and hasattr(dynamo, "reset"):
                try:
                    dynamo.reset()
                except Exception:  # an old or partial torch: nothing to drop
                    pass
        _last_problem[key] = problem
    gc.collect()
    if dev.type == "cuda" and torch.cuda.is_available():
        torch.cuda.synchronize(dev)
        torch.cuda.empty_cache()


def device_usage(dev, outside=0):
    """Who holds `dev`'s memory now, in bytes: {"total", "free", "allocated" (this process's live tensors),
    "cached" (blocks torch's allocator keeps for them, unused), "outside" (this process's allocations outside torch,
    given: the shared region), "others" (everything else in use: other processes, the runner and a standby runner
    among them, and this process's own CUDA context)}. CPU: total and free are the RAM (MemTotal, MemAvailable),
    allocated this process's resident memory, others the rest in use."""
    if dev.type == "cuda":
        free, total = torch.cuda.mem_get_info(dev)
        alloc = torch.cuda.memory_allocated(dev)
        cached = max(0, torch.cuda.memory_reserved(dev) - alloc)
    else:
        total, free, alloc, cached = _meminfo("MemTotal:"), available_ram(), _vm_rss(), 0
    others = max(0, total - free - alloc - cached - outside)
    return {"total": total, "free": free, "allocated": alloc, "cached": cached, "outside": outside, "others": others}


def describe_usage(u, where):
    """'x GB free of y GB device memory; this process: ... ; other processes: ...' for a device_usage()."""
    return "%.3g GB free of %.3g GB %s; this evaluator: %.3g GB %s, %.3g GB cached%s; other processes%s: %.3g GB" % (
        u["free"] / GB, u["total"] / GB, where, u["allocated"] / GB, "in tensors" if where == "device memory" else "resident",
        u["cached"] / GB,
        ", %.3g GB the shared region" % (u["outside"] / GB) if u["outside"] else "",
        " (the runner among them) and CUDA contexts" if where == "device memory" else "", u["others"] / GB)


def _meminfo(field):
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def _vm_rss():
    """This process's resident memory in bytes (/proc/self/status VmRSS)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


class Reference:
    """Measures one reference call: its time and, on CUDA, its working memory (the peak above what was allocated
    before it: the inputs' clones, the outputs and any intermediates). On the CPU the working memory is taken as
    the inputs' clones plus the outputs (no allocator statistics there)."""

    def __init__(self, dev):
        self.dev, self.ns, self.work = dev, 0, 0

    def measure(self, fn):
        cuda = self.dev.type == "cuda"
        if cuda:
            torch.cuda.synchronize(self.dev)
            base = torch.cuda.memory_allocated(self.dev)
            torch.cuda.reset_peak_memory_stats(self.dev)
        t0 = time.perf_counter_ns()
        out = fn()
        if cuda:
            torch.cuda.synchronize(self.dev)
        self.ns = time.perf_counter_ns() - t0
        if cuda:
            self.work = max(0, torch.cuda.max_memory_allocated(self.dev) - base)
        return out


def plan_memory(dev, in_bytes, out_bytes, set_bytes, ref_work, extra):
    """What one evaluation holds at its peak beyond one input set of the region, in bytes, by item: this side's
    copies of two sets' inputs, three outputs' worth (the expected outputs, the evidence copied out of a slot, the
    reference pass's outputs), the reference's working memory (measured), the runner's (its outputs and
    intermediates: taken as the reference's less its input clones, at least the outputs; its CUDA context), and
    `extra` (copy-bandwidth and L2-flush buffers, comparison temporaries). Returns (items, per_set): items maps a
    name to bytes; per_set is what each input set of the region adds."""
    runner = max(out_bytes, ref_work - in_bytes) + (CUDA_CONTEXT if dev.type == "cuda" else 0)
    items = {"trusted inputs (2 sets)": 2 * in_bytes, "trusted outputs (3 copies)": 3 * out_bytes,
             "reference working memory": ref_work, "runner working memory": runner, "buffers": extra}
    return items, set_bytes


def describe_need(items, per_set, nsets):
    """'inputs ... + ...' words for a memory plan."""
    parts = ["%.3g GB region (%d set%s of %.3g GB)" % (per_set * nsets / GB, nsets, "" if nsets == 1 else "s", per_set / GB)]
    parts += ["%.3g GB %s" % (v / GB, k) for k, v in items.items() if v]
    return ", ".join(parts)
