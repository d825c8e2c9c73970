/*
 * fastclock — capture now, convert later (floor 4: public entry points): fc_ticks_to_mono_ns and
 * fc_ticks_to_real_ns convert a raw fc_ticks() capture with the hand that was current when it was taken.
 *
 * Rules, so a conversion is as exact as a read taken at the capture:
 *  - a capture inside a counter hand's window [base, base + valid) converts with the newest such hand: the
 *    very value a reader would have computed then, unless it was taken while that hand was being made (after
 *    its sample, before its publication: readers then used the previous hand, which the new one continues at
 *    or above, track.c);
 *  - a capture past the current hand's stale point means no reader has re-anchored since (a program that
 *    only captures and converts): re-anchor first, as a reader would, then convert;
 *  - a capture in no window (older than the ring, or between an expired hand and the next) converts with
 *    the hand anchored nearest to it, forwards or backwards, so the extrapolation is as short as possible;
 *  - a capture taken while the start-up measures the rate (before the first counter hand) converts between
 *    the start-up's first sample and a fresh one, or, once the first counter hand is out, as any other;
 *  - a capture taken before the start-up's trust step is CLOCK_MONOTONIC ns, told by its value (start.c,
 *    "early captures");
 *  - on the kernel backend a capture is CLOCK_MONOTONIC ns: mono is the capture itself, real adds the
 *    kernel's REALTIME - MONOTONIC offset now (bracketed), so wall-clock steps are followed.
 * Owns: the search of the ring for a capture's hand. May call: state.c, windup.c, start.c, init.c, sample.c.
 */
#include <errno.h>

#include "section.h"
#include "init.h"
#include "sample.h"
#include "start.h"
#include "state.h"
#include "windup.h"

/* CLOCK_REALTIME - CLOCK_MONOTONIC now: the realtime read between two monotonic reads, best of 2. */
static int64_t kernel_offset(const struct fc_clock *c)
{
	struct fc_offset o;
	(void)fc__sample_offset(&c->src, 2, FC_KERNEL_TRIES, &o); /* as fc__kernel_ns: a failed read counts as 0 */
	return fc__offset_mid(&o);
}

/* A capture past every hand's window when no re-anchor can run now (a signal handler on the thread that holds
 * the writer lock, or another thread re-anchoring): convert against a fresh bracketed sample, with the
 * current hand's slope over the short way back from the sample to the capture. Extrapolating the old hand
 * instead carries its steering slope (up to 1/16 off the rate) over the whole gap: 20 us at a 1 us period. */
#define FRESH_BRACKET_NS 2000 /* as track.c's POOR_BRACKET_NS: ~50x an idle core's bracket */
static int64_t convert_fresh(const struct fc_clock *c, uint64_t ticks, uint64_t mult, int how)
{
	struct fc_sample s;
	uint64_t d;
	__int128 sd, v;
	/* A sample preempted inside its bracket places the kernel's read anywhere in it: take another (a few
	 * tries) until the bracket is within FRESH_BRACKET_NS. */
	for (int i = 0;; i++) {
		if (fc__sample_take(&c->src, FC_SAMPLE_TRIES, &s) != 0)
			return fc__kernel_ns(c, (how & FC__REAL) ? CLOCK_REALTIME : CLOCK_MONOTONIC);
		if ((int64_t)fc__scale(s.c_half, mult, 0) <= FRESH_BRACKET_NS / 2 || i == 7)
			break;
	}
	d = (ticks - s.c_mid) & c->src.mask;
	sd = d > (c->src.mask >> 1) ? -(__int128)((c->src.mask - d) + 1) : (__int128)d;
	v = (__int128)s.mono * ((__int128)1 << 32) + sd * (__int128)mult;
	return (int64_t)(v >> 32) + ((how & FC__REAL) ? s.off_lo + (s.off_hi - s.off_lo) / 2 : 0);
}

