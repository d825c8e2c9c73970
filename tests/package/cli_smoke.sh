#!/usr/bin/env bash
# Runs an installed or extracted `fastclock` the way a user would, from its own prefix (sourced by
# run_standalone.sh and run_deb.sh): info, bench --list, a short bench, check --duration 1, and report on a
# committed fixture. report needs matplotlib: with FASTCLOCK_PYTHON set (the venv) it must render; without
# it, it must either render or fail with exit 1 and a message naming matplotlib (the clear message kept).
#   cli_smoke BIN FIXTURE_JSON WORK; sets fails (count) and prints one line per failure.
cli_smoke() {
  local bin=$1 fixture=$2 work=$3 rc
  mkdir -p "$work"
  "$bin" info >"$work/info.txt" 2>&1 && grep -q '^recommendation' "$work/info.txt" || fail "$bin info"
  "$bin" bench --list >"$work/list.txt" 2>&1 && grep -q '^fc_mono_ns ' "$work/list.txt" || fail "$bin bench --list"
  "$bin" bench --duration 0.3 --threads 1 --clocks fc_mono_ns,clock_gettime.MONOTONIC >"$work/bench.txt" 2>&1 &&
    grep -q '^fc_mono_ns ' "$work/bench.txt" || fail "$bin bench (short)"
  "$bin" check --duration 1 >"$work/check.txt" 2>&1 && grep -q '^PASS$' "$work/check.txt" || fail "$bin check --duration 1"
  "$bin" report "$fixture" -o "$work/report" >"$work/report.txt" 2>&1; rc=$?
  if [ $rc -eq 0 ]; then
    [ -s "$work/report/report.html" ] || fail "$bin report: exit 0 but no report.html"
  elif [ -n "${FASTCLOCK_PYTHON:-}" ] || [ $rc -ne 1 ] || ! grep -qi matplotlib "$work/report.txt"; then
    fail "$bin report exited $rc: $(head -3 "$work/report.txt")"
  fi
  grep -q "cannot read the report script" "$work/report.txt" && fail "$bin report did not find its installed script"
  return 0
}
