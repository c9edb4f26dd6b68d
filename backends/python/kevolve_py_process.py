"""kevolve's Python interpreter, trusted side: the runner process as the evaluator sees it.

Runner starts kevolve_py_runner.py in a process group and a cgroup of its own (kevolve_py_cgroup), sends it one
JSON command per line and checks its one JSON answer line (size-capped, matched by a nonce, validated field by
field); the runner, and every process it started, is frozen whenever no command is out (SIGSTOP to its process
group where no cgroup could be made), and killed with it at the end. take_runner / start_standby keep one runner started ahead for the
next candidate in serve mode. Nothing the runner writes is ever unpickled or executed here.
"""
import json
import os
import secrets
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time

from kevolve_py_cgroup import EvalCgroup
from kevolve_py_timing import spare_cores

HERE = os.path.dirname(os.path.abspath(__file__))


MAX_ANSWER = 1 << 20  # bytes of one answer line
RUNNER_STATUSES = {"ok", "runtime_error", "rejected"}
RUNNER_REASONS = {"exception", "load", "outputs", "isolation"}
RUNNER_PIDS = 512  # pids.max of a runner's cgroup: torch's threads, and a kernel build's compiler processes


class Runner:
    """The candidate's process: one JSON command per line on its stdin, one JSON answer line on its stdout.
    It runs only while a command is out (thawed before, frozen after the answer), so between commands neither it
    nor anything it started can change the evidence or compete with the reference's timing. candidate "-" starts a standby runner
    (torch imported, device set up) that learns its candidate later (take_runner)."""

    def __init__(self, candidate, workdir, device, threads, timeout, cores=None):
        self.timeout = timeout
        self.device, self.threads = device, threads
        env = dict(os.environ)
        env["OMP_NUM_THREADS"] = str(threads)
        env["KEVOLVE_RUNNER_PARENT"] = str(os.getpid())
        # The candidate's allocator grows its segments instead of splitting cached ones: a ModelNew that frees a
        # 7 GB temporary and then asks for a 7 GB output gets it back even after a small tensor was carved out of
        # the freed block (the memory plan leaves room for the runner's working memory, not for fragments).
        env.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
        self.log = tempfile.TemporaryFile()  # its stderr: a file, so that a chatty candidate never blocks on a full pipe
        # Descriptors go to the runner over a socket pair (the memfd: a runner of another uid or user namespace
        # cannot open it through /proc); the runner closes its end once the region is mapped.
        self.fds, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        env["KEVOLVE_RUNNER_FDS"] = str(theirs.fileno())
        self.cgroup, self.no_cgroup = EvalCgroup.create("eval", 0, RUNNER_PIDS)
        self.clean = True  # whether its cgroup was found empty and removed at the end
        self.p = subprocess.Popen([sys.executable, os.path.join(HERE, "kevolve_py_runner.py"), candidate, device, str(threads)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, cwd=workdir, env=env,
                                  start_new_session=True, pass_fds=(theirs.fileno(),))
        theirs.close()
        # Into its cgroup now, while only kevolve's own code runs in it (the candidate comes with `load`, many
        # answers later): every thread it has and every process it will start is inside.
        if self.cgroup is not None:
            why = self.cgroup.adopt(self.p.pid)
            if why:
                self.cgroup.remove()
                self.cgroup, self.no_cgroup = None, "the runner could not be moved into its cgroup: " + why
        self.stopped = False  # by SIGSTOP (no cgroup, or it did not freeze)
        self.pending = b""
        self.spent = None  # what the clock given to the last ask() measured
        self.spread = False  # started on other cores than this process's (a standby: pin() before use)
        if cores:
            try:
                os.sched_setaffinity(self.p.pid, cores)  # before it imports torch: its threads inherit the set
                self.spread = True
            except OSError:
                pass
        _live.append(self)

    def _threads_outside(self, cores):
        """The runner's threads that may run outside `cores` (a thread that ended meanwhile is not counted)."""
        out = []
        for tid in os.listdir("/proc/%d/task" % self.p.pid):
            try:
                if not os.sched_getaffinity(int(tid)) <= cores:
                    out.append(int(tid))
            except ProcessLookupError:
                pass
        return out

    def pin(self):
        """Moves every thread of the runner onto this process's cores (the one pinned core on CUDA), so that the
        candidate is timed on the core the reference is timed on; threads it makes later inherit it. False when a
        thread could not be moved (the runner is then not used)."""
        if not self.spread:
            return True
        mine = os.sched_getaffinity(0)
        try:
            for _ in range(3):  # a thread started meanwhile by one not yet moved: moved in the next pass
                left = self._threads_outside(mine)
                if not left:
                    self.spread = False
                    return True
                for tid in left:
                    try:
                        os.sched_setaffinity(tid, mine)
                    except ProcessLookupError:
                        pass
        except OSError:
            pass
        return False

    def _signal(self, sig):
        try:
            os.killpg(self.p.pid, sig)
        except OSError:
            pass

    def _pause(self):
        if self.cgroup is None or not self.cgroup.freeze():
            self._signal(signal.SIGSTOP)
            self.stopped = True

    def _resume(self):
        if self.cgroup is not None and self.cgroup.frozen:
            self.cgroup.thaw()
        if self.stopped:
            self._signal(signal.SIGCONT)
            self.stopped = False

    def cgroup_line(self):
        """What the sandbox line says of the runner's cgroup."""
        if self.cgroup is not None:
            return self.cgroup.describe()
        return "no cgroup (%s)" % self.no_cgroup  # the runner's level says that new processes are refused

    def _readable(self, timeout):
        return bool(select.select([self.p.stdout], [], [], max(0.0, timeout))[0])

    def ask(self, cmd, timeout=None, fd=None, why=None, clock=None):
        """Sends one command and returns its answer, checked: a dict with status (ok, runtime_error, rejected),
        reason, message and the command's own fields (ns, copied). A hang (killed after `timeout`, default the
        runner's; `why` says how that limit was reached), a death or a broken protocol comes back as the verdict
        it makes (timeout, runtime_error, rejected with reason protocol). `fd`, if given, is sent to the runner
        with the command. `clock` (a PassClock), if given, is started once the runner is thawed and stopped when its
        answer is in, before it is frozen again: what it measured is then in self.spent."""
        limit = timeout or self.timeout
        nonce = secrets.token_hex(8)
        if self.pending or (self.p.poll() is None and self._readable(0)):
            return self._protocol("it wrote to its answer pipe between commands")
        self._resume()
        if clock is not None:
            clock.start()
        try:
            if fd is not None:
                socket.send_fds(self.fds, [b"f"], [fd])
            self.p.stdin.write((json.dumps(dict(cmd, nonce=nonce)) + "\n").encode())
            self.p.stdin.flush()
        except OSError:
            return self._died()
        deadline = time.monotonic() + limit
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not self._readable(left):
                self.kill()
                return {"status": "timeout", "reason": "timeout",
                        "message": "the candidate did not finish within %.4g s (wall clock%s); its process was killed" % (
                            limit, ": " + why if why else "")}
            chunk = os.read(self.p.stdout.fileno(), 65536)
            if not chunk:
                return self._died()
            self.pending += chunk
            if len(self.pending) > MAX_ANSWER:
                return self._protocol("an answer longer than %d bytes" % MAX_ANSWER)
        if clock is not None:
            self.spent = clock.stop()
        self._pause()
        line, _, self.pending = self.pending.partition(b"\n")
        if self.pending:
            return self._protocol("more than one answer to one command")
        try:
            r = json.loads(line)
        except (ValueError, RecursionError):
            return self._protocol("an answer that is not JSON")
        if not isinstance(r, dict) or r.get("nonce") != nonce:
            return self._protocol("an answer that is not to this command")
        if r.get("status") not in RUNNER_STATUSES:
            return self._protocol("an answer with status %r" % (r.get("status"),))
        reason = r.get("reason") if r.get("reason") in RUNNER_REASONS else ("" if r["status"] == "ok" else "exception")
        out = {"status": r["status"], "reason": reason, "message": str(r.get("message", ""))[:2000]}
        for key in ("ns", "copied"):
            if key in r:
                out[key] = r[key]
        if isinstance(r.get("sandbox"), str):  # told by the runner before any candidate code ran in it
            out["sandbox"] = r["sandbox"][:500]
        return out

    def _died(self):
        """The verdict for a runner found dead, with its stderr's tail: killed by its seccomp filter (SIGSYS), a
        system call the sandbox forbids, `rejected [isolation]`; else a `runtime_error`."""
        self.kill()
        code = self.p.returncode
        if code == -signal.SIGSYS:
            return {"status": "rejected", "reason": "isolation",
                    "message": "the candidate's process made a system call its sandbox forbids (killed by seccomp, SIGSYS)%s"
                               % (": " + self.stderr_tail().strip()[-500:] if self.stderr_tail().strip() else "")}
        how = "signal %s" % signal.Signals(-code).name if code is not None and code < 0 and -code in signal.valid_signals() else "exit %s" % code
        return {"status": "runtime_error", "reason": "exception",
                "message": "the candidate's process died (%s): %s" % (how, self.stderr_tail().strip())}

    def _protocol(self, why):
        """Kills the runner; the verdict for an answer it may not give."""
        self.kill()
        return {"status": "rejected", "reason": "protocol", "message": "the candidate's process broke the runner protocol: " + why}

    def kill(self):
        """Kills the runner and everything in its process group and its cgroup (frozen, stopped or not), and waits
        for it: once this returns its memory (its CUDA context and allocations with it) is the system's again, and
        no process it started is left (its cgroup checked empty, then removed)."""
        self._signal(signal.SIGKILL)
        try:
            self.p.kill()
        except OSError:
            pass
        if self.cgroup is not None and self.cgroup.frozen:
            self.cgroup.thaw()  # a frozen process dies only once thawed
        self.p.wait()  # the runner's own exit status first: kill_all reaps the rest
        if self.cgroup is not None:
            self.clean = self.cgroup.remove()
            self.cgroup = None
        self.stopped = False
        if self in _live:
            _live.remove(self)

    def close(self):
        """Kills the runner's process group and drops its log."""
        self.kill()
        self.log.close()
        self.fds.close()

    def stderr_tail(self):
        """The last 2000 bytes the runner wrote to stderr (the candidate's own prints among them)."""
        try:
            self.log.seek(0, 2)
            size = self.log.tell()
            self.log.seek(max(0, size - 2000))
            return self.log.read().decode(errors="replace")
        except (OSError, ValueError):
            return ""


_standby = None  # serve mode: a runner started after each evaluation, for the next one
_live = []       # every runner started and not yet killed (the standby among them)


def stop_strays():
    """Kills every runner of this process but the standby: before a memory plan is made, no runner of an earlier
    evaluation may still hold memory (one is closed when its evaluation ends; this catches one whose evaluation
    ended on an error before it was handed over). Returns how many were killed."""
    strays = [r for r in _live if r is not _standby]
    for r in strays:
        r.close()
    return len(strays)


def live_runners():
    """The pids of the runners of this process not yet killed (the standby among them)."""
    return [r.p.pid for r in _live]


def take_runner(candidate, workdir, device, threads, timeout):
    """A runner of its own for `candidate`: the standby runner when one was started for this device and
    thread count (it opens the candidate now), else a fresh process."""
    global _standby
    r, _standby = _standby, None
    if r is not None:
        if (r.device, r.threads) == (device, threads) and r.p.poll() is None and r.pin():
            r.timeout = timeout
            if r.ask({"op": "open", "candidate": candidate, "work": workdir}, timeout=max(60, timeout)).get("status") == "ok":
                return r
        r.close()
    return Runner(candidate, workdir, device, threads, timeout)


def start_standby(device, threads, timeout):
    """Starts the runner for the next request (serve mode), on the cores this process is not pinned to (on CUDA),
    so its start-up (torch's import, CUDA's context) overlaps the next evaluation instead of slowing it."""
    global _standby
    if _standby is None:
        _standby = Runner("-", None, device, threads, timeout, cores=spare_cores())


def stop_standby():
    """Kills the standby runner, if one was started (the end of serve mode)."""
    global _standby
    if _standby is not None:
        _standby.close()
        _standby = None
