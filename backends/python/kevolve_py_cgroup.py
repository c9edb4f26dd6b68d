"""kevolve's Python interpreter, trusted side: one cgroup per runner, as backends/process/eval_cgroup.hpp makes
for the C++ runners (same names, same layout, same rules; see that header).

EvalCgroup.create(tag, memory_bytes, pids_max) makes kevolve-<tag>-<pid>-<n> as a child of this process's own
cgroup (v2 where the unified hierarchy holds the controllers or is all there is; else v1: the freezer, pids and
memory hierarchies, each its own folder). The runner is moved in right after it is started (adopt), before any
candidate code exists in it, so every process the candidate ever starts (double-forked, setsid'ed, or cloned with
CLONE_PARENT so that its parent is this evaluator) is inside: pids.max bounds them, freeze() stops all of them
while the reference is timed, kill_all() ends them and checks the cgroup empty, remove() deletes its folders.
create() returns (None, why) where no cgroup can be made (not root, nothing mounted or delegated)."""
import itertools
import os
import signal
import time

_counter = itertools.count(1)


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _first_words(path):
    return _read(path).split("\n", 1)[0].split()


def _write(path, text):
    """None, or the OSError's text."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    except OSError as e:
        return str(e)
    try:
        os.write(fd, text.encode())
        return None
    except OSError as e:
        return str(e)
    finally:
        os.close(fd)


def _hierarchies():
    """({controller: this process's folder} for v1 pids/freezer/memory, its cgroup2 folder or "", that folder's
    parent inside the mount or "")."""
    v1_mount, v2_mount = {}, ""
    for line in _read("/proc/self/mountinfo").splitlines():
        pre, _, post = line.partition(" - ")
        pre, post = pre.split(), post.split()
        if len(pre) < 5 or len(post) < 3:
            continue
        if post[0] == "cgroup":
            for c in ("pids", "freezer", "memory"):
                if c in post[2].split(",") and c not in v1_mount:
                    v1_mount[c] = pre[4]
        elif post[0] == "cgroup2" and not v2_mount:
            v2_mount = pre[4]
    v1, v2, v2_parent = {}, "", ""
    for line in _read("/proc/self/cgroup").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        tail = "" if parts[2] == "/" else parts[2]
        for c, mount in v1_mount.items():
            if c in parts[1].split(","):
                v1[c] = mount + tail
        if parts[0] == "0" and parts[1] == "" and v2_mount:
            v2 = v2_mount + tail
            if tail:
                v2_parent = v2_mount + tail.rsplit("/", 1)[0]
    return v1, v2, v2_parent


def _sweep_orphans(parent):
    """kevolve-<tag>-<pid>-<n> folders whose evaluator <pid> is gone: removed when empty."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for n in names:
        bits = n.split("-")
        if not n.startswith("kevolve-") or len(bits) < 4 or not bits[-2].isdigit():
            continue
        owner = int(bits[-2])
        if owner != os.getpid() and not os.path.exists("/proc/%d" % owner):
            try:
                os.rmdir(os.path.join(parent, n))
            except OSError:
                pass


def _subfolders(d):
    try:
        return [os.path.join(d, e.name) for e in os.scandir(d) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _pids_in(d, depth=0):
    out = [int(p) for p in _read(os.path.join(d, "cgroup.procs")).split() if p.isdigit()]
    if depth < 16:
        for s in _subfolders(d):
            out += _pids_in(s, depth + 1)
    return out


def _remove_tree(d, depth=0):
    if depth < 16:
        for s in _subfolders(d):
            _remove_tree(s, depth + 1)
    try:
        os.rmdir(d)
        return True
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _backoff(deadline):
    """Yields until `deadline` (time.monotonic), sleeping 20 us, 40 us, ... up to 2 ms between."""
    step = 20e-6
    while time.monotonic() < deadline:
        yield
        time.sleep(step)
        step = min(2e-3, step * 2)


class EvalCgroup:
    def __init__(self):
        self.version, self.name, self.folders = 0, "", []
        self.main = ""        # the folder whose cgroup.procs lists the members (v2: the one; v1: the freezer's)
        self.freezer = ""     # cgroup.freeze (v2) or freezer.state (v1)
        self.kill_file = ""   # cgroup.kill (v2, where the kernel has it)
        self.memory_bytes = self.pids_max = 0
        self.memory_asked = False
        self.frozen = False
        self.seen = set()  # every pid found inside (while frozen, and when killed): reaped at the end if ours

    @classmethod
    def create(cls, tag, memory_bytes=0, pids_max=0):
        """(EvalCgroup, "") or (None, why none could be made)."""
        if os.geteuid() != 0:
            return None, "making a cgroup needs root"
        v1, v2, v2_parent = _hierarchies()
        use_v2 = bool(v2) and ("freezer" not in v1 or "pids" in _first_words(v2 + "/cgroup.controllers"))
        if not use_v2 and "freezer" not in v1:
            return None, "no cgroup hierarchy is mounted for this process"
        g = cls()
        g.name = "kevolve-%s-%d-%d" % (tag, os.getpid(), next(_counter))
        g.memory_asked = memory_bytes > 0

        def make(parent):
            _sweep_orphans(parent)
            d = os.path.join(parent, g.name)
            os.mkdir(d, 0o755)
            g.folders.append(d)
            return d

        try:
            if use_v2:
                g.version = 2
                offers = lambda d: {"pids", "memory"} <= set(_first_words(d + "/cgroup.subtree_control"))
                parent, controllers = v2, True
                if not offers(v2):
                    if "pids" in _first_words(v2 + "/cgroup.controllers") and _write(v2 + "/cgroup.subtree_control", "+pids +memory") is None:
                        pass
                    elif v2_parent and offers(v2_parent):
                        parent = v2_parent
                    else:
                        controllers = False
                d = g.main = make(parent)
                if os.path.exists(d + "/cgroup.freeze"):
                    g.freezer = d + "/cgroup.freeze"
                if os.path.exists(d + "/cgroup.kill"):
                    g.kill_file = d + "/cgroup.kill"
                if controllers and pids_max > 0 and _write(d + "/pids.max", str(pids_max)) is None:
                    g.pids_max = pids_max
                if controllers and memory_bytes > 0 and _write(d + "/memory.max", str(memory_bytes)) is None:
                    g.memory_bytes = memory_bytes
                    _write(d + "/memory.swap.max", "0")
            else:
                g.version = 1
                for c in ("freezer", "pids", "memory"):
                    if c not in v1:
                        continue
                    try:
                        d = make(v1[c])
                    except OSError:
                        if c == "freezer":
                            raise
                        continue  # pids or memory not delegated here: describe() says so
                    if c == "freezer":
                        g.main, g.freezer = d, d + "/freezer.state"
                    elif c == "pids" and pids_max > 0 and _write(d + "/pids.max", str(pids_max)) is None:
                        g.pids_max = pids_max
                    elif c == "memory" and memory_bytes > 0 and _write(d + "/memory.limit_in_bytes", str(memory_bytes)) is None:
                        g.memory_bytes = memory_bytes
                        _write(d + "/memory.memsw.limit_in_bytes", str(memory_bytes))
        except OSError as e:
            g.remove()
            return None, "cannot make the cgroup %s: %s" % (g.name, e)
        if not g.freezer:
            g.remove()
            return None, "the cgroup %s has no freezer (kernel older than 5.2)" % g.name
        return g, ""

    def adopt(self, pid):
        """Moves process `pid` (every thread of it) in, in every hierarchy. None, or why it failed."""
        for d in self.folders:
            why = _write(d + "/cgroup.procs", str(pid))
            if why:
                return why
        return None if self.folders else "the cgroup is gone"

    def pids(self):
        """The pids inside it (and inside any cgroup made within it)."""
        return _pids_in(self.main) if self.main else []

    def freeze(self):
        """Stops every process inside; waits (2 s at most) until the kernel says all are frozen."""
        if not self.freezer or _write(self.freezer, "1" if self.version == 2 else "FROZEN"):
            return False
        self.frozen = True
        for _ in _backoff(time.monotonic() + 2.0):
            if "frozen 1" in _read(self.main + "/cgroup.events") if self.version == 2 else _read(self.freezer).startswith("FROZEN"):
                self.seen.update(self.pids())  # a process that ends on its own later is still reaped (kill_all)
                return True
        return False

    def thaw(self):
        if not self.freezer or _write(self.freezer, "0" if self.version == 2 else "THAWED"):
            return False
        self.frozen = False
        return True

    def kill_all(self):
        """Kills every process inside and waits (5 s at most) until it is empty; those ever seen inside that were
        this process's children (the runner's CLONE_PARENT ones, killed or ended on their own) are reaped: wait for
        your own child first. True when empty."""
        if not self.main:
            return True
        killed, empty = self.seen, False
        for _ in _backoff(time.monotonic() + 5.0):
            inside = self.pids()
            if not inside:
                empty = True
                break
            if self.kill_file and _write(self.kill_file, "1") is None:
                killed.update(inside)
                continue
            self.freeze()  # frozen, nothing inside can fork while its members are listed and killed
            for p in self.pids():
                try:
                    os.kill(p, signal.SIGKILL)
                    killed.add(p)
                except OSError:
                    pass
            self.thaw()  # a frozen task dies only once thawed
        if self.frozen:
            self.thaw()
        for p in killed:
            for _ in _backoff(time.monotonic() + 0.1):
                try:
                    if os.waitpid(p, os.WNOHANG | getattr(os, "__WALL", 0x40000000))[0] != 0:
                        break
                except ChildProcessError:
                    break
        return empty

    def remove(self):
        """kill_all, then its folders go. True when empty and every folder is gone."""
        empty = self.kill_all()
        gone = True
        for d in reversed(self.folders):
            for _ in _backoff(time.monotonic() + 1.0):
                if _remove_tree(d):
                    break
            else:
                gone = False
        self.folders, self.main, self.freezer, self.kill_file = [], "", "", ""
        return empty and gone

    def describe(self):
        parts = ["pids.max %d" % self.pids_max if self.pids_max else "no pids.max"]
        if self.memory_bytes:
            parts.append("memory %d MiB" % (self.memory_bytes >> 20))
        elif self.memory_asked:
            parts.append("no memory limit (no memory controller here)")
        parts.append("freezer")
        if self.kill_file:
            parts.append("cgroup.kill")
        return "cgroup v%d %s (%s)" % (self.version, self.name, ", ".join(parts))
