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
# the library directory: Debian's multiarch one (lib/x86_64-linux-gnu) where the build is on Debian
ma=$(gcc -print-multiarch 2>/dev/null || true)
L=lib; [ -n "$ma" ] && [ -f /etc/debian_version ] && L=lib/$ma
want="$L/libfastclock.so.$abi $L/libfastclock.a include/fastclock.h include/fastclock.hpp include/fastclock/fc_hand.h
 include/fastclock/fc_counter.h $L/pkgconfig/fastclock.pc $L/cmake/fastclock/fastclockConfig.cmake
 $L/cmake/fastclock/fastclockTargets.cmake bin/fastclock share/fastclock/fastclock_report.py share/man/man1/fastclock.1.gz
 share/doc/fastclock/copyright share/doc/fastclock/changelog.gz"
for f in $want; do
  [ -e "$work/root/usr/$f" ] || fail ".deb lacks /usr/$f"
  [ -e "$work/tgz/$f" ] || fail ".tar.gz lacks $f"
done

# Issue 28 item 3: the file names follow the SONAME; Depends from the binaries; the report's Python recommended.
soname=$(readelf -d "$work/root/usr/$L/libfastclock.so.$abi" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libfastclock.so.$abi" ] || fail "SONAME '$soname', want libfastclock.so.$abi"
real=$(readlink "$work/root/usr/$L/libfastclock.so.$abi")
case $real in libfastclock.so.$abi.*) ;; *) fail "libfastclock.so.$abi -> '$real', want libfastclock.so.$abi.MINOR.PATCH" ;; esac
deps=$(dpkg-deb -f "$deb" Depends) recs=$(dpkg-deb -f "$deb" Recommends)
for d in libc6 libstdc++6 libgcc-s1; do
  echo "$deps" | grep -q "\b$d\b" || fail "Depends '$deps' lacks $d (the fastclock binary links it)"
done
echo "$recs" | grep -q python3-matplotlib || fail "Recommends '$recs' lacks python3-matplotlib"
# Issue 28 item 2: no path of the source or build tree in any installed file (the tool finds its script and a
# Python at run time).
leaks=$(grep -rlF -e "$src" -e "$build" "$work/root" 2>/dev/null | sed "s|$work/root||" | tr '\n' ' ')
[ -z "$leaks" ] || fail "installed files name the source or build tree: $leaks"
# lintian, where installed: every error tag is one explained in tests/package/lintian-explained.txt.
if command -v lintian >/dev/null; then
  lintian --no-tag-display-limit "$deb" >"$work/lintian.txt" 2>&1
  sed 's/^/deb: lintian: /' "$work/lintian.txt"
  while read -r tag; do
    grep -q "^$tag " "$here/lintian-explained.txt" || fail "lintian error '$tag' (fix it, or explain it in lintian-explained.txt)"
  done < <(sed -n 's/^E: [^:]*: \([a-z0-9-]*\).*/\1/p' "$work/lintian.txt" | sort -u)
else
  echo "deb: lintian not installed (scripts/setup.sh installs it): skipped"
fi

# The man page: generated from docs/cli.md, so each of its sections is there, less the developer's parts
# (issue 28 item 4: no HTML comment, test name, preset or source path).
man -l -E UTF-8 "$work/root/usr/share/man/man1/fastclock.1.gz" >"$work/man.txt" 2>"$work/man.err" || fail "man -l fails"
# ... at a terminal's 80 columns without a word from troff (a path too long to break said "cannot adjust line")
MANWIDTH=80 man -l -E UTF-8 "$work/root/usr/share/man/man1/fastclock.1.gz" >/dev/null 2>"$work/man80.err"
[ ! -s "$work/man80.err" ] || fail "man at 80 columns: $(head -3 "$work/man80.err")"
if grep -nE '<!--|cli_py_|--preset|build/|\.venv|scripts/|tools/|tests/|docs/|src/' "$work/man.txt"; then
  fail "the man page speaks to the developer (lines above)"
fi
for s in NAME SYNOPSIS DESCRIPTION $(sed -n '/<!-- man: skip -->/,/<!-- \/man: skip -->/d; s/^## //p' "$src/docs/cli.md" | tr -d '`' | tr 'a-z ' 'A-Z_'); do
  grep -q "^${s//_/ }" "$work/man.txt" || fail "the man page has no section '${s//_/ }'"
done

# Consumers against the extracted root: find_package (shared and static targets) and pkg-config.
root=$work/root/usr
lib=$root/$L
cmake -S "$here" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$root" >"$work/fp.log" 2>&1 &&
  cmake --build "$work/consumer" >>"$work/fp.log" 2>&1 &&
  LD_LIBRARY_PATH="$lib" "$work/consumer/consumer" >>"$work/fp.log" 2>&1 && "$work/consumer/consumer_cxx" >>"$work/fp.log" 2>&1 ||
  { fail "find_package consumer:"; tail -20 "$work/fp.log"; }
export PKG_CONFIG_PATH=$lib/pkgconfig
# shellcheck disable=SC2046
cc -O2 -o "$work/consumer-pc" "$here/consumer.c" $(pkg-config --cflags --libs fastclock) >"$work/pc.log" 2>&1 &&
  LD_LIBRARY_PATH="$lib" "$work/consumer-pc" >>"$work/pc.log" 2>&1 || { fail "pkg-config consumer:"; cat "$work/pc.log"; }
