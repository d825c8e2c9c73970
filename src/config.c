/*
 * fastclock — parsing the environment's configuration (pure; fuzzed in tests/fuzz).
 *   FASTCLOCK_SOURCE     auto | counter | kernel
 *   FASTCLOCK_PERIOD_US  re-anchor period, integer microseconds in 1..1000000
 * A bad value is reported (naming it) and the default kept: configuration errors never stop the clock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void add_error(char *err, size_t errlen, const char *fmt, const char *val)
{
	size_t n;
	if (err == NULL || errlen == 0) /* the caller wants the count only */
		return;
	n = strnlen(err, errlen);
	if (n >= errlen - 1)
		return;
	if (n > 0 && n + 2 < errlen) {
		memcpy(err + n, "; ", 3);
		n += 2;
	}
	snprintf(err + n, errlen - n, fmt, val);
}

int fc_config_parse(const char *source, const char *period_us, struct fc_config *out, char *err, size_t errlen)
{
	int nerr = 0;
	out->backend = 0;
	out->period_ns = FC_DEFAULT_PERIOD_NS;
	if (errlen)
		err[0] = 0;
	if (source && *source) {
		if (!strcmp(source, "counter"))
			out->backend = FC_BACKEND_COUNTER;
		else if (!strcmp(source, "kernel"))
			out->backend = FC_BACKEND_KERNEL;
		else if (strcmp(source, "auto") != 0) {
			add_error(err, errlen, "FASTCLOCK_SOURCE='%.40s' is not auto, counter or kernel; using auto",
				  source);
			nerr++;
		}
	}
	if (period_us && *period_us) {
		char *end;
		long long v;
		errno = 0;
		v = strtoll(period_us, &end, 10);
		/* digits only: strtoll alone would accept leading blanks, a sign and trailing nothing */
		if (errno || *end || end == period_us || *period_us < '0' || *period_us > '9' || v < FC_MIN_PERIOD_NS / 1000 || v > FC_MAX_PERIOD_NS / 1000) {
			add_error(err, errlen,
				  "FASTCLOCK_PERIOD_US='%.40s' is not an integer in 1..1000000; using 1000", period_us);
			nerr++;
		} else {
			out->period_ns = v * 1000;
		}
	}
	return nerr;
}
