/*
 * fastclock — the tracker: bracketed kernel samples in, the next timehand's parameters out.
 *
 * Pure code: no I/O, no globals, no clocks. tests/sim drives it with simulated machines.
 *
 * Model. The kernel's CLOCK_MONOTONIC is K(t) for counter value t; each sample gives one point of K with an
 * uncertainty of half its counter bracket. The tracker keeps
 *   - mult_est: the rate of K in ns per tick, measured over the last FC_TRACK_HIST samples (a baseline of
 *     several periods keeps bracket noise below ~1 ppm while following an NTP slew within that many
 *     periods), and over at least BASELINE_MIN_NS at short periods;
 *   - the wall offset CLOCK_REALTIME - CLOCK_MONOTONIC, which the kernel keeps constant between steps: the
 *     intersection of every sample's interval pins it to ~1 ns, and an empty intersection is a step.
 * Each update anchors the new hand at t_anchor with value V and slope mult:
 *   V    = the old hand's value at t_anchor (continuity), raised to the kernel's lower bound if the old hand
 *          had fallen behind (monotonic time may jump forward, never back); if the old hand had expired,
 *          the kernel's value, raised to the largest value readers can have obtained from the old hand
 *          (expired_floor: its end value, unless the counter jumped past its window);
 *   mult = the slope that meets K at t_anchor + P, so an error present now is gone by the next re-anchor
 *          (this is how NTP slews reach readers), clamped to mult_est +- 1/16.
 * and, so that readers still holding the old hand can never see time go back, the new line stays at or above
 * the old one over the rest of the old hand's validity window (the "dominance" rule below).
 * The error bound (mono_err_ns + err_mult x delta) covers the kernel's value, and the wall offset's own
 * uncertainty, at every read of the hand while the kernel's rate against the counter stays within
 * the allowance (kernel_swing: 2000 ppm of nominal while the kernel's tick read nominal over the rate's whole
 * window, else 5000) of the rate
 * the tracker measured (any NTP frequency change, adjtime slew or reversal up to that size, at any instant of
 * the period); a larger change breaks continuity at the next re-anchor and the
 * hands are DISRUPTED until the history has refilled and re-converged. fc__track_sync() says which hands are
 * not SYNCHRONIZED (start-up on an unmeasured hint, a discontinuity, a leap second inside the window or just
 * past it). tests/sim checks the bound at every
 * read (the adv_* scenarios: 0 misses while synchronised, at periods 1 us to 1 s).
 */
#include <sys/timex.h>

#include "ntp.h"
#include "sample.h"
#include "track.h"
#include "units.h"

typedef __int128 i128;

#define FX_ONE ((i128)1 << 32) /* 1 ns in 32.32 fixed point */

/* A sample whose bracket is wider than this is too noisy to steer the rate or the slope (the process was
 * preempted inside it): it only bounds the anchor from below. 2 us is ~50x the bracket of an idle core (an
 * ordered counter read and a vDSO read, tens of ns). */
#define POOR_BRACKET_NS 2000
/* Continuity test between consecutive samples: a rate change of more than 1000 ppm (twice the kernel's
 * maximum NTP slew of 500 ppm, adjtimex(2)) between two re-anchors is a discontinuity. */
#define RATE_TOL_DIV 1000
/* The rate estimate's shortest baseline. FC_TRACK_HIST periods are 8 us at a 1 us period: two brackets of
 * ~40 ns leave the estimate ~5000 ppm uncertain, beyond the continuity tolerance, so a sample taken after a
 * longer gap (readers idle for a while, the period raised) landed that far from the extrapolation and counted
 * as a discontinuity with no step at all. Over 1 ms the same brackets give ~40 ppm; an NTP slew is followed
 * within that (rate_uncertainty's newest-period check and the bound's swing cover the rest). */
#define BASELINE_MIN_NS 1000000
/* Largest slope correction: 1/16 of the rate (62500 ppm), enough for chrony's fastest slew (83333 ppm is
 * its maximum; tens of ms/s typical) to be followed while an error of P is removed within 16 periods. */
#define SLEW_DIV 16
/* Rate uncertainty for the error bound, per tick (see rate_uncertainty()): at least 1/2^20 (~1 ppm: the
 * kernel's own PLL adjustments and counter wander between re-anchors); 1/1024 (~1000 ppm, the continuity
 * tolerance) while the rate rests on fewer than two samples (start-up from a frequency hint, or just after a
 * discontinuity). */
