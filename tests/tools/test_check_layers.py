#!/usr/bin/env python3
"""tools/check_layers.py on small trees made for the purpose: what it must report and what it must let be."""
import os
import subprocess
import sys
import tempfile

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "check_layers.py")


def run(files):
    """check_layers on a tree of `files` ({path: text}): (exit code, lines it printed)."""
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
        p = subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True)
        return p.returncode, p.stdout.splitlines()


CAF = chr(35) + "include <caf/all.hpp>\n"


def inc(path):
    """An include line of `path` (written without the hash sign, which would make this line a comment that
    tools/check_doc_paths.py reads for paths)."""
    return chr(35) + 'include "%s"\n' % path


def test_cycle_of_three_rooms_is_reported_with_each_include():
    code, out = run({
        "actors/a/a.cpp": CAF + inc("actors/b/b.hpp"),
        "actors/b/b.hpp": inc("actors/c/c.hpp"),
        "actors/c/c.hpp": inc("actors/a/a.hpp"),
    })
    assert code == 1, out
    cycle = [l for l in out if "cycle" in l]
    assert len(cycle) == 1, out
    assert "actors/a -> actors/b -> actors/c -> actors/a" in cycle[0], cycle
    for step in ("actors/a/a.cpp:2: includes actors/b/b.hpp", "actors/b/b.hpp:1: includes actors/c/c.hpp",
                 "actors/c/c.hpp:1: includes actors/a/a.hpp"):
        assert step in cycle[0], (step, cycle)


def test_rooms_that_include_one_way_pass():
    code, out = run({
        "actors/a/a.cpp": CAF + inc("actors/b/b.hpp"),
        "actors/b/b.hpp": inc("actors/c/c.hpp"),
        "actors/c/c.hpp": inc("actors/protocol/p.hpp"),
        "tools/cmd.cpp": inc("actors/protocol/p.hpp"),
    })
    assert code == 0, out


def test_a_role_included_from_outside_actors_is_reported():
    code, out = run({"tools/cmd.cpp": inc("actors/engine/engine.hpp")})
    assert code == 1, out
    assert any(l.startswith("tools/cmd.cpp:1: includes actors/engine/engine.hpp") and "only actors/protocol/" in l
               for l in out), out


def test_two_runtime_rooms_including_each_other_are_a_cycle():
    code, out = run({
        "runtime/search/s.hpp": inc("runtime/llm/l.hpp"),
        "runtime/llm/l.hpp": inc("runtime/search/s.hpp"),
    })
    assert code == 1, out
    assert any("runtime/llm -> runtime/search -> runtime/llm" in l for l in out), out


if __name__ == "__main__":
    tests = [v for k, v in sorted(globals().items()) if k.startswith("test_")]
    for t in tests:
        t()
        print("ok", t.__name__)
    print("%d passed" % len(tests))
