"""kevolve's kernel families for KernelBench-format problems (trusted side, like kevolve_py_eval.py).

What it does: traces a problem's `Model`, decides whether what it computes belongs to a family this module
generates kernels for, and writes complete KernelBench `ModelNew` files whose forward runs one generated
kernel (CUDA C++ compiled by NVRTC, or C++ for the CPU, both through kevolve_kernel_glue.py, which is inlined
into every generated file).

Families (the graph after any leading library op):
  pointwise      chains of elementwise ops (activations: relu, leaky_relu, gelu, silu, sigmoid, tanh, elu, selu,
                 celu, hardtanh, relu6, softplus, softsign, hardsigmoid, hardswish, mish, logsigmoid, ...;
                 arithmetic with constants and broadcast parameters, clamp, where, batch norm in inference),
                 fused into one pass
  reduction      sum, mean, max, min, prod, amax, amin, argmax, argmin, var, std, logsumexp, p-norms over ANY set
                 of dims, keepdim either way, with their pointwise prologue and epilogue fused
  normalization  RMS, layer, instance, group norm, L1/L2/Frobenius normalisation over any set of dims (one
                 pass over rows that fit the cache, two passes or a split over blocks otherwise)
  softmax        softmax / log-softmax over any dim (online max-and-sum in one pass, or max then sum)
  scan           cumsum, cumprod, reverse cumsum (flip/cumsum/flip), exclusive cumsum (cumsum - x), masked
                 cumsum (cumsum of x * mask) over any dim
  loss           MSE, L1, Huber / smooth L1, hinge, KL divergence, cross entropy, cosine similarity loss,
                 triplet margin loss (a per-row reduction, then the mean or sum over rows)
A leading library op (linear, matmul, mm, bmm, conv*, conv_transpose*, pooling) is kept as a torch call and
everything after it is fused into one generated kernel: the family is then "<op>+<family>" (e.g.
"conv2d+normalization"). Anything else: family "" and a reason a user can read ("op sort at node 3 is not in
any family").

How the graph is found, without allocating the problem's tensors: the problem's module constants stay as
written; get_init_inputs(), the Model's construction and get_inputs() run with every tensor factory sent to
the `meta` device (shapes only, no memory), then the forward runs on those meta tensors under a torch
function mode that records every torch call with its arguments. torch.fx.symbolic_trace is tried first and
its graph module is what runs (a module whose forward branches on its inputs cannot be traced: the module
itself runs then, which records the branch its shapes take). The graph is specialised to the shapes of the
problem's own inputs where the module computes with shapes (views to constant sizes); the kernels themselves
read every size at run time.

Command line: kevolve_py_families_cli.py (one JSON object on stdout, exit status 0 unless the arguments are
wrong). This module is the analysis only; kevolve_py_families_gen.py generates from it and the command line
uses both, so neither of the two imports the other's importer.
  kevolve_py_families_cli.py --problem FILE
      {"family": "...", "reason": "...", "graph": "<short description>", "space": {param: [values...]},
       "defaults": {param: value}}            ("family": "" when none; "reason" says why)
      space/defaults are the CUDA search space; with a family the object also has "cpu_space",
      "cpu_defaults" and "layout" (pointwise, inner, outer, scan_inner or scan_outer).
  kevolve_py_families_cli.py --problem FILE --backend cuda|cpu --params JSON
      {"source": "<a complete KernelBench ModelNew python file>", "params": {...}}   or   {"error": "..."}
      JSON: a dict of search parameters; missing ones take their defaults (the answer's "params" are the
      ones used), unknown ones or values outside the space are an error.

Search parameters (space depends on the family's layout; the CPU space is smaller):
  CUDA  threads (block size), team (threads per row, for rows along the contiguous dims), vec (floats per
        load: 1, 2 or 4), cache (none: re-read the row for every pass; regs: keep it in registers when it
        fits; smem: keep it in shared memory when it fits), items (registers per thread for cache=regs),
        split (blocks per row: >1 splits few long rows over blocks with partial results), online (1: softmax
        max-and-sum, and mean-and-variance, in one pass; 0: two passes; 2: mean-and-variance from sums of x and
        x * x in double, no division per element, and over a row cached in registers each thread's own two
        passes over its registers (mean then squared deviations, max then exponentials) before the threads'
        states merge), ty (threads splitting a strided row, for reductions over non-last dims), unroll (vectors
        per thread, pointwise), plane (pointwise: 1 runs a 2-D grid of planes, the dims up to the innermost one
        a broadcast operand touches, so per-channel values are loaded once per thread with no index
        arithmetic per element).
  Where the data is a convolution's output (level 2): bias (1: the convolution runs without its bias and the
        fused kernel adds it, which saves the library's separate bias pass and gives the same values), cl (1:
        the convolution runs in channels_last with weights converted once per version, and the fused kernel
        reads and writes (N, H, W, C) memory directly; offered where the fused ops are pointwise or reduce over
        the channels only, the layout's parameters of both variants being in the space).
  CPU   schedule (rows: threads over rows; split: threads over chunks of rows, partial results combined),
        grain (0: OpenMP's static schedule; N: dynamic, N rows or blocks of 4096 elements at a time),
        online, bias and cl (as above).
Every candidate is verified like any other: a wrong kernel costs an evaluation, never correctness.
"""
import importlib.util
import math
import os

import torch
import torch.fx as torch_fx

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_DOMAIN_DIMS = 6

try:
    from torch.overrides import TorchFunctionMode
except ImportError:  # pragma: no cover - torch < 1.13
    TorchFunctionMode = None


class Unsupported(Exception):
    """The module computes something outside the families; the message is the reason shown to users."""


# ---- loading a problem without allocating its tensors ---------------------------------------------------

FACTORIES = {"randn", "rand", "randint", "randn_like", "rand_like", "randint_like", "zeros", "ones", "empty",
             "full", "zeros_like", "ones_like", "empty_like", "full_like", "arange", "linspace", "eye", "randperm",
             "tensor", "as_tensor", "normal", "empty_strided", "bernoulli", "multinomial", "logspace"}


def _func_name(func):
    n = getattr(func, "__name__", "") or ""
    if n == "__get__":  # a property of Tensor (x.shape, x.T)
        owner = getattr(func, "__self__", None)
        n = "property:" + str(getattr(owner, "__name__", "?"))
    return n


class _MetaFactories(TorchFunctionMode if TorchFunctionMode else object):
    """Every tensor factory called while active makes a meta tensor (a shape without memory)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        name = _func_name(func)
        if name in FACTORIES and (not any(isinstance(a, torch.Tensor) for a in args) or name.endswith("_like")):
            kwargs["device"] = "meta"
        return func(*args, **kwargs)


def load_problem(path, overrides=None):
    """The problem's module, with module-level constants replaced by `overrides` (tests use small sizes)."""
    spec = importlib.util.spec_from_file_location("kevolve_families_problem", path)
    problem = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(problem)
    for k, v in (overrides or {}).items():
        setattr(problem, k, v)
    for need in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(problem, need):
            raise ValueError("a KernelBench problem defines Model, get_inputs and get_init_inputs; '%s' is missing" % need)
    return problem


def meta_instance(problem, seed=1):
    """(model on meta, inputs on meta): built by the problem's own functions, no tensor memory allocated."""
    if TorchFunctionMode is None:
        raise Unsupported("this torch has no TorchFunctionMode: the graph cannot be traced without allocating")
    torch.manual_seed(seed)
    with _MetaFactories():
        init = problem.get_init_inputs()
        model = problem.Model(*init)
        inputs = list(problem.get_inputs())
    model = model.to("meta").eval()
    return model, inputs


# ---- recording the forward ---------------------------------------------------------------------------

class Op:
    __slots__ = ("index", "name", "func", "args", "kwargs", "out")

    def __init__(self, index, name, func, args, kwargs, out):
        self.index, self.name, self.func, self.args, self.kwargs, self.out = index, name, func, args, kwargs, out


class Ref:
    """A tensor in a recorded op's arguments: ("input", i), ("state", name) or ("op", op index, item)."""
    __slots__ = ("kind", "key", "item", "shape", "dtype")

    def __init__(self, kind, key, item, t):
        self.kind, self.key, self.item = kind, key, item
        self.shape, self.dtype = tuple(t.shape), t.dtype

    def __repr__(self):
        return "%s:%s%s" % (self.kind, self.key, "" if self.item is None else "[%d]" % self.item)


class _Recorder(TorchFunctionMode if TorchFunctionMode else object):
    def __init__(self, ids):
        super().__init__()
        self.ops, self.ids, self.keep = [], ids, []

    def ref(self, x):
        if isinstance(x, torch.Tensor):
            r = self.ids.get(id(x))
            if r is None:
                raise Unsupported("a tensor the recorder did not see being made (of shape %s) is used at node %d"
                                  % (list(x.shape), len(self.ops)))
            return r
        if isinstance(x, (list, tuple)):
            return type(x)(self.ref(a) for a in x) if not hasattr(x, "_fields") else tuple(self.ref(a) for a in x)
        return x

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        name = _func_name(func)
        if name in FACTORIES and (not any(isinstance(a, torch.Tensor) for a in args) or name.endswith("_like")):
            kwargs["device"] = "meta"
        out = func(*args, **kwargs)
        if name.startswith("property:") and name not in ("property:T", "property:mT"):
            return out
        tensors = [out] if isinstance(out, torch.Tensor) else [t for t in out if isinstance(t, torch.Tensor)] \
            if isinstance(out, (tuple, list)) else []
        if not tensors:
            return out  # a query (x.size(1), x.dim()): its value is a constant in what follows
        op = Op(len(self.ops), name, func, self.ref(list(args)), {k: self.ref(v) for k, v in kwargs.items()}, None)
        if isinstance(out, torch.Tensor):
            op.out = Ref("op", op.index, None, out)
            self.ids[id(out)] = op.out
        else:
            op.out = [Ref("op", op.index, i, t) if isinstance(t, torch.Tensor) else None for i, t in enumerate(out)]
            for t, r in zip(out, op.out):
                if r is not None:
                    self.ids[id(t)] = r
        self.keep.append(out)
        self.ops.append(op)
        return out


