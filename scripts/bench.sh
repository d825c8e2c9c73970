#!/usr/bin/env bash
# The main job: install what is needed, build, then
#   1. the side-by-side benchmark (bench/run.sh): `fastclock bench` run several times, every clock measured
#      side by side, fastclock vs the vDSO vs the raw counter as ratios taken within each round, the median
#      of the runs as markdown tables, plus instruction counts;
#   2. the machine survey: `fastclock info`, `fastclock check` (agreement with the kernel), and `fastclock
#      report` drawing the first benchmark run (PNG + one HTML page).
# Usage: scripts/bench.sh [--quick]        results land in build/survey/
set -euo pipefail
cd "$(dirname "$0")/.."

QUICK=0
for a in "$@"; do # parsed before anything is installed or built
  case $a in
    --quick) QUICK=1 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench.sh: unknown argument '$a' (use --quick or --help)" >&2; exit 2 ;;
  esac
done

./scripts/setup.sh
cmake --preset dev >/dev/null
cmake --build --preset dev -j "$(nproc)"
FC=build/dev/tools/fastclock/fastclock
OUT=build/survey
mkdir -p "$OUT"

echo "=== 1. side-by-side benchmark (bench/run.sh) ==="
if ((QUICK)); then
  RUNS=1 NO_CALLGRIND=1 OUT_DIR="$OUT" bench/run.sh --duration 5
else
  OUT_DIR="$OUT" bench/run.sh
fi

echo
echo "=== 2. survey of this machine (fastclock info / check / report) ==="
"$FC" info
"$FC" check --duration "$( ((QUICK)) && echo 1 || echo 5)"
"$FC" report "$OUT/run1.json" -o "$OUT"
echo
echo "benchmark runs: $OUT/run*.json; pictures: $OUT/*.png; page: $OUT/report.html"