#define RATE_FLOOR_DIV (1 << 20)
#define RATE_UNCONFIRMED_DIV 1024
/* How far the kernel's rate against the counter may move without the tracker seeing it, in ppm of the kernel's
 * nominal rate (the kernel's limits are in ppm of nominal: kernel_swing()): 5000 ppm, or KERNEL_SWING_PLL_PPM
 * while the kernel's tick is known nominal over the rate's window. It widens every hand's bound (err_mult) and
 * nothing else.
 * What it guarantees: mult_est
 * is the mean rate over the history (FC_TRACK_HIST periods) to within its noise, which the bound carries, so
 * the bound holds while the kernel's rate stays within this of that mean until the next re-anchor (a change
 * within the last period is covered whether or not rate_uncertainty's newest-period check caught it).
 * From the Linux NTP code (kernel/time/ntp.c, include/linux/timex.h; adjtimex(2)):
 *   - ADJ_FREQUENCY: time_freq is clamped to +-MAXFREQ = 500 ppm, so a frequency write moves the rate by
 *     up to 1000 ppm (one extreme to the other: chrony and ntpd set it at every update);
 *   - ADJ_OFFSET_SINGLESHOT (adjtime(3)): time_adjust is slewed at MAX_TICKADJ = 500 us/s = 500 ppm, so
 *     starting, ending or reversing a slew moves the rate by up to 1000 ppm;
 *   - together 2000 ppm, what the kernel can do without ADJ_TICK or the PLL;
 *   - ADJ_TICK: tick may be set to 900000..1100000 / USER_HZ us (+-10 %, timekeeping_validate_timex); chrony
 *     carries every frequency beyond +-50 ppm in tick, at 100 ppm per tick unit (USER_HZ = 100), and its
 *     fast slews (maxslewrate 83333 ppm) move it by thousands of ppm at once. The 3000 ppm left over covers
 *     30 tick units per period; the PLL (ADJ_OFFSET without SINGLESHOT) moves the rate by offset >>
 *     (SHIFT_PLL + time_constant) once a second, up to 125000 ppm for a 0.5 s offset at time constant 0.
 * A change beyond this is not covered within the period it happens in (no bound of useful width covers
 * +-10 %): the next re-anchor sees it as a break of continuity (> RATE_TOL_DIV) and the hands are DISRUPTED
 * from there until re-converged. */
#define KERNEL_SWING_PPM 5000
/* While the tick is nominal (ADJ_TICK unused: ntpd and systemd-timesyncd steer through ADJ_FREQUENCY, the PLL
 * and adjtime), the kernel can move its rate by the frequency's and the slew's ranges only: 2 x 500 + 2 x 500 =
 * 2000 ppm (see above). The tick is read with adjtimex (modes 0) and each read noted with its time
 * (fc__track_note_ntp): the allowance must cover a change from any rate in the window mult_est is the mean of,
 * so the tick must read nominal over all of it (kernel_swing()). A daemon that has moved it once (chronyd) may
 * move it again by thousands of ppm at once, so the allowance stays KERNEL_SWING_PPM from the first read that
 * shows it moved. */
#define KERNEL_SWING_PLL_PPM 2000
/* The nominal rate from the measured one: the kernel runs at nominal x tick / nominal tick x (1 + frequency +
 * slew), the last two within +-1000 ppm together: nominal <= measured x nominal tick / tick x (1 + 1/512). With
 * the tick unknown or not constant over the rate's window, it may be anywhere in ADJ_TICK's +-10 %: nominal <=
 * measured x 10 / 9 (x (1 + 1/512)). */
#define NOMINAL_MARGIN_DIV 512
/* expired_floor()'s allowance for the kernel's rate change since an expired hand was made, in place of the
 * bound's kernel_swing() (which would put the first read after a suspend 0.5 % x P ahead instead of 0.2 %):
 * the NTP frequency (+-500 ppm, MAXFREQ) plus an adjtime() slew (+-500 ppm, MAX_TICKADJ), from one extreme to
 * the other, 2000 ppm = 1/500. (1/2048 let time go back by 10 ns when fuzz_track turned the slew from +500
 * to -500 ppm.) */
#define REACH_TOL_DIV 500

/* A counter's rate is fixed by its hardware: a rate adopted after breaks must lie within 1/8 of the one known
 * at start-up (CPUID, the kernel's TSC parameters, or a bracketed measurement). A VM migrated to a host whose
 * counter runs further off without TSC scaling gets its TSC marked unstable by the kernel, which switches
 * clocksource, and fastclock follows it to the kernel backend. Without this limit, suspends of matching
 * lengths in consecutive periods made two pairs agree on a rate 3500x off (fuzz_track, FUZZ_DISC_SPACING=1). */
#define RATE_HINT_DIV 8

/* Re-converged after a discontinuity once the error at a re-anchor is within 1 us again. */
#define RECONVERGED_NS 1000

/* A sample's bracket this much wider than the narrowest seen (2x + 2 ticks) comes from a slower kernel read: a
 * preemption, or a clocksource switch away from the counter (hpet: 69.8 ns steps, ~0.5 us a read; acpi_pm:
 * 279 ns, ~1 us). Such a clocksource's value lies up to one of its steps below its line, and its step is shorter
 * than its read: the sample's interval is widened by twice the extra width (coarse_widen()). A coarse clocksource
 * that reads as fast as the counter (jiffies: 4 ms steps) is not covered: the trust re-check leaves it. */
#define COARSE_WIDE_MUL 2
#define COARSE_WIDE_ADD 2

static int64_t sdelta(uint64_t a, uint64_t b, uint64_t mask)
{
	uint64_t d = (a - b) & mask;
	if (d > (mask >> 1))
		return -(int64_t)((mask - d) + 1);
	return (int64_t)d;
}

static i128 fx(int64_t ns) { return (i128)ns * FX_ONE; }

static int64_t fx_floor(i128 v) { return (int64_t)(v >> 32); } /* arithmetic shift: floor */

static i128 i128_abs(i128 v) { return v < 0 ? -v : v; }

/* A non-negative fixed-point amount as whole ns, rounded up, saturated at 2^62 (no sum of a few overflows). */
static uint64_t fx_ceil(i128 v)
{
	const i128 ns = (v + FX_ONE - 1) >> 32;
	return ns > ((i128)1 << 62) ? (uint64_t)1 << 62 : (uint64_t)ns;
}

static uint64_t sat_add(uint64_t a, uint64_t b) { return a + b > ((uint64_t)1 << 62) ? (uint64_t)1 << 62 : a + b; }

