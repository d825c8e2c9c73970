/*
 * fastclock — commit wait (Spanner's): sleep until a UTC timestamp is certainly past. The inline TrueTime
 * predicates (fc_real_after, fc_real_before) are in include/fastclock.h.
 *
 * Owns: fc_commit_wait.
 * May call: the public API (fc_real_bounded, fc_mono_ns), libc (clock_nanosleep).
 */
#include <errno.h>
#include <time.h>

#include "fastclock.h"
#include "units.h"

/* While the bound makes no promise (UNKNOWN, DISRUPTED) look again every 10 ms: the writer refreshes the
 * source at least once a second, the tracker re-converges within a few periods. */
#define RETRY_NS 10000000LL

/* a + b and a - b, saturated at the int64 range (a timeout of INT64_MAX, an interval wider than the epoch) */
static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

static int64_t sat_sub(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? INT64_MAX : INT64_MIN) : r;
}

int fc_commit_wait(int64_t t_ns, int64_t timeout_ns)
{
	int64_t deadline;
	if (timeout_ns < 0) {
		errno = EINVAL;
		return -1;
	}
	deadline = sat_add(fc_mono_ns(), timeout_ns);
	for (int asked = 0;; asked = 1) { /* a flag: a count would overflow after 2^31 rounds (248 days of 10 ms) */
		struct fc_interval iv;
		int64_t wait, left;
		struct timespec ts;
		int rc;
		fc_real_bounded(&iv);
		if ((iv.status == FC_SYNC_SYNCHRONIZED || iv.status == FC_SYNC_FREE_RUNNING) && t_ns < iv.earliest_ns)
			return 0;
		left = sat_sub(deadline, fc_mono_ns());
		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		/* With time left, a bound that makes no promise is asked again at once, once, before any sleep: a
		 * process's first bounded read promises nothing (in auto mode it opens no source: windup.c), the next
		 * opens them (a segment and the kernel's state answer at once; chronyd at its reply) */
		if (asked == 0 && iv.status != FC_SYNC_SYNCHRONIZED && iv.status != FC_SYNC_FREE_RUNNING)
			continue;
		/* earliest advances at the rate of real time: t is past once it has grown by t - earliest + 1 (>= 1
		 * here; saturated for an interval wider than the int64 range allows) */
		wait = (iv.status == FC_SYNC_SYNCHRONIZED || iv.status == FC_SYNC_FREE_RUNNING)
			       ? sat_add(sat_sub(t_ns, iv.earliest_ns), 1)
			       : RETRY_NS;
		if (wait > left)
			wait = left;
		if (wait < 1)
			wait = 1;
		ts.tv_sec = (time_t)(wait / NS_PER_SEC);
		ts.tv_nsec = (long)(wait % NS_PER_SEC);
		while ((rc = clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts)) == EINTR) {
		}
		if (rc != 0) { /* never spin on a sleep that fails */
			errno = rc;
			return -1;
		}
	}
}
