/*
 * fastclock — async-signal-safe string building.
 *
 * Every function reachable from a read must be async-signal-safe (a signal handler may take the slow path,
 * initialisation included): snprintf may call malloc (glibc allocates for some conversions and for large
 * outputs), so the messages of trust.c, config.c and init.c are built with these two instead.
 * Owns: nothing but the two helpers. May call: nothing (no libc beyond the compiler's builtins).
 */
#include <stdarg.h>

#include "str.h"

char *fc__str_cat(char *dst, size_t n, ...)
{
	size_t len = 0;
	va_list ap;
	const char *s;
	va_start(ap, n);
	if (n > 0) {
		while (len < n && dst[len])
			len++;
		if (len == n) /* not terminated: start over */
			len = 0;
		/* clang-analyzer's valist checker loses va_start on this path (a false positive: ap is started
		 * above, unconditionally). */
		for (s = va_arg(ap, const char *); s != NULL; s = va_arg(ap, const char *)) // NOLINT(clang-analyzer-valist.Uninitialized)
			while (*s && len + 1 < n)
				dst[len++] = *s++;
		dst[len] = 0;
	}
	va_end(ap);
	return dst;
}
