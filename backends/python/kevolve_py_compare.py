"""kevolve's Python interpreter, trusted side: verdicts and comparisons of outputs.

_Verdict ends an evaluation with a status, reason and message. compare() checks one output element for element
(atol + rtol*|ref| for floats, NaN never passes, integers exactly) in chunks on its device; positions/sampled/
stale serve the checks on sampled elements (timed calls, stale answers of earlier trials).

Two tolerance rules (the verdict's "tolerance"):
- "fixed": |got - eager| <= atol + rtol*|eager|, against the reference's own outputs.
- "eager-relative (float64 reference)", for float32 outputs when the trusted side also has the model's answer in
  float64 (the model and its inputs converted with .double(), kevolve_py_inputs.WideReference): an element
  passes when the fixed rule passes, or when |got - ref64| <= atol + rtol*|ref64| + EAGER_FACTOR*|eager - ref64|:
  the candidate may be up to twice as far from the exact answer as PyTorch's own float32 result, plus the base
  tolerance. Long float32 sums and scans are off by more than atol in eager itself; a kernel that accumulates in
  another order, or in float64, is then still correct, while a bf16/fp16 downgrade, whose error is orders of
  magnitude beyond eager's, is not. Where eager or the float64 reference is not finite, the fixed rule alone
  decides. An Expected holds one output's expected values under either rule.
"""
import math

import torch


EAGER_FACTOR = 2.0   # the candidate may be this many times as far from the float64 reference as eager float32 is
FIXED = "fixed"
EAGER_RELATIVE = "eager-relative (float64 reference)"
SAMPLES = 1024       # sampled elements per output of every timed call
STALE_SAMPLES = 4096  # sampled elements per output kept of each trial's expected outputs


class _Verdict(Exception):
    """Ends an evaluation with this status, reason and message."""

    def __init__(self, status, reason, message, where=""):
        super().__init__(message)
        self.status, self.reason, self.message, self.where = status, reason, message, where


def _same(a, b):
    """Equal element for element, NaN equal to NaN."""
    if torch.equal(a, b) or not (a.is_floating_point() or a.is_complex()):
        return torch.equal(a, b)
    return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())


CHUNK = 1 << 22       # elements compared at a time on the CPU
CUDA_CHUNK = 1 << 26  # on a GPU (fewer synchronisations on multi-GB outputs; about 24 bytes of temporaries each)


def bad_elements(g, e, atol, rtol):
    """Mask of the elements of g outside the tolerance of e (same shape): |g - e| > atol + rtol*|e| where e is
    finite, NaN/Inf in g where e is finite; integers and booleans must be equal."""
    if not (e.is_floating_point() or e.is_complex()):
        return g != e
    if e.dtype in (torch.float16, torch.bfloat16):
        g, e = g.float(), e.float()
    return ~((g - e).abs() <= e.abs() * rtol + atol) & torch.isfinite(e)


class Expected:
    """One output's expected values, flat: `eager` (the reference's own output); under the eager-relative rule also
    `center` (the float64 reference's output, float64) and `slack` (EAGER_FACTOR*|eager - ref64|, float64), both
    made by widen(). Where eager or the float64 reference is not finite, center is eager's value and slack 0 (the
    fixed rule alone decides there)."""

    __slots__ = ("eager", "center", "slack", "shape")

    def __init__(self, eager, center=None, slack=None, shape=None):
        self.shape = tuple(eager.shape) if shape is None else shape
        self.eager, self.center, self.slack = eager.reshape(-1), center, slack

    @property
    def dtype(self):
        return self.eager.dtype

    def part(self, s, e):
        """Elements [s, e) (flat)."""
        w = self.center is not None
        return Expected(self.eager[s:e], self.center[s:e] if w else None, self.slack[s:e] if w else None, (e - s,))

    def at(self, where):
        """The elements at flat positions `where` (new tensors)."""
        w = self.center is not None
        return Expected(self.eager.index_select(0, where), self.center.index_select(0, where) if w else None,
                        self.slack.index_select(0, where) if w else None, (where.numel(),))

    def eager_error(self):
        """max |eager - ref64| (0 under the fixed rule)."""
        if self.center is None or self.slack.numel() == 0:
            return 0.0
        return float(self.slack.max()) / EAGER_FACTOR


def widen(eager, wide):
    """The Expected of one output under the eager-relative rule, from eager's output and the float64 reference's
    (a tensor of the same shape; anything else raises ValueError). Outputs that are not float32 keep the fixed
    rule (integers are exact; a float64 output is its own float64 reference)."""
    if eager.dtype != torch.float32:
        return Expected(eager)
    if not isinstance(wide, torch.Tensor) or tuple(wide.shape) != tuple(eager.shape) or not wide.is_floating_point():
        raise ValueError("the float64 model's output is %s, eager's a float32 tensor of shape %s" % (
            "a tensor of shape %s, %s" % (tuple(wide.shape), wide.dtype) if isinstance(wide, torch.Tensor) else
            "a %s" % type(wide).__name__, tuple(eager.shape)))
    e = eager.reshape(-1)
    center = wide.reshape(-1).to(device=e.device, dtype=torch.float64)  # no copy when it is one already: never written
    slack = torch.empty(e.numel(), dtype=torch.float64, device=e.device)
    step = CUDA_CHUNK if e.is_cuda else CHUNK
    for s in range(0, e.numel(), step):
        ec, rc, sc = e[s:s + step], center[s:s + step], slack[s:s + step]
        torch.sub(ec, rc, out=sc).abs_().mul_(EAGER_FACTOR)
        if sc.numel() and not math.isfinite(float(sc.max())):  # NaN or Inf in either: the fixed rule alone decides there
            fin = torch.isfinite(sc)
            if center.data_ptr() == wide.data_ptr():
                center = center.clone()
                rc = center[s:s + step]
            rc[~fin] = ec[~fin].double()
            sc.masked_fill_(~fin, 0.0)
    return Expected(eager, center, slack)


