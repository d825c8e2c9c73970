// The tracker and the slow path over a simple simulated machine (tests/sim has the fault scenarios).
// Machine: a 3 GHz counter; the kernel's CLOCK_MONOTONIC = true time scaled by an NTP rate (ppm) from a
// switch point on; CLOCK_REALTIME = MONOTONIC + a wall offset. Every counter read costs 10 ns, every kernel
// read 25 ns of true time.
#include <gtest/gtest.h>

#include <sys/timex.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ntp.h"
#include "read.h"
#include "sample.h"
#include "start.h"
#include "state.h"
#include "track.h"
#include "windup.h"

namespace {

struct Machine {
	long double t = 1e9;          // true time, ns
	long double k_base = 1e9;     // kernel mono at t_switch
	long double t_switch = 1e9;
	long double ppm = 0;          // kernel rate offset after t_switch
	int64_t wall_off = 1700000000ll * 1000000000ll;
	long double ticks_per_ns = 3; // the counter's rate (a 3 GHz counter)
	long double ctr_off = 0;      // ticks added to the counter (a jump: negative goes back)

	long double kernel_mono() const { return k_base + (t - t_switch) * (1 + ppm * 1e-6L); }
	void set_ppm(long double p)
	{
		k_base = kernel_mono();
		t_switch = t;
		ppm = p;
	}
} M;

// A wall step armed for the first counter read after the re-anchor count passes step_after (once): between a
// reader's own re-anchor and its next look at the hand.
uint64_t step_after = UINT64_MAX;
int64_t step_by = 0;
fc_clock C;
uint64_t sim_counter()
{
	if (step_after != UINT64_MAX && C.reanchors > step_after) {
		M.wall_off += step_by;
		step_after = UINT64_MAX;
	}
	M.t += 10;
	return (uint64_t)(M.t * M.ticks_per_ns + M.ctr_off);
}
uint64_t sim_counter_ctx(void *) { return sim_counter(); }
uint64_t sim_ticks(const fc_hand *th) { return fc__hand_ticks_masked(th, sim_counter()); }
int sim_kernel(void *, clockid_t id, int64_t *ns)
{
	M.t += 25;
	*ns = (int64_t)M.kernel_mono() + (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE ? M.wall_off : 0);
	return 0;
}

fc_pub PUB;
uint64_t g_hint; // the counter's nominal rate as the source gives it (CPUID's figure on a real machine)
uint64_t sim_hint(void *) { return g_hint; }

// The shipped start-up (start.c) over the machine: a kernel hand, then the slow path's steps (no trust check:
// trust_every 0), the rate measured over 1 ms of simulated time and checked against the hint.
void start_clock(const fc_source &src, int64_t period_ns, uint64_t hz_hint)
{
	g_hint = hz_hint;
	C = fc_clock{};
	fc__start_clock(&C, &PUB, &src, period_ns, 0);
	for (int i = 0; i < 100000 && !fc__start_done(&C); i++) {
		M.t += 1000;
		fc__read_slow_ns(&C, FC__MONO);
	}
	ASSERT_TRUE(fc__start_done(&C));
	ASSERT_EQ(C.backend, FC_BACKEND_COUNTER) << C.reason;
}

void setup(uint64_t hz_hint)
{
	M = Machine{};
	start_clock(fc_source{sim_counter_ctx, sim_kernel, nullptr, nullptr, ~0ull, sim_hint}, 1000000, hz_hint);
}

// fc_mono_ns over the simulated machine: the same two steps as include/fastclock.h.
int64_t sim_mono()
{
	int64_t m;
	if (fc__hand_read_ns(&PUB, sim_ticks, FC__MONO, &m))
		return m;
	return fc__read_slow_ns(&C, FC__MONO);
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
	setup(3000000000ull + 3000000ull); // hint 1000 ppm off: inside 1/64, the start-up keeps its 1 ms measurement
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
			fc__windup(&C, nullptr); // re-anchor long before the hand is stale
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
	ASSERT_EQ(fc__hand_read_ns(&PUB, sim_ticks, FC__MONO, &m), 1);
	off = PUB.current->real_off_ns;
	EXPECT_NEAR((double)off, (double)M.wall_off, 2.0);
	M.wall_off -= 3600ll * 1000000000ll; // settimeofday one hour back
	run(1.2e6, 1000, &last, &back);        // one period (+ the expiry slack)
	ASSERT_EQ(fc__hand_read_ns(&PUB, sim_ticks, FC__MONO, &m), 1);
	off = PUB.current->real_off_ns;
	EXPECT_NEAR((double)off, (double)M.wall_off, 2.0);
	EXPECT_EQ(C.track.real_steps, 1u);
	EXPECT_EQ(back, 0) << "the monotonic clock must not move with the wall clock";
}

// What a counter that jumps back does (docs/API.md "When a clock jumps back", the header's "Going back"): landing
// at or past its hand's anchor, a read returns the hand's earlier value there (as the vDSO does); behind the
// anchor by less than valid_ticks/64, the anchor's value; further behind, the reader re-anchors and the clock
// resumes at or above every value returned before the jump (src/read.c SKEW_CLAMP_DIV, src/track.c expired_floor).
TEST(Track, a_counter_jumping_back_goes_back_only_inside_its_hand)
{
	setup(3000000000ull);
	int64_t last = INT64_MIN;
	int back = 0;
	run(20e6, 1000, &last, &back);
	ASSERT_EQ(back, 0);
	const fc_hand *h = __atomic_load_n(&PUB.current, __ATOMIC_ACQUIRE);
	const uint64_t base = h->base_ticks, valid = h->valid_ticks;
	const int64_t anchor = h->mono_ns;
	const uint64_t reanchors = C.reanchors;
	// 1. Inside the hand: move the counter to 1000 ticks past the anchor; the value is the hand's there.
	const long double now_ticks = M.t * M.ticks_per_ns + M.ctr_off;
	ASSERT_GT(now_ticks - (long double)base, 2000.0L) << "the hand is too young for this test";
	M.ctr_off -= now_ticks - (long double)(base + 1000);
	int64_t v1 = sim_mono();
	EXPECT_LT(v1, last) << "a jump back inside the hand returns an earlier value";
	EXPECT_GE(v1, anchor);
	EXPECT_LE(v1, anchor + 1000);
	// 2. Behind the anchor by less than valid/64: the anchor's value, no re-anchor.
	M.ctr_off -= 1000 + (long double)(valid / 128);
	EXPECT_EQ(sim_mono(), anchor);
	EXPECT_EQ(C.reanchors, reanchors);
	// 3. Further behind: a re-anchor, and nothing below the values returned before the jump.
	M.ctr_off -= (long double)valid;
	int64_t v3 = sim_mono();
	EXPECT_GT(C.reanchors, reanchors);
	EXPECT_GE(v3, last) << "after a re-anchor the clock resumes at or above every value returned";
	last = v3;
	back = 0;
	run(5e6, 1000, &last, &back);
	EXPECT_EQ(back, 0);
}

TEST(Track, bound_contains_the_true_error_in_steady_state)
{
	setup(3000000000ull);
	int64_t last = INT64_MIN;
	int back = 0;
	run(20e6, 1000, &last, &back);
	int misses = 0;
	for (int i = 0; i < 100000; i++) {
		int64_t m;
		fc__bound b;
		if (!fc__hand_read_bounded(&PUB, sim_ticks, FC__MONO, &m, &b)) {
			fc__read_slow_ns(&C, FC__MONO);
			continue;
		}
		long double k = M.kernel_mono();
		if (m - b.track_err_ns > k + 1 || m + b.track_err_ns < k - 1)
			misses++;
		M.t += 1000;
	}
	EXPECT_EQ(misses, 0);
}

// ---- the UTC bound over the whole of a value's life, at every period the library accepts -----------------------
// The kernel's NTP state says "maxerror as of this read", and the kernel grows maxerror by 500 ppm from there
// (MAXFREQ): that is the claim a bounded read's UTC half-width must cover at the read's own instant.
constexpr int64_t NTP_MAXERROR = 50000;
long double ntp_read_at = -1; // the kernel's CLOCK_MONOTONIC at the NTP hook's last report
long double ntp_stall = 0;    // the writer is preempted this long right after that report (once)
int sim_ntp(void *, fc_ntp *out)
{
	*out = fc_ntp{FC_SYNC_SYNCHRONIZED, 0, NTP_MAXERROR, 20000, 10000, 0};
	ntp_read_at = M.kernel_mono();
	M.t += ntp_stall;
	ntp_stall = 0;
	return out->sync;
}
// The claim at the kernel's CLOCK_MONOTONIC k (whole ns, rounded down as the library rounds its growth).
int64_t ntp_claim(long double k) { return NTP_MAXERROR + (int64_t)((k - ntp_read_at) / 2000); }

const int64_t PERIODS[] = {1000, 2000, 50000, 1000000, 100000000, 1000000000}; // 1 us .. 1 s (src/config.h)

// A clock at period_ns over M with the NTP hook, run for 12 readers (every 1.05 P, each past the last one's hand
// but within its window: a re-anchor each) so the rate history is full.
void setup_ntp(int64_t period_ns, long double ticks_per_ns)
{
	M = Machine{};
	M.ticks_per_ns = ticks_per_ns;
	ntp_read_at = -1;
	ntp_stall = 0;
	start_clock(fc_source{sim_counter_ctx, sim_kernel, sim_ntp, nullptr, ~0ull, sim_hint}, period_ns,
		    (uint64_t)(ticks_per_ns * 1e9L));
	const long double gap = std::max(1.05L * (long double)period_ns, 1.05L * 8 / ticks_per_ns);
	for (int i = 0; i < 12; i++) {
		M.t += gap;
		fc__read_slow_ns(&C, FC__MONO);
	}
}

class PeriodPromise : public ::testing::TestWithParam<int64_t> {};
INSTANTIATE_TEST_SUITE_P(Periods, PeriodPromise, ::testing::ValuesIn(PERIODS));

// A reader whose own re-anchor outlasts the new hand's window (preempted after the writer's NTP read: at a 1 us
// period a re-anchor alone takes about that long) reads the kernel's clock past the hand (read.c,
// kernel_past_hand): its UTC half-width must be the source's at that read, not the hand's, which was stamped for
// the end of the hand's life and is smaller by the growth since (it was, by 50 ns to 0.5 ms here).
TEST_P(PeriodPromise, a_read_past_its_own_reanchors_window_gets_the_bound_of_its_time)
{
	const int64_t P = GetParam();
	setup_ntp(P, 3);
	M.t += 1.2L * (long double)P + 200000; // the hand is stale and the NTP state is re-read at the next re-anchor
	ntp_stall = 1.5L * (long double)(P + P / 8) + 200000;
	fc__bound b;
	fc__read_slow(&C, FC__REAL, &b);
	const long double k = M.kernel_mono();
	ASSERT_EQ(ntp_stall, 0) << "the read re-anchored, and the writer was preempted after its NTP read";
	ASSERT_EQ(b.sync_status, FC_SYNC_SYNCHRONIZED);
	EXPECT_GE(b.utc_err_ns, ntp_claim(k - 1000)) << "period " << P;
}

// A bounded real read that re-anchors (its hand expired) and then finds its new hand: a settimeofday forward
// between that hand's sample and the read's counter read is past the hand. The read checks the kernel's coarse
// wall clock after its own re-anchor too (read.c): it never answers SYNCHRONIZED a second off.
TEST_P(PeriodPromise, a_wall_step_right_after_the_readers_own_reanchor_is_seen)
{
	const int64_t P = GetParam();
	setup_ntp(P, 3);
	M.t += 1.2L * (long double)P + 200000; // the hand is stale: this read re-anchors
	step_after = C.reanchors;
	step_by = 1000000000; // 1 s forward, far past a tick
	fc__bound b;
	const int64_t v = fc__read_slow(&C, FC__REAL, &b);
	const long double truth = M.kernel_mono() + (long double)M.wall_off;
	ASSERT_EQ(step_after, UINT64_MAX) << "the step came";
	if (b.sync_status == FC_SYNC_SYNCHRONIZED || b.sync_status == FC_SYNC_FREE_RUNNING) {
		EXPECT_GE((long double)v + (long double)b.track_err_ns + 1000, truth)
			<< "period " << P << ": a read " << (double)((truth - (long double)v) / 1e9L) << " s behind, status "
			<< b.sync_status;
	}
}

// A hand's UTC half-width is stamped for the end of its life (windup.c): that life is the hand's window, however
// many ns it spans. On a counter slower than 8 MHz the window is at least 8 ticks (track.c: 8 us on a 1 MHz
// counter at a 1 us period), not the period and an eighth: a read near its end was missing the source's growth
// since (3.5 ns at 7 us).
TEST_P(PeriodPromise, a_hands_bound_covers_its_whole_window)
{
	const int64_t P = GetParam();
	for (long double tpn : {3.0L, 0.001L}) { // a 3 GHz and a 1 MHz counter
		setup_ntp(P, tpn);
		M.t += 1.2L * (long double)P + 200000 + 8 / tpn; // the next read re-anchors and re-reads the NTP state
		fc__read_slow_ns(&C, FC__MONO);
		const fc_hand *h = PUB.current;
		ASSERT_FALSE(h->flags & FC_HAND_KERNEL);
		// the last counter value the fast path serves from this hand, less one counter read's cost
		M.t = ((long double)(h->base_ticks + h->stale_ticks - 1) / tpn) - 10;
		int64_t m;
		fc__bound b;
		ASSERT_TRUE(fc__hand_read_bounded(&PUB, sim_ticks, FC__REAL, &m, &b)) << tpn;
		ASSERT_EQ(PUB.current, h);
		ASSERT_NE(b.sync_status, FC_SYNC_DISRUPTED) << tpn;
		EXPECT_GE(b.utc_err_ns, ntp_claim(M.kernel_mono())) << "period " << P << ", counter " << tpn * 1e9L << " Hz";
	}
}

// The clocksource is re-checked every 1024 re-anchors and at least once a second of the kernel's time, at every
// period: at 1 s, 1024 re-anchors were 17 minutes (docs/DESIGN.md promises ~1 s), a switch to jiffies unseen for
// that long. Re-anchors here come every 1.05 P (for at most 3000 of them or 3.5 s of simulated time); the checks read
// this machine's clocksource, whatever it says (forced: a failed check does not leave the counter).
TEST_P(PeriodPromise, the_clocksource_is_rechecked_at_least_once_a_second_and_no_more_often_than_every_1024_reanchors)
{
	const int64_t P = GetParam();
	setup_ntp(P, 3);
	C.trust_every = 1024;
	C.forced = 1;
	const long double t0 = M.kernel_mono();
	const uint64_t r0 = C.reanchors, c0 = C.trust_checks;
	while (C.reanchors - r0 < 3000 && M.kernel_mono() - t0 < 3.5e9L) {
		M.t += 1.05L * (long double)P;
		fc__read_slow_ns(&C, FC__MONO);
	}
	const uint64_t reanchors = C.reanchors - r0, checks = C.trust_checks - c0;
	const uint64_t seconds = (uint64_t)((M.kernel_mono() - t0) / 1e9L);
	EXPECT_GE(checks, std::max<uint64_t>(reanchors / 1024, seconds) - 1) << reanchors << " re-anchors, " << seconds << " s";
	EXPECT_LE(checks, reanchors / 1024 + seconds + 1) << reanchors << " re-anchors, " << seconds << " s";
}

} // namespace

