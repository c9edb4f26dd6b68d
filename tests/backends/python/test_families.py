#!/usr/bin/env python3
"""Tests of the kernel families (backends/python/kevolve_py_families.py and kevolve_py_families_gen.py).

Run: /usr/bin/python3 tests/backends/python/test_families.py     (exit status 0 when every check passed)

No GPU needed. What it checks:
  1. every problem of problems/kernelbench-format/ is traced at its shipped sizes (tensors of up to 8.6 GB
     each) without allocating them: the family each one must get, and the process's peak memory stays small;
  2. for each family (pointwise, reduction, normalization, softmax, scan, loss, and library op + fused
     epilogue), problems of that folder shrunk to small sizes (their module constants overridden) get a CPU
     candidate, built and run, whose outputs equal the module's within the evaluator's default tolerance
     (|got - ref| <= 1e-4 + 1e-4 |ref|; integer outputs exactly), at the default parameters and at another
     point of the search space; reductions and norms over non-last dims among them;
  3. "no family" comes with a reason a user can read;
  4. generated files pass the evaluator's static check and are labelled kernels; CUDA candidates resolve
     their launch lines, and compile with NVRTC where the CUDA toolkit is installed;
  5. the command line prints the documented JSON.
"""
import glob
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PY = os.path.join(ROOT, "backends", "python")
PROBLEMS = os.path.join(ROOT, "problems", "kernelbench-format")
sys.path.insert(0, PY)

import torch  # noqa: E402

import kevolve_py_families as fam  # noqa: E402
import kevolve_py_families_gen as gen  # noqa: E402

torch.set_num_threads(2)
ATOL = RTOL = 1e-4
FAILURES = []
CHECKS = [0]


def check(cond, what):
    CHECKS[0] += 1
    if cond:
        print("ok    %s" % what, flush=True)
    else:
        print("FAIL  %s" % what, flush=True)
        FAILURES.append(what)


def problem_path(prefix):
    found = glob.glob(os.path.join(PROBLEMS, prefix + "_*.py"))
    assert len(found) == 1, prefix
    return found[0]


# ---- 1. the families of the shipped problems, at their own sizes ------------------------------------------

EXPECTED = {
    **{str(i): "pointwise" for i in range(1, 16)},
    "16": "softmax", "17": "softmax", "18": "softmax",
    **{str(i): "normalization" for i in range(19, 23)}, "23": "pointwise",
    **{str(i): "normalization" for i in range(24, 28)},
    **{str(i): "reduction" for i in range(28, 40)},
    **{str(i): "scan" for i in range(40, 46)},
    "46": "reduction", "47": "loss", "48": "reduction", "49": "loss", "50": "loss", "51": "loss", "52": "loss",
    "53": "", "54": "", "55": "", "56": "", "57": "",
    "58": "linear+pointwise", "59": "matmul+pointwise", "60": "conv2d+pointwise", "61": "conv2d+normalization",
    "62": "linear+softmax", "63": "linear+normalization", "64": "conv2d+pointwise", "65": "linear+reduction",
    "66": "conv2d+reduction", "67": "matmul+reduction", "68": "bmm+reduction", "69": "conv2d+normalization",
    "70": "linear+normalization", "71": "conv_transpose2d+softmax",
}
LAYOUTS = {"19": "outer", "18": "outer", "20": "inner", "28": "outer", "38": "inner", "45": "scan_outer", "40": "scan_inner"}


def test_shipped_sizes():
    files = sorted(glob.glob(os.path.join(PROBLEMS, "*.py")), key=lambda p: int(os.path.basename(p).split("_")[0]))
    check(len(files) >= 50, "problems/kernelbench-format holds %d problems (at least 50)" % len(files))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time.time()
    biggest = 0
    for path in files:
        n = os.path.basename(path).split("_")[0]
        r = fam.analyse(path)
        want = EXPECTED.get(n)
        check(want is not None and r["family"] == want,
              "%s at its shipped sizes: family %r (expected %r)%s" % (os.path.basename(path), r["family"], want,
                                                                       "" if r["family"] else "; reason: " + r["reason"]))
        if r["family"]:
            check(r["space"] and set(r["defaults"]) <= set(r["space"]) and all(r["defaults"][k] in r["space"][k] for k in r["defaults"]),
                  "%s: the defaults lie in the search space" % os.path.basename(path))
        if n in LAYOUTS:
            check(r.get("layout") == LAYOUTS[n], "%s: layout %s (expected %s)" % (os.path.basename(path), r.get("layout"), LAYOUTS[n]))
        model, inputs = fam.meta_instance(fam.load_problem(path))
        biggest = max([biggest] + [t.numel() * t.element_size() for t in inputs])
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024.0
    check(biggest > 6e9, "the largest input traced is %.1f GB" % (biggest / 1e9))
    check(grown < 400, "tracing every shipped problem grew the peak memory by %.0f MB (no tensor allocated)" % grown)
    print("      (%d problems traced in %.1f s)" % (len(files), time.time() - t))


