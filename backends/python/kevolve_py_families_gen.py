"""Kernels for the families kevolve_py_families.py finds, and the KernelBench ModelNew files that run them.

generate(problem, backend, params) -> {"source": ModelNew file, "params": the parameters used} or {"error": ...}.

One Program (the fused region lowered onto a domain: the largest tensor it reads, with group norm's channel
dim split into groups) becomes one kernel, or a few when the work needs a second level:
  pointwise  a flat pass over the domain, V floats per load, `unroll` vectors per thread
  inner      rows along the contiguous dims (the reduced dims include the innermost): a team of threads per
             row (a few lanes, a warp or the whole block); one pass per dependent reduction, or one pass
             over a row cached in registers or shared memory; `split` > 1 spreads a few long rows over
             blocks: partial states per (row, chunk) in a scratch buffer, combined by the next kernel
  outer      rows across the contiguous dims (reducing dim 1 of (N, C, H, W): the row is strided); each thread
             owns V adjacent rows and walks the reduced dims, `ty` threads split the walk
  scans      cumsum/cumprod: a block per row with a blocked scan (inner) or a thread per column (outer)
  post       a reduction over all rows (losses): rows write their value, a one-block kernel finishes
The domain's sizes reach every kernel at run time (kv_cuda_args.params), never compiled in; only the graph's
structure and constants (eps, slopes) are. CPU kernels are the same loops in C++ with OpenMP (double
accumulators), built by the glue's CPU path.
"""
import json
import os

import torch

from kevolve_py_families import Analysis, Unsupported, search_space, _layout_space, _variant, CONST, ROW, ELEM, HERE, Ref

GLUE = os.path.join(HERE, "kevolve_kernel_glue.py")
HEADER = os.path.join(os.path.dirname(HERE), "kevolve_kernel.h")

# ---- per-backend preludes ------------------------------------------------------------------------------

CUDA_PRELUDE = r"""
#define KV_FN static __device__ __forceinline__
#define KV_INF __int_as_float(0x7f800000)
#define KV_EXP(x) expf(x)
#define KV_LOG(x) logf(x)
#define KV_SQRT(x) sqrtf(x)
#define KV_RSQRT(x) (1.0f / sqrtf(x))
#define KV_TANH(x) tanhf(x)
#define KV_ERF(x) erff(x)
#define KV_LOG1P(x) log1pf(x)
#define KV_EXPM1(x) expm1f(x)
#define KV_ABS(x) fabsf(x)
#define KV_MAX(a, b) fmaxf(a, b)
#define KV_MIN(a, b) fminf(a, b)
#define KV_POW(a, b) powf(a, b)
#define KV_SIN(x) sinf(x)
#define KV_COS(x) cosf(x)
#define KV_FLOOR(x) floorf(x)
#define KV_CEIL(x) ceilf(x)
#define KV_RINT(x) rintf(x)
#define KV_TRUNC(x) truncf(x)
#define KV_LOG2(x) log2f(x)
#define KV_LOG10(x) log10f(x)
#define KV_EXP2(x) exp2f(x)
typedef float acc_t;
typedef long long idx_t;

template <int V> struct kv_vec;
template <> struct kv_vec<4> { typedef float4 t; };
template <> struct kv_vec<2> { typedef float2 t; };
template <int V>
KV_FN void kv_load(float (&d)[V], const float* __restrict__ p) {
  if constexpr (V == 4) { const float4 t = *reinterpret_cast<const float4*>(p); d[0] = t.x; d[1] = t.y; d[2] = t.z; d[3] = t.w; }
  else if constexpr (V == 2) { const float2 t = *reinterpret_cast<const float2*>(p); d[0] = t.x; d[1] = t.y; }
  else { _Pragma("unroll") for (int k = 0; k < V; ++k) d[k] = p[k]; }
}
template <int V>
KV_FN void kv_store(float* __restrict__ p, const float (&s)[V]) {
  if constexpr (V == 4) { *reinterpret_cast<float4*>(p) = make_float4(s[0], s[1], s[2], s[3]); }
  else if constexpr (V == 2) { *reinterpret_cast<float2*>(p) = make_float2(s[0], s[1]); }
  else { _Pragma("unroll") for (int k = 0; k < V; ++k) p[k] = s[k]; }
}
KV_FN float kv_shfl(float v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
KV_FN long long kv_shfl(long long v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
KV_FN double kv_shfl(double v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
"""

CPU_PRELUDE = r"""
#include <cmath>
#include <cstring>
#include <vector>
#include <limits>
#include <algorithm>
#define KV_FN static inline
#define KV_INF std::numeric_limits<float>::infinity()
#define KV_EXP(x) std::exp(x)
#define KV_LOG(x) std::log(x)
#define KV_SQRT(x) std::sqrt(x)
#define KV_RSQRT(x) (1.0f / std::sqrt(x))
#define KV_TANH(x) std::tanh(x)
#define KV_ERF(x) std::erf(x)
#define KV_LOG1P(x) std::log1p(x)
#define KV_EXPM1(x) std::expm1(x)
#define KV_ABS(x) std::fabs(x)
#define KV_MAX(a, b) std::fmax(a, b)
#define KV_MIN(a, b) std::fmin(a, b)
#define KV_POW(a, b) std::pow(a, b)
#define KV_SIN(x) std::sin(x)
#define KV_COS(x) std::cos(x)
#define KV_FLOOR(x) std::floor(x)
#define KV_CEIL(x) std::ceil(x)
#define KV_RINT(x) std::nearbyint(x)
#define KV_TRUNC(x) std::trunc(x)
#define KV_LOG2(x) std::log2(x)
#define KV_LOG10(x) std::log10(x)
#define KV_EXP2(x) std::exp2(x)
typedef double acc_t;
typedef long long idx_t;
"""

# unary functions: C expression with {x} (float) and named constants
UN = {
    "relu": "({x} > 0.0f ? {x} : 0.0f)",
    "relu6": "KV_MIN(KV_MAX({x}, 0.0f), 6.0f)",
    "sigmoid": "(1.0f / (1.0f + KV_EXP(-{x})))",
    "tanh": "KV_TANH({x})",
    "silu": "({x} / (1.0f + KV_EXP(-{x})))",
    "gelu": "(0.5f * {x} * (1.0f + KV_ERF({x} * 0.70710678118654752f)))",
    "gelu_tanh": "(0.5f * {x} * (1.0f + KV_TANH(0.79788456080286536f * ({x} + 0.044715f * {x} * {x} * {x}))))",
    "selu": "(1.0507009873554805f * ({x} > 0.0f ? {x} : 1.6732632423543772f * KV_EXPM1({x})))",
    "mish": "({x} * KV_TANH({x} > 20.0f ? {x} : KV_LOG1P(KV_EXP({x}))))",
    "softsign": "({x} / (1.0f + KV_ABS({x})))",
    "exp": "KV_EXP({x})", "log": "KV_LOG({x})", "log2": "KV_LOG2({x})", "log10": "KV_LOG10({x})", "exp2": "KV_EXP2({x})",
    "log1p": "KV_LOG1P({x})", "expm1": "KV_EXPM1({x})", "abs": "KV_ABS({x})", "neg": "(-{x})",
    "sqrt": "KV_SQRT({x})", "rsqrt": "KV_RSQRT({x})", "square": "({x} * {x})", "sin": "KV_SIN({x})", "cos": "KV_COS({x})",
    "reciprocal": "(1.0f / {x})", "sign": "(({x} > 0.0f) - ({x} < 0.0f) + 0.0f)", "erf": "KV_ERF({x})",
    "floor": "KV_FLOOR({x})", "ceil": "KV_CEIL({x})", "round": "KV_RINT({x})", "trunc": "KV_TRUNC({x})",
    "frac": "({x} - KV_TRUNC({x}))",
    "logsigmoid": "(KV_MIN({x}, 0.0f) - KV_LOG1P(KV_EXP(-KV_ABS({x}))))",
    "hardsigmoid": "(KV_MIN(KV_MAX({x} + 3.0f, 0.0f), 6.0f) / 6.0f)",
    "hardswish": "({x} * KV_MIN(KV_MAX({x} + 3.0f, 0.0f), 6.0f) / 6.0f)",
    "tanhshrink": "({x} - KV_TANH({x}))",
    "leaky_relu": "({x} > 0.0f ? {x} : {x} * {s})",
    "elu": "({x} > 0.0f ? {x} : {a} * KV_EXPM1({x}))",
    "celu": "(KV_MAX({x}, 0.0f) + KV_MIN(0.0f, {a} * KV_EXPM1({x} / {a})))",
    "hardtanh": "KV_MIN(KV_MAX({x}, {lo}), {hi})",
    "softplus": "({b} * {x} > {t} ? {x} : KV_LOG1P(KV_EXP({b} * {x})) / {b})",
    "softshrink": "({x} > {l} ? {x} - {l} : ({x} < -{l} ? {x} + {l} : 0.0f))",
    "hardshrink": "(({x} > {l} || {x} < -{l}) ? {x} : 0.0f)",
    "threshold": "({x} > {t} ? {x} : {v})",
    "clamp_min": "KV_MAX({x}, {lo})", "clamp_max": "KV_MIN({x}, {hi})",
    "logical_not": "({x} == 0.0f ? 1.0f : 0.0f)",
}
BIN = {
    "add": "({a} + {b})", "sub": "({a} - {b})", "mul": "({a} * {b})", "div": "({a} / {b})",
    "max": "KV_MAX({a}, {b})", "min": "KV_MIN({a}, {b})", "pow": "KV_POW({a}, {b})",
    "gt": "({a} > {b} ? 1.0f : 0.0f)", "lt": "({a} < {b} ? 1.0f : 0.0f)", "ge": "({a} >= {b} ? 1.0f : 0.0f)",
    "le": "({a} <= {b} ? 1.0f : 0.0f)", "eq": "({a} == {b} ? 1.0f : 0.0f)", "ne": "({a} != {b} ? 1.0f : 0.0f)",
    "and": "(({a} != 0.0f && {b} != 0.0f) ? 1.0f : 0.0f)", "or": "(({a} != 0.0f || {b} != 0.0f) ? 1.0f : 0.0f)",
    "xlogy": "({a} == 0.0f ? 0.0f : {a} * KV_LOG({b}))",
}


def flit(v):
    """A float literal for C."""
    if v != v:
        return "(0.0f / 0.0f)"
    if v in (float("inf"), float("-inf")):
        return "KV_INF" if v > 0 else "(-KV_INF)"
    r = repr(float(v))
    if "e" not in r and "." not in r:
        r += ".0"
    return r + "f"


# ---- reductions: state, update, merge, finalize -----------------------------------------------------------

CT = {"f": "float", "d": "double", "i": "idx_t"}


