// The tracker and the slow path over a simple simulated machine (tests/sim has the fault scenarios).
// Machine: a 3 GHz counter; the kernel's CLOCK_MONOTONIC = true time scaled by an NTP rate (ppm) from a
// switch point on; CLOCK_REALTIME = MONOTONIC + a wall offset. Every counter read costs 10 ns, every kernel
// read 25 ns of true time.
#include <gtest/gtest.h>

#include <cstdint>

#include "internal.h"

namespace {

struct Machine {
	long double t = 1e9;          // true time, ns
	long double k_base = 1e9;     // kernel mono at t_switch
	long double t_switch = 1e9;
	long double ppm = 0;          // kernel rate offset after t_switch
	int64_t wall_off = 1700000000ll * 1000000000ll;

	long double kernel_mono() const { return k_base + (t - t_switch) * (1 + ppm * 1e-6L); }
	void set_ppm(long double p)
	{
		k_base = kernel_mono();
		t_switch = t;
		ppm = p;
	}
} M;

uint64_t sim_counter() { M.t += 10; return (uint64_t)(M.t * 3); }
uint64_t sim_counter_ctx(void *) { return sim_counter(); }
int sim_kernel(void *, clockid_t id, int64_t *ns)
{
	M.t += 25;
	*ns = (int64_t)M.kernel_mono() + (id == CLOCK_REALTIME ? M.wall_off : 0);
	return 0;
}

fc_clock C;
fc_pub PUB;

void setup(uint64_t hz_hint)
{
	M = Machine{};
	fc_source src{sim_counter_ctx, sim_kernel, nullptr, nullptr, ~0ull};
	C = fc_clock{};
	ASSERT_EQ(fc__clock_setup(&C, &PUB, &src, 1000000, hz_hint, 0), 0);
}

// fc_mono_ns over the simulated machine: the same two steps as include/fastclock.h.
int64_t sim_mono()
{
	int64_t m, off;
	if (fc__hand_read(&PUB, sim_counter, &m, &off, nullptr))
		return m;
	return fc__clock_slow(&C, FC__MONO);
}

// Reads every `gap` ns for `dur` ns; returns max |fastclock - kernel| and counts backward steps.
int64_t run(long double dur, long double gap, int64_t *last, int *back, long double skip_first = 0)
{
	long double end = M.t + dur;
	int64_t worst = 0;
	while (M.t < end) {
		int64_t v = sim_mono();
		long double k = M.kernel_mono();
		if (v < *last)
			(*back)++;
		*last = v;
		int64_t e = (int64_t)(v - k);
		if (e < 0)
			e = -e;
		if (M.t > end - dur + skip_first && e > worst)
			worst = e;
		M.t += gap;
	}
	return worst;
}

TEST(Track, converges_from_a_rough_frequency_hint_and_stays_within_a_bracket)
{
	setup(3000000000ull + 3000000ull); // hint 1000 ppm off
	int64_t last = INT64_MIN;
	int back = 0;
	run(20e6, 1000, &last, &back);                  // 20 ms to converge
	int64_t steady = run(100e6, 1000, &last, &back); // then 100 ms
	EXPECT_EQ(back, 0);
	EXPECT_LE(steady, 40) << "steady-state error vs kernel";
	EXPECT_EQ(C.track.discontinuities, 0u);
}

TEST(Track, follows_an_ntp_slew_of_500ppm_without_going_back)
{
	setup(3000000000ull);
	int64_t last = INT64_MIN;
	int back = 0;
	run(20e6, 1000, &last, &back);
	// Each change is one of 500 ppm, the kernel's largest NTP slew (adjtimex(2)): a change of D costs at most
	// about D x P before the next re-anchor sees it (500 ns at P = 1 ms), then the rate estimate catches up.
	for (long double ppm : {500.0L, 0.0L, -500.0L, 0.0L}) {
		M.set_ppm(ppm);
		int64_t during = run(10e6, 1000, &last, &back);
		int64_t after = run(50e6, 1000, &last, &back);
		EXPECT_LE(during, 1000) << "error during the first 10 ms of a " << (double)ppm << " ppm slew";
		EXPECT_LE(after, 40) << "error after re-converging on a " << (double)ppm << " ppm slew";
	}
	EXPECT_EQ(back, 0);
}

TEST(Track, forced_early_reanchors_never_step_back)
{
	setup(3000000000ull);
	int64_t last = INT64_MIN;
	int back = 0;
	M.set_ppm(-300); // the kernel runs slow: each re-anchor wants a slower slope
	for (int i = 0; i < 20000; i++) {
		if (i % 3 == 0)
			fc__clock_windup(&C, nullptr); // re-anchor long before the hand is stale
		int64_t v = sim_mono();
		if (v < last)
			back++;
		last = v;
		M.t += 200;
	}
	EXPECT_EQ(back, 0);
}

TEST(Track, reader_after_an_hour_gets_the_kernel_time_not_a_stale_or_extrapolated_one)
{
	setup(3000000000ull);
	int64_t last = INT64_MIN;
	int back = 0;
	run(10e6, 1000, &last, &back);
	M.set_ppm(100); // the kernel's rate changed while nobody read
	M.t += 3600e9;
	int64_t v = sim_mono();
	EXPECT_LE(std::abs((long double)v - M.kernel_mono()), 1000.0L);
	EXPECT_GE(v, last);
}

TEST(Track, wall_offset_is_pinned_and_a_step_is_followed_within_one_period)
{
	setup(3000000000ull);
	int64_t last = INT64_MIN;
	int back = 0;
	run(10e6, 1000, &last, &back);
	int64_t m, off;
	ASSERT_EQ(fc__hand_read(&PUB, sim_counter, &m, &off, nullptr), 1);
	EXPECT_NEAR((double)off, (double)M.wall_off, 2.0);
	M.wall_off -= 3600ll * 1000000000ll; // settimeofday one hour back
	run(1.2e6, 1000, &last, &back);        // one period (+ the expiry slack)
	ASSERT_EQ(fc__hand_read(&PUB, sim_counter, &m, &off, nullptr), 1);
	EXPECT_NEAR((double)off, (double)M.wall_off, 2.0);
	EXPECT_EQ(C.track.real_steps, 1u);
	EXPECT_EQ(back, 0) << "the monotonic clock must not move with the wall clock";
}

TEST(Track, bound_contains_the_true_error_in_steady_state)
{
	setup(3000000000ull);
	int64_t last = INT64_MIN;
	int back = 0;
	run(20e6, 1000, &last, &back);
	int misses = 0;
	for (int i = 0; i < 100000; i++) {
		int64_t m, off;
		fc__bound b;
		if (!fc__hand_read(&PUB, sim_counter, &m, &off, &b)) {
			fc__clock_slow(&C, FC__MONO);
			continue;
		}
		long double k = M.kernel_mono();
		if (m - b.track_err_ns > k + 1 || m + b.track_err_ns < k - 1)
			misses++;
		M.t += 1000;
	}
	EXPECT_EQ(misses, 0);
}

} // namespace
