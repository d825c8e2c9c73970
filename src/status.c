/*
 * fastclock — control and status (floor 4: public entry points): fc_set_period_ns, fc_status,
 * fc_coarse_one_load and the printable names of the enums.
 *
 * Owns: the copy of the clock's state into struct fc_status.
 * May call: state.c, windup.c (the writer lock, the period), init.c, the public API; src/bounded.c's
 * fc__bound_status (the bound's state) through a weak reference: a static program that makes no bounded read links
 * no bound, and its fc_status says so.
 */
#include <errno.h>
#include <string.h>

#include "config.h"
#include "init.h"
#include "state.h"
#include "units.h"
#include "windup.h"


int fc_set_period_ns(int64_t period_ns)
{
	struct fc_clock *c = fc__global_clock();
	if (period_ns < FC_MIN_PERIOD_NS || period_ns > FC_MAX_PERIOD_NS) {
		errno = EINVAL;
		return -1;
	}
	fc__ensure_init();
	fc__windup_lock(c);
	fc__windup_set_period_locked(c, period_ns);
	fc__windup_unlock(c);
	return 0;
}

int fc_coarse_one_load(void)
{
	return __atomic_load_n(&fc__pub.coarse_mono, __ATOMIC_RELAXED) != 0;
}

const char *fc_sync_name(int status)
{
	switch (status) {
	case FC_SYNC_SYNCHRONIZED:
		return "synchronized";
	case FC_SYNC_FREE_RUNNING:
		return "free-running";
	case FC_SYNC_DISRUPTED:
		return "disrupted";
	default:
		return "unknown";
	}
}

const char *fc_backend_name(int backend)
{
	switch (backend) {
	case FC_BACKEND_COUNTER:
		return "counter";
	case FC_BACKEND_KERNEL:
		return "kernel";
	default:
		return "unknown";
	}
}

const char *fc_freq_source_name(int src)
{
	static const char *const names[] = {"none", "perf", "cpuid", "cntfrq", "measured"};
	return (src >= 0 && src <= FC_FREQ_MEASURED) ? names[src] : "unknown";
}

/* src/bounded.c's: the bound's fields of *out (installing the bound, as a bounded read would) */
extern void fc__bound_status(struct fc_clock *c, struct fc_status *out) __attribute__((weak));

int fc_status(struct fc_status *out)
{
	struct fc_clock *c = fc__global_clock();
	if (out == NULL) {
		errno = EFAULT;
		return -1;
	}
	fc_init(); /* a settled answer: the start-up's trust check and calibration done */
	memset(out, 0, sizeof(*out));
	/* Take the writer lock for a consistent copy of the tracker (a reader never waits on it). */
	fc__windup_lock(c);
	out->backend = c->backend;
	fc__copy_str(out->reason, sizeof(out->reason), c->reason);
	fc__copy_str(out->counter, sizeof(out->counter), FC_COUNTER_NAME);
	fc__copy_str(out->clocksource, sizeof(out->clocksource), c->clocksource);
	fc__copy_str(out->config_error, sizeof(out->config_error), c->config_error);
	out->freq_source = c->freq_source;
	out->counter_hz_initial = c->counter_hz_initial;
	if (c->backend == FC_BACKEND_COUNTER && c->track.mult_est)
		out->counter_hz = (uint64_t)(((unsigned __int128)NS_PER_SEC << 32) / c->track.mult_est);
	out->period_ns = c->period_ns;
	out->discontinuities = c->track.discontinuities;
	out->real_steps = c->track.real_steps;
	out->last_error_ns = c->track.last_err_ns;
	out->max_abs_error_ns = c->track.max_abs_err_ns;
	if (c->track.nhist)
		out->last_bracket_ns = (int64_t)(((unsigned __int128)c->track.hist[c->track.nhist - 1].c_half *
						  2 * c->track.mult_est) >> 32);
	/* the writer refreshes the NTP state under the lock (windup.c): copy it under the lock too */
	out->ntp_maxerror_ns = c->have_ntp && c->ntp.sync != FC_SYNC_UNKNOWN ? c->ntp.maxerror_ns : -1;
	out->ntp_esterror_ns = c->ntp.esterror_ns;
	out->ntp_status = c->ntp.status;
	fc__windup_unlock(c);
	out->reanchors = __atomic_load_n(&c->reanchors, __ATOMIC_RELAXED);
	out->slow_paths = __atomic_load_n(&c->slow_paths, __ATOMIC_RELAXED);
	out->waits = __atomic_load_n(&c->waits, __ATOMIC_RELAXED);
	out->trust_checks = __atomic_load_n(&c->trust_checks, __ATOMIC_RELAXED);
	if (fc__bound_status) {
		fc__bound_status(c, out);
	} else { /* a static program without a bounded read: no bound linked */
		out->bound_error_age_ns = -1;
		out->bound_age_ns = -1;
		out->bound_half_ns = FC_BOUND_NOTHING;
		fc__copy_str(out->bound_source, sizeof(out->bound_source), "none");
		fc__copy_str(out->bound_why, sizeof(out->bound_why), "not linked: the program makes no bounded read");
		out->sync_status = FC_SYNC_UNKNOWN;
	}
	out->updater_running = __atomic_load_n(&c->updater_running, __ATOMIC_RELAXED) != 0;
	out->step_notifier = __atomic_load_n(&c->keeper.step_notifier, __ATOMIC_RELAXED);
	out->step_notifications = __atomic_load_n(&c->keeper.step_notifications, __ATOMIC_RELAXED);
	return 0;
}
