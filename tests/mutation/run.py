#!/usr/bin/env python3
"""The mutation gate: apply each mutant of tests/mutation/mutants.py alone, rebuild what its tests
need, run them N times, restore the file, and print a table: mutant, the test that killed it, runs killed out
of runs tried, verdict.

  tests/mutation/run.py [--set protocol|bound|all] [--runs N] [--build DIR] [--only SUBSTRING] [--markdown]

Exit 0 when every mutant of the set was killed in every run, except those whose `note` says why no test can
observe them (memory-order weakenings on x86-64: the model proves those steps); 1 otherwise (a mutant that does
not compile counts against the gate too: it tests nothing); 2 when the
gate itself cannot run (a mutant's text not found exactly once, the unmutated build or tests failing).
Standard library only.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import time

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ROOT = SRC  # the tree the gate mutates: a private copy of SRC (copy_tree), never the working tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mutants import M  # noqa: E402


def sh(cmd, **kw):
    return subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def configure(build):
    if os.path.exists(os.path.join(ROOT, build, "build.ninja")):
        return
    r = sh(["cmake", "-S", ".", "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
            "-DFASTCLOCK_BUILD_BENCH=OFF", "-DFASTCLOCK_BUILD_TOOLS=OFF"])
    if r.returncode:
        sys.exit("mutation: configure failed:\n" + r.stdout[-3000:])


def build(build_dir, targets):
    return sh(["cmake", "--build", build_dir, "-j", str(os.cpu_count() or 2), "--target"] + targets)


def failed_tests(build_dir, regex):
    r = sh(["ctest", "--test-dir", build_dir, "-R", regex, "--timeout", "60", "-j", str(os.cpu_count() or 2)])
    failed = re.findall(r"\d+ - (\S+) \(", r.stdout)
    ran = re.search(r"tests passed, (\d+) tests failed out of (\d+)", r.stdout)
    if ran is None or int(ran.group(2)) == 0:
        return None, r.stdout  # no test matched: the gate is misconfigured
    return failed, r.stdout


def copy_tree(dest):
    """Copy the checkout's files (tracked, and untracked but not ignored) to dest: mutants are applied there, so
    an interrupted gate or an edit made while it runs can never leave a mutant in the working tree."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=SRC,
                           stdout=subprocess.PIPE, check=True).stdout.split(b"\0")
    for f in files:
        if not f:
            continue
        rel = f.decode()
        s, d = os.path.join(SRC, rel), os.path.join(dest, rel)
        if not os.path.isfile(s):
            continue
        os.makedirs(os.path.dirname(d), exist_ok=True)
        with open(s, "rb") as fi:
            data = fi.read()
        old = None
        if os.path.exists(d):
            with open(d, "rb") as fo:
                old = fo.read()
        if old != data:  # unchanged files keep their times: ninja rebuilds only what changed
            with open(d, "wb") as fo:
                fo.write(data)
        os.chmod(d, os.stat(s).st_mode)


def main():
    # A mutant in place must never outlive the gate: SIGTERM (a CI timeout) unwinds through the restoring
    # `finally` like Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", default="protocol", choices=["protocol", "bound", "all"])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--build", default="build/mutation")
    ap.add_argument("--only", default=None)
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    global ROOT
    ROOT = os.path.join(SRC, a.build, "tree")
    build_abs = os.path.join(SRC, a.build, "build")
    copy_tree(ROOT)
    a.build = build_abs
    chosen = [m for m in M if (a.set == "all" or m["set"] == a.set) and (a.only is None or a.only in m["name"])]
    if not chosen:
        sys.exit("mutation: no mutant selected")
    # Every target text must be there exactly once before anything is built.
    for m in chosen:
        text = open(os.path.join(ROOT, m["file"]), encoding="utf-8").read()
        n = text.count(m["old"])
        if n != 1:
            print(f"mutation: mutant '{m['name']}': its target text occurs {n} times in {m['file']} "
                  f"(expected once): update tests/mutation/mutants.py", file=sys.stderr)
            sys.exit(2)
    configure(a.build)
    targets = sorted({t for m in chosen for t in m["targets"]})
    r = build(a.build, targets)
    if r.returncode:
        sys.exit("mutation: the unmutated build fails:\n" + r.stdout[-3000:])
    for m in chosen:
        f, out = failed_tests(a.build, m["tests"])
        if f is None or f:
            print(f"mutation: without any mutant, tests '{m['tests']}' do not pass (or none ran):\n{out[-2000:]}",
                  file=sys.stderr)
            sys.exit(2)
    rows, bad = [], 0
    t0 = time.time()
    for m in chosen:
        path = os.path.join(ROOT, m["file"])
        orig = open(path, encoding="utf-8").read()
        killed, killers, verdict = 0, {}, ""
        try:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(orig.replace(m["old"], m["new"]))
            r = build(a.build, m["targets"])
            if r.returncode:  # a mutant that does not build tests nothing: the list needs fixing
                verdict = "DOES NOT COMPILE: fix the mutant"
                tried = 0
                bad += 1
            else:
                tried = a.runs
                for _ in range(a.runs):
                    f, _ = failed_tests(a.build, m["tests"])
                    if f:
                        killed += 1
                        for t in f:
                            killers[t] = killers.get(t, 0) + 1
        finally:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(orig)
        if not verdict:
            if killed == tried:
                verdict = "killed"
            elif m.get("note"):
                verdict = "survives: " + m["note"]
            else:
                verdict = "SURVIVES: a missing test"
                bad += 1
        killer = max(killers, key=killers.get) if killers else "-"
        rows.append((m["name"], m["guards"], killer, f"{killed}/{tried}", verdict))
        print(f"  {m['name']}: {killed}/{tried} ({killer})", file=sys.stderr, flush=True)
    build(a.build, targets)  # leave the build as the sources are
    if a.markdown:
        print("| mutant | guards | killed by | runs killed | verdict |")
        print("|---|---|---|---|---|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        w = max(len(r[0]) for r in rows)
        for row in rows:
            print(f"{row[0]:<{w}}  {row[3]:>5}  {row[2]:<60}  {row[4]}")
    print(f"mutation: {len(rows)} mutants, {bad} surviving without a reason, {time.time() - t0:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
