/*
 * fastclock — chronyd's slew of the kernel clock, followed from adjtimex readings (see slew.h for the model
 * and where each number comes from). Fail-closed: anything the model does not explain gives today's width.
 */
#include <sys/timex.h>

#include "slew.h"

/* ns <-> s; an interval is never narrowed by rounding: half-widths are rounded up and get 1 ns more. */
#define NS 1e9
/* chronyd's frequency readback is in units of 2^-16 ppm (sys_linux.c FREQ_SCALE). */
#define FREQ_SCALE 65536.0
/* A slew rate below this (relative) is rounding of chronyd's base frequency, not a slew (sys_generic.c:
 * "slewing frequency is zero or has wrong sign (e.g. due to rounding in the frequency driver ...)"); 1 ppm,
 * 1 us per second at worst. */
#define RATE_EPS 1e-6
/* A kernel rate beyond what chronyd can set: tick within 10 % of nominal (sys_linux.c max_tick_bias) and freq
 * within 500 ppm (sys_timex.c MAX_FREQ). */
#define MAX_TOTAL_PPM 100500.0

static double dabs(double x)
{
	return x < 0 ? -x : x;
}

static int64_t up_ns(double s)
{
	double ns = s * NS;
	if (!(ns < 4e18)) /* also NaN */
		return INT64_MAX / 4;
	return (int64_t)ns + 1;
}

static int64_t near_ns(double s)
{
	double ns = s * NS;
	if (!(ns < 4e18 && ns > -4e18))
		return 0;
	return (int64_t)(ns < 0 ? ns - 0.5 : ns + 0.5);
}

/* chronyd's growth of its error after the reply (reference.c get_root_dispersion), ppm. */
static double growth_ppm(const struct fc_slew_tracking *t)
{
	return FC_SLEW_MAX_CLOCK_ERROR_PPM + dabs(t->skew_ppm) + dabs(t->resid_freq_ppm);
}

static int tracking_sane(const struct fc_slew_tracking *t)
{
	/* each written so NaN fails: root delay and dispersion below 16 s (chronyd's maxdistance default is 3 s),
	 * a correction below 1 s (this model's range: a larger one is followed by today's width), a frequency
	 * the kernel can take */
	return t->root_delay >= 0 && t->root_delay < 16 && t->root_dispersion >= 0 && t->root_dispersion < 16 &&
	       dabs(t->correction) < 1 && dabs(t->freq_ppm) < MAX_TOTAL_PPM && dabs(t->skew_ppm) < 1e5 &&
	       dabs(t->resid_freq_ppm) < 1e5 && dabs(t->last_offset) < 1e3 && t->rms_offset >= 0 &&
	       t->rms_offset < 1e3;
}

void fc__slew_fallback(const struct fc_slew_tracking *t, int64_t age_ns, struct fc_slew_out *out)
{
	double c = t->correction, lo = c < 0 ? c : 0, hi = c > 0 ? c : 0;
	double age = age_ns > 0 ? (double)age_ns / NS : 0;
	out->center_ns = near_ns(lo + (hi - lo) / 2);
	out->half_ns = up_ns((hi - lo) / 2 + t->root_delay / 2 + t->root_dispersion + growth_ppm(t) * 1e-6 * age) + 1;
	out->drift_ppb = up_ns(growth_ppm(t) * 1e-6);
	out->rate_ppb = 0;
	out->until_rt_ns = 0;
	out->status = FC_SLEW_FALLBACK;
}

/* The kernel's total frequency as chronyd reads it back (sys_linux.c read_frequency), ppm; > 0 slows. */
static double total_ppm(const struct fc_slew_kernel *k, int hz)
{
	long nominal = (1000000L + hz / 2) / hz; /* sys_linux.c: "Mirror declaration in kernel" */
	return (double)hz * (double)(nominal - k->tick) - (double)k->freq / FREQ_SCALE;
}

/* A reading chronyd alone could have produced: tick within its bias, no PLL/PPS discipline, no PLL offset. */
static int kernel_chronyd(const struct fc_slew_kernel *k, int hz)
{
	long nominal = (1000000L + hz / 2) / hz;
	return k->offset == 0 && !(k->status & (STA_PLL | STA_PPSFREQ | STA_PPSTIME)) && k->tick >= nominal - nominal / 10 &&
	       k->tick <= nominal + nominal / 10 && k->mono_lo <= k->mono_hi;
}

/* d(correction)/d(REALTIME) for a kernel total frequency (sys_generic.c update_slew's slew_freq). */
static double slew_rate(double total, double base)
{
	return (total - base) / (1e6 - total);
}

