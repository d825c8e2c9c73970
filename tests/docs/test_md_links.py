#!/usr/bin/env python3
"""tests/package/md_links.py fails on each kind of dead link and passes what resolves:
  test_md_links.py PATH/TO/md_links.py
Builds a scratch tree: a page with a link to a missing file, to a heading the target lacks, to its own missing
heading, above the root, and as a reference definition; links that resolve (a file, a heading with code and
punctuation, a repeated heading's -1, an <a id>, an image, a scheme); and dead-looking links inside code, which are
not links. Exit 0 when the checker reports exactly the dead ones (and fails an empty root), 1 otherwise."""
import os
import subprocess
import sys
import tempfile

GOOD = """# Top
## Start-up: every function's `first` call
## Top
<a id="here"></a>
[a](B.md) [b](#start-up-every-functions-first-call) [c](#top-1) [d](B.md#x) ![e](img/p.png)
[f](https://example.org/none.md) [g](mailto:x@y.z) [h](B.md "title")
`[code](nowhere.md)`
```
[fenced](nowhere.md)
```
[r]: B.md#here2
"""
BAD = """# Bad
[1](missing.md)
[2](B.md#no-such-heading)
[3](#nope)
[4](../outside.md)
[r]: gone.md
"""
WANT = ["(missing.md)", "(B.md#no-such-heading)", "(#nope)", "(../outside.md)", "(gone.md)"]


def main():
    checker = sys.argv[1]
    fails = 0
    with tempfile.TemporaryDirectory() as t:
        root = os.path.join(t, "root")
        os.makedirs(os.path.join(root, "img"))
        open(os.path.join(t, "outside.md"), "w").write("# Outside\n")
        open(os.path.join(root, "img", "p.png"), "wb").write(b"\x89PNG")
        open(os.path.join(root, "B.md"), "w").write('# B\n<a name="x"></a>\n<a id="here2"></a>\n')
        open(os.path.join(root, "A.md"), "w").write(GOOD)
        run = lambda *a: subprocess.run([sys.executable, checker, *a], capture_output=True, text=True)
        r = run(root)
        if r.returncode != 0 or "0 dead" not in r.stdout:
            print(f"FAIL: links that resolve reported dead (exit {r.returncode}):\n{r.stdout}{r.stderr}")
            fails += 1
        open(os.path.join(root, "C.md"), "w").write(BAD)
        r = run(root)
        dead = [l for l in r.stdout.splitlines() if l.startswith("md_links: C.md:")]
        other = [l for l in r.stdout.splitlines() if l.startswith("md_links: ") and ".md:" in l and "C.md:" not in l]
        if r.returncode != 1 or len(dead) != len(WANT) or other or any(not any(w in l for l in dead) for w in WANT):
            print(f"FAIL: want exit 1 and exactly {WANT} reported (exit {r.returncode}):\n{r.stdout}{r.stderr}")
            fails += 1
        r = run(root, "A.md")
        if r.returncode != 0:
            print(f"FAIL: A.md alone (FILE argument) reported dead links:\n{r.stdout}")
            fails += 1
        empty = os.path.join(t, "empty")
        os.makedirs(empty)
        if run(empty).returncode != 1:
            print("FAIL: a root without a .md file passed (nothing checked)")
            fails += 1
    print("md_links self-test: " + ("ok" if not fails else f"{fails} failure(s)"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
