#!/usr/bin/env python3
"""The durability fault matrix (docs/benchmarks/durability.md): damage a finished store, or a search while it
runs, and record what kevolve says and keeps.

  tools/durability_matrix.py [--kevolve build/bin/kevolve] [--work /tmp/kevolve-durability] [--kills 20]

Every case starts from a real `kevolve run` of the null backend (2,000 nodes, 8 in flight, a ledger of
every evaluation: [null] ledger), copies the store and damages the copy. Then, in order:
  verify   `kevolve store verify`: exit status, whether a problem is reported and which file it names;
  report   `kevolve report`: exit status and the evaluated count it prints (silent when 0 and fewer than
           2,000 without a word);
  resume   `kevolve run` on the damaged store: refused (exit != 0 with a message) or not;
  repair   `kevolve store repair`, then verify: nodes and artifacts readable after, node records lost;
  again    `kevolve run` after the repair: exit status and re-evaluations (ledger lines of nodes already
           evaluated), and whether the run announced them.
Kill cases kill -9 a running search (or one taking a checkpoint on SIGUSR1) at random moments and resume it
until it finishes; a re-evaluation is announced when its node is among those the resume named as in flight.
Disk-full cases use KEVOLVE_STORE_MIN_FREE_MB (a rehearsal) and, as root, a small tmpfs in a private mount
namespace; read-only media, a read-only bind mount. Prints one markdown table row per case.
Processes are ended only by the ids this script started.
"""
import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

BUDGET = 2000


def config(dir_, budget=BUDGET, delay_ms=0.0, store="store"):
    with open(os.path.join(dir_, "run.toml"), "w") as f:
        f.write(f"""[search]
problem = "gelu"
id = "durability"
backend = "null"
operator = "null"
max_in_flight = 8
build_workers = 1

[strategy]
name = "greedy"

[budget]
evaluations = {budget}

[store]
path = "{store}"
checkpoint_seconds = 0

[null]
delay_ms = {delay_ms}
ledger = "ledger.txt"
""")


