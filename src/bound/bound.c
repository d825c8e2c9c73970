/*
 * fastclock — what every bound source shares: a struct fc_bound's half-width at a given time (saturating growth)
 * and the recording of a source's last error.
 *
 * Owns: fc__bound_half_at, fc__bound_error.
 * May call: fmt.c.
 */
#include <stdarg.h>

#include "bound.h"

#define NS_PER_SEC 1000000000LL

int64_t fc__bound_half_at(const struct fc_bound *b, int64_t mono)
{
	int64_t age = mono - b->as_of_ns, grow;
	const int64_t cap = INT64_MAX / 4;
	if (age < 0)
		age = 0;
	/* age (ns) * ppb / 1e9, without overflow for ages up to ~292 years at 1e9 ppb */
	grow = (int64_t)(((__int128)age * b->drift_ppb) / NS_PER_SEC);
	if (b->half_ns >= cap || grow >= cap - b->half_ns)
		return cap;
	return b->half_ns + grow;
}

void fc__bound_error(struct fc_bound *b, int64_t now, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	/* clang-analyzer 14 misreads va_start here (a false positive) */
	fc__bvfmt(b->last_error, sizeof(b->last_error), fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized)
	va_end(ap);
	b->last_error_at = now;
}

