#!/usr/bin/env python3
"""Tests of the fastclock command-line tool that need the venv (jsonschema, pandas, matplotlib).

Usage: cli_test.py --bin FASTCLOCK --source SRC --work DIR TEST
Each TEST is one ctest test (tests/cli/CMakeLists.txt). No test depends on a timing threshold: they check
shapes, types, exit codes and files, never speed.
"""
import argparse
import json
import os
import struct
import subprocess
import sys

A = None


def run(args, env=None, check_rc=0):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([A.bin] + args, capture_output=True, text=True, env=e, timeout=120)
    if check_rc is not None and p.returncode != check_rc:
        sys.exit(f"FAIL: fastclock {' '.join(args)}: exit {p.returncode}, expected {check_rc}\n"
                 f"stdout:\n{p.stdout[-3000:]}\nstderr:\n{p.stderr[-3000:]}")
    return p


def validator(command):
    import jsonschema

    with open(os.path.join(A.source, "docs", "bench.schema.json")) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    # Validate against the command's own definition: oneOf's errors do not say which member failed.
    sub = dict(schema["$defs"][command])
    sub["$defs"] = schema["$defs"]
    return jsonschema.Draft202012Validator(sub), jsonschema.Draft202012Validator(schema)


def validate(doc, command):
    v, whole = validator(command)
    errs = sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errs:
        for e in errs[:10]:
            print(f"schema: {list(e.absolute_path)}: {e.message[:300]}", file=sys.stderr)
        sys.exit(f"FAIL: {len(errs)} schema violations ({command})")
    whole.validate(doc)  # and against the top-level oneOf


BENCH_CLOCKS = "fc_mono_ns,clock_gettime.MONOTONIC*,time,std::chrono::steady_clock"
BENCH_EXPECT = ["time", "clock_gettime.MONOTONIC", "clock_gettime.MONOTONIC_RAW",
                "clock_gettime.MONOTONIC_COARSE", "fc_mono_ns", "std::chrono::steady_clock"]


def t_bench_json():
    p = run(["bench", "--json", "--duration", "0.6", "--threads", "2", "--clocks", BENCH_CLOCKS])
    doc = json.loads(p.stdout)
    validate(doc, "bench")
    names = [c["name"] for c in doc["clocks"]]
    assert names == BENCH_EXPECT, names
    for c in doc["clocks"]:
        assert [t["threads"] for t in c["threads"]] == [1, 2], c["threads"]
        h = c["deltas"]["histogram"]
        assert len(h["edges_ns"]) == len(h["counts"]) + 1
        assert sum(h["counts"]) + h["zero"] + h["negative"] == c["deltas"]["samples"], c["name"]
        assert c["cost"]["min_ns"] <= c["cost"]["median_ns"] <= c["cost"]["max_ns"]
    a = doc["agreement"]
    assert a["samples"] == len(a["t_s"]) == len(a["mono_err_ns"]) == len(a["real_half_ns"]) > 0
    assert p.stderr == "", "progress output on a non-tty stderr: " + p.stderr[:200]


def t_bench_csv():
    import io

    import pandas as pd

    p = run(["bench", "--csv", "--duration", "0.4", "--threads", "1", "--clocks", "fc_mono_ns,time"])
    df = pd.read_csv(io.StringIO(p.stdout))
    assert list(df.columns) == ["clock", "stat", "value"], df.columns
    assert set(df["clock"]) == {"fc_mono_ns", "time"}, set(df["clock"])
    assert pd.api.types.is_float_dtype(df["value"]) or pd.api.types.is_numeric_dtype(df["value"])
    wide = df.pivot(index="clock", columns="stat", values="value")
    for stat in ["cost_ns", "cost_p25_ns", "cost_p75_ns", "staleness", "backward_steps", "delta_min_ns",
                 "delta_p25_ns", "delta_p50_ns", "delta_p75_ns", "delta_p99_ns", "delta_max_ns",
                 "observed_resolution_ns", "calls_per_s_t1", "efficiency_t1", "cpu_share_t1"]:
        assert stat in wide.columns, stat
    assert wide.loc["time", "staleness"] > 0.5  # time() ticks once a second: almost every delta is 0
    assert wide.loc["fc_mono_ns", "cost_ns"] > 0
    assert not df.duplicated(["clock", "stat"]).any()


