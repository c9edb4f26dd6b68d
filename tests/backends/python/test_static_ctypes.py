#!/usr/bin/env python3
"""The static check (backends/python/kevolve_py_static.py) refuses the Python C API reached through ctypes.

Run: /usr/bin/python3 tests/backends/python/test_static_ctypes.py     (exit status 0 when every check passed)

ctypes.pythonapi.PyRun_SimpleString(b"...") and its spellings (from-imports, getattr with built names, the
process's own symbols through CDLL(None) or PyDLL, libpython loaded by name, symbols looked up by a string)
run code the check cannot see: each is refused as `dynamic`. Loading a CUDA library by name is not.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "backends", "python"))

import kevolve_py_static as S  # noqa: E402

REFUSED = {
    "pythonapi attribute": "import ctypes\nctypes.pythonapi.PyRun_SimpleString(b'print(1)')\n",
    "pythonapi from-import": "from ctypes import pythonapi\npythonapi.PyRun_SimpleString(b'x')\n",
    "pythonapi by getattr": "import ctypes\ngetattr(ctypes, 'python' + 'api').PyRun_SimpleString(b'x')\n",
    "CDLL(None)": "import ctypes\nctypes.CDLL(None).PyRun_SimpleString(b'x')\n",
    "CDLL(name=None)": "import ctypes\nlib = ctypes.CDLL(name=None)\n",
    "PyDLL": "import ctypes\nctypes.PyDLL(None).PyRun_SimpleString(b'x')\n",
    "Py_ symbol": "import ctypes\nlib = ctypes.CDLL('libc.so.6')\nlib.Py_IncRef(ctypes.py_object(1))\n",
    "symbol by getattr, concatenated": "import ctypes\nlib = ctypes.CDLL('libc.so.6')\nf = getattr(lib, 'PyRun_' + 'SimpleString')\n",
    "symbol by getattr, split name": "import ctypes\nname = 'Py' + 'Run_SimpleString'\nf = getattr(ctypes.CDLL('libc.so.6'), name)\n",
    "symbol by f-string": "import ctypes as c\nx = 'Run'\nf = getattr(c.CDLL('libc.so.6'), f'Py{x}_SimpleString')\n",
    "symbol by subscript": "import ctypes\nlib = ctypes.CDLL('libc.so.6')\nlib['PyRun_SimpleString'](b'x')\n",
    "symbol through a prototype": ("import ctypes\nproto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p)\n"
                                   "f = proto(('PyRun_SimpleString', ctypes.CDLL('libc.so.6')))\n"),
    "libpython by name": "import ctypes\nctypes.CDLL('libpython3.12.so.1.0').PyRun_SimpleString(b'x')\n",
    "libpython found": "import ctypes, ctypes.util\nctypes.CDLL(ctypes.util.find_library('python3.12'))\n",
    "_ctypes": "import _ctypes\nh = _ctypes.dlopen(None)\n",
}
ALLOWED = {
    "a CUDA library": "import ctypes\nlib = ctypes.CDLL('libcuda.so.1')\nlib.cuInit(0)\n",
    "no ctypes, a string like a symbol": "x = 'Py_None'\nprint(x)\n",
}


def main():
    failed = 0
    for name, src in REFUSED.items():
        v = S.static_check(src, "problem")
        ok = v is not None and v[0] == "dynamic"
        failed += not ok
        print("%s  refused: %s -> %s" % ("ok   " if ok else "FAIL ", name, v))
    for name, src in ALLOWED.items():
        v = S.static_check(src, "problem")
        ok = v is None
        failed += not ok
        print("%s  allowed: %s -> %s" % ("ok   " if ok else "FAIL ", name, v))
    print("%d checks, %d failed" % (len(REFUSED) + len(ALLOWED), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
