#!/bin/sh
# core_only.sh STATIC [SHARED]: a program that never makes a bounded read (fc_core_only.c) links no code of the UTC
# bound (nm over the static one: no symbol the bound's files define) and runs none (strace -f over each: the bound's
# variables point at traps, and no file, socket or directory of them is looked at; no socket at all; no getpid, the
# system call of chrony.c's exit handler). Exit 0, 1 (with what was found), or 77 (no nm or strace, or ptrace
# refused).
set -u
static=$1
shared=${2:-}
command -v nm >/dev/null 2>&1 || { echo "core_only: no nm"; exit 77; }
bad=0
# The bound's own names: src/bound/*.c, src/bounded.c, src/truetime.c (defined symbols only: a weak reference, w,
# is init.c's and status.c's hook, which stays unresolved)
syms=$(nm --defined-only "$static" | grep -E ' (fc__bound|fc__bounder|fc__chrony|fc__cb_|fc__vmc|fc__slew|fc__kernel_eval|fc__slow_bounded|fc_commit_wait|chrony_)' || true)
if [ -n "$syms" ]; then
	echo "core_only: $static links code of the bound:"
	echo "$syms" | head -20
	bad=1
fi
command -v strace >/dev/null 2>&1 || { echo "core_only: no strace"; exit $bad; }
dir=$(mktemp -d /tmp/fc_core_only.XXXXXX) || exit 2
trap 'rm -rf "$dir"' EXIT
if ! strace -f -o "$dir/probe" true >/dev/null 2>&1; then
	echo "core_only: strace cannot trace here"
	exit $([ $bad = 0 ] && echo 77 || echo 1)
fi
for prog in "$static" $shared; do
	out="$dir/trace"
	FASTCLOCK_BOUND_SOURCE=auto FASTCLOCK_CHRONY_SOCKET="$dir/TRAP_chrony.sock" \
	FASTCLOCK_CLOCKBOUND_PATH="$dir/TRAP_clockbound" FASTCLOCK_VMCLOCK_PATH="$dir/TRAP_vmclock" \
		strace -f -qq -o "$out" -e trace=%file,%network,getpid "$prog" >"$dir/stdout" 2>&1
	rc=$?
	if [ $rc != 0 ]; then
		echo "core_only: $prog exited $rc: $(cat "$dir/stdout")"
		bad=1
	fi
	pat='TRAP_|/dev/vmclock|/run/chrony|clockbound|chronyd|socket\(|connect\('
	[ "${FC_CORE_ONLY_NO_GETPID:-}" = 1 ] || pat="$pat|getpid\\("
	found=$(grep -E "$pat" "$out" || true)
	if [ -n "$found" ]; then
		echo "core_only: $prog touched the bound:"
		echo "$found" | head -20
		bad=1
	fi
done
[ $bad = 0 ] && echo "core_only: no bound linked in $static; none run in $static $shared"
exit $bad