// ---- the tracker alone, over exact synthetic samples --------------------------------------------------------
namespace {
constexpr uint64_t TICKS_PER_MS = 3000000; // a 3 GHz counter
constexpr uint64_t MULT = (uint64_t)((1ull << 32) / 3); // 1/3 ns per tick, 32.32

struct Kernel {
	// CLOCK_MONOTONIC at counter c: c / 3 ns up to c_step, then at (1 + ppm) times that rate.
	uint64_t c_step = UINT64_MAX;
	long double ppm = 0;
	long double mono(uint64_t c) const
	{
		if (c <= c_step)
			return (long double)c / 3;
		return (long double)c_step / 3 + (long double)(c - c_step) / 3 * (1 + ppm * 1e-6L);
	}
	fc_sample sample(uint64_t c, int64_t off_lo = 0, int64_t off_hi = 0) const
	{
		return fc_sample{c, 30, (int64_t)mono(c), off_lo, off_hi, 0, 0};
	}
};

// Value of hand h at counter c minus the kernel's, and the hand's bound there.
void err_and_bound(const fc_hand &h, const Kernel &k, uint64_t c, long double *err, long double *bound)
{
	const uint64_t d = c - h.base_ticks;
	*err = (long double)(fc__track_value_fx(&h, c) >> 32) - k.mono(c);
	*bound = (long double)h.mono_err_ns + (long double)((unsigned __int128)d * h.err_mult >> 32);
}
} // namespace

