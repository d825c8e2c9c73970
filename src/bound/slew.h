/*
 * fastclock — where chronyd's slew of the kernel clock has got to: the centre of the UTC interval follows
 * chronyd's estimate and the half-width approaches chronyd's own error instead of the pending correction.
 *
 * Pure: no I/O, no globals; the caller hands in chronyd's tracking reply and adjtimex (modes 0) readings.
 * Owns: nothing. May call: nothing (no libm).
 *
 * The model is chronyd's own (mlichvar/chrony, 8f2db83):
 *   - sys_linux.c set_frequency(): chronyd sets tick and freq together (ADJ_TICK | ADJ_FREQUENCY, never the
 *     PLL: sys_timex.c initialise_timex() clears STA_PLL), and reads its frequency back as
 *     total_ppm = hz * (nominal_tick - tick) - freq / 2^16      (> 0: the kernel slows the clock)
 *   - sys_generic.c update_slew(): a pending offset is slewed by running the kernel at base_freq + corr_freq
 *     for a computed duration (>= 1 s, MIN_SLEW_DURATION), |corr_freq| <= maxslewrate (83333 ppm); then a
 *     timer (handle_end_of_slew) sets the next frequency. The correction chronyd reports (tracking "System
 *     time", reference.c REF_GetTrackingReport -> offset_convert) moves with the clock's raw (REALTIME) time as
 *     d(correction)/d(REALTIME) = slew_freq = (total_ppm - base_ppm) / (1e6 - total_ppm).
 *   - reference.c get_root_dispersion(): chronyd's error grows by skew + |residual freq| + maxclockerror
 *     (1 ppm, conf.c) per second after its reply.
 * So: true UTC(now) = REALTIME(now) + correction + slew_freq * (REALTIME(now) - t_reply) within
 * root_delay/2 + root_dispersion + that growth, as long as the kernel ran at the rate read before the request.
 */
#ifndef FASTCLOCK_BOUND_SLEW_H
#define FASTCLOCK_BOUND_SLEW_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One adjtimex(modes 0) reading with the clocks read around it. */
struct fc_slew_kernel {
	int64_t rt_ns;               /* CLOCK_REALTIME, read right after adjtimex */
	int64_t mono_lo, mono_hi;    /* CLOCK_MONOTONIC read before and after rt_ns (a step moves REALTIME only) */
	long freq;                   /* timex.freq: ppm * 2^16, > 0 speeds the clock up */
	long tick;                   /* timex.tick: us per USER_HZ tick */
	long offset;                 /* timex.offset: the kernel PLL's pending offset (chronyd keeps it 0) */
	int status;                  /* timex.status */
};

/* chronyd's tracking reply (candm.h RPY_Tracking), seconds and ppm as decoded. */
struct fc_slew_tracking {
	double correction;           /* s; true UTC = REALTIME + correction at the instant chronyd answered */
	double last_offset, rms_offset; /* s; range-checked only: the pending correction is not bounded by the last
					 * offset (a slew's leftover and its overshoot add to it), so no consistency rule */
	double freq_ppm;             /* chronyd's base frequency (LCL_ReadAbsoluteFrequency) */
	double resid_freq_ppm, skew_ppm;
	double root_delay, root_dispersion; /* s */
	int64_t ref_time_ns;         /* UTC of chronyd's last clock update; not used by the model (the caller's
				      * "no update yet" rule reads it), carried so one struct holds the reply */
};

struct fc_slew_in {
	struct fc_slew_tracking t;
	struct fc_slew_kernel at_req; /* read just before the tracking request was sent */
	int64_t reply_rt_ns;          /* CLOCK_REALTIME when the reply arrived: chronyd answered in [at_req, here] */
	struct fc_slew_kernel now;    /* read now */
	int hz;                       /* USER_HZ (sysconf(_SC_CLK_TCK)); 0: 100 */
};

enum fc_slew_status {
	FC_SLEW_TRACKED = 0, /* the kernel ran at one rate since the request: centre follows the slew */
	FC_SLEW_ENDED = 1,   /* changed once, as chronyd's end-of-slew timer changes it (a label: hull as UPDATED) */
	FC_SLEW_UPDATED = 2, /* the rate changed once otherwise: chronyd updated since the reply; its claim carried */
	FC_SLEW_FALLBACK = 3,/* the kernel's state is not what chronyd's slew gives: today's width */
	FC_SLEW_DISAGREE = 4 /* chronyd's new slew contradicts the reply held: not SYNCHRONIZED, ask again now */
};

struct fc_slew_out {
	int64_t center_ns;  /* true UTC ~ CLOCK_REALTIME(now) + center_ns */
	int64_t half_ns;    /* at now */
	int64_t drift_ppb;  /* growth of half_ns after now, as fc_bound.drift_ppb */
	int64_t rate_ppb;   /* centre's motion per REALTIME ns after now while the same slew runs (TRACKED), else 0 */
	int64_t until_rt_ns;/* REALTIME when chronyd's slew is planned to end (rate_ppb no longer holds) */
	int status;         /* enum fc_slew_status */
	const char *why;    /* static text: what decided the status */
};

/* chronyd's defaults the model relies on (conf.c): maxclockerror 1 ppm, maxslewrate 1e6/12 ppm. */
#define FC_SLEW_MAX_CLOCK_ERROR_PPM 1.0
#define FC_SLEW_MAX_SLEW_PPM (1e6 / 12.0)
/* sys_generic.c MIN_SLEW_DURATION: chronyd never plans a slew shorter than this (s). */
#define FC_SLEW_MIN_DURATION_S 1.0
/* Oldest reply the slew is followed from (s): chronyd's poll via the writer is about 1 s; beyond this the
 * assumption "no chronyd update we have not seen" is too weak to narrow on. */
#define FC_SLEW_MAX_AGE_S 2.0
/* How late chronyd's end-of-slew timer may fire (s): its own slew_excess_duration is a decaying maximum of
 * this lateness, normally ms; beyond 100 ms the machine was stalled (sys_generic.c ignores > 100 s). */
#define FC_SLEW_TIMER_LATE_S 0.1
/* How far chronyd's base frequency may move in one update for its new slew to be read against the old base
 * (ppm): sys_timex.c MAX_FREQ, the kernel's own freq range. A larger move only weakens the DISAGREE check (the
 * interval then is the old claim, as ClockBound's). */
#define FC_SLEW_BASE_MOVE_PPM 500.0
/* REALTIME - MONOTONIC may differ between readings by no more than this without counting as a step (ns). */
#define FC_SLEW_STEP_TOL_NS 1000

int fc__slew_eval(const struct fc_slew_in *in, struct fc_slew_out *out);
/* Today's interval from the same reply (chrony.c fc__chrony_eval without the newest measurement): centre and
 * half-width covering [0, correction] plus root distance and its growth. FALLBACK returns it, widened by what
 * chronyd's slews overshoot when the kernel's readings are chronyd's (see slew.c fail_slewing). */
void fc__slew_fallback(const struct fc_slew_tracking *t, int64_t age_ns, struct fc_slew_out *out);

#ifdef __cplusplus
}
#endif
#endif
