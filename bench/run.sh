#!/usr/bin/env bash
# The side-by-side benchmark: builds the dev configuration if needed, runs fc_bench with full rounds (the
# table, the ratio table as markdown, thread scaling, JSON), then the instruction counts if valgrind is here.
# Expects the dependencies installed (scripts/setup.sh); does not install anything.
#
# Usage: bench/run.sh [fc_bench options...]      e.g. bench/run.sh --threads 16
# Environment: BUILD_DIR (default build/dev, configured with `cmake --preset dev`),
#              BENCH_JSON (default $BUILD_DIR/fc_bench.json), NO_CALLGRIND=1 to skip the instruction counts.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build/dev}
BENCH_JSON=${BENCH_JSON:-$BUILD_DIR/fc_bench.json}

if [ "$BUILD_DIR" = build/dev ] && [ ! -f build/dev/build.ninja ]; then
  cmake --preset dev
fi
if [ "$BUILD_DIR" = build/dev ]; then
  cmake --build --preset dev --target fc_bench fc_icount
else
  cmake --build "$BUILD_DIR" --target fc_bench fc_icount
fi

echo
"$BUILD_DIR/bench/fc_bench" --markdown --json "$BENCH_JSON" "$@"
echo "(JSON: $BENCH_JSON)"

if [ "${NO_CALLGRIND:-0}" != 1 ]; then
  echo # callgrind.sh falls back to the single-step counts alone where valgrind is missing
  BUILD_DIR="$BUILD_DIR" bench/callgrind.sh
fi
