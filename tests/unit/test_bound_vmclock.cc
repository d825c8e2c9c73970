// fastclock unit tests — the VMClock source (src/bound/vmclock.c): its page's disruption marker, and VMClock as a
// time source (the time of the counter, the bound of CLOCK_REALTIME against it, range edges).
#include <gtest/gtest.h>

#include <stdlib.h>
#include <string.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "bound/vmclock.h"
#include "bound_fixtures.h"

namespace {

// ---- VMClock ---------------------------------------------------------------------------------------------
// A marker move is DISRUPTED until the source served has a measurement taken after the move was seen (as
// ClockBound waits for chronyd's), whatever the host's clock status says (QEMU's is always UNKNOWN).
TEST(VmClock, marker_move_is_disrupted_until_a_measurement_after_it)
{
	VmFile f(tmpdir());
	fc_vmc v;
	fc_bound b{};
	ASSERT_EQ(fc__vmc_open(&v, f.path.c_str(), &b, 0), 0) << b.last_error;
	ASSERT_EQ(fc__vmc_poll(&v, &b, 0), 0);
	b.status = FC_SYNC_SYNCHRONIZED;
	fc__vmc_apply(&v, &b);
	EXPECT_EQ(b.status, FC_SYNC_SYNCHRONIZED);
	f.marker(99);
	f.m[34] = FC_VMC_FREERUNNING; // the host has not re-synchronised yet
	f.write();
	fc__vmc_poll(&v, &b, 10 * SEC);
	fc__vmc_apply(&v, &b);
	EXPECT_EQ(b.status, FC_SYNC_DISRUPTED) << b.reason;
	f.m[34] = FC_VMC_SYNCHRONIZED; // the host's status alone ends nothing
	f.write();
	fc__vmc_poll(&v, &b, 11 * SEC);
	fc__vmc_settle(&v, 9 * SEC); // a measurement from before the move
	b.status = FC_SYNC_SYNCHRONIZED;
	fc__vmc_apply(&v, &b);
	EXPECT_EQ(b.status, FC_SYNC_DISRUPTED);
	fc__vmc_settle(&v, 10 * SEC); // ...or from the poll that saw it: not after it
	b.status = FC_SYNC_SYNCHRONIZED;
	fc__vmc_apply(&v, &b);
	EXPECT_EQ(b.status, FC_SYNC_DISRUPTED);
	fc__vmc_settle(&v, 10 * SEC + 1);
	b.status = FC_SYNC_SYNCHRONIZED;
	fc__vmc_apply(&v, &b);
	EXPECT_EQ(b.status, FC_SYNC_SYNCHRONIZED) << b.reason;
	fc__vmc_close(&v);
}

TEST(VmClock, wrong_magic_is_refused_naming_it)
{
	VmFile f(tmpdir());
	f.m[0] = 0;
	f.write();
	fc_vmc v;
	fc_bound b{};
	EXPECT_EQ(fc__vmc_open(&v, f.path.c_str(), &b, 0), -1);
	EXPECT_NE(strstr(b.last_error, "magic"), nullptr) << b.last_error;
}

// A TAI host's offset is a signed 16-bit field: read from the page, -2 s makes UTC 2 s after the TAI time.
TEST(VmClock, tai_offset_is_read_signed_from_the_page)
{
	std::string d = tmpdir();
	VmFile f(d);
	fc_vmc_snap s = vm_line();
	s.time_type = FC_VMC_TIME_TAI, s.flags |= FC_VMC_FLAG_TAI_OFFSET_VALID, s.tai_offset_sec = -2;
	vm_page(f, s);
	fc_vmc v;
	fc_bound b{};
	ASSERT_EQ(fc__vmc_open(&v, f.path.c_str(), &b, 0), 0) << b.last_error;
	ASSERT_EQ(fc__vmc_poll(&v, &b, 0), 0) << b.last_error;
	EXPECT_EQ(v.snap.tai_offset_sec, -2);
	int64_t utc, err;
	char why[FC_BOUND_TEXT];
	ASSERT_EQ(fc__vmc_time_at(&v.snap, FC_VMC_COUNTER_X86_TSC, s.counter_value, &utc, &err, why, sizeof(why)), 0) << why;
	EXPECT_EQ(utc, (1700000000LL + 2) * SEC + 300 * MS);
	fc__vmc_close(&v);
}

// ---- VMClock as a time source (vm_line: bound_fixtures.h) -------------------------------------------------
// time + (counter - counter_value) x period, against a long double reference (the seconds kept apart so the
// reference has sub-ns precision), at deltas of both signs up to 10^4 s; the error grows with |delta|.
TEST(VmClockTime, time_of_the_counter_agrees_with_a_long_double_reference_on_both_sides_of_counter_value)
{
	fc_vmc_snap s = vm_line();
	const int64_t deltas[] = {0, 1, -1, 7, -7, 2500000000LL, -2500000000LL, 12345678901LL, -98765432109LL,
				  25000000000000LL};
	char why[FC_BOUND_TEXT] = "";
	for (int tai = 0; tai < 2; tai++) {
		if (tai) {
			s.time_type = FC_VMC_TIME_TAI;
			s.flags |= FC_VMC_FLAG_TAI_OFFSET_VALID;
			s.tai_offset_sec = 37;
		}
		for (int64_t d : deltas) {
			int64_t utc, err;
			ASSERT_EQ(fc__vmc_time_at(&s, FC_VMC_COUNTER_X86_TSC, s.counter_value + (uint64_t)d, &utc, &err, why,
						  sizeof(why)),
				  0)
				<< why;
			long double el = (long double)d * (long double)s.counter_period_frac_sec / (TWO64 * 16) * 1e9L;
			long double sub = (long double)s.time_frac_sec / TWO64 * 1e9L + el;
			int64_t base = ((int64_t)s.time_sec - (tai ? 37 : 0)) * SEC;
			long double want = (long double)base + sub; // ~1.7e18: 64-bit mantissa, 0.125 ns steps
			EXPECT_LE(std::abs((double)((long double)utc - want)), 1.0) << "delta " << d << " tai " << tai;
			long double ew = 10000 + (long double)std::llabs(d) * (long double)s.counter_period_maxerror_rate_frac_sec /
							 (TWO64 * 16) * 1e9L;
			EXPECT_GE((long double)err, ew) << "delta " << d;
			EXPECT_LE((long double)err, ew + 2) << "delta " << d;
		}
	}
}

// Each thing a host may leave out, or a page may get wrong, gives no time, and the reason names the value.
TEST(VmClockTime, a_snapshot_that_promises_nothing_gives_no_time_and_names_the_value)
{
	struct Case {
		const char *what;
		void (*spoil)(fc_vmc_snap *);
		const char *says;
	} cases[] = {
		{"another counter", [](fc_vmc_snap *s) { s->counter_id = FC_VMC_COUNTER_ARM_VCNT; }, "counter_id 0"},
		{"monotonic time", [](fc_vmc_snap *s) { s->time_type = 2; }, "time_type 2"},
		{"TAI without its offset", [](fc_vmc_snap *s) { s->time_type = FC_VMC_TIME_TAI; }, "time_type 1"},
		{"no time maximum error", [](fc_vmc_snap *s) { s->flags &= ~FC_VMC_FLAG_TIME_MAXERROR_VALID; }, "flags 0x10"},
		{"no period maximum error", [](fc_vmc_snap *s) { s->flags &= ~FC_VMC_FLAG_PERIOD_MAXERROR_VALID; },
		 "flags 0x40"},
		{"unreliable", [](fc_vmc_snap *s) { s->clock_status = FC_VMC_UNRELIABLE; }, "clock_status 4"},
		{"initializing", [](fc_vmc_snap *s) { s->clock_status = FC_VMC_INITIALIZING; }, "clock_status 1"},
		{"shift 64", [](fc_vmc_snap *s) { s->counter_period_shift = 64; }, ">> 64"},
		{"period 0", [](fc_vmc_snap *s) { s->counter_period_frac_sec = 0; }, "period 0"},
		{"time in 2242", [](fc_vmc_snap *s) { s->time_sec = 1ull << 33; }, "time_sec 8589934592"},
		{"absurd maximum error", [](fc_vmc_snap *s) { s->time_maxerror_nanosec = 1ull << 50; }, "time_maxerror"},
	};
	for (const Case &c : cases) {
		fc_vmc_snap s = vm_line();
		int64_t utc = 0, err = 0;
		char why[FC_BOUND_TEXT] = "";
		c.spoil(&s);
		EXPECT_EQ(fc__vmc_usable(&s, FC_VMC_COUNTER_X86_TSC, why, sizeof(why)), 0) << c.what;
		EXPECT_EQ(fc__vmc_time_at(&s, FC_VMC_COUNTER_X86_TSC, s.counter_value, &utc, &err, why, sizeof(why)), -1)
			<< c.what;
		EXPECT_NE(strstr(why, c.says), nullptr) << c.what << ": " << why;
	}
	fc_vmc_snap s = vm_line(); // a counter 2^62 ticks away: refused, not wrapped
	int64_t utc, err;
	char why[FC_BOUND_TEXT] = "";
	EXPECT_EQ(fc__vmc_time_at(&s, FC_VMC_COUNTER_X86_TSC, s.counter_value - (1ull << 62), &utc, &err, why, sizeof(why)),
		  -1);
	EXPECT_NE(strstr(why, "ticks from"), nullptr) << why;
}

// The bound of CLOCK_REALTIME against VMClock's time from one sample: centred on VMClock's time, its maximum
// error plus half the bracket; its growth covers CLOCK_REALTIME running 100 ppm slow of VMClock until the next
// sample, which measures that rate; a FREERUNNING host is FREE_RUNNING; a leap second is announced; a bracket
// that goes back is refused.
TEST(VmClockTime, bound_is_centred_on_vmclock_and_holds_until_the_next_sample)
{
	fc_vmc v{};
	v.snap = vm_line();
	v.have_snap = 1;
	fc_bound b{};
	const int64_t r0 = 1700000000 * SEC; // CLOCK_REALTIME
	int64_t utc, err;
	char why[FC_BOUND_TEXT];
	uint64_t c = v.snap.counter_value + 2500000; // 1 ms after counter_value
	ASSERT_EQ(fc__vmc_time_at(&v.snap, FC_VMC_COUNTER_X86_TSC, c, &utc, &err, why, sizeof(why)), 0) << why;
	const int64_t real = utc - 3 * MS; // VMClock's time is CLOCK_REALTIME + 3 ms
	ASSERT_EQ(fc__vmc_bound(&v, FC_VMC_COUNTER_X86_TSC, 5 * SEC, real - 20, c, real + 20, &b), 1) << v.why;
	EXPECT_EQ(b.status, FC_SYNC_SYNCHRONIZED);
	EXPECT_EQ(b.center_ns, 3 * MS);
	EXPECT_GE(b.half_ns, err + 20);
	EXPECT_LE(b.half_ns, err + 22);
	EXPECT_EQ(b.as_of_ns, 5 * SEC);
	EXPECT_GE(b.drift_ppb, (int64_t)(FC_VMC_FIRST_RATE_PPB + FC_VMC_SWING_PPB + 10000)); // + 10 ppm: the period
	(void)r0;
	// 2 ms later CLOCK_REALTIME has run 100 ppm slow of VMClock: the first bound still holds there
	uint64_t c2 = c + 5000000;
	int64_t utc2;
	ASSERT_EQ(fc__vmc_time_at(&v.snap, FC_VMC_COUNTER_X86_TSC, c2, &utc2, &err, why, sizeof(why)), 0);
	const int64_t real2 = real + 2 * MS - 200; // 100 ppm of 2 ms
	EXPECT_LE(std::llabs(real2 + b.center_ns - utc2), fc__bound_half_at(&b, 5 * SEC + 2 * MS));
	ASSERT_EQ(fc__vmc_bound(&v, FC_VMC_COUNTER_X86_TSC, 5 * SEC + 2 * MS, real2 - 20, c2, real2 + 20, &b), 1);
	EXPECT_NEAR(b.center_ns, 3 * MS + 200, 1);
	// the rate seen (100 ppm, +- the brackets) replaces the 500 ppm first guess
	EXPECT_GE(b.drift_ppb, (int64_t)(FC_VMC_SWING_PPB + 100000));
	EXPECT_LT(b.drift_ppb, (int64_t)(FC_VMC_SWING_PPB + FC_VMC_FIRST_RATE_PPB));
	v.snap.clock_status = FC_VMC_FREERUNNING;
	v.snap.leap_indicator = FC_VMC_LEAP_PRE_NEG;
	ASSERT_EQ(fc__vmc_bound(&v, FC_VMC_COUNTER_X86_TSC, 6 * SEC, real2 - 20, c2, real2 + 20, &b), 1);
	EXPECT_EQ(b.status, FC_SYNC_FREE_RUNNING);
	EXPECT_EQ(b.leap, FC_LEAP_DELETE);
	EXPECT_EQ(fc__vmc_bound(&v, FC_VMC_COUNTER_X86_TSC, 7 * SEC, real2 + 20, c2, real2 - 20, &b), 0);
	EXPECT_NE(strstr(v.why, "went back 40 ns"), nullptr) << v.why;
	EXPECT_EQ(fc__vmc_bound(&v, FC_VMC_COUNTER_ARM_VCNT, 7 * SEC, real2, c2, real2, &b), 0);
}

// Range edges: a time past what an int64 of ns holds is refused, not wrapped (a 24 MHz counter 2^31 s from a
// time_sec near 2^33 s); an error past 2^32 s is refused, one below it stays positive; rates past 1000x are
// saturated, so the bound never shrinks as it ages.
TEST(VmClockTime, range_edges_are_refused_or_saturated_never_wrapped)
{
	fc_vmc_snap s = vm_line();
	s.counter_period_frac_sec = (uint64_t)(TWO64 * 16 / 24e6L); // 24 MHz, shift 4
	s.counter_period_maxerror_rate_frac_sec = s.counter_period_frac_sec / 100000;
	s.time_sec = (1ull << 33) - 1;
	int64_t utc = 0, err = 0;
	char why[FC_BOUND_TEXT] = "";
	const uint64_t two31s = (uint64_t)24000000 << 31; // ticks in 2^31 s
	EXPECT_EQ(fc__vmc_time_at(&s, FC_VMC_COUNTER_X86_TSC, s.counter_value + two31s, &utc, &err, why, sizeof(why)), -1);
	EXPECT_NE(strstr(why, "out of range"), nullptr) << why;
	// elapsed time: 2^32 s from counter_value is refused; the error: a period error as large as the period over
	// 2^31 s is 2^31 s, positive (before, 2^36 s of error was allowed and wrapped the int64 of ns)
	s = vm_line();
	s.counter_period_frac_sec = (uint64_t)(TWO64 * 16 / 24e6L);
	s.counter_period_maxerror_rate_frac_sec = s.counter_period_frac_sec;
	EXPECT_EQ(fc__vmc_time_at(&s, FC_VMC_COUNTER_X86_TSC, s.counter_value + 2 * two31s + 24000000, &utc, &err, why,
				  sizeof(why)),
		  -1);
	EXPECT_NE(strstr(why, "beyond 2^32 s"), nullptr) << why;
	ASSERT_EQ(fc__vmc_time_at(&s, FC_VMC_COUNTER_X86_TSC, s.counter_value + two31s - 24000000, &utc, &err, why,
				  sizeof(why)),
		  0)
		<< why;
	EXPECT_GE(err, (int64_t)((1ull << 31) - 1) * SEC);
	// rates: a period error of 2^63 units per tick, and CLOCK_REALTIME stepping 200 days between two samples
	// 1 ms apart: both saturate, the growth stays positive
	fc_vmc v{};
	v.snap = vm_line();
	v.snap.counter_period_maxerror_rate_frac_sec = 1ull << 63;
	v.have_snap = 1;
	fc_bound b{};
	uint64_t c = v.snap.counter_value;
	ASSERT_EQ(fc__vmc_time_at(&v.snap, FC_VMC_COUNTER_X86_TSC, c, &utc, &err, why, sizeof(why)), -1);
	EXPECT_NE(strstr(why, "period maximum error"), nullptr) << why; // above the period itself: absurd
	v.snap.counter_period_maxerror_rate_frac_sec = v.snap.counter_period_frac_sec; // 100 %: still a rate
	ASSERT_EQ(fc__vmc_time_at(&v.snap, FC_VMC_COUNTER_X86_TSC, c, &utc, &err, why, sizeof(why)), 0) << why;
	ASSERT_EQ(fc__vmc_bound(&v, FC_VMC_COUNTER_X86_TSC, 5 * SEC, utc - 10, c, utc + 10, &b), 1) << v.why;
	const int64_t day = 86400 * SEC;
	ASSERT_EQ(fc__vmc_bound(&v, FC_VMC_COUNTER_X86_TSC, 5 * SEC + MS, utc - 200 * day, c, utc - 200 * day + 10, &b), 1)
		<< v.why;
	EXPECT_GT(b.drift_ppb, 0);
	EXPECT_LE(b.drift_ppb, 3 * 1000000000000LL + (int64_t)FC_VMC_SWING_PPB);
	EXPECT_GE(fc__bound_half_at(&b, 5 * SEC + 2 * MS), b.half_ns);
	// a sample whose CLOCK_REALTIME bracket spans more than a second (preempted) is refused
	EXPECT_EQ(fc__vmc_bound(&v, FC_VMC_COUNTER_X86_TSC, 6 * SEC, utc, c, utc + 2 * SEC, &b), 0);
	EXPECT_NE(strstr(v.why, "bracket"), nullptr) << v.why;
}

} // namespace
