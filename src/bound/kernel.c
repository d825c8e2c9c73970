/*
 * fastclock — the kernel's NTP state as a bound: adjtimex maxerror, decided from what the kernel says and nothing
 * else (never from process names: any user can run a program called chronyd).
 *
 * What the kernel guarantees (kernel/time/ntp.c, adjtimex(2)): only a process with CAP_SYS_TIME writes the
 * state (ADJ_MAXERROR, ADJ_ESTERROR, ADJ_STATUS); an unprivileged adjtimex is a read. The kernel adds 500 us to
 * maxerror every second (MAXFREQ, 500 ppm) and, when it passes 16 s (NTP_PHASE_LIMIT), caps it there and sets
 * STA_UNSYNC; at boot maxerror and esterror are 16 s and STA_UNSYNC is set. esterror is never grown. So a
 * maxerror below 16 s was written by a privileged process and has grown at 500 ppm since: it is a bound exactly
 * when that writer wrote one. What the writers do:
 *   chronyd      maxerror = root delay / 2 + root dispersion, esterror = its offset's standard deviation, clears
 *                STA_UNSYNC while synchronised (sets it otherwise): a bound. chronyd -x never writes: the state
 *                stays the boot one (16 s, STA_UNSYNC) or ages to it.
 *   ntpd, ntpsec maxerror = root distance, esterror = jitter, clears STA_UNSYNC: a bound.
 *   timesyncd    maxerror = 0 and esterror = 0 at each poll, clears STA_UNSYNC: no bound (the time since its
 *                poll x 500 ppm says nothing of its offset).
 *   OpenNTPD     maxerror = 0 and clears STA_UNSYNC while synced, leaves esterror (16 s from boot): no bound.
 *   busybox ntpd never writes maxerror: it stays 16 s.
 * The rule, in order (fc__kernel_eval): adjtimex failing is UNKNOWN; STA_UNSYNC, TIME_ERROR or maxerror at 16 s is
 * the kernel's "not synchronised": UNKNOWN (16 s is the kernel's cap, no one's measurement); STA_CLOCKERR too, and
 * the rest of the kernel's TIME_ERROR (PPS discipline with its signal lost, jitter or wander: pps_error);
 * SYNCHRONIZED needs 0 < esterror <= maxerror < 16 s (a writer that claims an estimated error and a maximum at
 * least as large: chronyd's and ntpd's pair; timesyncd's 0 and OpenNTPD's 16 s fail it at any age). Everything else
 * is UNKNOWN with the values named. A chronyd or ntpd whose estimated error rounds to 0 us (a PPS or PTP reference)
 * fails closed: UNKNOWN, as the kernel cannot tell it from timesyncd (ask chronyd: the chrony source). Root, or
 * anything with CAP_SYS_TIME, can write any state: it is trusted (it sets the clock too).
 *
 * Owns: the classification of the kernel's NTP state into a bound, struct fc_kernel (adjtimex read at most once
 * a second, the last maxerror, the last write of it seen), its driver (fc__kernel_driver).
 * May call: bound.c, fmt.c.
 */
#include <sys/timex.h>

#include "kernel.h"

/* The kernel's maxerror grows by 500 us each second (MAXFREQ, kernel/time/ntp.c): 500 ppm. */
#define KERNEL_GROWTH_PPB 500000
/* NTP_PHASE_LIMIT: the kernel caps maxerror here and calls the clock unsynchronised (kernel/time/ntp.c). */
#define PHASE_LIMIT_NS 16000000000LL

/* The kernel's TIME_ERROR beyond STA_UNSYNC and STA_CLOCKERR (kernel/time/ntp.c, is_error_status): a daemon
 * asked for PPS time or frequency discipline and the PPS signal is gone, or its jitter, wander or calibration
 * is past the kernel's limits. adjtimex then returns TIME_ERROR: the kernel says its clock is in error. */
static int pps_error(int status)
{
	return ((status & (STA_PPSFREQ | STA_PPSTIME)) && !(status & STA_PPSSIGNAL)) ||
	       (status & (STA_PPSTIME | STA_PPSJITTER)) == (STA_PPSTIME | STA_PPSJITTER) ||
	       ((status & STA_PPSFREQ) && (status & (STA_PPSWANDER | STA_PPSERROR)));
}

