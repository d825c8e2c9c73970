#!/usr/bin/env bash
# .clang-format, enforced as a ratchet: for every C file of the library, its headers and the tool, the number of
# lines clang-format would change may not grow past scripts/format_baseline.txt (a file it does not list: 0, so new
# files are formatted). The baseline was made with clang-format 14; another major version formats differently,
# so there the counts are advice only. `scripts/format_ratchet.sh --update` rewrites the baseline (after a file
# was reformatted: counts only go down).
set -euo pipefail
cd "$(dirname "$0")/.."
FMT=${FMT:-$(command -v clang-format || ls /usr/bin/clang-format-* 2>/dev/null | grep -v diff | head -1 || true)}
[ -n "$FMT" ] || { echo "format: clang-format not installed; not checked"; exit 0; }
BASE=scripts/format_baseline.txt
files=$(git ls-files 'src/*.c' 'src/*.h' 'include/*.h' 'tools/fastclock/*.c' 'tools/fastclock/*.h' | sort)
count() { "$FMT" --style=file "$1" | diff "$1" - | grep -c '^>' || true; }
if [ "${1:-}" = --update ]; then
	for f in $files; do n=$(count "$f"); [ "$n" = 0 ] || echo "$n $f"; done > "$BASE"
	echo "format: $BASE rewritten ($(wc -l < "$BASE") files not yet formatted)"
	exit 0
fi
major=$("$FMT" --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
bad=0 lower=0
for f in $files; do
	n=$(count "$f")
	b=$(awk -v f="$f" '$2 == f { print $1 }' "$BASE")
	b=${b:-0}
	if [ "$n" -gt "$b" ]; then
		echo "format: clang-format would change $n lines of $f (at most $b): run $FMT -i --style=file on the lines you wrote"
		bad=1
	elif [ "$n" -lt "$b" ]; then
		lower=$((lower + 1))
	fi
done
[ "$lower" = 0 ] || echo "format: $lower files are closer to .clang-format than the baseline says: scripts/format_ratchet.sh --update"
if [ "$bad" = 1 ] && [ "$major" != 14 ]; then
	echo "format: clang-format $major, not 14 (the baseline's): advice only"
	exit 0
fi
exit "$bad"
