#!/bin/sh
# The public headers compile without a warning everywhere an application may build them: consumer_tu.c as C
# (c99 c11 c17 strict, strict + _POSIX_C_SOURCE, gnu99 gnu11 gnu17) and as C++ (c++11 c++14 c++17 c++20),
# with gcc and clang, for x86_64, aarch64 and armv7 (32-bit: no __int128, no user counter), each with
# -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Werror (-Wold-style-cast for C++): an
# application's strictest usual set. Compile only (-fsyntax-only): the target libraries need not exist. The
# cross compilers come from scripts/setup.sh; a missing one fails the test.
#   compile_matrix.sh INCLUDE_DIR TU
# Prints one line per failing combination with its compiler output; exit 0 when all compile, else 1.
set -u
inc=$1 tu=$2
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
W="-Wall -Wextra -Wpedantic -Werror -Wshadow -Wconversion -Wsign-conversion"
# compilers: "C-compiler C++-compiler [target flag]" per target and family
compilers="gcc g++
clang clang++
aarch64-linux-gnu-gcc aarch64-linux-gnu-g++
clang clang++ --target=aarch64-linux-gnu
arm-linux-gnueabihf-gcc arm-linux-gnueabihf-g++
clang clang++ --target=armv7-linux-gnueabihf"
n=0 fail=0
echo "$compilers" | {
while read -r cc cxx tgt; do
  for c in "$cc" "$cxx"; do
    command -v "$c" >/dev/null || { echo "compile_matrix: FAIL $c not installed (run scripts/setup.sh)"; exit 1; }
  done
  for std in c99 c11 c17 c99:posix c11:posix c17:posix gnu99 gnu11 gnu17 c++11 c++14 c++17 c++20; do
    extra=""; s=${std%:posix}
    [ "$s" != "$std" ] && extra="-D_POSIX_C_SOURCE=200809L"
    case $s in
      c++*) comp=$cxx; lang="-x c++"; flags="$W -Wold-style-cast" ;;
      *) comp=$cc; lang="-x c"; flags="$W" ;;
    esac
    n=$((n + 1))
    if ! $comp $tgt $lang -std=$s $extra $flags -fsyntax-only -I "$inc" "$tu" >"$work/out" 2>&1; then
      fail=$((fail + 1))
      echo "compile_matrix: FAIL $comp $tgt -std=$s $extra"
      sed 's/^/    /' "$work/out" | head -20
    fi
  done
done
echo "compile_matrix: $n combinations, $fail failed"
[ "$fail" -eq 0 ]
}
