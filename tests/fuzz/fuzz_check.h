/*
 * The fuzz targets' check: a failed condition prints the target's name (FUZZ_NAME, defined before this
 * header), the condition and a message, and aborts (libFuzzer keeps the input as a reproducer).
 */
#ifndef FASTCLOCK_FUZZ_CHECK_H
#define FASTCLOCK_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond, ...)                                                                                       \
	do {                                                                                                   \
		if (!(cond)) {                                                                                 \
			fprintf(stderr, "%s: %s: ", FUZZ_NAME, #cond);                                         \
			fprintf(stderr, __VA_ARGS__);                                                          \
			fputc('\n', stderr);                                                                   \
			abort();                                                                               \
		}                                                                                              \
	} while (0)

#endif
