#!/usr/bin/env python3
"""kevolve's Python hardware interpreter: the trusted evaluator for KernelBench-format problems.

A problem is a Python file defining `Model(nn.Module)`, `get_inputs()` and `get_init_inputs()`; a candidate
is a Python file defining `ModelNew` with the same constructor and forward signature. This process loads
the problem, makes seeded inputs and reference outputs and verifies; the candidate itself only ever runs in
a separate runner process (kevolve_py_runner.py) that sees the inputs and weights, never the references.

Rules, as for the native harness:
- Static check of the candidate's syntax tree (names resolved through imports and assignments, strings built
  from constants folded): try/except fallback, the reference, threads and processes, extra streams, lower
  precision, patched timers or modules, and `dynamic` access the check cannot follow (getattr/__import__/
  sys.modules/__dict__ with computed names, eval/exec/compile, globals/vars, frames).
- Transport: tensors cross the trust boundary as raw bytes only. This process allocates one shared region (CPU:
  a memfd; CUDA: a cuMemAlloc allocation exported by its IPC handle) with S input sets and, per set, one slot
  per output, sized from the reference's outputs. Inputs are made here by the problem's own get_inputs() under
  seeds and written into the region, never through files; the runner writes each call's outputs into the slots
  of that call's set; what is checked is copied out of the region the moment the runner answers.
- Verification: `trials` calls on freshly generated inputs, alternating between two sets (a result cached by
  address or by tensor version shows as the answer to an earlier trial: `fresh_data`); outputs compared per
  element (atol + rtol*|ref| for floats, NaN never passes; integers exactly); inputs compared after each call
  (`input_mutation`); then set 0 refilled with new data (`pointer_reuse`: what is left for it when fresh data
  is off). Hangs are killed at the deadline (`timeout`).
- Timing: passes alternate between the candidate (timed in the runner) and the reference (timed here by the
  same procedure, kevolve_py_runner.timed_calls: CUDA events after an L2 flush, or the wall clock on the CPU).
  Every pass regenerates the values of the sets it uses and makes one call per set, so no call sees inputs any
  earlier call saw. After the runner answers, this process samples every call's outputs at positions it draws
  then and copies some calls' outputs whole, chosen at random then too, and checks them against the reference
  pass (`timed_outputs`), in every pass. Its own clock around each pass bounds the times the runner reports
  (`timer`), and a median faster than the bytes that must move at the measured copy bandwidth is
  `impossible_time`. The reference is also timed under torch.compile where this torch has it.

Why a candidate cannot change this process's state (one --serve process evaluates many candidates): this
process never executes anything the candidate's process produced. Commands and answers are JSON lines,
parsed into plain dicts of numbers and strings, checked field by field and matched to their command by a
nonce; tensors come back only as bytes in memory this process allocated, read with the dtype and shape it
chose itself: nothing is unpickled, and torch.load is never called on anything the runner wrote (the model
file goes the other way only). The candidate's process group is stopped (SIGSTOP) whenever no command is out,
so it cannot rewrite the evidence or compete with the reference's timing, and it is killed with everything it
started when the evaluation ends. What this process does not control are the resources the runner shares as
the same user (files such as the torch.compile cache, signals, /proc): the sandbox of the trust split (own uid,
namespaces, seccomp) closes those.

Prints one JSON object (--json) or a readable report. Exit status 0 when the candidate was evaluated.
With --serve it stays: one request per stdin line, one JSON line back each (kevolve keeps one such process
per device: torch is imported once, and the runner of the next candidate is started while kevolve prepares
it; each candidate still runs in a fresh runner process of its own).
"""
import argparse
import ast
import base64
import builtins
import hashlib
import importlib.util
import json
import mmap
import os
import platform
import random
import secrets
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import zlib

# Candidate and reference run in two processes, one at a time: idle OpenMP threads must sleep, not spin on
# the cores the other side is being timed on (set before torch starts its thread pool; the runner inherits it).
# OpenBLAS's workers busy-wait about 0.1 s after each call unless told otherwise (2^4 cycles here): the
# evaluator's would take the cores from the candidate's next pass (measured: the reference against itself
# 0.71-0.77x with the default, 0.99x with this).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kevolve_py_runner as rt  # noqa: E402  (the timing procedure and the region's layout, shared with the runner)

rt.keep_freed_memory()  # as the runner does: both sides allocate on the same terms

DETECTORS = ["static", "input_mutation", "fresh_data", "pointer_reuse", "timed_outputs", "timer", "impossible_time"]


# ---- static check -----------------------------------------------------------------------------------

STREAM_NAMES = {"Stream", "stream", "ExternalStream", "set_stream"}
PRECISION_NAMES = {"allow_tf32", "set_float32_matmul_precision", "allow_fp16_reduced_precision_reduction",
                   "allow_bf16_reduced_precision_reduction", "autocast", "half", "bfloat16", "float16",
                   "HalfTensor", "BFloat16Tensor", "chalf", "complex32"}
PRECISION_STRINGS = {"float16", "half", "bfloat16", "torch.float16", "torch.half", "torch.bfloat16", "f2", "<f2", "e"}
TIMER_NAMES = {"perf_counter", "perf_counter_ns", "time", "monotonic", "Event", "synchronize", "elapsed_time"}
THREAD_MODULES = {"threading", "_thread", "multiprocessing", "concurrent", "asyncio", "subprocess"}
PROCESS_PATHS = ("os.fork", "os.forkpty", "os.system", "os.popen", "os.spawn", "os.exec", "os.posix_spawn",
                 "os.register_at_fork", "pty.fork", "pty.spawn", "os.sched_setaffinity", "os.nice", "os.setpriority",
                 "os.sched_setscheduler", "os.sched_setparam")
# Reaching these executes code, or reaches names, the check cannot see (a getattr with a constant name is
# resolved instead; see _StaticCheck._call).
DYNAMIC_PATHS = ("builtins.eval", "builtins.exec", "builtins.compile", "builtins.globals", "builtins.vars",
                 "builtins.locals", "builtins.__import__", "builtins.breakpoint", "builtins.getattr", "builtins.setattr",
                 "builtins.delattr", "importlib", "sys.modules", "sys._getframe", "sys.settrace", "sys.setprofile",
                 "sys._current_frames", "inspect.currentframe", "inspect.stack", "inspect.getouterframes",
                 "inspect.getinnerframes", "inspect.trace", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
                 "types.FunctionType", "types.CodeType", "ctypes.pythonapi")
DYNAMIC_MODULES = {"__main__", "runpy", "code", "codeop", "imp"}  # the harness's own module; modules that run code
DYNAMIC_ATTRS = {"f_back", "f_globals", "f_locals", "f_builtins", "tb_frame", "gi_frame", "cr_frame", "ag_frame",
                 "__globals__", "__builtins__", "__subclasses__", "__code__", "__closure__", "__self__"}
ALWAYS_BUILTIN = {"eval", "exec", "compile", "__import__", "globals", "vars", "locals", "getattr", "setattr", "delattr",
                  "hasattr", "breakpoint"}  # resolved to builtins even where the file binds the name itself
GETATTR_LIKE = {"builtins.getattr": "get", "builtins.hasattr": "has", "builtins.setattr": "set", "builtins.delattr": "del"}
DUNDER_ACCESS = {"__getattribute__": "get", "__getattr__": "get", "__setattr__": "set", "__delattr__": "del"}
IMPORTERS = ("builtins.__import__", "importlib.import_module", "importlib.__import__")
KERNEL_MARKERS = ("load_inline", "cpp_extension", "nvrtc", "triton", "cupy", "numba")
# In C++/CUDA source carried as strings (load_inline): work queued on a stream of its own escapes the timer.
NATIVE_STREAM_TOKENS = ("cudaStreamCreate", "getStreamFromPool", "cudaStreamNonBlocking", "getStreamFromExternal")
# Settings of torch a candidate may assign (performance switches that change no precision).
PATCH_ALLOWED = ("torch.backends.cudnn.benchmark", "torch.backends.cudnn.deterministic", "torch._dynamo.config.",
                 "torch._inductor.config.")
MAX_FOLD = 64  # the most values one folded string expression may have


def _is_precision(name):
    return name in PRECISION_NAMES or name.startswith("float8")


