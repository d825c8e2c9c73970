#!/usr/bin/env bash
# The first call's cost in fresh processes: a program whose first call is fc_mono_ns(), started
# back to back (warm kernel paths) and started alone, seconds apart (cold), plus the system calls the first
# call makes. Prints medians and worst cases; the figures go to docs/PERFORMANCE.md ("Start-up").
#   bench/startup.sh [BUILD_DIR] [N_BACK_TO_BACK] [N_ALONE] [GAP_S]
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build/dev}; N1=${2:-100}; N2=${3:-30}; GAP=${4:-2}
P=$B/tests/unit/fc_probe
[ -x "$P" ] || { echo "startup.sh: $P not built (cmake --preset dev && cmake --build --preset dev)" >&2; exit 2; }
stats() { sort -n | awk '{a[NR]=$1} END {printf "n %d, median %.1f us, p90 %.1f us, worst %.1f us\n", NR, a[int((NR+1)/2)]/1000, a[int(NR*0.9+0.5)]/1000, a[NR]/1000}'; }
one() { "$P" first-call | sed -n 's/^first-call: \([0-9]*\) ns.*/\1/p'; }
echo "back to back ($N1 processes):"; for ((i = 0; i < N1; i++)); do one; done | stats
echo "alone, ${GAP} s apart ($N2 processes):"; for ((i = 0; i < N2; i++)); do sleep "$GAP"; one; done | stats
echo "accuracy of the first 3 ms of reads (kernel hand, then the first counter hand), $N1 processes:"
for ((i = 0; i < N1; i++)); do "$P" first-ms | sed -n 's/.*worst \([0-9]*\) ns outside.*/\1/p'; done |
  sort -n | awk '{a[NR]=$1} END {printf "n %d, median %d ns, p90 %d ns, worst %d ns outside the kernel bracket\n", NR, a[int((NR+1)/2)], a[int(NR*0.9+0.5)], a[NR]}'
if command -v strace >/dev/null; then
  echo "system calls of one process's first call (strace -f -T; between the probe's two getppid markers):"
  strace -f -T "$P" first-call 2>&1 >/dev/null | awk '/getppid/ {n++; next} n == 1' | sed 's/^/  /'
  echo "  (end; nothing listed: the first call made no system call)"
fi
