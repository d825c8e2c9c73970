#!/bin/sh
# Run one libFuzzer target for a bounded time on a scratch copy of its seed corpus (the committed corpus is
# never written). Prints libFuzzer's final statistics (executions, rate, coverage); exits non-zero on any
# finding (crash, sanitizer report, failed check, timeout of one input).
# Usage: run_fuzz.sh FUZZER SEED_DIR [SECONDS]
set -eu
fuzzer=$1 seeds=$2 secs=${3:-40}
work=$(mktemp -d "${TMPDIR:-/tmp}/fc-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$work/artifacts"
cp "$seeds"/* "$work/corpus/" 2>/dev/null || true
echo "$(basename "$fuzzer"): $(ls "$work/corpus" | wc -l) seeds, ${secs} s"
status=0
"$fuzzer" -max_total_time="$secs" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
	-artifact_prefix="$work/artifacts/" "$work/corpus" >"$work/log" 2>&1 || status=$?
grep -E "^(stat::|Done|INFO: seed corpus|==[0-9]+==ERROR|SUMMARY|fuzz_)" "$work/log" || true
if [ $status -ne 0 ]; then
	tail -40 "$work/log"
	for a in "$work"/artifacts/*; do
		[ -f "$a" ] || continue
		echo "reproducer $(basename "$a"), $(wc -c <"$a") bytes (kept in ${FUZZ_KEEP_DIR:-.}):"
		od -A d -t x1 "$a" | head -20
		# the whole input, so a finding in a CI log can be replayed without the machine it ran on
		# (`base64 -d > crash; fuzz_X crash`); inputs are capped at libFuzzer's max_len (4 KB by default)
		echo "base64 (whole input):"
		base64 -w 120 "$a" | head -100
		cp "$a" "${FUZZ_KEEP_DIR:-.}/" || true
	done
	exit $status
fi