class _StaticCheck:
    """The static check's walk over one candidate's syntax tree. Names resolve through imports and
    assignments (import x as y, from x import y, y = x.z, y = __import__("x"), sys.modules["x"], x.__dict__["y"],
    getattr(x, "y")) to dotted paths such as 'torch.float16' or 'builtins.exec'; strings built from constants
    (+, *, %, f-strings, join, format, replace, case changes, slices, names bound only to such values, loop
    variables over literals) are folded, so getattr(torch, "float" + "16") is torch.float16 and
    __import__("thr" + "eading") imports threading. Collects (rank, line, reason, why) in `findings`; the more
    specific reasons rank before `dynamic`."""

    def __init__(self, tree, stem):
        self.tree, self.stem = tree, stem
        self.parent = {c: n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
        self.bindings = {}  # name -> the value nodes it is bound to (None: bound some other way)
        self.aliases = {}   # name -> the dotted path it stands for
        self.modules = {"__builtins__"}  # names bound to modules themselves
        self.handled = set()  # nodes a special form already checked (getattr(...), sys.modules[...], ...)
        self.findings = []
        self._collect_bindings()
        self._collect_aliases()

    # -- what names and expressions stand for --

    def _bind(self, target, value):
        """Records that each name in `target` is bound to (the matching part of) `value`; None: unknown."""
        if isinstance(target, ast.Name):
            self.bindings.setdefault(target.id, []).append(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) else None
            for i, t in enumerate(target.elts):
                self._bind(t, values[i] if values else None)
        elif isinstance(target, ast.Starred):
            self._bind(target.value, None)

    def _collect_bindings(self):
        """Every way a name gets a value in the file (assignments, loops, arguments, imports, defs)."""
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    self._bind(t, node.value)
            elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                self._bind(node.target, node.value)
            elif isinstance(node, ast.AugAssign):
                self._bind(node.target, None)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                if isinstance(node.iter, (ast.Tuple, ast.List, ast.Set)) and node.iter.elts:
                    for e in node.iter.elts:
                        self._bind(node.target, e)
                else:
                    self._bind(node.target, None)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if item.optional_vars is not None:
                        self._bind(item.optional_vars, None)
            elif isinstance(node, ast.arg):
                self.bindings.setdefault(node.arg, []).append(None)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.bindings.setdefault(node.name, []).append(None)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                self.bindings.setdefault(node.name, []).append(None)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for a in node.names:
                    self.bindings.setdefault(a.asname or a.name.split(".")[0], []).append(None)

    def _module_valued(self, node):
        """Whether `node` evaluates to a module itself (an import alias, __import__(...), sys.modules[...])."""
        if isinstance(node, ast.Name):
            return node.id in self.modules
        if isinstance(node, ast.Call):
            return self.path(node.func) in IMPORTERS
        return isinstance(node, ast.Subscript) and self.path(node.value) == "sys.modules"

    def _collect_aliases(self):
        """Dotted paths of imported names, then of names assigned from them (y = x.z), to a fixed point."""
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    name = a.asname or a.name.split(".")[0]
                    self.aliases[name] = a.name if a.asname else name
                    self.modules.add(name)
            elif isinstance(node, ast.ImportFrom):
                base = "." * node.level + (node.module or "")
                for a in node.names:
                    if a.name != "*":
                        self.aliases[a.asname or a.name] = base + ("." if base and not base.endswith(".") else "") + a.name
        for _ in range(5):  # y = x, z = y, ...: until nothing changes
            changed = False
            for name, values in self.bindings.items():
                if name in self.aliases:
                    continue
                for v in values:
                    p = self.path(v) if v is not None else None
                    if p:
                        self.aliases[name] = p
                        if self._module_valued(v):
                            self.modules.add(name)
                        changed = True
                        break
            if not changed:
                break

    def path(self, node, depth=0):
        """The dotted path `node` stands for when the check can tell ('torch.float16', 'builtins.exec',
        'sys.modules', '__main__._clock'), else None."""
        if depth > 40:
            return None
        if isinstance(node, ast.Name):
            if node.id in ALWAYS_BUILTIN:
                return "builtins." + node.id
            if node.id in self.aliases:
                return self.aliases[node.id]
            if node.id == "__builtins__":
                return "builtins"
            return "builtins." + node.id if node.id not in self.bindings and hasattr(builtins, node.id) else None
        if isinstance(node, ast.Attribute):
            base = self.path(node.value, depth + 1)
            return base + "." + node.attr if base else None
        if isinstance(node, ast.Call):
            f = self.path(node.func, depth + 1)
            if GETATTR_LIKE.get(f) == "get" and len(node.args) >= 2:
                base, names = self.path(node.args[0], depth + 1), self.fold(node.args[1])
                return base + "." + names[0] if base and names and len(names) == 1 else None
            if f in IMPORTERS and node.args:
                names = self.fold(node.args[0])
                if names and len(names) == 1:
                    full = f != "builtins.__import__" or len(node.args) >= 4 or any(k.arg == "fromlist" for k in node.keywords)
                    return names[0] if full else names[0].split(".")[0]
            if f == "builtins.vars" and node.args:
                base = self.path(node.args[0], depth + 1)
                return base + ".__dict__" if base else None
            if f == "sys.modules.get" and node.args:
                names = self.fold(node.args[0])
                return names[0] if names and len(names) == 1 else None
            return None
        if isinstance(node, ast.Subscript):
            return self._subscript_path(node, depth)
        return None

    def _subscript_path(self, node, depth=0):
        keys = self.fold(node.slice)
        if not keys or len(keys) != 1:
            return None
        key, v = keys[0], node.value
        if isinstance(v, ast.Call) and self.path(v.func, depth + 1) == "builtins.globals" and not v.args:
            return self.aliases.get(key) or "<globals>." + key
        base = self.path(v, depth + 1)
        if base == "sys.modules":
            return key
        if base == "builtins":  # __builtins__[...] (a dict outside __main__)
            return "builtins." + key
        if base and base.endswith(".__dict__"):
            return base[:-len(".__dict__")] + "." + key
        return None

    def fold(self, node, seen=frozenset(), depth=0):
        """The values a string expression can have when the check can compute them, else None."""
        if node is None or depth > 40:
            return None
        if isinstance(node, ast.Constant):
            return [node.value] if isinstance(node.value, str) else None
        if isinstance(node, ast.Name):
            values = self.bindings.get(node.id)
            if node.id in seen or not values or any(v is None for v in values):
                return None
            out = []
            for v in values:
                f = self.fold(v, seen | {node.id}, depth + 1)
                if f is None:
                    return None
                out += f
            return _capped(out)
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Add):
                return self._combine([node.left, node.right], lambda xs: xs[0] + xs[1], seen, depth)
            if isinstance(node.op, ast.Mult):
                s, n = (node.left, node.right) if isinstance(node.right, ast.Constant) else (node.right, node.left)
                strings = self.fold(s, seen, depth + 1)
                if strings and isinstance(n, ast.Constant) and isinstance(n.value, int) and 0 <= n.value <= 64:
                    return _capped([x * n.value for x in strings])
                return None
            if isinstance(node.op, ast.Mod):
                args = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
                return self._combine([node.left] + list(args), lambda xs: xs[0] % tuple(xs[1:]), seen, depth, numbers=True)
            return None
        if isinstance(node, ast.JoinedStr):
            parts = []
            for v in node.values:
                if isinstance(v, ast.FormattedValue):
                    if v.format_spec is not None or v.conversion not in (-1, 115):
                        return None
                    parts.append(v.value)
                else:
                    parts.append(v)
            return self._combine(parts, "".join, seen, depth)
        if isinstance(node, ast.Call) and not node.keywords:
            f = node.func
            if isinstance(f, ast.Name) and f.id == "str" and len(node.args) == 1:
                return self.fold(node.args[0], seen, depth + 1)
            if isinstance(f, ast.Name) and f.id == "chr" and len(node.args) == 1:
                a = node.args[0]
                return [chr(a.value)] if isinstance(a, ast.Constant) and isinstance(a.value, int) and 0 <= a.value < 0x110000 else None
            if isinstance(f, ast.Attribute):
                if f.attr == "join" and len(node.args) == 1 and isinstance(node.args[0], (ast.List, ast.Tuple)):
                    return self._combine([f.value] + list(node.args[0].elts), lambda xs: xs[0].join(xs[1:]), seen, depth)
                if f.attr in ("lower", "upper", "strip", "lstrip", "rstrip", "title", "capitalize", "casefold", "swapcase",
                              "replace", "format", "removeprefix", "removesuffix"):
                    return self._combine([f.value] + list(node.args), lambda xs: getattr(xs[0], f.attr)(*xs[1:]), seen, depth)
            return None
        if isinstance(node, ast.Subscript):
            strings = self.fold(node.value, seen, depth + 1)
            sl = node.slice
            if strings is None:
                return None
            if isinstance(sl, ast.Slice):
                bounds = [_int_constant(b) if b is not None else None for b in (sl.lower, sl.upper, sl.step)]
                if any(b is False for b in bounds) or bounds[2] == 0:
                    return None
                return _capped([s[bounds[0]:bounds[1]:bounds[2]] for s in strings])
            i = _int_constant(sl)
            if i is False:
                return None
            try:
                return _capped([s[i] for s in strings])
            except IndexError:
                return None
        return None

    def _combine(self, nodes, op, seen, depth, numbers=False):
        """op over every combination of the nodes' folded values (ints and floats too if `numbers`)."""
        choices = []
        for n in nodes:
            if numbers and isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool):
                choices.append([n.value])
                continue
            f = self.fold(n, seen, depth + 1)
            if f is None:
                return None
            choices.append(f)
        out = [[]]
        for c in choices:
            out = [o + [x] for o in out for x in c]
            if len(out) > MAX_FOLD:
                return None
        try:
            return _capped([str(op(xs)) for xs in out])
        except Exception:
            return None

    # -- findings --

    def hit(self, reason, node, why):
        """Records one finding at `node`'s line."""
        self.findings.append((1 if reason == "dynamic" else 0, getattr(node, "lineno", 0), reason, why))

    def attr_rules(self, attr, node, store, base):
        """One attribute access (real, or through getattr/setattr/__dict__ with a folded name); `base` is the
        dotted path of the object when known."""
        if attr in STREAM_NAMES:
            self.hit("streams", node, "'%s': work on another stream escapes the timer" % attr)
        if _is_precision(attr):
            self.hit("precision", node, "'%s': lower precision than the reference computes in" % attr)
        if attr == "Model":
            self.hit("reference", node, "the reference Model is used")
        if attr in DYNAMIC_ATTRS:
            self.hit("dynamic", node, "'%s' reaches frames, globals or code the check cannot follow (the harness's among them)" % attr)
        if store:
            full = (base + "." + attr) if base else attr
            if attr in TIMER_NAMES:
                self.hit("timer", node, "assigning '%s': timers must not be patched" % full)
            elif base and not _is_precision(attr) and not any(full == p or (p.endswith(".") and full.startswith(p)) for p in PATCH_ALLOWED):
                self.hit("timer", node, "assigning '%s': the functions of torch, time and other modules (timers, events, streams, "
                                        "copies, the harness's own) must not be patched" % full)

    def path_rules(self, p, node):
        """A name reached by its dotted path (through any alias)."""
        parts = p.split(".")
        if parts[-1] == "Model":
            self.hit("reference", node, "the reference Model is used")
        if self._names_problem(parts):
            self.hit("reference", node, "'%s': the problem's module: the reference must not be called" % p)
        if any(x in THREAD_MODULES for x in parts):
            self.hit("threads", node, "'%s': work on other threads or processes escapes the timer" % p)
        if any(p.startswith(q) for q in PROCESS_PATHS):
            self.hit("threads", node, "'%s': work in other processes, or a change of where and how the candidate's process "
                                      "runs, escapes the comparison with the reference" % p)
        if any(_is_precision(x) for x in parts[1:]) or (parts[0] == "torch" and "amp" in parts):
            self.hit("precision", node, "'%s': lower precision than the reference computes in" % p)
        if p == "contextlib.suppress":
            self.hit("fallback", node, "contextlib.suppress around computation: a kernel that fails must fail, not fall back")
        if parts[0] in DYNAMIC_MODULES:
            self.hit("dynamic", node, "'%s': the harness's module, or a module that runs code the check cannot see" % p)
        if any(p == q or p.startswith(q + ".") for q in DYNAMIC_PATHS):
            self.hit("dynamic", node, "'%s': reaches code or names the check cannot follow" % p)
        if p.endswith(".__dict__"):
            self.hit("dynamic", node, "'%s': a module's namespace, read or written by names the check cannot follow" % p)

    def _names_problem(self, parts):
        """Whether a dotted name is the problem's module (its file's stem, or a module named after it)."""
        return bool(self.stem) and any(x == self.stem or x.endswith("_" + self.stem) for x in parts)

    def import_rules(self, name, node):
        parts = name.split(".")
        if any(x in THREAD_MODULES for x in parts):
            self.hit("threads", node, "'%s': work on other threads or processes escapes the timer" % name)
        if self._names_problem(parts):
            self.hit("reference", node, "importing the problem module: the reference must not be called")
        if parts[0] in DYNAMIC_MODULES:
            self.hit("dynamic", node, "'%s': the harness's module, or a module that runs code the check cannot see" % name)
        if parts[0] == "torch" and "amp" in parts:
            self.hit("precision", node, "'%s': lower precision than the reference computes in" % name)

    def _mark(self, node):
        """The parts of a special form are checked by it, not again as bare references."""
        if isinstance(node, ast.Call):
            self.handled.add(node.func)
            for a in node.args[:1]:
                if isinstance(a, ast.Name):
                    self.handled.add(a)
        elif isinstance(node, (ast.Name, ast.Attribute)):
            self.handled.add(node)

    def _call(self, node):
        """The special calls: getattr-like access with computable names, imports by name, sys.modules.get,
        attrgetter, and precision names passed as strings."""
        f = self.path(node.func)
        method = node.func.attr if isinstance(node.func, ast.Attribute) else None
        kind = obj = name = None
        if f in GETATTR_LIKE and len(node.args) >= 2:
            kind, obj, name = GETATTR_LIKE[f], node.args[0], node.args[1]
        elif method in DUNDER_ACCESS and node.args:
            kind = DUNDER_ACCESS[method]
            if self.path(node.func.value) in ("builtins.object", "builtins.type") and len(node.args) >= 2:
                obj, name = node.args[0], node.args[1]
            else:
                obj, name = node.func.value, node.args[0]
        if kind:
            self._mark(node)
            if isinstance(obj, ast.Name):
                self.handled.add(obj)
            base, names = self.path(obj), self.fold(name)
            if names:
                for n in names:
                    self.attr_rules(n, node, kind in ("set", "del"), base)
                    if base:
                        self.path_rules(base + "." + n, node)
            elif kind != "has" and (base or (isinstance(obj, ast.Name) and obj.id in self.modules)):
                self.hit("dynamic", node, "%sattr on '%s' with a name the check cannot compute" % (kind, base or obj.id))
            return
        if f in IMPORTERS:
            self._mark(node)
            names = self.fold(node.args[0]) if node.args else None
            if names:
                for n in names:
                    self.import_rules(n, node)
            else:
                self.hit("dynamic", node, "importing a module whose name the check cannot compute")
            return
        if f == "sys.modules.get" and node.args and self.fold(node.args[0]):
            self._mark(node)
            for n in self.fold(node.args[0]):
                self.path_rules(n, node)
                self.import_rules(n, node)
            return
        if f in ("operator.attrgetter", "operator.methodcaller"):
            self._mark(node)
            names = self.fold(node.args[0]) if node.args else None
            if not names:
                self.hit("dynamic", node, "%s with a name the check cannot compute" % f)
            for n in names or []:
                for part in n.split("."):
                    self.attr_rules(part, node, False, None)
            return
        if method in ("to", "type", "astype", "view", "set_default_dtype", "set_default_tensor_type"):
            for a in list(node.args) + [k.value for k in node.keywords]:
                for s in self.fold(a) or []:
                    if s in PRECISION_STRINGS or "HalfTensor" in s or "BFloat16Tensor" in s:
                        self.hit("precision", node, "'%s': lower precision than the reference computes in" % s)

    def _subscript(self, node):
        """sys.modules[...], X.__dict__[...], vars(X)[...], globals()[...] with computable keys: checked as the
        names they reach."""
        p = self._subscript_path(node)
        if p is None:
            return
        self._mark(node.value)
        store = isinstance(node.ctx, (ast.Store, ast.Del))
        if store and self.path(node.value) == "sys.modules":
            self.hit("timer", node, "replacing the module '%s' in sys.modules: modules must not be patched" % p)
        self.path_rules(p, node)
        base, _, attr = p.rpartition(".")
        self.attr_rules(attr, node, store, base if base and not base.startswith("<globals>") else None)

    def _outermost(self, node):
        """Whether `node` is not itself the object of an attribute access (x in x.y)."""
        parent = self.parent.get(node)
        return not (isinstance(parent, ast.Attribute) and parent.value is node)

    def _alias_binding(self, node):
        """Whether `node` is the whole value of an assignment to plain names (tracked as an alias)."""
        parent = self.parent.get(node)
        return isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is node and all(
            isinstance(t, ast.Name) for t in (parent.targets if isinstance(parent, ast.Assign) else [parent.target]))

    def run(self):
        """Walks the tree and collects the findings."""
        for node in ast.walk(self.tree):  # the special forms first: their parts are not bare references
            if isinstance(node, ast.Call):
                self._call(node)
            elif isinstance(node, ast.Subscript):
                self._subscript(node)
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
                if not all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in node.body):
                    self.hit("fallback", node, "try/except around computation: a kernel that fails must fail, not fall back to PyTorch")
            elif isinstance(node, ast.Import):
                for a in node.names:
                    self.import_rules(a.name, node)
            elif isinstance(node, ast.ImportFrom):
                mod = node.module or ""
                if node.level == 0 and mod:
                    self.import_rules(mod, node)
                for a in node.names:
                    if a.name == "Model":
                        self.hit("reference", node, "importing Model: the reference must not be called")
                    if node.level == 0 and mod and a.name != "*" and a.name not in ALWAYS_BUILTIN:
                        self.path_rules(mod + "." + a.name, node)
                    elif a.name == self.stem:
                        self.hit("reference", node, "importing the problem module: the reference must not be called")
            elif isinstance(node, ast.Attribute):
                store = isinstance(node.ctx, (ast.Store, ast.Del))
                self.attr_rules(node.attr, node, store, self.path(node.value) if store else None)
            if isinstance(node, ast.Name) and node.id == "Model":
                self.hit("reference", node, "the reference Model is used")
            if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load) and node not in self.handled \
                    and self._outermost(node):
                p = self.path(node)
                if p:
                    self.path_rules(p, node)
                if isinstance(node, ast.Name) and node.id in self.modules and not self._alias_binding(node):
                    self.hit("dynamic", node, "the module '%s' used as a value: what is reached through it cannot be checked" % node.id)


