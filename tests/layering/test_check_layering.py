#!/usr/bin/env python3
"""check_layering.py fails on each kind of floor-table violation: it is run over the real objects
against copies of docs/DESIGN.md with one defect each (a call up the table, a header with no row, floors going
up, an object with no row, an include up the table; and a copy of src/ whose read.c uses the start-up's state),
and must exit 1 naming the defect; the unchanged table must pass.
Usage: test_check_layering.py OBJECT_DIR SOURCE_ROOT. Standard library only.
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run(objdir, src, design, edit=None):
    """check_layering over objdir with a source root whose docs/DESIGN.md is `design`: (rc, stderr). edit: a
    (file under src/, text appended to it) made in a copy of src/."""
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("src", "include"):
            if name == "src" and edit is not None:
                shutil.copytree(os.path.join(src, name), os.path.join(tmp, name))
                with open(os.path.join(tmp, edit[0]), "a", encoding="utf-8") as f:
                    f.write(edit[1])
            else:
                os.symlink(os.path.join(src, name), os.path.join(tmp, name))
        os.mkdir(os.path.join(tmp, "docs"))
        with open(os.path.join(tmp, "docs", "DESIGN.md"), "w", encoding="utf-8") as f:
            f.write(design)
        p = subprocess.run([sys.executable, os.path.join(HERE, "check_layering.py"), objdir, tmp],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        return p.returncode, p.stderr


def row(design, path):
    """The floor-table row naming file `path`."""
    return next(l for l in design.splitlines() if l.startswith("|") and f"| `{path}` |" in l)


def main():
    objdir, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    with open(os.path.join(src, "docs", "DESIGN.md"), encoding="utf-8") as f:
        design = f.read()
    read, updater = row(design, "src/read.c"), row(design, "src/updater.c")
    state, windup = row(design, "src/state.c"), row(design, "src/windup.c")
    track, ntp = row(design, "src/track.c"), row(design, "src/ntp.c")
    cases = {
        # read.c calls updater.c (it starts the keeper): updater.c's row below read.c's (same floor) is a call up
        # the table
        "call up the table": (design.replace(updater + "\n", "").replace(read + "\n", read + "\n" + updater + "\n"),
                              "src/read.c (floor 4) calls src/updater.c"),
        # windup.c calls state.c: state.c on floor 2 beside it, below its row
        "call on the same floor, later row": (design.replace(state, state.replace("| 1 |", "| 2 |", 1))
                                              .replace(state + "\n", "").replace(windup + "\n", windup + "\n" + state.replace("| 1 |", "| 2 |", 1) + "\n"),
                                              "src/windup.c (floor 2) calls src/state.c"),
        "header with no row": (design.replace(row(design, "src/trust.c") + "\n", ""), "src/trust.h: a module header"),
        "floors going up": (design.replace(state, state.replace("| 1 |", "| 5 |", 1)), "the table goes up"),
        "object with no row": (design.replace(row(design, "src/version.c") + "\n", ""), "src/version.c: no row"),
        # track.c includes ntp.h (struct fc_ntp) and calls nothing: ntp.c's row below track.c's is an include up
        # the table and nothing else
        "include up the table": (design.replace(ntp + "\n", "").replace(track + "\n", track + "\n" + ntp + "\n"),
                                 "src/track.c includes src/ntp.h"),
    }
    rc, err = run(objdir, src, design)
    failures = [] if rc == 0 else [f"the real table: exit {rc}, expected 0: {err}"]
    for name, (text, want) in cases.items():
        if text == design:
            failures.append(f"{name}: the defect was not made (the table's text changed?)")
            continue
        rc, err = run(objdir, src, text)
        if rc != 1 or want not in err:
            failures.append(f"{name}: exit {rc}, expected 1 naming '{want}'; stderr: {err.strip()}")
    # read.c asks the start-up's phase itself instead of through fc__start_done
    rc, err = run(objdir, src, design, ("src/read.c", "\nstatic int phase_of(struct fc_clock *c) { return c->start.phase; }\n"))
    if rc != 1 or "src/read.c:" not in err or "owned by src/start.c" not in err:
        failures.append(f"the start-up's state used outside start.c: exit {rc}, expected 1; stderr: {err.strip()}")
    for f in failures:
        print("test_check_layering: " + f, file=sys.stderr)
    if not failures:
        print(f"test_check_layering: the real table passes; {len(cases) + 1} defects, each caught")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
