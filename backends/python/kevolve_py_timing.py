"""kevolve's Python interpreter, trusted side: clocks, statistics and the bounds on reported times.

summarize() turns call times into medians and percentiles; CopyBandwidth keeps the best copy bandwidth measured
(the floor below which a time is impossible); the reference's torch.compile timing is cached per problem file,
device, torch and thread count; on CUDA the evaluator and its runners share one pinned core. The timing procedure
itself (timed_calls) lives in kevolve_py_runner.py, so that both sides are timed by the same code.
"""
import hashlib
import json
import math
import os
import platform
import statistics
import time
import zlib

import torch

TIMER_SLACK_NS = 3e6  # per pass: the round trip, waking the runner, its final synchronisation
PASS_NS = 10e6        # timed work per pass, after the first two (one call per input set)


SETTLE_MIN_SAMPLES = 8


def timing_settle():
    """The share the GPU timing settles to: $KEVOLVE_TIMING_SETTLE (0: off, min_time alone decides), else 0.005."""
    try:
        return max(0.0, float(os.environ.get("KEVOLVE_TIMING_SETTLE") or 0.005))
    except ValueError:
        return 0.005


def median_settled(samples, rel):
    """Whether the median of `samples` is known to within +-rel of itself: its distribution-free 95 % interval,
    the order statistics of ranks n/2 -+ 0.98 sqrt(n) (1-based, rounded outwards), spans at most 2 rel median.
    False below SETTLE_MIN_SAMPLES samples or for rel <= 0. The same rule as backends/harness/stats.hpp."""
    n = len(samples)
    if n < SETTLE_MIN_SAMPLES or rel <= 0:
        return False
    s = sorted(samples)
    half = 0.98 * n ** 0.5
    lo = max(1, int(math.floor(n / 2 - half)))
    hi = min(n, int(math.ceil(n / 2 + 1 + half)))
    m = statistics.median(s)
    return m > 0 and s[hi - 1] - s[lo - 1] <= 2 * rel * m


def summarize(samples_ns, threads):
    if not samples_ns:
        return {"median_ms": 0, "p10_ms": 0, "p90_ms": 0, "samples": 0, "threads": threads}
    s = sorted(samples_ns)
    pick = lambda q: s[min(len(s) - 1, int(q * len(s)))] / 1e6
    return {"median_ms": statistics.median(s) / 1e6, "p10_ms": pick(0.1), "p90_ms": pick(0.9), "samples": len(s), "threads": threads}


_best_bandwidth = {}  # (device, bytes) -> the highest copy bandwidth this process has measured


def _schedstat(path):
    """(ns run on a CPU, ns runnable but waiting for one) of the thread whose schedstat file is `path`, or None
    where the kernel keeps none (or the thread is gone)."""
    try:
        with open(path) as f:
            ran, waited = f.read().split()[:2]
        return int(ran), int(waited)
    except (OSError, ValueError):
        return None


def _steal_ns():
    """Each CPU's time taken by the hypervisor (the steal column of /proc/stat, in ns); {} where unreadable."""
    out = {}
    try:
        tick = 1e9 / os.sysconf("SC_CLK_TCK")
        with open("/proc/stat") as f:
            for line in f:
                if line.startswith("cpu") and line[3:4].isdigit():
                    fields = line.split()
                    if len(fields) > 8:
                        out[int(fields[0][3:])] = int(fields[8]) * tick
    except (OSError, ValueError):
        return {}
    return out


def process_waited_ns():
    """Nanoseconds every thread of this process (the reference's worker threads too) has waited for a CPU held by
    something else (runnable, not running), summed over /proc/self/task/*/schedstat; None where the kernel keeps no
    schedstat. Threads that ended between two reads drop out of the sum: compare reads around one timed pass."""
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return None
    total, known = 0, False
    for tid in tids:
        st = _schedstat("/proc/self/task/%s/schedstat" % tid)
        if st is not None:
            total, known = total + st[1], True
    return total if known else None


# Set for a 2-core machine running two test programs at once: at 2x / 25 % honest evaluations there ended busy
# in about half the runs; a reference slowed 3x with its threads queued for 40 % of the pass is still refused.
BUSY_SLOWER = 3.0   # a reference pass whose median call is this many times its calibration is timed again
BUSY_WAITED = 0.40  # and, still so after BUSY_RETAKES retakes, is `busy` when its threads waited this share of it
BUSY_RETAKES = 3