def _capped(values):
    """The distinct values, or None when there are more than MAX_FOLD."""
    out = list(dict.fromkeys(values))
    return out if len(out) <= MAX_FOLD else None


def _int_constant(node):
    """The int a constant (or negated constant) node holds, else False."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _int_constant(node.operand)
        return -v if v is not False else False
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool) else False


def static_check(source, problem_stem):
    """Returns (hack, line, why) for the most specific forbidden construct (the first by line among them),
    or None. hack: syntax, fallback, reference, threads, streams, precision, timer or dynamic."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as e:
        return ("syntax", getattr(e, "lineno", 0) or 0, "the candidate is not valid Python: %s" % getattr(e, "msg", e))
    check = _StaticCheck(tree, problem_stem)
    for n, text in enumerate(source.splitlines(), 1):
        for token in NATIVE_STREAM_TOKENS:
            if token in text:
                check.findings.append((0, n, "streams", "'%s' in native source: work on another stream escapes the timer" % token))
    check.run()
    if not check.findings:
        return None
    _, line, reason, why = min(check.findings, key=lambda f: (f[0], f[1]))
    return (reason, line, why)


def label_of(source):
    """kernel: the candidate brings its own kernel code; framework: it rearranges PyTorch calls."""
    return "kernel" if any(m in source for m in KERNEL_MARKERS) else "framework"