// The kernel may move its rate by up to 5000 ppm at any instant of a period (src/track.c KERNEL_SWING_PPM, the tick unknown): a step
// one tick after a re-anchor is covered over the hand's whole window. (Without the swing in err_mult the bound
// grew at ~1 ppm and this missed by ~5 us.)
TEST(TrackBound, kernel_rate_step_right_after_a_reanchor_is_covered)
{
	for (long double ppm : {-5000.0L, -500.0L, 100.0L, 1000.0L, 5000.0L}) {
		Kernel k;
		fc_track t;
		fc_hand h{}, prev{};
		fc__track_init(&t, ~0ull, TICKS_PER_MS, MULT);
		uint64_t c = 1000 * TICKS_PER_MS;
		for (int i = 0; i < 12; i++, c += TICKS_PER_MS) {
			fc_sample s = k.sample(c);
			fc__track_update(&t, i ? &prev : nullptr, &s, c, &h);
			prev = h;
		}
		const fc_ntp ntp{FC_SYNC_SYNCHRONIZED, 0, 50000, 20000, 0, 0};
		ASSERT_EQ(fc__track_sync(&t, &h, &ntp), FC_SYNC_SYNCHRONIZED) << ppm;
		k.c_step = h.base_ticks + 1;
		k.ppm = ppm;
		for (uint64_t d = 0; d < h.valid_ticks; d += h.valid_ticks / 16) {
			long double err, bound;
			err_and_bound(h, k, h.base_ticks + d, &err, &bound);
			EXPECT_LE(fabsl(err), bound) << ppm << " ppm at delta " << d;
		}
	}
}

