/*
 * fastclock — async-signal-safe string building.
 *
 * Every function reachable from a read must be async-signal-safe (a signal handler may take the slow path,
 * initialisation included): snprintf may call malloc (glibc allocates for some conversions and for large
 * outputs), so the messages of trust.c, config.c and init.c are built with these two instead.
 * Owns: nothing but the two helpers. May call: nothing (no libc beyond the compiler's builtins).
 */
#include <stdarg.h>

#include "internal.h"

char *fc__str_cat(char *dst, size_t n, ...)
{
	size_t len = 0;
	va_list ap;
	const char *s;
	if (n == 0)
		return dst;
	while (len < n && dst[len])
		len++;
	if (len == n) { /* not terminated: start over */
		len = 0;
		dst[0] = 0;
	}
	va_start(ap, n);
	while ((s = va_arg(ap, const char *)) != NULL)
		while (*s && len + 1 < n)
			dst[len++] = *s++;
	va_end(ap);
	dst[len] = 0;
	return dst;
}

char *fc__str_int(char *buf, long long v)
{
	char tmp[24];
	int i = 0, j = 0;
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
	do
		tmp[i++] = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		buf[j++] = '-';
	while (i > 0)
		buf[j++] = tmp[--i];
	buf[j] = 0;
	return buf;
}