int fc__kernel_eval(const struct fc_ntp *n, int64_t now, struct fc_bound *b)
{
	b->center_ns = 0;
	/* maxerror is the daemon's distance from true time; the clock is further off it by the correction the
	 * kernel PLL has still to slew in (ntpd's ADJ_OFFSET, minutes to slew; 0 for chronyd, which slews by
	 * frequency and leaves it out: docs/THREATS.md) */
	b->half_ns = n->maxerror_ns + n->offset_ns;
	b->as_of_ns = now;
	b->drift_ppb = KERNEL_GROWTH_PPB;
	b->leap = (n->status & STA_INS) ? FC_LEAP_INSERT : (n->status & STA_DEL) ? FC_LEAP_DELETE : FC_LEAP_NONE;
	if (n->sync == FC_SYNC_UNKNOWN) {
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason), "adjtimex failed: the kernel's NTP state is unknown");
	} else if (n->sync == FC_SYNC_FREE_RUNNING || (n->status & STA_UNSYNC) || n->maxerror_ns >= PHASE_LIMIT_NS) {
		/* no writer vouches for it (16 s is the kernel's cap, not a measurement): no promise */
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason), "the kernel clock is not synchronised (status %#x, maxerror %lld us)",
			 (unsigned)n->status, (long long)(n->maxerror_ns / 1000));
	} else if (n->status & STA_CLOCKERR) {
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason), "the kernel reports a clock hardware fault (STA_CLOCKERR)");
	} else if (pps_error(n->status)) {
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason),
			 "the kernel reports TIME_ERROR (status %#x: PPS discipline asked for, its signal lost or past limits)",
			 (unsigned)n->status);
	} else if (n->maxerror_ns <= 0 || n->esterror_ns <= 0 || n->esterror_ns > n->maxerror_ns) {
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason),
			 "kernel maxerror %lld us, esterror %lld us: not a bound (%s)", (long long)(n->maxerror_ns / 1000),
			 (long long)(n->esterror_ns / 1000),
			 n->esterror_ns <= 0 ? "no estimated error: timesyncd's state" : "maxerror below esterror: OpenNTPD's state");
	} else {
		b->status = FC_SYNC_SYNCHRONIZED;
		fc__bfmt(b->reason, sizeof(b->reason),
			 "kernel maxerror %lld us, esterror %lld us, written by a time daemon (leaves out its correction)",
			 (long long)(n->maxerror_ns / 1000), (long long)(n->esterror_ns / 1000));
	}
	return b->status;
}

/* ---- the driver (select.c's table) ------------------------------------------------------------------------ */

static void drv_init(void *s)
{
	struct fc_kernel *k = s;
	k->at = INT64_MIN / 2;
	k->max = -1;
	k->wrote = INT64_MIN;
}

/* adjtimex at most every t->every_ns (a syscall). The kernel only grows maxerror: lower than at the last read,
 * a daemon wrote it since then. */
static void drv_poll(void *s, const struct fc_bound_tick *t, struct fc_bound *b)
{
	struct fc_kernel *k = s;
	struct fc_ntp n = {0};
	if (t->mono - k->at < t->every_ns)
		return;
	k->read(k->ctx, &n);
	fc__kernel_eval(&n, t->mono, b);
	if (k->max >= 0 && n.sync != FC_SYNC_UNKNOWN && n.maxerror_ns < k->max)
		k->wrote = k->at;
	k->max = n.sync != FC_SYNC_UNKNOWN ? n.maxerror_ns : -1;
	k->at = t->mono;
}

static int64_t drv_measured_at(const void *s) { return ((const struct fc_kernel *)s)->wrote; }

const struct fc_bound_driver fc__kernel_driver = {
	.name = "kernel", .init = drv_init, .poll = drv_poll, .measured_at = drv_measured_at,
	/* nothing to open or close: adjtimex (modes 0) is always there */
};
