/*
 * fastclock — str.c: async-signal-safe string building (no malloc, no stdio, no locale).
 * Floor 0. Owns: fc__str_cat. May call: nothing of the library.
 */
#ifndef FASTCLOCK_STR_H
#define FASTCLOCK_STR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Append the NULL-terminated list of strings to dst (size n, always terminated, truncated if needed).
 * Everything reachable from a read (initialisation and the trust re-check included) builds its messages
 * with this instead of snprintf, which may allocate. The list ends with a (const char *)0. Returns dst. */
char *fc__str_cat(char *dst, size_t n, ...);

/* Set the array dst to the string literal lit, terminator included: a copy of known length, a few moves
 * where fc__str_cat walks it byte by byte (a first call's reason: ~800 instructions under callgrind). */
#define FC__STR_SET(dst, lit)                                                                                  \
	do {                                                                                                   \
		_Static_assert(sizeof(lit) <= sizeof(dst), "the message does not fit");                        \
		__builtin_memcpy((dst), (lit), sizeof(lit));                                                   \
	} while (0)

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_STR_H */