class ReferenceGuard:
    """A reference slowed by anything but itself is noticed: a timed pass of the reference whose median call is
    over BUSY_SLOWER times its calibration (the fastest call time measured earlier in the same evaluation) is timed
    again, up to BUSY_RETAKES times after a moment off the CPU, and the fastest take kept; when that one is still
    so slow while this process's threads waited for a CPU for over BUSY_WAITED of it (other processes held the
    cores), take() says why the timing is worthless, and the evaluation ends `harness_error [busy]` instead of
    crediting the candidate with the reference's starvation."""

    def __init__(self, calibration_ns):
        self.calibration = max(1, calibration_ns)
        self.retimed = 0  # retakes so far

    def take(self, timed_pass):
        """timed_pass() -> (call times in ns, ...): runs it (and retakes); returns (the fastest take's result, None
        or why the reference was starved, the share of that take its threads waited for a CPU)."""
        best = None
        for n in range(1 + BUSY_RETAKES):
            if n:
                time.sleep(0.001)  # a woken sleeper is scheduled ahead of a busy neighbour
                self.retimed += 1
            w0, t0 = process_waited_ns(), time.perf_counter_ns()
            result = timed_pass()
            wall, w1 = time.perf_counter_ns() - t0, process_waited_ns()
            waited = w1 - w0 if w0 is not None and w1 is not None else 0
            call = statistics.median(result[0])
            if best is None or call < best[1]:
                best = (result, call, waited / max(1, wall))
            if call <= BUSY_SLOWER * self.calibration:
                break
        result, call, share = best
        if call > BUSY_SLOWER * self.calibration and share > BUSY_WAITED:
            return result, ("the reference's calls took %.3g ms (median of a pass, the fastest of %d takes) against %.3g ms "
                            "earlier in this evaluation, while its threads waited for a CPU for %.0f%% of the pass: other "
                            "work on this machine slowed the reference, so the speedup would be wrong" % (
                                call / 1e6, BUSY_RETAKES + 1, self.calibration / 1e6, 100 * share)), share
        self.calibration = min(self.calibration, call)
        return result, None, share


class PassClock:
    """The outside clock of one timing pass and the part of it the runner could not have spent running: the time
    the runner's main thread (its timed loop) and the calling thread waited for a CPU that other processes held,
    and the time the hypervisor took from the CPUs the runner may use (steal). On a loaded machine these stretch
    the wall time between the runner's calls, which its reported times rightly leave out.

    `busy` (what the timer check compares) is the wall time less those waits, but never less than the CPU time
    the runner's main thread actually ran during the pass: that time the runner certainly spent, so a runner
    whose clock runs slow is still held to the work it did. Where the kernel keeps no schedstat, nothing is
    taken off (the check is then as strict as the wall clock)."""

    def __init__(self, runner_pid=None):
        """runner_pid None: the calling thread is the one timed (the reference's pass)."""
        self.main = "/proc/%d/task/%d/schedstat" % (runner_pid, runner_pid) if runner_pid else "/proc/thread-self/schedstat"
        self.self_too = bool(runner_pid)
        try:
            self.cpus = sorted(os.sched_getaffinity(runner_pid or 0))
        except OSError:
            self.cpus = []

    def start(self):
        self.r0, self.s0 = _schedstat(self.main), _steal_ns()
        self.e0 = _schedstat("/proc/thread-self/schedstat") if self.self_too else None
        self.t0 = time.perf_counter_ns()

    def stop(self):
        """{"wall", "busy", "waited", "stolen", "ran"} in ns for the pass since start()."""
        wall = time.perf_counter_ns() - self.t0
        r1, s1 = _schedstat(self.main), _steal_ns()
        e1 = _schedstat("/proc/thread-self/schedstat") if self.self_too else None
        if self.r0 is None or r1 is None:
            return {"wall": wall, "busy": wall, "waited": 0, "stolen": 0, "ran": 0}
        ran, waited = r1[0] - self.r0[0], r1[1] - self.r0[1]
        if self.e0 is not None and e1 is not None:
            waited += e1[1] - self.e0[1]
        stolen = max([s1.get(c, 0) - self.s0.get(c, 0) for c in self.cpus] + [0])
        busy = max(ran, wall - waited - stolen)
        return {"wall": wall, "busy": min(wall, busy), "waited": waited, "stolen": stolen, "ran": ran}


