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
# The main job asks for its own set-up only (setup.sh --bench) ...
printf '#!/bin/sh\necho "setup.sh $*" >"%s/setup.args"\nexit 99\n' "$work" >"$work/scripts/setup.sh"
"$work/scripts/bench.sh" --quick >/dev/null 2>&1; rc=$?
[ $rc -eq 99 ] && [ "$(cat "$work/setup.args" 2>/dev/null)" = "setup.sh --bench" ] ||
  { echo "FAIL: bench.sh ran '$(cat "$work/setup.args" 2>/dev/null)' (exit $rc), want 'setup.sh --bench' first"; fail=1; }
# ... and setup.sh --bench, on a machine missing every package, installs the build and picture packages alone:
# no test tool, never chrony (its package Conflicts with time-daemon), no venv, no engines. apt-get, sudo and
# dpkg-query are stand-ins that log what they are asked.
setup=$(dirname "$src")/setup.sh
mkdir -p "$work/b/scripts" "$work/bin"
cp "$setup" "$work/b/scripts/setup.sh"
printf '#!/bin/sh\nexit 1\n' >"$work/bin/dpkg-query"
printf '#!/bin/sh\necho "apt-get $*" >>"%s/apt.log"\n' "$work" >"$work/bin/apt-get"
printf '#!/bin/sh\nexec "$@"\n' >"$work/bin/sudo"
chmod +x "$work/bin/"*
PATH="$work/bin:$PATH" "$work/b/scripts/setup.sh" --bench >"$work/setup.out" 2>&1; rc=$?
inst=$(grep ' install ' "$work/apt.log" 2>/dev/null | tr ' ' '\n' | grep -v '^-' | grep -v '^apt-get$\|^install$\|^Dpkg::' | sort | tr '\n' ' ')
want="cmake g++ gcc ninja-build python3 python3-jsonschema python3-matplotlib "
[ $rc -eq 0 ] && [ "$inst" = "$want" ] && [ ! -e "$work/b/.venv" ] && [ ! -e "$work/b/.engines" ] ||
  { echo "FAIL: setup.sh --bench (exit $rc) installed '$inst', want '$want'; $(cat "$work/setup.out")"; fail=1; }
grep -q 'chrony' "$work/apt.log" && { echo "FAIL: setup.sh --bench touched chrony"; fail=1; }
# The test set-up unpacks chrony, never installs it: setup.sh (no argument) on a machine where every package is
# there, the venv and clock-bound-d too, downloads chrony's package (a stand-in .deb whose chronyd is a copy of
# echo), unpacks it into .engines/chrony and installs nothing; a second run downloads nothing.
grep -n 'apt_install\|PKGS=' "$setup" | grep -q chrony && { echo "FAIL: setup.sh installs chrony"; fail=1; }
mkdir -p "$work/t/scripts" "$work/t/.venv/bin" "$work/t/.engines/clockbound/bin" "$work/pkg/DEBIAN" "$work/pkg/usr/sbin"
cp "$setup" "$work/t/scripts/setup.sh"
printf '#!/bin/sh\nexit 0\n' >"$work/t/.venv/bin/python"
printf '#!/bin/sh\nexit 0\n' >"$work/t/.engines/clockbound/bin/clockbound"
echo 2.0.3 >"$work/t/.engines/clockbound/.version"
chmod +x "$work/t/.venv/bin/python" "$work/t/.engines/clockbound/bin/clockbound"
cp /bin/echo "$work/pkg/usr/sbin/chronyd"
printf 'Package: chrony\nVersion: 4.3-test\nArchitecture: all\nMaintainer: t <t@example.org>\nDescription: stand-in\n' \
  >"$work/pkg/DEBIAN/control"
dpkg-deb -b "$work/pkg" "$work/chrony_4.3-test_all.deb" >/dev/null 2>&1 || { echo "FAIL: dpkg-deb -b"; fail=1; }
printf '#!/bin/sh\necho installed ok installed; printf "install ok installed"\n' >"$work/bin/dpkg-query"
printf '#!/bin/sh\necho "apt-get $*" >>"%s/apt2.log"\n[ "$1" = download ] && cp "%s/chrony_4.3-test_all.deb" .\nexit 0\n' \
  "$work" "$work" >"$work/bin/apt-get"
chmod +x "$work/bin/"*
for run in 1 2; do
  PATH="$work/bin:$PATH" "$work/t/scripts/setup.sh" >"$work/setup$run.out" 2>&1 ||
    { echo "FAIL: setup.sh (run $run): $(tail -3 "$work/setup$run.out")"; fail=1; }
done
[ -x "$work/t/.engines/chrony/usr/sbin/chronyd" ] && [ "$(cat "$work/t/.engines/chrony/.version")" = 4.3-test ] ||
  { echo "FAIL: chrony not unpacked into .engines/chrony: $(cat "$work/setup1.out")"; fail=1; }
[ "$(grep -c 'download chrony' "$work/apt2.log")" = 1 ] && ! grep -q ' install ' "$work/apt2.log" ||
  { echo "FAIL: setup.sh asked apt for: $(cat "$work/apt2.log")"; fail=1; }
[ $fail -eq 0 ] && echo "ok: bench.sh parses its arguments before setup, its set-up is lean, chrony is unpacked"
exit $fail
