#!/usr/bin/env python3
"""Combine several `fastclock bench --json` runs into the markdown tables of docs/PERFORMANCE.md.

Per clock: the median over runs of each run's median ns/call, of its p25 and p75, and of its ratios (each
run's ratio is itself the median of per-round ratios, taken within one round); "runs' medians" is the lowest
and highest of the runs' medians, to show how much whole runs disagree. Threads: the median over runs of each
point's calls/s, efficiency and CPU share. Only the standard library: runs with Debian's python3.

usage: bench/combine_runs.py run1.json [run2.json ...]
"""
import json
import statistics
import sys


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float("nan")


def main(paths):
    runs = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            doc = json.load(f)
        if doc.get("schema") != "fastclock-bench/1":
            sys.exit(f"combine_runs.py: {p}: not the JSON of 'fastclock bench --json' (schema {doc.get('schema')!r})")
        runs.append(doc)
    names = [c["name"] for c in runs[0]["clocks"]]
    for p, r in zip(paths, runs):
        if [c["name"] for c in r["clocks"]] != names:
            sys.exit(f"combine_runs.py: {p} measured other clocks than {paths[0]}")
    h, fc = runs[0]["host"], runs[0]["fastclock"]
    print(f"{len(runs)} run{'s' if len(runs) != 1 else ''} of `fastclock bench` on {h['cpu_model']}, {h['ncpus']} CPUs, clocksource "
          f"`{h['clocksource']}`, Linux {h['kernel']}; fastclock backend `{fc['backend']}`; "
          + ", ".join(f"{r['clocks'][0]['cost']['reps']} rounds x {r['config']['batch_target_ns'] / 1e6:.3g} ms"
                      for r in runs)
          + (" (INTERRUPTED runs among them)" if any(r["interrupted"] for r in runs) else ""))
    print()
    print("| clock | median ns/call | p25 – p75 | runs' medians | x vDSO MONOTONIC | x counter | counter |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for k, n in enumerate(names):
        cs = [r["clocks"][k]["cost"] for r in runs]
        meds = [c["median_ns"] for c in cs if c["median_ns"] is not None]
        print(f"| `{n}` | {med(meds):.2f} | {med([c['p25_ns'] for c in cs]):.2f} – {med([c['p75_ns'] for c in cs]):.2f} "
              f"| {min(meds, default=float('nan')):.2f} – {max(meds, default=float('nan')):.2f} "
              f"| {med([c['x_vdso'] for c in cs]):.2f} | {med([c['x_counter'] for c in cs]):.2f} "
              f"| `{cs[0]['counter_base']}` |")
    threads = runs[0]["config"]["threads"]
    print()
    print("| clock | " + " | ".join(f"{t} thr: Mcalls/s, eff, cpu" for t in threads) + " |")
    print("|---|" + "---:|" * len(threads))
    for k, n in enumerate(names):
        cells = []
        for j in range(len(threads)):
            ps = [r["clocks"][k]["threads"][j] for r in runs if j < len(r["clocks"][k]["threads"])]
            cells.append(f"{med([p['calls_per_s'] for p in ps]) / 1e6:.1f}, {med([p['efficiency'] for p in ps]):.2f}, "
                         f"{med([p['cpu_share'] for p in ps]):.2f}" if ps else "-")
        print(f"| `{n}` | " + " | ".join(cells) + " |")
    pauses(runs)


def pause_text(ns):
    if not ns:
        return "0"
    return f"{ns / 1e3:g} us" if ns < 10**6 else f"{ns / 1e6:g} ms" if ns < 10**9 else f"{ns / 1e9:g} s"


def pauses(runs):
    """Reads after a pause: per pause the median over the runs that read it of fc_mono_ns's and clock_gettime's
    p50 / p90 / p99 and of each pair's ratios; runs without the section (older ones) are left out."""
    secs = [r["after_pause"] for r in runs if r.get("after_pause")]
    if not secs:
        return
    print()
    print(f"Reads after a pause ({len(secs)} run{'s' if len(secs) != 1 else ''}; one read timed alone, interleaved "
          "with the vDSO's; ns; x: fastclock / vDSO, p50 over p50 and p99 over p99):")
    print()
    print("| pause | reads | `fc_mono_ns` p50 / p90 / p99 | `clock_gettime` p50 / p90 / p99 | x p50 | x p99 "
          "| `fc_real_ns` x p50, p99 | `fc_clock_gettime` x p50, p99 | `fc_gettimeofday` x p50, p99 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for i, row in enumerate(secs[0]["rows"]):
        cells = []
        for j in range(len(row["pairs"])):
            cs = [s["rows"][i]["pairs"][j] for s in secs
                  if i < len(s["rows"]) and j < len(s["rows"][i]["pairs"]) and s["rows"][i]["pairs"][j]["samples"]]
            cells.append(({k: med([c[k] for c in cs]) for k in ("p50_ns", "p90_ns", "p99_ns", "vdso_p50_ns",
                                                                  "vdso_p90_ns", "vdso_p99_ns", "x_vdso_p50",
                                                                  "x_vdso_p99")}, sum(c["samples"] for c in cs)))
        m, n = cells[0]
        print(f"| {pause_text(row['pause_ns'])} | {n} | {m['p50_ns']:.0f} / {m['p90_ns']:.0f} / {m['p99_ns']:.0f} "
              f"| {m['vdso_p50_ns']:.0f} / {m['vdso_p90_ns']:.0f} / {m['vdso_p99_ns']:.0f} | {m['x_vdso_p50']:.2f} "
              f"| {m['x_vdso_p99']:.2f} | " + " | ".join(f"{c['x_vdso_p50']:.2f}, {c['x_vdso_p99']:.2f}"
                                                        for c, _ in cells[1:4]) + " |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
