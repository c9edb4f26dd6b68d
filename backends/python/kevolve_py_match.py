#!/usr/bin/env python3
"""kevolve's family matcher for KernelBench-format problems (trusted side, like kevolve_py_eval.py).

Finds whether a problem's `Model` computes one operator of a family that has a core kernel template
(knowledge/templates/<backend>/<family>: softmax_rows, gelu, rmsnorm_fwd, layernorm_fwd), and how to feed that
template's kernel from the module: which forward argument and which state_dict entries are the kernel's
inputs (in the core problem's input order), and where its scalar parameters (eps) come from.

How: by behaviour, not by name. The module is built under a fixed seed and run on probe inputs: the
problem's own get_inputs() under two seeds, and the same inputs scaled down by 1e-3 so that an eps matters.
Each family's PyTorch formula is tried with every fitting assignment of the forward's tensors, the module's
parameters and buffers, and every eps candidate (the module's float attributes first, then common values);
the first that reproduces the module's outputs on every probe is the match. This works however the module is
written (nn.LayerNorm, F.layer_norm, or the formula spelled out in torch ops) and whether or not torch.fx can
trace it. A line `# kevolve: family = NAME` in the problem file names the family instead; the mapping is then
still looked for by behaviour, else guessed (first tensor argument, 1-D state entries in order, an attribute
named eps, else the core problem's default), and nothing is checked: a wrong marker gives kernels that fail
verification. A match only proposes candidates: every candidate is verified against the reference like any
other, so a wrong match costs evaluations, never correctness.

On a GPU (--device cuda, the suite's choice for the CUDA backend) the probes are made on the device by the
evaluator's own input generator and the module runs there: at KernelBench's sizes (6.4 GB per tensor) making three
probe sets and running the module on the CPU took most of a minute per problem. Should the device lack the
memory, the probing is done again on the CPU.
Prints one JSON object: family ("" for none), how, inputs (per kernel input: "arg:I" or "state:NAME"),
params (per kernel parameter: "attr:PATH", "value:X" or "default"), output_like (the forward argument whose
shape the output has), shape (that argument's shape on the problem's own inputs; [] when unknown), and error
when the problem could not be loaded.
"""
import argparse
import importlib.util
import json
import os
import re
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kevolve_py_inputs import generate_inputs  # noqa: E402

# family -> (kernel inputs after x: "vec" = a 1-D tensor of the last dimension's size; has eps)
FAMILIES = {
    "softmax_rows": ([], False),
    "gelu": ([], False),
    "rmsnorm_fwd": (["vec"], True),
    "layernorm_fwd": (["vec", "vec"], True),
}
COMMON_EPS = [1e-5, 1e-6, 1e-8, 1e-12, float(torch.finfo(torch.float32).eps)]
ATOL, RTOL = 1e-4, 1e-4
MARKER = re.compile(r"^\s*#\s*kevolve:\s*family\s*=\s*([A-Za-z0-9_]+)\s*$", re.M)


def formula(family, x, vecs, eps):
    """The family's reference computation, in float64, over the last dimension."""
    x = x.double()
    if family == "softmax_rows":
        return torch.softmax(x, dim=-1)
    if family == "gelu":
        return F.gelu(x)
    if family == "rmsnorm_fwd":
        return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps) * vecs[0].double()
    if family == "layernorm_fwd":
        return F.layer_norm(x, (x.shape[-1],), vecs[0].double(), vecs[1].double(), eps)
    raise ValueError(family)


def rows(t, h):
    """The first and last 32 rows of t seen as (-1, h): every family works row by row, so a sample of rows
    from both ends keeps the probing cheap on large inputs."""
    r = t.reshape(-1, h)
    return r if r.shape[0] <= 64 else torch.cat([r[:32], r[-32:]])


def close(got, exp):
    if got.shape != exp.shape or not torch.isfinite(got).all():
        return False
    return bool(((got.double() - exp).abs() <= ATOL + RTOL * exp.abs()).all())


def float_attrs(model):
    """(path, value) of every float attribute of the module and its submodules (eps candidates)."""
    out = []
    for prefix, mod in model.named_modules():
        for k, v in sorted(vars(mod).items()):
            if isinstance(v, float) and 0 < v < 1:
                out.append(((prefix + "." if prefix else "") + k, v))
    return out


def load(path, seed):
    spec = importlib.util.spec_from_file_location("kevolve_match_problem", path)
    problem = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(problem)
    for need in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(problem, need):
            raise ValueError("a KernelBench problem defines Model, get_inputs and get_init_inputs; '%s' is missing" % need)
    torch.manual_seed(seed)
    init = problem.get_init_inputs()
    torch.manual_seed(seed)
    model = problem.Model(*init).eval()
    return problem, model


def probes(problem, seed, dev):
    sets = []
    for s in (seed, seed + 1):
        if dev.type == "cpu":
            torch.manual_seed(s * 1000003)
            sets.append(list(problem.get_inputs()))
        else:
            sets.append(list(generate_inputs(problem, dev, s * 1000003)))
    sets.append([x * 1e-3 if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in sets[0]])
    return sets


