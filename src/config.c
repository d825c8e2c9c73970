/*
 * fastclock — parsing the environment's configuration (pure; fuzzed in tests/fuzz).
 *   FASTCLOCK_SOURCE     auto | counter | kernel
 *   FASTCLOCK_PERIOD_US  re-anchor period, integer microseconds in 1..1000000
 *   FASTCLOCK_UPDATER    auto | off: may the first coarse read start the updater thread
 * A bad value is reported (naming it) and the default kept: configuration errors never stop the clock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "section.h"
#include "config.h"
#include "fastclock.h"
#include "str.h"

/* Append "pre'VALUE'post" to err ("; "-separated), the value cut to 40 bytes. Async-signal-safe (the
 * environment is parsed by the initialisation, which a signal handler's first read may run). */
static void add_error(char *err, size_t errlen, const char *pre, const char *val, const char *post)
{
	char v[41];
	size_t i;
	if (err == NULL || errlen == 0) /* the caller wants the count only */
		return;
	for (i = 0; i < sizeof(v) - 1 && val[i]; i++)
		v[i] = val[i];
	v[i] = 0;
	fc__str_cat(err, errlen, err[0] ? "; " : "", pre, "'", v, "'", post, (const char *)0);
}

FC__START_TEXT int fc__config_parse(const char *source, const char *period_us, struct fc_config *out, char *err, size_t errlen)
{
	int nerr = 0;
	out->backend = 0;
	out->period_ns = FC_DEFAULT_PERIOD_NS;
	out->period_auto = FC_PERIOD_DEFAULT;
	if (err && errlen)
		err[0] = 0;
	if (source && *source) {
		if (!strcmp(source, "counter"))
			out->backend = FC_BACKEND_COUNTER;
		else if (!strcmp(source, "kernel"))
			out->backend = FC_BACKEND_KERNEL;
		else if (strcmp(source, "auto") != 0) {
			add_error(err, errlen, "FASTCLOCK_SOURCE=", source, " is not auto, counter or kernel; using auto");
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
			add_error(err, errlen, "FASTCLOCK_PERIOD_US=", period_us, " is not an integer in 1..1000000; ignored");
			nerr++;
		} else {
			out->period_ns = v * 1000;
			out->period_auto = FC_PERIOD_FIXED;
		}
	}
	return nerr;
}

/* A two-valued variable: unset, empty or `yes` -> 1; `no` -> 0; anything else is reported and gives 1. */
FC__START_TEXT static int parse_two(const char *v, const char *yes, const char *no, int *out, const char *pre, const char *post,
		     char *err, size_t errlen)
{
	*out = 1;
	if (v == NULL || *v == 0 || !strcmp(v, yes))
		return 0;
	if (!strcmp(v, no)) {
		*out = 0;
		return 0;
	}
	add_error(err, errlen, pre, v, post);
	return 1;
}

FC__START_TEXT int fc__config_parse_updater(const char *v, int *autostart, char *err, size_t errlen)
{
	return parse_two(v, "auto", "off", autostart, "FASTCLOCK_UPDATER=", " is not auto or off; using auto", err,
			 errlen);
}

FC__START_TEXT int fc__config_parse_updater_rt(const char *v, int *rt, char *err, size_t errlen)
{
	return parse_two(v, "1", "0", rt, "FASTCLOCK_UPDATER_RT=", " is not 1 or 0; using 1", err, errlen);
}

/* secure_getenv's rule (glibc's and musl's AT_SECURE): a program the kernel started with raised privileges
 * (set-user-ID, set-group-ID, file capabilities) sees no FASTCLOCK_* variable, so its caller cannot point it at
 * a file of the caller's, stall it, or make it read a file the caller cannot. getauxval reads the auxiliary
 * vector libc keeps: async-signal-safe, as getenv. */
extern char **environ;
#define ENV_PREFIX_LEN 10 /* strlen("FASTCLOCK_"), which every name begins with */

/* One pass over environ, as getenv reads it (the first definition of a name wins), done here: getenv and
 * strncmp may lie on libc text pages the process has not touched yet, a page fault each (4-8 us of a 12 us
 * first call on the VM of docs/PERFORMANCE.md), and a getenv per variable scanned the whole environment eight
 * times (4,400 of a first call's 6,000 instructions under callgrind). An entry that does not begin with the
 * prefix costs a byte compare or a few. */
FC__START_TEXT void fc__env_scan(const char *const *names, int count, const char **val)
{
	for (int i = 0; i < count; i++)
		val[i] = NULL;
	if (getauxval(AT_SECURE))
		return;
	for (char **e = environ; e && *e; e++) {
		const char *p = *e, *pre = names[0];
		int k = 0;
		while (k < ENV_PREFIX_LEN && p[k] == pre[k])
			k++;
		if (k < ENV_PREFIX_LEN)
			continue;
		for (int i = 0; i < count; i++) {
			const char *n = names[i] + ENV_PREFIX_LEN, *q = p + ENV_PREFIX_LEN;
			while (*n && *q == *n)
				q++, n++;
			if (!*n && *q == '=' && val[i] == NULL) {
				val[i] = q + 1;
				break;
			}
		}
	}
}