# ---- 2. CPU candidates of small versions, against the module --------------------------------------------

# per problem: the module constants made small, and a second point of the CPU search space
SMALL = [
    ("14", {"batch_size": 7, "dim": 1001}, {"grain": 16}),                                  # pointwise chain
    ("23", {"batch_size": 3, "features": 5, "dim1": 7, "dim2": 9}, {"grain": 16}),          # batch norm, per channel
    ("16", {"batch_size": 5, "dim": 300}, {"online": 0}),                                   # softmax, last dim
    ("18", {"batch_size": 3, "channels": 11, "length": 37}, {"online": 0, "schedule": "split"}),  # softmax over dim 1
    ("19", {"batch_size": 3, "features": 13, "dim1": 5, "dim2": 6}, {"schedule": "split"}),  # RMS over dim 1
    ("20", {"batch_size": 2, "features": 3, "dim1": 7, "dim2": 5}, {"schedule": "split", "online": 0}),  # LN, last 3
    ("22", {"batch_size": 2, "features": 8, "num_groups": 4, "dim1": 5, "dim2": 3}, {"online": 0}),  # group norm
    ("26", {"batch_size": 2, "features": 3, "dim1": 4, "dim2": 5}, {"schedule": "split"}),  # Frobenius
    ("28", {"batch_size": 3, "dim1": 17, "dim2": 10}, {"schedule": "split"}),               # sum over dim 1, keepdim
    ("32", {"batch_size": 3, "dim1": 17, "dim2": 10}, {"grain": 16}),                        # argmax over dim 1
    ("38", {"batch_size": 4, "dim1": 6, "dim2": 9}, {"schedule": "split"}),                  # sum over dims 0 and 2
    ("34", {"batch_size": 3, "dim1": 4, "dim2": 33}, {"online": 0}),                         # std, last dim
    ("41", {"batch_size": 4, "dim": 50}, {"grain": 16}),                                     # reverse cumsum
    ("43", {"batch_size": 4, "dim": 50}, {"grain": 16}),                                     # masked cumsum
    ("45", {"rows": 9, "cols": 13}, {"grain": 16}),                                          # cumsum over dim 0
    ("46", {"batch_size": 6, "dim": 40}, {"schedule": "split"}),                             # MSE
    ("50", {"batch_size": 6, "num_classes": 11}, {"online": 0}),                             # cross entropy
    ("52", {"batch_size": 5, "dim": 16}, {"schedule": "split"}),                             # triplet margin
    ("51", {"batch_size": 5, "dim": 16}, {"grain": 16}),                                     # cosine similarity loss
    ("61", {"batch_size": 2, "in_channels": 3, "out_channels": 8, "height": 6, "width": 5, "groups": 4}, {"online": 0}),
    ("58", {"batch_size": 5, "in_features": 12, "out_features": 9}, {"grain": 16}),
    ("66", {"batch_size": 2, "in_channels": 3, "out_channels": 4, "height": 6, "width": 5}, {"schedule": "split"}),
]

# the algorithm choices of the search space, each at points other than the defaults: bias (the convolution's
# bias added by the fused kernel, or not), cl (the convolution in channels_last, the kernel over (N, H, W, C)),
# online = 2 (mean and variance from double sums); the CPU kernels are the same programs as the CUDA ones
CONV_SMALL = {"batch_size": 2, "in_channels": 3, "out_channels": 8, "height": 6, "width": 5}
NEW_POINTS = [
    ("60", CONV_SMALL, [{"bias": 0, "cl": 0}, {"bias": 1, "cl": 0}, {"bias": 1, "cl": 1}, {"bias": 0, "cl": 1}]),
    ("64", CONV_SMALL, [{"bias": 0, "cl": 0}, {"bias": 1, "cl": 1}]),
    ("71", CONV_SMALL, [{"cl": 0}, {"cl": 1}, {"cl": 1, "bias": 0, "online": 0}, {"cl": 1, "online": 2}]),
    ("69", dict(CONV_SMALL, out_channels=4), [{"bias": 0}, {"bias": 1, "online": 2}, {"online": 2, "schedule": "split"}]),
    ("61", dict(CONV_SMALL, groups=4), [{"bias": 0, "online": 2}, {"online": 2, "schedule": "split"}]),
    ("66", dict(CONV_SMALL, out_channels=4), [{"bias": 0}]),
    ("34", {"batch_size": 3, "dim1": 4, "dim2": 33}, [{"online": 2}, {"online": 2, "schedule": "split"}, {"online": 1}]),
    ("22", {"batch_size": 2, "features": 8, "num_groups": 4, "dim1": 5, "dim2": 3}, [{"online": 2}, {"online": 2, "schedule": "split"}]),
    ("20", {"batch_size": 2, "features": 3, "dim1": 7, "dim2": 5}, [{"online": 2, "schedule": "split"}]),
    ("50", {"batch_size": 6, "num_classes": 11}, [{"online": 2}]),
]


