#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what it needs, then builds and runs every preset.
#   scripts/test.sh            everything (dev, asan+ubsan, tsan, the timing-sensitive tests again under load,
#                              fuzz, aarch64 under qemu, install/consumer, lint, the protocol mutation gate)
#   scripts/test.sh dev tsan   only the named phases
set -uo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh || { echo "setup failed"; exit 1; }

export JOBS=$(nproc)
phases=("$@")
((${#phases[@]})) || phases=(dev asan tsan load fuzz aarch64 package lint mutation)
passed=0; failed=0; failures=()

# No phase may hang CI: each gets PHASE_TIMEOUT seconds (ctest also limits every test, CMakePresets.json).
PHASE_TIMEOUT=${PHASE_TIMEOUT:-900}

run_phase() { # name, command...
  local name=$1; shift
  local t0=$SECONDS
  echo "=== phase $name ==="
  mkdir -p build/ci-log # a copy of the phase's output for the digest at the end (tee in a process substitution:
                        # a daemon a test leaves holding the output cannot make the phase wait for it)
  if timeout -k 10 "$PHASE_TIMEOUT" bash -c "$(declare -f preset package lint mutation load); \"\$@\"" _ "$@" \
     > >(tee "build/ci-log/$name.log") 2>&1; then passed=$((passed + 1)); echo "=== phase $name: ok ($((SECONDS - t0)) s) ===";
  else failed=$((failed + 1)); failures+=("$name"); echo "=== phase $name: FAILED ($((SECONDS - t0)) s) ==="; fi
}

preset() { # configure, build and ctest one preset
  local p=$1
  cmake --preset "$p" >/dev/null && cmake --build --preset "$p" -j "$JOBS" && ctest --preset "$p" -j "$JOBS"
}

package() { # the library as a dependency and the package; needs build/dev (phase dev)
  local pre=build/package-prefix
  [ -x .venv/bin/python ] && export FASTCLOCK_PYTHON=$PWD/.venv/bin/python # matplotlib for `fastclock report`
  rm -rf "$pre" build/consumer build/consumer-pc
  # install into a prefix and build the consumer project against it (find_package + pkg-config)
  cmake --install build/dev --prefix "$pre" >/dev/null &&
  cmake -S tests/package -B build/consumer -G Ninja -DCMAKE_PREFIX_PATH="$PWD/$pre" >/dev/null &&
  cmake --build build/consumer && ./build/consumer/consumer &&
  local lib; lib=$(dirname "$(find "$PWD/$pre" -name fastclock.pc | head -1)")/.. && lib=$(cd "$lib" && pwd) &&
  PKG_CONFIG_PATH="$lib/pkgconfig" cc -O2 -o build/consumer-pc tests/package/consumer.c \
     $(PKG_CONFIG_PATH="$lib/pkgconfig" pkg-config --cflags --libs fastclock) -Wl,-rpath,"$lib" &&
  ./build/consumer-pc &&
  tests/subproject/run.sh . build/subproject &&              # add_subdirectory / FetchContent consumers
  tests/package/run_standalone.sh . build/standalone &&      # absolute libdir; prefix without source and build
  tests/package/run_deb.sh build/dev build/deb               # cpack: 3 .debs (split) + .tar.gz, extracted and used
}

lint() { [ -x scripts/lint.sh ] && scripts/lint.sh; }

# The timing-sensitive tests (tests/contexts: coarse freshness, signals, start-up) once more, with two busy loops
# beside them on the machine's CPUs (they judge timing by the code's own progress, so a busy machine must not fail
# them). The dev build, and the TSan build where the tsan phase made one. The loops are
# this function's children, bounded by `timeout`, and stopped by PID at the end.
load() {
  local hogs=() rc=0 b
  for _ in 1 2; do timeout 900 sh -c 'while :; do :; done' & hogs+=($!); done
  for b in build/dev build/tsan; do
    [ -f "$b/CTestTestfile.cmake" ] || continue
    echo "load: ctest -L contexts in $b beside two busy loops"
    ctest --test-dir "$b" -L contexts -j "$JOBS" --output-on-failure || rc=1
  done
  kill "${hogs[@]}" 2>/dev/null; wait "${hogs[@]}" 2>/dev/null
  return $rc
}

mutation() { # the protocol mutants, each killed in 5 runs of 5, and the bound sources' (deterministic: 2 runs)
  tests/mutation/run.sh --set protocol --runs 5 --build build/mutation &&
  tests/mutation/run.sh --set bound --runs 2 --build build/mutation
}

for ph in "${phases[@]}"; do
  case $ph in
    dev|asan|tsan|fuzz|aarch64) run_phase "$ph" preset "$ph" ;;
    package) run_phase package package ;;
    lint) run_phase lint lint ;;
    load) run_phase load load ;;
    mutation) run_phase mutation mutation ;;
    *) echo "unknown phase '$ph' (dev asan tsan load fuzz aarch64 package lint mutation)"; exit 2 ;;
  esac
done
# What failed, again at the end (CI keeps only the end of the log): each failed test's name and the end of its output.
digest() {
  local p=$1 d=build/$1/Testing/Temporary n name
  [ -f "$d/LastTestsFailed.log" ] || return 0
  while IFS=: read -r n name; do
    echo "--- $p: $name (end of its output) ---"
    awk -v t="$name" '$0 ~ "Testing: "t"$" {on=1; buf=""; k=0} on {a[k++ % 40]=$0} on && index($0, "\""t"\" end time") {on=0; for (i=(k>40?k-40:0); i<k; i++) print a[i % 40]}' "$d/LastTest.log"
  done < "$d/LastTestsFailed.log"
}
echo
for ph in "${failures[@]}"; do
  case $ph in
    dev|asan|tsan|fuzz|aarch64) digest "$ph" ;;
    *) echo "--- $ph: the end of its output (build/ci-log/$ph.log) ---"; tail -n 40 "build/ci-log/$ph.log" ;;
  esac
done
((failed)) && echo "failed phases: ${failures[*]}"
echo "phases: $passed passed, $failed failed"
((failed == 0))
