#!/bin/sh
# Model-check the timehands publication protocol (tests/model/timehands.pml) with spin.
#   - every configuration in GOOD must pass: "errors: 0", the whole state space (no "Search not completed",
#     no "max search depth too small", no memory limit hit);
#   - every variant in BAD must make spin report a violation of one of the named properties.
# Prints states, transitions and depth for each. Exit 0 when all hold, 1 otherwise, 77 (ctest: skipped)
# when spin or a C compiler is missing.
# Usage: tests/model/run_model.sh [--quick]      (--quick: the 1-reader configurations only, for a fast loop)
# Environment: MODEL_MEMLIM (MiB, default 8192) caps pan's memory; MODEL_WORK keeps the work dir.
set -u

here=$(cd "$(dirname "$0")" && pwd)
pml=$here/timehands.pml
quick=0
[ "${1:-}" = "--quick" ] && quick=1

command -v spin >/dev/null 2>&1 || { echo "spin not installed: skipped"; exit 77; }
cc=${CC:-cc}
command -v "$cc" >/dev/null 2>&1 || cc=gcc
command -v "$cc" >/dev/null 2>&1 || { echo "no C compiler: skipped"; exit 77; }
memlim=${MODEL_MEMLIM:-8192}

work=${MODEL_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/fc-model.XXXXXX")}
mkdir -p "$work"
[ -n "${MODEL_WORK:-}" ] || trap 'rm -rf "$work"' EXIT

fail=0

# run NAME "SPIN DEFINES" "PAN CFLAGS" "PAN ARGS" -> sets $out (pan's output file); returns pan's status
run() {
	name=$1 defs=$2 cflags=$3 args=$4
	d=$work/$name
	mkdir -p "$d"
	cp "$pml" "$d/timehands.pml"
	(cd "$d" && spin $defs -a timehands.pml >spin.out 2>&1) || { cat "$d/spin.out"; return 2; }
	(cd "$d" && $cc -O2 -w $cflags -DMEMLIM=$memlim -o pan pan.c >cc.out 2>&1) || { cat "$d/cc.out"; return 2; }
	t0=$(date +%s)
	(cd "$d" && ./pan $args >pan.out 2>&1)
	t1=$(date +%s)
	out=$d/pan.out
	secs=$((t1 - t0))
	return 0
}

figures() {
	st=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$out" | head -1)
	tr=$(sed -n 's/^ *\([0-9.e+]*\) transitions.*/\1/p' "$out" | head -1)
	dp=$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' "$out" | head -1)
	er=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$out" | head -1)
	echo "states=${st:-?} transitions=${tr:-?} depth=${dp:-?} errors=${er:-?} time=${secs}s"
}

# A good configuration: must explore everything and find nothing.
good() {
	name=$1 defs=$2 cflags=$3 args=$4
	if ! run "$name" "$defs" "$cflags" "$args"; then
		echo "FAIL  $name: could not build the verifier"; fail=1; return
	fi
	f=$(figures)
	if grep -q "errors: 0" "$out" && ! grep -qE "Search not completed|max search depth too small|out of memory|memory limit|aborted|pan:1:" "$out"; then
		echo "pass  $name ($defs): $f"
	else
		echo "FAIL  $name ($defs): $f"
		grep -E "pan:1:|violated|not completed|too small|memory|cycle" "$out" | head -5 | sed 's/^/      /'
		(cd "$work/$name" && [ -f timehands.pml.trail ] && spin $defs -t timehands.pml | grep "MSC:" | sed 's/^ */      /')
		fail=1
	fi
}

# A broken variant: spin must report a violation of one of the properties in $expect (an egrep pattern).
bad() {
	name=$1 defs=$2 cflags=$3 args=$4 expect=$5
	if ! run "$name" "$defs" "$cflags" "$args"; then
		echo "FAIL  $name: could not build the verifier"; fail=1; return
	fi
	f=$(figures)
	v=$(grep -E "pan:1:|acceptance cycle|non-progress cycle" "$out" | head -1 | sed 's/ (at depth.*//; s/^pan:1: //')
	if [ -n "$v" ] && echo "$v" | grep -qE "$expect"; then
		echo "pass  $name ($defs): violation found: $v; $f"
	else
		echo "FAIL  $name ($defs): expected a violation of $expect, got '${v:-none}'; $f"
		fail=1
	fi
}

SAFE="-DSAFETY -DCOLLAPSE -DVECTORSZ=4096"
NP="-DNP -DCOLLAPSE -DVECTORSZ=4096"
ARGS="-m2000000"

echo "== good models (must pass, complete state space) =="
good one_reader_u5        "-DREADERS=1 -DU=5 -DGM=5"        "$SAFE" "$ARGS"
good one_reader_np        "-DREADERS=1 -DU=4 -DLIVENESS"             "$NP"   "$ARGS -l -f"
good two_writers_lock     "-DREADERS=1 -DWRITERS=2 -DU=4"   "$SAFE" "$ARGS"
good three_hands          "-DREADERS=1 -DN=3 -DU=5"         "$SAFE" "$ARGS"
if [ $quick = 0 ]; then
	good timehands        ""                                "$SAFE" "$ARGS"
fi

echo "== broken variants (each must make spin report a violation) =="
PROPS="torn_read|went_back|waited_on_stopped_writer"
bad no_mark         "-DNO_MARK"         "$SAFE" "$ARGS" "torn_read"
bad ptr_first       "-DPTR_FIRST"       "$SAFE" "$ARGS" "$PROPS"
bad no_lock         "-DNO_LOCK"         "$SAFE" "$ARGS" "torn_read"
bad one_hand        "-DONE_HAND"        "$SAFE" "$ARGS" "waited_on_stopped_writer"
bad one_hand_np     "-DONE_HAND -DREADERS=1 -DLIVENESS" "$NP" "$ARGS -l -f" "non-progress cycle"
bad no_w1_fence     "-DNO_W1_FENCE"     "$SAFE" "$ARGS" "torn_read"
bad no_r3_fence     "-DNO_R3_FENCE"     "$SAFE" "$ARGS" "torn_read"
bad relaxed_w3      "-DRELAXED_W3"      "$SAFE" "$ARGS" "$PROPS"
bad relaxed_r2      "-DRELAXED_R2"      "$SAFE" "$ARGS" "$PROPS"
bad no_r5           "-DNO_R5"           "$SAFE" "$ARGS" "went_back"
bad aba             "-DABA -DREADERS=1" "$SAFE" "$ARGS" "torn_read|went_back"

if [ $fail = 0 ]; then echo "model: all good models pass, every broken variant is caught"; else echo "model: FAILED"; fi
exit $fail