def test_new_points():
    for n, small, pts in NEW_POINTS:
        path = problem_path(n)
        name = os.path.basename(path)
        an = fam.Analysis(path, small)
        for be in ("cpu", "cuda"):
            space, defaults = fam.search_space(an, be)
            check(all(defaults[k] in space[k] for k in defaults), "%s %s: the defaults lie in the space" % (name, be))
        cspace, _ = fam.search_space(an, "cpu")
        for params in pts:
            check(all(k in cspace and v in cspace[k] for k, v in params.items()), "%s: %s is a point of the CPU space" % (name, params))
            r = gen.generate(path, "cpu", params, overrides=small)
            if "error" in r:
                check(False, "%s %s: generated (%s)" % (name, params, r["error"]))
                continue
            src = r["source"]
            if params.get("bias") == 1 or ("bias" in cspace and "bias" not in params):
                check(re.search(r"conv[a-z_0-9]*\(x0, [^,]+, None,", src) is not None,
                      "%s %s: the convolution runs without its bias" % (name, params))
            if params.get("cl"):
                check("memory_format=torch.channels_last" in src and ".permute(" in src,
                      "%s %s: channels_last weights, the data read in (N, H, W, C) order" % (name, params))
            problem = fam.load_problem(path, small)
            for k, (ref, got) in enumerate(run_candidate(src, problem, small)):
                ok, how = agree(ref, got)
                check(ok, "%s %s, input set %d: equal to the module within 1e-4 (%s)" % (name, r["params"], k, how))
                if params.get("cl") and got.dim() == 4:
                    check(got.is_contiguous(memory_format=torch.channels_last),
                          "%s %s: the output is written in channels_last memory" % (name, params))
    # a convolution without a bias has no `bias` parameter; `cl` is not offered where the fused ops reduce over
    # the spatial dims (they would be strided in channels_last)
    r = fam.analyse(problem_path("66"))
    check("bias" in r["space"] and "cl" not in r["space"], "66: bias offered, cl not (%s)" % sorted(r["space"]))
    r = fam.analyse(problem_path("60"))
    check(r["space"].get("cl") == [1, 0] and r["defaults"].get("cl") == 1 and r["space"].get("plane") == [0, 1],
          "60: cl and plane offered (%s)" % {k: r["space"].get(k) for k in ("cl", "plane", "bias")})
    r = fam.analyse(problem_path("23"))
    check(r["space"].get("plane") == [0, 1], "23: plane offered")
    r = fam.analyse(problem_path("1"))
    check("plane" not in r["space"], "1: no plane without a broadcast operand")


def run_candidate(source, problem, overrides):
    mod = types.ModuleType("kevolve_candidate")
    exec(compile(source, "ModelNew", "exec"), mod.__dict__)
    torch.manual_seed(0)
    init = problem.get_init_inputs()
    torch.manual_seed(0)
    model = problem.Model(*init).eval()
    cand = mod.ModelNew(*init).eval()
    cand.load_state_dict(model.state_dict())
    outs = []
    for seed in (3, 4):
        torch.manual_seed(seed)
        xs = problem.get_inputs()
        with torch.no_grad():
            outs.append((model(*xs), cand(*xs)))
    return outs


def agree(ref, got):
    if ref.shape != got.shape or ref.dtype != got.dtype:
        return False, "shape/dtype %s %s vs %s %s" % (tuple(got.shape), got.dtype, tuple(ref.shape), ref.dtype)
    if not ref.dtype.is_floating_point:
        return bool((ref == got).all()), "integers"
    d = (got.double() - ref.double()).abs()
    return bool((d <= ATOL + RTOL * ref.double().abs()).all()), "max abs error %.3g" % float(d.max())


