#!/usr/bin/env bash
# Instructions per call of fastclock's reads and of the kernel's clock_gettime, counted two ways:
#   callgrind  valgrind --tool=callgrind --toggle-collect='icount_*' on fc_icount CLOCK N, at N1 and N2 calls:
#              (Ir(N2) - Ir(N1)) / (N2 - N1) removes everything done once. Deterministic. Valgrind does not
#              give its guest the vDSO, so its clock_gettime rows count glibc's system-call path only
#              (marked "syscall": the kernel's instructions are not user-space and are not counted).
#   step       fc_icount --step: the loop single-stepped with ptrace, every user-space instruction counted,
#              the vDSO's included. Same N2 - N1 difference, at small N (each step costs microseconds);
#              the minimum over several runs is kept, because a call that a kernel tick interrupts in the
#              middle retries its seqlock (the vDSO) or re-anchors (fastclock) and costs more.
# Both include the benchmark loop's own instructions; the "empty" row is that loop alone, and the "-loop"
# columns subtract it. Run with FASTCLOCK_PERIOD_US=1000000 so re-anchors (slow paths) stay out of the loop.
#
# Usage: bench/callgrind.sh            (BUILD_DIR=build/dev by default; builds fc_icount there if needed)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build/dev}
ICOUNT="$BUILD_DIR/bench/fc_icount"
N1=${N1:-100000} N2=${N2:-200000}      # callgrind
S1=${S1:-2} S2=${S2:-4} SRUNS=${SRUNS:-15}  # single-step
CLOCKS=${CLOCKS:-"empty fc_mono_ns fc_mono_ns_relaxed fc_real_ns fc_real_ns_relaxed fc_real_bounded fc_mono_bounded
  fc_mono_coarse_ns fc_real_coarse_ns fc_ticks fc_clock_gettime_mono fc_clock_gettime_real fc_gettimeofday fastclock::steady_clock
  fastclock::system_clock clock_gettime_mono clock_gettime_real gettimeofday clock_gettime_mono_coarse"}

if [ ! -x "$ICOUNT" ]; then
  if [ "$BUILD_DIR" = build/dev ]; then
    [ -f build/dev/build.ninja ] || cmake --preset dev >/dev/null
  fi
  cmake --build "$BUILD_DIR" --target fc_icount >/dev/null
fi
HAVE_VG=1
command -v valgrind >/dev/null || { HAVE_VG=0; echo "callgrind.sh: valgrind not found; single-step counts only" >&2; }

export FASTCLOCK_PERIOD_US=1000000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Ir collected inside icount_* for `fc_icount CLOCK N`; the smaller of two runs (a run that re-anchored costs more).
cg_ir() {
  local best="" ir i
  for i in 1 2; do
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" --toggle-collect='icount_*' \
      "$ICOUNT" "$1" "$2" >"$tmp/cg.stdout" 2>"$tmp/cg.stderr" || { cat "$tmp/cg.stderr" >&2; return 1; }
    ir=$(awk '/^totals:/ {print $2}' "$tmp/cg.out")
    if [ -z "$best" ] || [ "$ir" -lt "$best" ]; then best=$ir; fi
  done
  echo "$best"
}
# Single steps in the loop, minimum over SRUNS runs.
step_n() {
  local best="" s i
  for ((i = 0; i < SRUNS; i++)); do
    s=$("$ICOUNT" --step "$1" "$2" | sed -n 's/.* steps=\([0-9]*\).*/\1/p') || true
    [ -n "$s" ] || { echo "callgrind.sh: fc_icount --step $1 $2 failed (ptrace not permitted?)" >&2; return 0; }
    if [ -z "$best" ] || [ "$s" -lt "$best" ]; then best=$s; fi
  done
  echo "$best"
}
per_call() { [ -n "$1" ] && [ -n "$2" ] || { echo -; return; }; awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.2f", (b - a) / n }'; }

backend=$("$ICOUNT" fc_mono_ns 1 | sed -n 's/.*backend=\([a-z]*\).*/\1/p')
echo "instructions per call (x86-64 user space), loop included; fastclock backend: $backend; FASTCLOCK_PERIOD_US=$FASTCLOCK_PERIOD_US"
echo "callgrind: (Ir(N=$N2) - Ir(N=$N1)) / $((N2 - N1)), min of 2 runs; step: (steps(N=$S2) - steps(N=$S1)) / $((S2 - S1)), min of $SRUNS runs"
printf '%-28s %16s %8s %8s %8s\n' clock callgrind -loop step -loop
cg_loop="" st_loop=""
for c in $CLOCKS; do
  cg="-" cgl="-"
  if [ "$HAVE_VG" = 1 ]; then
    cg=$(per_call "$(cg_ir "$c" "$N1")" "$(cg_ir "$c" "$N2")" $((N2 - N1)))
    [ "$c" = empty ] && cg_loop=$cg
    cgl=$(awk -v a="$cg" -v b="${cg_loop:-0}" 'BEGIN { printf "%.2f", a - b }')
    case $c in clock_gettime_* | gettimeofday) cg="$cg(syscall)" ;; esac
  fi
  st=$(per_call "$(step_n "$c" "$S1")" "$(step_n "$c" "$S2")" $((S2 - S1)))
  [ "$c" = empty ] && st_loop=$st
  stl=-
  [ "$st" = - ] || stl=$(awk -v a="$st" -v b="${st_loop:-0}" 'BEGIN { printf "%.2f", a - b }')
  printf '%-28s %16s %8s %8s %8s\n' "$c" "$cg" "$cgl" "$st" "$stl"
done
echo "(callgrind's clock_gettime rows are glibc's system-call path: valgrind hides the vDSO; the step column is the vDSO)"