/* Kernel CLOCK_MONOTONIC at counter t, extrapolated from sample s at rate mult. */
static i128 kernel_at(const struct fc_sample *s, uint64_t t, uint64_t mult, uint64_t mask)
{
	return fx(s->mono) + (i128)sdelta(t, s->c_mid, mask) * (i128)mult;
}

i128 fc__track_value_fx(const struct fc_hand *h, uint64_t t)
{
	const uint64_t d = fc__hand_window_delta(h, t); /* clamped as the coarse sample clamps (src/state.c) */
	return fx(h->mono_ns) + (i128)h->frac + (i128)((unsigned __int128)d * h->mult);
}

void fc__track_init(struct fc_track *t, uint64_t mask, uint64_t period_ticks, uint64_t mult_hint)
{
	*t = (struct fc_track){0};
	t->mask = mask;
	t->mult_est = mult_hint ? mult_hint : 1;
	t->mult_hint = mult_hint;
	t->best_half = UINT64_MAX;
	t->tick_at = INT64_MIN; /* no adjtimex read yet: the tick unknown */
	/* A hint (CPUID, the kernel's TSC figure) says nothing about how far the kernel's clock runs from it
	 * (an NTP frequency, a slew in progress: 20000 ppm and more): not SYNCHRONIZED until a re-anchor has
	 * measured the rate (fc__track_sync), unless the hint itself was measured (fc__track_hint_measured). */
	t->disrupted = 1;
	fc__track_set_period(t, period_ticks);
}

void fc__track_set_period(struct fc_track *t, uint64_t period_ticks)
{
	/* The rate history spans FC_TRACK_HIST periods, and sdelta() tells forward from back within half the
	 * counter's range: a narrow counter (32 bits at 1 GHz wraps in 4.3 s) caps the period so the whole history
	 * fits in a quarter of the range (at P = 1 s its 8-period baseline aliased). */
	const uint64_t cap = (t->mask >> 2) / (FC_TRACK_HIST + 1);
	if (period_ticks > cap)
		period_ticks = cap;
	if (period_ticks < 8)
		period_ticks = 8;
	t->period_ticks = period_ticks;
	/* Expire P/8 after going stale: long enough that a reader arriving while another thread re-anchors
	 * (~0.5 us) never waits, short enough that the dominance bump (<= P/8 x slope change) stays ~1 ns. */
	t->valid_ticks = period_ticks + period_ticks / 8;
}

void fc__track_hint_measured(struct fc_track *t, const struct fc_sample *a, const struct fc_sample *b)
{
	const int64_t dc = sdelta(b->c_mid, a->c_mid, t->mask);
	if (dc <= 0)
		return;
	/* The rate came from a and b: it is the kernel's mean rate over dc to within their noise, and the kernel's
	 * rate since may have moved by at most the swing the bound already carries. */
	t->est_noise = (uint64_t)(((i128)(a->c_half + b->c_half + 2) * t->mult_est + 2 * FX_ONE) / dc);
	t->disrupted = 0;
}

static void hist_reset(struct fc_track *t, const struct fc_sample *a, const struct fc_sample *b)
{
	t->nhist = 0;
	if (a)
		t->hist[t->nhist++] = *a;
	t->hist[t->nhist++] = *b;
	t->hist_step[0] = t->hist_step[1] = 0; /* a restarted history spans no step it has not seen */
	t->hist_seen[0] = t->hist_seen[1] = 0;
	t->since_break = t->nhist;
}

/* Remove hist[k] (k < nhist - 1 when k > 0: the newest is never removed this way). The pair that now spans its
 * place can hide both steps it sat between. */
static void hist_remove(struct fc_track *t, unsigned k)
{
	if (k > 0) {
		t->hist_step[k + 1] = sat_add(t->hist_step[k + 1], t->hist_step[k]);
		t->hist_seen[k + 1] |= t->hist_seen[k];
	}
	for (unsigned i = k + 1; i < t->nhist; i++) {
		t->hist[i - 1] = t->hist[i];
		t->hist_step[i - 1] = t->hist_step[i];
		t->hist_seen[i - 1] = t->hist_seen[i];
	}
	t->hist_step[0] = 0;
	t->hist_seen[0] = 0;
	t->nhist--;
}

/* Noise of a rate measured between two samples dc ticks apart (32.32 ns/tick): each end's half bracket plus 1
 * tick (the counter is read in whole ticks), plus 1 ns each for the kernel's whole-ns values. */
static i128 pair_noise(const struct fc_sample *a, const struct fc_sample *b, int64_t dc, uint64_t mult)
{
	return ((i128)(a->c_half + b->c_half + 2) * mult + 2 * FX_ONE) / dc;
}

