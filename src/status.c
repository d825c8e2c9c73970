/*
 * fastclock — control and status (floor 4: public entry points): fc_set_period_ns, fc_status,
 * fc_coarse_one_load and the printable names of the enums.
 *
 * Owns: the copy of the clock's state into struct fc_status.
 * May call: state.c, windup.c (the writer lock, the period), init.c, the public API, bound/ (the source state).
 */
#include <errno.h>
#include <string.h>

#include "config.h"
#include "init.h"
#include "state.h"
#include "units.h"
#include "windup.h"
#include "bound/select.h"


int fc_set_period_ns(int64_t period_ns)
{
	struct fc_clock *c = fc__global_clock();
	if (period_ns < FC_MIN_PERIOD_NS || period_ns > FC_MAX_PERIOD_NS) {
		errno = EINVAL;
		return -1;
	}
	fc__ensure_init();
	fc__clock_lock(c);
	fc__clock_set_period_locked(c, period_ns);
	fc__clock_unlock(c);
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

/* The bound source's state, copied under the writer lock (the writer polls the source). */
static void bound_status(struct fc_clock *c, struct fc_status *out)
{
	const struct fc_bounder *bd = c->bounder;
	const struct fc_bound *cur;
	int64_t now;
	out->bound_error_age_ns = -1;
	if (!bd) {
		fc__copy_str(out->bound_source, sizeof(out->bound_source), "kernel");
		return;
	}
	fc__clock_lock(c);
	now = fc__kernel_ns(c, CLOCK_MONOTONIC);
	/* A process whose first bounded read read nothing (auto mode, windup.c), or that has had no bound yet (the
	 * kernel backend): its sources are opened now, as its next bound would. */
	if (c->bounder_reopen) {
		struct fc_hand p;
		fc__clock_bound_fields_locked(c, &p, now, 0);
	}
	cur = fc__bounder_current(bd);
	fc__copy_str(out->bound_source, sizeof(out->bound_source), fc__bounder_name(bd));
	fc__copy_str(out->bound_why, sizeof(out->bound_why), fc__bounder_why(bd));
	fc__copy_str(out->bound_reason, sizeof(out->bound_reason), cur->reason);
	fc__copy_str(out->bound_error, sizeof(out->bound_error), cur->last_error);
	out->bound_status = cur->status;
	out->bound_age_ns = cur->as_of_ns ? now - cur->as_of_ns : -1;
	out->bound_half_ns = fc__bound_half_at(cur, now);
	out->bound_center_ns = cur->center_ns;
	out->leap = cur->leap;
	if (cur->last_error[0])
		out->bound_error_age_ns = now - cur->last_error_at;
	fc__clock_unlock(c);
}

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
	fc__clock_lock(c);
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
	fc__clock_unlock(c);
	out->reanchors = __atomic_load_n(&c->reanchors, __ATOMIC_RELAXED);
	out->slow_paths = __atomic_load_n(&c->slow_paths, __ATOMIC_RELAXED);
	out->waits = __atomic_load_n(&c->waits, __ATOMIC_RELAXED);
	out->trust_checks = __atomic_load_n(&c->trust_checks, __ATOMIC_RELAXED);
	bound_status(c, out);
	out->updater_running = __atomic_load_n(&c->updater_running, __ATOMIC_RELAXED) != 0;
	{
		struct fc_interval iv;
		fc_real_bounded(&iv);
		out->sync_status = iv.status;
	}
	out->step_notifier = __atomic_load_n(&c->step_notifier, __ATOMIC_RELAXED);
	out->step_notifications = __atomic_load_n(&c->step_notifications, __ATOMIC_RELAXED);
	return 0;
}
