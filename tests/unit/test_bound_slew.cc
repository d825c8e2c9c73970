// src/bound/slew.c: chronyd's frequency slew followed through adjtimex readings.
// The kernel here is set as chronyd's sys_linux.c set_frequency sets it (tick + freq in 2^-16 ppm), and the
// expected correction is integrated from those readings, so each test states what the kernel did.
#include <gtest/gtest.h>

#include <sys/timex.h>

#include <cmath>
#include <cstdint>

#include "bound/slew.h"

namespace {

constexpr int64_t kRt = 1700000000LL * 1000000000LL; // REALTIME at the request
constexpr int64_t kMonoOff = 1000000000000LL;         // REALTIME - MONOTONIC
constexpr double kBase = 12.5;                        // chronyd's base frequency, ppm

// chronyd's sys_linux.c set_frequency for a total frequency (ppm; > 0 slows the clock)
fc_slew_kernel kernel(double total_ppm, int64_t rt)
{
	fc_slew_kernel k{};
	int dt = (int)std::lround(total_ppm / 100);
	k.tick = 10000 - dt;
	k.freq = (long)(-(total_ppm - 100.0 * dt) * 65536.0);
	k.rt_ns = rt;
	k.mono_lo = rt - kMonoOff - 20;
	k.mono_hi = rt - kMonoOff + 20;
	return k;
}

// d(correction)/d(REALTIME) for what the kernel runs (sys_generic.c slew_freq)
double rate(const fc_slew_kernel &k)
{
	double total = 100.0 * (10000 - k.tick) - (double)k.freq / 65536.0;
	return (total - kBase) / (1e6 - total);
}

// a reply with correction c (s) answered 100 us after the request, root distance 150 us + 20 us
fc_slew_in reply(double c, double slew_ppm)
{
	fc_slew_in in{};
	in.t.correction = c;
	in.t.last_offset = -c;
	in.t.rms_offset = 20e-6;
	in.t.freq_ppm = kBase;
	in.t.resid_freq_ppm = 0.01;
	in.t.skew_ppm = 0.1;
	in.t.root_delay = 300e-6;
	in.t.root_dispersion = 20e-6;
	in.at_req = kernel(kBase + slew_ppm, kRt);
	in.reply_rt_ns = kRt + 100000;
	in.now = in.at_req;
	in.hz = 100;
	return in;
}

void at(fc_slew_in &in, int64_t after_ns, double slew_ppm)
{
	in.now = kernel(kBase + slew_ppm, kRt + after_ns);
}

bool covers(const fc_slew_out &o, double corr_s)
{
	return std::fabs(corr_s * 1e9 - (double)o.center_ns) <= (double)o.half_ns;
}

fc_slew_out eval(const fc_slew_in &in)
{
	fc_slew_out o{};
	fc__slew_eval(&in, &o);
	return o;
}

int64_t today(const fc_slew_in &in)
{
	fc_slew_out o{};
	fc__slew_fallback(&in.t, in.now.rt_ns - in.at_req.rt_ns, &o);
	return o.half_ns;
}

TEST(BoundSlew, tracked_centre_follows_the_kernel_rate)
{
	// 20 ms pending, chronyd slewing it at 20000 ppm; 0.5 s later the kernel has removed ~10 ms
	fc_slew_in in = reply(-0.020, 20000);
	at(in, 500000000, 20000);
	fc_slew_out o = eval(in);
	ASSERT_EQ(o.status, FC_SLEW_TRACKED) << o.why;
	double s = rate(in.at_req);
	for (double tc : {0.0, 50e-6, 100e-6}) // chronyd answered somewhere in the request's window
		EXPECT_TRUE(covers(o, -0.020 + s * (0.5 - tc))) << tc;
	// the width is chronyd's root distance + its growth + the reply window x the rate, not the 20 ms
	EXPECT_LT(o.half_ns, 150000 + 20000 + 1100 + 20000 * 100 / 1000 + 10);
	EXPECT_GE(o.half_ns, 170000);
	EXPECT_LT(o.half_ns * 20, today(in));
	EXPECT_EQ(o.rate_ppb, std::llround(s * 1e9));
	EXPECT_GT(o.until_rt_ns, in.now.rt_ns); // the slew is planned to run ~0.5 s more
}

TEST(BoundSlew, tracked_uses_tick_and_freq_as_chronyd_reads_them_back)
{
	// tick 9700 and freq 0 is 30000 ppm: the correction moves 30000 / (1e6 - 30000) per second
	fc_slew_in in = reply(-0.030, 0);
	in.t.freq_ppm = 0;
	in.at_req = kernel(30000, kRt);
	in.now = kernel(30000, kRt + 200000000);
	ASSERT_EQ(in.at_req.tick, 9700);
	ASSERT_EQ(in.at_req.freq, 0);
	fc_slew_out o = eval(in);
	ASSERT_EQ(o.status, FC_SLEW_TRACKED) << o.why;
	double expect = -0.030 + 30000.0 / 970000.0 * (0.2 - 50e-6);
	EXPECT_NEAR((double)o.center_ns, expect * 1e9, 2000);
}

TEST(BoundSlew, a_change_that_reads_as_the_end_of_a_slew_is_covered_at_any_time)
{
	// 1 ms left at 10000 ppm: planned end 0.1 s after the reply. Now 0.6 s, the kernel at -3 ppm: chronyd's
	// timer after the planned end reads so (ENDED), and so does an update of chronyd's before it: both covered
	fc_slew_in in = reply(-0.001, 10000);
	double s0 = rate(in.at_req);
	at(in, 600000000, -3);
	fc_slew_out o = eval(in);
	ASSERT_EQ(o.status, FC_SLEW_ENDED) << o.why;
	double s1 = rate(in.now);
	for (double tc : {0.0, 100e-6})
		for (double tsw = tc; tsw <= 0.6; tsw += 0.005) {
			double corr = -0.001 + s0 * (tsw - tc) + s1 * (0.6 - tsw);
			EXPECT_TRUE(covers(o, corr)) << tsw;
		}
	// wider than today's [c, 0] + root distance, which is wrong here: the 0.1 s the slew needs is stretched to
	// chronyd's 1 s minimum, so the clock overshoots 0; the hull is the switch time's spread, |s0 - s1| x 0.6 s
	EXPECT_GT(o.half_ns, today(in));
	EXPECT_LT(o.half_ns, (0.0102 * 0.6 / 2 + 170e-6 + 10e-6) * 1e9); // s0 = 10000 / (1e6 - 10012.5)
}

TEST(BoundSlew, a_big_new_slew_contradicting_the_reply_is_disagree)
{
	// chronyd held 10 us; now the kernel slews at 30000 ppm: chronyd found >= ~30 ms since the reply
	fc_slew_in in = reply(-10e-6, -5);
	at(in, 300000000, -30000);
	fc_slew_out o = eval(in);
	EXPECT_EQ(o.status, FC_SLEW_DISAGREE) << o.why;
	// the other way round too
	at(in, 300000000, 30000);
	EXPECT_EQ(eval(in).status, FC_SLEW_DISAGREE);
}

TEST(BoundSlew, a_small_new_slew_is_an_update_covered_anywhere_since_the_request)
{
	fc_slew_in in = reply(-10e-6, -5);
	double s0 = rate(in.at_req);
	at(in, 300000000, -8); // against chronyd's register: not the end of a slew
	fc_slew_out o = eval(in);
	ASSERT_EQ(o.status, FC_SLEW_UPDATED) << o.why;
	double s1 = rate(in.now);
	for (double tc : {0.0, 100e-6})
		for (double tsw = tc; tsw <= 0.3; tsw += 0.005)
			EXPECT_TRUE(covers(o, -10e-6 + s0 * (tsw - tc) + s1 * (0.3 - tsw))) << tsw;
}

TEST(BoundSlew, overshoot_of_the_one_second_minimum_is_covered_when_falling_back)
{
	// 0.9 ms left at 30000 ppm: chronyd's slew lasts >= 1 s, so the clock may pass 0 by ~29 ms; an old reply
	// falls back, and today's [0, c] alone would exclude that
	fc_slew_in in = reply(-0.0009, 30000);
	at(in, 2500000000LL, 30000);
	fc_slew_out o = eval(in);
	ASSERT_EQ(o.status, FC_SLEW_FALLBACK) << o.why;
	double s0 = rate(in.at_req);
	EXPECT_TRUE(covers(o, -0.0009 + s0 * 1.0));
	EXPECT_GT(o.half_ns, today(in) + 29000000);
}

TEST(BoundSlew, not_chronyds_kernel_state_falls_back_to_todays_width)
{
	struct Case {
		const char *what;
		void (*spoil)(fc_slew_in &);
	} cases[] = {
		{"PLL on (ntpd, timesyncd)", [](fc_slew_in &in) { in.now.status |= STA_PLL; }},
		{"PLL offset pending", [](fc_slew_in &in) { in.at_req.offset = 250; }},
		{"PPS frequency discipline", [](fc_slew_in &in) { in.now.status |= STA_PPSFREQ; }},
		{"tick beyond chronyd's 10 %", [](fc_slew_in &in) { in.now.tick = 8999; in.at_req.tick = 8999; }},
		{"REALTIME stepped 5 ms", [](fc_slew_in &in) { in.now.rt_ns += 5000000; }},
		{"REALTIME stepped back 2 us", [](fc_slew_in &in) { in.now.mono_lo += 2000; in.now.mono_hi += 2000; }},
		{"rate beyond maxslewrate", [](fc_slew_in &in) {
			 in.at_req = kernel(kBase + 90000, in.at_req.rt_ns);
			 in.now = kernel(kBase + 90000, in.now.rt_ns);
		 }},
		{"reply before the request", [](fc_slew_in &in) { in.reply_rt_ns = in.at_req.rt_ns - 1; }},
		{"now before the reply", [](fc_slew_in &in) { in.now.rt_ns = in.reply_rt_ns - 1; in.now.mono_lo -= 400000000; in.now.mono_hi -= 400000000; }},
		{"NaN root dispersion", [](fc_slew_in &in) { in.t.root_dispersion = NAN; }},
		{"negative root delay", [](fc_slew_in &in) { in.t.root_delay = -1e-3; }},
		{"reply older than 2 s", [](fc_slew_in &in) { in = reply(-0.001, -10); at(in, 2100000000LL, -10); }},
	};
	for (const Case &k : cases) {
		fc_slew_in in = reply(-0.002, -100);
		at(in, 400000000, -100);
		ASSERT_EQ(eval(in).status, FC_SLEW_TRACKED) << k.what;
		k.spoil(in);
		fc_slew_out o = eval(in);
		EXPECT_EQ(o.status, FC_SLEW_FALLBACK) << k.what << ": " << o.why;
		if (!std::isnan(in.t.root_dispersion)) {
			EXPECT_GE(o.half_ns, today(in)) << k.what;
		}
	}
}

TEST(BoundSlew, never_wider_than_clockbound_while_tracked)
{
	// |c| + root distance (ClockBound) against ours over a slew's run, reply held 1 s
	for (double c : {-0.030, -0.001, -50e-6, 0.0, 40e-6, 0.005}) {
		double ppm = c == 0 ? 0 : (c < 0 ? 1 : -1) * std::fmin(83333.0, std::fabs(c) * 1e6);
		fc_slew_in in = reply(c, ppm);
		for (int64_t dt = 1000000; dt <= 1000000000; dt *= 10) {
			at(in, dt, ppm);
			fc_slew_out o = eval(in);
			double cb = (std::fabs(c) + 150e-6 + 20e-6 + 15e-6 * (double)dt / 1e9) * 1e9;
			EXPECT_LE((double)o.half_ns, cb + 2) << c << " " << dt << " " << o.why;
		}
	}
}

} // namespace