/* Step 1: the rate. Returns 1 if s continues the history, 0 if it broke continuity. */
static int update_rate(struct fc_track *t, const struct fc_sample *s, int poor)
{
	const struct fc_sample *prev;
	int64_t dc, dm;
	i128 expect, got, tol;

	if (t->nhist == 0) {
		hist_reset(t, NULL, s);
		return 1;
	}
	prev = &t->hist[t->nhist - 1];
	dc = sdelta(s->c_mid, prev->c_mid, t->mask);
	dm = s->mono - prev->mono;
	if (dc > 0 && dm >= 0) {
		expect = (i128)dc * t->mult_est;
		got = fx(dm);
		/* What noise can explain: the rate change allowed between re-anchors and the two samples' half
		 * brackets. The estimate's own noise is kept small by its baseline of at least BASELINE_MIN_NS
		 * (~50 ppm), so a sample taken long after the last one (readers idle, the period raised) lands
		 * within the tolerance. (Adding that noise, extrapolated over the gap, to the tolerance instead let
		 * a counter jump right after a break pass as continuous while the history was short, and the next
		 * hands went back 250 us: fuzz_track, tests/fuzz/findings/
		 * track_back_counter_jump_passed_as_continuous_by_a_noise_widened_tolerance.) */
		tol = expect / RATE_TOL_DIV + (i128)(prev->c_half + s->c_half + 2) * t->mult_est + 2 * FX_ONE;
		if (i128_abs(got - expect) <= tol) {
			if (poor)
				return 1; /* consistent, but too noisy to move the estimate */
			if (t->nhist == FC_TRACK_HIST) {
				/* Evict the oldest sample, unless the baseline would fall below BASELINE_MIN_NS: then
				 * hist[0] stays, and hist[1] with it until it is that old itself (it becomes the next
				 * hist[0]), and the oldest of the recent samples goes. */
				hist_remove(t, s->mono - t->hist[1].mono >= BASELINE_MIN_NS ? 0 : 2);
			}
			/* The step this pair may hide: the continuity test let its residual pass (up to tol), and the
			 * brackets can hide as much again in the other direction. A residual beyond what the brackets
			 * explain is a step seen. */
			{
				const i128 noise = (i128)(prev->c_half + s->c_half + 2) * t->mult_est + 2 * FX_ONE;
				t->hist_step[t->nhist] = fx_ceil(i128_abs(got - expect) + noise);
				t->hist_seen[t->nhist] = i128_abs(got - expect) > noise;
			}
			t->hist[t->nhist++] = *s;
			t->since_break++;
			/* A narrow counter: the baseline stays within a quarter of its range (sdelta() below would
			 * alias past half of it). Consecutive samples are each less than half a range apart (else
			 * they broke continuity), so the sum of their distances is the true one. */
			{
				uint64_t span = 0;
				for (unsigned i = t->nhist - 1; i > 0; i--) {
					span += (t->hist[i].c_mid - t->hist[i - 1].c_mid) & t->mask;
					if (span > (t->mask >> 2)) {
						for (unsigned j = i; j < t->nhist; j++) {
							t->hist[j - i] = t->hist[j];
							t->hist_step[j - i] = t->hist_step[j];
							t->hist_seen[j - i] = t->hist_seen[j];
						}
						t->hist_step[0] = 0;
						t->hist_seen[0] = 0;
						t->nhist -= i;
						break;
					}
				}
			}
			t->rate_suspect = 0;
			t->break_dev = 0;
			dc = sdelta(s->c_mid, t->hist[0].c_mid, t->mask);
			dm = s->mono - t->hist[0].mono;
			if (t->nhist > 1 && dc > 0 && dm > 0) {
				t->est_noise = (uint64_t)pair_noise(&t->hist[0], s, dc, t->mult_est);
				t->mult_est = (uint64_t)(fx(dm) / dc);
				/* An adopted rate is confirmed once samples taken since measure the rate more
				 * finely than the change was large (a sample a few ticks after it confirms nothing). */
				if (t->est_noise < t->adopt_dev)
					t->adopt_dev = 0;
			}
			return 1;
		}
		/* A break that looks like a rate change (within 2x): until the rate is confirmed, the bound
		 * allows for its size. */
		t->break_dev = 0;
		if (!poor && got > expect / 2 && got < expect * 2) {
			/* not capped: the bound must cover the change whatever its size (got is within 2x, so dev is
			 * below the rate itself) */
			t->break_dev = (uint64_t)(i128_abs(got - expect) / dc);
		}
		/* Two breaks in a row whose pair agrees on a plausible rate: the counter's rate itself changed (a VM
		 * migrated to a host whose counter runs at another rate, without TSC scaling: a few %). Adopt it.
		 * Plausible is within 1/16 (SLEW_DIV, 6.25 %): a suspend followed by a counter jump in the next
		 * period also makes two breaks, whose pair can suggest any rate (fuzz_track with
		 * FUZZ_DISC_SPACING=1 had one adopted 2x off). A rate further off is adopted only when two
		 * consecutive pairs of samples, each after a break, agree on it (cand_mult): that is how a wrong
		 * estimate, or a large change, is recovered from (without it every later sample broke). */
		if (t->rate_suspect && !poor) {
			const i128 r = got / dc, noise = pair_noise(prev, s, dc, t->mult_est);
			const int plausible = i128_abs(got - expect) <= expect / SLEW_DIV;
			const int agrees = t->cand_mult &&
					   i128_abs(r - (i128)t->cand_mult) <=
						   (i128)t->cand_mult / RATE_TOL_DIV + noise + (i128)t->cand_noise;
			const int near_hint = t->mult_hint == 0 ||
					      i128_abs(r - (i128)t->mult_hint) <= (i128)(t->mult_hint / RATE_HINT_DIV);
			if ((plausible || agrees) && near_hint) {
				t->est_noise = (uint64_t)noise;
				t->adopt_dev = plausible ? t->break_dev
							 : (uint64_t)(i128_abs(r - (i128)t->cand_mult) + t->cand_noise);
				t->break_dev = 0; /* carried by adopt_dev from now on */
				t->mult_est = (uint64_t)r;
				hist_reset(t, NULL, s); /* the history restarts after the change: prev..s may span a suspend */
				t->rate_suspect = 0;
				t->cand_mult = 0;
				return 0;
			}
			t->cand_mult = (uint64_t)r; /* prev came after a break: this pair's rate is a candidate */
			t->cand_noise = (uint64_t)noise;
		} else {
			t->cand_mult = 0;
		}
	} else {
		t->cand_mult = 0;
	}
	/* Counter jumped, stopped or went back relative to the kernel: suspend/resume, migration. */
	hist_reset(t, NULL, s);
	t->rate_suspect = 1;
	return 0;
}

