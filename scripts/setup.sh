#!/usr/bin/env bash
# Install what a job needs on a fresh Debian machine. Idempotent: apt runs only for missing packages, the venv
# and the engines only when incomplete.
#   scripts/setup.sh --bench   the main job (scripts/bench.sh): a compiler, CMake, Ninja, Python 3 with
#                              matplotlib and jsonschema (Debian's python3-matplotlib, python3-jsonschema). Nothing else.
#   scripts/setup.sh           the tests (scripts/test.sh): the above, plus the test tools (list below), a venv in
#                              .venv, and the engines the fleet tests run in .engines/: chronyd unpacked from
#                              Debian's chrony package (never installed: its package Conflicts with time-daemon
#                              and would replace this machine's time daemon) and clock-bound-d built with cargo.
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=test
case ${1:-} in
  --bench) MODE=bench ;;
  "") ;;
  *) echo "setup.sh: unknown argument '$1' (--bench, or nothing for the tests)" >&2; exit 2 ;;
esac

SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
apt_updated=0
apt_update() { ((apt_updated)) || { $SUDO apt-get update -qq </dev/null; apt_updated=1; }; }
apt_install() { # [--no-install-recommends] packages...: install those that are missing
  local opt=() missing=() p
  [ "$1" != --no-install-recommends ] || { opt=("$1"); shift; }
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "setup: installing ${missing[*]}" >&2
  apt_update
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${opt[@]}" \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}" >/dev/null </dev/null
}

# The main job: build (gcc/g++: the tool has C++ clocks), and the report's pictures.
BENCH_PKGS=(cmake ninja-build gcc g++ python3 python3-matplotlib python3-jsonschema)
apt_install --no-install-recommends "${BENCH_PKGS[@]}"
[ "$MODE" = bench ] && exit 0

# The tests. gcc-arm-linux-gnueabihf: the 32-bit target of the header compile matrix (tests/abi); not i686:
# Debian's libc6-dev-i386 / gcc-multilib conflict with the aarch64 cross compilers. man-db: the package test
# renders the man page (man -l); dpkg-dev: dpkg-shlibdeps for the .debs' Depends, lintian checks the .debs.
# libcap2 libgnutls30 libnettle8 libseccomp2: the libraries chronyd links (below); plain libraries, no conflict.
TEST_PKGS=(clang clang-tidy clang-format libclang-rt-14-dev libgtest-dev
      libabsl-dev spin valgrind python3-venv util-linux pkg-config strace
      qemu-user-static gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross
      gcc-arm-linux-gnueabihf g++-arm-linux-gnueabihf man-db dpkg dpkg-dev lintian
      libcap2 libgnutls30 libnettle8 libseccomp2)
apt_install "${TEST_PKGS[@]}"

# Python for the tests (matplotlib, jsonschema and pandas in a venv; the python3 first on PATH may not be Debian's).
PY=/usr/bin/python3
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import matplotlib, pandas, jsonschema' 2>/dev/null; then
  echo "setup: creating .venv (matplotlib, pandas, jsonschema)" >&2
  "$PY" -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check --timeout 60 matplotlib pandas jsonschema
fi

# chronyd for the fleet tests (tests/fleet runs it with -x and private files): Debian's chrony package
# downloaded and unpacked into .engines/chrony (dpkg-deb -x), never installed. tests/fleet points at
# .engines/chrony/usr/sbin/chronyd (FLEET_CHRONYD) and falls back to /usr/sbin/chronyd.
CH_ROOT=.engines/chrony
if [ ! -x "$CH_ROOT/usr/sbin/chronyd" ] || ! "$CH_ROOT/usr/sbin/chronyd" -v >/dev/null 2>&1; then
  tmp=$(mktemp -d)
  echo "setup: unpacking Debian's chrony into $CH_ROOT (not installed)" >&2
  if ! (cd "$tmp" && apt-get download chrony >/dev/null 2>&1); then
    apt_update
    (cd "$tmp" && apt-get download chrony >/dev/null) || { echo "setup: apt-get download chrony failed" >&2; exit 1; }
  fi
  deb=$(ls "$tmp"/chrony_*.deb 2>/dev/null | head -1)
  [ -n "$deb" ] || { echo "setup: apt-get download chrony left no chrony_*.deb" >&2; exit 1; }
  rm -rf "$CH_ROOT" && mkdir -p "$CH_ROOT"
  dpkg-deb -x "$deb" "$CH_ROOT" && dpkg-deb -f "$deb" Version >"$CH_ROOT/.version" ||
    { echo "setup: cannot unpack $deb into $CH_ROOT" >&2; exit 1; }
  rm -rf "$tmp"
  [ -x "$CH_ROOT/usr/sbin/chronyd" ] || { echo "setup: $deb has no usr/sbin/chronyd" >&2; exit 1; }
  if ldd "$CH_ROOT/usr/sbin/chronyd" | grep -q 'not found'; then
    echo "setup: $CH_ROOT/usr/sbin/chronyd lacks libraries:" >&2
    ldd "$CH_ROOT/usr/sbin/chronyd" | grep 'not found' >&2
    exit 1
  fi
  "$CH_ROOT/usr/sbin/chronyd" -v >&2
fi

# AWS ClockBound's daemon for the fleet tests (tests/fleet), built with cargo into .engines/ (about a minute on
# two cores, once). Without a working cargo the ClockBound scenarios skip with a message; nothing else needs it.
CB_VERSION=2.0.3
CB_ROOT=.engines/clockbound
if [ ! -x "$CB_ROOT/bin/clockbound" ] || [ "$(cat "$CB_ROOT/.version" 2>/dev/null)" != "$CB_VERSION" ]; then
  CARGO=$(command -v cargo || true)
  [ -n "$CARGO" ] || [ ! -x "$HOME/.cargo/bin/cargo" ] || CARGO="$HOME/.cargo/bin/cargo"
  if [ -n "$CARGO" ]; then
    echo "setup: building clock-bound-d $CB_VERSION into $CB_ROOT" >&2
    if "$CARGO" install --locked --quiet clock-bound-d --version "$CB_VERSION" --root "$PWD/$CB_ROOT" >&2; then
      echo "$CB_VERSION" > "$CB_ROOT/.version"
    else
      echo "setup: clock-bound-d could not be built; the fleet tests' ClockBound scenarios will skip" >&2
    fi
  else
    echo "setup: no cargo; the fleet tests' ClockBound scenarios will skip (install rustup/cargo to run them)" >&2
  fi
fi