/* The rate's offset from chronyd's base is at most maxslewrate (sys_generic.c clamps corr_freq, then scales by
 * (1e6 - base) / 1e6), plus the readback's rounding. */
static int rate_possible(double total, double base)
{
	return dabs(total - base) <= FC_SLEW_MAX_SLEW_PPM * (1 - base / 1e6) + 1e-3 && dabs(total) < MAX_TOTAL_PPM;
}

static int fail(const struct fc_slew_in *in, struct fc_slew_out *out, const char *why)
{
	fc__slew_fallback(&in->t, in->now.rt_ns - in->at_req.rt_ns, out);
	out->why = why;
	return out->status;
}

/* Today's interval widened by what chronyd's slews may overshoot 0 by: a slew runs >= MIN_SLEW_DURATION even
 * when its offset needs less (sys_generic.c update_slew clamps the duration up), and its timer fires late by
 * scheduling; the next slew corrects the overshoot at a lower rate. So beyond [0, c] by at most
 * (|s0| + |s1|) x (1 s + FC_SLEW_TIMER_LATE_S). */
static int fail_slewing(const struct fc_slew_in *in, struct fc_slew_out *out, const char *why, double s0, double s1)
{
	fail(in, out, why);
	out->half_ns += up_ns((dabs(s0) + dabs(s1)) * (FC_SLEW_MIN_DURATION_S + FC_SLEW_TIMER_LATE_S));
	return out->status;
}