def record(model, inputs):
    """(ops, output ref(s), how): the forward's torch calls on meta tensors."""
    ids = {}
    for i, t in enumerate(inputs):
        if isinstance(t, torch.Tensor):
            ids[id(t)] = Ref("input", i, None, t)
    for n, t in list(model.named_parameters()) + list(model.named_buffers()):
        ids[id(t)] = Ref("state", n, None, t)
    how = "torch.fx"
    runner = model
    try:
        runner = torch_fx.symbolic_trace(model)
        # the traced module's parameters are the model's own objects, so their ids stay mapped
    except Exception as e:  # a forward with data-dependent control flow: run the module itself
        how = "module walk (torch.fx: %s)" % str(e).splitlines()[0][:120]
        runner = model
    rec = _Recorder(ids)
    with torch.no_grad(), rec:
        out = runner(*inputs)
    if isinstance(out, torch.Tensor):
        oref = ids.get(id(out))
    else:
        raise Unsupported("the forward returns %s, not one tensor" % type(out).__name__)
    if oref is None:
        raise Unsupported("the output tensor was not made by a recorded op")
    return rec.ops, oref, how


# ---- the expression IR -----------------------------------------------------------------------------

CONST, ROW, ELEM = 0, 1, 2


class Node:
    __slots__ = ("op", "args", "attrs", "cls", "dt", "id")
    count = 0

    def __init__(self, op, args=(), attrs=None, cls=None, dt="f"):
        self.op, self.args, self.attrs, self.dt = op, list(args), dict(attrs or {}), dt
        self.cls = cls if cls is not None else max([a.cls for a in self.args] + [CONST])
        Node.count += 1
        self.id = Node.count


class Val:
    """A value of the fused region: node, torch shape and dmap (per dim: tuple of domain dims; () = size 1)."""
    __slots__ = ("node", "shape", "dmap", "dtype")

    def __init__(self, node, shape, dmap, dtype=torch.float32):
        self.node, self.shape, self.dmap, self.dtype = node, tuple(shape), list(dmap), dtype


class Reduction:
    __slots__ = ("kind", "arg", "rid", "node", "extra", "depth", "count_dims")

    def __init__(self, kind, arg, extra=None):
        self.kind, self.arg, self.extra = kind, arg, dict(extra or {})
        self.rid, self.node, self.depth = None, None, 1


# state components (names) and whether the state needs the element index
RED_KINDS = {
    "sum": ("s",), "prod": ("s",), "max": ("s",), "min": ("s",),
    "argmax": ("v", "i"), "argmin": ("v", "i"),
    "lse": ("m", "s"), "welford": ("n", "m", "q"),
}

LIBRARY = {"linear", "matmul", "mm", "bmm", "addmm", "baddbmm", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
           "conv_transpose2d", "conv_transpose3d", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d",
           "avg_pool2d", "avg_pool3d", "adaptive_avg_pool2d", "adaptive_max_pool2d", "einsum", "__matmul__",
           "_max_pool2d", "_max_pool1d", "_max_pool3d", "max_pool2d_with_indices"}
CONVS = {"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"}
PASSTHROUGH = {"contiguous", "float", "clone", "detach"}
VIEWS = {"view", "reshape", "flatten", "unsqueeze", "squeeze"}


class Program:
    """The fused region lowered onto one domain (the largest tensor it reads), with its reductions."""

    def __init__(self):
        self.domain = None      # tuple of domain sizes (problem's shapes)
        self.domain_src = None  # how the domain is made from the first domain operand: list of ("dim", i) / ("split", i, G, part)
        self.rset = None        # the reduced domain dims (a frozenset) or None
        self.operands = []      # (Ref, torch shape, dtype)
        self.reductions = []
        self.output = None      # Val
        self.tags = []
        self.final_view = None  # shape the output is viewed as at the end
        self.post = None        # a second-level reduction over the rows: ("sum"|"mean", divisor dims)
        self.scan = None        # (dim, kind, reverse)
        self.online_choice = False  # whether a one-pass (online) form was available to some reduction
        self.lib = None         # the library op whose output is the data (a convolution): see Lowering.plan
        self.domain_perm = None # channels_last: domain dim k is dim domain_perm[k] of the data
        self.perms = {}         # channels_last: operand index -> the permutation its tensor is passed in
        self.out_perm = None    # channels_last: the permutation the output is written in

    def operand(self, ref):
        for i, (r, _, _) in enumerate(self.operands):
            if (r.kind, r.key, r.item) == (ref.kind, ref.key, ref.item):
                return i
        self.operands.append((ref, ref.shape, ref.dtype))
        return len(self.operands) - 1


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _c(v):
    return Node("const", attrs={"v": float(v)})


def un(fn, x, **kw):
    return Node("un", [x], dict(kw, fn=fn))


def bi(fn, a, b):
    return Node("bin", [a, b], {"fn": fn})


# ---- lowering recorded ops onto the IR --------------------------------------------------------------------

def _dims(d, nd):
    if d is None:
        return list(range(nd))
    if isinstance(d, int):
        d = [d]
    return sorted(set(x % nd if nd else 0 for x in d))


def _arg(op, i, name, default=None):
    if len(op.args) > i:
        return op.args[i]
    return op.kwargs.get(name, default)