def search(model, problem, seed, only=None, dev=torch.device("cpu")):
    """(family, inputs, params, output_like, how, shape of x) of the first family that reproduces the module, or None."""
    model = model.to(dev)
    sets = probes(problem, seed, dev)
    with torch.no_grad():
        outs = [model(*s) for s in sets]
    if not all(isinstance(o, torch.Tensor) and o.dtype == torch.float32 for o in outs):
        return None
    first = sets[0]
    xs = [i for i, t in enumerate(first) if isinstance(t, torch.Tensor) and t.dtype == torch.float32 and t.dim() >= 1
          and t.shape == outs[0].shape]
    state = model.state_dict()
    eps_attrs = float_attrs(model)
    for family, (extra, has_eps) in FAMILIES.items():
        if only and family != only:
            continue
        for xi in xs:
            h = first[xi].shape[-1]
            # 1-D tensors of the last dimension's size: forward arguments and state entries
            vec_sources = [("arg:%d" % i, lambda s, i=i: s[i]) for i, t in enumerate(first)
                           if i != xi and isinstance(t, torch.Tensor) and t.dtype == torch.float32 and t.shape == (h,)]
            vec_sources += [("state:" + k, lambda s, v=v: v) for k, v in state.items() if v.dtype == torch.float32 and v.shape == (h,)]
            assignments = [[]]
            for _ in extra:
                assignments = [a + [v] for a in assignments for v in vec_sources if v not in a]
            eps_options = [("attr:" + p, v) for p, v in eps_attrs] + [("value:%r" % v, v) for v in COMMON_EPS] if has_eps else [(None, 0.0)]
            for a in assignments:
                for eps_name, eps in eps_options:
                    if all(close(rows(o, h), formula(family, rows(s[xi], h), [get(s) for _, get in a], eps)) for s, o in zip(sets, outs)):
                        how = "behaves as %s of forward argument %d%s%s on %d probe inputs (atol %g, rtol %g)" % (
                            family, xi, " with " + ", ".join(n for n, _ in a) if a else "", " and eps from " + eps_name if eps_name else "",
                            len(sets), ATOL, RTOL)
                        return family, ["arg:%d" % xi] + [n for n, _ in a], [eps_name] if eps_name else [], xi, how, list(first[xi].shape)
    return None


def out_of_memory(e):
    return isinstance(e, getattr(torch.cuda, "OutOfMemoryError", ())) or "out of memory" in str(e)


def match(path, seed=1, device="cpu"):
    res = {"family": "", "how": "", "inputs": [], "params": [], "output_like": 0, "shape": []}
    try:
        with open(path) as f:
            source = f.read()
        problem, model = load(path, seed)
    except Exception as e:  # the problem's own failure: reported, nothing proposed
        res["error"] = "%s: cannot load the problem: %s: %s" % (path, type(e).__name__, e)
        return res
    marked = MARKER.search(source)
    if marked and marked.group(1) not in FAMILIES:
        res["error"] = "%s: '# kevolve: family = %s': unknown family (expected one of %s)" % (path, marked.group(1), ", ".join(FAMILIES))
        return res
    dev = torch.device("cuda") if device == "cuda" and torch.cuda.is_available() else torch.device("cpu")
    try:
        try:
            found = search(model, problem, seed, marked.group(1) if marked else None, dev)
        except Exception as e:
            if dev.type == "cpu" or not out_of_memory(e):
                raise
            torch.cuda.empty_cache()  # the device is short of memory: the same probing on the CPU
            problem, model = load(path, seed)
            found = search(model, problem, seed, marked.group(1) if marked else None)
    except Exception as e:  # a module the probes cannot run (e.g. an input it cannot take scaled): no family
        found = None
        res["how"] = "probing failed: %s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
    if found:
        res["family"], res["inputs"], res["params"], res["output_like"], res["how"], res["shape"] = found
        if marked:
            res["how"] = "marker '# kevolve: family = %s'; it %s" % (marked.group(1), res["how"])
        return res
    if marked:  # the user's word, unchecked: the mapping is a guess and verification decides
        family = marked.group(1)
        extra, has_eps = FAMILIES[family]
        vecs = [k for k, v in model.state_dict().items() if v.dim() == 1]
        res["family"] = family
        res["inputs"] = ["arg:0"] + ["state:" + k for k in vecs[:len(extra)]]
        eps = [p for p, _ in float_attrs(model) if p.split(".")[-1] == "eps"]
        res["params"] = (["attr:" + eps[0]] if eps else ["default"]) if has_eps else []
        res["how"] = "marker '# kevolve: family = %s' (the module does not behave as it on the probes; the mapping is a guess)" % family
        return res
    if not res["how"]:
        res["how"] = "no family reproduces the module's outputs (tried %s)" % ", ".join(FAMILIES)
    return res


def main():
    ap = argparse.ArgumentParser(description="Find the kernel-template family a KernelBench-format problem computes.")
    ap.add_argument("--problem", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                    help="where the probes are made and the module runs (cuda: the CPU when no GPU is usable)")
    a = ap.parse_args()
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    print(json.dumps(match(a.problem, a.seed, a.device)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
