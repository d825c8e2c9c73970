#!/usr/bin/env bash
# Each public function's first call in fresh processes, beside the vDSO's first call in the same run,
# and the coarse clocks' staleness in a coarse-only program on both backends, quiet and with every core busy.
# Prints markdown tables for docs/PERFORMANCE.md ("Start-up" and "Coarse staleness").
#   bench/first_call.sh [--build DIR] [--back N] [--spaced N] [--gap S] [--stale-ms MS] [--quick] [--no-stale]
#     --back N     processes per function started back to back (default 15)
#     --spaced N   processes per function started alone, GAP s after the previous one (default 5; 0: none)
#     --gap S      the spacing (default 2)
#     --stale-ms   how long each coarse-only program reads (default 3000)
#     --prog P     another build of fc_first_call (e.g. one linked against an older library)
#     --quick      --back 5 --spaced 2 --gap 0.5 --stale-ms 1000
set -euo pipefail
cd "$(dirname "$0")/.."
B=build/dev; BACK=15; SPACED=5; GAP=2; STALE_MS=3000; STALE=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build) B=$2; shift 2 ;;
    --back) BACK=$2; shift 2 ;;
    --spaced) SPACED=$2; shift 2 ;;
    --gap) GAP=$2; shift 2 ;;
    --stale-ms) STALE_MS=$2; shift 2 ;;
    --prog) PROG=$2; shift 2 ;;
    --quick) BACK=5; SPACED=2; GAP=0.5; STALE_MS=1000; shift ;;
    --no-stale) STALE=0; shift ;;
    *) echo "first_call.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
P=${PROG:-$B/bench/fc_first_call}
[ -x "$P" ] || { echo "first_call.sh: $P not built (cmake --build --preset dev --target fc_first_call)" >&2; exit 2; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mapfile -t FNS < <("$P" list)
echo "host: $(nproc) cores, $(uname -r), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
# back to back: every function once per round, rounds back to back; spaced: each process GAP s after the last
for ((i = 0; i < BACK; i++)); do for f in "${FNS[@]}"; do "$P" time "$f" >>"$T/back"; done; done
for ((i = 0; i < SPACED; i++)); do for f in "${FNS[@]}"; do sleep "$GAP"; "$P" time "$f" >>"$T/spaced"; done; done
echo "load average at the end of the first calls: $(cut -d' ' -f1-3 /proc/loadavg)"
summary() { # file function -> "median / worst" in us
  [ -s "$1" ] || { echo "-"; return; }
  awk -v f="$2" '{n = $NF; $NF = ""; sub(/ $/, ""); if ($0 == f) print n}' "$1" | sort -n |
    awk '{a[NR] = $1} END {if (NR == 0) print "-"; else printf "%.1f / %.1f\n", a[int((NR + 1) / 2)] / 1000, a[NR] / 1000}'
}
median() { awk -v f="$2" '{n = $NF; $NF = ""; sub(/ $/, ""); if ($0 == f) print n}' "$1" | sort -n | awk '{a[NR] = $1} END {print (NR ? a[int((NR + 1) / 2)] : 0)}'; }
# The vDSO's first call, the ratios' reference: both vDSO rows' processes pooled (the same first call of the same
# vDSO, CLOCK_MONOTONIC or CLOCK_REALTIME): twice the samples of one row (3 spaced processes of one row differed
# from the other row's by 30 % once).
vdso_median() { awk '{n = $NF; $NF = ""; sub(/ $/, ""); if ($0 ~ /^vdso_clock_gettime_/) print n}' "$1" | sort -n | awk '{a[NR] = $1} END {print (NR ? a[int((NR + 1) / 2)] : 0)}'; }
touch "$T/back" "$T/spaced"
vb=$(vdso_median "$T/back"); vs=0; [ -s "$T/spaced" ] && vs=$(vdso_median "$T/spaced")
echo
echo "x vDSO: a row's median over the vDSO's first call (both vDSO rows' processes pooled): $vb ns back to back, $vs ns spaced"
echo
echo "| first call of | back to back ($BACK): median / worst, us | x vDSO | spaced ${GAP} s ($SPACED): median / worst, us | x vDSO |"
echo "|---|---|---|---|---|"
for f in "${FNS[@]}"; do
  mb=$(median "$T/back" "$f"); ms=0; [ -s "$T/spaced" ] && ms=$(median "$T/spaced" "$f")
  rb=$(awk -v a="$mb" -v b="$vb" 'BEGIN {printf (b > 0 ? "%.2f" : "-"), a / b}')
  rs=$(awk -v a="$ms" -v b="$vs" 'BEGIN {printf (b > 0 ? "%.2f" : "-"), a / b}')
  echo "| \`$f\` | $(summary "$T/back" "$f") | $rb | $(summary "$T/spaced" "$f") | $rs |"
done
[ "$STALE" = 1 ] || exit 0
# Coarse staleness: a program that reads only one coarse clock, on each backend, quiet and with every core busy
# (one busy loop per core, at the same priority).
busy_on() { BUSY=(); for ((c = 0; c < $(nproc); c++)); do (while :; do :; done) & BUSY+=($!); done; }
busy_off() { for p in "${BUSY[@]}"; do kill "$p"; done; wait "${BUSY[@]}" 2>/dev/null || true; }
echo
echo "| coarse-only program ($STALE_MS ms) | machine | load average (1 min) | staleness p50 / p99 / p99.9 / max |"
echo "|---|---|---|---|"
for load in "no added load" busy; do
  [ "$load" = busy ] && busy_on
  # The keeper asks for SCHED_FIFO where the process may (src/updater.c); FASTCLOCK_UPDATER_RT=0 shows what a
  # process that may not gets (SCHED_OTHER with EEVDF's short slice).
  for rt in 1 0; do
    for be in counter kernel; do
      for c in fc_mono_coarse_ns fc_real_coarse_ns; do
        r=$(FASTCLOCK_UPDATER_RT=$rt FASTCLOCK_SOURCE=$be "$P" stale "$c" --ms "$STALE_MS")
        echo "| \`$c\`, FASTCLOCK_SOURCE=$be, FASTCLOCK_UPDATER_RT=$rt | $load | $(cut -d" " -f1 /proc/loadavg) | $(echo "$r" | sed 's/.*us: //; s/p50 //; s/ p99 / \/ /; s/ p99.9 / \/ /; s/ max / \/ /') us |"
      done
    done
  done
  for c in kernel_mono_coarse kernel_real_coarse; do
    r=$("$P" stale "$c" --ms "$STALE_MS")
    echo "| the kernel's \`$c\` | $load | $(cut -d" " -f1 /proc/loadavg) | $(echo "$r" | sed 's/.*us: //; s/p50 //; s/ p99 / \/ /; s/ p99.9 / \/ /; s/ max / \/ /') us |"
  done
  [ "$load" = busy ] && busy_off
done
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