class Lowering:
    def __init__(self, ops, oref, inputs_meta):
        self.ops, self.oref, self.p = ops, oref, Program()
        self.env = {}         # (kind, key, item) -> Val (fused values)
        self.prefix = []      # ops kept as torch code
        self.prefix_refs = set()
        self.inputs_meta = inputs_meta

    @staticmethod
    def key(r):
        return (r.kind, r.key, r.item)

    # -- values ----------------------------------------------------------------------------------------------
    def val(self, x, like=None, at=None):
        """The Val of argument x: a fused value, an operand (a tensor from outside the region), or a constant."""
        if isinstance(x, Ref):
            k = self.key(x)
            if k in self.env:
                return self.env[k]
            if x.dtype not in (torch.float32, torch.int64, torch.int32, torch.bool, torch.float64):
                raise Unsupported("a %s tensor at node %s" % (x.dtype, at))
            if tuple(x.shape) == self.p.domain_orig:
                dmap = list(self.p.orig_dmap)
            elif len(x.shape) == 0:
                dmap = []
            elif like is not None:
                dmap = self.align(x.shape, like)
            else:
                raise Unsupported("node %s: a tensor of shape %s that is not the shape of the data %s and not broadcast "
                                  "against it" % (at, list(x.shape), list(self.p.domain_orig)))
            j = self.p.operand(x)
            cls = self._cls_of(dmap)
            dt = "i" if x.dtype in (torch.int64, torch.int32) else "b" if x.dtype == torch.bool else "f"
            return Val(Node("load", [], {"j": j, "dmap": [tuple(d) for d in dmap]}, cls=cls, dt=dt), x.shape, dmap, x.dtype)
        if isinstance(x, bool):
            return Val(_c(1.0 if x else 0.0), (), [])
        if isinstance(x, (int, float)):
            return Val(_c(x), (), [])
        raise Unsupported("node %s: an argument of type %s" % (at, type(x).__name__))

    def align(self, shape, like):
        """dmap of a tensor of `shape` broadcast against the Val `like` (right-aligned, as torch broadcasts)."""
        out = []
        off = len(like.shape) - len(shape)
        if off < 0:
            raise Unsupported("a tensor of shape %s broadcast against one of shape %s" % (list(shape), list(like.shape)))
        for i, s in enumerate(shape):
            ls = like.shape[off + i]
            if s == 1:
                out.append(())
            elif s == ls:
                out.append(tuple(like.dmap[off + i]))
            else:
                raise Unsupported("shapes %s and %s do not broadcast" % (list(shape), list(like.shape)))
        return out

    def _cls_of(self, dmap):
        dd = set(d for t in dmap for d in t)
        if not dd:
            return CONST
        if self.p.rset is not None and dd & self.p.rset:
            return ELEM
        if self.p.rset is None and dd:
            return ELEM
        return ROW if self.p.rset is not None else ELEM

    def bcast(self, a, b):
        """Shape and dmap of a op b (torch broadcasting)."""
        n = max(len(a.shape), len(b.shape))
        sa = (1,) * (n - len(a.shape)) + a.shape
        sb = (1,) * (n - len(b.shape)) + b.shape
        da = [()] * (n - len(a.shape)) + a.dmap
        db = [()] * (n - len(b.shape)) + b.dmap
        shape, dmap = [], []
        for x, y, dx, dy in zip(sa, sb, da, db):
            if x != y and x != 1 and y != 1:
                raise Unsupported("shapes %s and %s do not broadcast" % (list(a.shape), list(b.shape)))
            s = max(x, y)
            d = tuple(dx) if x == s and x != 1 else tuple(dy) if y == s and y != 1 else ()
            if x == y and x != 1 and tuple(dx) != tuple(dy):
                raise Unsupported("two values of shape %s that lie differently over the data (a transpose between them)"
                                  % list(a.shape))
            shape.append(s)
            dmap.append(d)
        return tuple(shape), dmap

    def known(self, x, at):
        """The Val of x when it needs no partner to place it (a fused value, a tensor of the data's shape, a
        scalar), else None."""
        if isinstance(x, Ref) and self.key(x) not in self.env and tuple(x.shape) != self.p.domain_orig and len(x.shape):
            return None
        return self.val(x, at=at)

    def pair(self, x, y, at):
        a, b = self.known(x, at), self.known(y, at)
        if a is None and b is None:
            raise Unsupported("node %s: two tensors of shapes %s and %s, neither of them the data's shape %s"
                              % (at, list(x.shape), list(y.shape), list(self.p.domain_orig)))
        if a is None:
            a = self.val(x, like=b, at=at)
        if b is None:
            b = self.val(y, like=a, at=at)
        return a, b

    def binary(self, fn, x, y, at):
        a, b = self.pair(x, y, at)
        return self._binv(fn, a, b)

    def unary(self, v, fn, **kw):
        return Val(un(fn, v.node, **kw), v.shape, v.dmap)

    def reduce(self, v, kind, dims, keepdim, at, extra=None):
        """Reduction of Val v over its dims `dims` (value dims). Returns the Reduction's Val(s)."""
        nd = len(v.shape)
        dims = _dims(dims, nd)
        if (len(dims) == nd and nd >= 2 and kind in ("sum", "max", "min") and self.p.rset is None and self.p.post is None
                and len(v.dmap[0]) == 1 and v.shape[0] > 1):
            # over every dim: per row (all dims but the first) in the kernel, then over the rows (a second level)
            rows = self.reduce(v, kind, list(range(1, nd)), False, at)[0]
            self.p.post = {"kind": kind}
            node = Node("post", [rows.node], cls=CONST)
            return [Val(node, (1,) * nd if keepdim else (), [()] * nd if keepdim else [])]
        rd = frozenset(d for i in dims for d in v.dmap[i])
        vd = frozenset(d for t in v.dmap for d in t)
        if (len(dims) == nd and kind in ("sum", "max", "min") and self.p.rset is not None and self.p.post is None
                and not (vd & self.p.rset) and self.p.scan is None):
            # every dim of a value that is one per row (a per-row loss): a second level over the rows
            self.p.post = {"kind": kind}
            node = Node("post", [v.node], cls=CONST)
            return [Val(node, (1,) * nd if keepdim else (), [()] * nd if keepdim else [])]
        if not rd:
            raise Unsupported("node %s: a reduction over dims of size 1 only" % at)
        if self.p.rset is None:
            self.p.rset = rd
        elif self.p.rset != rd:
            raise Unsupported("node %s reduces over the data dims %s, an earlier node over %s: reductions over "
                              "different dims are not fused (only one set of reduced dims per kernel)"
                              % (at, sorted(rd), sorted(self.p.rset)))
        r = Reduction(kind, v.node, extra)
        r.rid = len(self.p.reductions)
        self.p.reductions.append(r)
        shape = [s for i, s in enumerate(v.shape) if i not in dims or keepdim]
        shape = [1 if (i in dims) else s for i, s in enumerate(v.shape) if i not in dims or keepdim]
        dmap = [(() if i in dims else tuple(v.dmap[i])) for i in range(nd) if i not in dims or keepdim]
        count = 1
        for i in dims:
            count *= v.shape[i]
        r.extra["count"] = count
        outs = []
        for slot in range(len(RED_KINDS[kind]) if kind in ("welford",) else 1):
            node = Node("red", [], {"r": r, "slot": slot}, cls=CONST if False else ROW,
                        dt="i" if kind in ("argmax", "argmin") else "f")
            outs.append(Val(node, shape, dmap, torch.int64 if kind in ("argmax", "argmin") else torch.float32))
        r.node = outs[0].node
        return outs

    # -- composite ops ----------------------------------------------------------------------------------------
    def mean(self, v, dims, keepdim, at):
        s = self.reduce(v, "sum", dims, keepdim, at)[0]
        cnt = _numel([v.shape[i] for i in _dims(dims, len(v.shape))])
        return Val(bi("mul", s.node, _c(1.0 / cnt)), s.shape, s.dmap)

    def var(self, v, dims, keepdim, at, correction=1.0):
        self.p.online_choice = True
        if self.online:
            outs = self.reduce(v, "welford", dims, keepdim, at)  # slots: mean, count, sum of squared deviations
            cnt = outs[0].node.attrs["r"].extra["count"]
            scale = 1.0 / (cnt - correction) if cnt - correction > 0 else float("nan")
            return Val(bi("mul", outs[2].node, _c(scale)), outs[0].shape, outs[0].dmap), outs[0]
        m = self.mean(v, dims, True, at)
        d = Val(bi("sub", v.node, m.node), v.shape, v.dmap)
        sq = Val(bi("mul", d.node, d.node), v.shape, v.dmap)
        s = self.reduce(sq, "sum", dims, keepdim, at)[0]
        cnt = s.node.attrs["r"].extra["count"]
        var = Val(bi("mul", s.node, _c(1.0 / (cnt - correction)) if cnt - correction > 0 else _c(float("nan"))), s.shape, s.dmap)
        mk = m if keepdim else Val(m.node, s.shape, s.dmap)
        return var, mk

    def lse(self, v, dim, keepdim, at):
        self.p.online_choice = True
        if self.online:
            return self.reduce(v, "lse", [dim], keepdim, at)[0]
        mx = self.reduce(v, "max", [dim], True, at)[0]
        e = Val(un("exp", bi("sub", v.node, mx.node)), v.shape, v.dmap)
        s = self.reduce(e, "sum", [dim], keepdim, at)[0]
        mk = mx if keepdim else Val(mx.node, s.shape, s.dmap)
        return Val(bi("add", un("log", s.node), mk.node), s.shape, s.dmap)

    def norm(self, v, p, dims, keepdim, at):
        if p in (2, 2.0, "fro", None):
            sq = Val(bi("mul", v.node, v.node), v.shape, v.dmap)
            s = self.reduce(sq, "sum", dims, keepdim, at)[0]
            return Val(un("sqrt", s.node), s.shape, s.dmap)
        if p in (1, 1.0):
            s = self.reduce(self.unary(v, "abs"), "sum", dims, keepdim, at)[0]
            return s
        if p in (float("inf"), "inf"):
            return self.reduce(self.unary(v, "abs"), "max", dims, keepdim, at)[0]
        if p in (float("-inf"), "-inf"):
            return self.reduce(self.unary(v, "abs"), "min", dims, keepdim, at)[0]
        if isinstance(p, (int, float)) and p > 0:
            s = self.reduce(Val(un("powc", un("abs", v.node), c=float(p)), v.shape, v.dmap), "sum", dims, keepdim, at)[0]
            return Val(un("powc", s.node, c=1.0 / float(p)), s.shape, s.dmap)
        raise Unsupported("node %s: a norm of order %r" % (at, p))

    # -- the main walk -----------------------------------------------------------------------------------------
    def run(self, online=True, lib_bias=False, cl=False):
        self.online = online
        ops = self.ops
        self.plan(cl=cl)
        lib = self.p.lib
        if lib_bias and lib is not None and lib["bias"] is not None:
            # the library op runs without its bias; the fused kernel adds it to every element it reads
            v = self.val(lib["out"], at=lib["index"])
            b = self._chan(lib["bias"], v, lib["index"])
            self.env[self.key(lib["out"])] = self._binv("add", v, b)
            lib["bias_fused"] = True
        for op in ops:
            if op.index in self.prefix_idx:
                continue
            self.lower(op)
        if any(getattr(self, "_flipped", {}).values()):
            raise Unsupported("a flip that is not undone after the scan")
        out = self.env.get(self.key(self.oref))
        if out is None:
            raise Unsupported("the output is computed by library ops only: nothing after them to fuse")
        self.p.output = out
        if cl:
            self._permute_operands()
        return self.p

    def _permute_operands(self):
        """With a permuted domain (channels_last), every operand and the output whose dims lie over the domain
        in another order are passed permuted (a view: contiguous for the library op's channels_last output), so
        that their dims follow the domain's."""
        p = self.p
        if p.final_view is not None or p.post is not None or p.scan is not None:
            raise Unsupported("channels_last: the fused ops end in a view, a reduction over all rows or a scan")
        loads = {}
        for n in _reachable(p.output.node):
            if n.op == "gather":
                raise Unsupported("channels_last: a gather")
            if n.op == "load":
                loads.setdefault(n.attrs["j"], []).append(n)

        def perm_of(dm):
            if any(len(t) > 1 for t in dm):
                raise Unsupported("channels_last: an operand dim over several data dims")
            flat = [t[0] for t in dm if t]
            if flat == sorted(flat):
                return None
            return sorted(range(len(dm)), key=lambda i: (dm[i][0] if dm[i] else -1, i))
        p.perms = {}
        for j, ns in loads.items():
            dm = [tuple(t) for t in ns[0].attrs["dmap"]]
            if any([tuple(t) for t in m.attrs["dmap"]] != dm for m in ns):
                raise Unsupported("channels_last: operand %d is read in two layouts" % j)
            perm = perm_of(dm)
            if perm is not None:
                for m in ns:
                    m.attrs["dmap"] = [dm[i] for i in perm]
                p.perms[j] = perm
        out = p.output
        dm = [tuple(t) for t in out.dmap]
        perm = perm_of(dm)
        if perm is not None:
            p.out_perm = perm
            p.output = Val(out.node, [out.shape[i] for i in perm], [dm[i] for i in perm], out.dtype)

    def plan(self, cl=False):
        """Which ops stay torch code (library ops and views of the inputs, before any fused op), and the domain."""
        fused_keys = set()
        self.prefix_idx = set()
        consumed = []
        for op in self.ops:
            refs = [a for a in _flat(op.args) + _flat(list(op.kwargs.values())) if isinstance(a, Ref)]
            touches_fused = any(self.key(r) in fused_keys for r in refs)
            base = op.name.rstrip("_") if op.name.endswith("_") and not op.name.startswith("__") else op.name
            is_lib = base in LIBRARY or (base in ("max_pool2d", "avg_pool2d") or "pool" in base)
            is_view = base in VIEWS or base in PASSTHROUGH or base in ("permute", "transpose", "t", "property:T")
            if not touches_fused and (is_lib or is_view) and not (is_view and op.out is not None and isinstance(op.out, Ref) and self.key(op.out) == self.key(self.oref)):
                self.prefix_idx.add(op.index)
                self.prefix.append(op)
                continue
            if is_lib:
                raise Unsupported("library op %s at node %d follows fused ops (only a library op followed by pointwise "
                                  "ops and reductions is fused)" % (base, op.index))
            for r in refs:
                if self.key(r) not in fused_keys:
                    consumed.append(r)
            outs = op.out if isinstance(op.out, list) else [op.out]
            for o in outs:
                if o is not None:
                    fused_keys.add(self.key(o))
        if not fused_keys:
            raise Unsupported("no pointwise op or reduction after the library ops: nothing to fuse")
        # domain: the largest tensor the fused region reads
        big = max(consumed, key=lambda r: (_numel(r.shape), -consumed.index(r)))
        dom = list(big.shape)
        if len(dom) == 0:
            dom = [1]
        self.p.domain_orig = tuple(big.shape)
        # group norm splits the channel dim of the data into (groups, channels per group)
        splits = {}
        for op in self.ops:
            if op.index in self.prefix_idx:
                continue
            if op.name == "group_norm":
                x = op.args[0]
                g = _arg(op, 1, "num_groups")
                if isinstance(x, Ref) and tuple(x.shape) == self.p.domain_orig and len(x.shape) >= 2:
                    splits[1] = g
        dmap, domain = [], []
        for i, s in enumerate(big.shape):
            if i in splits:
                g = splits[i]
                dmap.append((len(domain), len(domain) + 1))
                domain += [g, s // g]
            else:
                dmap.append((len(domain),))
                domain.append(s)
        if not big.shape:
            dmap, domain = [], [1]
        if len(domain) > MAX_DOMAIN_DIMS:
            raise Unsupported("the data has %d dims (at most %d are handled)" % (len(domain), MAX_DOMAIN_DIMS))
        self.p.domain, self.p.orig_dmap, self.p.splits = tuple(domain), dmap, splits
        self.p.domain_ref = big
        self.p.domain_perm = None
        # the library op whose output is the data: a convolution's bias can move into the fused kernel, and a
        # 2-D convolution can run in channels_last (its output then lies as (N, H, W, C): the domain's order)
        self.p.lib = None
        libs = [op for op in self.prefix if op.name.lstrip("_") in LIBRARY]
        if len(libs) == 1 and libs[0].name in CONVS and isinstance(libs[0].out, Ref) and \
                self.key(libs[0].out) == self.key(big) and len(big.shape) >= 3:
            bias = _arg(libs[0], 2, "bias")
            self.p.lib = {"index": libs[0].index, "name": libs[0].name, "out": big,
                          "bias": bias if isinstance(bias, Ref) and len(bias.shape) == 1 else None}
        if cl:
            if self.p.lib is None or self.p.lib["name"] not in ("conv2d", "conv_transpose2d") or len(big.shape) != 4 or splits:
                raise Unsupported("channels_last needs a 2-D convolution whose output is the data (and no group split)")
            n, c, h, w = big.shape
            self.p.domain, self.p.orig_dmap, self.p.domain_perm = (n, h, w, c), [(0,), (3,), (1,), (2,)], [0, 2, 3, 1]
        return consumed

    def lower(self, op):
        n = op.name
        at = op.index
        inplace = n.endswith("_") and not n.startswith("__") and n not in ("relu_",) or n == "relu_"
        base = n[:-1] if (n.endswith("_") and not n.startswith("__")) else n
        res = self.lower_one(op, base, at)
        if isinstance(op.out, list):
            for o, v in zip(op.out, res if isinstance(res, (list, tuple)) else [res]):
                if o is not None and v is not None:
                    self.env[self.key(o)] = v
        else:
            self.env[self.key(op.out)] = res
        if inplace and op.args and isinstance(op.args[0], Ref):
            self.env[self.key(op.args[0])] = res

    def lower_one(self, op, n, at):
        A = op.args
        kw = op.kwargs
        g = lambda i, name, d=None: _arg(op, i, name, d)  # noqa: E731
        # ---- constants made inside the forward ----
        if n in ("tensor", "as_tensor", "scalar_tensor") and isinstance(A[0], (int, float, bool)):
            return Val(_c(float(A[0])), (), [])
        if n in ("zeros_like", "ones_like", "full_like"):
            v = self.val(A[0], at=at)
            c = 0.0 if n == "zeros_like" else 1.0 if n == "ones_like" else float(g(1, "fill_value"))
            if kw.get("dtype") not in (None, torch.float32):
                raise Unsupported("node %d: %s with dtype %s" % (at, n, kw.get("dtype")))
            return Val(_c(c), v.shape, v.dmap)
        # ---- views and passthrough ----
        if n in PASSTHROUGH or (n == "to" and all(not isinstance(a, torch.dtype) or a == torch.float32 for a in list(A[1:]) + list(kw.values()))):
            return self.val(A[0], at=at)
        if n in ("unsqueeze",):
            v = self.val(A[0], at=at)
            d = g(1, "dim")
            d = d % (len(v.shape) + 1)
            return Val(v.node, v.shape[:d] + (1,) + v.shape[d:], v.dmap[:d] + [()] + v.dmap[d:], v.dtype)
        if n in ("squeeze",):
            v = self.val(A[0], at=at)
            d = g(1, "dim")
            ds = _dims(d, len(v.shape)) if d is not None else [i for i, s in enumerate(v.shape) if s == 1]
            keep = [i for i in range(len(v.shape)) if not (i in ds and v.shape[i] == 1)]
            return Val(v.node, [v.shape[i] for i in keep], [v.dmap[i] for i in keep], v.dtype)
        if n in ("view", "reshape", "flatten"):
            v = self.val(A[0], at=at)
            out_shape = tuple(op.out.shape)
            # views that only add or drop dims of size 1
            a = [(s, d) for s, d in zip(v.shape, v.dmap) if s != 1]
            if [s for s, _ in a] == [s for s in out_shape if s != 1]:
                it = iter([d for _, d in a])
                return Val(v.node, out_shape, [(() if s == 1 else next(it)) for s in out_shape], v.dtype)
            if self.key(op.out) == self.key(self.oref) or self._only_views_to_output(op):
                self.p.final_view = out_shape
                return Val(v.node, v.shape, v.dmap, v.dtype)
            raise Unsupported("node %d: a view from %s to %s inside the fused ops" % (at, list(v.shape), list(out_shape)))
        # ---- pointwise ----
        if n in UNARY:
            v = self.val(A[0], at=at)
            return UNARY[n](self, v, op)
        if n in BINARY:
            fn = BINARY[n]
            x, y = A[0], g(1, "other")
            if n in ("add", "sub", "__add__", "__sub__") and kw.get("alpha", A[2] if len(A) > 2 else 1) != 1:
                a, b = self.pair(x, y, at)
                return self._binv(fn, a, Val(bi("mul", b.node, _c(kw.get("alpha", A[2] if len(A) > 2 else 1))), b.shape, b.dmap))
            if fn.startswith("r"):
                x, y, fn = y, x, fn[1:]
            if n in ("div", "__truediv__", "true_divide") and kw.get("rounding_mode"):
                raise Unsupported("node %d: division with rounding_mode=%s" % (at, kw["rounding_mode"]))
            if n in ("pow", "__pow__", "__rpow__") and not isinstance(x, Ref) and isinstance(y, Ref):
                base = float(x)
                v = self.val(y, at=at)
                return Val(un("exp", bi("mul", v.node, _c(math.log(base)))), v.shape, v.dmap) if base > 0 else self._binv("pow", self.val(x), v)
            if n in ("pow", "__pow__") and not isinstance(y, Ref):
                v = self.val(x, at=at)
                return self.unary(v, "powc", c=float(y))
            return self.binary(fn, x, y, at)
        if n in ("max", "min") and len(A) >= 2 and isinstance(A[1], Ref):
            return self.binary("max" if n == "max" else "min", A[0], A[1], at)
        if n == "where":
            c = self.val(A[0], at=at)
            a = self.val(A[1], like=c, at=at)
            b = self.val(A[2], like=c, at=at)
            s1, d1 = self.bcast(c, a)
            t = Val(c.node, s1, d1)
            s2, d2 = self.bcast(t, b)
            return Val(Node("where", [c.node, a.node, b.node]), s2, d2)
        if n in ("clamp", "clip"):
            v = self.val(A[0], at=at)
            lo, hi = g(1, "min"), g(2, "max")
            node = v.node
            if isinstance(lo, Ref) or isinstance(hi, Ref):
                raise Unsupported("node %d: clamp with tensor bounds" % at)
            if lo is not None:
                node = bi("max", node, _c(lo))
            if hi is not None:
                node = bi("min", node, _c(hi))
            return Val(node, v.shape, v.dmap)
        if n == "batch_norm":
            x = self.val(A[0], at=at)
            training = g(5, "training", False)
            rm, rv, w, b = A[1] if len(A) > 1 else kw.get("running_mean"), A[2] if len(A) > 2 else kw.get("running_var"), \
                g(3, "weight"), g(4, "bias")
            eps = g(7, "eps", 1e-5)
            if training or rm is None:
                self.p.tags.append("normalization")
                dims = [i for i in range(len(x.shape)) if i != 1]
                var, m = self.var(x, dims, True, at, correction=0.0)
            else:
                m = self._chan(rm, x, at)
                var = self._chan(rv, x, at)
            return self._affine_norm(x, m, var, eps, self._chan(w, x, at) if w is not None else None,
                                     self._chan(b, x, at) if b is not None else None)
        # ---- reductions ----
        if n in ("sum", "mean", "amax", "amin", "prod", "nansum") or (n in ("max", "min") and (len(A) == 1 and "dim" not in kw)):
            v = self.val(A[0], at=at)
            dims = g(1, "dim")
            keep = bool(g(2, "keepdim", False))
            if n in ("max", "min") and len(A) == 1 and "dim" not in kw:
                dims, keep = None, False
            if n == "prod" and isinstance(dims, (list, tuple)):
                raise Unsupported("node %d: prod over several dims" % at)
            if kw.get("dtype") not in (None, torch.float32):
                raise Unsupported("node %d: %s with dtype %s" % (at, n, kw.get("dtype")))
            self.p.tags.append("reduction")
            if n == "mean":
                return self.mean(v, dims, keep, at)
            kind = {"sum": "sum", "nansum": "sum", "amax": "max", "amin": "min", "prod": "prod", "max": "max", "min": "min"}[n]
            return self.reduce(v, kind, dims, keep, at)[0]
        if n in ("max", "min") and (len(A) >= 2 or "dim" in kw):
            v = self.val(A[0], at=at)
            dim, keep = g(1, "dim"), bool(g(2, "keepdim", False))
            self.p.tags.append("reduction")
            vals = self.reduce(v, n, [dim], keep, at)[0]
            idx = self.reduce(v, "arg" + n, [dim], keep, at)[0]
            return [vals, idx]
        if n in ("argmax", "argmin"):
            v = self.val(A[0], at=at)
            dim, keep = g(1, "dim"), bool(g(2, "keepdim", False))
            self.p.tags.append("reduction")
            if dim is None:
                raise Unsupported("node %d: %s over the flattened tensor" % (at, n))
            return self.reduce(v, n, [dim], keep, at)[0]
        if n in ("var", "std"):
            v = self.val(A[0], at=at)
            dims = g(1, "dim")
            unbiased = kw.get("unbiased", True)
            corr = kw.get("correction", 1 if unbiased else 0)
            if len(A) > 2 and isinstance(A[2], bool):
                corr = 1 if A[2] else 0
            if isinstance(dims, bool):
                corr, dims = (1 if dims else 0), None
            keep = bool(kw.get("keepdim", A[3] if len(A) > 3 else False))
            self.p.tags.append("reduction")
            var, _ = self.var(v, dims, keep, at, correction=float(corr if corr is not None else 1))
            return Val(un("sqrt", var.node), var.shape, var.dmap) if n == "std" else var
        if n == "logsumexp":
            v = self.val(A[0], at=at)
            dims = g(1, "dim")
            if isinstance(dims, (list, tuple)) and len(dims) != 1:
                raise Unsupported("node %d: logsumexp over several dims" % at)
            self.p.tags.append("reduction")
            return self.lse(v, dims[0] if isinstance(dims, (list, tuple)) else dims, bool(g(2, "keepdim", False)), at)
        if n in ("norm", "vector_norm", "linalg_vector_norm", "frobenius_norm"):
            v = self.val(A[0], at=at)
            if n == "vector_norm":
                p, dims, keep = g(1, "ord", 2), g(2, "dim"), bool(g(3, "keepdim", False))
            else:
                p, dims, keep = g(1, "p", "fro"), g(2, "dim"), bool(g(3, "keepdim", False))
            self.p.tags.append("reduction")
            return self.norm(v, p, dims, keep, at)
        # ---- normalisations ----
        if n in ("softmax", "log_softmax", "_softmax", "_log_softmax"):
            v = self.val(A[0], at=at)
            dim = g(1, "dim")
            if dim is None:
                raise Unsupported("node %d: softmax without a dim" % at)
            if kw.get("dtype") not in (None, torch.float32):
                raise Unsupported("node %d: softmax with dtype %s" % (at, kw.get("dtype")))
            self.p.tags.append("softmax")
            lse = self.lse(v, dim, True, at)
            d = bi("sub", v.node, lse.node)
            return Val(un("exp", d) if "log" not in n else d, v.shape, v.dmap)
        if n == "layer_norm":
            v = self.val(A[0], at=at)
            ns = g(1, "normalized_shape")
            ns = [ns] if isinstance(ns, int) else list(ns)
            w, b, eps = g(2, "weight"), g(3, "bias"), g(4, "eps", 1e-5)
            dims = list(range(len(v.shape) - len(ns), len(v.shape)))
            self.p.tags.append("normalization")
            var, m = self.var(v, dims, True, at, correction=0.0)
            return self._affine_norm(v, m, var, eps, self.val(w, like=v, at=at) if w is not None else None,
                                     self.val(b, like=v, at=at) if b is not None else None)
        if n == "rms_norm":
            v = self.val(A[0], at=at)
            ns = g(1, "normalized_shape")
            ns = [ns] if isinstance(ns, int) else list(ns)
            w, eps = g(2, "weight"), g(3, "eps")
            if eps is None:
                eps = float(torch.finfo(torch.float32).eps)
            dims = list(range(len(v.shape) - len(ns), len(v.shape)))
            self.p.tags.append("normalization")
            ms = self.mean(Val(bi("mul", v.node, v.node), v.shape, v.dmap), dims, True, at)
            y = bi("mul", v.node, un("rsqrt", bi("add", ms.node, _c(eps))))
            out = Val(y, v.shape, v.dmap)
            if w is not None:
                out = self._binv("mul", out, self.val(w, like=v, at=at))
            return out
        if n == "group_norm":
            v = self.val(A[0], at=at)
            G = g(1, "num_groups")
            w, b, eps = g(2, "weight"), g(3, "bias"), g(4, "eps", 1e-5)
            if len(v.dmap) < 2 or len(v.dmap[1]) != 2 or self.p.domain[v.dmap[1][0]] != G:
                raise Unsupported("node %d: group norm of a value that is not the data itself" % at)
            self.p.tags.append("normalization")
            rd = [v.dmap[1][1]] + [d for t in v.dmap[2:] for d in t]
            var, m = self._var_domain(v, rd, at)
            return self._affine_norm(v, m, var, eps, self._chan(w, v, at) if w is not None else None,
                                     self._chan(b, v, at) if b is not None else None)
        if n == "instance_norm":
            v = self.val(A[0], at=at)
            w, b = kw.get("weight", A[3] if len(A) > 3 else None), kw.get("bias", A[4] if len(A) > 4 else None)
            eps = kw.get("eps", 1e-5)
            if not kw.get("use_input_stats", True):
                raise Unsupported("node %d: instance norm with running statistics" % at)
            self.p.tags.append("normalization")
            var, m = self.var(v, list(range(2, len(v.shape))), True, at, correction=0.0)
            return self._affine_norm(v, m, var, eps, self._chan(w, v, at) if w is not None else None,
                                     self._chan(b, v, at) if b is not None else None)
        if n == "normalize":
            v = self.val(A[0], at=at)
            p, dim, eps = g(1, "p", 2.0), g(2, "dim", 1), g(3, "eps", 1e-12)
            self.p.tags.append("normalization")
            nrm = self.norm(v, p, [dim], True, at)
            return Val(bi("div", v.node, bi("max", nrm.node, _c(eps))), v.shape, v.dmap)
        if n == "cosine_similarity":
            x1, x2 = self.val(A[0], at=at), None
            x2 = self.val(A[1], like=x1, at=at)
            dim, eps = g(2, "dim", 1), g(3, "eps", 1e-8)
            self.p.tags.append("loss")
            shape, dmap = self.bcast(x1, x2)
            dot = self.reduce(Val(bi("mul", x1.node, x2.node), shape, dmap), "sum", [dim], False, at)[0]
            n1 = self.reduce(Val(bi("mul", x1.node, x1.node), shape, dmap), "sum", [dim], False, at)[0]
            n2 = self.reduce(Val(bi("mul", x2.node, x2.node), shape, dmap), "sum", [dim], False, at)[0]
            den = un("sqrt", bi("max", bi("mul", n1.node, n2.node), _c(eps * eps)))
            return Val(bi("div", dot.node, den), dot.shape, dot.dmap)
        if n == "pairwise_distance":
            x1 = self.val(A[0], at=at)
            x2 = self.val(A[1], like=x1, at=at)
            p, eps, keep = g(2, "p", 2.0), g(3, "eps", 1e-6), bool(g(4, "keepdim", False))
            shape, dmap = self.bcast(x1, x2)
            d = Val(bi("add", bi("sub", x1.node, x2.node), _c(eps)), shape, dmap)
            return self.norm(d, p, [len(shape) - 1], keep, at)
        # ---- losses (the reduction over all rows is a second level: see Program.post) ----
        if n in LOSSES:
            self.p.tags.append("loss")
            return LOSSES[n](self, op, at)
        # ---- scans ----
        if n in ("cumsum", "cumprod"):
            v = self.val(A[0], at=at)
            dim = g(1, "dim") % len(v.shape)
            if kw.get("dtype") not in (None, torch.float32):
                raise Unsupported("node %d: %s with dtype %s" % (at, n, kw.get("dtype")))
            if len(v.dmap[dim]) != 1:
                raise Unsupported("node %d: a scan over a dim that is not one dim of the data" % at)
            d = v.dmap[dim][0]
            if self.p.rset is not None or self.p.scan is not None:
                raise Unsupported("node %d: a scan together with other reductions or scans" % at)
            self.p.rset = frozenset([d])
            self.p.tags.append("scan")
            rev = getattr(self, "_flipped", {}).get(d, False)
            self.p.scan = {"kind": "sum" if n == "cumsum" else "prod", "dim": d, "arg": v.node, "reverse": rev}
            node = Node("scan", [], {}, cls=ELEM)
            return Val(node, v.shape, v.dmap)
        if n == "flip":
            v = self.val(A[0], at=at)
            dims = _dims(g(1, "dims"), len(v.shape))
            if len(dims) != 1 or len(v.dmap[dims[0]]) != 1:
                raise Unsupported("node %d: flip over several dims" % at)
            d = v.dmap[dims[0]][0]
            # only flip -> cumsum -> flip is handled: the scan runs backwards
            fl = getattr(self, "_flipped", {})
            if v.node.op == "scan" and self.p.scan and self.p.scan["reverse"] and fl.get(d):
                fl[d] = False
                return v
            if v.node.op == "load" and not fl.get(d) and self.p.scan is None:
                fl[d] = True
                self._flipped = fl
                return v
            raise Unsupported("node %d: flip outside the pattern flip -> cumsum -> flip" % at)
        raise Unsupported("op %s at node %d is not in any family" % (n, at))

    def _only_views_to_output(self, op):
        """Whether everything after op is views ending at the output."""
        later = [o for o in self.ops if o.index > op.index]
        return all(o.name in VIEWS or o.name in PASSTHROUGH for o in later)

    def _binv(self, fn, a, b):
        shape, dmap = self.bcast(a, b)
        return Val(bi(fn, a.node, b.node), shape, dmap)

    def _chan(self, ref, x, at):
        """A per-channel vector (dim 1 of x) broadcast over x."""
        if not isinstance(ref, Ref):
            raise Unsupported("node %d: a channel parameter that is not a tensor" % at)
        if len(ref.shape) != 1 or ref.shape[0] != x.shape[1]:
            raise Unsupported("node %d: a channel parameter of shape %s" % (at, list(ref.shape)))
        j = self.p.operand(ref)
        dmap = [tuple(x.dmap[1])]
        node = Node("load", [], {"j": j, "dmap": dmap}, cls=self._cls_of(dmap))
        return Val(node, (x.shape[1],) + (1,) * (len(x.shape) - 2), dmap + [()] * (len(x.shape) - 2))

    def _var_domain(self, v, rdims, at):
        """Variance and mean of v over the domain dims rdims (used by group norm)."""
        self.p.online_choice = True
        vdims = []
        for i, t in enumerate(v.dmap):
            if t and all(d in rdims for d in t):
                vdims.append(i)
        rd = frozenset(rdims)
        # the reduction runs over domain dims directly: a dim of v that is only partly reduced (channels split
        # into groups) is handled by reducing over its inner part
        saved = self.p.rset
        if saved is not None and saved != rd:
            raise Unsupported("node %d reduces over data dims %s, an earlier node over %s" % (at, sorted(rd), sorted(saved)))
        self.p.rset = rd
        cnt = 1
        for d in rdims:
            cnt *= self.p.domain[d]
        shape = [1 if i >= 1 else s for i, s in enumerate(v.shape)]
        dmap = [tuple(v.dmap[0]), (v.dmap[1][0],)] + [()] * (len(v.shape) - 2)
        if self.online:
            r = Reduction("welford", v.node, {"count": cnt})
            r.rid = len(self.p.reductions)
            self.p.reductions.append(r)
            m = Node("red", [], {"r": r, "slot": 0}, cls=ROW)
            q = Node("red", [], {"r": r, "slot": 2}, cls=ROW)
            r.node = m
            return Val(bi("mul", q, _c(1.0 / cnt)), shape, dmap), Val(m, shape, dmap)
        r = Reduction("sum", v.node, {"count": cnt})
        r.rid = len(self.p.reductions)
        self.p.reductions.append(r)
        s = Node("red", [], {"r": r, "slot": 0}, cls=ROW)
        r.node = s
        m = bi("mul", s, _c(1.0 / cnt))
        dlt = bi("sub", v.node, m)
        r2 = Reduction("sum", bi("mul", dlt, dlt), {"count": cnt})
        r2.rid = len(self.p.reductions)
        self.p.reductions.append(r2)
        s2 = Node("red", [], {"r": r2, "slot": 0}, cls=ROW)
        r2.node = s2
        return Val(bi("mul", s2, _c(1.0 / cnt)), shape, dmap), Val(m, shape, dmap)

    def _affine_norm(self, x, m, var, eps, w, b):
        y = bi("mul", bi("sub", x.node, m.node), un("rsqrt", bi("add", var.node, _c(eps))))
        out = Val(y, x.shape, x.dmap)
        if w is not None:
            out = self._binv("mul", out, w)
        if b is not None:
            out = self._binv("add", out, b)
        return Val(out.node, x.shape, x.dmap)


def _flat(xs):
    out = []
    for x in xs:
        if isinstance(x, (list, tuple)):
            out += _flat(x)
        else:
            out.append(x)
    return out


def _u(fn, **kw):
    return lambda L, v, op: L.unary(v, fn, **kw)


def _uk(fn, params):
    """A unary op with named scalar parameters (position in args, kwarg name, default)."""
    def f(L, v, op):
        kw = {}
        for key, (i, name, d) in params.items():
            x = _arg(op, i, name, d)
            if isinstance(x, Ref):
                raise Unsupported("node %d: %s with a tensor %s" % (op.index, fn, name))
            kw[key] = float(x) if not isinstance(x, str) else x
        return L.unary(v, fn, **kw)
    return f


def _gelu(L, v, op):
    approx = _arg(op, 1, "approximate", "none")
    return L.unary(v, "gelu_tanh" if approx == "tanh" else "gelu")


UNARY = {
    "relu": _u("relu"), "relu6": _u("relu6"), "sigmoid": _u("sigmoid"), "tanh": _u("tanh"), "silu": _u("silu"),
    "gelu": _gelu, "selu": _u("selu"), "mish": _u("mish"), "softsign": _u("softsign"), "exp": _u("exp"),
    "log": _u("log"), "log2": _u("log2"), "log10": _u("log10"), "log1p": _u("log1p"), "expm1": _u("expm1"), "abs": _u("abs"),
    "neg": _u("neg"), "__neg__": _u("neg"), "negative": _u("neg"), "sqrt": _u("sqrt"), "rsqrt": _u("rsqrt"),
    "square": _u("square"), "sin": _u("sin"), "cos": _u("cos"), "reciprocal": _u("reciprocal"), "sign": _u("sign"),
    "erf": _u("erf"), "floor": _u("floor"), "ceil": _u("ceil"), "round": _u("round"), "logsigmoid": _u("logsigmoid"),
    "hardsigmoid": _u("hardsigmoid"), "hardswish": _u("hardswish"), "tanhshrink": _u("tanhshrink"),
    "exp2": _u("exp2"), "trunc": _u("trunc"), "frac": _u("frac"),
    "leaky_relu": _uk("leaky_relu", {"s": (1, "negative_slope", 0.01)}),
    "elu": _uk("elu", {"a": (1, "alpha", 1.0)}),
    "celu": _uk("celu", {"a": (1, "alpha", 1.0)}),
    "hardtanh": _uk("hardtanh", {"lo": (1, "min_val", -1.0), "hi": (2, "max_val", 1.0)}),
    "softplus": _uk("softplus", {"b": (1, "beta", 1.0), "t": (2, "threshold", 20.0)}),
    "softshrink": _uk("softshrink", {"l": (1, "lambd", 0.5)}),
    "hardshrink": _uk("hardshrink", {"l": (1, "lambd", 0.5)}),
    "threshold": _uk("threshold", {"t": (1, "threshold", 0.0), "v": (2, "value", 0.0)}),
    "clamp_min": _uk("clamp_min", {"lo": (1, "min", 0.0)}),
    "clamp_max": _uk("clamp_max", {"hi": (1, "max", 0.0)}),
    "logical_not": _u("logical_not"),
}
BINARY = {
    "add": "add", "__add__": "add", "__radd__": "add", "__iadd__": "add", "sub": "sub", "__sub__": "sub",
    "subtract": "sub", "__rsub__": "rsub", "rsub": "rsub", "__isub__": "sub", "mul": "mul", "__mul__": "mul",
    "__rmul__": "mul", "multiply": "mul", "__imul__": "mul", "div": "div", "__truediv__": "div", "__div__": "div",
    "true_divide": "div", "divide": "div", "__rdiv__": "rdiv", "__rtruediv__": "rdiv", "__itruediv__": "div",
    "pow": "pow", "__pow__": "pow", "__rpow__": "rpow", "float_power": "pow", "maximum": "max", "minimum": "min",
    "fmax": "max", "fmin": "min", "gt": "gt", "__gt__": "gt", "lt": "lt", "__lt__": "lt", "ge": "ge", "__ge__": "ge",
    "le": "le", "__le__": "le", "eq": "eq", "__eq__": "eq", "ne": "ne", "__ne__": "ne", "greater": "gt", "less": "lt",
    "__and__": "and", "logical_and": "and", "__or__": "or", "logical_or": "or", "__mul": "mul",
    "xlogy": "xlogy",
}


def _reduction_of(op, default="mean"):
    r = _arg(op, 99, "reduction", default)
    if _arg(op, 99, "size_average") is not None or _arg(op, 99, "reduce") is not None:
        raise Unsupported("node %d: a loss with the deprecated size_average/reduce arguments" % op.index)
    return r


def _loss_elementwise(L, op, at, f):
    """A loss that is f(a, b) per element, then mean / sum / none."""
    a = L.val(op.args[0], at=at)
    b = L.val(op.args[1] if len(op.args) > 1 else op.kwargs["target"], like=a, at=at)
    shape, dmap = L.bcast(a, b)
    v = Val(f(a.node, b.node), shape, dmap)
    red = _reduction_of(op)
    if red == "none":
        return v
    s = L.reduce(v, "sum", None, False, at)[0]
    if red == "mean":
        return Val(bi("mul", s.node, _c(1.0 / _numel(shape))), s.shape, s.dmap)
    return s


def _smooth_l1(beta):
    def f(a, b):
        d = un("abs", bi("sub", a, b))
        if beta == 0:
            return d
        return Node("where", [bi("lt", d, _c(beta)), bi("mul", bi("mul", d, d), _c(0.5 / beta)), bi("sub", d, _c(0.5 * beta))])
    return f


def _huber(delta):
    def f(a, b):
        d = un("abs", bi("sub", a, b))
        return Node("where", [bi("lt", d, _c(delta)), bi("mul", bi("mul", d, d), _c(0.5)),
                              bi("mul", bi("sub", d, _c(0.5 * delta)), _c(delta))])
    return f


def _kl(L, op, at):
    x = L.val(op.args[0], at=at)
    t = L.val(op.args[1] if len(op.args) > 1 else op.kwargs["target"], like=x, at=at)
    red = _reduction_of(op)
    log_target = bool(_arg(op, 99, "log_target", False))
    shape, dmap = L.bcast(x, t)
    if log_target:
        e = bi("mul", un("exp", t.node), bi("sub", t.node, x.node))
    else:
        e = bi("sub", bi("xlogy", t.node, t.node), bi("mul", t.node, x.node))
    v = Val(e, shape, dmap)
    if red == "none":
        return v
    s = L.reduce(v, "sum", None, False, at)[0]
    div = {"mean": _numel(shape), "batchmean": shape[0] if shape else 1, "sum": 1}[red]
    return Val(bi("mul", s.node, _c(1.0 / div)), s.shape, s.dmap)


def _rows_then(L, rowval, red, at):
    """The second level of a loss: the per-row values summed over the rows (then divided for a mean)."""
    if red == "none":
        return rowval
    if red not in ("mean", "sum"):
        raise Unsupported("node %d: reduction %r" % (at, red))
    if L.p.post is not None:
        raise Unsupported("node %d: a second reduction over all rows" % at)
    L.p.post = {"kind": "sum"}
    node = Node("post", [rowval.node], cls=CONST)
    if red == "mean":
        node = bi("mul", node, _c(1.0 / _numel(rowval.shape)))
    return Val(node, (), [])


def _cross_entropy(L, op, at):
    x = L.val(op.args[0], at=at)
    tref = op.args[1] if len(op.args) > 1 else op.kwargs["target"]
    if not isinstance(tref, Ref) or tref.dtype not in (torch.int64, torch.int32) or len(x.shape) != 2:
        raise Unsupported("node %d: cross entropy other than (N, C) logits with class indices" % at)
    if _arg(op, 2, "weight") is not None or float(_arg(op, 99, "label_smoothing", 0.0) or 0.0) != 0.0:
        raise Unsupported("node %d: cross entropy with class weights or label smoothing" % at)
    if _arg(op, 99, "ignore_index", -100) not in (-100,):
        raise Unsupported("node %d: cross entropy with ignore_index" % at)
    lse = L.lse(x, 1, False, at)
    j = L.p.operand(tref)
    tnode = Node("load", [], {"j": j, "dmap": [tuple(x.dmap[0])]}, cls=ROW, dt="i")
    # x[n, t[n]]: a gather along the reduced dim, once per row
    pick = Node("gather", [tnode], {"src": x.node, "dim": x.dmap[1][0]}, cls=ROW)
    per_row = Val(bi("sub", lse.node, pick), lse.shape, lse.dmap)
    return _rows_then(L, per_row, _reduction_of(op), at)


def _cosine_loss(L, op, at):
    raise Unsupported("node %d: cosine_embedding_loss" % at)


def _triplet(L, op, at):
    a = L.val(op.args[0], at=at)
    p = L.val(op.args[1], like=a, at=at)
    ng = L.val(op.args[2], like=a, at=at)
    margin, pn, eps = _arg(op, 3, "margin", 1.0), _arg(op, 4, "p", 2.0), _arg(op, 5, "eps", 1e-6)
    if _arg(op, 6, "swap", False):
        raise Unsupported("node %d: triplet margin loss with swap" % at)
    if len(a.shape) != 2:
        raise Unsupported("node %d: triplet margin loss of %d-D inputs" % (at, len(a.shape)))
    dp = L.norm(Val(bi("add", bi("sub", a.node, p.node), _c(eps)), a.shape, a.dmap), pn, [1], False, at)
    dn = L.norm(Val(bi("add", bi("sub", a.node, ng.node), _c(eps)), a.shape, a.dmap), pn, [1], False, at)
    per_row = Val(bi("max", bi("add", bi("sub", dp.node, dn.node), _c(margin)), _c(0.0)), dp.shape, dp.dmap)
    return _rows_then(L, per_row, _reduction_of(op), at)


def _hinge_embedding(L, op, at):
    margin = float(_arg(op, 2, "margin", 1.0))

    def f(x, t):
        return bi("add", bi("mul", bi("eq", t, _c(1.0)), x),
                  bi("mul", bi("eq", t, _c(-1.0)), bi("max", bi("sub", _c(margin), x), _c(0.0))))
    return _loss_elementwise(L, op, at, f)


LOSSES = {
    "mse_loss": lambda L, op, at: _loss_elementwise(L, op, at, lambda a, b: un("square", bi("sub", a, b))),
    "l1_loss": lambda L, op, at: _loss_elementwise(L, op, at, lambda a, b: un("abs", bi("sub", a, b))),
    "smooth_l1_loss": lambda L, op, at: _loss_elementwise(L, op, at, _smooth_l1(float(_arg(op, 99, "beta", 1.0)))),
    "huber_loss": lambda L, op, at: _loss_elementwise(L, op, at, _huber(float(_arg(op, 99, "delta", 1.0)))),
    "kl_div": _kl,
    "cross_entropy": _cross_entropy,
    "triplet_margin_loss": _triplet,
    "hinge_embedding_loss": _hinge_embedding,
}


# ---- analysis: the problem's family -------------------------------------------------------------------

def _describe(ops, prefix_idx, limit=14):
    names = []
    for o in ops:
        n = o.name + ("(lib)" if o.index in prefix_idx else "")
        names.append(n)
    s = " -> ".join(names[:limit])
    return s + (" -> ... (%d ops)" % len(names) if len(names) > limit else "")


class Analysis:
    """Everything the generator needs: the program, the prefix ops, the layout, and the search space."""

    def __init__(self, problem_path, overrides=None, online=True, seed=1, lib_bias=False, cl=False):
        self.path, self.overrides = problem_path, overrides
        self.problem = load_problem(problem_path, overrides)
        self.model, self.inputs = meta_instance(self.problem, seed)
        self.ops, self.oref, self.how = record(self.model, self.inputs)
        self.online, self.lib_bias, self.cl = online, bool(lib_bias), bool(cl)
        L = Lowering(self.ops, self.oref, self.inputs)
        self.prog = L.run(online=online, lib_bias=lib_bias, cl=cl)
        self.prefix = L.prefix
        self.prefix_idx = L.prefix_idx
        self.lowering = L
        self.layout = layout_of(self.prog)
        self.family = family_of(self.prog, self.prefix)
        self.graph = _describe(self.ops, self.prefix_idx)


def family_of(prog, prefix):
    tags = prog.tags
    kind = "pointwise"
    for t in ("loss", "scan", "softmax", "normalization", "reduction"):
        if t in tags:
            kind = t
            break
    if kind == "reduction" and prog.output is not None and prog.output.node.cls == ELEM:
        kind = "normalization"  # a reduction broadcast back over the data (x / x.sum(dim), ...)
    lib = [o.name for o in prefix if o.name not in VIEWS and o.name not in PASSTHROUGH and o.name not in ("permute", "transpose", "t")]
    lib = [n.lstrip("_") for n in lib]
    return ("+".join(lib) + "+" if lib else "") + kind


def _groups(domain, rset):
    """Merges the domain's dims into alternating kept (K) / reduced (R) groups -> canonical (K1, R1, K2, R2)
    groups as lists of domain dims."""
    groups = []
    for d in range(len(domain)):
        c = "R" if rset and d in rset else "K"
        if groups and groups[-1][0] == c:
            groups[-1][1].append(d)
        else:
            groups.append((c, [d]))
    pattern = "".join(c for c, _ in groups)
    canon = {"K1": [], "R1": [], "K2": [], "R2": []}
    table = {"K": ["K1"], "R": ["R2"], "KR": ["K1", "R2"], "RK": ["R1", "K2"], "KRK": ["K1", "R1", "K2"],
             "RKR": ["R1", "K2", "R2"], "KRKR": ["K1", "R1", "K2", "R2"]}
    if pattern not in table:
        raise Unsupported("the reduced dims %s of data of %d dims interleave with kept dims more than twice"
                          % (sorted(rset), len(domain)))
    for name, (_, ds) in zip(table[pattern], groups):
        canon[name] = ds
    return canon


def layout_of(prog):
    """pointwise | inner (rows along contiguous dims) | outer (rows strided, R2 empty) | scan_inner | scan_outer"""
    if prog.rset is None:
        return {"kind": "pointwise", "groups": {"K1": list(range(len(prog.domain))), "R1": [], "K2": [], "R2": []}}
    g = _groups(prog.domain, prog.rset)
    if prog.scan is not None:
        return {"kind": "scan_inner" if g["R2"] else "scan_outer", "groups": g}
    return {"kind": "inner" if g["R2"] else "outer", "groups": g}


def _size(domain, dims):
    return _numel([domain[d] for d in dims])


# the default of the parameter `cl` (library convolution in channels_last) where it is offered
CL_DEFAULT = 1
# the default of the parameter `plane` (pointwise by planes) where it is offered
PLANE_DEFAULT = 0


def _reachable(node):
    """Every node `node` depends on, itself included, each once: through arguments and reductions' arguments
    (not gathers' sources)."""
    stack, seen = [node], set()
    while stack:
        n = stack.pop()
        if n.id in seen:
            continue
        seen.add(n.id)
        yield n
        stack += n.args
        if n.op == "red":
            stack.append(n.attrs["r"].arg)


def _plane_dim(prog):
    """The innermost data dim an operand read by broadcast touches (None: every operand covers the data)."""
    inner = None
    for n in _reachable(prog.output.node):
        if n.op == "load":
            flat = [d for L in n.attrs["dmap"] for d in L]
            if flat and flat != list(range(len(prog.domain))):
                inner = max(flat + ([inner] if inner is not None else []))
    return inner


def _variant(an, **opts):
    """The analysis of the same problem with other lowering options (None where they do not apply)."""
    want = dict(online=an.online, lib_bias=an.lib_bias, cl=an.cl)
    want.update(opts)
    if want == dict(online=an.online, lib_bias=an.lib_bias, cl=an.cl):
        return an
    cache = an.__dict__.setdefault("_variants", {})
    key = tuple(sorted(want.items()))
    if key not in cache:
        try:
            cache[key] = Analysis(an.path, an.overrides, **want)
        except Unsupported:
            cache[key] = None
    return cache[key]


def search_space(an, backend="cuda"):
    """(space, defaults): the layout's parameters, and where the data is a convolution's output, `bias` (1: the
    convolution runs without its bias, which the fused kernel adds) and `cl` (1: the convolution runs in
    channels_last and the fused kernel reads and writes (N, H, W, C) memory; its layout's parameters are added
    to the space, so both variants are points of one space)."""
    lib = an.prog.lib
    space, d = _layout_space(an, backend)
    if lib is None:
        return space, d
    if lib["name"] in ("conv2d", "conv_transpose2d"):
        base = _variant(an, cl=False)
        cl_an = _variant(an, cl=True)
        if base is not None and cl_an is not None and cl_an.layout["kind"] in ("pointwise", "inner"):
            space, d = _layout_space(base, backend)
            for k, vals in _layout_space(cl_an, backend)[0].items():
                space[k] = space[k] + [v for v in vals if v not in space[k]] if k in space else list(vals)
            if CL_DEFAULT:
                d.update(_layout_space(cl_an, backend)[1])
            space["cl"] = [CL_DEFAULT, 1 - CL_DEFAULT]
            d["cl"] = CL_DEFAULT
    if lib["bias"] is not None:
        space["bias"] = [1, 0]
        d["bias"] = 1
    return space, d


def _layout_space(an, backend="cuda"):
    lay = an.layout["kind"]
    dom = an.prog.domain
    g = an.layout["groups"]
    K = _size(dom, g["K1"] + g["K2"])
    R = _size(dom, g["R1"] + g["R2"])
    has_online = an.prog.online_choice
    # mean and variance (Welford states): by default from double sums (online = 2), with no division per element
    welford = any(r.kind == "welford" for r in an.prog.reductions)
    if backend == "cpu":
        space = {"schedule": ["rows", "split"], "grain": [0, 16]}
        if lay in ("pointwise", "scan_inner", "scan_outer"):
            space = {"schedule": ["rows"], "grain": [0, 16]}
        if has_online:
            space["online"] = [1, 0, 2]
        defaults = {k: v[0] for k, v in space.items()}
        if lay == "inner" and K < 4 and R > 4096 and an.prog.post is None:
            defaults["schedule"] = "split"
        return space, defaults
    if lay == "pointwise":
        space = {"threads": [256, 128, 512, 1024], "vec": [4, 2, 1], "unroll": [1, 2, 4]}
        d = {k: v[0] for k, v in space.items()}
        s = _plane_dim(an.prog)
        if s is not None and s < len(dom) - 1 and an.prog.post is None:
            # plane: 1 runs a 2-D grid of planes (the dims up to the innermost one a broadcast operand
            # touches, such as batch norm's channels) so that per-plane values cost no index arithmetic
            space["plane"] = [0, 1]
            d["plane"] = PLANE_DEFAULT
        return space, d
    if lay in ("scan_inner", "scan_outer"):
        space = {"threads": [256, 512, 1024, 128], "vec": [4, 1]} if lay == "scan_inner" else \
            {"threads": [128, 256, 64], "vec": [4, 2, 1]}
        return space, {k: v[0] for k, v in space.items()}
    if lay == "outer":
        space = {"threads": [128, 256, 64], "vec": [4, 2, 1], "ty": [1, 2, 4, 8], "cache": ["regs", "none"],
                 "items": [16, 32, 64, 8]}
        R1 = _size(dom, g["R1"])
        d = {"threads": 128, "vec": 4 if R1 <= 64 else 1, "ty": 1 if R1 <= 128 else 4,
             "cache": "regs" if R1 <= 64 else "none", "items": 16 if R1 <= 16 else 32 if R1 <= 32 else 64}
        d["vec"] = 4 if _size(dom, g["K2"]) % 4 == 0 else 1
        d["cache"] = "regs" if R1 <= 16 * d["ty"] else "none"
        d["items"] = 16
        if has_online:
            space["online"] = [1, 0, 2]
            d["online"] = 2 if welford else 1
        return space, d
    # inner
    space = {"threads": [256, 512, 1024, 128], "team": [32, 0, 8, 16, 64], "vec": [4, 2, 1],
             "cache": ["regs", "smem", "none"], "items": [8, 4, 16, 32], "split": [1, 2, 4, 8, 16, 32, 64, 128]}
    if has_online:
        space["online"] = [1, 0, 2]
    # defaults from the problem's own shapes: a team per row of about the row's length, the whole block for
    # long rows; rows that fit in registers cached; a split over blocks when there are too few rows
    R2 = _size(dom, g["R2"])
    d = {"threads": 256, "vec": 4 if R2 % 4 == 0 else 1, "items": 8, "split": 1}
    if R <= 128:
        d["team"] = 8
    elif R <= 1024:
        d["team"] = 32
    elif 8192 <= R <= 32768 and not g["R1"]:
        d["team"] = 32  # a warp per row: measured faster than a block per row for rows of 8192 to 32768
    else:
        d["team"] = 0  # the whole block
        d["threads"] = 1024 if R >= 8192 else 256
    team = d["team"] or d["threads"]
    d["cache"] = "regs" if R <= team * d["vec"] * 8 else "none"
    if R <= team * d["vec"] * 16:
        d["items"] = 16 if R > team * d["vec"] * 8 else 8
        d["cache"] = "regs"
    if K < 264 and R >= 65536 and an.prog.post is None and not g["R1"]:
        d["split"] = min(128, max(2, 2 ** int(math.ceil(math.log2(max(1, 528 // max(K, 1)))))))
        d["cache"] = "none"
        d["team"] = 0
        d["threads"] = 1024
    if has_online:
        # (a split over blocks measured faster with online = 1: layer norm over (64, 256, 256))
        d["online"] = 2 if welford and d["split"] == 1 else 1
        if welford and d["cache"] == "regs" and R > 2048 and d["split"] == 1:
            d["cache"] = "none"  # the sums need one pass; rows this long ran faster uncached than in registers
    return space, d


def analyse(problem_path, overrides=None):
    res = {"family": "", "reason": "", "graph": "", "space": {}, "defaults": {}}
    try:
        an = Analysis(problem_path, overrides)
    except Unsupported as e:
        res["reason"] = str(e)
        try:
            problem = load_problem(problem_path, overrides)
            model, inputs = meta_instance(problem)
            ops, _, _ = record(model, inputs)
            res["graph"] = _describe(ops, set())
        except Exception:
            pass
        return res
    except Exception as e:
        res["reason"] = "the problem could not be traced: %s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
        return res
    res["family"] = an.family
    res["graph"] = an.graph
    space, defaults = search_space(an, "cuda")
    cspace, cdefaults = search_space(an, "cpu")
    res["space"], res["defaults"] = space, defaults
    res["cpu_space"], res["cpu_defaults"] = cspace, cdefaults
    res["layout"] = an.layout["kind"]
    res["reason"] = "traced by %s; %s over data of shape %s%s" % (
        an.how, an.family, list(an.prog.domain), "" if an.prog.rset is None else ", reducing dims %s" % sorted(an.prog.rset))
    return res

