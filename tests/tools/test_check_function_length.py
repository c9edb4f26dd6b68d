#!/usr/bin/env python3
"""tools/check_function_length.py on small trees made for the purpose: what it must report and what it must let be."""
import os
import subprocess
import sys
import tempfile

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "check_function_length.py")


def run(files, allow=None, limit=10):
    """The checker on a tree of `files` ({path: text}) with the allow-list text `allow`: (exit code, lines)."""
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
        allow_path = os.path.join(root, "allow.txt")
        with open(allow_path, "w") as f:
            f.write(allow or "")
        p = subprocess.run([sys.executable, CHECK, root, "--allow", allow_path, "--limit", str(limit)],
                           capture_output=True, text=True)
        return p.returncode, p.stdout.splitlines()


def body(n, line="  x += 1;\n"):
    """A function body's inside of `n` lines."""
    return line * n


def test_a_long_function_is_reported_with_its_qualified_name_and_length():
    code, out = run({"runtime/a/a.cpp": "namespace kv {\nint Loader::load(int x) {\n" + body(10) + "}\n}\n"})
    assert code == 1, out
    assert out == ["runtime/a/a.cpp:2: Loader::load is 12 lines (over 10; split it, or list it in the allow-list "
                   "with the reason)"], out


def test_short_functions_and_long_data_pass():
    code, out = run({"actors/b/b.cpp": "int f() {\n" + body(8) + "}\n"
                     "const int table[] = {\n" + body(20, "  1,\n") + "};\n"
                     "struct S {\n" + body(20, "  int m;\n") + "};\n"})
    assert code == 0, out


def test_braces_in_comments_strings_and_raw_strings_are_not_counted():
    code, out = run({"storage/c.cpp": "int f() {\n  // }\n  /* } */\n  const char* s = \"}\";\n  char c = '}';\n"
                     "  const char* r = R\"x(\n}\n}\n)x\";\n  return 1'0;}\n"
                     "int g() {\n" + body(12) + "}\n"})
    assert code == 1, out
    assert len(out) == 1 and out[0].startswith("storage/c.cpp:11: g is 14 lines"), out


def test_inline_members_lambdas_and_constructor_initializers():
    src = ("class Box {\n public:\n  Box() : a_{1}, b_(2) {\n" + body(11) + "  }\n"
           "  void run() {\n    auto l = [&] {\n" + body(4) + "    };\n  }\n int a_, b_;\n};\n")
    code, out = run({"backends/d.hpp": src})
    assert code == 1, out
    assert len(out) == 1 and out[0].startswith("backends/d.hpp:3: Box::Box is 13 lines"), out


def test_an_allowed_function_passes_and_a_stale_entry_fails():
    files = {"tools/e.cpp": "void big() {\n" + body(12) + "}\n"}
    code, out = run(files, allow="tools/e.cpp:big  a table of commands read top to bottom\n")
    assert code == 0, out
    code, out = run(files, allow="tools/e.cpp:big  reason\ntools/e.cpp:gone  reason\n")
    assert code == 1, out
    assert out == ["tools/e.cpp:gone: stale allow-list entry (no function of that name over 10 lines)"], out


def test_tests_problems_and_templates_are_not_scanned():
    long_fn = "void big() {\n" + body(12) + "}\n"
    code, out = run({"tests/t.cpp": long_fn, "problems/p.cpp": long_fn, "knowledge/templates/k.cu": long_fn})
    assert code == 0, out


if __name__ == "__main__":
    failed = 0
    for name, fn in sorted(globals().items()):
        if name.startswith("test_") and callable(fn):
            try:
                fn()
                print("ok  ", name)
            except AssertionError as e:
                failed += 1
                print("FAIL", name, e)
    sys.exit(1 if failed else 0)