int fc__slew_eval(const struct fc_slew_in *in, struct fc_slew_out *out)
{
	const struct fc_slew_tracking *t = &in->t;
	int hz = in->hz > 0 ? in->hz : 100;
	double c = t->correction, base = t->freq_ppm, tot0, tot1, s0, s1, a, b, now = 0, dist, lo, hi, age;
	int64_t step_lo, step_hi;

	if (!tracking_sane(t))
		return fail(in, out, "chronyd's tracking values out of range");
	if (hz > 100000 || !kernel_chronyd(&in->at_req, hz) || !kernel_chronyd(&in->now, hz))
		return fail(in, out, "the kernel clock is not driven by chronyd's frequency slew (PLL, PPS or tick)");
	if (!(in->at_req.rt_ns <= in->reply_rt_ns && in->reply_rt_ns <= in->now.rt_ns))
		return fail(in, out, "readings out of order");
	/* a step moves REALTIME against MONOTONIC; a slew moves both (the kernel slews one timekeeper) */
	step_lo = (in->now.rt_ns - in->now.mono_hi) - (in->at_req.rt_ns - in->at_req.mono_lo);
	step_hi = (in->now.rt_ns - in->now.mono_lo) - (in->at_req.rt_ns - in->at_req.mono_hi);
	if (step_lo < -FC_SLEW_STEP_TOL_NS || step_hi > FC_SLEW_STEP_TOL_NS)
		return fail(in, out, "REALTIME stepped since the request");
	tot0 = total_ppm(&in->at_req, hz);
	tot1 = total_ppm(&in->now, hz);
	if (!rate_possible(tot0, base) || !rate_possible(tot1, base))
		return fail(in, out, "the kernel's frequency is not chronyd's base frequency plus a slew");
	s0 = slew_rate(tot0, base);
	s1 = slew_rate(tot1, base);
	if ((double)(in->now.rt_ns - in->at_req.rt_ns) > FC_SLEW_MAX_AGE_S * NS)
		return fail_slewing(in, out, "chronyd's reply too old to follow its slew", s0, s1);

	/* chronyd answered at t_c in [a, b] (REALTIME, s relative to now) */
	a = (double)(in->at_req.rt_ns - in->now.rt_ns) / NS;
	b = (double)(in->reply_rt_ns - in->now.rt_ns) / NS;
	age = -a;
	dist = t->root_delay / 2 + t->root_dispersion + growth_ppm(t) * 1e-6 * age * (1 + dabs(s0) + dabs(s1));
	out->drift_ppb = up_ns(growth_ppm(t) * 1e-6);
	out->rate_ppb = 0;
	out->until_rt_ns = 0;

	if (in->at_req.freq == in->now.freq && in->at_req.tick == in->now.tick) {
		/* one rate since before the request: correction(now) = c + s0 * (now - t_c). Physics, whatever
		 * chronyd planned (its slews overshoot 0 when they need less than 1 s, and their timers fire late). */
		lo = c + s0 * (now - b);
		hi = c + s0 * (now - a);
		if (lo > hi) {
			double x = lo;
			lo = hi;
			hi = x;
		}
		out->status = FC_SLEW_TRACKED;
		out->why = "the kernel runs chronyd's slew at one rate since the request";
		out->rate_ppb = near_ns(s0);
		/* chronyd's timer changes the rate no earlier than the slew's planned end, c / s0 after the reply */
		if (dabs(s0) > RATE_EPS && s0 * c < 0)
			out->until_rt_ns = in->now.rt_ns + near_ns(a + -c / s0);
		else
			out->until_rt_ns = in->now.rt_ns;
	} else {
		/* changed. Once at t_sw: correction(now) = c + s0 * (t_sw - t_c) + s1 * (now - t_sw), linear in t_c in
		 * [a, b] and t_sw in [t_c, now], so its extremes are at the corners. The switch time is taken anywhere
		 * since chronyd answered, even when the readings fit chronyd's end-of-slew timer (not before the planned
		 * end l, and |s1| <= its register / 1 s, sys_generic.c update_slew: corr_freq = offset_register /
		 * duration, duration >= 1 s): an update of chronyd's before l with a new slew of that size reads the
		 * same. One change: the next timer is >= MIN_SLEW_DURATION later, chronyd's updates come at its poll,
		 * and the age limit keeps the window short (the caller re-asks at once on a change). */
		double l = a, u = now, f, tc[2], ts, m;
		int ended;
		if (dabs(s0) > RATE_EPS && s0 * c < 0 && a + -c / s0 > a)
			l = a + -c / s0;
		/* the label: the new slew corrects chronyd's register at t_sw, -(c + s0 * (t_sw - t_c)), with the same
		 * sign and at most its size / 1 s: h(t_sw) = -sgn(s1) (c + s0 (t_sw - t_c)) - (|s1| - RATE_EPS) x 1 s
		 * >= 0, a half-line in t_sw (slope -sgn(s1) s0), taken at its widest over t_c in [a, b] */
		if (dabs(s1) > RATE_EPS) {
			double sg = s1 < 0 ? -1 : 1, need = (dabs(s1) - RATE_EPS) * FC_SLEW_MIN_DURATION_S;
			if (dabs(s0) <= RATE_EPS) { /* the register hardly moved: h >= 0 at c, within s0's reach */
				if (-sg * c - need < -dabs(s0) * age)
					l = now + 1; /* not an end of slew */
			} else {
				double ta = a + (-sg * c - need) / (sg * s0), tb = b + (-sg * c - need) / (sg * s0);
				if (-sg * s0 > 0) { /* h grows with t_sw: t_sw >= the root */
					f = ta < tb ? ta : tb;
					l = f > l ? f : l;
				} else {
					f = ta > tb ? ta : tb;
					u = f < u ? f : u;
				}
			}
		}
		ended = l <= u && l <= now && u >= a && now - l <= FC_SLEW_MIN_DURATION_S;
		if (!ended && age > FC_SLEW_MIN_DURATION_S)
			return fail_slewing(in, out, "the kernel's rate changed and more than one change is possible", s0, s1);
		l = a; /* the hull: the change anywhere since the request */
		tc[0] = a;
		tc[1] = b;
		lo = 1e9; /* s: anything beats it */
		hi = -1e9;
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 2; j++) {
				ts = j ? now : (l > tc[i] ? l : tc[i]);
				f = c + s0 * (ts - tc[i]) + s1 * (now - ts);
				lo = f < lo ? f : lo;
				hi = f > hi ? f : hi;
			}
		/* If it was an update, chronyd's new slew s1 runs >= MIN_SLEW_DURATION, so its new pending correction
		 * is at least |s1| x 1 s (less FC_SLEW_BASE_MOVE_PPM: s1 is against the old base), opposite in sign
		 * to s1. Beyond the old claim's reach on that side ([lo, hi] + dist), chronyd may now contradict the
		 * reply we hold: not SYNCHRONIZED until it is asked again (whatever the label: the two read alike). */
		m = (dabs(s1) - FC_SLEW_BASE_MOVE_PPM * 1e-6) * FC_SLEW_MIN_DURATION_S;
		if (m > (s1 < 0 ? hi : -lo) + dist) {
			fail_slewing(in, out, "chronyd's new slew contradicts its last reply: ask it again", s0, s1);
			out->status = FC_SLEW_DISAGREE;
			return out->status;
		}
		if (ended) {
			out->status = FC_SLEW_ENDED;
			out->why = "the kernel's rate changed as chronyd's end-of-slew timer changes it";
		} else {
			out->status = FC_SLEW_UPDATED;
			out->why = "chronyd updated since its reply: its last claim carried over the rate change";
		}
	}
	out->center_ns = near_ns(lo + (hi - lo) / 2);
	out->half_ns = up_ns((hi - lo) / 2 + dist) + 1;
	return out->status;
}
