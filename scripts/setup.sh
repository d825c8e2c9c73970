#!/usr/bin/env bash
# Install everything the build, the tests, the benchmarks and the report need on a fresh Debian machine.
# Idempotent: skips apt when every package is present, and the venv when it is complete.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(cmake ninja-build gcc g++ clang clang-tidy clang-format libclang-rt-14-dev libgtest-dev
      libabsl-dev spin valgrind python3-venv util-linux pkg-config strace
      qemu-user-static gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross
      gcc-arm-linux-gnueabihf g++-arm-linux-gnueabihf man-db dpkg chrony)
# gcc-arm-linux-gnueabihf: the 32-bit target of the header compile matrix (tests/abi). Not i686: Debian's
# libc6-dev-i386 / gcc-multilib conflict with the aarch64 cross compilers above. man-db: the package test
# renders the man page (man -l); dpkg: dpkg-deb for CPack's .deb and its extraction.
# chrony: the fleet tests run chronyd -x (its service needs systemd, so it does not start here).
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "setup: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq </dev/null
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}" >/dev/null </dev/null
fi

# Python for the report (tools/report): Debian's python3 with a venv; the python3 first on PATH may not be it.
PY=/usr/bin/python3
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import matplotlib, pandas, jsonschema' 2>/dev/null; then
  echo "setup: creating .venv (matplotlib, pandas, jsonschema)" >&2
  "$PY" -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check --timeout 60 matplotlib pandas jsonschema
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
