// The writer side of the publication protocol, single-threaded: ring order, generations, wrap.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <string>

#include "hands.h"

extern "C" struct fc_hands *fc_test_hands_static(void); // hands_static.c

namespace {

// A hand's bytes with its ring link replaced by the linked hand's index, so two rings compare by value.
std::string image(const fc_hands &h, const fc_hand &x)
{
	fc_hand c = x;
	const uintptr_t idx = x.next ? (uintptr_t)(x.next - h.ring) : UINTPTR_MAX;
	c.next = nullptr;
	std::string s(reinterpret_cast<const char *>(&c), sizeof(c));
	s.append(reinterpret_cast<const char *>(&idx), sizeof(idx));
	return s;
}

fc_hand params(int64_t mono)
{
	fc_hand p{};
	p.mask = ~0ull;
	p.mult = 1ull << 32;
	p.stale_ticks = 1000;
	p.valid_ticks = 1125;
	p.mono_ns = mono;
	return p;
}

uint64_t g_ticks;
uint64_t fake_counter() { return g_ticks; }
// The inline readers' hooks: unmasked, as the hardware counters' (fc__hand_ticks_ordered), and masked.
uint64_t fake_ticks(const fc_hand *th) { return fake_counter() - FC__LOAD(th->base_ticks); }
uint64_t fake_ticks_masked(const fc_hand *th) { return fc__hand_ticks_masked(th, fake_counter()); }

// The global clock starts with FC__HANDS_STATIC's hands and its first call skips fc__hands_init (src/start.c):
// the two must leave the same hands, field by field and link by link, whatever the memory held before.
TEST(Hands, FC__HANDS_STATIC_is_what_fc__hands_init_makes)
{
	static fc_hands h;
	static fc_pub pub;
	// the ring whatever it held (fc__hands_init clears it); the boot hand as static storage starts, zero (its
	// fields are stored one by one, never cleared: readers may be loading it)
	std::memset(static_cast<void *>(h.ring), 0xa5, sizeof(h.ring));
	fc__hands_init(&h, &pub, 0);
	const fc_hands &s = *fc_test_hands_static();
	for (unsigned i = 0; i < FC_HANDS; i++)
		EXPECT_EQ(image(h, h.ring[i]), image(s, s.ring[i])) << "ring hand " << i;
	EXPECT_EQ(image(h, h.boot), image(s, s.boot)) << "boot hand";
	EXPECT_EQ(pub.current, &h.boot);
	EXPECT_EQ(pub.coarse_mono, 0);
	EXPECT_EQ(pub.coarse_real_off, 0);
}

TEST(Hands, boot_hand_sends_readers_to_the_slow_path)
{
	static fc_hands h;
	static fc_pub pub;
	fc__hands_init(&h, &pub, 0);
	int64_t m;
	EXPECT_EQ(fc__hand_read_ns(&pub, fake_ticks_masked, FC__MONO, &m), 0);
}

TEST(Hands, publish_cycles_through_the_ring_and_readers_see_the_newest)
{
	static fc_hands h;
	static fc_pub pub;
	fc__hands_init(&h, &pub, 0);
	std::set<const fc_hand *> seen;
	for (int i = 0; i < 3 * FC_HANDS; i++) {
		fc_hand p = params(1000 * i);
		p.base_ticks = 100 * i;
		const fc_hand *th = fc__hands_publish(&pub, &p);
		seen.insert(th);
		EXPECT_EQ(pub.current, th);
		g_ticks = 100 * i + 7;
		int64_t m;
		ASSERT_EQ(fc__hand_read_ns(&pub, fake_ticks_masked, FC__MONO, &m), 1);
		EXPECT_EQ(m, 1000 * i + 7);
	}
	EXPECT_EQ(seen.size(), (size_t)FC_HANDS);
}

TEST(Hands, generation_wraps_past_zero_without_ever_publishing_zero)
{
	static fc_hands h;
	static fc_pub pub;
	fc__hands_init(&h, &pub, UINT32_MAX - 2);
	uint32_t last[FC_HANDS] = {};
	for (unsigned i = 0; i < FC_HANDS; i++)
		last[i] = UINT32_MAX - 2;
	for (int i = 0; i < 6 * FC_HANDS; i++) {
		fc_hand p = params(i);
		fc_hand *th = fc__hands_publish(&pub, &p);
		unsigned idx = (unsigned)(th - h.ring);
		ASSERT_NE(th->gen, 0u) << "published generation 0 at step " << i;
		EXPECT_NE(th->gen, last[idx]) << "generation unchanged on reuse";
		last[idx] = th->gen;
		g_ticks = 5;
		int64_t m;
		ASSERT_EQ(fc__hand_read_ns(&pub, fake_ticks_masked, FC__MONO, &m), 1);
		EXPECT_EQ(m, i + 5);
	}
}

TEST(Hands, reader_takes_slow_path_when_stale_or_behind)
{
	static fc_hands h;
	static fc_pub pub;
	fc__hands_init(&h, &pub, 0);
	fc_hand p = params(0);
	p.base_ticks = 10000;
	fc__hands_publish(&pub, &p);
	int64_t m;
	g_ticks = 10000 + 999;
	EXPECT_EQ(fc__hand_read_ns(&pub, fake_ticks_masked, FC__MONO, &m), 1);
	g_ticks = 10000 + 1000; // stale
	EXPECT_EQ(fc__hand_read_ns(&pub, fake_ticks_masked, FC__MONO, &m), 0);
	g_ticks = 10000 - 1; // behind the anchor: huge unsigned delta
	EXPECT_EQ(fc__hand_read_ns(&pub, fake_ticks_masked, FC__MONO, &m), 0);
}

// The drop-ins' timespec reads (fc__hand_read_ts) give the instant the ns reads give, split as the kernel splits a
// timespec (nsec in [0, 10^9), seconds rounded towards -infinity): without a carry, with one and two carries,
// before 1970, and where mono + real_off no longer fits an int64 of ns (a timespec still holds it). Both
// forms: masked (narrow counters) and the hardware readers' unmasked one; and the timeval form.
TEST(Hands, timespec_reads_split_the_same_instant_at_every_carry_sign_and_extreme)
{
	static fc_hands h;
	static fc_pub pub;
	struct Case {
		int64_t mono, off;
		uint64_t delta;
	} cases[] = {
		{5000000000ll - 10, 1700000000ll * 1000000000ll, 5},       // 8 ns on: no carry
		{5000000000ll - 10, 1700000000ll * 1000000000ll, 7},       // 11 ns on: carries (5 s + 1 ns)
		{5000000000ll - 10, 0, 1400000000ull},                      // 2.1 s on: two carries
		{999999999, -3000000001ll, 0},                               // before 1970: -2.000000002 s
		{999999999, -3000000001ll, 1},                               // 2 ns on: -2 s exactly
		{1, -2, 0},                                                   // -1 ns: -1 s + 999999999
		{INT64_MAX - 5, 100, 1000},                                   // real past INT64_MAX ns
		{INT64_MIN + 5, -100, 3},                                     // real below INT64_MIN ns
		{7, 1700000000ll * 1000000000ll + 999999990, 4500000000ull},   // delta * mult >= 2^64: the long division
	};
	for (const Case &c : cases) {
		fc__hands_init(&h, &pub, 0);
		fc_hand p = params(c.mono);
		p.real_off_ns = c.off;
		p.mult = 3ull << 31;          // 1.5 ns per tick,
		p.frac = 0xc0000000u;         // and the anchor's 0.75 ns: odd deltas round up one more ns
		p.stale_ticks = 5000000000ull; // deltas up to 7.5 s are served
		p.base_ticks = 777;
		fc__hands_publish(&pub, &p);
		g_ticks = 777 + c.delta;
		const __int128 want_mono = (__int128)c.mono + (((__int128)c.delta * p.mult + p.frac) >> 32),
			       want_real = want_mono + c.off;
		for (fc__hand_ticks_fn ticks : {fake_ticks, fake_ticks_masked}) {
			int64_t s = 0, ns = 0;
			SCOPED_TRACE(testing::Message() << "mono " << c.mono << " off " << c.off << " delta " << c.delta
							<< " masked " << (ticks == fake_ticks_masked));
			ASSERT_EQ(fc__hand_read_ts(&pub, ticks, FC__MONO, &s, &ns), 1);
			EXPECT_GE(ns, 0);
			EXPECT_LT(ns, 1000000000);
			EXPECT_TRUE((__int128)s * 1000000000 + ns == want_mono) << s << "." << ns;
			ASSERT_EQ(fc__hand_read_ts(&pub, ticks, FC__REAL, &s, &ns), 1);
			EXPECT_GE(ns, 0);
			EXPECT_LT(ns, 1000000000);
			EXPECT_TRUE((__int128)s * 1000000000 + ns == want_real) << s << "." << ns;
			if (want_mono <= INT64_MAX && want_mono >= INT64_MIN) {
				int64_t m = 0;
				ASSERT_EQ(fc__hand_read_ns(&pub, ticks, FC__MONO, &m), 1);
				EXPECT_TRUE(m == want_mono);
			}
			// The timeval form: the same instant in microseconds, floor(real / 1000) split alike.
			ASSERT_EQ(fc__hand_read_tv(&pub, ticks, &s, &ns), 1);
			EXPECT_GE(ns, 0);
			EXPECT_LT(ns, 1000000);
			__int128 want_us = want_real / 1000;
			if (want_real < 0 && want_us * 1000 != want_real)
				want_us--; // floor
			EXPECT_TRUE((__int128)s * 1000000 + ns == want_us) << s << "." << ns;
			if (want_real <= INT64_MAX && want_real >= INT64_MIN) {
				int64_t r = 0;
				ASSERT_EQ(fc__hand_read_ns(&pub, ticks, FC__REAL, &r), 1);
				EXPECT_TRUE(r == want_real) << r;
			}
		}
	}
}

// The unmasked (hardware) form takes the same slow paths as the masked one for a 64-bit counter: stale, and
// behind the anchor (a wrapped unsigned delta).
TEST(Hands, unmasked_reader_sends_stale_and_behind_to_the_slow_path)
{
	static fc_hands h;
	static fc_pub pub;
	fc__hands_init(&h, &pub, 0);
	fc_hand p = params(0);
	p.base_ticks = 10000;
	fc__hands_publish(&pub, &p);
	int64_t m = 0, s = 0, ns = 0;
	g_ticks = 10000 + 999;
	EXPECT_EQ(fc__hand_read_ns(&pub, fake_ticks, FC__MONO, &m), 1);
	EXPECT_EQ(fc__hand_read_ts(&pub, fake_ticks, FC__REAL, &s, &ns), 1);
	for (uint64_t t : {10000ull + 1000, 10000ull - 1, 0ull}) {
		g_ticks = t;
		EXPECT_EQ(fc__hand_read_ns(&pub, fake_ticks, FC__MONO, &m), 0) << t;
		EXPECT_EQ(fc__hand_read_ts(&pub, fake_ticks, FC__MONO, &s, &ns), 0) << t;
	}
}

} // namespace
