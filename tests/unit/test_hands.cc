// The writer side of the publication protocol, single-threaded: ring order, generations, wrap.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>

#include "internal.h"

namespace {

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

TEST(Hands, boot_hand_sends_readers_to_the_slow_path)
{
	static fc_hands h;
	static fc_pub pub;
	fc__hands_init(&h, &pub, 0);
	int64_t m, off;
	EXPECT_EQ(fc__hand_read(&pub, fake_counter, &m, &off, nullptr), 0);
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
		int64_t m, off;
		ASSERT_EQ(fc__hand_read(&pub, fake_counter, &m, &off, nullptr), 1);
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
		int64_t m, off;
		ASSERT_EQ(fc__hand_read(&pub, fake_counter, &m, &off, nullptr), 1);
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
	int64_t m, off;
	g_ticks = 10000 + 999;
	EXPECT_EQ(fc__hand_read(&pub, fake_counter, &m, &off, nullptr), 1);
	g_ticks = 10000 + 1000; // stale
	EXPECT_EQ(fc__hand_read(&pub, fake_counter, &m, &off, nullptr), 0);
	g_ticks = 10000 - 1; // behind the anchor: huge unsigned delta
	EXPECT_EQ(fc__hand_read(&pub, fake_counter, &m, &off, nullptr), 0);
}

} // namespace