def t_check_json():
    p = run(["check", "--json", "--duration", "0.5"])
    doc = json.loads(p.stdout)
    validate(doc, "check")
    assert doc["passed"] is True and doc["violations"]["total"] == 0, doc["violations"]
    assert doc["bracketed_reads"] > 0 and doc["pingpong_rounds"] > 0


def t_check_json_injected():
    p = run(["check", "--json", "--duration", "0.3"], env={"FASTCLOCK_CHECK_INJECT": "backstep"}, check_rc=1)
    doc = json.loads(p.stdout)
    validate(doc, "check")
    assert doc["passed"] is False and doc["inject"] == "backstep"
    assert doc["violations"]["mono_backward"] >= 1, doc["violations"]
    assert doc["first_violations"], doc


def t_info_json():
    p = run(["info", "--json"])
    doc = json.loads(p.stdout)
    validate(doc, "info")
    ids = [r["clock"] for r in doc["vdso"]["clocks"]]
    for want in ["REALTIME", "MONOTONIC", "MONOTONIC_RAW", "BOOTTIME", "TAI", "REALTIME_COARSE",
                 "MONOTONIC_COARSE", "PROCESS_CPUTIME_ID", "THREAD_CPUTIME_ID"]:
        assert want in ids, want
    assert doc["recommendation"].strip()


def t_fixtures_validate():
    for name, cmd in (("bench_small.json", "bench"), ("check_small.json", "check")):
        with open(os.path.join(A.source, "tests", "cli", "fixtures", name)) as f:
            validate(json.load(f), cmd)


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def expected_pngs(doc):
    """docs/cli.md's sizes, computed here independently of the renderer."""
    if doc["command"] == "check":
        return {"agreement.png": (1200, 600)}
    n = len(doc["clocks"])
    rows = -(-n // 4)
    return {"cost.png": (1200, 200 + 30 * n), "deltas.png": (1200, 260 * rows), "scaling.png": (1200, 600),
            "agreement.png": (1200, 600)}


def render(fixture, outname):
    path = os.path.join(A.source, "tests", "cli", "fixtures", fixture)
    out = os.path.join(A.work, outname)
    if os.path.isdir(out):
        for f in os.listdir(out):
            os.unlink(os.path.join(out, f))
    env = {"FASTCLOCK_PYTHON": sys.executable}
    run(["report", path, "-o", out], env=env)
    with open(path) as f:
        doc = json.load(f)
    want = expected_pngs(doc)
    pngs = sorted(f for f in os.listdir(out) if f.endswith(".png"))
    assert pngs == sorted(want), (pngs, sorted(want))
    for name, size in want.items():
        p = os.path.join(out, name)
        assert os.path.getsize(p) > 1000, f"{name} is nearly empty"
        assert png_size(p) == size, (name, png_size(p), size)
    with open(os.path.join(out, "report.html"), encoding="utf-8") as f:
        page = f.read()
    assert page.count('src="data:image/png;base64,') == len(want), "HTML does not embed every image"
    assert "http://" not in page and "https://" not in page, "HTML is not self-contained"
    if doc["command"] == "bench":
        for c in doc["clocks"]:
            assert c["name"] in page, c["name"]


def t_report_bench_fixture():
    render("bench_small.json", "report_bench")


def t_report_check_fixture():
    render("check_small.json", "report_check")


def t_report_rejects_non_fastclock_json():
    bad = os.path.join(A.work, "not_fastclock.json")
    with open(bad, "w") as f:
        json.dump({"hello": "world"}, f)
    p = run(["report", bad, "-o", os.path.join(A.work, "report_bad")],
            env={"FASTCLOCK_PYTHON": sys.executable}, check_rc=2)
    assert "not_fastclock.json" in p.stderr, p.stderr


TESTS = {name[2:]: fn for name, fn in globals().items() if name.startswith("t_") and callable(fn)}


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("test", choices=sorted(TESTS))
    A = ap.parse_args()
    os.makedirs(A.work, exist_ok=True)
    try:
        TESTS[A.test]()
    except AssertionError as e:
        sys.exit(f"FAIL: {A.test}: {e}")
    print(f"ok: {A.test}")


if __name__ == "__main__":
    main()