def static_checker():
    for name in ("kevolve_py_static", "kevolve_py_eval"):
        try:
            m = __import__(name)
        except ImportError:
            continue
        if hasattr(m, "static_check") and hasattr(m, "label_of"):
            return m
    return None


def test_cpu_candidates():
    checker = static_checker()
    check(checker is not None, "the evaluator's static check is importable")
    families_seen = set()
    for n, small, other in SMALL:
        path = problem_path(n)
        name = os.path.basename(path)
        an = fam.Analysis(path, small)
        families_seen.add(an.family.split("+")[-1] + ("+lib" if "+" in an.family else ""))
        check(an.family == EXPECTED[n], "%s (small): family %s" % (name, an.family))
        space, defaults = fam.search_space(an, "cpu")
        for params in (dict(defaults), dict(defaults, **other)):
            check(all(k in space and v in space[k] for k, v in params.items()), "%s: %s is a point of the CPU space" % (name, params))
            r = gen.generate(path, "cpu", params, overrides=small)
            if "error" in r:
                check(False, "%s %s: generated (%s)" % (name, params, r["error"]))
                continue
            if checker is not None and params == defaults:
                verdict = checker.static_check(r["source"], "problem")
                check(verdict is None, "%s: the candidate passes the static check%s" % (name, "" if verdict is None else " (%s)" % (verdict,)))
                check(checker.label_of(r["source"]) == "kernel", "%s: the candidate is labelled a kernel" % name)
            problem = fam.load_problem(path, small)
            for k, (ref, got) in enumerate(run_candidate(r["source"], problem, small)):
                ok, how = agree(ref, got)
                check(ok, "%s %s, input set %d: equal to the module within 1e-4 (%s)" % (name, r["params"], k, how))
    for f in ("pointwise", "reduction", "normalization", "softmax", "scan", "loss", "pointwise+lib", "normalization+lib", "reduction+lib"):
        check(f in families_seen, "family %s has a CPU correctness case" % f)


# ---- 3. no family, with its reason ---------------------------------------------------------------------

NO_FAMILY = {
    "two_reductions.py": ("""import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.sum(dim=1) + x.amax(dim=0).sum()


def get_inputs():
    return [torch.randn(6, 5)]


def get_init_inputs():
    return []
""", "reduces over the data dims"),
    "topk.py": ("""import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.topk(torch.relu(x), 3, dim=1)[0]


def get_inputs():
    return [torch.randn(6, 5)]


def get_init_inputs():
    return []
""", "op topk at node 1 is not in any family"),
    "matmul_after.py": ("""import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return torch.relu(a) @ b


def get_inputs():
    return [torch.randn(6, 5), torch.randn(5, 4)]


def get_init_inputs():
    return []
""", "library op matmul at node 1 follows fused ops"),
}


def test_no_family():
    r = fam.analyse(problem_path("57"))
    check(r["family"] == "" and r["reason"] == "op sort at node 0 is not in any family",
          "57_Sort_rows: no family, reason %r" % r["reason"])
    r = fam.analyse(problem_path("55"))
    check(r["family"] == "" and "nothing to fuse" in r["reason"], "55_Matmul_square: no family, reason %r" % r["reason"])
    with tempfile.TemporaryDirectory() as d:
        for name, (src, why) in NO_FAMILY.items():
            p = os.path.join(d, name)
            with open(p, "w") as f:
                f.write(src)
            r = fam.analyse(p)
            check(r["family"] == "" and why in r["reason"], "%s: no family, reason %r" % (name, r["reason"]))
            g = gen.generate(p, "cpu", {})
            check("error" in g and why in g["error"], "%s: generating says why not (%r)" % (name, g.get("error")))
    g = gen.generate(problem_path("16"), "cuda", {"threads": 7})
    check("error" in g and "outside its space" in g["error"], "a parameter value outside the space is refused: %r" % g.get("error"))
    g = gen.generate(problem_path("16"), "cuda", {"colour": 1})
    check("error" in g and "unknown parameter" in g["error"], "an unknown parameter is refused: %r" % g.get("error"))


# ---- 4. CUDA candidates without a GPU ---------------------------------------------------------------------