// A wall offset bracketed only to [0, 50 us] (a preempted realtime read): readers get its middle, so the bound
// must hold half of it. (It was not in the bound: real reads were 25 us off against a ~100 ns bound.)
TEST(TrackBound, wall_offset_half_bracket_is_in_the_bound)
{
	Kernel k;
	fc_track t;
	fc_hand h{};
	fc__track_init(&t, ~0ull, TICKS_PER_MS, MULT);
	fc_sample s = k.sample(1000 * TICKS_PER_MS, 0, 50000);
	fc__track_update(&t, nullptr, &s, s.c_mid, &h);
	EXPECT_EQ(h.real_off_ns, 25000);
	EXPECT_GE(h.mono_err_ns, 25000);
}

// A rate from a hint (CPUID, the kernel's TSC figure) says nothing about the kernel's rate: the first hand is
// DISRUPTED; a measured rate has a known noise: SYNCHRONIZED. (The first hand trusted a hint to 1000 ppm.)
TEST(TrackSync, first_hand_on_a_hint_is_not_synchronized_but_on_a_measurement_is)
{
	Kernel k;
	const fc_ntp ntp{FC_SYNC_SYNCHRONIZED, 0, 50000, 20000, 0, 0};
	for (int measured = 0; measured < 2; measured++) {
		fc_track t;
		fc_hand h{};
		fc__track_init(&t, ~0ull, TICKS_PER_MS, MULT);
		fc_sample a = k.sample(999 * TICKS_PER_MS), s = k.sample(1000 * TICKS_PER_MS);
		if (measured)
			fc__track_hint_measured(&t, &a, &s);
		fc__track_update(&t, nullptr, &s, s.c_mid, &h);
		EXPECT_EQ(fc__track_sync(&t, &h, &ntp), measured ? FC_SYNC_SYNCHRONIZED : FC_SYNC_DISRUPTED);
	}
}