# the .pc's rpath_flags: a program built with them runs without LD_LIBRARY_PATH (README, issue 28 item 5)
# shellcheck disable=SC2046
cc -O2 -o "$work/consumer-rpath" "$here/consumer.c" $(pkg-config --cflags --libs fastclock) \
  $(pkg-config --variable=rpath_flags fastclock) >>"$work/pc.log" 2>&1 &&
  env -u LD_LIBRARY_PATH "$work/consumer-rpath" >>"$work/pc.log" 2>&1 || { fail "pkg-config rpath_flags consumer:"; cat "$work/pc.log"; }
# The README's C example as a reader copies it, built as the README says against a prefix the loader does not
# search (the unpacked tarball): pkg-config with rpath_flags, no LD_LIBRARY_PATH; it prints its two lines.
awk '/^```c$/{f=1; next} /^```$/{f=0} f' "$src/README.md" >"$work/readme_app.c"
tpc=$work/tgz/$L/pkgconfig
# shellcheck disable=SC2046
cc -Wall -Wextra -Werror -o "$work/readme_app" "$work/readme_app.c" $(PKG_CONFIG_PATH=$tpc pkg-config --cflags --libs \
  fastclock) $(PKG_CONFIG_PATH=$tpc pkg-config --variable=rpath_flags fastclock) >"$work/readme.log" 2>&1 &&
  env -u LD_LIBRARY_PATH "$work/readme_app" >>"$work/readme.log" 2>&1 &&
  grep -q '^UTC is within \[-\?[0-9]*, -\?[0-9]*\] ns (' "$work/readme.log" && grep -q '^took [0-9]* ns; captured at' "$work/readme.log" ||
  { fail "the README's example against the tarball:"; cat "$work/readme.log"; }
# shellcheck disable=SC2046
cc -O2 -o "$work/consumer-pc-static" "$here/consumer.c" $(pkg-config --cflags fastclock) "$lib/libfastclock.a" \
  $(pkg-config --static --libs-only-l fastclock | sed 's/-lfastclock//') >>"$work/pc.log" 2>&1 &&
  "$work/consumer-pc-static" >>"$work/pc.log" 2>&1 || { fail "pkg-config static consumer:"; cat "$work/pc.log"; }

cli_smoke "$root/bin/fastclock" "$src/tests/cli/fixtures/check_small.json" "$work/cli"
# The same with the source and build trees out of reach (issue 28 item 2): in a private mount namespace, empty
# directories over the build tree and the source's tools/, docs/, include/, src/ and cmake/ (root only).
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null; then
  cp "$src/tests/cli/fixtures/check_small.json" "$work/fixture.json"
  hide="$build"; for d in tools docs include src cmake; do hide="$hide $src/$d"; done
  # shellcheck disable=SC2016
  unshare -m sh -c 'for d in $1; do mount -t tmpfs none "$d" || exit 9; done
    [ ! -e "$2/report/fastclock_report.py" ] || exit 8
    "$3" report "$4" -o "$5" >"$5.txt" 2>&1' _ "$hide $src/tools" "$src/tools" "$root/bin/fastclock" \
    "$work/fixture.json" "$work/hidden"; rc=$?
  if [ $rc -ge 8 ] && [ $rc -le 9 ]; then
    echo "deb: could not hide the source tree (exit $rc): skipped"
  elif [ $rc -ne 0 ] && { [ -n "${FASTCLOCK_PYTHON:-}" ] || ! grep -q "apt install python3-matplotlib" "$work/hidden.txt"; }; then
    fail "report with the source tree hidden: exit $rc: $(head -3 "$work/hidden.txt")"
  fi
fi
# Without FASTCLOCK_PYTHON, the report finds a python3 with matplotlib on PATH by itself.
if [ -n "${FASTCLOCK_PYTHON:-}" ]; then
  env -u FASTCLOCK_PYTHON PATH="$(dirname "$FASTCLOCK_PYTHON"):/usr/bin:/bin" "$root/bin/fastclock" report \
    "$src/tests/cli/fixtures/check_small.json" -o "$work/found" >"$work/found.txt" 2>&1 ||
    fail "report without FASTCLOCK_PYTHON did not find $(dirname "$FASTCLOCK_PYTHON")/python3: $(head -3 "$work/found.txt")"
fi
# ... and where no Python has matplotlib, it says exactly what to install.
mkdir -p "$work/nopy" && printf '#!/bin/sh\nexec /usr/bin/python3 -S -I "$@"\n' >"$work/nopy/python3" && chmod +x "$work/nopy/python3"
env -u FASTCLOCK_PYTHON PATH="$work/nopy:/bin" "$root/bin/fastclock" report "$src/tests/cli/fixtures/check_small.json" \
  -o "$work/nopy-out" >"$work/nopy.txt" 2>&1; rc=$?
if [ ! -x /usr/bin/python3 ] || /usr/bin/python3 -c 'import matplotlib, jsonschema' 2>/dev/null; then
  : # Debian's python3 has them: nothing to say
elif [ $rc -ne 1 ] || ! grep -q "apt install python3-matplotlib python3-jsonschema" "$work/nopy.txt"; then
  fail "report without matplotlib: exit $rc, want 1 and the packages to install: $(head -3 "$work/nopy.txt")"
fi
((fails == 0)) && echo "deb: ok ($(basename "$deb"), $(basename "$tgz"))"
((fails == 0))
