#!/usr/bin/env python3
"""Checks that every repository path named in the docs and in code comments exists.

Usage: tools/check_doc_paths.py [REPO_ROOT]     (run by ctest as the test `doc_paths`)
Exit 0 when every named path exists; 1 with one line per missing path (file:line: the path) otherwise.

What counts as a named path: a word that starts with one of the repository's top folders (actors/,
runtime/, backends/, storage/, knowledge/, tools/, tests/, docs/, configs/, problems/) in a Markdown file
(README.md, docs/**) or in a comment of a source file; a path without an extension may name a header and
its source (runtime/net/cluster_link) (// in C++ and CUDA, # in Python, shell and CMake).
Brace lists are expanded (backends/{cpu,cuda}/x.cpp names two files); words with placeholders or globs
(<role>, *, ..., NAME) and line suffixes (file.cpp:12-40) are reduced to what can be checked.
"""
import os
import re
import sys

TOPS = ("actors", "runtime", "backends", "storage", "knowledge", "tools", "tests", "docs", "configs", "problems")
WORD = re.compile(r"(?<![\w/.-])(?:%s)/[\w./{},<>*+-]*" % "|".join(TOPS))
SOURCE_COMMENT = {
    ".hpp": "//", ".cpp": "//", ".h": "//", ".cu": "//", ".cuh": "//", ".cc": "//",
    ".py": "#", ".sh": "#", ".txt": "#", ".cmake": "#",
}


def expand(word):
    """backends/{cpu,cuda}/x -> [backends/cpu/x, backends/cuda/x] (one level, repeated)."""
    m = re.search(r"\{([^{}]*)\}", word)
    if not m:
        return [word]
    out = []
    for alt in m.group(1).split(","):
        out += expand(word[:m.start()] + alt + word[m.end():])
    return out


def checkable(path):
    """The part of a named path that can be checked: up to the first placeholder or glob, without a line
    suffix or trailing punctuation. None when nothing is left to check."""
    path = re.split(r"[<*]|\.\.\.|(?<=/)[A-Z][A-Z_]+\b", path)[0]  # <role>, globs, NAME placeholders
    path = re.sub(r":.*$", "", path)
    path = path.rstrip(".,;)`'\"")
    if "/" not in path.rstrip("/"):
        return None
    return path


def named_paths(text):
    for m in WORD.finditer(text):
        for p in expand(m.group(0)):
            c = checkable(p)
            if c:
                yield c


def files(root):
    yield "README.md"
    for d, dirs, fs in os.walk(root):
        rel = os.path.relpath(d, root)
        dirs[:] = [x for x in dirs if not x.startswith(".") and x not in ("build", "vendor", "corpus", "fixtures")
                   and not (rel == "." and x in ("kevolve-store", "kevolve-out"))]
        for f in fs:
            path = os.path.normpath(os.path.join(rel, f))
            if path.startswith(TOPS) and (f.endswith(".md") or os.path.splitext(f)[1] in SOURCE_COMMENT or f == "CMakeLists.txt"):
                yield path


def check(root):
    errors = []
    for path in files(root):
        ext = os.path.splitext(path)[1]
        marker = None if ext == ".md" else SOURCE_COMMENT.get(ext, "#")
        try:
            lines = open(os.path.join(root, path), errors="replace").read().splitlines()
        except OSError:
            continue
        for n, line in enumerate(lines, 1):
            if marker:
                at = line.find(marker)
                if at < 0:
                    continue
                line = line[at + len(marker):]
            for p in named_paths(line):
                full = os.path.join(root, p)
                # "backends/cpu/cpu_backend" names the header and its source
                if not any(os.path.exists(full + x) for x in ("", ".hpp", ".cpp", ".py", ".h")):
                    errors.append("%s:%d: %s" % (path, n, p))
    return errors


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    errors = check(root)
    for e in errors:
        print(e)
    print("check_doc_paths: %d named path(s) that do not exist" % len(errors))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
