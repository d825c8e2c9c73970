/*
 * fastclock — fmt.c: async-signal-safe formatting of messages.
 * Floor 0. Owns: fc__bfmt / fc__bvfmt (a printf subset: %s %.Ns %.*s %d %u %o %x %#x, l/ll/z, %.Nf, %%),
 * fc__errname. May call: nothing beyond the compiler's builtins.
 */
#ifndef FASTCLOCK_FMT_H
#define FASTCLOCK_FMT_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A printf subset into dst (always terminated); returns the length it wanted. */
int fc__bfmt(char *dst, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int fc__bvfmt(char *dst, size_t n, const char *fmt, va_list ap);
/* A readable name for an errno value (strerror reads the locale). */
const char *fc__errname(int e);

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_FMT_H */