/* Step 2: the wall offset. */
static void update_offset(struct fc_track *t, const struct fc_sample *s)
{
	if (t->have_off && s->off_hi >= t->off_lo && s->off_lo <= t->off_hi) {
		if (s->off_lo > t->off_lo)
			t->off_lo = s->off_lo;
		if (s->off_hi < t->off_hi)
			t->off_hi = s->off_hi;
		return;
	}
	if (t->have_off)
		t->real_steps++; /* settimeofday, a leap second, clock_settime: follow the kernel */
	t->off_lo = s->off_lo;
	t->off_hi = s->off_hi;
	t->have_off = 1;
}

/* The largest value a reader can have obtained from `old`, which has expired (or whose counter is now behind
 * its anchor). Readers use a hand only for deltas below valid_ticks, and only at counter values the counter
 * took while they ran. If the counter may have run through the whole window while the machine ran, that is
 * the hand's value at the end of its window. But when it advanced far more than the kernel's clock did (a
 * suspend during which the counter kept running, a VM migration that moved it forward) or went back, the
 * kernel's elapsed time bounds the part readers can have seen. The hand's own error bound says a reader at
 * delta x got old(x) <= kernel + mono_err + x * err_mult, and the kernel was at most K_hi (now, upper bound):
 * with old(x) = old(0) + x * mult, x <= (K_hi - (old(0) - mono_err)) / (mult - err_mult). That bound holds
 * while the kernel's rate is the one the hand was made for (err_mult less its kernel_swing() allowance,
 * `swing`); REACH_TOL_DIV more covers an NTP frequency change since. Using the hand's slope, not the
 * tracker's rate, matters: a hand correcting an error runs up to 1/16 off the rate, and with a rate resting
 * on a short baseline the rate itself is off by more than the tolerance (both found by tests/fuzz,
 * fuzz_track). A forward jump J that leaves the counter past the
 * window whatever the instant it happened (J > valid even after crediting the reach) cannot have landed
 * inside the window. Without this the first read after a suspend could be up to P + P/8 ahead of the
 * kernel. */
static i128 expired_floor(const struct fc_hand *old, uint64_t swing, i128 K_hi, uint64_t od, i128 end_val)
{
	const i128 at_anchor_lo = fx(old->mono_ns) + (i128)old->frac - fx(old->mono_err_ns);
	const i128 slope = (i128)old->mult - ((i128)old->err_mult - (i128)swing) - (i128)(old->mult / REACH_TOL_DIV);
	const int behind = od > (old->mask >> 1);
	i128 e = K_hi - at_anchor_lo, reach;

	if (slope <= 0)
		return end_val; /* a bound as wide as the slope says nothing about the reach */
	if (e < 0)
		e = 0;
	reach = e / slope + 1;
	if (reach >= (i128)old->valid_ticks)
		return end_val;
	if (!behind && (i128)od - reach <= (i128)old->valid_ticks)
		return end_val; /* a jump of less than the window may have landed inside it */
	return fc__track_value_fx(old, old->base_ticks + (uint64_t)reach);
}

/* The allowance for an unseen kernel rate change, 32.32 ns per tick: KERNEL_SWING_PPM (or KERNEL_SWING_PLL_PPM
 * while the tick is known nominal over the rate's window) of the kernel's nominal rate, bounded from the measured
 * one (NOMINAL_MARGIN_DIV). */
static uint64_t kernel_swing(const struct fc_track *t, uint64_t mult)
{
	/* The rate is the mean over the window from hist[0] (the history is never empty here), and the change the
	 * allowance covers is from any rate in that window to the rate until the next re-anchor. The tick is known
	 * over the window when the reads show one value from a read before its start (strictly: a read is taken
	 * after its re-anchor's sample) through one inside it; a move away and back between two reads that no read
	 * sees is outside the contract. Reads older than the window (adjtimex read less often than the window is
	 * long) say nothing about it: unknown, as a tick that could not be read. */
	const int64_t w0 = t->hist[0].mono;
	const int known = t->tick_us != 0 && t->tick_since < w0 && t->tick_at >= w0;
	i128 nom = known ? (i128)mult * FC_NTP_TICK_NOMINAL_US / t->tick_us : (i128)mult * 10 / 9;
	nom += nom / NOMINAL_MARGIN_DIV + 1;
	return (uint64_t)(nom * (known && !t->tick_moved ? KERNEL_SWING_PLL_PPM : KERNEL_SWING_PPM) / 1000000 + 1);
}

void fc__track_note_ntp(struct fc_track *t, const struct fc_ntp *ntp, int64_t at)
{
	if (at < t->tick_at)
		return; /* older than a read already noted */
	if (ntp->tick_us != t->tick_us || t->tick_at == INT64_MIN)
		t->tick_since = at;
	t->tick_us = ntp->tick_us;
	t->tick_at = at;
	if (ntp->tick_us != 0 && ntp->tick_us != FC_NTP_TICK_NOMINAL_US)
		t->tick_moved = 1; /* for good */
}

/* The sample as the tracker uses it: a bracket much wider than the narrowest seen is widened by twice the extra
 * (COARSE_WIDE_MUL): the kernel's value may lie a clocksource step below its line, a step shorter than the
 * extra read time. */
