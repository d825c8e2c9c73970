#!/usr/bin/env python3
"""The library's files call each other one way only, down docs/DESIGN.md's floor table.

Reads the object files of the library (nm), builds the graph "A calls B" (A has an undefined symbol that B
defines) and fails (exit 1) on any cycle, naming it. Prints the graph floor by floor.
With SOURCE_ROOT it also reads the floor table of SOURCE_ROOT/docs/DESIGN.md (the rows between the
"floor table: begin/end" markers: | floor | `file` | `header` | owns |) and fails on
  - an object file with no row, or a row whose file or header does not exist;
  - a header under src/ that no row names (MACRO_HEADERS excepted: macros only, any floor includes them);
  - floors that go down the table;
  - a call that does not go down the table: A may call B only if B's row is above A's (a lower floor, or the
    same floor and an earlier row);
  - an include that does not go down the table: a file under src/ (a .c at its row, a header at the first row
    that names it) may include a src/ header only from its own row or a row above (INCLUDE_EXCEPTIONS aside);
  - a module's own state used outside it (OWNED_STATE): the start-up's (struct fc_start, c->start) is start.c's,
    asked elsewhere only through start.h's fc__start_done.
Usage: check_layering.py OBJECT_DIR [SOURCE_ROOT]   (e.g. build/dev/CMakeFiles/fastclock_obj.dir .): with
SOURCE_ROOT, objects whose source no longer exists (a stale build directory) are left out. Standard library only.
"""
import glob
import os
import re
import subprocess
import sys


def objects(root):
    for d, _, fs in os.walk(root):
        for f in fs:
            if f.endswith(".o"):
                yield os.path.join(d, f)


MACRO_HEADERS = {"src/units.h", "src/section.h"}
ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*`([^`]+)`\s*\|\s*`([^`]+)`\s*\|")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Includes that go up the table on purpose, each with its reason (docs/DESIGN.md says the same).
INCLUDE_EXCEPTIONS = {}


def floor_table(src):
    """[(floor, file, header)] in table order, from docs/DESIGN.md; exits if the markers are missing."""
    path = os.path.join(src, "docs", "DESIGN.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"<!-- floor table: begin -->(.*?)<!-- floor table: end -->", text, re.S)
    if not m:
        sys.exit(f"check_layering: no floor table (<!-- floor table: begin/end -->) in {path}")
    rows = [(int(r.group(1)), r.group(2), r.group(3)) for r in map(ROW.match, m.group(1).splitlines()) if r]
    if not rows:
        sys.exit(f"check_layering: the floor table in {path} has no rows")
    return rows


def check_includes(src, rows):
    """Problems (strings) with the includes of src/'s files against the floor table."""
    pos = {}
    for i, (_, f, h) in enumerate(rows):
        pos.setdefault(f, i)
        pos.setdefault(h, i)
    bad = []
    for path in sorted(glob.glob(os.path.join(src, "src", "**", "*.[ch]"), recursive=True)):
        f = os.path.relpath(path, src)
        if f not in pos:
            continue  # no row: check_floors says so
        with open(path, encoding="utf-8") as fh:
            names = INCLUDE.findall(fh.read())
        for name in names:
            # as the compiler looks: beside the file, then the include directories (src/, include/)
            g = next((os.path.normpath(os.path.join(d, name)) for d in (os.path.dirname(f), "src", "include")
                      if os.path.exists(os.path.join(src, d, name))), None)
            if g in pos and g.startswith("src/") and pos[g] > pos[f] and (f, g) not in INCLUDE_EXCEPTIONS:
                bad.append(f"{f} includes {g}, whose row is below {f}'s in the floor table")
    return bad


# State that one module owns: (the pattern of its use, the files that may use it).
OWNED_STATE = [
    (re.compile(r"\bstart\s*\.\s*(phase|due|rate_first|anchor|retries|early_\w+)\b"), ("src/start.c", "src/start.h")),
]


def check_owned_state(src):
    """Problems (strings): a module's own state used by another file under src/."""
    bad = []
    for path in sorted(glob.glob(os.path.join(src, "src", "**", "*.[ch]"), recursive=True)):
        f = os.path.relpath(path, src)
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        for pattern, owners in OWNED_STATE:
            if f in owners:
                continue
            for m in pattern.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                bad.append(f"{f}:{line} uses {m.group(0)}, state owned by {owners[0]}")
    return bad


def check_floors(src, graph):
    """Problems (strings) with the graph and the includes against the floor table."""
    rows = floor_table(src)
    bad = check_includes(src, rows) + check_owned_state(src)
    pos = {}
    for i, (fl, f, h) in enumerate(rows):
        if f in pos:
            bad.append(f"{f}: two rows in the floor table")
        pos[f] = (i, fl)
        for p in (f, h):
            if not os.path.exists(os.path.join(src, p)):
                bad.append(f"{p}: in the floor table, not in the source tree")
        if i and fl < rows[i - 1][0]:
            bad.append(f"{f}: floor {fl} below the row above it (floor {rows[i - 1][0]}): the table goes up")
    named = {h for _, _, h in rows} | MACRO_HEADERS
    for h in sorted(glob.glob(os.path.join(src, "src", "**", "*.h"), recursive=True)):
        h = os.path.relpath(h, src)
        if h not in named:
            bad.append(f"{h}: a module header the floor table does not name")
    for f in sorted(graph):
        if f not in pos:
            bad.append(f"{f}: no row in the floor table")
            continue
        for g in graph[f]:
            if g in pos and pos[g][0] >= pos[f][0]:
                bad.append(f"{f} (floor {pos[f][1]}) calls {g} (floor {pos[g][1]}), not above it in the floor table")
    return bad


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
    bad = check_floors(src, graph) if src is not None else []
    for b in bad:
        print("check_layering: floor: " + b, file=sys.stderr)
    for c in cycles:
        print("check_layering: cycle: " + " -> ".join(c), file=sys.stderr)
    if cycles or bad:
        return 1
    floors = "down docs/DESIGN.md's floor table" if src is not None else "one way (floors not checked: no SOURCE_ROOT)"
    print(f"check_layering: {len(graph)} files, calls run {floors}, no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
