"""kevolve's Python interpreter, trusted side: the static check of a candidate's syntax tree.

static_check(source, problem_stem) walks the candidate's `ast` with names resolved through imports and
assignments and strings built from constants folded; it finds try/except fallback, the reference, threads and
processes, extra streams, lower precision, patched timers or modules, and `dynamic` access the check cannot
follow (getattr/__import__/sys.modules/__dict__ with computed names, eval/exec/compile, globals/vars, frames).
label_of(source) says whether a candidate brings kernel code of its own. Pure Python: no torch here.
"""
import ast
import builtins
import re


STREAM_NAMES = {"Stream", "stream", "ExternalStream", "set_stream"}
PRECISION_NAMES = {"allow_tf32", "set_float32_matmul_precision", "allow_fp16_reduced_precision_reduction",
                   "allow_bf16_reduced_precision_reduction", "autocast", "half", "bfloat16", "float16",
                   "HalfTensor", "BFloat16Tensor", "chalf", "complex32"}
PRECISION_STRINGS = {"float16", "half", "bfloat16", "torch.float16", "torch.half", "torch.bfloat16", "f2", "<f2", "e"}
TIMER_NAMES = {"perf_counter", "perf_counter_ns", "time", "monotonic", "Event", "synchronize", "elapsed_time"}
THREAD_MODULES = {"threading", "_thread", "multiprocessing", "concurrent", "asyncio", "subprocess"}
PROCESS_PATHS = ("os.fork", "os.forkpty", "os.system", "os.popen", "os.spawn", "os.exec", "os.posix_spawn",
                 "os.register_at_fork", "pty.fork", "pty.spawn", "os.sched_setaffinity", "os.nice", "os.setpriority",
                 "os.sched_setscheduler", "os.sched_setparam",
                 # the thread count the reference is timed with (more threads than cores would also make the
                 # runner's main thread wait for a CPU, which the outside clock forgives)
                 "torch.set_num_threads", "torch.set_num_interop_threads", "torch._C.set_num_threads",
                 "torch._C.set_num_interop_threads")
# Reaching these executes code, or reaches names, the check cannot see (a getattr with a constant name is
# resolved instead; see _StaticCheck._call).
DYNAMIC_PATHS = ("builtins.eval", "builtins.exec", "builtins.compile", "builtins.globals", "builtins.vars",
                 "builtins.locals", "builtins.__import__", "builtins.breakpoint", "builtins.getattr", "builtins.setattr",
                 "builtins.delattr", "importlib", "sys.modules", "sys._getframe", "sys.settrace", "sys.setprofile",
                 "sys._current_frames", "inspect.currentframe", "inspect.stack", "inspect.getouterframes",
                 "inspect.getinnerframes", "inspect.trace", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
                 "types.FunctionType", "types.CodeType", "ctypes.pythonapi", "ctypes.PyDLL", "ctypes.pydll")
DYNAMIC_MODULES = {"__main__", "runpy", "code", "codeop", "imp", "_ctypes"}  # the harness's own module; modules that run code
# The Python C API reached through ctypes (ctypes.pythonapi.PyRun_SimpleString, CDLL(None).Py_..., symbols looked
# up by name) runs code the check cannot see: its symbols are refused however they are spelled.
PY_API = re.compile(r"^_*Py[A-Z_][A-Za-z0-9_]*$")
CTYPES_SELF_LOADERS = ("ctypes.CDLL", "ctypes.PyDLL", "ctypes.cdll.LoadLibrary", "ctypes.pydll.LoadLibrary",
                       "ctypes.LibraryLoader", "ctypes.util.find_library")
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
        if PY_API.match(attr) and not (base or "").startswith("torch"):
            self.hit("dynamic", node, "'%s': the Python C API runs code the check cannot see" % attr)
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
        if f in CTYPES_SELF_LOADERS:
            first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "name"), None)
            if first is None or (isinstance(first, ast.Constant) and first.value is None):
                self.hit("dynamic", node, "'%s(None)': the process's own symbols (the Python C API among them)" % f)
            for v in self.fold(first) or []:
                if "python" in v.lower():
                    self.hit("dynamic", node, "'%s(%r)': the Python C API runs code the check cannot see" % (f, v))
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

    def _uses_ctypes(self):
        """Whether the file imports ctypes (by any spelling the check resolves)."""
        if any(v == "ctypes" or v.startswith("ctypes.") or v.startswith("_ctypes") for v in self.aliases.values()):
            return True
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call) and self.path(node.func) in IMPORTERS and node.args:
                if any(n.split(".")[0] in ("ctypes", "_ctypes") for n in self.fold(node.args[0]) or []):
                    return True
        return False

    def _py_api_strings(self):
        """In a file that uses ctypes: strings (constants, and the values of expressions the check folds) that
        name a symbol of the Python C API, libpython or ctypes.pythonapi."""
        seen = set()
        for node in ast.walk(self.tree):
            values = None
            if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
                v = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
                values = [v]
            elif isinstance(node, (ast.BinOp, ast.JoinedStr, ast.Call, ast.Name)):
                values = self.fold(node) if not isinstance(node, ast.Call) or isinstance(node.func, ast.Attribute) else None
            for v in values or []:
                if not isinstance(v, str) or (node.lineno, v) in seen:
                    continue
                if PY_API.match(v) or "libpython" in v or v in ("pythonapi", "PyDLL", "pydll"):
                    seen.add((node.lineno, v))
                    self.hit("dynamic", node, "'%s': the Python C API reached through ctypes runs code the check cannot see" % v)

    def run(self):
        """Walks the tree and collects the findings."""
        if self._uses_ctypes():
            self._py_api_strings()
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
