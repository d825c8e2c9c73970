#!/usr/bin/env bash
# tests/interleave — the barriers of the timehands protocol, as compiled for arm64 (where, unlike x86-64, each
# acquire, release and fence is an instruction of its own). No execution on this x86-64 machine can tell a
# weakened barrier from the real one (TSO), so this checks the compiled code keeps exactly the barriers
# include/fastclock/fc_hand.h and src/hands.c name, in order:
#   reader fc__hand_read_ns:        ldar (R1) ldar (R2) dmb ishld (R3)
#   slow reader fc__state_coarse_sample (src/state.c, through fc__hand_snapshot): the same, the same protocol copy
#   writer fc__hands_publish:   dmb ish (W1's release fence) stlr (W3) stlr (W4)
# The model (tests/model, variants RELAXED_R2, NO_R3_FENCE, NO_W1_FENCE, RELAXED_W3) shows why each is needed.
# Usage: barriers.sh <source root>. Exit 77 (skip) without the arm64 cross compiler (scripts/setup.sh installs it).
set -euo pipefail
root=${1:?source root}
cc=$(command -v aarch64-linux-gnu-gcc || true)
od=$(command -v aarch64-linux-gnu-objdump || true)
[[ -n $cc && -n $od ]] || { echo "skip: no aarch64-linux-gnu-gcc/objdump"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/reader.c" <<'C'
#include "fastclock.h"
extern uint64_t ext_ticks(const struct fc_hand *th);
int reader(const struct fc_pub *p, int64_t *m) { return fc__hand_read_ns(p, ext_ticks, FC__MONO, m); }
C
flags=(-O2 -std=gnu11 -I"$root/include" -I"$root/src")
"$cc" "${flags[@]}" -c "$tmp/reader.c" -o "$tmp/reader.o"
"$cc" "${flags[@]}" -c "$root/src/hands.c" -o "$tmp/hands.o"
"$cc" "${flags[@]}" -c "$root/src/state.c" -o "$tmp/state.o"
barriers() { # object, function: its barrier instructions, one line
  "$od" -d --no-show-raw-insn "$1" | awk -v f="<$2>:" '$2 == f {on = 1; next} on && /^$/ {on = 0} on' |
    grep -oE '\b(ldar[bh]?|stlr[bh]?|ldapr|dmb[[:space:]]+[a-z]+)\b' | tr -s ' \t' ' ' | paste -sd' ' -
}
fail=0
check() { # what, object, function, expected
  local got; got=$(barriers "$2" "$3")
  if [[ $got == "$4" ]]; then echo "ok $1: $got"; else echo "FAIL $1: expected '$4', got '$got'"; fail=1; fi
}
check "reader (R1 R2 R3)" "$tmp/reader.o" reader "ldar ldar dmb ishld"
check "slow reader (R1 R2 R3)" "$tmp/state.o" fc__state_coarse_sample "ldar ldar dmb ishld"
check "writer (W1 W3 W4)" "$tmp/hands.o" fc__hands_publish "dmb ish stlr stlr"
exit $fail
