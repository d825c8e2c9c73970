#!/usr/bin/env python3
"""The shared library exports exactly the documented API, and the headers document exactly that API.

  check_exports.py --cc CC --nm NM --include DIR --api cmake/fastclock.api [--so libfastclock.so]
                   [--static libfastclock.a]

Three lists must be equal:
  api      cmake/fastclock.api (what the version script exports);
  headers  every name <fastclock.h> declares with FC_API (preprocessed with FC_API defined as a marker), and
           no other non-static function or extern object declared in the public headers (it would be hidden:
           a link error for every application that calls it);
  so       `nm -D --defined-only` of the shared library (with --so).
With --static: every external symbol the static library defines is in the api list or starts with the
reserved prefix fc__ (so an application's own names cannot collide with the library's in a static link);
names starting with __ are the compiler's (ASan's __odr_asan.*), reserved to the implementation anyway.
Exit 0 when all hold, 1 with each difference named.
"""
import argparse
import re
import subprocess
import sys

MARK = "FC_API_EXPORT_MARK__"


def api_list(path):
    names = []
    with open(path, encoding="utf-8") as f:
        for ln in f:
            ln = ln.strip()
            if ln and not ln.startswith("#"):
                names.append(ln)
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        sys.exit("check_exports: %s lists %s more than once" % (path, ", ".join(dup)))
    return set(names)


def header_decls(cc, include):
    """(exported, hidden): names declared in the public headers with and without FC_API."""
    src = '#include "fastclock.h"\n#include "fastclock/fc_counter.h"\n#include "fastclock/fc_hand.h"\n'
    out = subprocess.run([cc, "-E", "-D_GNU_SOURCE", "-DFC_API=" + MARK, "-I", include, "-x", "c", "-"],
                         input=src, capture_output=True, text=True)
    if out.returncode:
        sys.exit("check_exports: preprocessing the headers failed:\n" + out.stderr)
    # keep only the text that comes from the public headers
    text, ours = [], False
    for ln in out.stdout.split("\n"):
        m = re.match(r'^# \d+ "([^"]*)"', ln)
        if m:
            ours = m.group(1).startswith(include.rstrip("/") + "/")
            continue
        if ours:
            text.append(ln)
    text = " ".join(text)
    exported, hidden = set(), set()
    depth, stmt = 0, []
    for ch in text:
        if ch == "{":
            depth += 1
            stmt.append(ch)
        elif ch == "}":
            depth -= 1
            stmt.append(ch)
            if depth == 0 and re.search(r"\)\s*(__attribute__\s*\(\(.*\)\)\s*)?\{", "".join(stmt)):
                stmt = []  # a function definition (static inline): not a declaration
        elif ch == ";" and depth == 0:
            s = " ".join("".join(stmt).split())
            stmt = []
            if not s or "{" in s or re.search(r"\btypedef\b", s) or re.match(r"static\b", s):
                continue
            m = re.search(r"\b([A-Za-z_]\w*)\s*\(", s) if "(" in s else None
            if m and not s.startswith("__attribute__"):
                name = m.group(1)
            elif s.startswith("extern") and "(" not in s:
                name = re.findall(r"[A-Za-z_]\w*", s)[-1]
            else:
                continue  # a forward declaration (struct x;)
            (exported if MARK in s else hidden).add(name)
        else:
            stmt.append(ch)
    return exported, hidden


def nm(nm_tool, args, path):
    out = subprocess.run([nm_tool] + args + [path], capture_output=True, text=True)
    if out.returncode:
        sys.exit("check_exports: %s %s failed:\n%s" % (nm_tool, " ".join(args), out.stderr))
    return out.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cc", required=True)
    ap.add_argument("--nm", required=True)
    ap.add_argument("--include", required=True)
    ap.add_argument("--api", required=True)
    ap.add_argument("--so")
    ap.add_argument("--static")
    a = ap.parse_args()
    errors = []
    api = api_list(a.api)
    exported, hidden = header_decls(a.cc, a.include)
    for n in sorted(api - exported):
        errors.append("%s is in %s but no public header declares it with FC_API" % (n, a.api))
    for n in sorted(exported - api):
        errors.append("%s is declared FC_API in the headers but missing from %s" % (n, a.api))
    for n in sorted(hidden):
        errors.append("%s is declared in the public headers without FC_API (it would not be exported)" % n)
    if a.so:
        so = set()
        for ln in nm(a.nm, ["-D", "--defined-only"], a.so).split("\n"):
            f = ln.split()
            if len(f) == 3 and f[1] not in "wWvV":
                so.add(f[2].split("@")[0])
        for n in sorted(so - api):
            errors.append("%s exports %s, which is not in %s" % (a.so, n, a.api))
        for n in sorted(api - so):
            errors.append("%s does not export %s, listed in %s" % (a.so, n, a.api))
    if a.static:
        for ln in nm(a.nm, ["--defined-only", "--extern-only"], a.static).split("\n"):
            f = ln.split()
            # names starting with __ are the implementation's (sanitizers add __odr_asan.*), not ours
            if len(f) == 3 and f[2] not in api and not f[2].startswith(("fc__", "__")):
                errors.append("%s defines %s: neither API nor the reserved prefix fc__" % (a.static, f[2]))
    for e in errors:
        print("check_exports: " + e)
    print("check_exports: %d names in %s; %s" % (len(api), a.api, "FAIL" if errors else "ok"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
