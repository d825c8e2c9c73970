/*
 * fastclock — the drop-in replacements' out-of-line parts (floor 4: public entry points): what the inline
 * fc_clock_gettime and fc_gettimeofday of <fastclock.h> do not serve themselves.
 *
 * Owns: the clock id dispatch for ids other than CLOCK_MONOTONIC / CLOCK_REALTIME, errno for bad arguments.
 * May call: the public API, state.c (the updater's running flag as the clock publishes it).
 */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/time.h>
#include <time.h>

#include "section.h"
#include "fastclock.h"

/* What the inline fc_clock_gettime does not serve itself: NULL, the coarse clocks, every other id. */
FC__START_TEXT int fc__clock_gettime_other(clockid_t id, struct timespec *ts)
{
	int64_t ns, s, sub;
	if (ts == NULL) {
		/* As the kernel: an invalid id is EINVAL before the pointer is looked at. Ask the kernel itself (the
		 * system call, not the vDSO: glibc's clock_getres(id, NULL) returns 0 for invalid ids >= 16). A rare
		 * error path, so its cost does not matter. */
		return (int)syscall(SYS_clock_gettime, id, NULL);
	}
	switch (id) {
	case CLOCK_MONOTONIC:
		ns = fc_mono_ns();
		break;
	case CLOCK_REALTIME:
		ns = fc_real_ns();
		break;
	case CLOCK_MONOTONIC_COARSE: /* fastclock's coarse clocks: at most about max(period, 50 us) old (the kernel's: a tick) */
		ns = fc_mono_coarse_ns();
		break;
	case CLOCK_REALTIME_COARSE:
		ns = fc_real_coarse_ns();
		break;
	default:
		return clock_gettime(id, ts);
	}
	fc__ns_split(ns, &s, &sub, 1);
	ts->tv_sec = (time_t)s;
	ts->tv_nsec = (long)sub;
	return 0;
}

/* What the inline fc_gettimeofday does not serve itself: a timezone argument (obsolete; the kernel fills it,
 * zeros on most systems), a NULL tv, the slow path. */
FC__START_TEXT int fc__gettimeofday_other(struct timeval *tv, void *tz)
{
	struct timeval ignored;
	int64_t s, us;
	if (tz != NULL && gettimeofday(&ignored, (struct timezone *)tz) != 0)
		return -1;
	if (tv) {
		fc__ns_split(fc_real_ns(), &s, &us, 1000);
		tv->tv_sec = (time_t)s;
		tv->tv_usec = (suseconds_t)us;
	}
	return 0;
}