// A pending leap second (adjtimex STA_INS / STA_DEL) makes every hand whose window reaches within 2 s of the next
// UTC midnight DISRUPTED, or anchored within 2 s after one (the kernel applies it a tick late), and no other.
TEST(TrackSync, pending_leap_second_near_midnight_is_not_synchronized)
{
	const int64_t day = 86400ll * 1000000000ll, midnight = 19700ll * day;
	fc_track t;
	fc__track_init(&t, ~0ull, TICKS_PER_MS, MULT);
	t.disrupted = 0;
	fc_hand h{};
	h.mult = MULT;
	h.valid_ticks = TICKS_PER_MS + TICKS_PER_MS / 8;
	h.mono_ns = 5000000000ll;
	struct {
		int status;
		int64_t before_midnight;
		int want;
	} cases[] = {{STA_INS, 1500000000ll, FC_SYNC_DISRUPTED}, {STA_DEL, 2001000000ll, FC_SYNC_DISRUPTED},
		     {STA_INS, 10 * 1000000000ll, FC_SYNC_SYNCHRONIZED}, {0, 1500000000ll, FC_SYNC_SYNCHRONIZED},
		     {STA_INS, -1000000ll, FC_SYNC_DISRUPTED}, {STA_DEL, -1999000000ll, FC_SYNC_DISRUPTED},
		     {STA_INS, -3000000000ll, FC_SYNC_SYNCHRONIZED}};
	for (const auto &cs : cases) {
		const fc_ntp ntp{FC_SYNC_SYNCHRONIZED, cs.status, 50000, 20000, 0, 0};
		h.real_off_ns = midnight - cs.before_midnight - h.mono_ns;
		EXPECT_EQ(fc__track_sync(&t, &h, &ntp), cs.want) << cs.status << " " << cs.before_midnight;
	}
}

