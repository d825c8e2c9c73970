#!/usr/bin/env bash
# The Debian packages and the tarball CPack builds (the library split in three), tested without installing into
# the system:
#   tests/package/run_deb.sh BUILD_DIR WORK_DIR
# BUILD_DIR is a configured and built top-level build (build/dev). Runs cpack -G "DEB;TGZ" there: three .debs,
# libfastclockABI (the shared library only), libfastclock-dev (headers, the .so link, the static library, CMake
# and pkg-config files) and fastclock (the CLI, its report script, the man page), and one .tar.gz with
# everything. Checks each .deb's files (dpkg-deb -c: exactly its own, none in two packages) and control fields
# (dpkg-deb -f/-I: names, sections, Depends, shlibs, the ldconfig trigger); lintian: no error or warning that
# tests/package/lintian-explained.txt does not explain. Installs them with dpkg --root into a scratch root
# (root only): dependencies, ldconfig, purge. Extracts (dpkg-deb -x) the runtime package alone into
# WORK/lib, all three into WORK/root, the tarball into WORK/tgz; checks that every relative link of an installed
# Markdown page resolves to a file of its own package (md_links.py); checks the man page renders (man -l) with NAME,
# SYNOPSIS and every section of docs/cli.md; builds consumers against WORK/root with find_package and with
# pkg-config and runs them on WORK/lib's library only; runs the extracted CLI (info, bench, check, report:
# cli_smoke.sh), and info and check as an unprivileged user where run as root. FASTCLOCK_PYTHON, if set, is the
# Python with matplotlib. Exit 0 or 1.
set -uo pipefail
build=$(cd "$1" && pwd) work=$2
here=$(cd "$(dirname "$0")" && pwd) src=$(cd "$(dirname "$0")/../.." && pwd)
fails=0
fail() { echo "deb: FAIL $*"; fails=$((fails + 1)); }
. "$here/cli_smoke.sh"
rm -rf "$work" && mkdir -p "$work/root" "$work/lib" "$work/tgz"
work=$(cd "$work" && pwd)
rm -f "$build"/*.deb "$build"/fastclock-*.tar.gz
(cd "$build" && cpack -G "DEB;TGZ" >"$work/cpack.log" 2>&1) || { echo "deb: FAIL cpack:"; tail -20 "$work/cpack.log"; exit 1; }

hdr() { sed -n "s/^#define FASTCLOCK_$1 \([0-9]*\)$/\1/p" "$src/include/fastclock.h"; }
abi=$(hdr ABI) ver=$(hdr VERSION_MAJOR).$(hdr VERSION_MINOR).$(hdr VERSION_PATCH) arch=$(dpkg --print-architecture)
libpkg=libfastclock$abi
rt=$build/${libpkg}_${ver}_$arch.deb dev=$build/libfastclock-dev_${ver}_$arch.deb cli=$build/fastclock_${ver}_$arch.deb
tgz=$(ls "$build"/fastclock-*.tar.gz 2>/dev/null | head -1)
for d in "$rt" "$dev" "$cli"; do [ -f "$d" ] || { echo "deb: FAIL cpack made no $(basename "$d") ($(cd "$build" && ls ./*.deb))"; exit 1; }; done
[ -n "$tgz" ] || { echo "deb: FAIL cpack made no .tar.gz in $build"; exit 1; }
# exactly these three (an install rule without a component would make a fourth, fastclock-Unspecified)
[ "$(ls "$build"/*.deb | wc -l)" -eq 3 ] || fail "cpack made other .debs: $(cd "$build" && ls ./*.deb | tr '\n' ' ')"
for d in "$rt" "$dev" "$cli"; do
  dpkg-deb -x "$d" "$work/root" || { echo "deb: FAIL dpkg-deb -x $d"; exit 1; }
  echo "deb: $(basename "$d"): $(stat -c %s "$d") bytes; $(dpkg-deb -f "$d" Package Version Section Installed-Size Depends | tr '\n' ' ')"
done
# Nothing in a package writable by its group or others, and all root's: a builder's umask 002 made every directory
# 0775 (dpkg creates the new ones so: /usr/share/fastclock, whose script the CLI runs). Links aside (always 0777).
for d in "$rt" "$dev" "$cli"; do
  bad=$(dpkg-deb -c "$d" | awk '$1 !~ /^l/ && (substr($1, 6, 1) == "w" || substr($1, 9, 1) == "w" || $2 != "root/root") {print $1, $2, $6}')
  [ -z "$bad" ] || fail "$(basename "$d") has entries others may write or not root's: $bad"
done
bad=$(tar tvzf "$tgz" | awk '$1 !~ /^l/ && (substr($1, 6, 1) == "w" || substr($1, 9, 1) == "w") {print $1, $6}')
[ -z "$bad" ] || fail "$(basename "$tgz") has entries others may write: $bad"
dpkg-deb -x "$rt" "$work/lib" || { echo "deb: FAIL dpkg-deb -x $rt"; exit 1; }
tar xzf "$tgz" -C "$work/tgz" --strip-components=1 || { echo "deb: FAIL tar xzf $tgz"; exit 1; }

# the library directory: Debian's multiarch one (lib/x86_64-linux-gnu) where the build is on Debian
ma=$(gcc -print-multiarch 2>/dev/null || true)
L=lib; [ -n "$ma" ] && [ -f /etc/debian_version ] && L=lib/$ma
real=$(readlink "$work/root/usr/$L/libfastclock.so.$abi")
case $real in libfastclock.so.$abi.*) ;; *) fail "libfastclock.so.$abi -> '$real', want libfastclock.so.$abi.MINOR.PATCH" ;; esac
# Each package's files (not directories), exactly: the runtime nothing but the library, so a machine that only
# runs programs linking it installs nothing else.
files() { dpkg-deb -c "$1" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./usr/||' | sort; }
docs() { printf '%s\n' "share/doc/$1/changelog.gz" "share/doc/$1/copyright"; }
want_rt=$({ printf '%s\n' "$L/libfastclock.so.$abi" "$L/$real"; docs "$libpkg"; } | sort)
want_dev=$({ printf '%s\n' include/fastclock.h include/fastclock.hpp include/fastclock/fc_hand.h include/fastclock/fc_counter.h \
  "$L/libfastclock.so" "$L/libfastclock.a" "$L/pkgconfig/fastclock.pc" "$L/cmake/fastclock/fastclockConfig.cmake" \
  "$L/cmake/fastclock/fastclockConfigVersion.cmake" "$L/cmake/fastclock/fastclockTargets.cmake" share/doc/fastclock/API.md \
  share/doc/fastclock/THREATS.md
  (cd "$work/root/usr" && ls "$L"/cmake/fastclock/fastclockTargets-*.cmake 2>/dev/null); docs libfastclock-dev; } | sort)
want_cli=$({ printf '%s\n' bin/fastclock share/fastclock/fastclock_report.py share/fastclock/bench.schema.json \
  share/man/man1/fastclock.1.gz; docs fastclock; } | sort)
for p in rt dev cli; do
  v=want_$p got=$(files "${!p}")
  [ "$got" = "${!v}" ] || fail "$(basename "${!p}") holds other files than it should:
$(diff <(echo "${!v}") <(echo "$got") | grep '^[<>]' | sed 's/^</  missing/; s/^>/  extra  /')"
done
dup=$(for d in "$rt" "$dev" "$cli"; do files "$d"; done | sort | uniq -d)
[ -z "$dup" ] || fail "files in two packages: $dup"
# The tarball: everything, as one relocatable prefix (the tool's documents only).
for f in $want_dev $want_cli "$L/libfastclock.so.$abi" "$L/$real"; do
  case $f in share/doc/libfastclock-dev/*) continue ;; esac
  [ -e "$work/tgz/$f" ] || fail ".tar.gz lacks $f"
done
# Every relative link of every installed Markdown page names a file installed with it (a #fragment: a heading of
# it), in each package alone (what a user who installs only that one reads) and in the tarball: no link into the
# source tree (md_links.py).
md_links() { # DIR NAME
  python3 "$here/md_links.py" "$1" >"$work/md_links.txt" 2>&1 ||
    fail "$2: installed Markdown links that resolve to nothing installed:
$(grep -v ' dead$' "$work/md_links.txt")"
}
for d in "$rt" "$dev" "$cli"; do
  [ -n "$(dpkg-deb -c "$d" | grep '\.md$')" ] || continue
  a=$work/alone/${d##*/}
  mkdir -p "$a" && dpkg-deb -x "$d" "$a" && md_links "$a" "${d##*/}"
