#!/bin/sh
# expect_exit.sh RC [--stdout REGEX]... [--stderr REGEX]... [--one-line-stderr] [--empty-stderr] [--env K=V]...
#                -- CMD ARGS...
# Runs CMD and checks its exit status is RC and that every REGEX matches a line of its output (grep -E).
# Used by the cli_ tests for exit codes and error messages, which need no Python.
set -u
want=$1
shift
nl='
'
out_re="" err_re="" one=0 empty=0
while [ $# -gt 0 ]; do
  case "$1" in
    --stdout) out_re="$out_re$2$nl"; shift 2 ;;
    --stderr) err_re="$err_re$2$nl"; shift 2 ;;
    --one-line-stderr) one=1; shift ;;
    --empty-stderr) empty=1; shift ;;
    --env) export "$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "expect_exit.sh: bad argument '$1'" >&2; exit 2 ;;
  esac
done
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
"$@" >"$tmp/out" 2>"$tmp/err"
rc=$?
fail=0
if [ "$rc" -ne "$want" ]; then
  echo "FAIL: exit status $rc, expected $want: $*" >&2; fail=1
fi
printf '%s' "$out_re" >"$tmp/out_re"
printf '%s' "$err_re" >"$tmp/err_re"
while IFS= read -r re; do
  grep -Eq -- "$re" "$tmp/out" || { echo "FAIL: no stdout line matches /$re/" >&2; fail=1; }
done <"$tmp/out_re"
while IFS= read -r re; do
  grep -Eq -- "$re" "$tmp/err" || { echo "FAIL: no stderr line matches /$re/" >&2; fail=1; }
done <"$tmp/err_re"
if [ "$one" -eq 1 ] && [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
  echo "FAIL: stderr is not exactly one line" >&2; fail=1
fi
if [ "$empty" -eq 1 ] && [ -s "$tmp/err" ]; then
  echo "FAIL: stderr is not empty" >&2; fail=1
fi
echo "--- stdout (head)"; head -n 40 "$tmp/out"
echo "--- stderr (head)"; head -n 20 "$tmp/err"
exit $fail
