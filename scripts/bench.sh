#!/usr/bin/env bash
# The main job: install what it needs (scripts/setup.sh --bench: a compiler, CMake, Ninja, Python 3 with
# matplotlib and jsonschema; nothing else), build the library and the tool (preset bench: no tests), then
#   1. the side-by-side benchmark (bench/run.sh): `fastclock bench` run several times, every clock measured
#      side by side, fastclock vs the vDSO vs the raw counter as ratios taken within each round, the median
#      of the runs as markdown tables (tables.md), plus instruction counts where valgrind is installed;
#   2. the machine survey: `fastclock info`, `fastclock check` (agreement with the kernel), and `fastclock
#      report` drawing the combined runs: a verdict line, the headline table (summary.md, summary.csv), PNGs
#      and one HTML page.
# Usage: scripts/bench.sh [--quick]     results land in build/survey/<UTC time>/ (build/survey/latest links it)
set -euo pipefail
cd "$(dirname "$0")/.."

QUICK=0
for a in "$@"; do # parsed before anything is installed or built
  case $a in
    --quick) QUICK=1 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench.sh: unknown argument '$a' (use --quick or --help)" >&2; exit 2 ;;
  esac
done

./scripts/setup.sh --bench
cmake --preset bench >/dev/null
cmake --build --preset bench -j "$(nproc)"
FC=build/bench/tools/fastclock/fastclock
OUT=build/survey/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$OUT"
ln -sfn "$(basename "$OUT")" build/survey/latest

echo "=== 1. side-by-side benchmark (bench/run.sh) ==="
if ((QUICK)); then
  BUILD_DIR=build/bench RUNS=1 NO_CALLGRIND=1 OUT_DIR="$OUT" bench/run.sh --duration 5 | tee "$OUT/tables.md"
else
  BUILD_DIR=build/bench OUT_DIR="$OUT" bench/run.sh | tee "$OUT/tables.md"
fi

echo
echo "=== 2. survey of this machine (fastclock info / check / report) ==="
"$FC" info | tee "$OUT/info.txt"
"$FC" check --duration "$( ((QUICK)) && echo 1 || echo 5)" --json >"$OUT/check.json" || true
"$FC" report "$OUT/check.json" -o "$OUT/check" >/dev/null
"$FC" report "$OUT"/run*.json -o "$OUT" >"$OUT/report.txt"
echo
head -1 "$OUT/report.txt"   # the verdict line
echo "runs: $OUT/run*.json; headline table: $OUT/summary.md, $OUT/summary.csv; pictures: $OUT/*.png;"
echo "page: $OUT/report.html; check: $OUT/check.json (pictures in $OUT/check/)"