class CopyBandwidth:
    """The bandwidth (bytes per second, read + write) of a warm copy of about `nbytes` / 2 on `dev`: the best
    of every copy timed (a few at once, then one per timing pass, so under the same load as the calls; CUDA by
    events) and of earlier evaluations in this process. The best, because a floor computed from a copy slowed
    down by load would refuse honest candidates."""

    def __init__(self, dev, nbytes):
        cap = 30 if dev.type == "cuda" else 28
        size = 1 << max(20, min(cap, (max(1, nbytes // 2) - 1).bit_length()))
        self.dev, self.key = dev, (str(dev), size)
        self.src = torch.ones(size, dtype=torch.uint8, device=dev)
        self.dst = torch.empty_like(self.src)
        for _ in range(5):
            self.sample()

    def sample(self):
        if self.dev.type == "cuda":
            b, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            b.record()
            self.dst.copy_(self.src)
            e.record()
            e.synchronize()
            ns = b.elapsed_time(e) * 1e6
        else:
            t0 = time.perf_counter_ns()
            self.dst.copy_(self.src)
            ns = time.perf_counter_ns() - t0
        bw = 2 * self.src.numel() / (max(1.0, ns) / 1e9)
        _best_bandwidth[self.key] = max(bw, _best_bandwidth.get(self.key, 0.0))

    @property
    def best(self):
        return _best_bandwidth[self.key]


def compile_cache_key(a, dev):
    """The reference's torch.compile timing depends on the problem file, the device, torch and the thread
    count: measured once per such key (it costs a compilation) and reused by later candidates."""
    with open(a.problem, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else platform.processor() or platform.machine()
    return "%s|%s|%s|torch %s|%d threads|seed %d|min_reps %d" % (os.path.basename(a.problem), digest, name, torch.__version__,
                                                                 a.threads, a.seed, a.min_reps)


def compile_cache_get(path, key):
    if not path:
        return None
    try:
        with open(path) as f:
            entry = json.load(f).get(key)
    except (OSError, ValueError):
        return None
    if entry is None:
        return None
    entry = dict(entry)
    entry["cached"] = True  # measured by an earlier evaluation (entry["measured"] says when), not in this one
    return entry


def compile_cache_put(path, key, value):
    """Adds one entry; concurrent evaluators may race, the last writer wins (an entry is only ever re-measured)."""
    if not path:
        return
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError):
            data = {}
        data[key] = value
        tmp = "%s.%d.tmp" % (path, os.getpid())
        with open(tmp, "w") as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, path)
    except OSError:
        pass  # a cache that cannot be written only costs time


_cores_before_pinning = None  # the cores this process could use before pin_to_one_core


def pin_to_one_core():
    """CUDA: this process and the runners it starts from now on share one core (they never run at once), so that
    launch-bound timings compare both sides on the same core. Measured on an H200 host: the reference against
    itself 0.86-1.21x from run to run unpinned, 0.98-1.01x pinned. Servers of different GPUs (CUDA_VISIBLE_DEVICES)
    take different cores. Returns the core, or None. (A standby runner starts on the other cores, spare_cores(),
    and is moved onto this one before it is used: kevolve_py_process.take_runner.)"""
    global _cores_before_pinning
    try:
        cores = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None
    if _cores_before_pinning is None:
        _cores_before_pinning = set(cores)
    if len(cores) > 1:
        v = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip()
        k = int(v) if v.isdigit() else zlib.crc32(v.encode())
        cores = [cores[-1 - k % len(cores)]]
        os.sched_setaffinity(0, set(cores))
    return cores[0] if cores else None


def spare_cores():
    """The cores this process could use before it pinned itself, less the one it pinned itself to: where a standby
    runner starts (importing torch and setting up CUDA) without taking the core an evaluation is running on. An
    empty set when there are none (one core, or not pinned)."""
    try:
        now = os.sched_getaffinity(0)
    except (AttributeError, OSError):
        return set()
    if _cores_before_pinning is None or len(now) != 1:
        return set()
    return _cores_before_pinning - now


_best_idle = {}  # device -> the fastest probe this process has seen (ns): the device idle


class IdleProbe:
    """Whether a GPU is idle, told by the evaluator's own wall clock: a small copy (64 MiB) launched and waited
    for, the best of a few. Another process's work on the device (time-sliced with this one's) delays it by its
    time slice or more; an idle device runs it in tens of microseconds. Before the reference is timed the runner is
    stopped, but work it queued keeps the GPU busy and would slow the reference's pass: busy() says so. The idle
    time is the best this process has seen on the device (the first measured before any candidate code runs)."""

    BYTES = 64 << 20
    TRIES = 5

    def __init__(self, dev):
        self.dev = dev
        self.src = torch.ones(self.BYTES, dtype=torch.uint8, device=dev)
        self.dst = torch.empty_like(self.src)
        for _ in range(3):
            self.sample()

    def sample(self):
        """The best wall time (ns) of TRIES copies, each launched and waited for."""
        torch.cuda.synchronize(self.dev)
        best = None
        for _ in range(self.TRIES):
            t0 = time.perf_counter_ns()
            self.dst.copy_(self.src)
            torch.cuda.synchronize(self.dev)
            t = time.perf_counter_ns() - t0
            best = t if best is None else min(best, t)
        key = str(self.dev)
        _best_idle[key] = min(best, _best_idle.get(key, best))
        return best

    @property
    def idle_ns(self):
        return _best_idle[str(self.dev)]

    def busy(self):
        """(probe ns, idle ns) when the device is busy with other work (the probe over 2x its idle time + 0.2 ms),
        else None."""
        t = self.sample()
        return (t, self.idle_ns) if t > 2 * self.idle_ns + 200e3 else None

    def wait_idle(self, limit_s):
        """Probes until the device is idle or `limit_s` passed; returns (seconds waited, idle at the end)."""
        t0 = time.monotonic()
        while self.busy():
            if time.monotonic() - t0 > limit_s:
                return time.monotonic() - t0, False
            time.sleep(0.002)
        return time.monotonic() - t0, True