def run(args, cwd, env=None, timeout=300):
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run(args, cwd=cwd, env=e, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


class Matrix:
    def __init__(self, kevolve, work):
        self.k = os.path.abspath(kevolve)
        self.work = work
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        self.rows = []
        self.expected = {}

    def kev(self, cwd, *args, env=None):
        return run([self.k, *args], cwd, env)

    # flushed: a finished 2,000-node search, its records in table files (.sst; a clean close flushes the
    # log). Else a search killed (-9) half-way: what it wrote since it started is only in the log.
    def base(self, name, flushed):
        d = os.path.join(self.work, name)
        os.makedirs(d)
        config(d, delay_ms=0 if flushed else 1.0)
        if flushed:
            rc, out = self.kev(d, "run", "run.toml")
            assert rc == 0, out
        else:
            p = subprocess.Popen([self.k, "run", "run.toml"], cwd=d, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, start_new_session=True)
            time.sleep(2.0)
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        rc, out = self.kev(d, "store", "verify", "store")
        self.expected[name] = self.counts(out)
        return d

    def copy(self, base, name):
        d = os.path.join(self.work, name)
        shutil.copytree(base, d, symlinks=True)
        return d

    @staticmethod
    def ledger(d):
        p = os.path.join(d, "ledger.txt")
        return open(p).read().split("\n")[:-1] if os.path.exists(p) else []

    @staticmethod
    def counts(out):
        m = re.search(r"(\d+) searches, (\d+) nodes, (\d+) artifacts", out)
        return tuple(int(x) for x in m.groups()) if m else None

    @staticmethod
    def evaluated(out):
        m = re.search(r"(\d+) evaluated", out)
        return int(m.group(1)) if m else None

    @staticmethod
    def announced(out):
        ids = set()
        for m in re.finditer(r"evaluated again: nodes ([0-9, ]+)", out):
            ids.update(int(x) for x in m.group(1).replace(" ", "").split(",") if x)
        return ids

    def reevaluations(self, d, before_lines, announced):
        lines = self.ledger(d)
        seen = set(lines[:before_lines])
        re_ev = [l for l in lines[before_lines:] if l in seen]
        ids = {int(l.split()[-1]) for l in re_ev}
        return len(re_ev), len(ids - announced)

    # Damage applied to a copy of `base`; then verify, report, resume, repair, verify, resume.
    def damage_case(self, name, base, damage):
        d = self.copy(base, name)
        expected = self.expected[os.path.basename(base)]
        what = damage(os.path.join(d, "store"))
        rc_v, out_v = self.kev(d, "store", "verify", "store")
        named = re.findall(r"(\d{6}\.(?:sst|log)|MANIFEST-\d+|CURRENT)", out_v)
        rc_r, out_r = self.kev(d, "report", "run.toml")
        ev = self.evaluated(out_r)
        report = f"exit {rc_r}" + (f", {ev} evaluated" if ev is not None else "")
        if rc_r != 0:
            report += ": " + first_error(out_r)
        lines0 = len(self.ledger(d))
        rc_s, out_s = self.kev(d, "run", "run.toml")
        resume = f"exit {rc_s}" + (": " + first_error(out_s) if rc_s != 0 else f", {self.evaluated(out_s)} evaluated")
        before = self.counts(out_v)
        rc_p, out_p = self.kev(d, "store", "repair", "store")
        rc_v2, out_v2 = self.kev(d, "store", "verify", "store")
        after = self.counts(out_v2)
        # Losses the repair announced: records lost against those readable before, or node ids below a
        # search's next node without a record.
        lost_told = max([int(x) for x in re.findall(r"(\d+) node record\(s\) lost", out_p)] +
                        [int(x) for x in re.findall(r"(\d+) of its \d+ node ids have no record", out_p)] +
                        [int(x) for x in re.findall(r"lost: (\d+) confirmed record writes", out_p)] + [0])
        if "lost: unknown" in out_p:
            lost_told = -1
        lines1 = len(self.ledger(d))
        rc_a, out_a = self.kev(d, "run", "run.toml")
        n_re, unannounced = self.reevaluations(d, lines1, self.announced(out_a))
        silent = rc_v == 0 and (before is None or before[1] < expected[1])
        salvaged = re.search(r"(\d+) records salvaged", out_p)
        self.rows.append([
            name, what + f" ({expected[1]} nodes before)",
            f"exit {rc_v}" + (f", names {', '.join(sorted(set(named)))}" if named else "") + (" (silent)" if silent else ""),
            report, resume,
            f"exit {rc_p}" + (f", {salvaged.group(1)} records salvaged" if salvaged else "")
            + f"; verify after: exit {rc_v2}" + (f", {after[1]} nodes, {after[2]} artifacts" if after else ""),
            f"{expected[1] - after[1]} of {expected[1]}" if after else "?",
            f"exit {rc_a}, {self.evaluated(out_a)} evaluated; {n_re} re-evaluated, {unannounced} not named by the "
            f"resume, the repair announced " + (f"{lost_told} lost: {max(0, unannounced - lost_told)} unannounced"
                                                if lost_told >= 0 else "a loss of unknown size"),
        ])
        return out_v, out_p, out_a

    # A search killed with SIGKILL `kills` times at random moments (during a checkpoint when `checkpoint`),
    # then resumed to the end. Counts evaluations of nodes that had been evaluated before (the ledger) and
    # which of them the resumes did not announce.
    def kill_case(self, name, kills, checkpoint, seed):
        rnd = random.Random(seed)
        d = os.path.join(self.work, name)
        os.makedirs(d)
        config(d, delay_ms=40.0)
        announced, aborts, refusals, done_early, made = set(), 0, 0, 0, 0
        cps_seen = []
        for i in range(kills):
            p = subprocess.Popen([self.k, "run", "run.toml"], cwd=d, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, start_new_session=True)
            time.sleep(rnd.uniform(0.2, 1.2))
            if checkpoint:
                try:
                    os.kill(p.pid, signal.SIGUSR1)
                except ProcessLookupError:
                    pass
                time.sleep(rnd.uniform(0.0, 0.3))
            try:
                os.killpg(p.pid, signal.SIGKILL)
                made += 1
            except ProcessLookupError:
                pass
            out = p.communicate()[0]
            announced |= self.announced(out)
            cpdir = os.path.join(d, "store.checkpoints")
            if checkpoint and os.path.isdir(cpdir):  # every complete checkpoint the kills left must verify
                for cp in os.listdir(cpdir):
                    if not cp.endswith((".tmp", ".partial")):
                        rc_c, _ = self.kev(d, "store", "verify", os.path.join(cpdir, cp))
                        cps_seen.append(rc_c)
            if p.returncode == 0:
                done_early += 1
                break
            if p.returncode not in (-9, 137):
                aborts += 1 if p.returncode < 0 else 0
                refusals += 1 if p.returncode > 0 else 0
        rc, out = self.kev(d, "run", "run.toml")
        announced |= self.announced(out)
        lines = self.ledger(d)
        counts = {}
        for l in lines:
            counts[l] = counts.get(l, 0) + 1
        dup_ids = {int(l.split()[-1]) for l, c in counts.items() if c > 1}
        rc_v, out_v = self.kev(d, "store", "verify", "store")
        c = self.counts(out_v)
        cps = []
        cpdir = os.path.join(d, "store.checkpoints")
        if os.path.isdir(cpdir):
            for cp in sorted(os.listdir(cpdir)):
                rc_c, _ = self.kev(d, "store", "verify", os.path.join(cpdir, cp))
                cps.append(rc_c)

        self.rows.append([
            name, f"{made} x kill -9" + (" 0-300 ms after SIGUSR1 (a checkpoint)" if checkpoint else " during the search")
            + " at random moments 0.2-1.2 s after the start",
            f"final verify exit {rc_v}" + (f", {c[1]} nodes" if c else "")
            + (f"; checkpoints verified after the kills: {len(cps_seen) + len(cps)}, failing "
               f"{sum(1 for x in cps_seen + cps if x)}" if checkpoint else ""),
            f"aborts {aborts}, refusals {refusals}", f"final run exit {rc}, {self.evaluated(out)} evaluated",
            "not needed", "0" if c and c[1] == BUDGET else "?",
            f"{len(lines) - len(counts)} re-evaluations of {len(dup_ids)} nodes, "
            f"{len(dup_ids - announced)} not announced (ledger {len(lines)} lines)",
        ])

    # The disk fills while the search runs: rehearsed with a free-space reserve set just above what is free
    # after `mb` more MiB (KEVOLVE_STORE_MIN_FREE_MB), then resumed without it.
    def reserve_case(self, name, mb):
        # RocksDB preallocates its log (about 75 MiB on a tmpfs) at the first write: the reserve counts from there.
        return self.tmpfs_case(name, 256 * 1024, reserve_mb=256 - 75 - mb)

    # A real full disk: the store on a tmpfs of `kb` KiB in a private mount namespace; when the run stops,
    # the tmpfs is grown and the same command resumes.
    # reserve_mb: the free-space reserve during the first run (0: none, RocksDB meets the full disk itself).
    def tmpfs_case(self, name, kb, reserve_mb=0):
        d = os.path.join(self.work, name)
        os.makedirs(os.path.join(d, "mnt"))
        config(d, delay_ms=0.5, store="mnt/store")
        script = (f"mount -t tmpfs -o size={kb}k tmpfs mnt && KEVOLVE_STORE_MIN_FREE_MB={reserve_mb} "
                  f"{self.k} run run.toml > out1.txt 2>&1; echo $? > rc1.txt; "
                  f"mount -o remount,size=512m mnt && {self.k} run run.toml > out2.txt 2>&1; echo $? > rc2.txt; "
                  f"{self.k} store verify mnt/store > out3.txt 2>&1; echo $? > rc3.txt")
        subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script], cwd=d, timeout=600)
        rd = lambda f: open(os.path.join(d, f)).read() if os.path.exists(os.path.join(d, f)) else ""
        out1, out2, out3 = rd("out1.txt"), rd("out2.txt"), rd("out3.txt")
        lines = self.ledger(d)
        counts = {}
        for l in lines:
            counts[l] = counts.get(l, 0) + 1
        dup = {int(l.split()[-1]) for l, c in counts.items() if c > 1}
        ann = self.announced(out2)
        c = self.counts(out3)
        self.rows.append([
            name, f"store on a {kb} KiB tmpfs (unshare -m), "
            + (f"a free-space reserve of {reserve_mb} MiB" if reserve_mb else "no reserve: the disk fills")
            + ", then grown to 512 MiB",
            f"exit {rd('rc1.txt').strip()}: {first_error(out1)}", f"{progress(out1)} evaluated when it stopped",
            f"the same command after: exit {rd('rc2.txt').strip()}, {self.evaluated(out2)} evaluated"
            + (f": {first_error(out2)}" if rd('rc2.txt').strip() != "0" else ""),
            f"verify exit {rd('rc3.txt').strip()}" + (f", {c[1]} nodes" if c else ""),
            "0" if c and c[1] == BUDGET else "?",
            f"{len(lines) - len(counts)} re-evaluated, {len(dup - ann)} not announced",
        ])

    # Read-only media: a search stopped half-way, its folder bind-mounted read-only; report and resume.
    def readonly_case(self, name):
        d = os.path.join(self.work, name)
        os.makedirs(d)
        config(d, budget=BUDGET // 2)
        rc, out = self.kev(d, "run", "run.toml")
        assert rc == 0, out
        config(d)  # a larger budget: resuming must write
        script = (f"mount --bind store store && mount -o remount,bind,ro store && "
                  f"{self.k} report run.toml > out1.txt 2>&1; echo $? > rc1.txt; "
                  f"{self.k} run run.toml > out2.txt 2>&1; echo $? > rc2.txt; "
                  f"{self.k} store verify store > out3.txt 2>&1; echo $? > rc3.txt")
        subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script], cwd=d, timeout=600)
        rd = lambda f: open(os.path.join(d, f)).read() if os.path.exists(os.path.join(d, f)) else ""
        lines1 = len(self.ledger(d))
        rc4, out4 = self.kev(d, "run", "run.toml")  # the same command, writable again
        n_re, unannounced = self.reevaluations(d, lines1, self.announced(out4))
        self.rows.append([
            name, "store bind-mounted read-only (unshare -m) after 1,000 of 2,000 evaluations",
            f"verify exit {rd('rc3.txt').strip()}: {first_line(rd('out3.txt'))}",
            f"exit {rd('rc1.txt').strip()}, {self.evaluated(rd('out1.txt'))} evaluated",
            f"exit {rd('rc2.txt').strip()}: {first_error(rd('out2.txt'))}",
            "not needed", "0",
            f"writable again: exit {rc4}, {self.evaluated(out4)} evaluated; {n_re} re-evaluated, {unannounced} not announced",
        ])


