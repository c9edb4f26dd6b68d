#!/usr/bin/env python3
"""The command line of kevolve's kernel families (the C++ side runs it: backends/python/python_backend.cpp).

  kevolve_py_families_cli.py --problem FILE                                   the analysis (kevolve_py_families.py)
  kevolve_py_families_cli.py --problem FILE --backend cuda|cpu --params JSON  a ModelNew (kevolve_py_families_gen.py)

One JSON object on stdout (kevolve_py_families.py's docstring gives both shapes), exit status 0 unless the
arguments are wrong. The command line is the one module that uses both the analysis and the generator, so
that the generator imports the analysis and nothing imports back.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

from kevolve_py_families import analyse  # noqa: E402
from kevolve_py_families_gen import generate  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description="Kernel families of a KernelBench-format problem: match, or generate a ModelNew.")
    ap.add_argument("--problem", required=True)
    ap.add_argument("--backend", choices=["cuda", "cpu"])
    ap.add_argument("--params", help="JSON dict of search parameters")
    a = ap.parse_args()
    torch.set_num_threads(1)
    if a.backend is None:
        print(json.dumps(analyse(a.problem)))
        return 0
    try:
        params = json.loads(a.params) if a.params else {}
        if not isinstance(params, dict):
            raise ValueError("--params must be a JSON object")
        print(json.dumps(generate(a.problem, a.backend, params)))
    except Exception as e:
        print(json.dumps({"error": "%s: %s" % (type(e).__name__, e)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