static struct fc_sample coarse_widen(struct fc_track *t, const struct fc_sample *s)
{
	struct fc_sample w = *s;
	if (s->c_half < t->best_half)
		t->best_half = s->c_half;
	else if (s->c_half > COARSE_WIDE_MUL * t->best_half + COARSE_WIDE_ADD)
		w.c_half += COARSE_WIDE_MUL * (s->c_half - t->best_half);
	return w;
}

/* Uncertainty of mult_est, fx ns per tick: how far the kernel's rate may be from it over the next period.
 *  - the estimate's own noise: the end samples' half brackets over the baseline (~5 ppm over 8 periods);
 *  - a rate change the 8-sample average has not caught up with (an NTP slew started a few periods ago),
 *    seen as the rate over the newest 1 or 3 periods differing from the estimate by more than its noise;
 *  - a floor of RATE_FLOOR_DIV; RATE_UNCONFIRMED_DIV while fewer than two samples back the estimate, plus
 *    the size of the last break if it looked like a rate change (chrony's fast slew, a migration). */
static i128 rate_uncertainty(const struct fc_track *t)
{
	const i128 mult = (i128)t->mult_est;
	i128 u = mult / RATE_FLOOR_DIV + 1, dev = 0;
	const struct fc_sample *a, *n;
	int64_t dc;

	/* An unconfirmed rate is also no closer to the truth than to the rate known at start-up (the counter's rate
	 * is fixed by its hardware: RATE_HINT_DIV): an estimate carried through breaks that measured nothing (time
	 * standing still in the simulation, 27 re-anchors in a row) was 7.3 % off where its noise said 5.0 %, and the
	 * bound failed (fuzz_track, finding F6 in docs/JOURNAL.md). Next to the hint, as after a real suspend,
	 * this adds the estimate's distance from it: ppm. */
	const i128 from_hint = t->mult_hint ? i128_abs(mult - (i128)t->mult_hint) : 0;
	if (t->nhist < 2) /* unconfirmed; after a break that looked like a rate change, at least its size; and the
			   * noise of the samples the estimate came from (a short baseline, or a pair adopted as a new
			   * rate, can be off by more than the continuity tolerance) */
		return u + mult / RATE_UNCONFIRMED_DIV + (i128)t->break_dev + (i128)t->adopt_dev + (i128)t->est_noise +
		       from_hint;
	a = &t->hist[0];
	n = &t->hist[t->nhist - 1];
	dc = sdelta(n->c_mid, a->c_mid, t->mask);
	if (dc <= 0)
		return u + mult / RATE_UNCONFIRMED_DIV + (i128)t->adopt_dev + (i128)t->est_noise + from_hint;
	u += pair_noise(a, n, dc, mult);
	/* Steps inside the baseline that the continuity test let pass (a kernel step against the counter smaller
	 * than a pair's tolerance: a small pvclock or TSC adjustment, a tiny suspend in the simulation) bias the
	 * mean by their size over the baseline, and the newest periods' check cannot see it while their brackets
	 * are wide against a period. fuzz_track (CI, finding F5 in docs/JOURNAL.md): a 215 ns step in a
	 * baseline of 3044 ticks left the estimate 2.6 % off while this bound said 1.8 %, and a counter jump
	 * later let time go back 761 ns. Every step seen (a residual the brackets do not explain) counts, and
	 * the largest one the brackets could hide: ~1 bracket over >= 1 ms in steady state (~0.03 ppm). */
	{
		uint64_t seen = 0, hidden = 0;
		for (unsigned i = 1; i < t->nhist; i++) {
			if (t->hist_seen[i])
				seen = sat_add(seen, t->hist_step[i]);
			else if (t->hist_step[i] > hidden)
				hidden = t->hist_step[i];
		}
		u += fx((int64_t)sat_add(seen, hidden)) / dc;
	}
	/* A rate change the average has not caught up with: the rate over the newest 1 and 3 periods, where it
	 * differs from the estimate by more than its own noise, bounds the current rate (that rate +- its
	 * noise). Below its noise it is indistinguishable from steady state and adds nothing. */
	for (unsigned back = 1; back <= 3; back += 2) {
		if (t->nhist <= back + 1) /* the newest `back` periods must not be the whole baseline */
			break;
		const struct fc_sample *p = &t->hist[t->nhist - 1 - back];
		const int64_t ds = sdelta(n->c_mid, p->c_mid, t->mask);
		if (ds > 0) {
			i128 r = fx(n->mono - p->mono) / ds;
			i128 noise = pair_noise(p, n, ds, mult);
			if (i128_abs(r - mult) > noise && i128_abs(r - mult) + noise > dev)
				dev = i128_abs(r - mult) + noise;
		}
	}
	u += dev;
	/* A rate adopted after breaks (a migration to a host whose counter runs at another rate) may as well be a
	 * suspend followed by a jump (fuzz_track with FUZZ_DISC_SPACING=1: a pair 5.8 % off claimed 2 ppm): the
	 * size of the change counts until samples taken since confirm it (update_rate clears adopt_dev). No
	 * break_dev here: a break leaves a one-sample history, so with two or more it is 0. */
	u += (i128)t->adopt_dev;
	return u;
}

