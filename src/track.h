/*
 * fastclock — track.c: samples in, next hand's parameters out (pure: no I/O, no globals).
 * Floor 0. Owns: struct fc_track, FC_TRACK_HIST, fc__track_value_fx. May call: nothing of the library (uses the
 * types of sample.h and ntp.h, and the hand layout of fc_hand.h).
 */
#ifndef FASTCLOCK_TRACK_H
#define FASTCLOCK_TRACK_H

#include <stdint.h>

#include "fastclock.h"
#include "sample.h"

#ifdef __cplusplus
extern "C" {
#endif

struct fc_ntp; /* ntp.h */

#define FC_TRACK_HIST 8 /* samples kept for the rate estimate: a baseline of 8 periods, at least 1 ms */

struct fc_track {
	/* configuration */
	uint64_t mask;
	uint64_t period_ticks; /* re-anchor period P in ticks: hands go stale after P */
	uint64_t valid_ticks;  /* and expire after P + P/8 */
	/* state */
	uint64_t mult_est; /* kernel ns per counter tick, 32.32 */
	uint64_t mult_hint; /* the rate known at start-up (0: none): adopted rates stay within 1/8 of it */
	struct fc_sample hist[FC_TRACK_HIST];
	/* hist_step[i] (ns, i >= 1): how large a step the kernel can have taken against the counter between
	 * hist[i - 1] and hist[i] unseen by the continuity test (that pair's residual plus its brackets' noise),
	 * and whether the residual was larger than that noise (hist_seen[i]: a step, not noise); they count in
	 * the rate's uncertainty (rate_uncertainty) */
	uint64_t hist_step[FC_TRACK_HIST];
	unsigned char hist_seen[FC_TRACK_HIST];
	unsigned nhist;     /* valid entries, newest at hist[nhist - 1] */
	int rate_suspect;   /* the previous sample broke continuity: a second break in a row means a new rate */
	unsigned since_break; /* samples in the history since it last restarted (a break): DISRUPTED until
			       * FC_TRACK_HIST (the history may hold fewer: a narrow counter's baseline is capped) */
	uint64_t break_dev; /* rate deviation (32.32 ns/tick) implied by the last break, if it looked like a rate
			     * change; counts in the bound until the rate is confirmed */
	uint64_t adopt_dev; /* size of the last rate change adopted from two breaks (32.32 ns/tick): counts in the
			     * bound until a continuous sample confirms the new rate, whatever breaks come between */
	uint64_t cand_mult;  /* rate of the last pair of samples taken after a break (0: none), and its noise: a */
	uint64_t cand_noise; /* next such pair that agrees confirms it, whatever its distance from mult_est */
	uint64_t est_noise; /* noise (32.32 ns/tick) of the samples mult_est was last computed from: counts in the
			     * bound while the history is too short to measure it (0: the hint) */
	int have_off;
	int64_t off_lo, off_hi; /* intersection of every wall-offset interval since the last step */
	/* results of the last update, and counters */
	int64_t last_err_ns;     /* old hand minus kernel at the anchor (ns), before correction */
	int64_t max_abs_err_ns;
	uint64_t discontinuities;
	uint64_t real_steps;
	uint64_t swing_mult; /* the kernel_swing() part of the last hand's err_mult (32.32 ns/tick) */
	int disrupted; /* a discontinuity (or start-up on a hint) and not re-converged since: hands not SYNCHRONIZED */
	/* the kernel's NTP tick as adjtimex read it (fc__track_note_ntp; kernel_swing() says what it allows) */
	long tick_us;         /* the newest read's tick (us), 0: unknown */
	int64_t tick_at;      /* CLOCK_MONOTONIC of the newest read (INT64_MIN: none) */
	int64_t tick_since;   /* of the first of the reads since that all showed tick_us */
	int tick_moved;       /* a read has shown the tick off nominal (for good: a daemon that moves the tick,
			       * chronyd, may move it again by thousands of ppm at once, from nominal too) */
	uint64_t best_half;   /* the narrowest sample half-bracket seen (ticks; UINT64_MAX: none yet) */
	int have_boot;
	int64_t boot_hi;      /* the last sample's CLOCK_BOOTTIME - CLOCK_MONOTONIC upper bound */
	int hold;             /* a suspend left the hands ahead of the kernel: slopes down to 0 until re-converged */
	uint64_t suspends;
};

void fc__track_init(struct fc_track *t, uint64_t mask, uint64_t period_ticks, uint64_t mult_hint);
void fc__track_set_period(struct fc_track *t, uint64_t period_ticks);
/* The hint given to fc__track_init was measured between samples a and b (not a CPUID or kernel figure): its
 * noise is known, so the first hand may be SYNCHRONIZED. */
void fc__track_hint_measured(struct fc_track *t, const struct fc_sample *a, const struct fc_sample *b);
/* The kernel's NTP state as adjtimex (modes 0) read it at CLOCK_MONOTONIC `at` (taken before the read, under the
 * writer lock, as the samples are); a read older than one already noted is ignored. Its tick decides the allowance
 * for an unseen kernel rate change: 2000 ppm of nominal only while the reads show the tick nominal over the whole
 * window the rate was measured in (the last read before its first sample and every one since, at least one of
 * them inside it) and never moved; 5000 ppm otherwise (kernel_swing() in track.c). */
void fc__track_note_ntp(struct fc_track *t, const struct fc_ntp *ntp, int64_t at);
/* Compute the hand that follows `old` (NULL or a kernel hand at start-up), anchored at counter value
 * t_anchor, from sample s. Fills every parameter field of *out (not gen/next). Pure: no I/O, no globals. */
void fc__track_update(struct fc_track *t, const struct fc_hand *old, const struct fc_sample *s,
		     uint64_t t_anchor, struct fc_hand *out);
/* The sync status of hand h (just made by fc__track_update) given the kernel's NTP state: DISRUPTED while the
 * tracker is (a discontinuity, or a rate resting on an unmeasured hint) or a pending leap second falls inside
 * the hand's window; otherwise ntp->sync. Pure. */
int fc__track_sync(const struct fc_track *t, const struct fc_hand *h, const struct fc_ntp *ntp);

/* The value of a hand at counter t, in 32.32 fixed point (exactly what readers compute, before the shift),
 * with deltas clamped to the hand's validity window [0, valid_ticks]. Shared by track.c and windup.c. */
__int128 fc__track_value_fx(const struct fc_hand *h, uint64_t t);

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_TRACK_H */
