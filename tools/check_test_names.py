#!/usr/bin/env python3
"""Fails when a Catch2 test name under tests/ holds a ';'. CTest's test discovery reads the names as a CMake
list, so such a name becomes two tests that match nothing and "pass" without running anything.
Usage: tools/check_test_names.py ROOT"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
bad = []
for f in sorted((root / "tests").rglob("*.cpp")):
    text = f.read_text(errors="replace")
    for m in re.finditer(r'TEST_CASE\(\s*"((?:[^"\\]|\\.)*)"', text):
        if ";" in m.group(1):
            line = text.count("\n", 0, m.start()) + 1
            bad.append(f"{f.relative_to(root)}:{line}: {m.group(1)}")
for b in bad:
    print(f"check_test_names: a ';' splits this test in two under ctest (neither half runs): {b}")
print(f"check_test_names: {len(bad)} test name(s) with a ';'")
sys.exit(1 if bad else 0)
