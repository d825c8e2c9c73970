#!/usr/bin/env bash
# The main job: install what is needed, build, then
#   1. the side-by-side benchmark (bench/run.sh): fastclock vs the vDSO vs the raw counter, as ratios
#      measured in one run, plus instruction counts;
#   2. the machine survey with the fastclock tool: `fastclock info`, `fastclock bench` over every clock,
#      `fastclock check` (agreement with the kernel), and `fastclock report` (PNG + one HTML page).
# Usage: scripts/bench.sh [--quick]        results land in build/survey/
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

QUICK=0
for a in "$@"; do
  case $a in
    --quick) QUICK=1 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench.sh: unknown argument '$a' (use --quick or --help)" >&2; exit 2 ;;
  esac
done

cmake --preset dev >/dev/null
cmake --build --preset dev -j "$(nproc)"
FC=build/dev/tools/fastclock/fastclock
OUT=build/survey
mkdir -p "$OUT"

echo "=== 1. side-by-side benchmark (bench/run.sh) ==="
if ((QUICK)); then NO_CALLGRIND=1 bench/run.sh --quick; else bench/run.sh; fi

echo
echo "=== 2. survey of this machine (fastclock info / bench / check / report) ==="
"$FC" info
if ((QUICK)); then "$FC" bench --duration 3 --json > "$OUT/survey.json"; else "$FC" bench --json > "$OUT/survey.json"; fi
"$FC" check --duration "$( ((QUICK)) && echo 1 || echo 5)"
"$FC" report "$OUT/survey.json" -o "$OUT"
echo
echo "survey: $OUT/survey.json; pictures: $OUT/*.png; page: $OUT/report.html"