def progress(out):
    m = re.findall(r"evaluated (\d+) \(", out)
    return int(m[-1]) if m else 0


def first_error(out):
    for l in out.splitlines():
        if "error" in l.lower() or "refus" in l or "cannot" in l or "corrupt" in l.lower() or "space" in l:
            return l.strip()[:220].replace("|", "/")
    tail = [l for l in out.splitlines() if l.strip()]
    return (tail[-1][:220] if tail else "(no output)").replace("|", "/")


def first_line(out):
    l = [x for x in out.splitlines() if x.strip()]
    return (l[0][:200] if l else "(no output)").replace("|", "/")


def flip_bytes(path, n=2000, offset=None):
    b = bytearray(open(path, "rb").read())
    at = len(b) // 2 if offset is None else offset
    for i in range(at, min(at + n, len(b))):
        b[i] ^= 0x5A
    open(path, "wb").write(b)


def files(store, suffix):
    return sorted((f for f in os.listdir(store) if f.endswith(suffix)), key=lambda f: os.path.getsize(os.path.join(store, f)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kevolve", default="build/bin/kevolve")
    ap.add_argument("--work", default="/tmp/kevolve-durability")
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    m = Matrix(a.kevolve, a.work)
    want = lambda n: not a.only or re.search(a.only, n)
    flushed, logged = m.base("base-sst", True), m.base("base-wal", False)

    def in_sst(i, how):
        def f(store):
            names = files(store, ".sst")
            if i >= len(names):
                return f"no table file {i}"
            p = os.path.join(store, names[i])
            if how == "flip":
                flip_bytes(p)
                return f"2,000 bytes flipped mid-{names[i]} ({os.path.getsize(p)} B)"
            os.truncate(p, os.path.getsize(p) // 2)
            return f"{names[i]} truncated to half"
        return f

    def in_wal(how):
        def f(store):
            p = os.path.join(store, files(store, ".log")[-1])
            size = os.path.getsize(p)
            if how == "truncate":
                os.truncate(p, size // 2)
                return f"log truncated to half ({size} B)"
            if how == "garbage":
                b = bytearray(open(p, "rb").read())
                b[size // 2:size // 2 + 4096] = os.urandom(4096)
                open(p, "wb").write(b)
                return "4 KiB of random bytes mid-log"
            os.remove(p)
            return "log deleted"
        return f

    def remove(prefix):
        def f(store):
            for n in os.listdir(store):
                if n.startswith(prefix):
                    os.remove(os.path.join(store, n))
            return f"{prefix} deleted"
        return f

    cases = [
        ("sst-flip-smallest", flushed, in_sst(0, "flip")),
        ("sst-flip-middle", flushed, in_sst(1, "flip")),
        ("sst-flip-largest", flushed, in_sst(2, "flip")),
        ("sst-truncate-largest", flushed, in_sst(2, "truncate")),
        ("sst-truncate-middle", flushed, in_sst(1, "truncate")),
        ("wal-truncate", logged, in_wal("truncate")),
        ("wal-garbage", logged, in_wal("garbage")),
        ("wal-deleted", logged, in_wal("delete")),
        ("manifest-lost", flushed, remove("MANIFEST")),
        ("current-lost", flushed, remove("CURRENT")),
        ("manifest-lost-wal", logged, remove("MANIFEST")),
    ]
    for name, base, dmg in cases:
        if want(name):
            m.damage_case(name, base, dmg)
    if os.geteuid() == 0:
        for mb in (1, 2, 3):
            if want(f"reserve-{mb}"):
                m.reserve_case(f"reserve-{mb}mib", mb)
        for kb in (1024, 2048, 3072):
            if want(f"tmpfs-{kb}"):
                m.tmpfs_case(f"tmpfs-{kb}k", kb)
            if want(f"tmpfs-reserve-{kb}"):
                m.tmpfs_case(f"tmpfs-reserve-{kb}k", kb, reserve_mb=64)
        if want("read-only"):
            m.readonly_case("read-only")
    if want("kill-search"):
        m.kill_case("kill-search", a.kills, False, 1)
    if want("kill-checkpoint"):
        m.kill_case("kill-checkpoint", a.kills, True, 2)
    print("| case | damage | verify | report | resume before repair | repair | node records lost | after |")
    print("|---|---|---|---|---|---|---|---|")
    for r in m.rows:
        print("| " + " | ".join(str(x) for x in r) + " |")


if __name__ == "__main__":
    sys.exit(main())
