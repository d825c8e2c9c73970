#!/bin/sh
# bench_sh_args.sh BENCH_SH WORKDIR — scripts/bench.sh answers --help (exit 0) and a bad argument (exit 2)
# before it runs scripts/setup.sh: run from a copy of the script whose setup.sh exits 99.
set -u
src=$1 work=$2
rm -rf "$work" && mkdir -p "$work/scripts" || exit 2
cp "$src" "$work/scripts/bench.sh"
printf '#!/bin/sh\necho "setup.sh ran" >&2\nexit 99\n' >"$work/scripts/setup.sh"
chmod +x "$work/scripts/bench.sh" "$work/scripts/setup.sh"
fail=0
out=$("$work/scripts/bench.sh" --help 2>&1); rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q "^Usage: scripts/bench.sh" || { echo "FAIL: --help: exit $rc: $out"; fail=1; }
out=$("$work/scripts/bench.sh" --frobnicate 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q "unknown argument '--frobnicate'" || { echo "FAIL: bad argument: exit $rc: $out"; fail=1; }
[ $fail -eq 0 ] && echo "ok: bench.sh parses its arguments before setup"
exit $fail