def bad_expected(g, x, atol, rtol):
    """Mask of the elements of g (flat) outside the tolerance of Expected `x`: those the fixed rule refuses and,
    under the eager-relative rule, the float64 rule refuses too; `x` may also be a plain tensor (the fixed rule)."""
    if not isinstance(x, Expected):
        return bad_elements(g, x, atol, rtol)
    bad = bad_elements(g.reshape(-1), x.eager, atol, rtol)
    if x.center is None or not bool(bad.any()):
        return bad
    return bad & ~((g.reshape(-1).double() - x.center).abs() <= x.center.abs() * rtol + atol + x.slack)


def compare(got, exp, atol, rtol, stats=True):
    """(ok, max_abs, max_rel, text) for one output, compared in chunks on its device; `exp` is an Expected (or the
    reference's output, the fixed rule). The error maxima are against the float64 reference under the
    eager-relative rule, else against eager; without `stats` they are not computed (0) unless the output is wrong."""
    if not isinstance(exp, Expected):
        exp = Expected(exp)
    if not isinstance(got, torch.Tensor):
        return False, 0.0, 0.0, "the output is a %s, not a tensor" % type(got).__name__
    if tuple(got.shape) != exp.shape:
        return False, 0.0, 0.0, "shape %s, expected %s" % (tuple(got.shape), exp.shape)
    if got.dtype != exp.dtype:
        return False, 0.0, 0.0, "dtype %s, expected %s" % (got.dtype, exp.dtype)
    g = got.reshape(-1)
    if exp.eager.device != g.device:
        exp = Expected(exp.eager.to(g.device), None if exp.center is None else exp.center.to(g.device),
                       None if exp.slack is None else exp.slack.to(g.device), exp.shape)
    wide = exp.center is not None
    step = CUDA_CHUNK if g.is_cuda else CHUNK
    if not stats and not any(bool(bad_expected(g[s:s + step], exp.part(s, s + step), atol, rtol).any())
                             for s in range(0, g.numel(), step)):
        return True, 0.0, 0.0, ""
    nbad, first, max_abs, max_rel = 0, None, 0.0, 0.0
    for s in range(0, g.numel(), step):
        gc, xc = g[s:s + step], exp.part(s, s + step)
        bad = bad_expected(gc, xc, atol, rtol)
        count = int(bad.sum())
        if count and first is None:
            first = s + int(bad.nonzero()[0])
        nbad += count
        ec = xc.center if wide else xc.eager
        if wide or not (ec.is_floating_point() or ec.is_complex()):
            gc, ec = gc.double(), ec.double()
        elif ec.dtype in (torch.float16, torch.bfloat16):
            gc, ec = gc.float(), ec.float()
        err = (gc - ec).abs()
        if err.numel() and not math.isfinite(float(err.max())):
            fin = torch.isfinite(err)
            err, ec = err[fin], ec[fin]
        if err.numel():
            max_abs = max(max_abs, float(err.max()))
            max_rel = max(max_rel, float((err / ec.abs().clamp_min(1e-30)).max()))
    if nbad:
        if wide:
            return False, max_abs, max_rel, (
                "%d of %d elements outside both atol %g + rtol %g*|ref| and atol + rtol*|ref64| + %g*|eager - ref64| "
                "(first at flat index %d: %s vs %s, float64 reference %s)" % (
                    nbad, g.numel(), atol, rtol, EAGER_FACTOR, first, _num(g[first]), _num(exp.eager[first]),
                    _num(exp.center[first])))
        return False, max_abs, max_rel, "%d of %d elements outside atol %g + rtol %g*|ref| (first at flat index %d: %s vs %s)" % (
            nbad, g.numel(), atol, rtol, first, _num(g[first]), _num(exp.eager[first]))
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


def expected_at(exps, where):
    """Each output's Expected (or tensor) at its flat positions `where`."""
    return [x.at(p) if isinstance(x, Expected) else x.reshape(-1).index_select(0, p) for x, p in zip(exps, where)]


def samples_match(got, exp, atol, rtol):
    """Whether every sampled element of every output is within the tolerance (`exp`: Expected or tensors)."""
    return all(not bool(bad_expected(g, e, atol, rtol).any()) for g, e in zip(got, exp))


def stale(got, exp, earlier, at, atol, rtol):
    """Whether outputs `got` (wrong for their inputs, whose answer is `exp`: Expected or tensors) are the answer to
    earlier inputs: within the tolerance, at the positions `at`, of one of the `earlier` answers sampled there
    (expected_at) that differs from `exp`."""
    g = sampled(got, at)
    e = [x.eager if isinstance(x, Expected) else x for x in expected_at(exp, at)]
    return any(samples_match(g, prev, atol, rtol) and not samples_match(e, prev, atol, rtol) for prev in earlier)