# ---- the runner process -------------------------------------------------------------------------------

MAX_ANSWER = 1 << 20  # bytes of one answer line
RUNNER_STATUSES = {"ok", "runtime_error", "rejected"}
RUNNER_REASONS = {"exception", "load", "outputs", "isolation"}


class Runner:
    """The candidate's process: one JSON command per line on its stdin, one JSON answer line on its stdout.
    It runs only while a command is out (SIGCONT before, SIGSTOP after the answer), so between commands it can
    neither change the evidence nor compete with the reference's timing. candidate "-" starts a standby runner
    (torch imported, device set up) that learns its candidate later (take_runner)."""

    def __init__(self, candidate, workdir, device, threads, timeout):
        self.timeout = timeout
        self.device, self.threads = device, threads
        env = dict(os.environ)
        env["OMP_NUM_THREADS"] = str(threads)
        env["KEVOLVE_RUNNER_PARENT"] = str(os.getpid())
        self.log = tempfile.TemporaryFile()  # its stderr: a file, so that a chatty candidate never blocks on a full pipe
        # Descriptors go to the runner over a socket pair (the memfd: a runner of another uid or user namespace
        # cannot open it through /proc); the runner closes its end once the region is mapped.
        self.fds, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        env["KEVOLVE_RUNNER_FDS"] = str(theirs.fileno())
        self.p = subprocess.Popen([sys.executable, os.path.join(HERE, "kevolve_py_runner.py"), candidate, device, str(threads)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, cwd=workdir, env=env,
                                  start_new_session=True, pass_fds=(theirs.fileno(),))
        theirs.close()
        self.pending = b""

    def _signal(self, sig):
        try:
            os.killpg(self.p.pid, sig)
        except OSError:
            pass

    def _readable(self, timeout):
        return bool(select.select([self.p.stdout], [], [], max(0.0, timeout))[0])

    def ask(self, cmd, timeout=None, fd=None):
        """Sends one command and returns its answer, checked: a dict with status (ok, runtime_error, rejected),
        reason, message and the command's own fields (ns, copied). A hang (killed after `timeout`, default the
        runner's), a death or a broken protocol comes back as the verdict it makes (timeout, runtime_error,
        rejected with reason protocol). `fd`, if given, is sent to the runner with the command."""
        limit = timeout or self.timeout
        nonce = secrets.token_hex(8)
        if self.pending or (self.p.poll() is None and self._readable(0)):
            return self._protocol("it wrote to its answer pipe between commands")
        self._signal(signal.SIGCONT)
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
                        "message": "the candidate did not finish within %g s (wall clock); its process was killed" % limit}
            chunk = os.read(self.p.stdout.fileno(), 65536)
            if not chunk:
                return self._died()
            self.pending += chunk
            if len(self.pending) > MAX_ANSWER:
                return self._protocol("an answer longer than %d bytes" % MAX_ANSWER)
        self._signal(signal.SIGSTOP)
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
        """Kills the runner and everything in its process group (stopped or not)."""
        self._signal(signal.SIGKILL)
        try:
            self.p.kill()
        except OSError:
            pass
        self.p.wait()

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


def take_runner(candidate, workdir, device, threads, timeout):
    """A runner of its own for `candidate`: the standby runner when one was started for this device and
    thread count (it opens the candidate now), else a fresh process."""
    global _standby
    r, _standby = _standby, None
    if r is not None:
        if (r.device, r.threads) == (device, threads) and r.p.poll() is None:
            r.timeout = timeout
            if r.ask({"op": "open", "candidate": candidate, "work": workdir}, timeout=max(60, timeout)).get("status") == "ok":
                return r
        r.close()
    return Runner(candidate, workdir, device, threads, timeout)


def start_standby(device, threads, timeout):
    global _standby
    if _standby is None:
        _standby = Runner("-", None, device, threads, timeout)


# ---- data: generation, the shared region, comparisons ---------------------------------------------------

MAX_SETS = 64        # input sets in the region, at most
SAMPLES = 1024       # sampled elements per output of every timed call
STALE_SAMPLES = 4096  # sampled elements per output kept of each trial's expected outputs


class _Verdict(Exception):
    """Ends an evaluation with this status, reason and message."""

    def __init__(self, status, reason, message, where=""):
        super().__init__(message)
        self.status, self.reason, self.message, self.where = status, reason, message, where


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def as_list(out):
    """A forward's result as a list of outputs."""
    return list(out) if isinstance(out, (list, tuple)) else [out]


def sync(dev):
    """Waits for the device's queued work (CUDA only)."""
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def generate_inputs(problem, dev, seed):
    """The problem's own get_inputs() under `seed` (torch, random and numpy seeded), on `dev`; made on the
    device itself where this torch can make it the default device (torch 2: `with torch.device(...)`)."""
    torch.manual_seed(seed)
    random.seed(seed)
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed(seed % (1 << 32))
    if dev.type == "cuda" and hasattr(dev, "__enter__"):
        with dev:
            xs = problem.get_inputs()
    else:
        xs = problem.get_inputs()
    return [x.to(dev) if isinstance(x, torch.Tensor) else x for x in as_list(xs)]


def reference(model, inputs):
    """The reference's outputs, computed on clones of the inputs (the reference may write into its own)."""
    with torch.no_grad():
        return [o.detach() if isinstance(o, torch.Tensor) else o
                for o in as_list(model(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]))]


def _dtype_name(dtype):
    return str(dtype).split(".", 1)[1]


