#!/bin/sh
# The README's C example, as a reader copies it: built with -Wall -Wextra -Werror against this build's library
# and run as it is, with fc_init() left out (its comment says optional) and with no bound source. Each run says
# either "UTC <s.ns> s +- <ns> ns (synchronized|free-running)" or "UTC unknown: <reason> (...)", never an
# interval that makes no promise (it printed "UTC is within [-509933412028106111, 4101752606399281791] ns
# (unknown)" without fc_init()), and no negative number.
# Usage: readme_example.sh SOURCE_DIR LIBRARY_FILE WORK_DIR
set -u
src=$1 lib=$2 work=$3
mkdir -p "$work" || exit 1
libdir=$(dirname "$lib")
cc=${CC:-cc}
awk '/^```c$/{f=1; next} /^```$/{f=0} f' "$src/README.md" >"$work/app.c"
grep -q 'fc_init();' "$work/app.c" || { echo "README has no C example calling fc_init()"; exit 1; }
grep -v 'fc_init();' "$work/app.c" >"$work/app_no_init.c"
fails=0
for v in app app_no_init; do
  "$cc" -Wall -Wextra -Werror -I"$src/include" -o "$work/$v" "$work/$v.c" -L"$libdir" -lfastclock \
    -Wl,-rpath,"$libdir" >"$work/$v.build.log" 2>&1 || { echo "$v does not build:"; cat "$work/$v.build.log"; exit 1; }
done
good_utc='^UTC [0-9]+\.[0-9]{9} s \+- [0-9]{1,11} ns \((synchronized|free-running)\)$'
unknown_utc='^UTC unknown: .+ \((unknown|disrupted)\)$'
took='^took [0-9]+ ns; captured at [0-9]+ ns since the epoch$'
check() { # name, output file, [required first-line pattern]
  n=$(wc -l <"$2")
  l1=$(sed -n 1p "$2") l2=$(sed -n 2p "$2")
  if [ "$n" -ne 2 ] || ! printf '%s\n' "$l2" | grep -Eq "$took" ||
     ! { printf '%s\n' "$l1" | grep -Eq "$good_utc" || printf '%s\n' "$l1" | grep -Eq "$unknown_utc"; }; then
    echo "FAIL $1: not the two lines the README promises:"; cat "$2"; fails=$((fails + 1)); return
  fi
  if [ $# -ge 3 ] && ! printf '%s\n' "$l1" | grep -Eq "$3"; then
    echo "FAIL $1: first line not /$3/:"; cat "$2"; fails=$((fails + 1)); return
  fi
  echo "ok $1: $l1"
}
"$work/app" >"$work/out1" 2>&1 || { echo "FAIL: app exited $?"; fails=$((fails + 1)); }
check "as written" "$work/out1"
"$work/app_no_init" >"$work/out2" 2>&1 || { echo "FAIL: app without fc_init exited $?"; fails=$((fails + 1)); }
check "without fc_init()" "$work/out2"
FASTCLOCK_BOUND_SOURCE=none "$work/app_no_init" >"$work/out3" 2>&1 || { echo "FAIL: exited $?"; fails=$((fails + 1)); }
check "no bound source, without fc_init()" "$work/out3" '^UTC unknown: FASTCLOCK_BOUND_SOURCE=none \(unknown\)$'
[ "$fails" -eq 0 ]
