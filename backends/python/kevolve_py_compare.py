"""kevolve's Python interpreter, trusted side: verdicts and comparisons of outputs.

_Verdict ends an evaluation with a status, reason and message. compare() checks one output element for element
(atol + rtol*|ref| for floats, NaN never passes, integers exactly) in chunks on its device; positions/sampled/
stale serve the checks on sampled elements (timed calls, stale answers of earlier trials).
"""
import torch


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
    step = CUDA_CHUNK if g.is_cuda else CHUNK
    if not stats and not any(bool(bad_elements(g[s:s + step], e[s:s + step], atol, rtol).any()) for s in range(0, g.numel(), step)):
        return True, 0.0, 0.0, ""
    nbad, first, max_abs, max_rel = 0, None, 0.0, 0.0
    for s in range(0, g.numel(), step):
        gc, ec = g[s:s + step], e[s:s + step]
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
