/*
 * fuzz_scale: the ticks -> ns arithmetic, bit-exact against a 32-bit-limb reference (bigref.h).
 *   1. fc__scale(delta, mult, frac) = (delta * mult + frac) >> 32, truncated to 64 bits, for any operands;
 *   2. fc__hand_read_bounded() over a hand with arbitrary stale, base, mask, mult, frac, mono, offset and error
 *      fields at an arbitrary counter value: the slow-path decisions (kernel hand, delta >= stale) and the
 *      returned mono and error bound; the other read forms' real, timespec and timeval values;
 *   3. fc__track_value_fx() (the writer's value of a hand, track.c) at an arbitrary counter value, including
 *      the clamps to the anchor and to valid_ticks; and, where both apply, that the reader's result is
 *      exactly floor(fc__track_value_fx() / 2^32): readers compute what the writer computes;
 *   4. fc__hand_read_real_bounded() over the same hand against an arbitrary kernel wall value: 1 only where
 *      fc__hand_read_bounded() (real) says 1 and the wall value is at most value + error, exactly (no wrap);
 *      0 where the bounded read said 1 and the wall value is past that sum (a forward step the hand missed).
 * Domain: results that do not fit the library's types (an int64 nanosecond value, an __int128 fixed-point
 * value) cannot come from a hand the tracker publishes (a hand covers at most valid_ticks ~ 1.1 periods);
 * they are skipped, not compared. Any mismatch aborts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigref.h"
#include "hands.h"
#include "track.h"

static uint64_t g_counter;
static uint64_t fuzz_counter(void) { return g_counter; }
static uint64_t fuzz_ticks(const struct fc_hand *th) { return fc__hand_ticks_masked(th, fuzz_counter()); }

static int64_t g_wall;
static int64_t fuzz_wall(void) { return g_wall; }

static uint64_t take(const uint8_t **p, size_t *n)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++) {
		v = (v << 8) | (*n ? **p : 0);
		if (*n) {
			(*p)++;
			(*n)--;
		}
	}
	return v;
}

#define CHECK(cond, ...)                                                                                       \
	do {                                                                                                   \
		if (!(cond)) {                                                                                 \
			fprintf(stderr, "fuzz_scale: %s: ", #cond);                                            \
			fprintf(stderr, __VA_ARGS__);                                                          \
			fputc('\n', stderr);                                                                   \
			abort();                                                                               \
		}                                                                                              \
	} while (0)

/* (a * b + c) >> 32, the low 64 bits: the reference for fc__scale */
static uint64_t ref_scale(uint64_t a, uint64_t b, uint64_t c)
{
	return bn_low64(bn_sar32(bn_add(bn_mul_u64(a, b), bn_u64(c)))); /* non-negative: sar is a plain shift */
}

/* v + ((a * b + c) >> 32) where that is exact in int64 (the reader's int64 result), else 0: outside the
 * domain of a published hand */
