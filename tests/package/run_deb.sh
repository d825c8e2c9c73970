#!/usr/bin/env bash
# The Debian package and the tarball CPack builds (issue 10), tested without installing into the system:
#   tests/package/run_deb.sh BUILD_DIR WORK_DIR
# BUILD_DIR is a configured and built top-level build (build/dev). Runs cpack -G "DEB;TGZ" there, extracts the
# .deb with dpkg-deb -x into WORK/root and the .tar.gz into WORK/tgz, and checks: both hold the shared and
# static library, the headers, the pkg-config and CMake files, the CLI, its report script and the man page;
# the man page renders (man -l) with NAME, SYNOPSIS and every section of docs/cli.md; a consumer builds
# against the extracted root with find_package and with pkg-config, and runs; the extracted CLI runs info,
# bench, check and report (cli_smoke.sh). FASTCLOCK_PYTHON, if set, is the Python with matplotlib. Exit 0 or 1.
set -uo pipefail
build=$(cd "$1" && pwd) work=$2
here=$(cd "$(dirname "$0")" && pwd) src=$(cd "$(dirname "$0")/../.." && pwd)
fails=0
fail() { echo "deb: FAIL $*"; fails=$((fails + 1)); }
. "$here/cli_smoke.sh"
rm -rf "$work" && mkdir -p "$work/root" "$work/tgz"
work=$(cd "$work" && pwd)
rm -f "$build"/fastclock-*.deb "$build"/fastclock_*.deb "$build"/fastclock-*.tar.gz
(cd "$build" && cpack -G "DEB;TGZ" >"$work/cpack.log" 2>&1) || { echo "deb: FAIL cpack:"; tail -20 "$work/cpack.log"; exit 1; }
deb=$(ls "$build"/fastclock*.deb 2>/dev/null | head -1) tgz=$(ls "$build"/fastclock-*.tar.gz 2>/dev/null | head -1)
[ -n "$deb" ] && [ -n "$tgz" ] || { echo "deb: FAIL cpack made no .deb or .tar.gz in $build"; exit 1; }
dpkg-deb -x "$deb" "$work/root" || { echo "deb: FAIL dpkg-deb -x $deb"; exit 1; }
tar xzf "$tgz" -C "$work/tgz" --strip-components=1 || { echo "deb: FAIL tar xzf $tgz"; exit 1; }
dpkg-deb -f "$deb" Package Version Architecture Depends | sed 's/^/deb: /'

abi=$(sed -n 's/^#define FASTCLOCK_ABI \([0-9]*\)$/\1/p' "$src/include/fastclock.h")
want="lib/libfastclock.so.$abi lib/libfastclock.a include/fastclock.h include/fastclock.hpp include/fastclock/fc_hand.h
 include/fastclock/fc_counter.h lib/pkgconfig/fastclock.pc lib/cmake/fastclock/fastclockConfig.cmake
 lib/cmake/fastclock/fastclockTargets.cmake bin/fastclock share/fastclock/fastclock_report.py share/man/man1/fastclock.1"
for f in $want; do
  [ -e "$work/root/usr/$f" ] || fail ".deb lacks /usr/$f"
  [ -e "$work/tgz/$f" ] || fail ".tar.gz lacks $f"
done

# The man page: generated from docs/cli.md, so each of its sections is there.
man -l -E UTF-8 "$work/root/usr/share/man/man1/fastclock.1" >"$work/man.txt" 2>"$work/man.err" || fail "man -l fails"
for s in NAME SYNOPSIS DESCRIPTION $(sed -n 's/^## //p' "$src/docs/cli.md" | tr -d '`' | tr 'a-z ' 'A-Z_'); do
  grep -q "^${s//_/ }" "$work/man.txt" || fail "the man page has no section '${s//_/ }'"
done

# Consumers against the extracted root: find_package (shared and static targets) and pkg-config.
root=$work/root/usr
cmake -S "$here" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$root" >"$work/fp.log" 2>&1 &&
  cmake --build "$work/consumer" >>"$work/fp.log" 2>&1 &&
  LD_LIBRARY_PATH="$root/lib" "$work/consumer/consumer" >>"$work/fp.log" 2>&1 && "$work/consumer/consumer_cxx" >>"$work/fp.log" 2>&1 ||
  { fail "find_package consumer:"; tail -20 "$work/fp.log"; }
export PKG_CONFIG_PATH=$root/lib/pkgconfig
# shellcheck disable=SC2046
cc -O2 -o "$work/consumer-pc" "$here/consumer.c" $(pkg-config --cflags --libs fastclock) >"$work/pc.log" 2>&1 &&
  LD_LIBRARY_PATH="$root/lib" "$work/consumer-pc" >>"$work/pc.log" 2>&1 || { fail "pkg-config consumer:"; cat "$work/pc.log"; }
# shellcheck disable=SC2046
cc -O2 -o "$work/consumer-pc-static" "$here/consumer.c" $(pkg-config --cflags fastclock) "$root/lib/libfastclock.a" \
  $(pkg-config --static --libs-only-l fastclock | sed 's/-lfastclock//') >>"$work/pc.log" 2>&1 &&
  "$work/consumer-pc-static" >>"$work/pc.log" 2>&1 || { fail "pkg-config static consumer:"; cat "$work/pc.log"; }

cli_smoke "$root/bin/fastclock" "$src/tests/cli/fixtures/check_small.json" "$work/cli"
((fails == 0)) && echo "deb: ok ($(basename "$deb"), $(basename "$tgz"))"
((fails == 0))