def _tensor_spec(t, contiguous=False):
    """What the runner needs to see tensor `t`'s twin in the region: dtype, shape, strides, bytes spanned.
    Strides are kept when they describe a dense, non-overlapping layout (a permutation), else contiguous."""
    shape, stride = list(t.shape), list(t.stride())
    extent = 0 if t.numel() == 0 else 1 + sum((n - 1) * s for n, s in zip(shape, stride))
    if contiguous or not (t.is_contiguous() or (extent == t.numel() and all(s >= 1 for s in stride))):
        stride = rt._contiguous_strides(shape)
        extent = t.numel()
    return {"dtype": _dtype_name(t.dtype), "shape": shape, "stride": stride, "nbytes": extent * t.element_size()}


def _json_value(x):
    """Whether a non-tensor input can go to the runner as JSON (numbers, strings, None, lists of those)."""
    if x is None or isinstance(x, (bool, int, float, str)):
        return True
    return isinstance(x, (list, tuple)) and all(_json_value(v) for v in x)


def _available_ram():
    """Bytes of memory available (MemAvailable), else half the physical memory."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2


class SharedSets:
    """`nsets` input sets and, per set, one slot per output, in one region shared with the runner (CPU: a memfd
    the runner opens through /proc; CUDA: a device allocation of its own, exported by its IPC handle), and this
    side's trusted copies of every set's inputs (`priv`): the reference runs on those, and the shared copy must
    still equal them after a call. `inputs` and `outputs` are the first seed's inputs and reference outputs."""

    def __init__(self, inputs, outputs, nsets, dev):
        self.dev, self.nsets = dev, nsets
        self.in_specs, self.out_specs, off = [], [], 0
        for x in inputs:
            if isinstance(x, torch.Tensor):
                spec = dict(_tensor_spec(x), offset=off)
                off += -(-spec["nbytes"] // rt.ALIGN) * rt.ALIGN
            else:
                spec = {"value": x}
            self.in_specs.append(spec)
        for o in outputs:
            spec = dict(_tensor_spec(o, contiguous=True), offset=off)
            off += -(-spec["nbytes"] // rt.ALIGN) * rt.ALIGN
            self.out_specs.append(spec)
        self.set_bytes = max(rt.ALIGN, off)
        self.size = self.set_bytes * nsets
        self.bytes_moved = sum(x.numel() * x.element_size() for x in list(inputs) + list(outputs) if isinstance(x, torch.Tensor))
        self._free, self._fd, self._mm, self.fd = None, None, None, None
        if dev.type == "cuda":
            region, handle, self._free = rt.cuda_exported(self.size, dev)
            self.memory = {"kind": "cuda", "handle": base64.b64encode(handle).decode(), "size": self.size}
            self.transport = "CUDA IPC (a cuMemAlloc allocation of its own)"
        else:
            self._fd = os.memfd_create("kevolve-io")
            os.ftruncate(self._fd, self.size)
            region = self._mm = mmap.mmap(self._fd, self.size)
            self.memory = {"kind": "cpu", "size": self.size}  # the memfd itself goes with the command (Runner.ask)
            self.fd = self._fd
            self.transport = "shared memory (memfd)"
        self.inputs = [[rt.carve(region, k * self.set_bytes + s["offset"], s, dev) if "value" not in s else None for s in self.in_specs]
                       for k in range(nsets)]
        self.slots = [[rt.carve(region, k * self.set_bytes + s["offset"], s, dev) for s in self.out_specs] for k in range(nsets)]
        self.priv = [None] * nsets
        self.new_values = {}
        self.has_values = any("value" in s for s in self.in_specs)
        for k in range(nsets):  # the slots' pages exist before any call writes them
            self.poison(k)

    def describe(self):
        """The `bind` command: where the region is and how it is laid out."""
        return {"op": "bind", "memory": self.memory, "layout": {"inputs": self.in_specs, "outputs": self.out_specs},
                "set_offsets": [k * self.set_bytes for k in range(self.nsets)]}

    def fill(self, k, xs, seed):
        """Makes `xs` (generated under `seed`) set k's inputs: the trusted copy, and the bytes in the region."""
        if len(xs) != len(self.in_specs) or any(
                isinstance(x, torch.Tensor) != ("value" not in s) or (isinstance(x, torch.Tensor) and
                                                                      (_dtype_name(x.dtype) != s["dtype"] or list(x.shape) != s["shape"]))
                for x, s in zip(xs, self.in_specs)):
            raise _Verdict("harness_error", "harness", "get_inputs() under seed %d gave inputs of other types or shapes than "
                                                       "under the first seed: the shared buffers cannot hold them" % seed)
        with torch.no_grad():
            for view, x in zip(self.inputs[k], xs):
                if view is not None:
                    view.copy_(x)
        self.priv[k] = xs
        if self.has_values:
            self.new_values[str(k)] = [None if isinstance(x, torch.Tensor) else x for x in xs]

    def take_values(self):
        """The non-tensor inputs of the sets filled since the last command (for the runner), or None."""
        v, self.new_values = self.new_values, {}
        return v or None

    def poison(self, k):
        """Fills set k's slots with NaN (floats) or 0x5A bytes (integers): a slot left unwritten shows."""
        for s in self.slots[k]:
            if s.is_floating_point() or s.is_complex():
                s.fill_(float("nan"))
            elif s.dtype != torch.bool:
                s.view(torch.uint8).fill_(0x5A) if s.is_contiguous() else s.fill_(0x5A)

    def mutated(self, k):
        """The index of the first input of set k whose shared copy no longer equals the trusted one, or None."""
        for i, (view, x) in enumerate(zip(self.inputs[k], self.priv[k])):
            if view is not None and not _same(view, x):
                return i
        return None

    def release(self):
        """Frees the region (after the runner is gone: CUDA memory is freed whether or not it still maps it)."""
        self.inputs = self.slots = self.priv = None
        if self._free:
            self._free()
        if self._mm is not None:
            try:
                self._mm.close()
            except BufferError:  # a view still alive somewhere: the mapping goes with it
                pass
        if self._fd is not None:
            os.close(self._fd)


def _same(a, b):
    """Equal element for element, NaN equal to NaN."""
    if torch.equal(a, b) or not (a.is_floating_point() or a.is_complex()):
        return torch.equal(a, b)
    return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())


def count_sets(per_set_bytes, dev, wanted):
    """How many input sets the region holds: as many as `wanted` (at most MAX_SETS) within a memory budget
    (CUDA: 35 % of the free device memory; CPU: a quarter of the available memory, at most 512 MiB), at least one."""
    if dev.type == "cuda":
        budget = 0.35 * torch.cuda.mem_get_info(dev)[0]
    else:
        budget = min(0.25 * _available_ram(), 512 << 20)
    return max(1, min(MAX_SETS, wanted, int(budget // max(1, per_set_bytes))))


CHUNK = 1 << 22  # elements compared at a time


def bad_elements(g, e, atol, rtol):
    """Mask of the elements of g outside the tolerance of e (same shape): |g - e| > atol + rtol*|e| where e is
    finite, NaN/Inf in g where e is finite; integers and booleans must be equal."""
    if not (e.is_floating_point() or e.is_complex()):
        return g != e
    if e.dtype in (torch.float16, torch.bfloat16):
        g, e = g.float(), e.float()
    return ~((g - e).abs() <= e.abs() * rtol + atol) & torch.isfinite(e)


def compare(got, exp, atol, rtol, stats=True):
    """(ok, max_abs, max_rel, text) for one output, compared in chunks on its device; without `stats` the error
    maxima are not computed (0) unless the output is wrong."""
    if not isinstance(got, torch.Tensor):
        return False, 0.0, 0.0, "the output is a %s, not a tensor" % type(got).__name__
    if got.shape != exp.shape:
        return False, 0.0, 0.0, "shape %s, expected %s" % (tuple(got.shape), tuple(exp.shape))
    if got.dtype != exp.dtype:
        return False, 0.0, 0.0, "dtype %s, expected %s" % (got.dtype, exp.dtype)
    g, e = got.reshape(-1), exp.reshape(-1).to(got.device)
    if not stats and not any(bool(bad_elements(g[s:s + CHUNK], e[s:s + CHUNK], atol, rtol).any()) for s in range(0, g.numel(), CHUNK)):
        return True, 0.0, 0.0, ""
    nbad, first, max_abs, max_rel = 0, None, 0.0, 0.0
    for s in range(0, g.numel(), CHUNK):
        gc, ec = g[s:s + CHUNK], e[s:s + CHUNK]
        bad = bad_elements(gc, ec, atol, rtol)
        count = int(bad.sum())
        if count and first is None:
            first = s + int(bad.nonzero()[0])
        nbad += count
        if not (ec.is_floating_point() or ec.is_complex()):
            gc, ec = gc.double(), ec.double()
        elif ec.dtype in (torch.float16, torch.bfloat16):
            gc, ec = gc.float(), ec.float()
        err = (gc - ec).abs()
        fin = torch.isfinite(err)
        if bool(fin.any()):
            err, ref = err[fin], ec[fin].abs()
            max_abs = max(max_abs, float(err.max()))
            max_rel = max(max_rel, float((err / ref.clamp_min(1e-30)).max()))
    if nbad:
        return False, max_abs, max_rel, "%d of %d elements outside atol %g + rtol %g*|ref| (first at flat index %d: %s vs %s)" % (
            nbad, g.numel(), atol, rtol, first, _num(g[first]), _num(e[first]))
    return True, max_abs, max_rel, ""


def _num(t):
    """One element, printed as %g prints real numbers."""
    v = t.item()
    return "%g" % v if isinstance(v, (int, float)) else str(v)


def positions(numel, count, rng, dev):
    """`count` flat indices into `numel` elements (all of them when fewer), drawn from `rng`."""
    if numel <= count:
        return torch.arange(numel, device=dev)
    return torch.randint(0, numel, (count,), generator=rng).to(dev)


def sampled(tensors, where):
    """Each tensor's elements at its flat positions `where` (new tensors: the evidence stays on this side)."""
    return [t.reshape(-1).index_select(0, p) for t, p in zip(tensors, where)]


def samples_match(got, exp, atol, rtol):
    """Whether every sampled element of every output is within the tolerance."""
    return all(not bool(bad_elements(g, e, atol, rtol).any()) for g, e in zip(got, exp))


def stale(got, exp, earlier, at, atol, rtol):
    """Whether outputs `got` (wrong for their inputs, whose answer is `exp`) are the answer to earlier inputs:
    equal, at the positions `at`, to one of the `earlier` answers sampled there that differs from `exp`."""
    g, e = sampled(got, at), sampled(exp, at)
    return any(samples_match(g, prev, atol, rtol) and not samples_match(e, prev, atol, rtol) for prev in earlier)


def summarize(samples_ns, threads):
    if not samples_ns:
        return {"median_ms": 0, "p10_ms": 0, "p90_ms": 0, "samples": 0, "threads": threads}
    s = sorted(samples_ns)
    pick = lambda q: s[min(len(s) - 1, int(q * len(s)))] / 1e6
    return {"median_ms": statistics.median(s) / 1e6, "p10_ms": pick(0.1), "p90_ms": pick(0.9), "samples": len(s), "threads": threads}


_best_bandwidth = {}  # (device, bytes) -> the highest copy bandwidth this process has measured


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


# ---- evaluation ---------------------------------------------------------------------------------------

# Reported as "sandbox" until the runner says what it put in force (its answer to `confine`, given before any
# candidate code ran in it; see kevolve_py_runner.py, "the sandbox").
SANDBOX_NONE = "none: the runner was not confined (it ended before its sandbox was set up)"
NOBODY = 65534  # the runner's uid once confined (kevolve_py_runner.NOBODY)
TIMER_SLACK_NS = 3e6  # per pass: the round trip, waking the runner, its final synchronisation
PASS_NS = 10e6        # timed work per pass, after the first two (one call per input set)


def pin_to_one_core():
    """CUDA: this process and the runners it starts from now on share one core (they never run at once), so that
    launch-bound timings compare both sides on the same core. Measured on an H200 host: the reference against
    itself 0.86-1.21x from run to run unpinned, 0.98-1.01x pinned. Servers of different GPUs (CUDA_VISIBLE_DEVICES)
    take different cores. Returns the core, or None."""
    try:
        cores = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None
    if len(cores) > 1:
        v = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip()
        k = int(v) if v.isdigit() else zlib.crc32(v.encode())
        cores = [cores[-1 - k % len(cores)]]
        os.sched_setaffinity(0, set(cores))
    return cores[0] if cores else None


def _ok(r, where):
    """Raises the verdict of a runner's answer that is not ok."""
    if r["status"] != "ok":
        raise _Verdict(r["status"], r.get("reason") or r["status"], "%s (%s)" % (r["message"], where), where)


def evaluate(a):
    """Evaluates the candidate `a` names against its problem; returns the JSON result (python_backend.cpp reads
    its fields)."""
    res = {"status": "harness_error", "reason": "", "message": "", "where": "", "max_abs_err": 0.0, "max_rel_err": 0.0,
           "trials": 0, "shapes": 1, "speedup": 0.0, "reference": summarize([], a.threads), "candidate": summarize([], a.threads),
           "compile": None, "compile_speedup": 0.0, "label": "", "detectors_off": a.detector_off, "device": a.device}
    on = lambda d: d not in a.detector_off
    torch.set_num_threads(a.threads)
    stem = os.path.splitext(os.path.basename(a.problem))[0]
    try:
        with open(a.candidate) as f:
            source = f.read()
    except OSError as e:
        res["message"] = "cannot read the candidate: %s" % e
        return res
    res["label"] = label_of(source)
    if on("static"):
        hit = static_check(source, stem)
        if hit:
            kind, line, why = hit
            res.update(status="compile_error" if kind == "syntax" else "rejected", reason=kind, message="line %d: %s" % (line, why))
            return res
    try:
        problem = load_module(a.problem, "kevolve_problem_" + stem.replace("-", "_"))
    except Exception as e:
        res["message"] = "%s: cannot load the problem: %s: %s" % (a.problem, type(e).__name__, e)
        return res
    for need in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(problem, need):
            res["message"] = "%s: a KernelBench problem defines Model, get_inputs and get_init_inputs; '%s' is missing" % (a.problem, need)
            return res
    dev = torch.device(a.device)
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            res.update(reason="harness", message="no usable CUDA device: torch %s on this machine sees none (torch.cuda.is_available() is false)" % torch.__version__)
            return res
        dev = torch.device("cuda", torch.cuda.current_device())
        res["core"] = pin_to_one_core()
    work = tempfile.mkdtemp(prefix="kevolve-py-")
    scratch = os.path.join(work, "scratch")  # the runner's only writable folder (TMPDIR: a kernel's build)
    os.mkdir(scratch, 0o700)
    if os.geteuid() == 0:  # the runner becomes nobody: it may enter `work` (not list it) and write `scratch`
        os.chown(scratch, NOBODY, NOBODY)
        os.chmod(work, 0o711)
    res["sandbox"] = SANDBOX_NONE
    held = {}  # what _evaluate started: the runner, the shared sets
    try:
        _evaluate(a, res, on, problem, dev, work, held)
    except _Verdict as v:
        res.update(status=v.status, reason=v.reason, message=v.message, where=v.where)
    except Exception as e:
        res.update(status="harness_error", reason="harness", message="evaluator error: %s: %s" % (type(e).__name__, e))
    finally:
        runner, sets = held.get("runner"), held.get("sets")
        if runner:
            tail = runner.stderr_tail()
            if tail and res["status"] != "ok":
                res["runner_log"] = tail
            runner.close()
        if sets:
            sets.release()
        shutil.rmtree(work, ignore_errors=True)
    return res


def _evaluate(a, res, on, problem, dev, work, held):
    """The evaluation proper: raises _Verdict, or fills `res` for an `ok`. Puts the runner and the shared sets
    it starts in `held` (the caller releases them)."""
    torch.manual_seed(a.seed)
    init = problem.get_init_inputs()
    torch.manual_seed(a.seed)
    model = problem.Model(*init).to(dev).eval()
    torch.save({"init": init, "state": model.state_dict(), "seed": a.seed}, os.path.join(work, "model.pt"))
    base_seed = a.seed * 1000003
    trial_seed = lambda t: base_seed + (t if on("fresh_data") else 0)
    timing_seed = lambda p, k: base_seed + (100003 + p * MAX_SETS + k if on("fresh_data") else 0)

    # The first trial's inputs and reference outputs fix the layout of the shared region.
    first = generate_inputs(problem, dev, trial_seed(0))
    for i, x in enumerate(first):
        if not isinstance(x, torch.Tensor) and not _json_value(x):
            raise _Verdict("harness_error", "harness", "input %d of get_inputs() is a %s: only tensors, numbers and strings "
                                                       "can be passed to the candidate" % (i, type(x).__name__))
    reference(model, first)  # warm-up
    sync(dev)
    t0 = time.perf_counter_ns()
    first_exp = reference(model, first)
    sync(dev)
    ref_ns = time.perf_counter_ns() - t0
    for i, o in enumerate(first_exp):
        if not isinstance(o, torch.Tensor):
            raise _Verdict("harness_error", "harness", "the reference's output %d is a %s: only tensor outputs are supported" % (i, type(o).__name__))
    in_bytes = sum(x.numel() * x.element_size() for x in first if isinstance(x, torch.Tensor))
    out_bytes = sum(o.numel() * o.element_size() for o in first_exp)
    wanted = max(a.sets, 2, -(-int(PASS_NS) // max(1, ref_ns)))  # enough sets for a pass of PASS_NS at the reference's speed
    nsets = count_sets(2 * in_bytes + out_bytes + 2 * rt.ALIGN * (len(first) + len(first_exp)), dev, wanted)
    sets = held["sets"] = SharedSets(first, first_exp, nsets, dev)

    # The runner maps the region, confines itself (and says how), and only then imports the candidate.
    runner = held["runner"] = take_runner(os.path.abspath(a.candidate), work, a.device, a.threads, a.timeout)
    _ok(runner.ask(sets.describe(), timeout=max(60, a.timeout), fd=sets.fd), "mapping the shared buffers")
    res["transport"] = sets.transport
    r = runner.ask({"op": "confine", "model": os.path.join(work, "model.pt"), "memory_mb": a.memory_mb}, timeout=max(60, a.timeout))
    if r["status"] != "ok" or "sandbox" not in r:
        raise _Verdict("harness_error", "sandbox", "confining the runner: %s" % (r["message"] or "it did not say how"))
    res["sandbox"] = r["sandbox"]
    r = runner.ask({"op": "load"}, timeout=max(60, a.timeout))
    if r["status"] != "ok":
        raise _Verdict(r["status"], "load" if r["status"] != "rejected" else r["reason"], "loading ModelNew: " + r["message"])

    rng = torch.Generator()
    rng.manual_seed(secrets.randbits(63))  # positions and choices nobody can predict, drawn after each answer
    pick = random.SystemRandom()
    n_outputs = len(first_exp)

    # Verification: fresh inputs for every trial, alternating between two sets.
    stale_at = [positions(o.numel(), STALE_SAMPLES, rng, dev) for o in first_exp]
    earlier, slowest = [], 0.0
    for t in range(a.trials):
        k, where = t % min(2, nsets), "trial %d" % t
        xs = first if t == 0 else generate_inputs(problem, dev, trial_seed(t))
        sets.fill(k, xs, trial_seed(t))
        exp = first_exp if t == 0 else reference(model, sets.priv[k])
        sets.poison(k)
        sync(dev)
        t0 = time.perf_counter()
        r = runner.ask({"op": "run", "set": k, "values": sets.take_values()})
        slowest = max(slowest, time.perf_counter() - t0)
        _ok(r, where)
        got = [s.clone() for s in sets.slots[k]]  # the evidence, copied out the moment the runner answered
        if on("input_mutation") and sets.mutated(k) is not None:
            raise _Verdict("rejected", "input_mutation", "ModelNew modified its input %d (%s)" % (sets.mutated(k), where), where)
        for i, (g, e) in enumerate(zip(got, exp)):
            ok, ma, mr, text = compare(g, e, a.atol, a.rtol)
            res["max_abs_err"] = max(res["max_abs_err"], ma)
            res["max_rel_err"] = max(res["max_rel_err"], mr)
            if ok:
                continue
            if on("fresh_data") and stale(got, exp, earlier, stale_at, a.atol, a.rtol):
                raise _Verdict("rejected", "fresh_data", "output %d is the answer for an earlier trial's inputs: a stale result (%s)" % (i, where), where)
            raise _Verdict("incorrect", "mismatch", "output %d: %s (%s)" % (i, text, where), where)
        earlier.append(sampled(exp, stale_at))
    first = first_exp = exp = None  # what is kept of the trials are samples (large outputs must not stay twice)
    if on("pointer_reuse"):
        # Set 0's very buffers, refilled with new data: a result cached by address or by tensor version shows.
        where = "refilled inputs"
        sets.fill(0, generate_inputs(problem, dev, base_seed + 1000), base_seed + 1000)
        exp = reference(model, sets.priv[0])
        sets.poison(0)
        sync(dev)
        _ok(runner.ask({"op": "run", "set": 0, "values": sets.take_values()}), where)
        got = [s.clone() for s in sets.slots[0]]
        for i, (g, e) in enumerate(zip(got, exp)):
            if compare(g, e, a.atol, a.rtol, stats=False)[0]:
                continue
            if stale(got, exp, earlier, stale_at, a.atol, a.rtol):
                raise _Verdict("rejected", "pointer_reuse", "refilled with new data, the same input buffers gave the answer for "
                                                            "their previous data: results are cached by address or identity", where)
            raise _Verdict("incorrect", "mismatch", "output %d wrong on refilled inputs" % i, where)
    res["trials"] = a.trials

    # Timing: alternating passes, one call per set, every set of a pass refilled with values never seen before.
    flush = torch.empty(int(2 * torch.cuda.get_device_properties(dev).L2_cache_size), dtype=torch.uint8, device=dev) \
        if dev.type == "cuda" else None
    scratch = [torch.empty_like(s) for s in sets.slots[0]]  # the reference's outputs are stored as the runner stores its own

    def store_reference(i, outs):
        for s, o in zip(scratch, as_list(outs)):
            s.copy_(o)

    clock = time.perf_counter_ns
    copies = CopyBandwidth(dev, sets.bytes_moved)
    cand, ref, passes, timer_log, checked, checked_full = [], [], 0, [], 0, 0
    per_call_s = slowest
    n = min(max(1, a.sets), nsets)  # calls per pass: a.sets for the first two passes, then about PASS_NS worth
    deadline = time.monotonic() + max(10.0, 40 * a.min_time)
    while True:
        for k in range(n):
            sets.fill(k, generate_inputs(problem, dev, timing_seed(passes, k)), timing_seed(passes, k))
        sync(dev)
        t0 = clock()
        r = runner.ask({"op": "time", "sets": list(range(n)), "values": sets.take_values()},
                       timeout=a.timeout + 4 * n * per_call_s)
        wall = clock() - t0
        _ok(r, "timing pass %d" % passes)
        ns = r.get("ns")
        if not (isinstance(ns, list) and len(ns) == n and all(isinstance(x, int) and 0 <= x < 10 ** 13 for x in ns)):
            raise _Verdict("rejected", "protocol", "the runner's times for timing pass %d are not %d call times in ns" % (passes, n))
        # The evidence, decided and copied now that the runner has answered: every call sampled at fresh
        # positions, some calls whole.
        at = [positions(s.numel(), SAMPLES, rng, dev) for s in sets.slots[0]]
        got = [sampled(sets.slots[k], at) for k in range(n)]
        whole = set(pick.sample(range(n), min(n, max(0, a.full_checks))))
        got_whole = {k: [s.clone() for s in sets.slots[k]] for k in whole}
        if on("input_mutation"):
            for k in range(n):
                if sets.mutated(k) is not None:
                    raise _Verdict("rejected", "input_mutation", "ModelNew modified its input %d (timing pass %d, call %d)" % (
                        sets.mutated(k), passes, k), "timing pass %d" % passes)

        # During the reference's pass, between two calls, the evaluator only gathers the reference's outputs at the
        # sampled positions (and keeps the output of a call checked whole): about what the runner does between its
        # calls. The checks come after the pass (run in between, they made the next call measurably slower).
        ref_at, ref_whole = [], {}

        def keep(i, outs):
            outs = as_list(outs)
            ref_at.append(sampled(outs, at))
            if i in whole:
                ref_whole[i] = outs
        ns_ref, spans_ref = rt.timed_calls(model, [sets.priv[k] for k in range(n)], store_reference, dev, flush, clock, keep)
        for k in range(n) if on("timed_outputs") else ():
            for j in range(n_outputs):
                bad = bad_elements(got[k][j], ref_at[k][j], a.atol, a.rtol)
                if bool(bad.any()):
                    i = int(bad.nonzero()[0])
                    raise _Verdict("rejected", "timed_outputs", "a timed call gave wrong results while the verification calls were right "
                                   "(timing pass %d, call %d, output %d: %d of %d sampled elements wrong, e.g. flat index %d: %s, expected %s)" % (
                                       passes, k, j, int(bad.sum()), bad.numel(), int(at[j][i]), _num(got[k][j][i]), _num(ref_at[k][j][i])),
                                   "timing pass %d" % passes)
                if k in whole:
                    ok, _, _, text = compare(got_whole[k][j], ref_whole[k][j], a.atol, a.rtol, stats=False)
                    if not ok:
                        raise _Verdict("rejected", "timed_outputs", "a timed call gave wrong results while the verification calls were "
                                       "right (timing pass %d, call %d, output %d: %s)" % (passes, k, j, text), "timing pass %d" % passes)
        del ref_at, ref_whole
        checked += n
        checked_full += len(whole)
        # The outside clock: the pass took `wall`; the runner's loop costs what the same loop cost the reference
        # around its calls (ovh per call), so the reported times must explain the rest.
        ovh = max(0, sum(spans_ref) - sum(ns_ref)) / n
        timer_log.append((wall, sum(ns), 1.5 * sum(ns) + 1.15 * n * ovh + TIMER_SLACK_NS))
        copies.sample()
        if passes >= 1:
            cand += ns
            ref += ns_ref
        passes += 1
        per_call_s = max(ns + ns_ref) / 1e9
        if passes >= 2:
            n = max(1, min(nsets, int(PASS_NS / max(1.0, statistics.median(ns + ns_ref)))))
        enough = lambda s: len(s) >= a.min_reps and sum(s) >= a.min_time * 1e9
        if (enough(cand) and enough(ref)) or len(cand) >= a.max_reps or time.monotonic() > deadline:
            break
    res["candidate"], res["reference"] = summarize(cand, a.threads), summarize(ref, a.threads)
    bw = copies.best
    del copies
    floor_ms = sets.bytes_moved / (2 * bw) * 1e3
    violations = [(w, s, allowed) for w, s, allowed in timer_log if s > w or w > allowed]
    res["checks"] = {"transport": sets.transport, "sets": nsets, "passes": passes, "timed_calls_checked": checked,
                     "timed_calls_checked_whole": checked_full, "sampled_per_output": SAMPLES, "timer_violations": len(violations),
                     "copy_gbps": bw / 1e9, "floor_ms": floor_ms}
    if on("timer") and len(violations) >= max(2, (len(timer_log) + 1) // 2):
        w, s, allowed = sorted(violations)[len(violations) // 2]
        raise _Verdict("rejected", "timer", "the runner's times disagree with the evaluator's outside wall clock in %d of %d timing passes "
                       "(e.g. %.3g ms reported for a pass that took %.3g ms; the timing loop's own overhead explains at most %.3g ms)" % (
                           len(violations), len(timer_log), s / 1e6, w / 1e6, allowed / 1e6), "timing")
    if on("impossible_time") and res["candidate"]["median_ms"] < floor_ms <= res["reference"]["median_ms"]:
        raise _Verdict("rejected", "impossible_time", "a median of %.4g ms is faster than moving the %d bytes of inputs and outputs "
                       "allows (at twice the measured copy bandwidth, %.3g GB/s: %.4g ms)" % (
                           res["candidate"]["median_ms"], sets.bytes_moved, bw / 1e9, floor_ms), "timing")
    if res["candidate"]["median_ms"] > 0:
        res["speedup"] = res["reference"]["median_ms"] / res["candidate"]["median_ms"]
    if hasattr(torch, "compile"):
        key = compile_cache_key(a, dev)
        cached = compile_cache_get(a.compile_cache, key)
        if cached is not None:
            res["compile"] = cached
        else:
            timing_sets = [sets.priv[k] for k in range(min(max(1, a.sets), nsets))]
            noop = lambda i, outs: None
            try:
                compiled = torch.compile(model)
                rt.timed_calls(compiled, timing_sets, noop, dev, flush, clock)  # warm-up: compilation
                ct = []
                while len(ct) < a.min_reps:
                    ct += rt.timed_calls(compiled, timing_sets, noop, dev, flush, clock)[0]
                res["compile"] = summarize(ct, a.threads)
                res["compile"]["measured"] = time.strftime("%Y-%m-%d %H:%M:%S")
                compile_cache_put(a.compile_cache, key, res["compile"])
            except Exception as e:
                res["compile"] = {"unavailable": "torch.compile failed: %s" % str(e).splitlines()[0][:200]}
        if "median_ms" in res["compile"] and res["candidate"]["median_ms"] > 0:
            res["compile_speedup"] = res["compile"]["median_ms"] / res["candidate"]["median_ms"]
    else:
        res["compile"] = {"unavailable": "torch %s has no torch.compile" % torch.__version__}
    res["status"] = "ok"
    res["message"] = "correct on %d trials; candidate %.4g ms vs eager %.4g ms (%.3gx)" % (
        a.trials, res["candidate"]["median_ms"], res["reference"]["median_ms"], res["speedup"])


def arguments():
    ap = argparse.ArgumentParser(description="Evaluate a KernelBench-format candidate (ModelNew) against its problem (Model).")
    ap.add_argument("--problem", help="the problem file (defines Model, get_inputs, get_init_inputs)")
    ap.add_argument("--candidate", help="the candidate file (defines ModelNew)")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--threads", type=int, default=max(1, os.cpu_count() or 1), help="threads for candidate and reference alike")
    ap.add_argument("--trials", type=int, default=5, help="verification trials, each with fresh seeded inputs (>= 5)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--sets", type=int, default=3, help="calls (each on an input set of its own) in the first two timing passes")
    ap.add_argument("--full-checks", type=int, default=1, help="timed calls per pass whose outputs are checked whole (all of "
                    "them are checked at sampled positions)")
    ap.add_argument("--min-reps", type=int, default=10)
    ap.add_argument("--max-reps", type=int, default=1000)
    ap.add_argument("--min-time", type=float, default=0.3, help="seconds of timed runs per side, at least")
    ap.add_argument("--timeout", type=float, default=30, help="wall-clock seconds one command of the runner may take")
    ap.add_argument("--memory-mb", type=int, default=4096, help="address space the runner may add after start-up, in MiB "
                    "(RLIMIT_AS on the CPU, with 1 GiB and 72 MiB per thread of room)")
    ap.add_argument("--detector-off", action="append", default=[], choices=DETECTORS)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--compile-cache", default="", help="JSON file keeping the reference's torch.compile timing per problem, "
                    "device, torch and thread count (measured once, reused; empty: measure every time)")
    ap.add_argument("--serve", action="store_true", help="evaluate one request per line of stdin ({\"argv\": [the arguments "
                    "above]}), one JSON line back each; torch stays imported and a runner is started ahead for the next request")
    return ap


def checked(ap, argv):
    a = ap.parse_args(argv)
    if not a.problem or not a.candidate:
        ap.error("--problem and --candidate are required")
    if a.trials < 5:
        ap.error("--trials must be at least 5")
    return a


def serve(ap):
    # Replies go to a private copy of stdout; anything else printed (a problem file's own prints) to stderr.
    reply = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in sys.stdin:
        a = None
        try:
            a = checked(ap, json.loads(line)["argv"])
            r = evaluate(a)
        except SystemExit:  # argparse's error, already printed to stderr
            r = {"status": "harness_error", "reason": "arguments", "message": "the Python evaluator refused its arguments: %s" % line.strip()[:500]}
        except Exception as e:
            r = {"status": "harness_error", "reason": "harness", "message": "evaluator error: %s: %s" % (type(e).__name__, e)}
        reply.write(json.dumps(r) + "\n")
        reply.flush()
        if a is not None:
            if a.device == "cuda" and torch.cuda.is_available():
                torch.cuda.empty_cache()
            start_standby(a.device, a.threads, a.timeout)
    if _standby is not None:
        _standby.kill()
    return 0


def main():
    ap = arguments()
    if "--serve" in sys.argv[1:]:
        return serve(ap)
    a = checked(ap, sys.argv[1:])
    r = evaluate(a)
    if a.json:
        print(json.dumps(r))
    else:
        print("status:    %s%s" % (r["status"], " [%s]" % r["reason"] if r["reason"] and r["status"] != "ok" else ""))
        print("message:   %s" % r["message"])
        if r["status"] == "ok":
            print("eager:     %.4g ms, candidate %.4g ms, speedup %.3gx (%s)" % (r["reference"]["median_ms"], r["candidate"]["median_ms"], r["speedup"], r["label"]))
            c = r["compile"] or {}
            print("compile:   %s" % (c.get("unavailable") or "%.4g ms (%.3gx)" % (c["median_ms"], r["compile_speedup"])))
    return 0 if r["status"] != "harness_error" else 3


if __name__ == "__main__":
    sys.exit(main())