static int ref_value(int64_t v, uint64_t a, uint64_t b, uint64_t c, int64_t *out)
{
	bn s = bn_sar32(bn_add(bn_mul_u64(a, b), bn_u64(c))), sum;
	if (!bn_fits_signed(s, 64))
		return 0;
	sum = bn_add(bn_i64(v), s);
	if (!bn_fits_signed(sum, 64))
		return 0;
	*out = (int64_t)bn_low64(sum);
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data;
	size_t n = size;
	struct fc_hand h;
	struct fc_pub pub;
	struct fc__bound b;
	uint64_t delta, mult, frac, t;
	int64_t m = 0, want_m = 0, want_err = 0;
	int rc, in_domain;

	/* 1: the bare scale */
	delta = take(&p, &n);
	mult = take(&p, &n);
	frac = take(&p, &n);
	CHECK(fc__scale(delta, mult, frac) == ref_scale(delta, mult, frac), "delta %llu mult %llu frac %llu",
	      (unsigned long long)delta, (unsigned long long)mult, (unsigned long long)frac);

	/* 2: a hand read at counter t */
	memset(&h, 0, sizeof(h));
	h.gen = 1;
	h.mult = mult;
	h.frac = frac;
	h.stale_ticks = take(&p, &n);
	h.base_ticks = take(&p, &n);
	h.mask = take(&p, &n);
	h.mono_ns = (int64_t)take(&p, &n);
	h.real_off_ns = (int64_t)take(&p, &n);
	h.valid_ticks = take(&p, &n);
	h.mono_err_ns = (int64_t)take(&p, &n);
	h.err_mult = take(&p, &n);
	h.utc_err_ns = (int64_t)take(&p, &n);
	h.sync_status = (int32_t)take(&p, &n);
	t = take(&p, &n);
	/* short inputs: derive a plausible hand from what there is, so small seeds reach the arithmetic */
	if (h.mask == 0)
		h.mask = ~(uint64_t)0;
	if (h.stale_ticks == 0 && size < 64)
		h.stale_ticks = ~(uint64_t)0;
	pub.current = &h;
	pub.coarse_mono = 0;
	pub.coarse_real_off = 0;
	g_counter = t;

	delta = (t - h.base_ticks) & h.mask;
	in_domain = h.stale_ticks == 0 || delta >= h.stale_ticks ||
		    (ref_value(h.mono_ns, delta, h.mult, h.frac, &want_m) &&
		     ref_value(h.mono_err_ns, delta, h.err_mult, 0, &want_err));
	if (in_domain) {
		rc = fc__hand_read_bounded(&pub, fuzz_ticks, 0, &m, &b);
		if (h.stale_ticks == 0 || delta >= h.stale_ticks) {
			CHECK(rc == 0, "stale %llu delta %llu", (unsigned long long)h.stale_ticks,
			      (unsigned long long)delta);
		} else {
			CHECK(rc == 1, "stale %llu delta %llu", (unsigned long long)h.stale_ticks,
			      (unsigned long long)delta);
			CHECK(m == want_m, "mono %lld want %lld", (long long)m, (long long)want_m);
			CHECK(b.track_err_ns == want_err, "err %lld want %lld", (long long)b.track_err_ns,
			      (long long)want_err);
			CHECK(b.utc_err_ns == h.utc_err_ns && b.sync_status == h.sync_status, "bound fields");
		}
	}

	/* 2b: the drop-ins' timespec and timeval reads of the same hand (anchors split as fc__hands_publish splits
	 * them): the same instant exactly, as seconds + nanoseconds in [0, 10^9) (microseconds in [0, 10^6),
	 * rounded down), and the realtime ones even where mono + real_off leaves int64 (a timespec holds it).
	 * Real hands have frac < 2^32 and a scaled delta below about a period; the remainders are unsigned 64-bit
	 * sums, exact for any scaled delta below 2^64 - 10^9. */
	if (in_domain && h.stale_ticks && delta < h.stale_ticks && h.frac < ((uint64_t)1 << 32) &&
	    fc__scale(delta, h.mult, h.frac) <= UINT64_MAX - 1000000000u) {
		const __int128 want_real = (__int128)want_m + h.real_off_ns;
		__int128 want_us = want_real / 1000;
		int64_t s, ns, s2, ns2;
		if (want_real < 0 && want_us * 1000 != want_real)
			want_us--;
		fc__hand_anchors(&h);
		if (want_real >= INT64_MIN && want_real <= INT64_MAX) {
			CHECK(fc__hand_read_ns(&pub, fuzz_ticks, 1, &s) == 1 &&
				      s == (int64_t)want_real,
			      "real %lld want mono %lld + off %lld", (long long)s, (long long)want_m, (long long)h.real_off_ns);
		}
		CHECK(fc__hand_read_ts(&pub, fuzz_ticks, 0, &s, &ns) == 1, "ts mono rc");
		CHECK(ns >= 0 && ns < 1000000000 && (__int128)s * 1000000000 + ns == (__int128)want_m,
		      "ts mono %lld.%09lld want %lld", (long long)s, (long long)ns, (long long)want_m);
		CHECK(fc__hand_read_ts(&pub, fuzz_ticks, 1, &s2, &ns2) == 1, "ts real rc");
		CHECK(ns2 >= 0 && ns2 < 1000000000 && (__int128)s2 * 1000000000 + ns2 == want_real,
		      "ts real %lld.%09lld want mono %lld + off %lld", (long long)s2, (long long)ns2, (long long)want_m,
		      (long long)h.real_off_ns);
		CHECK(fc__hand_read_tv(&pub, fuzz_ticks, &s2, &ns2) == 1, "tv rc");
		CHECK(ns2 >= 0 && ns2 < 1000000 && (__int128)s2 * 1000000 + ns2 == want_us,
		      "tv real %lld.%06lld want mono %lld + off %lld", (long long)s2, (long long)ns2, (long long)want_m,
		      (long long)h.real_off_ns);
	}

	/* 4: the bounded real read's wall check, at an arbitrary wall value (after the hand's own fields) */
	g_wall = (int64_t)take(&p, &n);
	{
		int64_t v1 = 0, v2 = 0;
		struct fc__bound b1, b2;
		if (in_domain) { /* outside it the read's own arithmetic may leave int64 (2) */
			const int r1 = fc__hand_read_bounded(&pub, fuzz_ticks, 1, &v1, &b1);
			const int r2 = fc__hand_read_real_bounded(&pub, fuzz_ticks, fuzz_wall, &v2, &b2);
			const __int128 top = (__int128)v1 + b1.track_err_ns;
			CHECK(!r2 || (r1 && (__int128)g_wall <= top), "passed: wall %lld value %lld err %lld",
			      (long long)g_wall, (long long)v1, (long long)b1.track_err_ns);
			/* a real hand's error is never negative, and its value + error far below INT64_MAX: where either
			 * fails the read may refuse (the slow path) */
			CHECK(!r1 || r2 || (__int128)g_wall > top || b1.track_err_ns < 0 || top > INT64_MAX, "refused: wall %lld value %lld err %lld",
			      (long long)g_wall, (long long)v1, (long long)b1.track_err_ns);
		}
	}

	/* 3: the writer's value of the hand at t, clamped as readers clamp */
	{
		uint64_t d = (t - h.base_ticks) & h.mask, lo, hi;
		bn want;
		if (d > (h.mask >> 1))
			d = 0;
		else if (d > h.valid_ticks)
			d = h.valid_ticks;
		want = bn_add(bn_add(bn_shl32(bn_i64(h.mono_ns)), bn_u64(h.frac)), bn_mul_u64(d, h.mult));
		if (bn_fits_signed(want, 128)) {
			__int128 got = fc__track_value_fx(&h, t);
			bn_low128(want, &lo, &hi);
			CHECK((uint64_t)got == lo && (uint64_t)((unsigned __int128)got >> 64) == hi,
			      "fc__track_value_fx at d %llu", (unsigned long long)d);
			/* the reader at the same count, where it does not clamp: floor(value / 2^32) exactly */
			if (in_domain && h.stale_ticks && delta < h.stale_ticks && delta <= (h.mask >> 1) &&
			    delta <= h.valid_ticks) {
				bn fl = bn_sar32(want);
				CHECK(bn_fits_signed(fl, 64) && (int64_t)bn_low64(fl) == m,
				      "reader %lld differs from the writer's value", (long long)m);
			}
		}
	}
	return 0;
}
