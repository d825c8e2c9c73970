#!/usr/bin/env python3
"""Cross-check the step names of the timehands protocol between the Promela model and the C code.

The C code labels each barrier of the protocol with a comment that starts with the step's name:
"/* W2: ..." in src/hands.c, "/* R1: ..." in include/fastclock/fc_hand.h.
The model (tests/model/timehands.pml) starts the comment at each step with the same name followed by the C
functions that perform it: "/* W2: fc__hands_publish() writes the fields ...".

Fails (exit 1) when
  - a step is named on one side and not on the other;
  - the model says function F performs step S but F, in the C code, carries no label S (or the reverse: a C
    function labels step S and the model does not name it at S);
  - a C file that points readers to the model names a model file that does not exist;
  - a reader step (R*) is labelled outside include/fastclock/fc_hand.h: the reader protocol exists once, there
    (fc__hand_current .. fc__hand_moved), and every reader calls it; a second, hand-written copy is what this
    catches (every C file of src/ and include/ is scanned, but src/bound/: the bound sources read other
    programs' shared memory, ClockBound's segment and the VMClock page, with those programs' own protocols,
    whose steps their comments name after those programs' clients).
Standard library only. Usage: check_steps.py [repository root]
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
MODEL = "tests/model/timehands.pml"
C_FILES = ["include/fastclock/fc_hand.h", "src/hands.c", "src/windup.c"]
READER_HOME = "include/fastclock/fc_hand.h"  # the one copy of the reader protocol
OTHER_PROTOCOLS = "src/bound/"  # readers of other programs' segments, with those programs' step names

STEP = r"([RW][0-9]+)"
# a comment that starts with a step name: "/* W1: ..." or "/* R1 */"
C_LABEL = re.compile(r"/\*\s*" + STEP + r"\b\s*(?::|\*/)")
MODEL_LABEL = re.compile(r"/\*\s*(?:proposed\s+)?" + STEP + r"\s*:(.*?)\*/", re.S)
FUNC_NAME = re.compile(r"\b([A-Za-z_]\w*)\(\)")
# a function definition starts at column 0: "type name(" with no ';' on the line
C_FUNC = re.compile(r"^(?!static\s+const\b)(?:[A-Za-z_][\w \t\*]*?[\s\*])?([A-Za-z_]\w*)\s*\([^;]*$")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do"}


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def c_steps():
    """{(step, function)} labelled in the C files, and the model paths they mention."""
    pairs, mentions = set(), []
    for rel in C_FILES:
        func = None
        for line in read(rel).splitlines():
            m = C_FUNC.match(line)
            if m and m.group(1) not in KEYWORDS and not line.startswith(("#", " ", "\t", "*", "/")):
                func = m.group(1)
            for s in C_LABEL.findall(line):
                pairs.add((s, func or "<file scope>"))
            mentions += [(rel, p) for p in re.findall(r"tests/model/[\w.]+\.pml", line)]
    return pairs, mentions


def reader_copies():
    """[(file, line, step)]: reader-step labels in C files other than READER_HOME."""
    found = []
    for top in ("src", "include"):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            for name in sorted(files):
                rel = os.path.relpath(os.path.join(d, name), ROOT)
                if not name.endswith((".c", ".h")) or rel == READER_HOME or rel.startswith(OTHER_PROTOCOLS):
                    continue
                for n, line in enumerate(read(rel).splitlines(), 1):
                    found += [(rel, n, s) for s in C_LABEL.findall(line) if s.startswith("R")]
    return found


def model_steps():
    pairs = set()
    for step, text in MODEL_LABEL.findall(read(MODEL)):
        funcs = FUNC_NAME.findall(text)
        if not funcs:
            pairs.add((step, "<no function named>"))
        for f in funcs:
            pairs.add((step, f))
    return pairs


def main():
    cp, mentions = c_steps()
    mp = model_steps()
    c_funcs = {f for _, f in cp}
    errors = []
    for rel, path in mentions:
        if not os.path.exists(os.path.join(ROOT, path)):
            errors.append(f"{rel} points to {path}, which does not exist (the model is {MODEL})")
    for rel, n, s in reader_copies():
        errors.append(f"{rel}:{n} labels reader step {s}: the reader protocol is {READER_HOME}'s alone (call it)")
    cs, ms = {s for s, _ in cp}, {s for s, _ in mp}
    for s in sorted(ms - cs):
        errors.append(f"step {s} is in the model ({', '.join(sorted(f for t, f in mp if t == s))}) but no C barrier is labelled {s}")
    for s in sorted(cs - ms):
        errors.append(f"step {s} labels a barrier in {', '.join(sorted(f for t, f in cp if t == s))} but the model has no step {s}")
    for s, f in sorted(mp):
        if s in cs and f in c_funcs and (s, f) not in cp:
            errors.append(f"the model says {f}() performs {s}; the C code labels no {s} in {f}()")
        if s in cs and f not in c_funcs:
            errors.append(f"the model names {f}() at {s}; no labelled C function has that name")
    for s, f in sorted(cp):
        if s in ms and (s, f) not in mp:
            errors.append(f"{f}() labels {s} in the C code; the model does not name {f}() at {s}")
    steps = sorted(cs | ms, key=lambda x: (x[0] == "R", int(x[1:])))
    for s in steps:
        print(f"{s}: C {sorted(f for t, f in cp if t == s) or '-'}  model {sorted(f for t, f in mp if t == s) or '-'}")
    if errors:
        print("step names differ:")
        for e in errors:
            print("  " + e)
        return 1
    print(f"step names agree: {len(steps)} steps, {len(cp)} labelled barriers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