def RED_SHARED(T):
    """The block's scratch for merging team states across warps."""
    return ["__shared__ float kv_redf[%d];" % (8 * (T // 32)), "__shared__ double kv_redd[%d];" % (4 * (T // 32)),
            "__shared__ idx_t kv_redi[%d];" % (2 * (T // 32))]


def red_comps(kind):
    return {"sum": [("s", "d")], "prod": [("s", "f")], "max": [("s", "f")], "min": [("s", "f")],
            "argmax": [("v", "f"), ("i", "i")], "argmin": [("v", "f"), ("i", "i")],
            "lse": [("m", "f"), ("s", "f")], "welford": [("n", "f"), ("m", "f"), ("q", "f")]}[kind]


def red_init(kind, comp):
    return {("sum", "s"): "0", ("prod", "s"): "1", ("max", "s"): "-KV_INF", ("min", "s"): "KV_INF",
            ("argmax", "v"): "-KV_INF", ("argmax", "i"): "0", ("argmin", "v"): "KV_INF", ("argmin", "i"): "0",
            ("lse", "m"): "-KV_INF", ("lse", "s"): "0", ("welford", "n"): "0", ("welford", "m"): "0",
            ("welford", "q"): "0"}[(kind, comp)]


def red_update(kind, A, x, i):
    """Statements folding element value x (float expression) at flat index i into state A (a dict comp->var)."""
    if kind == "sum":
        return "%s += %s;" % (A["s"], x)
    if kind == "prod":
        return "%s *= %s;" % (A["s"], x)
    if kind in ("max", "min"):
        # NaN propagates as in torch
        op = ">" if kind == "max" else "<"
        return "{ const float kx = %s; if (kx %s %s || kx != kx) %s = kx; }" % (x, op, A["s"], A["s"])
    if kind in ("argmax", "argmin"):
        op = ">" if kind == "argmax" else "<"
        return "{ const float kx = %s; if (kx %s %s) { %s = kx; %s = %s; } }" % (x, op, A["v"], A["v"], A["i"], i)
    if kind == "lse":
        return ("{ const acc_t kx = %s; if (kx > %s) { %s = %s * KV_EXP(%s - kx) + (acc_t)1; %s = kx; } "
                "else { %s += KV_EXP(kx - %s); } }") % (x, A["m"], A["s"], A["s"], A["m"], A["m"], A["s"], A["m"])
    if kind == "welford":
        return ("{ const acc_t kx = %s; %s += (acc_t)1; const acc_t kd = kx - %s; %s += kd / %s; %s += kd * (kx - %s); }"
                % (x, A["n"], A["m"], A["m"], A["n"], A["q"], A["m"]))
    raise ValueError(kind)


def red_merge(kind, A, B):
    """Statements merging state B into state A (both dicts comp->expression/variable)."""
    if kind == "sum":
        return "%s += %s;" % (A["s"], B["s"])
    if kind == "prod":
        return "%s *= %s;" % (A["s"], B["s"])
    if kind in ("max", "min"):
        op = ">" if kind == "max" else "<"
        return "{ const acc_t kb = %s; if (kb %s %s || kb != kb) %s = kb; }" % (B["s"], op, A["s"], A["s"])
    if kind in ("argmax", "argmin"):
        op = ">" if kind == "argmax" else "<"
        return ("{ const float kv = %s; const idx_t ki = %s; if (kv %s %s || (kv == %s && ki < %s)) { %s = kv; %s = ki; } }"
                % (B["v"], B["i"], op, A["v"], A["v"], A["i"], A["v"], A["i"]))
    if kind == "lse":
        return ("{ const acc_t bm = %s, bs = %s; const acc_t mn = KV_MAX(%s, bm); "
                "%s = (%s == mn ? %s : %s * KV_EXP(%s - mn)) + (bm == mn ? bs : bs * KV_EXP(bm - mn)); %s = mn; }"
                % (B["m"], B["s"], A["m"], A["s"], A["m"], A["s"], A["s"], A["m"], A["m"]))
    if kind == "welford":
        return ("{ const acc_t bn = %s, bm = %s, bq = %s; const acc_t tn = %s + bn; if (bn > (acc_t)0) { "
                "const acc_t d = bm - %s; const acc_t f = bn / tn; %s += d * f; %s += bq + d * d * %s * f; %s = tn; } }"
                % (B["n"], B["m"], B["q"], A["n"], A["m"], A["m"], A["q"], A["n"], A["n"]))
    raise ValueError(kind)


def red_final(kind, slot, A):
    if kind in ("sum", "prod", "max", "min"):
        return "(float)%s" % A["s"]
    if kind in ("argmax", "argmin"):
        return A["i"]
    if kind == "lse":
        return "(float)(%s + KV_LOG(%s))" % (A["m"], A["s"])
    if kind == "welford":
        return "(float)%s" % (A["m"] if slot == 0 else A["n"] if slot == 1 else A["q"])
    raise ValueError(kind)


# ---- the program's structure ------------------------------------------------------------------------------

class Structure:
    """Classes of nodes, reachable reductions and their phases, for one program."""

    def __init__(self, prog, flat=False, plane=None):
        self.prog = prog
        self.flat = flat  # the pointwise pass after a reduction over all rows: every load is per element
        self.rset = prog.rset or frozenset()
        # a pointwise program run by planes (the inner dims `plane`): loads not touching them are per plane
        self.plane = frozenset(plane) if plane else None
        if self.plane:
            self.rset = self.plane
        self.memo = {}
        out = prog.output.node
        self.out_node = out
        self.post = None
        self.post_epilogue = False
        if prog.post is not None:
            posts = [n for n in self.walk(out) if n.op == "post"]
            if len(posts) != 1:
                raise Unsupported("the reduction over all rows is used more than once")
            self.post = posts[0]
            for n in self.walk(out, stop_post=True):
                if n.op in ("red", "gather", "scan"):
                    raise Unsupported("the reduction over all rows is combined with other reductions")
                if n.op == "load":
                    self.post_epilogue = True  # x / norm(x): a pointwise pass over the data after the total
        if flat:
            self.reds, self.depth, self.phases = [], {}, []
            return
        roots = [self.post.args[0]] if self.post is not None else [out]
        if prog.scan is not None:
            roots.append(prog.scan["arg"])
        self.reds = []
        seen = set()
        for root in roots:
            for n in self.walk(root):
                if n.op == "red" and id(n.attrs["r"]) not in seen:
                    seen.add(id(n.attrs["r"]))
                    self.reds.append(n.attrs["r"])
        self.depth = {}
        for r in self.reds:
            self._depth(r)
        self.phases = sorted(set(self.depth[id(r)] for r in self.reds))

    def walk(self, node, stop_post=False):
        """Every node reachable from node (through reductions' arguments and gathers' sources)."""
        out, stack, seen = [], [node], set()
        while stack:
            n = stack.pop()
            if n.id in seen:
                continue
            seen.add(n.id)
            out.append(n)
            if n.op == "post" and stop_post:
                continue
            stack += n.args
            if n.op == "red":
                stack.append(n.attrs["r"].arg)
            if n.op == "gather":
                stack.append(n.attrs["src"])
        return out

    def _depth(self, r):
        if id(r) in self.depth:
            return self.depth[id(r)]
        d = 1
        for n in self.walk(r.arg):
            if n.op == "red" and n.attrs["r"] is not r:
                d = max(d, 1 + self._depth(n.attrs["r"]))
        self.depth[id(r)] = d
        return d

    def cls(self, n):
        c = self.memo.get(n.id)
        if c is not None:
            return c
        if n.op == "load":
            dims = set(d for t in n.attrs["dmap"] for d in t)
            c = CONST if not dims else ELEM if (self.flat or (not self.prog.rset and not self.plane) or dims & self.rset) else ROW
        elif n.op == "const":
            c = CONST
        elif n.op in ("red", "gather"):
            c = ROW
        elif n.op == "scan":
            c = ELEM
        elif n.op == "post":
            c = CONST
        else:
            c = max([self.cls(a) for a in n.args] + [CONST])
        self.memo[n.id] = c
        return c


# ---- emitting expressions ---------------------------------------------------------------------------------

class Ctx:
    """Where an expression is evaluated: the loop's group indices per lane, the main (flat domain) offset per
    lane, the vectorised group and lane count, and whether rows differ per lane (outer layout)."""

    def __init__(self, gidx, main_off, vgroup=None, V=1, rows_per_lane=False, vec_loads=None, cached=None, in_body=True,
                 ridx=None):
        self.gidx, self.main_off, self.vgroup, self.V = gidx, main_off, vgroup, V
        self.rows_per_lane, self.vec_loads, self.cached, self.in_body, self.ridx = rows_per_lane, vec_loads, cached, in_body, ridx


class Emitter:
    def __init__(self, st, backend, groups, operand_info, out_info):
        self.st, self.backend, self.groups = st, backend, groups
        self.opinfo, self.outinfo = operand_info, out_info
        self.main = []        # the function body, in order
        self.decl = []        # declarations at the top
        self.declared = set()
        self.memo_row = {}    # (node id, lane key) -> var, persistent
        self.rowvals = {}     # (rid, slot, lane key) -> var
        self.gen = 0

    # -- declarations of sizes and strides
    def need(self, name, code):
        if name not in self.declared:
            self.declared.add(name)
            self.decl.append("const idx_t %s = %s;" % (name, code))
        return name

    def DS(self, d):
        return "DS%d" % d  # declared by the kernel preamble

    def inner(self, d):
        """Product of the sizes of the dims after d in d's group."""
        g = self.group_of(d)
        after = g[g.index(d) + 1:]
        if not after:
            return None
        return self.need("IN%d" % d, " * ".join(self.DS(x) for x in after))

    def group_of(self, d):
        for name, g in self.groups.items():
            if d in g:
                return g
        raise KeyError(d)

    def gname(self, d):
        for name, g in self.groups.items():
            if d in g:
                return name
        raise KeyError(d)

    def dix(self, ctx, d, lane):
        """The index along domain dim d."""
        g = self.group_of(d)
        if lane and getattr(ctx, "lanes_inner", False):
            # the lanes of a vector lie along the group's innermost dim, whose size the vector divides: lane l's
            # index is lane 0's (computed once) plus l there, and lane 0's elsewhere
            base = self.dix(ctx, d, 0)
            return "(%s + %d)" % (base, lane) if d == g[-1] else base
        gi = ctx.gidx[self.gname(d)](lane)
        inn = self.inner(d)
        e = gi if inn is None else "(%s / %s)" % (gi, inn)
        if g[0] != d:
            e = "(%s %% %s)" % (e, self.DS(d))
        return e

    def stride_of(self, tensor, info, d):
        """(stride expression of domain dim d in this tensor, operand dim) or None when it does not touch d."""
        for i, L in enumerate(info["dmap"]):
            if d in L:
                p = L.index(d)
                st = self.need("st_%s_%d" % (tensor, i), "%s.strides[%d]" % (info["desc"], i))
                after = L[p + 1:]
                if after:
                    return "(%s * %s)" % (st, " * ".join(self.DS(x) for x in after)), i
                return st, i
        return None

    def offset(self, ctx, tensor, info, lane):
        """Offset expression of element `lane` in a tensor whose dims map to domain dims by info['dmap']."""
        flat = [(d, i) for i, L in enumerate(info["dmap"]) for d in L]
        if [d for d, _ in flat] == list(range(len(self.st.prog.domain))) and info.get("contig"):
            return ctx.main_off(lane)
        terms = []
        for name, g in self.groups.items():
            touched = [d for d, _ in flat if d in g]
            if not touched:
                continue
            pos = [k for k, (d, _) in enumerate(flat) if d in g]
            if touched == g and pos == list(range(pos[0], pos[0] + len(pos))) and info.get("contig"):
                st, _ = self.stride_of(tensor, info, g[-1])
                terms.append("%s * %s" % (ctx.gidx[name](lane), st))
            else:
                for d in touched:
                    st, _ = self.stride_of(tensor, info, d)
                    terms.append("%s * %s" % (self.dix(ctx, d, lane), st))
        return " + ".join(terms) if terms else "0"

    def touches(self, info, group):
        return any(d in self.groups[group] for L in info["dmap"] for d in L)

    def unit(self, info, group):
        """Whether consecutive elements of `group`'s innermost dim are consecutive in memory."""
        g = self.groups.get(group) or []
        if not g:
            return False
        flat = [d for L in info["dmap"] for d in L]
        if not info.get("contig") or not flat or flat[-1] != g[-1]:
            return False
        touched = [d for d in flat if d in g]
        return touched == g

    # -- expressions
    def lane_key(self, n, ctx, lane):
        c = self.st.cls(n)
        if c == CONST:
            return 0
        if c == ROW:
            return lane if ctx.rows_per_lane else 0
        return lane

    def ex(self, n, ctx, lane, body):
        """The C expression (a variable) of node n for lane `lane`; statements go to `body` (element scope) or to
        self.main (row and kernel scope)."""
        c = self.st.cls(n)
        key = (n.id, self.lane_key(n, ctx, lane))
        if n.op == "load":  # the same element of the same operand is loaded once (x in a prologue and an epilogue)
            key = (("load", n.attrs["j"], tuple(tuple(t) for t in n.attrs["dmap"])), key[1])
        if c == ELEM and ctx.in_body:
            memo, dest = body["memo"], body["lines"]
        else:
            memo, dest = self.memo_row, self.main
        if key in memo:
            return memo[key]
        if c == ELEM and not ctx.in_body:
            raise Unsupported("an element value is needed outside a loop over the elements")
        code, dt = self.code(n, ctx, lane, body)
        self.gen += 1
        var = "v%d_%d" % (n.id, key[1])
        ty = "float" if dt == "f" else "idx_t"
        dest.append("const %s %s = %s;" % (ty, var, code))
        memo[key] = var
        return var

    def fx(self, n, ctx, lane, body):
        """As ex, converted to float."""
        v = self.ex(n, ctx, lane, body)
        return v if self.dt(n) == "f" else "(float)%s" % v

    def dt(self, n):
        if n.op in ("load", "red"):
            return n.dt if n.dt in ("f", "i") else "f"
        return "f"

    def code(self, n, ctx, lane, body):
        op = n.op
        if op == "const":
            return flit(n.attrs["v"]), "f"
        if op == "load":
            j = n.attrs["j"]
            info = dict(self.opinfo[j], dmap=n.attrs["dmap"])
            name = "in%d" % j
            if self.st.cls(n) == ELEM and ctx.in_body and ctx.cached is not None and j in ctx.cached and \
                    [d for L in n.attrs["dmap"] for d in L] == list(range(len(self.st.prog.domain))):
                return ctx.cached[j](lane), "f"
            if self.st.cls(n) == ELEM and ctx.in_body and ctx.vec_loads is not None and ctx.V > 1 and \
                    self.unit(info, ctx.vgroup) and info["dtype"] == "f":
                arr = body["vec"].get(j)
                if arr is None:
                    arr = "L%d_%d" % (j, len(body["lines"]))
                    body["lines"].append("float %s[%d]; kv_load<%d>(%s, %s + %s);" % (arr, ctx.V, ctx.V, arr, name,
                                                                                       self.offset(ctx, "in%d" % j, info, 0)))
                    body["vec"][j] = arr
                return "%s[%d]" % (arr, lane), "f"
            lane_eff = lane if (self.touches(info, ctx.vgroup) if ctx.vgroup else True) else 0
            off = self.offset(ctx, name, info, lane_eff)
            t = info["dtype"]
            if t == "f":
                return "%s[%s]" % (name, off), "f"
            if t == "i":
                return "(idx_t)%s[%s]" % (name, off), "i"
            return "(float)%s[%s]" % (name, off), "f"
        if op == "un":
            x = self.fx(n.args[0], ctx, lane, body)
            fn = n.attrs["fn"]
            if fn == "powc":
                c = n.attrs["c"]
                if c == 2.0:
                    return "(%s * %s)" % (x, x), "f"
                if c == 3.0:
                    return "(%s * %s * %s)" % (x, x, x), "f"
                if c == 1.0:
                    return x, "f"
                if c == 0.5:
                    return "KV_SQRT(%s)" % x, "f"
                if c == -1.0:
                    return "(1.0f / %s)" % x, "f"
                if c == -0.5:
                    return "KV_RSQRT(%s)" % x, "f"
                return "KV_POW(%s, %s)" % (x, flit(c)), "f"
            kw = {k: flit(v) for k, v in n.attrs.items() if k != "fn" and isinstance(v, float)}
            return UN[fn].format(x=x, **kw), "f"
        if op == "bin":
            a = self.fx(n.args[0], ctx, lane, body)
            b = self.fx(n.args[1], ctx, lane, body)
            return BIN[n.attrs["fn"]].format(a=a, b=b), "f"
        if op == "where":
            c = self.fx(n.args[0], ctx, lane, body)
            a = self.fx(n.args[1], ctx, lane, body)
            b = self.fx(n.args[2], ctx, lane, body)
            return "(%s != 0.0f ? %s : %s)" % (c, a, b), "f"
        if op == "red":
            r = n.attrs["r"]
            k = (r.rid, n.attrs["slot"], lane if ctx.rows_per_lane else 0)
            if k not in self.rowvals:
                raise Unsupported("internal: reduction %d used before it is complete" % r.rid)
            return self.rowvals[k], ("i" if r.kind in ("argmax", "argmin") else "f")
        if op == "gather":
            src = n.attrs["src"]
            if src.op != "load":
                raise Unsupported("a gather from a computed value")
            t = self.ex(n.args[0], ctx, lane, body)
            j = src.attrs["j"]
            info = dict(self.opinfo[j], dmap=src.attrs["dmap"])
            dim = n.attrs["dim"]
            terms = []
            for d in range(len(self.st.prog.domain)):
                s = self.stride_of("in%d" % j, info, d)
                if s is None:
                    continue
                idx = t if d == dim else self.dix(ctx, d, lane)
                terms.append("%s * %s" % (idx, s[0]))
            return "in%d[%s]" % (j, " + ".join(terms) or "0"), "f"
        if op == "scan":
            return ctx.scan_value(lane), "f"
        if op == "post":
            return ctx.post_value, "f"
        raise Unsupported("internal: node %s" % op)


# ---- kernels ----------------------------------------------------------------------------------------------

def _canon(emitter, groups):
    """Declarations of the domain sizes and the canonical group sizes."""
    out = []
    for name in ("K1", "R1", "K2", "R2"):
        g = groups.get(name) or []
        out.append("const idx_t %s = %s;" % (name, " * ".join("DS%d" % d for d in g) if g else "1"))
    return out


class KernelSpec:
    def __init__(self, name, source, inputs, outputs, grid, block, block_y="1", smem="0"):
        self.name, self.source, self.inputs, self.outputs = name, source, inputs, outputs
        self.grid, self.block, self.block_y, self.smem = grid, block, block_y, smem


class Gen:
    """Builds the kernels of one program for one backend and parameter point."""

    def __init__(self, an, backend, params):
        self.an, self.backend, self.p = an, backend, params
        self.prog = an.prog
        self.st = Structure(self.prog)
        self.groups = an.layout["groups"]
        self.kind = an.layout["kind"]
        nd = len(self.prog.domain)
        self.nd = nd
        self.opinfo = []
        for j, (ref, shape, dtype) in enumerate(self.prog.operands):
            t = "f" if dtype == torch.float32 else "i" if dtype in (torch.int64, torch.int32) else "b" if dtype == torch.bool else None
            if t is None:
                raise Unsupported("an operand of dtype %s" % dtype)
            self.opinfo.append({"desc": "a.inputs[%d]" % j if backend == "cuda" else "a->inputs[%d]" % j, "contig": True,
                                "dtype": t, "ctype": {"f": "float", "i": "long long" if dtype == torch.int64 else "int", "b": "unsigned char"}[t]})
        out = self.prog.output
        self.out_dtype = "i" if out.dtype == torch.int64 else "f"
        self.outinfo = {"desc": "a.outputs[0]" if backend == "cuda" else "a->outputs[0]", "contig": True,
                        "dmap": [tuple(d) for d in out.dmap], "dtype": self.out_dtype}
        if self.st.post is None:
            flat = [d for L in self.outinfo["dmap"] for d in L]
            if flat != sorted(flat):
                raise Unsupported("the output's dims lie in another order than the data's")

    # -- common pieces
    def preamble(self, em, args="a", groups=None):
        acc = "." if self.backend == "cuda" else "->"
        lines = ["const idx_t DS%d = (idx_t)%s%sparams[%d];" % (d, args, acc, d) for d in range(self.nd)]
        lines += _canon(em, groups or self.groups)
        for j, info in enumerate(self.opinfo):
            lines.append("const %s* __restrict__ in%d = (const %s*)%s%sinputs[%d].data;" % (info["ctype"], j, info["ctype"], args, acc, j))
        return lines

    def out_ptr(self, idx=0, ctype=None):
        acc = "." if self.backend == "cuda" else "->"
        ctype = ctype or ("long long" if self.out_dtype == "i" else "float")
        return "%s* __restrict__ out%d = (%s*)a%soutputs[%d].data;" % (ctype, idx, ctype, acc, idx)

    def store_lanes(self, em, ctx, st, VV):
        """A new body computing the output node for lanes 0..VV-1 and storing them: one vector store of VV floats
        where the output is unit-stride along R2, else a store per lane."""
        body = self.new_body()
        vals = [em.fx(st.out_node, ctx, l, body) for l in range(VV)]
        if VV > 1 and em.unit(self.outinfo, "R2") and self.out_dtype == "f":
            body["lines"].append("{ float o[%d] = {%s}; kv_store<%d>(out0 + %s, o); }" % (
                VV, ", ".join(vals), VV, em.offset(ctx, "out0", self.outinfo, 0)))
        else:
            for l in range(VV):
                body["lines"].append(self.store(em, ctx, vals[l], l))
        return body

    def store(self, em, ctx, value, lane, body_lines=None, vec_out=None):
        off = em.offset(ctx, "out0", self.outinfo, lane)
        if self.out_dtype == "i":
            return "out0[%s] = (long long)%s;" % (off, value)
        return "out0[%s] = %s;" % (off, value)

    def new_body(self):
        return {"lines": [], "memo": {}, "vec": {}}

    def elem_phase(self, em, ctx, lanes, reds, states, idx_expr):
        """Loop-body statements folding every lane's element into the states of `reds`."""
        body = self.new_body()
        for lane in lanes:
            for r in reds:
                x = em.fx(r.arg, ctx, lane, body)
                body["lines"].append(red_update(r.kind, states(r, lane), x, idx_expr(lane)))
        return body["lines"]

    def state_vars(self, r, tag):
        return {c: "S%d_%s_%s" % (r.rid, c, tag) for c, _ in red_comps(r.kind)}

    def sums(self, r):
        """online = 2: mean and variance from the sums of x and x * x in double (no division per element)."""
        return r.kind == "welford" and int(self.p.get("online", 1)) == 2

    def upd(self, r, tag, x, i):
        """Statements folding element x into reduction r's state `tag`."""
        A = self.state_vars(r, tag)
        if self.sums(r):
            return "{ const double kx = (double)(%s); %s += (acc_t)1; W%d_s_%s += kx; W%d_q_%s += kx * kx; }" % (
                x, A["n"], r.rid, tag, r.rid, tag)
        return red_update(r.kind, A, x, i)

    def fix(self, reds, tag):
        """After the element loop: the sums of online = 2 made into the (count, mean, squared deviations) state."""
        out = []
        for r in reds:
            if self.sums(r):
                A = self.state_vars(r, tag)
                out.append("if (%s > (acc_t)0) { const double km = W%d_s_%s / (double)%s; const double kq = W%d_q_%s - W%d_s_%s * km; "
                           "%s = (acc_t)km; %s = (acc_t)(kq > 0.0 ? kq : 0.0); }"
                           % (A["n"], r.rid, tag, A["n"], r.rid, tag, r.rid, tag, A["m"], A["q"]))
        return out

    def declare_states(self, r, tag):
        out = []
        if self.sums(r):
            out.append("double W%d_s_%s = 0, W%d_q_%s = 0;" % (r.rid, tag, r.rid, tag))
        for c, t in red_comps(r.kind):
            out.append("%s S%d_%s_%s = %s;" % ("double" if t == "d" else "acc_t" if t == "f" and r.kind in ("lse", "welford", "prod") else
                                              "float" if t == "f" else "idx_t", r.rid, c, tag, red_init(r.kind, c)))
        return out

    def finalize(self, em, r, tag, lane_key):
        out = []
        for slot in range(3 if r.kind == "welford" else 1):
            var = "R%d_%d_%s" % (r.rid, slot, tag)
            ty = "idx_t" if r.kind in ("argmax", "argmin") else "float"
            out.append("const %s %s = %s;" % (ty, var, red_final(r.kind, slot, self.state_vars(r, tag))))
            em.rowvals[(r.rid, slot, lane_key)] = var
        return out

    # ---- sources
    def sources(self):
        if self.backend == "cpu":
            return self.cpu_source()
        if self.kind == "pointwise":
            return self.cuda_pointwise()
        if self.kind == "inner":
            if int(self.p.get("split", 1)) > 1:
                return self.cuda_split()
            return self.cuda_inner()
        if self.kind == "outer":
            return self.cuda_outer()
        if self.kind in ("scan_inner", "scan_outer"):
            return self.cuda_scan()
        raise Unsupported("layout %s" % self.kind)

    # ================================ CUDA: pointwise =================================================
    def cuda_pointwise(self, st=None, name="kv_pointwise", post_input=None):
        T = int(self.p.get("threads", 256)) if self.kind == "pointwise" else 256
        V = int(self.p.get("vec", 4)) if self.kind == "pointwise" else 4
        U = int(self.p.get("unroll", 1)) if self.kind == "pointwise" else 1
        main = st is None
        st = st or self.st
        if main and int(self.p.get("plane", 0)):
            return self.cuda_planes(T, V, U)
        groups = {"K1": list(range(self.nd)), "R1": [], "K2": [], "R2": []}
        lanes = main and self.pointwise_bcast() is not None
        bodies = []
        for VV in sorted(set([V, 1]), reverse=True):
            em = Emitter(st, "cuda", groups, self.opinfo, self.outinfo)
            pre = self.preamble(em, groups=groups)
            if post_input is not None:
                pre.append("const float PV = ((const float*)a.inputs[%d].data)[0];" % post_input)
            ctx = Ctx({"K1": lambda l: "(e0 + %d)" % l}, lambda l: "(e0 + %d)" % l, "K1", VV, False, vec_loads=True)
            ctx.lanes_inner = lanes and VV > 1  # the forward runs this variant only when the last dim divides by VV
            ctx.post_value = "PV"
            body = self.new_body()
            vals = [em.fx(st.out_node, ctx, l, body) for l in range(VV)]
            if VV > 1 and em.unit(self.outinfo, "K1") and self.out_dtype == "f":
                body["lines"].append("{ float o[%d] = {%s}; kv_store<%d>(out0 + (e0), o); }" % (VV, ", ".join(vals), VV))
            else:
                for l in range(VV):
                    body["lines"].append(self.store(em, ctx, vals[l], l))
            code = pre + em.decl + em.main + [self.out_ptr(),
                                              "const idx_t N = K1;",
                                              "#pragma unroll",
                                              "for (int u = 0; u < %d; ++u) {" % U,
                                              "  const idx_t e0 = (((idx_t)blockIdx.x * %d + u) * %d + threadIdx.x) * %d;" % (U, T, VV),
                                              "  if (e0 >= N) break;"] + ["  " + x for x in body["lines"]] + ["}"]
            bodies.append((1 if VV > 1 else 3, code))
        src = self._cuda_file(name, T, bodies)
        return [KernelSpec(name, src, ["ops"], ["out"], "G", str(T))], {"kind": "pointwise", "V": V, "T": T, "U": U,
                                                                       "lanes": lanes}

    def pointwise_bcast(self):
        """The innermost data dim that an operand read by broadcast (not over the whole data) touches: None when
        every operand is read over the whole data (nothing is per plane)."""
        inner = None
        for n in self._all_nodes():
            if n.op == "load" and self.st.cls(n) != CONST:
                flat = [d for L in n.attrs["dmap"] for d in L]
                if flat != list(range(self.nd)):
                    inner = max([inner if inner is not None else -1] + flat)
        return inner

    def cuda_planes(self, T, V, U):
        """Pointwise by planes: a 2-D grid, blockIdx.x the plane (the dims up to the innermost one a broadcast
        operand touches), blockIdx.y and the threads over the plane's elements. What depends on the plane only
        (per-channel parameters) is loaded and computed once per thread, with no index arithmetic per element."""
        s = self.pointwise_bcast()
        if s is None or s >= self.nd - 1:
            raise Unsupported("plane: no operand is per plane (every operand is read over the innermost dim)")
        outer, inner = list(range(s + 1)), list(range(s + 1, self.nd))
        groups = {"K1": outer, "R1": [], "K2": [], "R2": inner}
        st = Structure(self.prog, plane=inner)
        bodies = []
        for VV in sorted(set([V, 1]), reverse=True):
            em = Emitter(st, "cuda", groups, self.opinfo, self.outinfo)
            pre = self.preamble(em, groups=groups) + ["const idx_t pl = blockIdx.x;", "const idx_t pbase = pl * R2;"]
            ctx = Ctx({"K1": lambda l: "pl", "R2": lambda l: "(j0 + %d)" % l}, lambda l: "(pbase + j0 + %d)" % l, "R2", VV,
                      False, vec_loads=True)
            ctx.lanes_inner = VV > 1
            body = self.store_lanes(em, ctx, st, VV)
            code = pre + em.decl + em.main + [
                self.out_ptr(),
                "for (idx_t j0 = ((idx_t)blockIdx.y * %d + threadIdx.x) * %d; j0 < R2; j0 += (idx_t)gridDim.y * %d) {" % (T, VV, T * VV)] + \
                ["  " + x for x in body["lines"]] + ["}"]
            bodies.append((1 if VV > 1 else 3, code))
        src = self._cuda_file("kv_planes", T, bodies, grid_y="GY")
        return [KernelSpec("kv_planes", src, ["ops"], ["out"], "G", str(T))], {"kind": "planes", "V": V, "T": T, "U": U,
                                                                              "outer": outer, "inner": inner}

    def _cuda_file(self, name, T, bodies, extra_launch=None, TY=1, glob_pre=None, grid_y=None):
        lines = ["// @kevolve kernel %s" % name, "// @kevolve grid G", "// @kevolve block %d" % T]
        if grid_y:
            lines.append("// @kevolve grid_y %s" % grid_y)
        if TY > 1:
            lines.append("// @kevolve block_y %d" % TY)
        lines.append("// @kevolve smem SM")
        lines += ['#include "kevolve_kernel.h"', CUDA_PRELUDE]
        lines += glob_pre or []
        names = []
        for key, code in bodies:
            fname = "%s_body_%s" % (name, key)
            names.append((key, fname))
            lines.append("static __device__ __forceinline__ void %s(const kv_cuda_args& a) {" % fname)
            lines += ["  " + x for x in code]
            lines.append("}")
        lines.append('extern "C" __global__ void __launch_bounds__(%d) %s(kv_cuda_args a) {' % (T * TY, name))
        lines.append("  const int variant = (int)a.params[%d];" % self.nd)
        for key, fname in names:
            lines.append("  if (variant == %d) { %s(a); return; }" % (key if isinstance(key, int) else 0, fname))
        lines.append("}")
        return "\n".join(lines) + "\n"

    # ================================ CUDA: inner (team per row) ======================================
    def cuda_inner(self):
        T = int(self.p["threads"])
        team = int(self.p["team"]) or T
        team = min(team, T)
        V, cache, ITEMS = int(self.p["vec"]), self.p["cache"], int(self.p["items"])
        if T % team:
            raise Unsupported("threads %d is not a multiple of team %d" % (T, team))
        variants = []  # (key, V, cache)
        variants.append((1, V, cache if cache != "none" else None))
        if V > 1:
            variants.append((2, V, None))
        variants.append((3, 1, None))
        bodies = []
        for key, VV, cm in variants:
            bodies.append((key, self.inner_body(T, team, VV, cm, ITEMS)))
        smem_glob = ["extern __shared__ float kv_dyn[];"]
        src = self._cuda_file("kv_rows", T, bodies, glob_pre=smem_glob)
        units = self._unit_operands("R2")
        return [KernelSpec("kv_rows", src, ["ops"], ["out"] if self.st.post is None else ["rowbuf"], "G", str(T))] + \
            self._finisher_specs(), {"kind": "inner", "T": T, "team": team, "V": V, "cache": cache, "ITEMS": ITEMS,
                                      "units": units, "post": self.st.post is not None,
                                      "ncache": len(self._main_operands())}

    def _unit_operands(self, group):
        em = Emitter(self.st, "cuda", self.groups, self.opinfo, self.outinfo)
        units = []
        for j, info in enumerate(self.opinfo):
            if info["dtype"] == "f" and em.unit(dict(info, dmap=self._dmap_of(j)), group):
                units.append(j)
        return units

    def _main_operands(self):
        """Operands laid out as the domain itself (their offset is the domain's flat index): what a row cache holds."""
        out = []
        for j, info in enumerate(self.opinfo):
            flat = [d for L in self._dmap_of(j) for d in L]
            if info["dtype"] == "f" and flat == list(range(self.nd)):
                out.append(j)
        return out

    def _dmap_of(self, j):
        for n in self._all_nodes():
            if n.op == "load" and n.attrs["j"] == j:
                return n.attrs["dmap"]
        return []

    def _all_nodes(self):
        roots = [self.st.out_node]
        if self.prog.scan is not None:
            roots.append(self.prog.scan["arg"])
        out = []
        for r in roots:
            out += self.st.walk(r)
        return out

    def inner_body(self, T, team, VV, cache, ITEMS):
        st = self.st
        em = Emitter(st, "cuda", self.groups, self.opinfo, self.outinfo)
        pre = self.preamble(em)
        TPB = T // team
        head = [self.out_ptr() if st.post is None else "float* __restrict__ out0 = (float*)a.outputs[0].data;",
                "const int team = threadIdx.x / %d, lane = threadIdx.x %% %d;" % (team, team),
                "const idx_t row = (idx_t)blockIdx.x * %d + team;" % TPB,
                "const bool active = row < K1 * K2;",
                "const idx_t k1 = active ? row / K2 : 0, k2 = active ? row % K2 : 0;",
                "const idx_t rowbase = k1 * (R1 * K2 * R2) + k2 * R2;"]
        if team > 32:
            head += RED_SHARED(T)
        em.main += head
        gidx_row = {"K1": lambda l: "k1", "K2": lambda l: "k2"}
        units = self._main_operands() if cache else []
        if cache == "regs":
            for j in units:
                em.main.append("float C%d[%d][%d];" % (j, ITEMS, VV))
        elif cache == "smem":
            for k, j in enumerate(units):
                em.main.append("float* __restrict__ C%d = kv_dyn + ((idx_t)team * %d + %d) * R2;" % (j, len(units), k))
        first_loop = [True]

        def loop(reds_or_none, emit_fn):
            """One pass over the row: emit_fn(ctx, lanes, body) fills the body; returns the lines."""
            if cache == "regs":
                load_now = first_loop[0]
                ctx = Ctx({"K1": lambda l: "k1", "K2": lambda l: "k2", "R1": lambda l: "0",
                           "R2": lambda l: "(jj + %d)" % l}, lambda l: "(rowbase + jj + %d)" % l, "R2", VV, False,
                          vec_loads=True, cached=None if load_now else {j: (lambda l, j=j: "C%d[it][%d]" % (j, l)) for j in units})
                body = self.new_body()
                if load_now:
                    for j in units:
                        body["lines"].append("kv_load<%d>(C%d[it], in%d + rowbase + jj);" % (VV, j, j))
                    ctx.cached = {j: (lambda l, j=j: "C%d[it][%d]" % (j, l)) for j in units}
                emit_fn(ctx, range(VV), body)
                first_loop[0] = False
                return (["#pragma unroll", "for (int it = 0; it < %d; ++it) {" % ITEMS,
                         "  const idx_t jj = ((idx_t)it * %d + lane) * %d;" % (team, VV),
                         "  if (jj < R2) {"] + ["    " + x for x in body["lines"]] + ["  }", "}"])
            if cache == "smem":
                load_now = first_loop[0]
                ctx = Ctx({"K1": lambda l: "k1", "K2": lambda l: "k2", "R1": lambda l: "0",
                           "R2": lambda l: "(jj + %d)" % l}, lambda l: "(rowbase + jj + %d)" % l, "R2", VV, False,
                          vec_loads=True, cached={j: (lambda l, j=j: "CS%d[%d]" % (j, l)) for j in units})
                body = self.new_body()
                for j in units:
                    if load_now:
                        body["lines"].append("float CS%d[%d]; kv_load<%d>(CS%d, in%d + rowbase + jj); kv_store<%d>(C%d + jj, CS%d);"
                                             % (j, VV, VV, j, j, VV, j, j))
                    else:
                        body["lines"].append("float CS%d[%d]; kv_load<%d>(CS%d, C%d + jj);" % (j, VV, VV, j, j))
                emit_fn(ctx, range(VV), body)
                first_loop[0] = False
                return (["for (idx_t jj = (idx_t)lane * %d; jj < R2; jj += %d) {" % (VV, team * VV)]
                        + ["  " + x for x in body["lines"]] + ["}"])
            ctx = Ctx({"K1": lambda l: "k1", "K2": lambda l: "k2", "R1": lambda l: "r1",
                       "R2": lambda l: "(jj + %d)" % l}, lambda l: "(cbase + jj + %d)" % l, "R2", VV, False, vec_loads=True)
            body = self.new_body()
            emit_fn(ctx, range(VV), body)
            return (["for (idx_t r1 = 0; r1 < R1; ++r1) {", "  const idx_t cbase = rowbase + r1 * (K2 * R2);",
                     "  for (idx_t jj = (idx_t)lane * %d; jj < R2; jj += %d) {" % (VV, team * VV)]
                    + ["    " + x for x in body["lines"]] + ["  }", "}"])

        ridx = (lambda l: "(r1 * R2 + jj + %d)" % l) if not cache else (lambda l: "(jj + %d)" % l)
        for ph in st.phases:
            reds = [r for r in st.reds if st.depth[id(r)] == ph]
            for r in reds:
                em.main += self.declare_states(r, "t")

            if cache == "regs" and int(self.p.get("online", 1)) == 2 and any(r.kind in ("welford", "lse") for r in reds):
                lines = self.two_pass_regs(em, reds, loop, ridx)
            else:
                def fill(ctx, lanes, body, reds=reds):
                    for lane in lanes:
                        for r in reds:
                            x = em.fx(r.arg, ctx, lane, body)
                            body["lines"].append(self.upd(r, "t", x, ridx(lane)))
                lines = loop(reds, fill) + self.fix(reds, "t")
            em.main.append("if (active) {")
            em.main += ["  " + x for x in lines]
            em.main.append("}")
            em.main += self.team_merge(reds, team, T)
            for r in reds:
                em.main += self.finalize(em, r, "t", 0)
        # epilogue
        rctx = Ctx(gidx_row, lambda l: "rowbase", None, 1, False, in_body=False)
        if st.post is not None:
            v = em.fx(st.post.args[0], rctx, 0, None)
            em.main.append("if (active && lane == 0) out0[row] = %s;" % v)
        elif st.cls(st.out_node) == ELEM:
            def fill_out(ctx, lanes, body):
                vals = [em.fx(st.out_node, ctx, l, body) for l in lanes]
                if len(vals) > 1 and em.unit(self.outinfo, "R2") and self.out_dtype == "f":
                    body["lines"].append("{ float o[%d] = {%s}; kv_store<%d>(out0 + %s, o); }" % (
                        len(vals), ", ".join(vals), len(vals), em.offset(ctx, "out0", self.outinfo, 0)))
                else:
                    for l in lanes:
                        body["lines"].append(self.store(em, ctx, vals[l], l))
            lines = loop(None, fill_out)
            em.main.append("if (active) {")
            em.main += ["  " + x for x in lines]
            em.main.append("}")
        else:
            v = em.fx(st.out_node, rctx, 0, None) if st.cls(st.out_node) != ELEM else None
            if st.out_node.op == "red" and st.out_node.attrs["r"].kind in ("argmax", "argmin"):
                v = em.ex(st.out_node, rctx, 0, None)
            em.main.append("if (active && lane == 0) %s" % self.store(em, rctx, v, 0))
        return pre + em.decl + em.main

    def two_pass_regs(self, em, reds, loop, ridx):
        """online = 2 over a row cached in registers: each thread's mean (or max) first, then its squared
        deviations (or sum of exponentials) from its own registers; the threads' states merge as usual."""
        two = [r for r in reds if r.kind in ("welford", "lse")]

        def first(ctx, lanes, body):
            for lane in lanes:
                for r in reds:
                    x = em.fx(r.arg, ctx, lane, body)
                    A = self.state_vars(r, "t")
                    if r.kind == "welford":
                        body["lines"].append("%s += (acc_t)1; W%d_s_t += (double)(%s);" % (A["n"], r.rid, x))
                    elif r.kind == "lse":
                        body["lines"].append("{ const acc_t kx = %s; if (kx > %s) %s = kx; }" % (x, A["m"], A["m"]))
                    else:
                        body["lines"].append(red_update(r.kind, A, x, ridx(lane)))

        def second(ctx, lanes, body):
            for lane in lanes:
                for r in two:
                    x = em.fx(r.arg, ctx, lane, body)
                    A = self.state_vars(r, "t")
                    if r.kind == "welford":
                        body["lines"].append("{ const acc_t kd = (acc_t)(%s) - %s; %s += kd * kd; }" % (x, A["m"], A["q"]))
                    else:  # equal to the max (infinities too) counts one
                        body["lines"].append("{ const acc_t kx = %s; %s += (kx == %s ? (acc_t)1 : KV_EXP(kx - %s)); }"
                                             % (x, A["s"], A["m"], A["m"]))
        mid = []
        for r in two:
            if r.kind == "welford":
                A = self.state_vars(r, "t")
                mid.append("if (%s > (acc_t)0) %s = (acc_t)(W%d_s_t / (double)%s);" % (A["n"], A["m"], r.rid, A["n"]))
        return loop(reds, first) + mid + loop(two, second)

    def team_merge(self, reds, team, T):
        """Merges every thread's states over its team (all threads of the block take part)."""
        out = []
        w = min(team, 32)
        comps = [(r, c, t) for r in reds for c, t in red_comps(r.kind)]
        out.append("#pragma unroll")
        out.append("for (int o = %d; o > 0; o >>= 1) {" % (w // 2))
        for r in reds:
            A = self.state_vars(r, "t")
            Bv = {}
            for c, t in red_comps(r.kind):
                out.append("  const %s B%d_%s = kv_shfl((%s)%s, o);" % (CT[t], r.rid, c, CT[t], A[c]))
                Bv[c] = "B%d_%s" % (r.rid, c)
            out.append("  " + red_merge(r.kind, A, Bv))
        out.append("}")
        if team > 32:
            W = team // 32
            counts = {t: sum(1 for _, _, x in comps if x == t) for t in CT}
            if counts["f"] > 8 or counts["d"] > 4 or counts["i"] > 2:
                raise Unsupported("more reductions in one pass than the block's scratch holds")
            out.append("__syncthreads();")
            out.append("if ((threadIdx.x & 31) == 0) {")
            next_slot = {t: 0 for t in CT}
            slots = {}
            for r, c, t in comps:
                slots[(r.rid, c)] = ("kv_red" + t, next_slot[t])
                out.append("  kv_red%s[%d * %d + (threadIdx.x >> 5)] = (%s)%s;" % (t, next_slot[t], T // 32, CT[t], self.state_vars(r, "t")[c]))
                next_slot[t] += 1
            out.append("}")
            out.append("__syncthreads();")
            out.append("{ const int w0 = team * %d;" % W)
            for r in reds:
                A = self.state_vars(r, "t")
                for c, _ in red_comps(r.kind):
                    arr, k = slots[(r.rid, c)]
                    out.append("  %s = %s[%d * %d + w0];" % (A[c], arr, k, T // 32))
            out.append("  for (int w = 1; w < %d; ++w) {" % W)
            for r in reds:
                A = self.state_vars(r, "t")
                Bv = {c: "%s[%d * %d + w0 + w]" % (slots[(r.rid, c)][0], slots[(r.rid, c)][1], T // 32) for c, _ in red_comps(r.kind)}
                out.append("    " + red_merge(r.kind, A, Bv))
            out.append("  }")
            out.append("}")
            out.append("__syncthreads();")
        return out

    # ================================ CUDA: finisher for a reduction over all rows =====================
    def _finisher_specs(self):
        if self.st.post is None:
            return []
        kind = self.prog.post["kind"]
        em = Emitter(self.st, "cuda", self.groups, self.opinfo, self.outinfo)
        ctx = Ctx({}, lambda l: "0", None, 1, False, in_body=False)
        ctx.post_value = "P"
        val = em.fx(self.st.out_node, ctx, 0, None) if not self.st.post_epilogue else "P"
        init = {"sum": "0.0f", "max": "-KV_INF", "min": "KV_INF"}[kind]
        upd = {"sum": "s += x;", "max": "s = (x > s || x != x) ? x : s;", "min": "s = (x < s || x != x) ? x : s;"}[kind]
        mrg = {"sum": "s += b;", "max": "s = (b > s || b != b) ? b : s;", "min": "s = (b < s || b != b) ? b : s;"}[kind]
        src = "\n".join([
            "// @kevolve kernel kv_finish", "// @kevolve grid 1", "// @kevolve block 1024",
            '#include "kevolve_kernel.h"', CUDA_PRELUDE,
            'extern "C" __global__ void __launch_bounds__(1024) kv_finish(kv_cuda_args a) {',
            "  const float* __restrict__ rb = (const float*)a.inputs[0].data;",
            "  float* __restrict__ out0 = (float*)a.outputs[0].data;",
            "  const idx_t n = a.inputs[0].shape[0];",
            "  float s = %s;" % init,
            "  for (idx_t i = threadIdx.x; i < n; i += 1024) { const float x = rb[i]; %s }" % upd,
            "  for (int o = 16; o > 0; o >>= 1) { const float b = kv_shfl(s, o); %s }" % mrg,
            "  __shared__ float part[32];",
            "  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;",
            "  __syncthreads();",
            "  if (threadIdx.x == 0) {",
            "    s = part[0];",
            "    for (int w = 1; w < 32; ++w) { const float b = part[w]; %s }" % mrg,
            "    const float P = s;"] + ["    " + x for x in em.decl + em.main] + [
            "    out0[0] = %s;" % val,
            "  }",
            "}"]) + "\n"
        specs = [KernelSpec("kv_finish", src, ["rowbuf"], ["out"], "1", "1024")]
        if self.st.post_epilogue:
            pw, _ = self.cuda_pointwise(Structure(self.prog, flat=True), "kv_post_pointwise", post_input=len(self.opinfo))
            specs += pw
        return specs

    # ================================ CUDA: split rows over blocks =====================================
    def cuda_split(self):
        if self.groups["R1"]:
            raise Unsupported("split needs the reduced dims to be the innermost ones")
        if self.st.post is not None:
            raise Unsupported("split with a reduction over all rows")
        T, V, P = int(self.p["threads"]), int(self.p["vec"]), int(self.p["split"])
        st = self.st
        specs = []
        scratch_sizes = []
        for pi, ph in enumerate(st.phases + [None]):
            bodies = []
            for key, VV in ((1, V), (3, 1)) if V > 1 else ((3, 1),):
                em = Emitter(st, "cuda", self.groups, self.opinfo, self.outinfo)
                pre = self.preamble(em)
                nin = len(self.opinfo)
                em.main += ["const idx_t row = (idx_t)blockIdx.x / %d, chunk = (idx_t)blockIdx.x %% %d;" % (P, P),
                            "const idx_t k1 = row, k2 = 0;",
                            "const idx_t rowbase = k1 * R2;",
                            "const idx_t CH = ((R2 + %d - 1) / %d + %d - 1) / %d * %d;" % (P, P, VV, VV, VV),
                            "const idx_t j0 = chunk * CH, j1 = KV_MIN_I(R2, j0 + CH);",
                            ] + RED_SHARED(T) + [
                            "const int team = 0, lane = threadIdx.x;"]
                # combine the partials of earlier phases
                for qi, q in enumerate(st.phases[:pi]):
                    reds = [r for r in st.reds if st.depth[id(r)] == q]
                    ncomp = sum(len(red_comps(r.kind)) for r in reds)
                    em.main.append("const double* __restrict__ part%d = (const double*)a.inputs[%d].data + row * %d * %d;" % (qi, nin + qi, P, ncomp))
                    for r in reds:
                        em.main += self.declare_states(r, "t")
                    em.main.append("for (int c = threadIdx.x; c < %d; c += %d) {" % (P, T))
                    k = 0
                    for r in reds:
                        Bv = {}
                        for c, t in red_comps(r.kind):
                            Bv[c] = "(%s)part%d[c * %d + %d]" % (CT[t], qi, ncomp, k)
                            k += 1
                        em.main.append("  " + red_merge(r.kind, self.state_vars(r, "t"), Bv))
                    em.main.append("}")
                    em.main += self.team_merge(reds, T, T)
                    for r in reds:
                        em.main += self.finalize_outer_scope(em, r)
                ctx = Ctx({"K1": lambda l: "k1", "R2": lambda l: "(jj + %d)" % l}, lambda l: "(rowbase + jj + %d)" % l,
                          "R2", VV, False, vec_loads=True)
                loop_head = ["for (idx_t jj = j0 + (idx_t)threadIdx.x * %d; jj < j1; jj += %d) {" % (VV, T * VV)]
                if ph is not None:
                    reds = [r for r in st.reds if st.depth[id(r)] == ph]
                    ncomp = sum(len(red_comps(r.kind)) for r in reds)
                    if key == 1 or VV == V:
                        scratch_sizes.append(ncomp) if len(scratch_sizes) == pi else None
                    for r in reds:
                        em.main += self.declare_states(r, "t")
                    body = self.new_body()
                    for lane in range(VV):
                        for r in reds:
                            x = em.fx(r.arg, ctx, lane, body)
                            body["lines"].append(self.upd(r, "t", x, "(jj + %d)" % lane))
                    em.main += loop_head + ["  " + x for x in body["lines"]] + ["}"] + self.fix(reds, "t")
                    em.main += self.team_merge(reds, T, T)
                    em.main.append("if (threadIdx.x == 0) {")
                    em.main.append("  double* __restrict__ part = (double*)a.outputs[0].data + (row * %d + chunk) * %d;" % (P, ncomp))
                    k = 0
                    for r in reds:
                        for c, _ in red_comps(r.kind):
                            em.main.append("  part[%d] = (double)%s;" % (k, self.state_vars(r, "t")[c]))
                            k += 1
                    em.main.append("}")
                else:
                    em.main.append(self.out_ptr())
                    if st.cls(st.out_node) == ELEM:
                        body = self.store_lanes(em, ctx, st, VV)
                        em.main += loop_head + ["  " + x for x in body["lines"]] + ["}"]
                    else:
                        rctx = Ctx({"K1": lambda l: "k1"}, lambda l: "rowbase", None, 1, False, in_body=False)
                        v = em.ex(st.out_node, rctx, 0, None)
                        em.main.append("if (chunk == 0 && threadIdx.x == 0) %s" % self.store(em, rctx, v, 0))
                bodies.append((key, pre + em.decl + em.main))
            name = "kv_split%d" % pi
            src = self._cuda_file(name, T, bodies, glob_pre=["#define KV_MIN_I(a, b) ((a) < (b) ? (a) : (b))"])
            ins = ["ops"] + ["scratch%d" % q for q in range(pi)]
            outs = ["scratch%d" % pi] if ph is not None else ["out"]
            specs.append(KernelSpec(name, src, ins, outs, "G", str(T)))
        return specs, {"kind": "split", "T": T, "V": V, "P": P, "scratch": scratch_sizes}

    def finalize_outer_scope(self, em, r):
        return self.finalize(em, r, "t", 0)

    # ================================ CUDA: outer (strided rows) =======================================
    def cuda_outer(self):
        T, V, TY = int(self.p["threads"]), int(self.p["vec"]), int(self.p["ty"])
        cache, ITEMS = self.p["cache"], int(self.p["items"])
        if T * TY > 1024:
            raise Unsupported("threads x ty = %d is more than a block holds" % (T * TY))
        bodies = []
        variants = ([(1, V, cache)] if cache == "regs" else []) + ([(2, V, "none")] if V > 1 else []) + [(3, 1, "none")]
        if V == 1 and cache == "regs":
            variants = [(1, 1, "regs"), (3, 1, "none")]
        for key, VV, cm in variants:
            bodies.append((key, self.outer_body(T, TY, VV, cm, ITEMS)))
        src = self._cuda_file("kv_cols", T, bodies, TY=TY)
        return [KernelSpec("kv_cols", src, ["ops"], ["out"] if self.st.post is None else ["rowbuf"], "G", str(T), str(TY))] + \
            self._finisher_specs(), {"kind": "outer", "T": T, "TY": TY, "V": V, "units": self._unit_operands("K2"),
                                     "post": self.st.post is not None, "cache": cache, "ITEMS": ITEMS}

    def outer_body(self, T, TY, VV, cache, ITEMS):
        st = self.st
        em = Emitter(st, "cuda", self.groups, self.opinfo, self.outinfo)
        pre = self.preamble(em)
        head = [self.out_ptr() if st.post is None else "float* __restrict__ out0 = (float*)a.outputs[0].data;",
                "const idx_t KG2 = K2 / %d;" % VV,
                "const idx_t col = (idx_t)blockIdx.x * %d + threadIdx.x;" % T,
                "const bool active = col < K1 * KG2;",
                "const idx_t k1 = active ? col / KG2 : 0, k2b = active ? (col % KG2) * " + str(VV) + " : 0;",
                "const idx_t colbase = k1 * (R1 * K2) + k2b;",
                "const int ty = threadIdx.y;"]
        em.main += head
        lanes = range(VV)
        gidx_row = {"K1": lambda l: "k1", "K2": lambda l: "(k2b + %d)" % l}
        units = self._main_operands() if cache == "regs" else []
        if cache == "regs":
            for j in units:
                em.main.append("float C%d[%d][%d];" % (j, ITEMS, VV))
        first = [True]

        def loop(fill):
            if cache == "regs":
                ctx = Ctx({"K1": lambda l: "k1", "K2": lambda l: "(k2b + %d)" % l, "R1": lambda l: "r1"},
                          lambda l: "(colbase + r1 * K2 + %d)" % l, "K2", VV, True, vec_loads=True)
                body = self.new_body()
                if first[0]:
                    for j in units:
                        body["lines"].append("kv_load<%d>(C%d[it], in%d + colbase + r1 * K2);" % (VV, j, j))
                ctx.cached = {j: (lambda l, j=j: "C%d[it][%d]" % (j, l)) for j in units}
                fill(ctx, body)
                first[0] = False
                return ["#pragma unroll", "for (int it = 0; it < %d; ++it) {" % ITEMS,
                        "  const idx_t r1 = (idx_t)it * %d + ty;" % TY, "  if (r1 < R1) {"] + \
                    ["    " + x for x in body["lines"]] + ["  }", "}"]
            ctx = Ctx({"K1": lambda l: "k1", "K2": lambda l: "(k2b + %d)" % l, "R1": lambda l: "r1"},
                      lambda l: "(colbase + r1 * K2 + %d)" % l, "K2", VV, True, vec_loads=True)
            body = self.new_body()
            fill(ctx, body)
            return ["for (idx_t r1 = ty; r1 < R1; r1 += %d) {" % TY] + ["  " + x for x in body["lines"]] + ["}"]

        for ph in st.phases:
            reds = [r for r in st.reds if st.depth[id(r)] == ph]
            for r in reds:
                for l in lanes:
                    em.main += self.declare_states(r, "l%d" % l)

            def fill(ctx, body, reds=reds):
                for l in lanes:
                    for r in reds:
                        x = em.fx(r.arg, ctx, l, body)
                        body["lines"].append(self.upd(r, "l%d" % l, x, "r1"))
            em.main += ["if (active) {"] + ["  " + x for x in loop(fill)] + [
                "  " + x for l in lanes for x in self.fix(reds, "l%d" % l)] + ["}"]
            if TY > 1:
                em.main += self.ty_merge(reds, T, TY, VV)
            for r in reds:
                for l in lanes:
                    em.main += self.finalize(em, r, "l%d" % l, l)
        rctx = Ctx(gidx_row, lambda l: "(colbase + %d)" % l, "K2", VV, True, in_body=False)
        if st.post is not None:
            for l in lanes:
                v = em.fx(st.post.args[0], rctx, l, None)
                em.main.append("if (active && ty == 0) out0[k1 * K2 + k2b + %d] = %s;" % (l, v))
        elif st.cls(st.out_node) == ELEM:
            def fill_out(ctx, body):
                vals = [em.fx(st.out_node, ctx, l, body) for l in lanes]
                if VV > 1 and em.unit(self.outinfo, "K2") and self.out_dtype == "f":
                    body["lines"].append("{ float o[%d] = {%s}; kv_store<%d>(out0 + %s, o); }" % (
                        VV, ", ".join(vals), VV, em.offset(ctx, "out0", self.outinfo, 0)))
                else:
                    for l in lanes:
                        body["lines"].append(self.store(em, ctx, vals[l], l))
            em.main += ["if (active) {"] + ["  " + x for x in loop(fill_out)] + ["}"]
        else:
            for l in lanes:
                v = em.ex(st.out_node, rctx, l, None)
                em.main.append("if (active && ty == 0) %s" % self.store(em, rctx, v, l))
        return pre + em.decl + em.main

    def ty_merge(self, reds, T, TY, VV):
        out = []
        comps = [(r, c, t) for r in reds for c, t in red_comps(r.kind)]
        counts = {t: sum(1 for _, _, x in comps if x == t) for t in CT}
        size = sum(counts[t] * TY * T * VV * (4 if t == "f" else 8) for t in CT)
        if size > 44 * 1024:
            raise Unsupported("threads x ty x vec = %d x %d x %d needs %d bytes of shared memory to merge (at most 44 KB)"
                              % (T, TY, VV, size))
        out.append("{")
        for t in CT:
            if counts[t]:
                out.append("  __shared__ %s kv_ty%s[%d][%d][%d];" % (CT[t], t, counts[t], TY, T * VV))
        next_slot = {t: 0 for t in CT}
        slots = {}
        for r, c, t in comps:
            slots[(r.rid, c)] = ("kv_ty" + t, next_slot[t])
            next_slot[t] += 1
        for l in range(VV):
            for r in reds:
                A = self.state_vars(r, "l%d" % l)
                for c, _ in red_comps(r.kind):
                    arr, k = slots[(r.rid, c)]
                    out.append("  %s[%d][ty][threadIdx.x * %d + %d] = %s;" % (arr, k, VV, l, A[c]))
        out.append("  __syncthreads();")
        for l in range(VV):
            for r in reds:
                A = self.state_vars(r, "l%d" % l)
                for c, _ in red_comps(r.kind):
                    arr, k = slots[(r.rid, c)]
                    out.append("  %s = %s[%d][0][threadIdx.x * %d + %d];" % (A[c], arr, k, VV, l))
        out.append("  for (int y = 1; y < %d; ++y) {" % TY)
        for l in range(VV):
            for r in reds:
                A = self.state_vars(r, "l%d" % l)
                Bv = {c: "%s[%d][y][threadIdx.x * %d + %d]" % (slots[(r.rid, c)][0], slots[(r.rid, c)][1], VV, l) for c, _ in red_comps(r.kind)}
                out.append("    " + red_merge(r.kind, A, Bv))
        out.append("  }")
        out.append("  __syncthreads();")
        out.append("}")
        return out

    # ================================ CUDA: scans ======================================================
    def cuda_scan(self):
        sc = self.prog.scan
        T, V = int(self.p["threads"]), int(self.p["vec"])
        op = "+" if sc["kind"] == "sum" else "*"
        ident = "0.0f" if sc["kind"] == "sum" else "1.0f"
        rev = sc["reverse"]
        bodies = []
        for key, VV in ((1, V), (3, 1)) if V > 1 else ((3, 1),):
            em = Emitter(self.st, "cuda", self.groups, self.opinfo, self.outinfo)
            pre = self.preamble(em)
            if self.kind == "scan_outer":
                em.main += [self.out_ptr(),
                            "const idx_t KG2 = K2 / %d;" % VV,
                            "const idx_t col = (idx_t)blockIdx.x * %d + threadIdx.x;" % T,
                            "if (col >= K1 * KG2) return;",
                            "const idx_t k1 = col / KG2, k2b = (col %% KG2) * %d;" % VV,
                            "const idx_t colbase = k1 * (R1 * K2) + k2b;"]
                em.main += ["double acc%d = %s;" % (l, ident) for l in range(VV)]
                ctx = Ctx({"K1": lambda l: "k1", "K2": lambda l: "(k2b + %d)" % l, "R1": lambda l: "r1"},
                          lambda l: "(colbase + r1 * K2 + %d)" % l, "K2", VV, True, vec_loads=True)
                ctx.scan_value = lambda l: "(float)acc%d" % l
                body = self.new_body()
                for l in range(VV):
                    x = em.fx(sc["arg"], ctx, l, body)
                    body["lines"].append("acc%d = acc%d %s %s;" % (l, l, op, x))
                vals = [em.fx(self.st.out_node, ctx, l, body) for l in range(VV)]
                for l in range(VV):
                    body["lines"].append(self.store(em, ctx, vals[l], l))
                head = "for (idx_t q = 0; q < R1; ++q) { const idx_t r1 = %s;" % ("R1 - 1 - q" if rev else "q")
                em.main += [head] + ["  " + x for x in body["lines"]] + ["}"]
            else:
                # a block per row: chunks of T*VV elements, each thread scans its VV, the block scans the totals
                em.main += [self.out_ptr(),
                            "const idx_t row = blockIdx.x;",
                            "const idx_t k1 = row / K2, k2 = row % K2;",
                            "const idx_t rowbase = k1 * (R1 * K2 * R2) + k2 * R2;",
                            "__shared__ double kv_wsum[32];",
                            "__shared__ double kv_carry;",
                            "if (threadIdx.x == 0) kv_carry = %s;" % ident,
                            "__syncthreads();",
                            "const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;"]
                ctx = Ctx({"K1": lambda l: "k1", "K2": lambda l: "k2", "R2": lambda l: "jx%d" % l},
                          lambda l: "(rowbase + jx%d)" % l, "R2", 1, False, vec_loads=None)
                ctx.scan_value = lambda l: "(float)sv%d" % l
                body = self.new_body()
                # element positions of this thread in the chunk (reversed scans walk from the end)
                for l in range(VV):
                    if rev:
                        body["lines"].append("const idx_t jx%d = R2 - 1 - (base + (idx_t)threadIdx.x * %d + %d);" % (l, VV, l))
                    else:
                        body["lines"].append("const idx_t jx%d = base + (idx_t)threadIdx.x * %d + %d;" % (l, VV, l))
                    body["lines"].append("const bool ok%d = base + (idx_t)threadIdx.x * %d + %d < R2;" % (l, VV, l))
                # each lane's prologue under its guard (elements past the row's end take the identity)
                body["lines"].append("double xv[%d];" % VV)
                lines_pl = []
                for l in range(VV):
                    sb = self.new_body()
                    x = em.fx(sc["arg"], ctx, l, sb)
                    lines_pl.append("if (ok%d) {" % l)
                    lines_pl += ["  " + y for y in sb["lines"]]
                    lines_pl.append("  xv[%d] = %s; } else xv[%d] = %s;" % (l, x, l, ident))
                body["lines"] += lines_pl
                body["lines"] += ["double tsum = %s;" % ident,
                                  "#pragma unroll", "for (int q = 0; q < %d; ++q) { tsum = tsum %s xv[q]; xv[q] = tsum; }" % (VV, op),
                                  "double incl = tsum;",
                                  "#pragma unroll", "for (int o = 1; o < 32; o <<= 1) { const double y = __shfl_up_sync(0xffffffffu, incl, o); if (lane >= o) incl = incl %s y; }" % op,
                                  "if (lane == 31) kv_wsum[warp] = incl;",
                                  "__syncthreads();",
                                  "if (warp == 0) { double w = lane < %d ? kv_wsum[lane] : %s;" % (T // 32, ident),
                                  "  for (int o = 1; o < 32; o <<= 1) { const double y = __shfl_up_sync(0xffffffffu, w, o); if (lane >= o) w = w %s y; }" % op,
                                  "  kv_wsum[lane] = w; }",
                                  "__syncthreads();",
                                  # what comes before this thread's elements in the chunk: the earlier warps' total
                                  # and the earlier lanes' (the warp's inclusive scan shifted by one lane)
                                  "double ex = __shfl_up_sync(0xffffffffu, incl, 1); if (lane == 0) ex = %s;" % ident,
                                  "const double before = (warp > 0 ? kv_wsum[warp - 1] : %s) %s ex;" % (ident, op),
                                  "const double carry = kv_carry;"]
                for l in range(VV):
                    body["lines"].append("const double sv%d = carry %s (before %s xv[%d]);" % (l, op, op, l))
                store_lines = []
                for l in range(VV):
                    sb = self.new_body()
                    v = em.fx(self.st.out_node, ctx, l, sb)
                    store_lines.append("if (ok%d) {" % l)
                    store_lines += ["  " + y for y in sb["lines"]]
                    store_lines.append("  " + self.store(em, ctx, v, l) + " }")
                body["lines"] += store_lines
                body["lines"] += ["__syncthreads();",
                                  "if (threadIdx.x == %d) kv_carry = carry %s kv_wsum[%d];" % (T - 1, op, T // 32 - 1),
                                  "__syncthreads();"]
                em.main += ["for (idx_t base = 0; base < R1 * R2; base += %d) {" % (T * VV)] + ["  " + x for x in body["lines"]] + ["}"]
                if self.groups["R1"]:
                    raise Unsupported("a scan over a dim that is not contiguous with the inner dims")
            bodies.append((key, pre + em.decl + em.main))
        src = self._cuda_file("kv_scan", T, bodies)
        return [KernelSpec("kv_scan", src, ["ops"], ["out"], "G", str(T))], {"kind": self.kind, "T": T, "V": V,
                                                                           "units": self._unit_operands("K2") if self.kind == "scan_outer" else []}

    # ================================ CPU ===============================================================
    def cpu_source(self):
        st = self.st
        em = Emitter(st, "cpu", self.groups, self.opinfo, self.outinfo)
        pre = self.preamble(em)
        lines = []
        sched = self.p.get("schedule", "rows")
        grain = int(self.p.get("grain", 0))
        omp = "schedule(static)" if grain == 0 else "schedule(dynamic, %d)" % grain
        post = st.post is not None
        if self.kind == "pointwise":
            ctx = Ctx({"K1": lambda l: "e"}, lambda l: "e", None, 1, False)
            body = self.new_body()
            v = em.fx(st.out_node, ctx, 0, body)
            body["lines"].append(self.store(em, ctx, v, 0))
            lines += [self.out_ptr(), "const idx_t N = K1;", "#pragma omp parallel for " + omp,
                      "for (idx_t b = 0; b < (N + 4095) / 4096; ++b) {",
                      "  const idx_t e1 = std::min<idx_t>(N, (b + 1) * 4096);",
                      "  for (idx_t e = b * 4096; e < e1; ++e) {"] + ["    " + x for x in body["lines"]] + ["  }", "}"]
            return self._cpu_file(pre + em.decl + em.main + lines), {"kind": "pointwise"}
        if self.kind in ("scan_inner", "scan_outer"):
            sc = self.prog.scan
            op = "+" if sc["kind"] == "sum" else "*"
            ident = "0.0" if sc["kind"] == "sum" else "1.0"
            ctx = Ctx({"K1": lambda l: "k1", "K2": lambda l: "k2", "R1": lambda l: "(r / R2)", "R2": lambda l: "(r % R2)"},
                      lambda l: "(k1 * (R1 * K2 * R2) + (r / R2) * (K2 * R2) + k2 * R2 + r % R2)", None, 1, False)
            ctx.scan_value = lambda l: "(float)acc"
            body = self.new_body()
            x = em.fx(sc["arg"], ctx, 0, body)
            body["lines"].append("acc = acc %s (acc_t)%s;" % (op, x))
            v = em.fx(st.out_node, ctx, 0, body)
            body["lines"].append(self.store(em, ctx, v, 0))
            lines += [self.out_ptr(), "#pragma omp parallel for " + omp,
                      "for (idx_t row = 0; row < K1 * K2; ++row) {", "  const idx_t k1 = row / K2, k2 = row % K2;",
                      "  acc_t acc = %s;" % ident,
                      "  for (idx_t q = 0; q < R1 * R2; ++q) {", "    const idx_t r = %s;" % ("R1 * R2 - 1 - q" if sc["reverse"] else "q")]
            lines += ["    " + x for x in body["lines"]] + ["  }", "}"]
            return self._cpu_file(pre + em.decl + em.main + lines), {"kind": self.kind}
        # rows (inner and outer alike): row = (k1, k2); element r = (r1, r2)
        elem_ctx = lambda: Ctx({"K1": lambda l: "k1", "K2": lambda l: "k2", "R1": lambda l: "(r / R2)",  # noqa: E731
                                "R2": lambda l: "(r % R2)"},
                               lambda l: "(k1 * (R1 * K2 * R2) + (r / R2) * (K2 * R2) + k2 * R2 + r % R2)", None, 1, False)
        row_ctx = Ctx({"K1": lambda l: "k1", "K2": lambda l: "k2"}, lambda l: "0", None, 1, False, in_body=False)
        split = sched == "split"
        out_lines = [self.out_ptr() if not post else "float* __restrict__ out0 = (float*)a->outputs[0].data;",
                     "const idx_t NR = K1 * K2, RL = R1 * R2;",
                     "const int NT = omp_get_max_threads();",
                     "const idx_t P = %s;" % ("std::max<idx_t>(1, std::min<idx_t>(RL, (idx_t)NT * 4 / std::max<idx_t>(NR, 1) + 1))" if split else "1"),
                     "const idx_t CH = (RL + P - 1) / P;"]
        if post:
            out_lines.append("std::vector<float> rowbuf(NR);")
        phase_code = []
        # row scope is inside the loop over rows: statements emitted into em.main while generating are moved
        for ph in st.phases:
            reds = [r for r in st.reds if st.depth[id(r)] == ph]
            ncomp = sum(len(red_comps(r.kind)) for r in reds)
            saved_main, em.main = em.main, []
            body = self.new_body()
            ctx = elem_ctx()
            for r in reds:
                x = em.fx(r.arg, ctx, 0, body)
                body["lines"].append(self.upd(r, "t", x, "r"))
            hoisted, em.main = em.main, saved_main
            phase_code.append((ph, reds, ncomp, hoisted, body["lines"]))
            for r in reds:
                self.finalize(em, r, "t", 0)  # registers the names
        # generate the row-level code: for each row, the phases in order (rows schedule), or the phases as
        # parallel loops over (row, chunk) with partial states (split schedule)
        if not split:
            lines += out_lines
            lines += ["#pragma omp parallel for " + omp, "for (idx_t row = 0; row < NR; ++row) {",
                      "  const idx_t k1 = row / K2, k2 = row % K2;"]
            for ph, reds, ncomp, hoisted, blines in phase_code:
                lines += ["  " + x for x in hoisted]
                for r in reds:
                    lines += ["  " + x for x in self.declare_states(r, "t")]
                lines += ["  for (idx_t r = 0; r < RL; ++r) {"] + ["    " + x for x in blines] + ["  }"]
                lines += ["  " + x for x in self.fix(reds, "t")]
                for r in reds:
                    lines += ["  " + x for x in self._cpu_final(r)]
            lines += ["  " + x for x in self._cpu_epilogue(em, row_ctx, elem_ctx, "0", "RL")]
            lines += ["}"]
        else:
            lines += out_lines
            for pi, (ph, reds, ncomp, hoisted, blines) in enumerate(phase_code):
                lines += ["std::vector<double> part%d((size_t)NR * P * %d);" % (pi, ncomp)]
                lines += ["#pragma omp parallel for collapse(2) " + omp,
                          "for (idx_t row = 0; row < NR; ++row) for (idx_t c = 0; c < P; ++c) {",
                          "  const idx_t k1 = row / K2, k2 = row % K2;"]
                lines += self._cpu_combine_earlier(phase_code[:pi], "  ")
                lines += ["  " + x for x in hoisted]
                for r in reds:
                    lines += ["  " + x for x in self.declare_states(r, "t")]
                lines += ["  for (idx_t r = c * CH; r < std::min(RL, (c + 1) * CH); ++r) {"] + ["    " + x for x in blines] + ["  }"]
                lines += ["  " + x for x in self.fix(reds, "t")]
                k = 0
                for r in reds:
                    for cmp, _ in red_comps(r.kind):
                        lines.append("  part%d[((size_t)row * P + c) * %d + %d] = (double)%s;" % (pi, ncomp, k, self.state_vars(r, "t")[cmp]))
                        k += 1
                lines.append("}")
            lines += ["#pragma omp parallel for collapse(2) " + omp,
                      "for (idx_t row = 0; row < NR; ++row) for (idx_t c = 0; c < P; ++c) {",
                      "  const idx_t k1 = row / K2, k2 = row % K2;"]
            lines += self._cpu_combine_earlier(phase_code, "  ")
            lines += ["  " + x for x in self._cpu_epilogue(em, row_ctx, elem_ctx, "c * CH", "std::min(RL, (c + 1) * CH)",
                                                           only_first="c == 0")]
            lines += ["}"]
        if post:
            kind = self.prog.post["kind"]
            init = {"sum": "0.0", "max": "-KV_INF", "min": "KV_INF"}[kind]
            upd = {"sum": "s += rowbuf[i];", "max": "if (rowbuf[i] > s || rowbuf[i] != rowbuf[i]) s = rowbuf[i];",
                   "min": "if (rowbuf[i] < s || rowbuf[i] != rowbuf[i]) s = rowbuf[i];"}[kind]
            fctx = Ctx({}, lambda l: "0", None, 1, False, in_body=False)
            fctx.post_value = "P"
            em2 = Emitter(st, "cpu", self.groups, self.opinfo, self.outinfo)
            if not st.post_epilogue:
                val = em2.fx(st.out_node, fctx, 0, None)
                lines += ["{ double s = %s; for (idx_t i = 0; i < NR; ++i) { %s }" % (init, upd), "  const float P = (float)s;"]
                lines += ["  " + x for x in em2.decl + em2.main] + ["  out0[0] = %s; }" % val]
            else:
                fst = Structure(self.prog, flat=True)
                groups = {"K1": list(range(self.nd)), "R1": [], "K2": [], "R2": []}
                em3 = Emitter(fst, "cpu", groups, self.opinfo, self.outinfo)
                ctx = Ctx({"K1": lambda l: "e"}, lambda l: "e", None, 1, False)
                ctx.post_value = "P"
                body = self.new_body()
                v = em3.fx(fst.out_node, ctx, 0, body)
                body["lines"].append("out1[%s] = %s;" % (em3.offset(ctx, "out0", self.outinfo, 0), v))
                lines += ["{ double s = %s; for (idx_t i = 0; i < NR; ++i) { %s }" % (init, upd), "  const float P = (float)s;",
                          "  float* __restrict__ out1 = (float*)a->outputs[0].data;",
                          "  const idx_t NE = %s;" % " * ".join("DS%d" % d for d in range(self.nd))]
                lines += ["  " + x for x in em3.decl + em3.main]
                lines += ["  #pragma omp parallel for schedule(static)", "  for (idx_t e = 0; e < NE; ++e) {"] + \
                    ["    " + x for x in body["lines"]] + ["  }", "}"]
        return self._cpu_file(pre + em.decl + lines), {"kind": "rows", "schedule": sched}

    def _cpu_final(self, r):
        out = []
        for slot in range(3 if r.kind == "welford" else 1):
            var = "R%d_%d_t" % (r.rid, slot)
            ty = "idx_t" if r.kind in ("argmax", "argmin") else "float"
            out.append("const %s %s = %s;" % (ty, var, red_final(r.kind, slot, self.state_vars(r, "t"))))
        return out

    def _cpu_combine_earlier(self, earlier, ind):
        out = []
        for pi, (ph, reds, ncomp, hoisted, blines) in enumerate(earlier):
            out += [ind + x for x in hoisted]
            for r in reds:
                out += [ind + x for x in self.declare_states(r, "t")]
            out.append(ind + "for (idx_t q = 0; q < P; ++q) {")
            k = 0
            for r in reds:
                Bv = {}
                for c, t in red_comps(r.kind):
                    Bv[c] = "(%s)part%d[((size_t)row * P + q) * %d + %d]" % ("idx_t" if t == "i" else "acc_t", pi, ncomp, k)
                    k += 1
                out.append(ind + "  " + red_merge(r.kind, self.state_vars(r, "t"), Bv))
            out.append(ind + "}")
            for r in reds:
                out += [ind + x for x in self._cpu_final(r)]
        return out

    def _cpu_epilogue(self, em, row_ctx, elem_ctx, r0, r1, only_first=None):
        st = self.st
        out = []
        saved_main, em.main = em.main, []
        if st.post is not None:
            v = em.fx(st.post.args[0], row_ctx, 0, None)
            tail = ["if (%s) rowbuf[row] = %s;" % (only_first or "true", v)]
        elif st.cls(st.out_node) == ELEM:
            body = self.new_body()
            ctx = elem_ctx()
            v = em.fx(st.out_node, ctx, 0, body)
            body["lines"].append(self.store(em, ctx, v, 0))
            tail = ["for (idx_t r = %s; r < %s; ++r) {" % (r0, r1)] + ["  " + x for x in body["lines"]] + ["}"]
        else:
            v = em.ex(st.out_node, row_ctx, 0, None)
            tail = ["if (%s) %s" % (only_first or "true", self.store(em, row_ctx, v, 0))]
        hoisted, em.main = em.main, saved_main
        return out + hoisted + tail

    def _cpu_file(self, body_lines):
        lines = ['#include "kevolve_kernel.h"', "#include <omp.h>", CPU_PRELUDE,
                 'extern "C" int kevolve_kernel(const kv_args* a) {']
        lines += ["  " + x for x in body_lines]
        lines += ["  return 0;", "}"]
        return "\n".join(lines) + "\n"


# ---- the ModelNew file -------------------------------------------------------------------------------------

def _py(x):
    if isinstance(x, torch.dtype):
        return str(x)
    if isinstance(x, torch.device):
        return "torch.device(%r)" % str(x)
    if isinstance(x, float) and (x != x or x in (float("inf"), float("-inf"))):
        return "float(%r)" % str(x)
    if isinstance(x, (list, tuple)):
        inner = ", ".join(_py(v) for v in x)
        return "[%s]" % inner if isinstance(x, list) else "(%s%s)" % (inner, "," if len(x) == 1 else "")
    if isinstance(x, slice):
        return "slice(%s, %s, %s)" % (_py(x.start), _py(x.stop), _py(x.step))
    if isinstance(x, (int, float, bool, str)) or x is None:
        return repr(x)
    raise Unsupported("a constant of type %s in a library call" % type(x).__name__)


def _callable_path(func, name):
    """A Python expression that names func (torch.nn.functional.X, torch.X or torch.Tensor.X)."""
    import torch.nn.functional as F
    for k, v in vars(F).items():
        if v is func and not k.startswith("_"):
            return "torch.nn.functional." + k
    for k, v in vars(F).items():
        if v is func:
            return "torch.nn.functional." + k
    if getattr(torch, name, None) is func:
        return "torch." + name
    if getattr(torch.Tensor, name, None) is func:
        return "torch.Tensor." + name
    if name == "property:T":
        return None
    raise Unsupported("the library call %s cannot be named in Python" % name)


def _arg_code(x, names):
    if isinstance(x, Ref):
        return names[(x.kind, x.key, x.item)]
    if isinstance(x, (list, tuple)) and any(isinstance(v, Ref) for v in x):
        inner = ", ".join(_arg_code(v, names) for v in x)
        return "[%s]" % inner if isinstance(x, list) else "(%s,)" % inner
    return _py(x)


def forward_code(an, gen, specs, meta, backend, params):
    """The body of ModelNew.forward: the library calls, the operands, the launches."""
    prog = an.prog
    nargs = len(an.inputs)
    lines = []
    names = {}
    for i in range(nargs):
        names[("input", i, None)] = "x%d" % i
    for n, _ in list(an.model.named_parameters()) + list(an.model.named_buffers()):
        names[("state", n, None)] = "self." + n
    lib = prog.lib or {}
    for op in an.prefix:
        path = _callable_path(op.func, op.name)
        var = "p%d" % op.index
        cargs = [_arg_code(a, names) for a in op.args]
        ckw = {k: _arg_code(v, names) for k, v in op.kwargs.items()}
        if op.index == lib.get("index"):
            # the convolution: without its bias where the kernel adds it, with channels_last weights under cl
            if lib.get("bias_fused"):
                if len(cargs) > 2:
                    cargs[2] = "None"
                else:
                    ckw["bias"] = "None"
            if an.cl:
                if len(cargs) > 1:
                    cargs[1] = "self._kv_cl(%s)" % cargs[1]
                else:
                    ckw["weight"] = "self._kv_cl(%s)" % ckw["weight"]
        args = ", ".join(cargs + ["%s=%s" % (k, v) for k, v in ckw.items()])
        if path is None:
            lines.append("%s = %s.T" % (var, _arg_code(op.args[0], names)))
        else:
            lines.append("%s = %s(%s)" % (var, path, args))
        if isinstance(op.out, list):
            for k, o in enumerate(op.out):
                if o is not None:
                    names[("op", op.index, k)] = "%s[%d]" % (var, k)
        else:
            names[("op", op.index, None)] = var
    # operands, made contiguous; the data operand gives the domain's sizes
    dref = prog.domain_ref
    dname = names[(dref.kind, dref.key, dref.item)]
    lines.append("d = %s" % dname)
    ds = []
    k = 0
    for i in range(len(dref.shape)):
        if i in prog.splits:
            ds += ["%d" % prog.splits[i], "d.shape[%d] // %d" % (i, prog.splits[i])]
        else:
            ds.append("d.shape[%d]" % i)
    if not dref.shape:
        ds = ["1"]
    if prog.domain_perm is not None:
        ds = ["d.shape[%d]" % i for i in prog.domain_perm]
    lines.append("ds = [%s]" % ", ".join(ds))
    ops = []
    for j, (ref, shape, dtype) in enumerate(prog.operands):
        if j in prog.perms:  # channels_last: the tensor viewed in the domain's order (no copy for NHWC memory)
            lines.append("o%d = %s.permute(%s).contiguous()" % (j, names[(ref.kind, ref.key, ref.item)], _py(tuple(prog.perms[j]))))
        else:
            lines.append("o%d = %s.contiguous()" % (j, names[(ref.kind, ref.key, ref.item)]))
        ops.append("o%d" % j)
    lines.append("ops = [%s]" % ", ".join(ops))
    out = prog.output
    # the output's shape from the domain's sizes where it follows them (keepdim and reduced dims aside)
    osh = []
    for s, L in zip(out.shape, out.dmap):
        if not L:
            osh.append("1")
        else:
            osh.append(" * ".join("ds[%d]" % d for d in L))
    odt = "torch.int64" if out.dtype == torch.int64 else "torch.float32"
    dev = "d.device"
    kind = meta["kind"]
    nd = len(prog.domain)
    group = an.layout["groups"]

    def gsize(names_):
        dd = [d for g in names_ for d in (group.get(g) or [])]
        return " * ".join("ds[%d]" % d for d in dd) if dd else "1"
    lines.append("K1, R1, K2, R2 = %s, %s, %s, %s" % (gsize(["K1"]), gsize(["R1"]), gsize(["K2"]), gsize(["R2"])))
    post = gen.st.post is not None
    lines.append("out = torch.empty([%s], dtype=%s, device=%s)" % (", ".join(osh), odt, dev))
    first = "rowbuf" if post else "out"
    if post:
        lines.append("rowbuf = torch.empty([K1 * K2], dtype=torch.float32, device=%s)" % dev)
    if backend == "cpu":
        lines.append("self._kv_k0(ops, [%s], [float(s) for s in ds], {})" % "out")
    else:
        units = meta.get("units", [])
        V = meta.get("V", 1)
        # the vector variant needs aligned, vector-divisible unit operands and output
        if kind == "planes":
            T, U = meta["T"], meta["U"]
            po = " * ".join("ds[%d]" % d for d in meta["outer"])
            pi = " * ".join("ds[%d]" % d for d in meta["inner"])
            lines.append("PO, PI = %s, %s" % (po, pi))
            lines.append("vec = %d > 1 and PI %% %d == 0 and ds[%d] %% %d == 0 and all(t.data_ptr() %% %d == 0 for t in ops + [out])"
                         % (V, V, nd - 1, V, 4 * V))
            lines.append("VV = %d if vec else 1" % V)
            lines.append("GY = max(1, min(65535, -(-PI // (%d * VV * %d))))" % (T, U))
            lines.append("self._kv_k0(ops, [out], [float(s) for s in ds] + [1.0 if vec else 3.0], {'G': PO, 'GY': GY, 'SM': 0})")
        elif kind == "pointwise":
            lines.append("vec = %d > 1 and K1 %% %d == 0 and %s and all(t.data_ptr() %% %d == 0 for t in ops + [out])"
                         % (V, V, "ds[%d] %% %d == 0" % (nd - 1, V) if meta.get("lanes") else "True", 4 * V))
            lines.append("VV = %d if vec else 1" % V)
            lines.append("G = max(1, -(-K1 // (%d * VV * %d)))" % (meta["T"], meta["U"]))
            lines.append("self._kv_k0(ops, [out], [float(s) for s in ds] + [1.0 if vec else 3.0], {'G': G, 'SM': 0})")
        elif kind == "inner":
            T, team, cache, ITEMS = meta["T"], meta["team"], meta["cache"], meta["ITEMS"]
            uops = "[%s]" % ", ".join("o%d" % j for j in units)
            lines.append("vec = %d > 1 and R2 %% %d == 0 and all(t.data_ptr() %% %d == 0 for t in %s + [%s])" % (V, V, 4 * V, uops, first))
            lines.append("G = max(1, -(-(K1 * K2) // %d))" % (T // team))
            if cache == "regs":
                lines.append("variant = 1 if vec and R1 == 1 and R2 <= %d else 2 if vec else 3" % (ITEMS * team * V))
                lines.append("SM = 0")
            elif cache == "smem":
                nb = (T // team) * max(1, meta["ncache"]) * 4
                lines.append("variant = 1 if vec and R1 == 1 and R2 * %d <= 200 * 1024 else 2 if vec else 3" % nb)
                lines.append("SM = R2 * %d if variant == 1 else 0" % nb)
            else:
                lines.append("variant = 2 if vec else 3")
                lines.append("SM = 0")
            lines.append("self._kv_k0(ops, [%s], [float(s) for s in ds] + [float(variant)], {'G': G, 'SM': SM})" % first)
        elif kind in ("outer", "scan_outer"):
            T = meta["T"]
            uops = "[%s]" % ", ".join("o%d" % j for j in units)
            lines.append("vec = %d > 1 and K2 %% %d == 0 and all(t.data_ptr() %% %d == 0 for t in %s + [%s])" % (V, V, 4 * V, uops, first))
            lines.append("VV = %d if vec else 1" % V)
            lines.append("G = max(1, -(-(K1 * (K2 // VV)) // %d))" % T)
            if kind == "outer" and meta.get("cache") == "regs":
                lines.append("variant = 1 if (vec or %d == 1) and R1 <= %d else 2 if vec else 3" % (V, meta["ITEMS"] * meta["TY"]))
            else:
                lines.append("variant = 2 if vec and %d > 1 and %s else 1 if vec else 3" % (V, "True" if kind == "outer" else "False"))
            lines.append("self._kv_k0(ops, [%s], [float(s) for s in ds] + [float(variant)], {'G': G, 'SM': 0})" % first)
        elif kind == "scan_inner":
            lines.append("vec = False")
            lines.append("G = K1 * K2")
            lines.append("self._kv_k0(ops, [out], [float(s) for s in ds] + [%s], {'G': G, 'SM': 0})" % ("1.0" if V > 1 else "3.0"))
        elif kind == "split":
            P, T = meta["P"], meta["T"]
            lines.append("vec = %d > 1 and R2 %% %d == 0 and all(t.data_ptr() %% %d == 0 for t in ops + [out])" % (V, V, 4 * V))
            lines.append("variant = 1.0 if vec else 3.0")
            lines.append("G = K1 * %d" % P)
            for pi, nc in enumerate(meta["scratch"]):
                lines.append("s%d = torch.empty([K1 * %d * %d], dtype=torch.float64, device=%s)" % (pi, P, nc, dev))
            for pi in range(len(meta["scratch"]) + 1):
                ins = "ops + [%s]" % ", ".join("s%d" % q for q in range(pi))
                outs = "[s%d]" % pi if pi < len(meta["scratch"]) else "[out]"
                lines.append("self._kv_k%d(%s, %s, [float(s) for s in ds] + [variant], {'G': G, 'SM': 0})" % (pi, ins, outs))
        if post and not gen.st.post_epilogue:
            lines.append("self._kv_k%d([rowbuf], [out], [float(s) for s in ds] + [3.0], {'G': 1, 'SM': 0})" % (len(specs) - 1))
        elif post:
            n = len(specs)
            lines.append("pbuf = torch.empty([1], dtype=torch.float32, device=%s)" % dev)
            lines.append("self._kv_k%d([rowbuf], [pbuf], [float(s) for s in ds] + [3.0], {'G': 1, 'SM': 0})" % (n - 2))
            lines.append("N = %s" % " * ".join("ds[%d]" % d for d in range(nd)))
            lines.append("vec = K1 * R1 * K2 * R2 % 4 == 0 and all(t.data_ptr() % 16 == 0 for t in ops + [out])")
            lines.append("G = max(1, -(-N // (256 * (4 if vec else 1))))")
            lines.append("self._kv_k%d(ops + [pbuf], [out], [float(s) for s in ds] + [1.0 if vec else 3.0], {'G': G, 'SM': 0})" % (n - 1))
    if backend == "cuda" and kind not in ("split",) and not post and len(specs) > 1:  # noqa: SIM102
        raise Unsupported("internal: several kernels without a plan for them")
    final = prog.final_view
    if final is not None:
        lines.append("return out.view(%s)" % _py(list(final)))
    elif prog.out_perm is not None:  # written in the domain's order: the module's dims are a permuted view of it
        inv = [prog.out_perm.index(i) for i in range(len(prog.out_perm))]
        lines.append("return out.permute(%s)" % _py(tuple(inv)))
    else:
        lines.append("return out")
    return lines


def _load_text(path):
    with open(path) as f:
        return f.read()


def raw(name, text):
    if "'''" in text or text.endswith("\\"):
        raise Unsupported("%s cannot be inlined as a raw string" % name)
    return "%s = r'''%s'''\n" % (name, text)


def generate(problem_path, backend, params, overrides=None, analysis=None):
    """{"source": ModelNew file, "params": used} or {"error": why}."""
    try:
        an0 = analysis or Analysis(problem_path, overrides)
        space, defaults = search_space(an0, backend)
        used = dict(defaults)
        for k, v in params.items():
            if k not in space:
                return {"error": "unknown parameter '%s' for %s on %s (known: %s)" % (k, an0.family, backend, ", ".join(sorted(space)))}
            if v not in space[k]:
                return {"error": "parameter %s = %r is outside its space %s" % (k, v, space[k])}
            used[k] = v
        # the lowering options among the parameters: online (0: two-pass forms), bias, cl (see search_space)
        opts = dict(online=bool(int(used.get("online", 1))), lib_bias=bool(used.get("bias", 0)), cl=bool(used.get("cl", 0)))
        an = _variant(an0, **opts)
        if an is None:
            return {"error": "parameters %s do not apply to this problem" % json.dumps(opts, sort_keys=True)}
        if an.layout["kind"] != an0.layout["kind"] or an.cl != bool(defaults.get("cl", 0)):
            # the variant's layout has parameters of its own: those not given take that layout's defaults
            lay = _layout_space(an, backend)[1]
            used = dict(defaults, **{k: v for k, v in lay.items() if k not in params})
            used.update(params)
        gen = Gen(an, backend, used)
        specs, meta = gen.sources()
        if backend == "cpu":
            specs = [KernelSpec("kevolve_kernel", specs, ["ops"], ["out"], "1", "1")]
        src = model_new_source(an, gen, specs, meta, backend, used)
        return {"source": src, "params": used, "family": an.family}
    except Unsupported as e:
        return {"error": str(e)}


def model_new_source(an, gen, specs, meta, backend, used):
    import re
    with open(an.path) as f:
        problem_source = f.read()
    problem_source = re.sub(r"\bModel\b", "_KevolveBase", problem_source)
    glue = _load_text(GLUE)
    header = _load_text(HEADER)
    fwd = forward_code(an, gen, specs, meta, backend, used)
    nargs = len(an.inputs)
    out = ["# KernelBench ModelNew generated by kevolve (family %s, %s, params %s)." % (an.family, backend, json.dumps(used, sort_keys=True)),
           "# Graph: %s." % an.graph.replace("\n", " "),
           "# Self-contained: the kernel glue, the generated kernels and the kernel ABI header are inlined; the problem's",
           "# module is included renamed (_KevolveBase) so that ModelNew keeps its constructor, parameters and state_dict.",
           glue, "", "# ---- the problem's module, renamed ----", problem_source, "", "# ---- the generated kernels ----",
           raw("_KV_HEADER", header)]
    for i, s in enumerate(specs):
        out.append(raw("_KV_SRC%d" % i, s.source))
    out += ["", "class ModelNew(_KevolveBase):", "    def __init__(self, *args, **kwargs):",
            "        super().__init__(*args, **kwargs)"]
    if an.cl:
        out.append("        self._kv_cl_cache = None")
    for i, s in enumerate(specs):
        entry = "kevolve_kernel" if backend == "cpu" else s.name
        out.append("        self._kv_k%d = _kv_build(%r, _KV_SRC%d, _KV_HEADER, %r)" % (i, backend, i, entry))
    if an.cl:
        out += ["", "    def _kv_cl(self, w):",
                "        # the convolution's weights in channels_last, converted once per version of the weights",
                "        key = (w.data_ptr(), w._version, tuple(w.shape))",
                "        cached = self._kv_cl_cache",
                "        if cached is None or cached[0] != key:",
                "            cached = (key, w.detach().contiguous(memory_format=torch.channels_last))",
                "            self._kv_cl_cache = cached",
                "        return cached[1]"]
    out += ["", "    def forward(self, %s):" % ", ".join("x%d" % i for i in range(nargs))]
    out += ["        " + x for x in fwd]
    return "\n".join(out) + "\n"