void fc__track_update(struct fc_track *t, const struct fc_hand *old, const struct fc_sample *s_in,
		     uint64_t t_anchor, struct fc_hand *out)
{
	const uint64_t P = t->period_ticks;
	const struct fc_sample sw = coarse_widen(t, s_in), *s = &sw;
	int poor = (i128)s->c_half * t->mult_est > fx(POOR_BRACKET_NS);
	int suspended = 0, continuous;
	i128 K, K_lo, half, V, end_val = 0, target, m;
	uint64_t rem = 0;
	int in_valid = 0, old_err_ok = 0;

	/* A suspend: CLOCK_BOOTTIME - CLOCK_MONOTONIC grew since the last sample (only a suspend moves it). The
	 * counter may have run through it while CLOCK_MONOTONIC stood still, so readers of the hand then in use got
	 * values ahead of the kernel by up to its window (P + P/8): a discontinuity that the rate history must not
	 * average (the pair spans the suspend), and the hands hold back (slopes down to 0, `hold`) until the kernel
	 * has caught up, instead of slewing at 1/16 (12 s at P = 1 s). A counter jump without it (a migration) is
	 * judged by the rate alone. */
	if (s->boot_lo <= s->boot_hi) {
		suspended = t->have_boot && s->boot_lo > t->boot_hi;
		t->boot_hi = s->boot_hi;
		t->have_boot = 1;
	}
	if (suspended) {
		hist_reset(t, NULL, s);
		t->rate_suspect = 0; /* explained: not a rate change */
		t->cand_mult = 0;
		t->break_dev = 0;
		t->hold = 1;
		t->suspends++;
		continuous = 0;
	} else {
		continuous = update_rate(t, s, poor);
	}
	const uint64_t mult = t->mult_est;

	update_offset(t, s);

	/* Step 3: the anchor value. */
	K = kernel_at(s, t_anchor, mult, t->mask);
	/* Uncertainty of K: half the bracket, plus 1 ns for the kernel's own rounding to whole ns. */
	/* + 1 tick: a bracket of w ticks spans up to w + 1 ticks of time (a read happens anywhere within the tick it
	 * returns); negligible at GHz, a microsecond with a 1 MHz counter (tests/sim counter_1mhz). */
	half = (i128)(s->c_half + 1) * mult + FX_ONE;
	K_lo = K - half;
	if (old == NULL || (old->flags & FC_HAND_KERNEL)) {
		/* Leaving the kernel backend: start at the kernel's upper bound, so a kernel read another thread
		 * made just before is not ahead of us; the slope removes the half bracket within P. */
		V = K + half;
		if (old && V < fx(old->floor_ns))
			V = fx(old->floor_ns);
	} else {
		uint64_t od = (t_anchor - old->base_ticks) & old->mask;
		end_val = fc__track_value_fx(old, old->base_ticks + old->valid_ticks);
		if (od < old->valid_ticks) {
			in_valid = 1;
			rem = old->valid_ticks - od;
			V = fc__track_value_fx(old, t_anchor); /* continuity */
			t->last_err_ns = fx_floor(V - K);
			/* The old hand's line was within its own bound of the kernel's here (the sample's half bracket
			 * allowed for): its bound is honest again, whatever the size of the error. */
			old_err_ok = i128_abs(V - K) + half <=
				     fx(old->mono_err_ns) + (i128)((unsigned __int128)od * old->err_mult);
			if (V < K_lo)
				V = K_lo; /* behind the kernel: step forward (the slope removes the rest) */
		} else {
			/* Expired or behind: start no lower than anything the old hand returned, and otherwise at the
			 * kernel's value, so a reader after a long sleep or a suspend gets the kernel's time. */
			const uint64_t swing = old->err_mult >= t->swing_mult ? t->swing_mult : 0;
			V = expired_floor(old, swing, K + half, od, end_val);
			if (V < K)
				V = K;
		}
	}
	if (!continuous)
		t->discontinuities++;
	if (!continuous)
		t->disrupted = 1;

	/* Step 4: the slope that meets the kernel one period from now. */
	target = kernel_at(s, t_anchor + P, mult, t->mask);
	m = poor ? (i128)mult : (target - V) / (i128)P;
	/* After a suspend the hands may be ahead by up to a window: hold (down to a slope of 0) rather than slew. */
	if (!t->hold && m < (i128)mult - (i128)(mult / SLEW_DIV))
		m = (i128)mult - (i128)(mult / SLEW_DIV);
	if (m > (i128)mult + (i128)(mult / SLEW_DIV))
		m = (i128)mult + (i128)(mult / SLEW_DIV);
	if (m < 1)
		m = 1;

	/* Dominance: readers may still use the old hand up to the end of its validity, so the new line must
	 * not pass below the old one there: V + rem * m >= old(end). When a re-anchor comes early (forced, or
	 * the updater thread racing a reader), rem is long and a slower slope would need a large bump; keep
	 * the old slope instead, and let the next on-time re-anchor correct. */
	if (in_valid) {
		if (rem > P / 2 && m < (i128)old->mult && !t->hold)
			m = old->mult;
		i128 need = end_val - (i128)rem * m;
		if (V < need)
			V = need;
	}

	/* Disrupted from a discontinuity until (1) the rate history has refilled (FC_TRACK_HIST samples since the
	 * break: a second rate change soon after a first was otherwise judged against a 1-2 period mean, not the
	 * 8-period one the bound's allowance is measured from; 1.6x the bound) and (2) the error at a re-anchor is
	 * back within RECONVERGED_NS, or within what the old hand's own bound promised there. Judged by samples,
	 * not by reads: a hand that expired before the re-anchor (readers less often than every P + P/8, no
	 * updater) is judged at the end of its window, where its last readers can have been. */
	if (continuous && t->disrupted && !t->hold && t->since_break >= FC_TRACK_HIST && old && !(old->flags & FC_HAND_KERNEL)) {
		const i128 e_new = i128_abs(V - K);
		if (!in_valid) /* its line at the end of its window, against the kernel's there at the rate */
			old_err_ok = i128_abs(end_val - kernel_at(s, old->base_ticks + old->valid_ticks, mult, t->mask)) +
					     half <=
				     fx(old->mono_err_ns) + (i128)((unsigned __int128)old->valid_ticks * old->err_mult);
		if (e_new < fx(RECONVERGED_NS) || old_err_ok)
			t->disrupted = 0;
	}
	if (t->hold && V - K < fx(RECONVERGED_NS))
		t->hold = 0; /* the kernel has caught up */

	if (continuous && !t->disrupted && in_valid) {
		int64_t a = t->last_err_ns < 0 ? -t->last_err_ns : t->last_err_ns;
		if (a > t->max_abs_err_ns)
			t->max_abs_err_ns = a;
	}

	*out = (struct fc_hand){0};
	out->flags = 0;
	out->base_ticks = t_anchor & t->mask;
	out->mask = t->mask;
	out->mult = (uint64_t)m;
	out->mono_ns = fx_floor(V);
	out->frac = (uint64_t)(V - fx(out->mono_ns));
	out->real_off_ns = t->off_lo + (t->off_hi - t->off_lo) / 2;
	out->stale_ticks = P;
	out->valid_ticks = t->valid_ticks;
	/* Error bound. Against the kernel's estimate K + mult x d, the hand is off by e(d) = (V - K) + (m - mult) d,
	 * known exactly, to which the estimate's uncertainty adds half + u x d (u: rate_uncertainty). |e(d)| is
	 * convex, so over the window [0, valid] it lies under its chord: |e(0)| + d (|e(valid)| - |e(0)|) / valid.
	 * In steady state the slope steers e towards 0, the chord falls, and only u x d remains. */
	{
		const i128 e0 = V - K, e_end = e0 + (m - (i128)mult) * (i128)t->valid_ticks;
		i128 chord = (i128_abs(e_end) - i128_abs(e0)) / (i128)t->valid_ticks;
		if (chord < 0)
			chord = 0;
		/* The rate's uncertainty, and how far the kernel may move it before the next re-anchor sees it. */
		const uint64_t swing = kernel_swing(t, mult);
		const i128 u = rate_uncertainty(t) + (i128)swing;
		t->swing_mult = swing; /* for expired_floor, when this hand has expired */
		/* K was extrapolated from the sample to the anchor (past the wall-offset reads): at rate u. */
		const i128 reach = i128_abs((i128)sdelta(t_anchor, s->c_mid, t->mask)) * u;
		/* Readers add real_off_ns, the middle of [off_lo, off_hi]: the true offset is within half that
		 * interval (rounded up) plus 1 ns for the kernel's whole-ns reads. fc_real_bounded uses the same
		 * bound as fc_mono_bounded (the hand has one bound), so it is carried here, for both: half a
		 * monotonic-realtime-monotonic bracket, ~26 ns (every sample brackets the same calls, so the
		 * intersection does not shrink much below one), half a disturbed bracket (a preempted realtime read)
		 * until a better sample comes. */
		const int64_t off_half = (t->off_hi - t->off_lo + 1) / 2 + 1;
		/* + mult: a reader's counter value is whole ticks, so its read lies up to one tick after the instant
		 * the hand's line gives; + 1: readers floor to whole ns. */
		out->mono_err_ns = fx_floor(i128_abs(e0) + half + reach + (i128)mult) + 1 + off_half;
		out->err_mult = (uint64_t)(chord + u + 1);
	}
}

