#!/usr/bin/env python3
"""Combine several `fc_bench --json` runs into the markdown tables of docs/PERFORMANCE.md.

Per candidate: the median over runs of each run's median ns/call, of its p25 and p75, and of its ratios
(each run's ratio is itself the median of per-round ratios); the range of the runs' medians shows how much
whole runs disagree. Scaling: the median over runs of each point's calls/s, efficiency and CPU share.

usage: bench/combine_runs.py run1.json run2.json run3.json
"""
import json
import statistics
import sys


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float("nan")


def main(paths):
    runs = [json.load(open(p)) for p in paths]
    base = {"ordered": None, "raw": None}
    names = [c["name"] for c in runs[0]["candidates"]]
    for c in runs[0]["candidates"]:
        if c["group"] == "counter" and c["name"] in ("rdtsc", "cntvct"):
            base["raw"] = c["name"]
        if c["group"] == "counter" and c["name"] in ("lfence;rdtsc", "isb;cntvct"):
            base["ordered"] = c["name"]
    print(f"{len(runs)} runs: " + ", ".join(
        f"{r['config']['rounds']} rounds x {r['config']['batch_ms']} ms" for r in runs))
    print()
    print("| clock | median ns/call | p25 – p75 | runs' medians | x vDSO MONOTONIC | x counter | counter |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for n in names:
        cs = [next(c for c in r["candidates"] if c["name"] == n) for r in runs]
        meds = [c["median"] for c in cs]
        print(f"| `{n}` | {med(meds):.2f} | {med([c['p25'] for c in cs]):.2f} – {med([c['p75'] for c in cs]):.2f} "
              f"| {min(meds):.2f} – {max(meds):.2f} | {med([c['x_vdso'] for c in cs]):.2f} "
              f"| {med([c['x_counter'] for c in cs]):.2f} | `{base[cs[0]['counter_base']]}` |")
    clocks = runs[0]["scaling"]["clocks"]
    if clocks:
        threads = [p["threads"] for p in clocks[0]["points"]]
        print()
        print("| clock | " + " | ".join(f"{t} thr: Mcalls/s, eff, cpu" for t in threads) + " |")
        print("|---|" + "---:|" * len(threads))
        for k, c in enumerate(clocks):
            cells = []
            for j in range(len(threads)):
                ps = [r["scaling"]["clocks"][k]["points"][j] for r in runs]
                cells.append(f"{med([p['calls_per_s'] for p in ps]) / 1e6:.1f}, "
                             f"{med([p['efficiency'] for p in ps]):.2f}, {med([p['cpu_share'] for p in ps]):.2f}")
            print(f"| `{c['name']}` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
