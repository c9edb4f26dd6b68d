#!/usr/bin/env python3
"""Checks that no project include runs from a lower floor of the house to a higher one.

Usage: tools/check_layers.py [REPO_ROOT]     (run by ctest as the test `layers`)
Exit 0 when every include goes down or stays on its floor; 1 with one line per offending include
(file:line: what it includes, and the two floors) otherwise.

Floors, lowest first (docs/architecture.md):
  0 runtime/core
  1 runtime/records
  2 storage/  knowledge/  backends/      (three siblings: none includes another)
  3 runtime/{search,memory,llm,config,operators,export,net,views,dashboard,resume}
  4 actors/
  5 tools/
Inside backends/, an interpreter's folder (cpu/, cuda/, python/) includes no other interpreter's folder;
the shared parts (harness/, process/, reference/, the top-level headers) include none of them, except the
factory backends/backend.cpp that makes each one.
The rooms inside a floor: the rooms of runtime/ (core/, records/, search/, net/, ...) and the actor roles of
actors/ (cluster/, engine/, search/, ...; protocol/ is below every role) include each other in no cycle
(of two rooms or more: each cycle is reported with the include of every step), and actors/protocol/
includes no role. From outside actors/ only actors/protocol/ is included (the typed interfaces and the
ways in: run_search, run_evaluator).
Every .cpp file under actors/ uses CAF (holds an actor or talks to one): code without actors lives below.
"""
import os
import re
import sys

FLOORS = [
    ("runtime/core/", 0), ("runtime/records/", 1),
    ("storage/", 2), ("knowledge/", 2), ("backends/", 2),
    ("runtime/search/", 3), ("runtime/memory/", 3), ("runtime/llm/", 3), ("runtime/config/", 3),
    ("runtime/operators/", 3), ("runtime/export/", 3), ("runtime/net/", 3), ("runtime/views/", 3),
    ("runtime/dashboard/", 3), ("runtime/resume/", 3),
    ("actors/", 4), ("tools/", 5),
]
SIBLINGS = ("storage/", "knowledge/", "backends/")
INTERPRETERS = ("backends/cpu/", "backends/cuda/", "backends/python/", "backends/hip/")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def place(path):
    """(floor, folder) of a repository path, or None for files outside the floors (tests, problems)."""
    for prefix, floor in FLOORS:
        if path.startswith(prefix):
            return floor, prefix
    return None


def interpreter(path):
    return next((i for i in INTERPRETERS if path.startswith(i)), None)


def room(path):
    """The inner room of a path under runtime/ or actors/ ("runtime/net", "actors/cluster"), else None."""
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] in ("runtime", "actors"):
        return parts[0] + "/" + parts[1]
    return None


def cycles(edges):
    """The cycles of a graph given as {(from, to): label}: one list of nodes per strongly connected
    component of two nodes or more (Tarjan), walked as a closed path from its smallest node."""
    graph = {}
    for a, b in edges:
        graph.setdefault(a, []).append(b)
        graph.setdefault(b, [])
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(set(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    found = []
    for comp in comps:
        start = min(comp)
        # The shortest way back to `start` inside the component (breadth first), as the cycle to show.
        prev, queue = {start: None}, [start]
        end = None
        while queue and end is None:
            v = queue.pop(0)
            for w in sorted(graph[v]):
                if w not in comp:
                    continue
                if w == start:
                    end = v
                    break
                if w not in prev:
                    prev[w] = v
                    queue.append(w)
        path = [end]
        while prev[path[-1]] is not None:
            path.append(prev[path[-1]])
        found.append(list(reversed(path)))
    return found


def check(root):
    errors = []
    room_edges = {}  # (from room, to room) -> first "file:line"
    for top in ("runtime", "storage", "knowledge", "backends", "actors", "tools"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if not f.endswith((".hpp", ".cpp", ".h", ".cu", ".cc")):
                    continue
                path = os.path.relpath(os.path.join(d, f), root)
                here = place(path)
                if here is None:
                    continue
                with open(os.path.join(root, path), errors="replace") as fh:
                    for n, line in enumerate(fh, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        there = place(m.group(1))
                        if there is None:
                            continue  # a system, generated or candidate header
                        where = "%s:%d: includes %s" % (path, n, m.group(1))
                        a, b = room(path), room(m.group(1))
                        if a and b and a != b:
                            room_edges.setdefault((a, b), where)
                            if a == "actors/protocol" and b.startswith("actors/"):
                                errors.append("%s (actors/protocol/ is below every actor role)" % where)
                        if (b or "").startswith("actors/") and b != "actors/protocol" and not path.startswith("actors/"):
                            errors.append("%s (from outside actors/ only actors/protocol/ is included)" % where)
                        if there[0] > here[0]:
                            errors.append("%s (floor %d reaches up to floor %d)" % (where, here[0], there[0]))
                        elif there[0] == here[0] == 2 and here[1] != there[1]:
                            errors.append("%s (%s and %s are siblings on one floor)" % (where, here[1], there[1]))
                        elif here[1] == "backends/" and path != "backends/backend.cpp":
                            mine, theirs = interpreter(path), interpreter(m.group(1))
                            if theirs and theirs != mine:
                                errors.append("%s (%s borrows from the %s interpreter)" % (where, mine or "shared backend code", theirs))
    for cycle in cycles(room_edges):
        steps = [room_edges[(cycle[i], cycle[(i + 1) % len(cycle)])] for i in range(len(cycle))]
        errors.append("rooms %s include each other in a cycle: %s" % (" -> ".join(cycle + cycle[:1]), "; ".join(steps)))
    for d, _, files in os.walk(os.path.join(root, "actors")):
        for f in files:
            if f.endswith(".cpp"):
                path = os.path.relpath(os.path.join(d, f), root)
                with open(os.path.join(root, path), errors="replace") as fh:
                    text = fh.read()
                    # CAF itself, or an actor interface (a role's header, whose records hold actor handles).
                    if "caf::" not in text and "<caf/" not in text and not re.search(r'#\s*include\s+"actors/', text):
                        errors.append("%s: no CAF in it (code without actors lives below actors/)" % path)
    return errors


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    errors = check(root)
    for e in errors:
        print(e)
    print("check_layers: %d include(s) against the floors" % len(errors))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