static int64_t convert(struct fc_clock *c, uint64_t ticks, int how)
{
	int reanchored = 0;
	for (;;) {
		/* A capture of the start-up first (start.c), then the current hand */
		int64_t sv = 0;
		const int st = fc__start_convert(c, ticks, how, &sv);
		const struct fc_hand *cur = __atomic_load_n(&c->pub->current, __ATOMIC_ACQUIRE);
		const struct fc_hand *th, *best = cur, *h = cur;
		uint64_t best_dist = UINT64_MAX;
		struct fc_hand cp; /* the chosen hand, copied under the protocol */
		uint32_t gen;
		uint64_t mult, d;
		__int128 v, sd;

		if (st == FC_START_CONV_DONE) /* a counter capture (fc__start_capture_unit), no counter hand yet */
			return sv;
		/* kernel ns: taken before the trust step (start.c), or on the kernel backend */
		if (st == FC_START_CONV_KERNEL || (FC__LOAD(cur->flags) & FC_HAND_KERNEL))
			return (int64_t)ticks + ((how & FC__REAL) ? kernel_offset(c) : 0);
		d = (ticks - FC__LOAD(cur->base_ticks)) & FC__LOAD(cur->mask);
		/* a probe hand (updater.c) is fresh within its window: its stale point only sends reads to read.c */
		if (d >= ((FC__LOAD(cur->flags) & FC_HAND_PROBE) ? FC__LOAD(cur->valid_ticks) : FC__LOAD(cur->stale_ticks)) &&
		    d <= (FC__LOAD(cur->mask) >> 1)) {
			if (!reanchored && !fc__in_writer) {
				reanchored = 1;
				if (fc__windup(c, cur))
					continue;
			}
			if (d >= FC__LOAD(cur->valid_ticks)) {
				const uint64_t rl = __atomic_load_n(&c->rate_long, __ATOMIC_RELAXED);
				return convert_fresh(c, ticks, rl ? rl : FC__LOAD(cur->mult), how);
			}
		}
		/* Newest first: the first hand whose window holds the capture; else the nearest anchor. */
		th = NULL;
		for (unsigned k = 0; k < FC_HANDS - 1; k++) {
			const struct fc_hand *prev;
			uint64_t b = FC__LOAD(h->base_ticks), m = FC__LOAD(h->mask), dd = (ticks - b) & m;
			uint64_t dist = dd <= (m >> 1) ? dd : m - dd + 1;
			if (dd <= (m >> 1) && dd < FC__LOAD(h->valid_ticks)) {
				th = h;
				break;
			}
			if (dist < best_dist) {
				best_dist = dist;
				best = h;
			}
			prev = (h == &c->hands.ring[0]) ? &c->hands.ring[FC_HANDS - 1] : h - 1;
			if (prev == cur->next || __atomic_load_n(&prev->gen, __ATOMIC_ACQUIRE) == 0 ||
			    (FC__LOAD(prev->flags) & FC_HAND_KERNEL))
				break; /* the next to be recycled, being written, or not a counter hand */
			h = prev;
		}
		int far = 0;
		if (th == NULL) {
			th = best;
			far = 1; /* extrapolated: with the long-baseline rate, not the hand's steering slope */
		}
		/* The reader protocol (fc_hand.h) on the chosen hand: R2..R4, not R5 (it need not be current). */
		gen = fc__hand_begin(th);
		fc__hand_copy(th, &cp);
		if (fc__hand_changed(th, gen) || (FC__LOAD(th->flags) & FC_HAND_KERNEL))
			continue;
		d = (ticks - cp.base_ticks) & cp.mask;
		sd = d > (cp.mask >> 1) ? -(__int128)((cp.mask - d) + 1) : (__int128)d;
		mult = cp.mult;
		if (far && __atomic_load_n(&c->rate_long, __ATOMIC_RELAXED))
			mult = __atomic_load_n(&c->rate_long, __ATOMIC_RELAXED);
		v = (__int128)cp.mono_ns * ((__int128)1 << 32) + (__int128)cp.frac + sd * (__int128)mult;
		return (int64_t)(v >> 32) + ((how & FC__REAL) ? cp.real_off_ns : 0);
	}
}

FC__START_TEXT static int64_t ticks_to_ns(uint64_t ticks, int how)
{
	struct fc_clock *c = fc__global_clock();
	const int saved = errno;
	int64_t v;
	if (!fc__ensure_init()) /* a signal handler during its own thread's initialisation: kernel ns */
		v = (int64_t)ticks + ((how & FC__REAL) ? kernel_offset(c) : 0);
	else
		v = convert(c, ticks, how);
	errno = saved;
	return v;
}

FC__START_TEXT int64_t fc_ticks_to_mono_ns(uint64_t ticks) { return ticks_to_ns(ticks, FC__MONO); }
FC__START_TEXT int64_t fc_ticks_to_real_ns(uint64_t ticks) { return ticks_to_ns(ticks, FC__REAL); }