// ---- the bound inside its own contract ----------------------------------------------------------------------
namespace {
const fc_ntp NTP_OK{FC_SYNC_SYNCHRONIZED, 0, 50000, 20000, 0, 0};

// n continuous samples one period apart from counter c (old hand in *h), returning the last status.
int run_steady(fc_track &t, fc_hand &h, const Kernel &k, uint64_t &c, int n, uint64_t step = TICKS_PER_MS)
{
	int st = -1;
	for (int i = 0; i < n; i++, c += step) {
		fc_sample s = k.sample(c);
		fc_hand prev = h;
		fc__track_update(&t, h.mult ? &prev : nullptr, &s, c, &h);
		st = fc__track_sync(&t, &h, &NTP_OK);
	}
	return st;
}

// A tracker at a 1 ms period after 12 steady samples from counter 1000 ms: SYNCHRONIZED, *c at the next sample.
void start_steady(fc_track &t, fc_hand &h, const Kernel &k, uint64_t &c, uint64_t hint = MULT)
{
	h = fc_hand{};
	fc__track_init(&t, ~0ull, TICKS_PER_MS, hint);
	c = 1000 * TICKS_PER_MS;
	ASSERT_EQ(run_steady(t, h, k, c, 12), FC_SYNC_SYNCHRONIZED);
}
} // namespace

// After a break the rate history restarts: DISRUPTED until FC_TRACK_HIST samples back it (a second change soon
// after was judged against a 1-2 period mean and missed by 1.6x), then SYNCHRONIZED.
TEST(TrackSync, disrupted_until_the_rate_history_refills_after_a_break)
{
	Kernel k;
	fc_track t;
	fc_hand h;
	uint64_t c;
	start_steady(t, h, k, c);
	k.c_step = c - TICKS_PER_MS / 2; // a 3000 ppm step: a break at the next sample
	k.ppm = 3000;
	const uint64_t disc = t.discontinuities;
	run_steady(t, h, k, c, 1);
	ASSERT_EQ(t.discontinuities, disc + 1);
	for (int i = 1; i < FC_TRACK_HIST; i++)
		EXPECT_EQ(run_steady(t, h, k, c, 1), FC_SYNC_DISRUPTED) << "sample " << i << " after the break";
	EXPECT_EQ(run_steady(t, h, k, c, 2), FC_SYNC_SYNCHRONIZED);
}

// Readers less often than every P + P/8 (no updater): every hand has expired at the next re-anchor, and the
// status is judged by the samples: SYNCHRONIZED once the history is full (it stayed DISRUPTED for ever).
TEST(TrackSync, sparse_readers_are_synchronized_once_the_history_is_full)
{
	Kernel k;
	fc_track t;
	fc_hand h{};
	fc__track_init(&t, ~0ull, TICKS_PER_MS, MULT);
	uint64_t c = 1000 * TICKS_PER_MS;
	EXPECT_EQ(run_steady(t, h, k, c, 12, TICKS_PER_MS * 13 / 10), FC_SYNC_SYNCHRONIZED);
}

namespace {
// As run_steady, with adjtimex's tick read at every re-anchor before the update (as windup.c does): tick_us, at the
// sample's CLOCK_MONOTONIC.
int run_reading(fc_track &t, fc_hand &h, const Kernel &k, uint64_t &c, int n, long tick_us)
{
	int st = -1;
	for (int i = 0; i < n; i++, c += TICKS_PER_MS) {
		fc_sample s = k.sample(c);
		fc_ntp nt = NTP_OK;
		nt.tick_us = tick_us;
		fc__track_note_ntp(&t, &nt, s.mono);
		fc_hand prev = h;
		fc__track_update(&t, h.mult ? &prev : nullptr, &s, c, &h);
		st = fc__track_sync(&t, &h, &NTP_OK);
	}
	return st;
}
} // namespace