def test_cuda_sources():
    import kevolve_kernel_glue as glue
    header = open(os.path.join(ROOT, "backends", "kevolve_kernel.h")).read()
    try:
        glue._kv_nvrtc()
        nvrtc = True
    except Exception:
        nvrtc = False
    cases = [("1", {}), ("16", {"team": 32, "cache": "regs"}), ("19", {"cache": "regs", "items": 64, "vec": 1}),
             ("20", {}), ("27", {"cache": "smem"}), ("28", {"ty": 2}), ("40", {}), ("45", {}), ("50", {}), ("26", {}),
             ("61", {}), ("68", {"team": 8}),
             # the algorithm choices: planes, channels_last, bias in the kernel, online = 2 (sums, two passes over
             # registers), a warp per row
             ("23", {"plane": 1}), ("23", {"plane": 0, "vec": 2}), ("60", {"cl": 1}), ("60", {"cl": 0, "plane": 1}),
             ("64", {"cl": 1, "unroll": 2}), ("64", {"cl": 0, "bias": 0}), ("71", {"cl": 1}), ("71", {"cl": 1, "online": 2}),
             ("71", {"cl": 0}), ("34", {"online": 2, "cache": "regs"}), ("34", {"online": 2, "cache": "none"}),
             ("22", {"online": 2, "split": 4}), ("20", {"online": 2}), ("50", {"online": 2, "team": 0, "cache": "regs"}),
             ("69", {"online": 2}), ("19", {"ty": 4, "cache": "regs"}), ("42", {})]
    checker = static_checker()
    for n, params in cases:
        path = problem_path(n)
        r = gen.generate(path, "cuda", params)
        if "error" in r:
            check(False, "%s cuda %s: generated (%s)" % (os.path.basename(path), params, r["error"]))
            continue
        srcs = re.findall(r"_KV_SRC\d+ = r'''(.*?)'''", r["source"], re.S)
        check(len(srcs) >= 1, "%s cuda: %d kernel source(s)" % (os.path.basename(path), len(srcs)))
        if checker is not None:
            check(checker.static_check(r["source"], "problem") is None, "%s cuda: passes the static check" % os.path.basename(path))
        for s in srcs:
            spec = glue._kv_launch_spec(s)
            grid, block, smem = glue._kv_launch_dims(spec, {"G": 100, "GY": 4, "SM": 0, "SMS": 132})
            check(block[0] * block[1] * block[2] <= 1024, "%s cuda %s: launch %s x %s" % (os.path.basename(path), spec["kernel"], grid, block))
            if nvrtc:
                try:
                    glue._kv_nvrtc_compile(s, header, "sm_90")
                    check(True, "%s cuda %s: NVRTC compiles it for sm_90" % (os.path.basename(path), spec["kernel"]))
                except Exception as e:
                    check(False, "%s cuda %s: NVRTC: %s" % (os.path.basename(path), spec["kernel"], str(e)[:2000]))
    if not nvrtc:
        print("skip  NVRTC compilation (no NVRTC on this machine)")


# ---- 5. the command line -------------------------------------------------------------------------------

def test_cli():
    tool = os.path.join(PY, "kevolve_py_families_cli.py")
    out = subprocess.run([sys.executable, tool, "--problem", problem_path("19")], capture_output=True, text=True, timeout=120)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    check(set(["family", "reason", "graph", "space", "defaults"]) <= set(r) and r["family"] == "normalization",
          "CLI --problem: %s" % {k: r.get(k) for k in ("family", "graph")})
    out = subprocess.run([sys.executable, tool, "--problem", problem_path("19"), "--backend", "cuda", "--params", json.dumps({"ty": 2})],
                         capture_output=True, text=True, timeout=120)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    check("source" in r and "class ModelNew(_KevolveBase)" in r["source"] and r["params"]["ty"] == 2,
          "CLI --backend cuda --params: a ModelNew file with the parameters used")
    out = subprocess.run([sys.executable, tool, "--problem", problem_path("57"), "--backend", "cpu", "--params", "{}"],
                         capture_output=True, text=True, timeout=120)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    check(r.get("error") == "op sort at node 0 is not in any family", "CLI on a problem outside the families: %r" % r)


def main():
    t = time.time()
    for test in (test_shipped_sizes, test_no_family, test_cpu_candidates, test_new_points, test_cuda_sources, test_cli):
        print("== %s" % test.__name__, flush=True)
        try:
            test()
        except Exception as e:  # a crash in one test is a failure of that test; the others still run
            import traceback
            traceback.print_exc()
            check(False, "%s raised %s: %s" % (test.__name__, type(e).__name__, e))
    print("%d checks, %d failed, %.1f s" % (CHECKS[0], len(FAILURES), time.time() - t))
    for f in FAILURES:
        print("FAILED: %s" % f)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