int fc__track_sync(const struct fc_track *t, const struct fc_hand *h, const struct fc_ntp *ntp)
{
	if (t->disrupted)
		return FC_SYNC_DISRUPTED;
	if (ntp->status & (STA_INS | STA_DEL)) {
		/* A leap second is pending (adjtimex STA_INS / STA_DEL): the kernel steps CLOCK_REALTIME back 1 s at
		 * the next UTC midnight (insertion), or forward 1 s at 23:59:59 (deletion), which no sample before
		 * it can see. A hand whose window reaches within FC_LEAP_WINDOW_NS of the next midnight is not
		 * SYNCHRONIZED: that covers the step, the repeated second after an insertion (a hand anchored in
		 * it sees midnight again within 1 s), and a step the kernel applies a tick late. */
		const int64_t real = h->mono_ns + h->real_off_ns;
		const int64_t window = (int64_t)(((unsigned __int128)h->valid_ticks * h->mult) >> 32);
		int64_t to_midnight = FC_DAY_NS - real % FC_DAY_NS;
		if (to_midnight > FC_DAY_NS)
			to_midnight -= FC_DAY_NS; /* real < 0: a clock set before 1970 */
		if (to_midnight <= window + FC_LEAP_WINDOW_NS)
			return FC_SYNC_DISRUPTED;
		/* Anchored within FC_LEAP_WINDOW_NS after a midnight: the kernel applies the leap at its first tick
		 * past the second boundary (a tick or more late: 4 ms at HZ = 250, later on an idle NOHZ CPU), so
		 * a hand anchored between midnight and that tick is 1 s off once it comes. */
		if (FC_DAY_NS - to_midnight < FC_LEAP_WINDOW_NS)
			return FC_SYNC_DISRUPTED;
	}
	return ntp->sync;
}
