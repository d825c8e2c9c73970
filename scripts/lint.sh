#!/usr/bin/env bash
# The lint phase: clang-tidy over the library sources and the command-line tool (configuration: .clang-tidy),
# using build/dev's compile database; the command-line tool on the public API only; .clang-format parses and no file
# moves further from it (scripts/format_ratchet.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/dev/compile_commands.json ] || cmake --preset dev >/dev/null

# The CLI is a client of <fastclock.h>'s API: no fc__ / FC__ internals (fc__pub, the hand layout, src/ headers).
if grep -nE '\b(fc__|FC__)[A-Za-z0-9_]*|fastclock/fc_|"(\.\./)+src/' tools/fastclock/*.c tools/fastclock/*.cc \
	tools/fastclock/*.h; then
	echo "lint: tools/fastclock uses library internals (above): use the public API (add to it if it lacks something)"
	exit 1
fi

# Comments state invariants and reasons; history and issue numbers belong in docs/ and commit messages, where they
# are kept up to date, not in code that outlives them. The word is split so that this check does not match itself;
# the pattern also catches the number after a hyphen or underscore or with no space (a ctest label).
refs='\biss''ue''s?[ _-]?[0-9]+'
if grep -rnIE -i "$refs" src include tools tests bench scripts cmake CMakeLists.txt .ci; then
	echo "lint: issue numbers in code (above): state the reason or behaviour instead; history goes in docs/"
	exit 1
fi

# .clang-format describes today's style; it is enforced as a ratchet (scripts/format_ratchet.sh): no file may move
# further from it than scripts/format_baseline.txt allows, and a file it does not list must be formatted.
FMT=$(command -v clang-format || ls /usr/bin/clang-format-* 2>/dev/null | grep -v diff | head -1 || true)
if [ -n "$FMT" ]; then
	"$FMT" --style=file --assume-filename=src/x.c --dump-config >/dev/null ||
		{ echo "lint: .clang-format does not parse"; exit 1; }
	FMT="$FMT" scripts/format_ratchet.sh || { echo "lint: formatting (above)"; exit 1; }
else
	[ -f .clang-format ] || { echo "lint: .clang-format missing"; exit 1; }
	echo "lint: clang-format not installed; .clang-format not checked"
fi

TIDY=$(command -v clang-tidy || ls /usr/bin/clang-tidy-* 2>/dev/null | head -1 || true)
[ -n "$TIDY" ] || { echo "lint: clang-tidy not installed (scripts/setup.sh installs it)"; exit 1; }
files=(src/*.c src/counter/*.c src/bound/*.c tools/fastclock/*.c tools/fastclock/*.cc)
echo "lint: $("$TIDY" --version | grep -m1 -o 'version [0-9.]*'), clang-tidy on ${#files[@]} files"
# One run, a few files per process, JOBS at once; its output kept, so a failure says which file and why (a crash
# too: clang-tidy's own exit status, not only a warning, fails the phase).
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tidy() { printf '%s\0' "${files[@]}" | xargs -0 -n 4 -P "${JOBS:-$(nproc)}" "$TIDY" -p build/dev --quiet >"$out" 2>&1; }
rc=0
tidy || rc=$?
grep -v "warnings\? generated" "$out" || true
# xargs says 124 when a clang-tidy exited 255 and 125 when one was killed (a crash, the OOM killer): the tool
# failed, not the code. Once more, and its verdict stands (a crash that comes back fails the phase).
if [ "$rc" = 124 ] || [ "$rc" = 125 ]; then
	echo "lint: a clang-tidy process crashed or was killed (xargs exit $rc, above): running it once more"
	rc=0
	tidy || rc=$?
	grep -v "warnings\? generated" "$out" || true
fi
if [ "$rc" != 0 ]; then
	echo "lint: clang-tidy failed (exit $rc): the diagnostics above"
	exit 1
fi
echo "lint: clean"
