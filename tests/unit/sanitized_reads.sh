#!/bin/sh
# sanitized_reads.sh CC SANITIZER MAIN SOURCE_DIR OUT_DIR SOURCES...: builds the library's sources with the program
# MAIN (msan_reads.c, tsan_first_reads.c) under -fsanitize=SANITIZER and runs it; a report fails it.
set -e
cc=$1 san=$2 main=$3 src=$4 out=$5
shift 5
mkdir -p "$out"
exe="$out/$(basename "$main" .c)"
"$cc" -std=gnu11 -O1 -g -fsanitize="$san" -fno-omit-frame-pointer -fno-sanitize-recover=all -D_GNU_SOURCE \
	-I"$src/include" -I"$src/src" "$@" "$main" -o "$exe" -lpthread -lm
TSAN_OPTIONS="halt_on_error=1 exitcode=66 ${TSAN_OPTIONS:-}" "$exe"