done
md_links "$work/tgz" "${tgz##*/}"

# Control fields: names, sections, one version; Depends from the binaries and between the
# packages; the shlibs file and the ldconfig trigger on the runtime package; the report's Python recommended.
field() { dpkg-deb -f "$1" "$2"; }
for p in "rt:$libpkg:libs" "dev:libfastclock-dev:libdevel" "cli:fastclock:utils"; do
  IFS=: read -r v name sec <<<"$p"
  [ "$(field "${!v}" Package)" = "$name" ] || fail "$(basename "${!v}"): Package '$(field "${!v}" Package)', want $name"
  [ "$(field "${!v}" Version)" = "$ver" ] || fail "$(basename "${!v}"): Version '$(field "${!v}" Version)', want $ver"
  [ "$(field "${!v}" Section)" = "$sec" ] || fail "$(basename "${!v}"): Section '$(field "${!v}" Section)', want $sec"
done
[ "$(for d in "$rt" "$dev" "$cli"; do field "$d" Description | head -1; done | sort -u | wc -l)" -eq 3 ] ||
  fail "the packages' synopses are not three different ones"
soname=$(readelf -d "$work/root/usr/$L/$real" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libfastclock.so.$abi" ] || fail "SONAME '$soname', want libfastclock.so.$abi"
deps_rt=$(field "$rt" Depends)
[[ $deps_rt =~ ^libc6\ \(\>=\ [0-9.]+\)$ ]] || fail "$libpkg Depends '$deps_rt', want libc6 alone (the library links only libc)"
[ -z "$(field "$rt" Recommends)" ] || fail "$libpkg recommends '$(field "$rt" Recommends)': the library needs none of it"
shl=$(dpkg-deb --ctrl-tarfile "$rt" | tar xOf - ./shlibs 2>/dev/null)
[ "$shl" = "libfastclock $abi $libpkg (>= $ver)" ] || fail "$libpkg shlibs '$shl', want 'libfastclock $abi $libpkg (>= $ver)'"
dpkg-deb --ctrl-tarfile "$rt" | tar xOf - ./triggers 2>/dev/null | grep -qx 'activate-noawait ldconfig' ||
  fail "$libpkg has no ldconfig trigger"
# ... and no maintainer script calling ldconfig beside it (policy 8.1.1; lintian: maintscript-calls-ldconfig)
dpkg-deb --ctrl-tarfile "$rt" | tar tf - | grep -qE '^\./(postinst|postrm)$' &&
  fail "$libpkg has a postinst or postrm (the ldconfig trigger is all it needs)"
# A Maintainer of the form "Name <address>" (FASTCLOCK_DEB_MAINTAINER) at a host lintian accepts; no Replaces
# (no earlier package of these names shares their files).
for d in "$rt" "$dev" "$cli"; do
  m=$(field "$d" Maintainer)
  [[ $m =~ ^[^\<\>]+\ \<[^@\ ]+@[a-z0-9.-]+\.[a-z]+\>$ ]] && [[ $m != *@localhost* ]] ||
    fail "$(basename "$d"): Maintainer '$m', want 'Name <user@host.domain>'"
  [ -z "$(field "$d" Replaces)" ] || fail "$(basename "$d"): Replaces '$(field "$d" Replaces)': it replaces no package"
done
for d in "$dev" "$cli"; do
  dpkg-deb --ctrl-tarfile "$d" | tar tf - | grep -qE '^\./(shlibs|triggers|postinst|postrm)$' &&
    fail "$(basename "$d") has a shlibs file, trigger or maintainer script: only the runtime package holds the library"
done
[ "$(field "$dev" Depends)" = "$libpkg (= $ver)" ] || fail "libfastclock-dev Depends '$(field "$dev" Depends)', want '$libpkg (= $ver)'"
# The CLI: Depends says what its binary links, no more: the C++ runtime always; never Abseil's (its clocks join
# `fastclock bench` only in a -DFASTCLOCK_CLI_ABSL=ON build, which is not packaged); libfastclockABI (= version)
# only if it links the shared library (it links the static one).
deps=$(field "$cli" Depends) needed=$(readelf -d "$work/root/usr/bin/fastclock" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for d in libc6 libstdc++6 libgcc-s1; do
  echo "$deps" | grep -q "\b$d\b" || fail "fastclock Depends '$deps' lacks $d (the fastclock binary links it)"
done
echo "$needed" | grep -q '^libabsl_' && fail "the packaged fastclock links Abseil: $(echo "$needed" | grep -c '^libabsl_') libabsl_* libraries"
echo "$deps" | grep -q '\blibabsl' && fail "fastclock Depends '$deps' names Abseil"
if echo "$needed" | grep -q "^libfastclock\.so\.$abi$"; then
  echo "$deps" | grep -qF "$libpkg (= $ver)" || fail "fastclock links libfastclock.so.$abi; Depends '$deps' lacks $libpkg (= $ver)"
else
  echo "$deps" | grep -q "\b$libpkg\b" && fail "fastclock Depends '$deps' names $libpkg, which it does not link"
fi
recs=$(field "$cli" Recommends)
echo "$recs" | grep -q python3-matplotlib && echo "$recs" | grep -q python3-jsonschema ||
  fail "fastclock Recommends '$recs' lacks python3-matplotlib or python3-jsonschema"
# No path of the source or build tree in any installed file (the tool finds its script and a
# Python at run time).
leaks=$(grep -rlF -e "$src" -e "$build" "$work/root" 2>/dev/null | sed "s|$work/root||" | tr '\n' ' ')
[ -z "$leaks" ] || fail "installed files name the source or build tree: $leaks"
# lintian, where installed: no error and no warning (a tag listed in tests/package/lintian-explained.txt with the
# reason it is wrong for these packages aside; none is listed today). Info tags are printed, not judged.
if command -v lintian >/dev/null; then
  lintian --tag-display-limit 0 "$rt" "$dev" "$cli" >"$work/lintian.txt" 2>&1
  grep -v '^running with root privileges' "$work/lintian.txt" | sed 's/^/deb: lintian: /'
  while read -r tag; do
    grep -q "^$tag " "$here/lintian-explained.txt" || fail "lintian '$tag' (fix it, or explain it in lintian-explained.txt)"
  done < <(sed -n 's/^[EW]: [^:]*: \([a-z0-9-]*\).*/\1/p' "$work/lintian.txt" | sort -u)
else
  echo "deb: lintian not installed (scripts/setup.sh installs it): skipped"
fi

# Installed as dpkg installs them, into a scratch root, never this machine's (root only): dpkg --root=WORK/dpkg,
# whose database holds this machine's records of what the three depend on (dpkg-query -s, followed through their
# Depends) and nothing else, with a /bin/sh and ldconfig for the maintainer scripts dpkg runs chrooted there.
# libfastclock-dev alone is refused (its libfastclockABI missing); the runtime package installs on libc6 alone
# and ldconfig ran (by its trigger); then -dev and the tool; purged, nothing is left.
dpkg_root() {
  local S=$work/dpkg d p need next seen="" out=$work/dpkg.log
  rm -rf "$S" && mkdir -p "$S/var/lib/dpkg/info" "$S/var/lib/dpkg/updates" "$S/bin" "$S/sbin" "$S/etc" || return 1
  touch "$S/var/lib/dpkg/available" "$S/var/lib/dpkg/status"
  for p in "$(readlink -f /bin/sh)" "$(readlink -f "$(command -v ldconfig || echo /sbin/ldconfig)")"; do
    for d in $(ldd "$p" 2>/dev/null | grep -o '/[^ ]*'); do mkdir -p "$S$(dirname "$d")" && cp -L "$d" "$S$d"; done
  done
  cp "$(readlink -f /bin/sh)" "$S/bin/sh" && cp "$(readlink -f "$(command -v ldconfig || echo /sbin/ldconfig)")" "$S/sbin/ldconfig" || return 1
  deps_of() { tr ',|' '\n\n' | sed 's/(.*//; s/:any//; s/[[:space:]]//g' | grep -v "^$\|^libfastclock"; }
  records() { # PACKAGE.deb...: this machine's records of their Depends, followed, into the scratch database
    need=$(for d in "$@"; do field "$d" Depends; done | deps_of | sort -u)
    while [ -n "$need" ]; do
      next=""
      for p in $need; do
        case " $seen " in *" $p "*) continue ;; esac
        seen="$seen $p"
        { dpkg-query -s "$p" && echo; } >>"$S/var/lib/dpkg/status" 2>/dev/null || continue
        next="$next $(dpkg-query -W -f='${Depends},${Pre-Depends}\n' "$p" | deps_of | tr '\n' ' ')"
      done
      need=$next
    done
  }
  # libc-bin as this machine has it, for its interest in the ldconfig trigger (interest-noawait ldconfig) that the
  # runtime package activates: its postinst, run for the trigger, runs ldconfig, as on an installed system
  seen=" libc-bin"
  { dpkg-query -s libc-bin && echo; } >>"$S/var/lib/dpkg/status" 2>/dev/null
  cp /var/lib/dpkg/info/libc-bin.postinst /var/lib/dpkg/info/libc-bin.triggers "$S/var/lib/dpkg/info/" 2>/dev/null
  mkdir -p "$S/var/lib/dpkg/triggers" && echo libc-bin/noawait >"$S/var/lib/dpkg/triggers/ldconfig" &&
    touch "$S/var/lib/dpkg/triggers/File"
  records "$rt"
  local D=(dpkg --root="$S" --log="$S/dpkg.log")
  "${D[@]}" -i "$dev" >"$out" 2>&1 && fail "dpkg installed libfastclock-dev without $libpkg"
  grep -qF "libfastclock-dev depends on $libpkg (= $ver)" "$out" || fail "dpkg -i libfastclock-dev alone: $(grep -v 'files list' "$out" | tail -3)"
  "${D[@]}" --purge libfastclock-dev >>"$out" 2>&1
  "${D[@]}" -i "$rt" >>"$out" 2>&1 || fail "dpkg -i $libpkg on libc6 alone: $(grep -v 'files list' "$out" | tail -3)"
  strings "$S/etc/ld.so.cache" 2>/dev/null | grep -q "libfastclock\.so\.$abi" || fail "ldconfig did not run at $libpkg's install"
  echo "deb: dpkg --root: $libpkg installed beside only$seen"
  records "$dev" "$cli"
  "${D[@]}" -i "$dev" "$cli" >>"$out" 2>&1 || fail "dpkg -i libfastclock-dev fastclock: $(grep -v 'files list' "$out" | tail -3)"
  [ "$("${D[@]}" -l 2>/dev/null | grep -c "^ii  \($libpkg\|libfastclock-dev\|fastclock\) ")" -eq 3 ] || fail "the three are not all installed"
  "${D[@]}" --purge fastclock libfastclock-dev "$libpkg" >>"$out" 2>&1 || fail "dpkg --purge: $(tail -3 "$out")"
  left=$(cd "$S" && find usr -type f 2>/dev/null | tr '\n' ' ')
  [ -z "$left" ] || fail "files left after the three were purged: $left"
}
if [ "$(id -u)" -eq 0 ] && [ -r /var/lib/dpkg/status ] && command -v dpkg-query >/dev/null; then
  dpkg_root
else
  echo "deb: not root or no dpkg database: dpkg --root install skipped"
fi

# The man page: generated from docs/cli.md, so each of its sections is there, less the developer's parts
# (no HTML comment, test name, preset or source path).
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

# Consumers built against the extracted packages (all three: WORK/root) with find_package (shared and static
# targets) and pkg-config, then run on the runtime package's library alone (WORK/lib; built without an rpath,
# so the loader finds only that one).
root=$work/root/usr
lib=$root/$L rtlib=$work/lib/usr/$L
runs_on_rt() { # PROGRAM: runs with LD_LIBRARY_PATH=WORK/lib's libdir, and its libfastclock.so.ABI is that one
  # grep reads all of ldd's output (not -q: under pipefail, an ldd still writing when grep -q left died of SIGPIPE)
  LD_LIBRARY_PATH=$rtlib "$1" && LD_LIBRARY_PATH=$rtlib ldd "$1" | grep -F "libfastclock.so.$abi => $rtlib/libfastclock.so.$abi (" >/dev/null
}
cmake -S "$here" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$root" -DCMAKE_SKIP_BUILD_RPATH=ON >"$work/fp.log" 2>&1 &&
  cmake --build "$work/consumer" >>"$work/fp.log" 2>&1 && runs_on_rt "$work/consumer/consumer" >>"$work/fp.log" 2>&1 &&
  "$work/consumer/consumer_cxx" >>"$work/fp.log" 2>&1 || { fail "find_package consumer:"; tail -20 "$work/fp.log"; }
export PKG_CONFIG_PATH=$lib/pkgconfig
# The .deb's fastclock.pc names /usr literally, so pkg-config prints what it prints for zlib: no -I of
# /usr/include, no -L of the system library directory (an explicit system -L can make the linker pick other
# copies of other libraries).
[ "$(pkg-config --variable=prefix fastclock)" = /usr ] || fail "fastclock.pc: prefix '$(pkg-config --variable=prefix fastclock)', want /usr"
[ "$(pkg-config --variable=libdir fastclock)" = "/usr/$L" ] || fail "fastclock.pc: libdir '$(pkg-config --variable=libdir fastclock)', want /usr/$L"
pcout=$(PKG_CONFIG_SYSTEM_LIBRARY_PATH=/usr/$L PKG_CONFIG_SYSTEM_INCLUDE_PATH=/usr/include pkg-config --cflags --libs fastclock | xargs)
[ "$pcout" = -lfastclock ] || fail "pkg-config --cflags --libs fastclock: '$pcout', want '-lfastclock'"
# The extracted tree stands in for /usr: the consumers are built with its prefix.
pkg-config() { command pkg-config --define-variable=prefix="$root" "$@"; }
# shellcheck disable=SC2046
cc -O2 -o "$work/consumer-pc" "$here/consumer.c" $(pkg-config --cflags --libs fastclock) >"$work/pc.log" 2>&1 &&
  runs_on_rt "$work/consumer-pc" >>"$work/pc.log" 2>&1 || { fail "pkg-config consumer:"; cat "$work/pc.log"; }
# the .pc's rpath_flags: a program built with them runs without LD_LIBRARY_PATH (as the README says)
# shellcheck disable=SC2046
cc -O2 -o "$work/consumer-rpath" "$here/consumer.c" $(pkg-config --cflags --libs fastclock) \
  $(pkg-config --variable=rpath_flags fastclock) >>"$work/pc.log" 2>&1 &&
  env -u LD_LIBRARY_PATH "$work/consumer-rpath" >>"$work/pc.log" 2>&1 || { fail "pkg-config rpath_flags consumer:"; cat "$work/pc.log"; }
# The README's C example as a reader copies it, built as the README says against a prefix the loader does not
# search (the unpacked tarball): pkg-config with rpath_flags, no LD_LIBRARY_PATH; it prints its two lines.
awk '/^```c$/{f=1; next} /^```$/{f=0} f' "$src/README.md" >"$work/readme_app.c"
tpc=$work/tgz/$L/pkgconfig
[[ $(PKG_CONFIG_PATH=$tpc command pkg-config --variable=prefix fastclock) == */tgz/$L/pkgconfig/* ]] ||
  fail "the tarball's fastclock.pc is not relocatable: prefix '$(PKG_CONFIG_PATH=$tpc command pkg-config --variable=prefix fastclock)'"
# shellcheck disable=SC2046
cc -Wall -Wextra -Werror -o "$work/readme_app" "$work/readme_app.c" $(PKG_CONFIG_PATH=$tpc command pkg-config --cflags \
  --libs fastclock) $(PKG_CONFIG_PATH=$tpc command pkg-config --variable=rpath_flags fastclock) >"$work/readme.log" 2>&1 &&
  env -u LD_LIBRARY_PATH "$work/readme_app" >>"$work/readme.log" 2>&1 &&
  grep -Eq '^UTC ([0-9]+\.[0-9]{9} s \+- [0-9]+ ns|unknown: .+) \(' "$work/readme.log" && grep -q '^took [0-9]* ns; captured at' "$work/readme.log" ||
  { fail "the README's example against the tarball:"; cat "$work/readme.log"; }
# shellcheck disable=SC2046
cc -O2 -o "$work/consumer-pc-static" "$here/consumer.c" $(pkg-config --cflags fastclock) "$lib/libfastclock.a" \
  $(pkg-config --static --libs-only-l fastclock | sed 's/-lfastclock//') >>"$work/pc.log" 2>&1 &&
  "$work/consumer-pc-static" >>"$work/pc.log" 2>&1 || { fail "pkg-config static consumer:"; cat "$work/pc.log"; }

cli_smoke "$root/bin/fastclock" "$src/tests/cli/fixtures/check_small.json" "$work/cli"
# ... and as a user without privileges (nobody), as a package's user runs it: info and a one-second check.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
  nobody() { (cd / && setpriv --reuid=65534 --regid=65534 --clear-groups "$@"); }
  if nobody test -x "$root/bin/fastclock"; then
    nobody "$root/bin/fastclock" info >"$work/nobody-info.txt" 2>&1 && grep -q '^recommendation' "$work/nobody-info.txt" ||
      fail "fastclock info as nobody: $(tail -3 "$work/nobody-info.txt")"
    nobody "$root/bin/fastclock" check --duration 1 >"$work/nobody-check.txt" 2>&1 && grep -q '^PASS$' "$work/nobody-check.txt" ||
      fail "fastclock check as nobody: $(tail -3 "$work/nobody-check.txt")"
  else
    echo "deb: nobody cannot reach $root/bin/fastclock (a private directory above it): the unprivileged run skipped"
  fi
fi
# The same with the source and build trees out of reach: in a private mount namespace, empty
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
((fails == 0)) && echo "deb: ok ($(basename "$rt"), $(basename "$dev"), $(basename "$cli"), $(basename "$tgz"))"
((fails == 0))
