#!/usr/bin/env python3
"""The library's files call each other one way only (issue 13; the module map in docs/DESIGN.md).

Reads the object files of the library (nm), builds the graph "A calls B" (A has an undefined symbol that B
defines) and fails (exit 1) on any cycle, naming it. Prints the graph floor by floor.
Usage: check_layering.py OBJECT_DIR [SOURCE_ROOT]   (e.g. build/dev/CMakeFiles/fastclock_obj.dir .): with
SOURCE_ROOT, objects whose source no longer exists (a stale build directory) are left out. Standard library only.
"""
import os
import subprocess
import sys


def objects(root):
    for d, _, fs in os.walk(root):
        for f in fs:
            if f.endswith(".o"):
                yield os.path.join(d, f)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    root = sys.argv[1]
    src = sys.argv[2] if len(sys.argv) == 3 else None
    defs, uses = {}, {}
    for o in objects(root):
        name = os.path.relpath(o, root).replace(".c.o", ".c")
        if src is not None and not os.path.exists(os.path.join(src, name)):
            continue
        out = subprocess.run(["nm", "-P", o], stdout=subprocess.PIPE, text=True, check=True).stdout
        d, u = set(), set()
        for line in out.splitlines():
            parts = line.split()
            if len(parts) < 2:
                continue
            sym, kind = parts[0], parts[1]
            (u if kind == "U" else d if kind in "TDBRVW" else set()).add(sym)
        defs[name], uses[name] = d, u
    if not defs:
        sys.exit(f"check_layering: no object files under {root}")
    owner = {}
    for f, ds in defs.items():
        for s in ds:
            owner.setdefault(s, f)
    graph = {f: sorted({owner[s] for s in uses[f] if s in owner and owner[s] != f}) for f in defs}
    # Cycles: depth-first search with colours.
    colour, stack, cycles = {f: 0 for f in graph}, [], []

    def visit(f):
        colour[f] = 1
        stack.append(f)
        for g in graph[f]:
            if colour[g] == 1:
                cycles.append(stack[stack.index(g):] + [g])
            elif colour[g] == 0:
                visit(g)
        stack.pop()
        colour[f] = 2

    for f in sorted(graph):
        if colour[f] == 0:
            visit(f)
    for f in sorted(graph, key=lambda x: (len(graph[x]), x)):
        print(f"{f:28} -> {', '.join(graph[f]) or '(nothing)'}")
    if cycles:
        for c in cycles:
            print("check_layering: cycle: " + " -> ".join(c), file=sys.stderr)
        return 1
    print(f"check_layering: {len(graph)} files, calls run one way (no cycle)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
