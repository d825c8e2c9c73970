#!/usr/bin/env bash
# An installed prefix stands alone, and pkg-config is right with absolute directories:
#   tests/package/run_standalone.sh SOURCE_DIR WORK_DIR
# Copies the source (git ls-files), configures it with an absolute CMAKE_INSTALL_LIBDIR and INCLUDEDIR (as
# distribution builds pass them), builds the library and the CLI, installs into WORK/prefix, then deletes the
# source copy and the build tree. Checks: pkg-config's libdir/includedir are the absolute ones; a consumer
# builds and runs with pkg-config and with find_package; the installed CLI runs info, bench, check and report
# (cli_smoke.sh); every relative link of an installed Markdown page names an installed file (md_links.py).
# FASTCLOCK_PYTHON, if set, is the Python with matplotlib for report. Exit 0, or 1.
set -uo pipefail
src=$(cd "$1" && pwd) work=$2
here=$(cd "$(dirname "$0")" && pwd)
fails=0
fail() { echo "standalone: FAIL $*"; fails=$((fails + 1)); }
. "$here/cli_smoke.sh"
rm -rf "$work" && mkdir -p "$work/src"
work=$(cd "$work" && pwd)
cp "$here/consumer.c" "$here/consumer.cpp" "$here/CMakeLists.txt" "$src/tests/cli/fixtures/check_small.json" "$work/"
mkdir -p "$work/consumer" && mv "$work/consumer.c" "$work/consumer.cpp" "$work/CMakeLists.txt" "$work/consumer/"
(cd "$src" && git ls-files -z | xargs -0 tar cf - --no-recursion) | tar xf - -C "$work/src" ||
  { echo "standalone: FAIL copying the source"; exit 1; }
pre=$work/prefix libdir=$work/prefix/lib64 incdir=$work/prefix/inc
if ! cmake -S "$work/src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFASTCLOCK_BUILD_TESTS=OFF \
    -DFASTCLOCK_BUILD_BENCH=OFF -DCMAKE_INSTALL_PREFIX="$pre" -DCMAKE_INSTALL_LIBDIR="$libdir" \
    -DCMAKE_INSTALL_INCLUDEDIR="$incdir" >"$work/build.log" 2>&1 ||
   ! cmake --build "$work/build" >>"$work/build.log" 2>&1 || ! cmake --install "$work/build" >>"$work/build.log" 2>&1; then
  echo "standalone: FAIL build/install:"; tail -20 "$work/build.log"; exit 1
fi
rm -rf "$work/src" "$work/build"

export PKG_CONFIG_PATH=$libdir/pkgconfig
[ "$(pkg-config --variable=libdir fastclock)" = "$libdir" ] || fail "pkg-config libdir '$(pkg-config --variable=libdir fastclock)', want $libdir"
[ "$(pkg-config --variable=includedir fastclock)" = "$incdir" ] || fail "pkg-config includedir '$(pkg-config --variable=includedir fastclock)', want $incdir"
# shellcheck disable=SC2046
cc -O2 -o "$work/consumer-pc" "$work/consumer/consumer.c" $(pkg-config --cflags --libs fastclock) -Wl,-rpath,"$libdir" \
  >"$work/pc.log" 2>&1 && "$work/consumer-pc" >>"$work/pc.log" 2>&1 || { fail "pkg-config consumer:"; cat "$work/pc.log"; }
cmake -S "$work/consumer" -B "$work/consumer-build" -G Ninja -Dfastclock_DIR="$libdir/cmake/fastclock" >"$work/fp.log" 2>&1 &&
  cmake --build "$work/consumer-build" >>"$work/fp.log" 2>&1 && "$work/consumer-build/consumer" >>"$work/fp.log" 2>&1 &&
  "$work/consumer-build/consumer_cxx" >>"$work/fp.log" 2>&1 || { fail "find_package consumer:"; tail -20 "$work/fp.log"; }
[ -f "$pre/share/fastclock/fastclock_report.py" ] || fail "no share/fastclock/fastclock_report.py in the prefix"
[ -f "$pre/share/man/man1/fastclock.1.gz" ] || fail "no share/man/man1/fastclock.1.gz in the prefix"
# every relative link of every installed Markdown page names a file installed in the prefix (md_links.py)
python3 "$here/md_links.py" "$pre" >"$work/md_links.txt" 2>&1 ||
  fail "installed Markdown links that resolve to nothing installed:
$(grep -v ' dead$' "$work/md_links.txt")"
cli_smoke "$pre/bin/fastclock" "$work/check_small.json" "$work/cli"
((fails == 0)) && echo "standalone: ok (source and build trees deleted; pkg-config, find_package, CLI from $pre)"
((fails == 0))