// The allowance for an unseen kernel rate change: 2000 ppm of nominal while the tick has only been seen nominal,
// 5000 ppm once it moved (for good) or when it is unknown; a 2000 ppm step right after a re-anchor is covered.
TEST(TrackBound, allowance_follows_the_kernel_tick)
{
	uint64_t err_mult[4];
	const long ticks[4] = {10000, 10001, 10000, 0}; // nominal, moved, nominal again (sticky), unknown
	fc_track t;
	fc_hand h{};
	fc__track_init(&t, ~0ull, TICKS_PER_MS, MULT);
	Kernel k;
	uint64_t c = 1000 * TICKS_PER_MS;
	for (int i = 0; i < 4; i++) {
		run_reading(t, h, k, c, 12, ticks[i]);
		err_mult[i] = h.err_mult;
		if (i == 0) { // a 2000 ppm step one tick after the anchor is covered over the whole window
			Kernel k2 = k;
			k2.c_step = h.base_ticks + 1;
			k2.ppm = -2000;
			for (uint64_t d = 0; d < h.valid_ticks; d += h.valid_ticks / 16) {
				long double err, bound;
				err_and_bound(h, k2, h.base_ticks + d, &err, &bound);
				EXPECT_LE(fabsl(err), bound) << "delta " << d;
			}
		}
	}
	// err_mult in 32.32 ns per tick: 2000 ppm of 1/3 ns is ~2.9e6, 5000 ppm ~7.2e6
	EXPECT_LT(err_mult[0], MULT / 400);
	EXPECT_GT(err_mult[1], MULT / 200);
	EXPECT_GT(err_mult[2], MULT / 200);
	EXPECT_GT(err_mult[3], MULT / 200);
}

// The narrow allowance needs the tick read nominal over the whole window the rate comes from: the last read
// before its first sample and one inside it. A first read (start-up, or after an unknown tick) says nothing of the
// rates before it, and reads that stopped (adjtimex read less often than the window is long) nothing of the rates
// after them.
TEST(TrackBound, allowance_narrow_only_with_the_tick_read_over_the_whole_window)
{
	fc_track t;
	fc_hand h{};
	fc__track_init(&t, ~0ull, TICKS_PER_MS, MULT);
	Kernel k;
	uint64_t c = 1000 * TICKS_PER_MS;
	run_steady(t, h, k, c, 12); // no read yet
	EXPECT_GT(h.err_mult, MULT / 200);
	for (int i = 0; i < FC_TRACK_HIST; i++) { // the window still starts before the first read
		run_reading(t, h, k, c, 1, 10000);
		EXPECT_GT(h.err_mult, MULT / 200) << "sample " << i << " after the first read";
	}
	run_reading(t, h, k, c, 2, 10000);
	EXPECT_LT(h.err_mult, MULT / 400);
	run_reading(t, h, k, c, 1, 0); // a read that could not tell the tick
	run_reading(t, h, k, c, 3, 10000);
	EXPECT_GT(h.err_mult, MULT / 200);
	run_reading(t, h, k, c, 12, 10000);
	EXPECT_LT(h.err_mult, MULT / 400);
	run_steady(t, h, k, c, FC_TRACK_HIST - 1); // the last read still inside the window
	EXPECT_LT(h.err_mult, MULT / 400);
	run_steady(t, h, k, c, 2); // no read inside the window any more
	EXPECT_GT(h.err_mult, MULT / 200);
}

// The kernel's rate on a plateau (+4900 ppm: chronyd's fast slew, the tick at 10049) over the whole history, then
// back to nominal right after the re-anchor whose read shows the tick nominal (no read saw the plateau: the
// process started on it, or adjtimex is read rarely). A change of 4875 ppm from the history's mean: covered.
// (The tick read nominal gave 2000 ppm: reads 2.4x outside the bound, SYNCHRONIZED.)
TEST(TrackBound, tick_back_to_nominal_after_a_plateau_is_covered)
{
	for (long double plateau : {4900.0L, -4900.0L}) {
		struct Plateau {
			long double ppm;
			uint64_t c_end = UINT64_MAX; // the rate back to nominal from here
			long double mono(uint64_t c) const
			{
				const uint64_t a = std::min(c, c_end);
				return (long double)a / 3 * (1 + ppm * 1e-6L) + (long double)(c - a) / 3;
			}
		} k{plateau};
		fc_track t;
		fc_hand h{};
		fc__track_init(&t, ~0ull, TICKS_PER_MS, (uint64_t)((long double)MULT * (1 + plateau * 1e-6L)));
		uint64_t c = 1000 * TICKS_PER_MS;
		for (int i = 0; i < 13; i++, c += TICKS_PER_MS) {
			fc_sample s{c, 30, (int64_t)k.mono(c), 0, 0, 0, 0};
			if (i == 12) { // the tick back to nominal just before this re-anchor's read
				fc_ntp nt = NTP_OK;
				nt.tick_us = 10000;
				fc__track_note_ntp(&t, &nt, s.mono);
			}
			fc_hand prev = h;
			fc__track_update(&t, i ? &prev : nullptr, &s, c, &h);
		}
		ASSERT_EQ(fc__track_sync(&t, &h, &NTP_OK), FC_SYNC_SYNCHRONIZED);
		k.c_end = h.base_ticks + 1;
		for (uint64_t d = 0; d <= h.valid_ticks; d += h.valid_ticks / 16) {
			const long double err = (long double)(fc__track_value_fx(&h, h.base_ticks + d) >> 32) -
						k.mono(h.base_ticks + d);
			const long double bound =
				(long double)h.mono_err_ns + (long double)((unsigned __int128)d * h.err_mult >> 32);
			EXPECT_LE(fabsl(err), bound) << (double)plateau << " ppm plateau, delta " << d;
		}
	}
}

