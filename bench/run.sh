#!/usr/bin/env bash
# Drives the one engine, `fastclock bench`, for docs/PERFORMANCE.md: builds the dev configuration if needed,
# runs `fastclock bench --json` RUNS times (every clock side by side, ratios within each round, thread
# scaling), prints the median of the runs as markdown tables (bench/combine_runs.py), then the instruction
# counts (bench/callgrind.sh) when valgrind is here. Expects the dependencies installed (scripts/setup.sh).
#
# Usage: bench/run.sh [fastclock bench options...]     e.g. bench/run.sh --threads 16 --duration 40
# Environment: BUILD_DIR (default build/dev), RUNS (default 3), OUT_DIR (default $BUILD_DIR/bench-runs: one
#              runN.json per run), NO_CALLGRIND=1 to skip the instruction counts.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build/dev}
RUNS=${RUNS:-3}
OUT_DIR=${OUT_DIR:-$BUILD_DIR/bench-runs}
case $RUNS in ''|*[!0-9]*|0) echo "bench/run.sh: RUNS='$RUNS' is not a count >= 1" >&2; exit 2 ;; esac

if [ "$BUILD_DIR" = build/dev ] && [ ! -f build/dev/build.ninja ]; then
  cmake --preset dev >/dev/null
fi
cmake --build "$BUILD_DIR" --target fastclock_cli fc_icount >/dev/null
FC=$BUILD_DIR/tools/fastclock/fastclock
"$FC" bench --list >/dev/null "$@" # bad options fail here, before any run

mkdir -p "$OUT_DIR"
rm -f "$OUT_DIR"/run*.json
echo "load average before: $(cat /proc/loadavg)"
for i in $(seq 1 "$RUNS"); do
  echo "run $i of $RUNS: $FC bench --json $* > $OUT_DIR/run$i.json"
  "$FC" bench --json "$@" >"$OUT_DIR/run$i.json"
done
echo "load average after:  $(cat /proc/loadavg)"
echo
python3 bench/combine_runs.py "$OUT_DIR"/run*.json

if [ "${NO_CALLGRIND:-0}" != 1 ]; then
  echo # callgrind.sh falls back to the single-step counts alone where valgrind is missing
  BUILD_DIR="$BUILD_DIR" bench/callgrind.sh
fi
