#!/usr/bin/env bash
# fastclock as a subproject, in the package phase of scripts/test.sh:
#   tests/subproject/run.sh SOURCE_DIR WORK_DIR
# Builds the parent project (CMakeLists.txt here) twice and checks that fastclock spills nothing into it:
#   FetchContent, BUILD_SHARED_LIBS=OFF: only libfastclock.a is built, fastclock::fastclock is it;
#   add_subdirectory, BUILD_SHARED_LIBS=ON: only libfastclock.so is built, the program needs it;
# and in both: no fastclock tests in the parent's ctest (only parent_own_test), no benchmarks or CLI built,
# no -Werror on fastclock's sources, the parent's own unit_tests target builds and runs, and the parent's
# install installs only its own program. Exit 0, or 1 after naming every failed check.
set -uo pipefail
src=$(cd "$1" && pwd) work=$2
here=$(cd "$(dirname "$0")" && pwd)
fails=0
fail() { echo "subproject: FAIL $*"; fails=$((fails + 1)); }
rm -rf "$work" && mkdir -p "$work" && work=$(cd "$work" && pwd)

check_mode() { # mode shared(ON|OFF)
  local mode=$1 shared=$2 b=$work/$1 p=$work/$1-prefix
  if ! cmake -S "$here" -B "$b" -G Ninja -DFASTCLOCK_SOURCE="$src" -DFC_MODE="$mode" -DBUILD_SHARED_LIBS="$shared" \
      -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$work/$mode.log" 2>&1 ||
     ! cmake --build "$b" >>"$work/$mode.log" 2>&1; then
    fail "$mode: the parent does not configure or build:"; tail -20 "$work/$mode.log"; return
  fi
  local tests
  tests=$(cd "$b" && ctest -N | sed -n 's/^ *Test *#[0-9]*: //p' | tr '\n' ' ')
  [ "$tests" = "parent_own_test " ] || fail "$mode: the parent's ctest lists '$tests', not only parent_own_test"
  (cd "$b" && ctest --output-on-failure >>"$work/$mode.log" 2>&1) || fail "$mode: the parent's test fails"
  local built
  built=$(cd "$b" && find . -name 'fastclock' -type f -perm -u+x; find . -name 'fc_bench' -o -name 'fastclock_unit_tests' -o -name 'fc_probe')
  [ -z "$built" ] || fail "$mode: built fastclock's tests, benchmarks or CLI: $built"
  grep -q '"file": *"[^"]*/src/[a-z]*\.c"' "$b/compile_commands.json" || fail "$mode: no fastclock source compiled?"
  if grep '"file": *"[^"]*/src/' -B3 "$b/compile_commands.json" | grep -q -- '-Werror'; then
    fail "$mode: fastclock's sources are compiled with -Werror as a subproject"
  fi
  local so a
  so=$(find "$b" -name 'libfastclock.so*' | head -1) a=$(find "$b" -name 'libfastclock.a' | head -1)
  if [ "$shared" = ON ]; then
    [ -n "$so" ] && [ -z "$a" ] || fail "$mode: BUILD_SHARED_LIBS=ON built so='$so' a='$a' (want the .so only)"
    readelf -d "$b/unit_tests" | grep -q 'NEEDED.*libfastclock.so' || fail "$mode: fastclock::fastclock is not the shared library"
  else
    [ -z "$so" ] && [ -n "$a" ] || fail "$mode: BUILD_SHARED_LIBS=OFF built so='$so' a='$a' (want the .a only)"
    readelf -d "$b/unit_tests" | grep -q 'NEEDED.*libfastclock' && fail "$mode: the program needs a shared libfastclock"
  fi
  cmake --install "$b" --prefix "$p" >>"$work/$mode.log" 2>&1 || fail "$mode: the parent's install fails"
  local installed
  installed=$(cd "$p" 2>/dev/null && find . -type f | sort | tr '\n' ' ')
  [ "$installed" = "./bin/unit_tests " ] || fail "$mode: the parent's install installed '$installed', not only its program"
  echo "subproject: $mode, BUILD_SHARED_LIBS=$shared: checked"
}

check_mode fetch OFF
check_mode subdir ON
((fails == 0)) && echo "subproject: ok" || echo "subproject: $fails checks failed"
((fails == 0))