// A suspend (CLOCK_BOOTTIME - CLOCK_MONOTONIC grew) with the counter running: a discontinuity, and the hands
// hold back (a slope below the 1/16 slew limit) instead of slewing 0.75 P out over 12 s.
TEST(TrackSync, suspend_is_told_by_boottime_and_held_back)
{
	Kernel k;
	fc_track t;
	fc_hand h;
	uint64_t c;
	start_steady(t, h, k, c);
	// 0.5 ms suspended: the counter ran 1.5 ms since the last sample, CLOCK_MONOTONIC 1 ms, BOOTTIME 1.5 ms
	const uint64_t jump = TICKS_PER_MS / 2;
	c += jump; // run_steady left it one period past the last sample
	fc_sample s{c, 30, (int64_t)k.mono(c - jump), 0, 0, 500000, 500000};
	fc_hand prev = h;
	fc__track_update(&t, &prev, &s, c, &h);
	EXPECT_EQ(t.suspends, 1u);
	EXPECT_EQ(fc__track_sync(&t, &h, &NTP_OK), FC_SYNC_DISRUPTED);
	EXPECT_LT(h.mult, MULT - MULT / 16);
}

// A narrow counter caps the period so the rate history fits in a quarter of its range (a 32-bit counter at 1 GHz
// with P = 1 s aliased its 8-period baseline).
TEST(TrackBound, period_capped_by_counter_width)
{
	fc_track t;
	fc__track_init(&t, 0xffffffffull, 1000000000ull, 1ull << 32);
	EXPECT_LE(t.period_ticks * (FC_TRACK_HIST + 1), 0xffffffffull >> 2);
	fc__track_init(&t, ~0ull, 1000000000ull, 1ull << 32);
	EXPECT_EQ(t.period_ticks, 1000000000ull);
}

// A bracket far wider than the narrowest seen (a clocksource switch to hpet / acpi_pm: coarser values, slower
// reads) is widened by twice its extra width: the kernel's value may lie a clocksource step below its line.
TEST(TrackBound, coarse_kernel_clocksource_widens_the_sample)
{
	Kernel k;
	fc_track t;
	fc_hand h;
	uint64_t c;
	start_steady(t, h, k, c);
	fc_sample s = k.sample(c);
	s.c_half = 1500; // 500 ns: a 1 us acpi_pm read
	fc_hand prev = h;
	fc__track_update(&t, &prev, &s, c, &h);
	// half + 2 x (half - 30 ticks) = 4440 ticks = 1480 ns, at least
	EXPECT_GE(h.mono_err_ns, 1480);
}

// The kernel's limits are in ppm of its nominal rate: held 1 % slow by the tick (9900), the allowance is 5000 ppm
// of nominal, 5050 ppm of the measured rate (1/200 of the measured rate would fall short by the base).
TEST(TrackBound, allowance_is_in_ppm_of_nominal)
{
	Kernel k;
	k.c_step = 0;
	k.ppm = -10000;
	fc_track t;
	fc_hand h{};
	fc__track_init(&t, ~0ull, TICKS_PER_MS, (uint64_t)((long double)MULT * 0.99L));
	uint64_t c = 1000 * TICKS_PER_MS;
	run_reading(t, h, k, c, 12, 9900);
	EXPECT_GE((long double)h.err_mult, (long double)MULT * 5000e-6L);
}
