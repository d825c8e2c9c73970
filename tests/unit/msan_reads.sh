#!/bin/sh
# msan_reads.sh CLANG SOURCE_DIR OUT_DIR SOURCES...: builds the library's sources with tests/unit/msan_reads.c under
# MemorySanitizer and runs it; a use of a value the sanitizer did not see written fails it.
set -e
cc=$1 src=$2 out=$3
shift 3
mkdir -p "$out"
"$cc" -std=gnu11 -O1 -g -fsanitize=memory -fno-omit-frame-pointer -fno-sanitize-recover=all -D_GNU_SOURCE \
	-I"$src/include" -I"$src/src" "$@" "$src/tests/unit/msan_reads.c" -o "$out/msan_reads" -lpthread -lm
"$out/msan_reads"
