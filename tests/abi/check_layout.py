#!/usr/bin/env python3
"""The ABI rule, checked: a layout the inline readers compile into applications (struct fc_hand, fc_pub,
fc__bound, fc_interval, fc_status, the FC_* constants, the exported fc__ entry points) never changes under
the same SONAME. cmake/abi-layout.txt holds one committed block per FASTCLOCK_ABI; a block is never rewritten.

  check_layout.py --layout BIN --api cmake/fastclock.api --file cmake/abi-layout.txt --so libfastclock.so
  check_layout.py --layout BIN --api cmake/fastclock.api --file cmake/abi-layout.txt --update

The fingerprint is BIN's output (layout.c) plus the fc__ names of the api list. Fails (exit 1) when the block
for the headers' FASTCLOCK_ABI differs (a layout changed without the bump), when it is missing (a bump without
its fingerprint: --update appends it), when the library's SONAME or fc_abi() is not FASTCLOCK_ABI.
--update appends the current block if its ABI has none, and refuses (exit 1) to rewrite an existing one.

A field's name is not part of the binary interface, its offset and size are: a line
  rename N STRUCT.OLD STRUCT.NEW
(outside the blocks) says that abi N's recorded field STRUCT.OLD is now called STRUCT.NEW. It renames only a
recorded "field" line whose offset and size stay exactly as recorded; anything else still fails. A line
  private N NAME
says that abi N's recorded constant NAME is gone from the headers and never crossed into the library (a value
the inline code folds at compile time, never passed to an fc__ entry point): its recorded "const" line is
dropped; a constant of that name that still exists fails.
"""
import argparse
import difflib
import re
import subprocess
import sys


def fingerprint(layout, api):
    out = subprocess.run([layout], capture_output=True, text=True, check=True).stdout.strip().split("\n")
    names = sorted(ln.strip() for ln in open(api, encoding="utf-8") if ln.startswith("fc__"))
    return out + ["entry %s" % n for n in names]


def blocks(path):
    res, cur, renames, private = {}, None, [], []
    for ln in open(path, encoding="utf-8"):
        ln = ln.rstrip("\n")
        if not ln or ln.startswith("#"):
            continue
        if ln.startswith("rename ") and cur is None:
            w = ln.split()
            if len(w) != 4 or w[2].split(".")[0] != w[3].split(".")[0]:
                sys.exit("check_layout: %s: malformed rename line: %s" % (path, ln))
            renames.append(w[1:])
            continue
        if ln.startswith("private ") and cur is None:
            w = ln.split()
            if len(w) != 3:
                sys.exit("check_layout: %s: malformed private line: %s" % (path, ln))
            private.append(w[1:])
            continue
        if ln.startswith("abi "):
            cur = ln.split()[1]
            if cur in res:
                sys.exit("check_layout: %s has two blocks for abi %s" % (path, cur))
            res[cur] = [ln]
        elif ln == "end":
            cur = None
        elif cur is not None:
            res[cur].append(ln)
    for abi, old, new in renames:
        if abi not in res:
            sys.exit("check_layout: %s: rename for abi %s, which has no block" % (path, abi))
        hits = [i for i, ln in enumerate(res[abi]) if ln.split()[:2] == ["field", old]]
        if len(hits) != 1:
            sys.exit("check_layout: %s: rename of %s: abi %s records no such field" % (path, old, abi))
        w = res[abi][hits[0]].split()
        res[abi][hits[0]] = " ".join(["field", new] + w[2:])  # offset and size unchanged: compared as recorded
    for abi, name in private:
        hits = [i for i, ln in enumerate(res.get(abi, [])) if ln.split()[:2] == ["const", name]]
        if len(hits) != 1:
            sys.exit("check_layout: %s: private %s: abi %s records no such constant" % (path, name, abi))
        del res[abi][hits[0]]
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layout", required=True)
    ap.add_argument("--api", required=True)
    ap.add_argument("--file", required=True)
    ap.add_argument("--so")
    ap.add_argument("--update", action="store_true")
    a = ap.parse_args()
    now = fingerprint(a.layout, a.api)
    abi = now[0].split()[1]
    known = blocks(a.file)
    if a.update:
        if abi in known:
            if known[abi] == now:
                print("check_layout: abi %s already recorded, unchanged" % abi)
                return 0
            print("check_layout: abi %s is already recorded with another layout: a block is never rewritten; "
                  "bump FASTCLOCK_ABI in include/fastclock.h" % abi)
            return 1
        with open(a.file, "a", encoding="utf-8") as f:
            f.write("\n".join(now) + "\nend\n")
        print("check_layout: appended the fingerprint of abi %s to %s" % (abi, a.file))
        return 0
    errors = []
    if abi not in known:
        errors.append("FASTCLOCK_ABI %s has no fingerprint in %s: run tests/abi/check_layout.py --update "
                      "(as ctest -R abi_layout prints)" % (abi, a.file))
    elif known[abi] != now:
        diff = "\n".join(difflib.unified_diff(known[abi], now, "recorded abi " + abi, "headers now", lineterm=""))
        errors.append("the ABI layout changed without a SONAME bump (FASTCLOCK_ABI is still %s, "
                      "libfastclock.so.%s): bump FASTCLOCK_ABI in include/fastclock.h and record the new "
                      "fingerprint with --update (docs/ABI.md)\n%s" % (abi, abi, diff))
    if a.so:
        dyn = subprocess.run(["objdump", "-p", a.so], capture_output=True, text=True, check=True).stdout
        m = re.search(r"SONAME\s+(\S+)", dyn)
        if not m or m.group(1) != "libfastclock.so.%s" % abi:
            errors.append("%s has SONAME %s, not libfastclock.so.%s (FASTCLOCK_ABI)" %
                          (a.so, m.group(1) if m else "none", abi))
        rt = subprocess.run([a.layout, "--runtime"], capture_output=True, text=True, check=True).stdout.strip()
        if rt != abi:
            errors.append("the library's fc_abi() is %s, the headers' FASTCLOCK_ABI %s" % (rt, abi))
    for e in errors:
        print("check_layout: " + e)
    print("check_layout: abi %s, %d fingerprint lines: %s" % (abi, len(now), "FAIL" if errors else "ok"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
