#!/usr/bin/env python3
"""tests/mutation — the mutation gate: the mutant list, the exact-text patches, the runs and the table.

Each mutant is a list of exact-text edits (file, old, new). An edit whose old text is not found exactly once
stops the gate with an error naming the mutant, so the list cannot silently rot when the code moves.
For each mutant: copy the tree (src, include, tests, CMake files) into the gate's own directory, apply the
edits, build only the targets its tests need (own build dir, reused across mutants: ninja rebuilds what changed),
run its tests RUNS times, and record which test killed it. Prints a markdown table; exit 1 if a mutant that
must be killed survived a run. Called by tests/mutation/run.sh; uses only the Python standard library.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
H = "include/fastclock/fc_hand.h"
W = "src/hands.c"
T = "src/track.c"

IL = "^interleave_"
UNIT = "^(Arith|Hands|Track)\\."
REPLAY = "^replay_fuzz_track_seeds$"
SIM = "^sim_(wrap32|kernel_fallback|steady|slew_chrony|suspend_counter_runs|migrate_jump|migrate_rate)$"

# name, group, edits, test regex, targets, note. group "protocol" runs in CI; "arith" by hand (run.sh --all).
# note: "" (must be killed) or why a survivor is expected (kept in the table, not a gate failure).
X86_SAME = ("memory order only: the same x86-64 instructions (TSO); killed by the arm64 barrier check; "
            "the model's variant ")
MUTANTS = [
    ("R1_relaxed", "protocol", [(H, "th = __atomic_load_n(&pub->current, __ATOMIC_ACQUIRE);",
                                 "th = __atomic_load_n(&pub->current, __ATOMIC_RELAXED);")], IL, ["interleave"],
     "not a bug (model: RELAXED_R1, no violation: R3's fence orders R4); the barrier check keeps the documented acquire"),
    ("R2_relaxed", "protocol", [(H, "gen = __atomic_load_n(&th->gen, __ATOMIC_ACQUIRE);",
                                 "gen = __atomic_load_n(&th->gen, __ATOMIC_RELAXED);")], IL, ["interleave"],
     X86_SAME + "RELAXED_R2"),
    ("R3_fence_removed", "protocol", [(H, "\t\t__atomic_thread_fence(__ATOMIC_ACQUIRE);\n", "")], IL, ["interleave"],
     X86_SAME + "NO_R3_FENCE"),
    ("R4_recheck_removed", "protocol", [(H, "gen == 0 || gen != __atomic_load_n(&th->gen, __ATOMIC_RELAXED) ||",
                                         "gen == 0 ||")], IL, ["interleave"], ""),
    ("R4_zero_check_removed", "protocol", [(H, "gen == 0 || gen != __atomic_load_n(&th->gen, __ATOMIC_RELAXED) ||",
                                            "gen != __atomic_load_n(&th->gen, __ATOMIC_RELAXED) ||")], IL,
     ["interleave"],
     "needs weak memory: on x86-64 a reader that sees gen 0 also sees the pointer moved off its hand (R5 retries); "
     "on arm64 it may not"),
    ("R5_removed", "protocol", [(H, "(FC__TEST_POINT(FC__TP_R4), th != __atomic_load_n(&pub->current, __ATOMIC_RELAXED))",
                                 "(FC__TEST_POINT(FC__TP_R4), 0)")], IL, ["interleave"], ""),
    ("W1_removed", "protocol", [(W, "\t__atomic_store_n(&th->gen, 0, __ATOMIC_RELAXED);\n\t__atomic_thread_fence(__ATOMIC_RELEASE);\n",
                                 "")], IL, ["interleave"], ""),
    ("W1_fence_removed", "protocol", [(W, "\t__atomic_store_n(&th->gen, 0, __ATOMIC_RELAXED);\n\t__atomic_thread_fence(__ATOMIC_RELEASE);\n",
                                       "\t__atomic_store_n(&th->gen, 0, __ATOMIC_RELAXED);\n")], IL, ["interleave"],
     X86_SAME + "NO_W1_FENCE"),
    ("W3_removed", "protocol", [(W, "\t__atomic_store_n(&th->gen, gen, __ATOMIC_RELEASE);\n", "\t(void)gen;\n")], IL,
     ["interleave"], ""),
    ("W3_relaxed", "protocol", [(W, "__atomic_store_n(&th->gen, gen, __ATOMIC_RELEASE);",
                                 "__atomic_store_n(&th->gen, gen, __ATOMIC_RELAXED);")], IL, ["interleave"],
     X86_SAME + "RELAXED_W3"),
    ("W4_removed", "protocol", [(W, "\t__atomic_store_n(&pub->current, th, __ATOMIC_RELEASE);\n", "")], IL,
     ["interleave"], ""),
    ("W4_relaxed", "protocol", [(W, "__atomic_store_n(&pub->current, th, __ATOMIC_RELEASE);",
                                 "__atomic_store_n(&pub->current, th, __ATOMIC_RELAXED);")], IL, ["interleave"],
     "not a bug (model: RELAXED_W4, no violation: W1's fence orders the mark first); the barrier check keeps the documented release"),
    ("W4_first", "protocol", [(W, "\t__atomic_store_n(&pub->current, th, __ATOMIC_RELEASE);\n", ""),
                              (W, "\t__atomic_store_n(&th->gen, 0, __ATOMIC_RELAXED);\n",
                               "\t__atomic_store_n(&pub->current, th, __ATOMIC_RELEASE);\n"
                               "\t__atomic_store_n(&th->gen, 0, __ATOMIC_RELAXED);\n")], IL, ["interleave"], ""),
    ("gen_wrap_skip_removed", "protocol", [(W, "\tif (gen == 0) /* 0 means \"being written\": skip it on wrap */\n\t\tgen = 1;\n",
                                            "")], IL, ["interleave"], ""),
    ("one_hand", "protocol", [(H, "#define FC_HANDS 8", "#define FC_HANDS 1")], IL, ["interleave"], ""),
    # ---- arithmetic and tracking (run.sh --all) ----
    ("scale_64bit", "arith", [(H, "return (uint64_t)(((unsigned __int128)delta * mult + frac) >> 32);",
                               "return (uint64_t)(((unsigned __int128)(uint64_t)(delta * mult) + frac) >> 32);")],
     UNIT + "|" + SIM, ["unit_tests", "fc_sim"], ""),
    ("wrap_mask_dropped", "protocol", [(H, "delta = (counter() - FC__LOAD(th->base_ticks)) & FC__LOAD(th->mask);",
                                     "delta = (counter() - FC__LOAD(th->base_ticks));")],
     IL, ["interleave"], ""),
    ("expired_floor_removed", "arith", [(T, "V = expired_floor(old, K + half, od, end_val);",
                                         "(void)expired_floor(old, K + half, od, end_val);\n\t\t\tV = K;")],
     UNIT + "|" + SIM + "|" + REPLAY, ["unit_tests", "fc_sim", "replay_fuzz_track"], ""),
    ("rate_clamp_removed", "arith", [(T, "\tif (m < (i128)mult - (i128)(mult / SLEW_DIV))\n\t\tm = (i128)mult - (i128)(mult / SLEW_DIV);\n"
                                      "\tif (m > (i128)mult + (i128)(mult / SLEW_DIV))\n\t\tm = (i128)mult + (i128)(mult / SLEW_DIV);\n", "")],
     UNIT + "|" + SIM, ["unit_tests", "fc_sim"], ""),
    ("kernel_fallback_floor_removed", "arith", [("src/clock.c", "\t\t\tv = h->floor_ns;\n", "\t\t\t(void)0;\n")],
     UNIT + "|" + SIM + "|^probe_runtime_demotion", ["unit_tests", "fc_sim", "fc_probe"], ""),
]

COPY = ["CMakeLists.txt", "CMakePresets.json", "cmake", "include", "src", "tests", "tools", "bench"]


def sh(cmd, cwd, log):
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        return subprocess.run(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT).returncode


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--group", default="protocol", help="protocol, arith or all")
    ap.add_argument("--only", default="", help="regex on mutant names")
    ap.add_argument("--dir", default=os.path.join(ROOT, "build", "mutation"))
    ap.add_argument("--jobs", default=os.environ.get("JOBS", "2"))
    a = ap.parse_args()

    todo = [m for m in MUTANTS if (a.group == "all" or m[1] == a.group) and re.search(a.only, m[0])]
    if not todo:
        sys.exit("no mutant matches --group %s --only '%s'" % (a.group, a.only))
    tree, bdir, log = os.path.join(a.dir, "tree"), os.path.join(a.dir, "build"), os.path.join(a.dir, "log.txt")
    os.makedirs(a.dir, exist_ok=True)
    open(log, "w").close()

    def copy_tree():
        for p in COPY:
            s, d = os.path.join(ROOT, p), os.path.join(tree, p)
            if os.path.isdir(s):
                shutil.copytree(s, d, dirs_exist_ok=True)
            elif os.path.exists(s):
                os.makedirs(os.path.dirname(d), exist_ok=True)
                shutil.copy2(s, d)

    # Check every edit against the pristine tree first, so a stale list fails before any build.
    for name, _, edits, *_ in todo:
        for f, old, _ in edits:
            n = open(os.path.join(ROOT, f)).read().count(old)
            if n != 1:
                sys.exit("mutant %s: target text found %d times in %s (expected once):\n%s" % (name, n, f, old))

    if os.path.isdir(tree):
        shutil.rmtree(tree)
    copy_tree()
    if sh(["cmake", "-S", tree, "-B", bdir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
           "-DFASTCLOCK_BUILD_BENCH=OFF", "-DFASTCLOCK_BUILD_TOOLS=OFF"], ROOT, log):
        sys.exit("configure failed, see " + log)

    rows, bad, t0 = [], 0, time.time()
    for name, group, edits, regex, targets, note in todo:
        originals = {}
        for f, old, new in edits:
            p = os.path.join(tree, f)
            if p not in originals:
                originals[p] = open(p).read()
            text = open(p).read()
            open(p, "w").write(text.replace(old, new, 1))
        try:
            built = sh(["cmake", "--build", bdir, "-j", a.jobs, "--target"] + targets, ROOT, log) == 0
            killed, killer = 0, {}
            if not built:
                killed, killer = a.runs, {"(does not build)": a.runs}
            else:
                for _ in range(a.runs):
                    out = subprocess.run(["ctest", "--test-dir", bdir, "-R", regex, "-j", a.jobs, "--timeout", "60"],
                                         cwd=ROOT, capture_output=True, text=True)
                    with open(log, "a") as f:
                        f.write("== %s ==\n%s\n" % (name, out.stdout[-4000:]))
                    failed = re.findall(r"^\s*\d+ - (\S+) \(", out.stdout, re.M)
                    ran = re.search(r"tests passed, \d+ tests failed out of (\d+)", out.stdout)
                    if not ran or int(ran.group(1)) == 0:
                        sys.exit("mutant %s: no test matched '%s'" % (name, regex))
                    if out.returncode != 0:
                        killed += 1
                        for t in failed or ["(ctest failed)"]:
                            killer[t] = killer.get(t, 0) + 1
        finally:
            for p, text in originals.items():
                open(p, "w").write(text)
        first = sorted(killer, key=lambda k: -killer[k])
        who = ", ".join(first[:2]) + (" (+%d)" % (len(first) - 2) if len(first) > 2 else "") if first else "—"
        verdict = "killed" if killed == a.runs else ("survived (expected)" if note else "SURVIVED")
        if killed != a.runs and not note:
            bad += 1
        rows.append((name, group, who, "%d / %d" % (killed, a.runs), verdict, note))
        print("%-30s %-7s %d/%d %s" % (name, verdict, killed, a.runs, who), flush=True)
    print()
    print("| mutant | group | killed by | runs killed / tried | result | note |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print("| `%s` | %s | %s | %s | %s | %s |" % r)
    print("\n%d mutants, %d unexpected survivors, %.0f s (log: %s)" % (len(rows), bad, time.time() - t0, log))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
