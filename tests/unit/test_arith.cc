// The read path's arithmetic, (delta * mult + frac) >> 32 in 128 bits, against a reference that shares no
// code with it: schoolbook multiplication on 32-bit limbs.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "track.h"

namespace {

// (a * b + c) >> 32, truncated to 64 bits, with 32-bit limbs only.
uint64_t reference_scale(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t al = a & 0xffffffffu, ah = a >> 32, bl = b & 0xffffffffu, bh = b >> 32;
	uint64_t limb[4] = {0, 0, 0, 0}; // 128-bit result, little-endian 32-bit limbs
	auto add = [&](int at, uint64_t v) {
		for (int i = at; i < 4 && v; i++) {
			uint64_t s = limb[i] + (v & 0xffffffffu);
			limb[i] = s & 0xffffffffu;
			v = (v >> 32) + (s >> 32);
		}
	};
	add(0, al * bl);
	add(1, al * bh);
	add(1, ah * bl);
	add(2, ah * bh);
	add(0, c);
	return limb[1] | (limb[2] << 32);
}

TEST(Arith, scale_matches_limb_reference_on_edge_values)
{
	const uint64_t edges[] = {0, 1, 2, 0xffffffffu, 0x100000000ull, 0x7fffffffffffffffull, 0x8000000000000000ull,
				  ~0ull, ~0ull - 1, 1000000000ull, 3000000000ull, 0x123456789abcdefull};
	for (uint64_t d : edges)
		for (uint64_t m : edges)
			for (uint64_t f : {0ull, 1ull, 0xffffffffull})
				ASSERT_EQ(fc__scale(d, m, f), reference_scale(d, m, f)) << d << " " << m << " " << f;
}

TEST(Arith, scale_matches_limb_reference_on_random_values)
{
	std::mt19937_64 rng(42);
	for (int i = 0; i < 2000000; i++) {
		uint64_t d = rng() >> (rng() % 64), m = rng() >> (rng() % 64), f = rng() & 0xffffffffu;
		ASSERT_EQ(fc__scale(d, m, f), reference_scale(d, m, f)) << d << " " << m << " " << f;
	}
}

TEST(Arith, hour_long_delta_at_3ghz_is_exact_to_the_ns)
{
	// A reader an hour after the anchor: 3600 s of a 3 GHz counter. mult = 1/3 ns per tick in 32.32.
	uint64_t mult = (uint64_t)(((unsigned __int128)1000000000ull << 32) / 3000000000ull);
	uint64_t d = 3600ull * 3000000000ull;
	uint64_t ns = fc__scale(d, mult, 0);
	// mult is rounded down by < 1 unit of 2^-32 ns per tick: the shortfall is < d / 2^32 ns = 2.5 us.
	EXPECT_LE(ns, 3600000000000ull);
	EXPECT_GE(ns, 3600000000000ull - d / 4294967296ull - 1);
}

TEST(Arith, hand_value_fx_matches_reader_arithmetic)
{
	std::mt19937_64 rng(7);
	for (int i = 0; i < 200000; i++) {
		fc_hand h{};
		h.mask = (i % 3 == 0) ? 0xffffffffull : ~0ull;
		h.base_ticks = rng() & h.mask;
		h.mult = (rng() >> 20) | 1;
		h.frac = rng() & 0xffffffffu;
		h.mono_ns = (int64_t)(rng() >> 2) - (int64_t)(1ll << 60);
		h.valid_ticks = rng() >> 24;
		uint64_t lim = h.valid_ticks < (h.mask >> 1) ? h.valid_ticks : (h.mask >> 1);
		uint64_t d = rng() % (lim + 1);
		uint64_t t = (h.base_ticks + d) & h.mask;
		__int128 fx = fc__track_value_fx(&h, t);
		int64_t reader = h.mono_ns + (int64_t)fc__scale(d, h.mult, h.frac);
		ASSERT_EQ((int64_t)(fx >> 32), reader);
	}
}

TEST(Arith, narrow_counter_delta_wraps_modulo_mask)
{
	fc_hand h{};
	h.mask = 0xffffffffull;
	h.base_ticks = 0xfffffff0ull;
	h.mult = 1ull << 32; // 1 ns per tick
	h.valid_ticks = 1000;
	// 0x20 ticks later the 32-bit counter has wrapped to 0x10.
	EXPECT_EQ((int64_t)(fc__track_value_fx(&h, 0x10) >> 32), 0x20);
}

} // namespace
