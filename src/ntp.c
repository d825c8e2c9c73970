/*
 * fastclock — the kernel's NTP state (adjtimex, modes = 0: a read, unprivileged) and how it is classified.
 * The rules are documented with fc_real_bounded in include/fastclock.h. Pure but for the one adjtimex read: the
 * clock's cached copy is the writer's (windup.c, fc__windup_refresh_ntp_locked).
 */
#include <sys/timex.h>

#include "fastclock.h" /* enum fc_sync */
#include "ntp.h"

/* The kernel resets maxerror to NTP_PHASE_LIMIT (16 s) when it is not disciplined (kernel/time/ntp.c). */
#define UNSYNC_MAXERROR_US 16000000L

/* us to ns within [0, 16 s]: kernels before 6.11 stored ADJ_MAXERROR and ADJ_ESTERROR unclamped (root's
 * write), so a read may see any long, and x 1000 overflowed; past 16 s is the kernel's own "no bound". */
static int64_t err_ns(long us)
{
	return us < 0 ? 0 : us > UNSYNC_MAXERROR_US ? (int64_t)UNSYNC_MAXERROR_US * 1000 : (int64_t)us * 1000;
}

int64_t fc__ntp_offset_ns(long offset, int status)
{
	/* |offset| without negating LONG_MIN; the kernel keeps it within +-0.5 s (MAXPHASE), 16 s caps anything */
	uint64_t mag = offset < 0 ? 0 - (uint64_t)offset : (uint64_t)offset;
	const uint64_t cap = (uint64_t)UNSYNC_MAXERROR_US * 1000;
	if (!(status & STA_NANO))
		mag = mag > cap / 1000 ? cap : mag * 1000;
	return (int64_t)(mag > cap ? cap : mag);
}

int fc__ntp_classify(int rc, int status, long maxerror_us, long esterror_us, struct fc_ntp *out)
{
	out->status = status;
	out->offset_ns = 0; /* fc__ntp_read fills it in from the same read */
	out->tick_us = 0; /* the caller fills it in from the same read */
	out->maxerror_ns = err_ns(maxerror_us);
	out->esterror_ns = err_ns(esterror_us);
	if (rc < 0) {
		out->sync = FC_SYNC_UNKNOWN;
		out->maxerror_ns = 0;
		out->esterror_ns = 0;
	} else if (maxerror_us >= UNSYNC_MAXERROR_US && ((status & STA_UNSYNC) || rc == TIME_ERROR)) {
		out->sync = FC_SYNC_FREE_RUNNING;
	} else {
		out->sync = FC_SYNC_SYNCHRONIZED;
	}
	return out->sync;
}

int fc__ntp_read(void *ctx, struct fc_ntp *out)
{
	struct timex tx = {0};
	int rc;
	(void)ctx;
	tx.modes = 0; /* read only */
	rc = adjtimex(&tx);
	fc__ntp_classify(rc, tx.status, tx.maxerror, tx.esterror, out);
	if (rc >= 0)
		out->offset_ns = fc__ntp_offset_ns(tx.offset, tx.status);
	/* The tick as the kernel reports it; outside ADJ_TICK's range (+-10 %, timekeeping_validate_timex) it is not
	 * a tick: unknown. */
	if (rc >= 0 && tx.tick >= FC_NTP_TICK_NOMINAL_US - FC_NTP_TICK_NOMINAL_US / 10 &&
	    tx.tick <= FC_NTP_TICK_NOMINAL_US + FC_NTP_TICK_NOMINAL_US / 10)
		out->tick_us = tx.tick;
	return out->sync;
}
