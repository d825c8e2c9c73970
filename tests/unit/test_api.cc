// The public API on this machine, against the kernel's clocks. Bounds are generous (20 us): exact
// agreement figures belong to the benchmark and docs/ACCURACY.md; these catch wrong clocks, not noise.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include <fastclock.h>
#include <fastclock.hpp>

namespace {

constexpr int64_t kBound = 20000;

int64_t kns(clockid_t id)
{
	timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

TEST(Api, every_precise_clock_lies_within_the_kernel_bracket)
{
	struct Case {
		const char *name;
		int64_t (*fn)();
		clockid_t id;
	} cases[] = {{"fc_mono_ns", fc_mono_ns, CLOCK_MONOTONIC},
		     {"fc_mono_ns_relaxed", fc_mono_ns_relaxed, CLOCK_MONOTONIC},
		     {"fc_real_ns", fc_real_ns, CLOCK_REALTIME},
		     {"fc_real_ns_relaxed", fc_real_ns_relaxed, CLOCK_REALTIME}};
	for (auto &c : cases)
		for (int i = 0; i < 20000; i++) {
			int64_t k1 = kns(c.id), v = c.fn(), k2 = kns(c.id);
			ASSERT_GE(v, k1 - kBound) << c.name;
			ASSERT_LE(v, k2 + kBound) << c.name;
		}
}

TEST(Api, coarse_clocks_are_recent_and_never_ahead)
{
	fc_init();
	int64_t prev = 0;
	for (int i = 0; i < 20000; i++) {
		// Never ahead of a precise read taken after it (one taken before may be older: the updater
		// stores fresh precise values meanwhile).
		int64_t c = fc_mono_coarse_ns();
		int64_t m = fc_mono_ns();
		ASSERT_LE(c, m);
		ASSERT_GE(c, prev);
		prev = c;
	}
	struct fc_status st{};
	fc_status(&st);
	// Precise reads keep re-anchoring, so coarse is within a few periods.
	EXPECT_GE(fc_mono_coarse_ns(), fc_mono_ns() - 10 * st.period_ns - kBound);
	EXPECT_NEAR((double)fc_real_coarse_ns(), (double)kns(CLOCK_REALTIME), 10.0 * st.period_ns + kBound);
}

TEST(Api, ticks_convert_later_to_the_time_they_were_taken)
{
	for (int i = 0; i < 1000; i++) {
		int64_t k1 = kns(CLOCK_MONOTONIC);
		uint64_t t = fc_ticks();
		int64_t k2 = kns(CLOCK_MONOTONIC);
		int64_t r1 = kns(CLOCK_REALTIME);
		uint64_t t2 = fc_ticks_relaxed();
		int64_t r2 = kns(CLOCK_REALTIME);
		// Convert later, after other reads (and possibly re-anchors).
		for (int j = 0; j < 100; j++)
			(void)fc_mono_ns();
		int64_t m = fc_ticks_to_mono_ns(t), r = fc_ticks_to_real_ns(t2);
		ASSERT_GE(m, k1 - kBound);
		ASSERT_LE(m, k2 + kBound);
		ASSERT_GE(r, r1 - kBound);
		ASSERT_LE(r, r2 + kBound);
	}
}

TEST(Api, clock_gettime_dropin_serves_every_id_like_the_kernel)
{
	const clockid_t ids[] = {CLOCK_REALTIME,	 CLOCK_MONOTONIC,	  CLOCK_MONOTONIC_RAW,
				 CLOCK_REALTIME_COARSE,	 CLOCK_MONOTONIC_COARSE, CLOCK_BOOTTIME,
				 CLOCK_TAI,		 CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID};
	for (clockid_t id : ids) {
		timespec a, b, c;
		ASSERT_EQ(clock_gettime(id, &a), 0);
		ASSERT_EQ(fc_clock_gettime(id, &b), 0) << "id " << id;
		ASSERT_EQ(clock_gettime(id, &c), 0);
		int64_t na = a.tv_sec * 1000000000ll + a.tv_nsec, nb = b.tv_sec * 1000000000ll + b.tv_nsec,
			nc = c.tv_sec * 1000000000ll + c.tv_nsec;
		int64_t slack = (id == CLOCK_REALTIME_COARSE || id == CLOCK_MONOTONIC_COARSE) ? 20000000 : kBound;
		EXPECT_GE(nb, na - slack) << "id " << id;
		EXPECT_LE(nb, nc + slack) << "id " << id;
		EXPECT_GE(b.tv_nsec, 0);
		EXPECT_LT(b.tv_nsec, 1000000000);
	}
}

TEST(Api, clock_gettime_dropin_fails_like_the_kernel)
{
	timespec ts;
	errno = 0;
	EXPECT_EQ(fc_clock_gettime(CLOCK_MONOTONIC, nullptr), -1);
	EXPECT_EQ(errno, EFAULT);
	errno = 0;
	EXPECT_EQ(fc_clock_gettime((clockid_t)12345, &ts), -1);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(fc_clock_gettime((clockid_t)-1000, &ts), -1);
	EXPECT_EQ(errno, EINVAL);
	// Both wrong: the kernel checks the id first (EINVAL), whatever the pointer.
	for (clockid_t bad : {(clockid_t)16, (clockid_t)17, (clockid_t)12345, (clockid_t)-1000}) {
		errno = 0;
		EXPECT_EQ(fc_clock_gettime(bad, nullptr), -1);
		EXPECT_EQ(errno, EINVAL) << "id " << bad;
		errno = 0;
		EXPECT_EQ(syscall(SYS_clock_gettime, bad, nullptr), -1);
		EXPECT_EQ(errno, EINVAL) << "the kernel itself, id " << bad;
	}
	// A valid id the inline path does not serve, with a NULL pointer: EFAULT, not a crash.
	errno = 0;
	EXPECT_EQ(fc_clock_gettime(CLOCK_BOOTTIME, nullptr), -1);
	EXPECT_EQ(errno, EFAULT);
}

// The drop-ins read the hand's seconds + nanoseconds anchors, not fc_*_ns: each must lie between the ns reads
// made just before and after it (ordered reads, one thread), at a 1 s period (about half the reads carry into
// the seconds), the default period, and 1 us (re-anchors, slow paths and hand switches all the time).
TEST(Api, dropins_lie_between_the_ns_reads_around_them_at_every_period)
{
	for (int64_t period : {1000000000ll, 1000000ll, 1000ll}) {
		ASSERT_EQ(fc_set_period_ns(period), 0);
		long bad_mono = 0, bad_real = 0, bad_tv = 0;
		for (int i = 0; i < 200000; i++) {
			timespec ts;
			timeval tv;
			const int64_t a = fc_mono_ns();
			ASSERT_EQ(fc_clock_gettime(CLOCK_MONOTONIC, &ts), 0);
			const int64_t b = fc_mono_ns(), m = ts.tv_sec * 1000000000ll + ts.tv_nsec;
			bad_mono += m < a || m > b || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000;
			const int64_t ra = fc_real_ns();
			ASSERT_EQ(fc_clock_gettime(CLOCK_REALTIME, &ts), 0);
			const int64_t rb = fc_real_ns(), r = ts.tv_sec * 1000000000ll + ts.tv_nsec;
			bad_real += r < ra || r > rb || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000;
			const int64_t ua = fc_real_ns() / 1000;
			ASSERT_EQ(fc_gettimeofday(&tv, nullptr), 0);
			const int64_t ub = fc_real_ns() / 1000, u = tv.tv_sec * 1000000ll + tv.tv_usec;
			bad_tv += u < ua || u > ub || tv.tv_usec < 0 || tv.tv_usec >= 1000000;
		}
		EXPECT_EQ(bad_mono, 0) << "period " << period;
		EXPECT_EQ(bad_real, 0) << "period " << period;
		EXPECT_EQ(bad_tv, 0) << "period " << period;
	}
	ASSERT_EQ(fc_set_period_ns(1000000), 0);
}

TEST(Api, gettimeofday_dropin)
{
	timeval a, b, c;
	gettimeofday(&a, nullptr);
	ASSERT_EQ(fc_gettimeofday(&b, nullptr), 0);
	gettimeofday(&c, nullptr);
	int64_t ua = a.tv_sec * 1000000ll + a.tv_usec, ub = b.tv_sec * 1000000ll + b.tv_usec,
		uc = c.tv_sec * 1000000ll + c.tv_usec;
	EXPECT_GE(ub, ua - 20);
	EXPECT_LE(ub, uc + 20);
	EXPECT_EQ(fc_gettimeofday(nullptr, nullptr), 0);
	struct timezone tz;
	EXPECT_EQ(fc_gettimeofday(&b, &tz), 0);
}

TEST(Api, bounded_reads_contain_the_kernel_time)
{
	for (int i = 0; i < 20000; i++) {
		fc_interval iv;
		int64_t k1 = kns(CLOCK_MONOTONIC);
		ASSERT_EQ(fc_mono_bounded(&iv), 0);
		int64_t k2 = kns(CLOCK_MONOTONIC);
		ASSERT_LE(iv.earliest_ns, iv.latest_ns);
		// The kernel's value at the moment of our read lies in [k1, k2]; the interval must meet it.
		ASSERT_LE(iv.earliest_ns, k2 + 1) << "bound too tight or clock ahead";
		ASSERT_GE(iv.latest_ns, k1 - 1) << "bound too tight or clock behind";
		ASSERT_GE(iv.status, FC_SYNC_UNKNOWN);
		ASSERT_LE(iv.status, FC_SYNC_DISRUPTED);
	}
	fc_interval r;
	ASSERT_EQ(fc_real_bounded(&r), 0);
	int64_t k = kns(CLOCK_REALTIME);
	EXPECT_LE(r.earliest_ns, k + kBound);
	EXPECT_GE(r.latest_ns, k - kBound);
	EXPECT_STRNE(fc_sync_name(r.status), "");
	errno = 0;
	EXPECT_EQ(fc_real_bounded(nullptr), -1);
	EXPECT_EQ(errno, EFAULT);
}

TEST(Api, status_explains_the_backend)
{
	struct fc_status st{};
	ASSERT_EQ(fc_status(&st), 0);
	EXPECT_TRUE(st.backend == FC_BACKEND_COUNTER || st.backend == FC_BACKEND_KERNEL);
	EXPECT_GT(strlen(st.reason), 10u);
	EXPECT_EQ(st.period_ns, 1000000);
	if (st.backend == FC_BACKEND_COUNTER) {
		EXPECT_GT(st.counter_hz, 1000000u);
		EXPECT_NE(st.freq_source, FC_FREQ_NONE);
		EXPECT_GE(st.reanchors, 1u);
		// The tracked rate agrees with the start-up figure to 0.1 %.
		EXPECT_NEAR((double)st.counter_hz, (double)st.counter_hz_initial, st.counter_hz_initial * 1e-3);
	}
	errno = 0;
	EXPECT_EQ(fc_status(nullptr), -1);
	EXPECT_EQ(errno, EFAULT);
}

TEST(Api, bad_arguments_are_rejected_with_einval)
{
	errno = 0;
	EXPECT_EQ(fc_set_period_ns(0), -1);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(fc_set_period_ns(2000000000ll), -1);
	EXPECT_EQ(fc_updater_start(-5), -1);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(fc_updater_start(10), -1);
	(void)fc_updater_stop(); // an earlier test of this process may have left one running (a coarse read starts it)
	errno = 0;
	EXPECT_EQ(fc_updater_stop(), -1);
	EXPECT_EQ(errno, ESRCH);
}

// The period's limits are those documented (1 us .. 1 s, src/config.h), inclusive, for the clock and for the
// updater thread: one past either end is EINVAL and changes nothing; each end is accepted, and the updater
// started at it stops again (its first wake-up at 1 s is cut short by fc_updater_stop).
TEST(Api, period_limits_are_inclusive_and_one_past_them_is_einval)
{
	struct fc_status st{};
	ASSERT_EQ(fc_set_period_ns(1000000), 0);
	for (int64_t bad : {999ll, 1000000001ll}) {
		errno = 0;
		EXPECT_EQ(fc_set_period_ns(bad), -1) << bad;
		EXPECT_EQ(errno, EINVAL) << bad;
		fc_status(&st);
		EXPECT_EQ(st.period_ns, 1000000) << bad;
		errno = 0;
		EXPECT_EQ(fc_updater_start(bad), -1) << bad;
		EXPECT_EQ(errno, EINVAL) << bad;
	}
	(void)fc_updater_stop(); // an earlier test of this process may have left one running (a coarse read starts it)
	for (int64_t good : {1000ll, 1000000000ll}) {
		EXPECT_EQ(fc_set_period_ns(good), 0) << good;
		fc_status(&st);
		EXPECT_EQ(st.period_ns, good);
		const int64_t a = fc_mono_ns(), b = fc_mono_ns();
		EXPECT_LE(a, b) << good;
		ASSERT_EQ(fc_updater_start(good), 0) << good;
		fc_status(&st);
		EXPECT_EQ(st.updater_running, 1) << good;
		EXPECT_EQ(fc_updater_stop(), 0) << good;
	}
	ASSERT_EQ(fc_set_period_ns(1000000), 0);
}

TEST(Api, updater_keeps_coarse_fresh_and_rejects_a_second_start)
{
	ASSERT_EQ(fc_updater_start(0), 0);
	errno = 0;
	EXPECT_EQ(fc_updater_start(0), -1);
	EXPECT_EQ(errno, EALREADY);
	struct fc_status st{};
	fc_status(&st);
	EXPECT_EQ(st.updater_running, 1);
	// Without any precise read, coarse time still advances.
	int64_t c0 = fc_mono_coarse_ns();
	timespec ts{0, 20000000};
	nanosleep(&ts, nullptr);
	int64_t c1 = fc_mono_coarse_ns();
	EXPECT_GT(c1, c0 + 5000000);
	timespec cts;
	EXPECT_EQ(fc_clock_gettime(CLOCK_MONOTONIC_COARSE, &cts), 0);
	EXPECT_EQ(fc_updater_stop(), 0);
	fc_status(&st);
	EXPECT_EQ(st.updater_running, 0);
	EXPECT_EQ(fc_coarse_one_load(), 0) << "no keeper: coarse reads are checked, not one load";
}

TEST(Api, set_period_changes_the_reanchor_period)
{
	ASSERT_EQ(fc_set_period_ns(500000), 0);
	struct fc_status st{};
	fc_status(&st);
	EXPECT_EQ(st.period_ns, 500000);
	for (int i = 0; i < 1000; i++)
		(void)fc_mono_ns();
	ASSERT_EQ(fc_set_period_ns(1000000), 0);
}

TEST(Api, chrono_clocks_are_drop_in)
{
	static_assert(fastclock::steady_clock::is_steady);
	static_assert(std::is_same_v<fastclock::steady_clock::duration, std::chrono::nanoseconds>);
	auto a = fastclock::steady_clock::now();
	auto s = std::chrono::steady_clock::now();
	auto b = fastclock::steady_clock::now();
	EXPECT_LE(a, b);
	EXPECT_NEAR((double)s.time_since_epoch().count(), (double)a.time_since_epoch().count(), 1e6);
	auto w = fastclock::system_clock::now();
	auto sw = std::chrono::system_clock::now();
	EXPECT_NEAR((double)std::chrono::duration_cast<std::chrono::microseconds>(
			    fastclock::system_clock::to_std(w).time_since_epoch()).count(),
		    (double)std::chrono::duration_cast<std::chrono::microseconds>(sw.time_since_epoch()).count(), 1e3);
	EXPECT_EQ(fastclock::system_clock::to_time_t(fastclock::system_clock::from_time_t(12345)), 12345);
	fc_init();
	EXPECT_GT(fastclock::coarse_steady_clock::now().time_since_epoch().count(), 0);
}

// The time points are std::chrono's own: what a program does with std::chrono::system_clock::now() (to_time_t,
// comparison, subtraction, a std::chrono::time_point variable) it does with fastclock's without a cast.
TEST(Api, chrono_time_points_are_the_std_clocks_ones)
{
	static_assert(std::is_same_v<fastclock::system_clock::time_point, std::chrono::system_clock::time_point>);
	static_assert(std::is_same_v<fastclock::steady_clock::time_point, std::chrono::steady_clock::time_point>);
	static_assert(std::is_same_v<fastclock::coarse_steady_clock::time_point, std::chrono::steady_clock::time_point>);
	std::chrono::system_clock::time_point before = std::chrono::system_clock::now();
	std::time_t t = std::chrono::system_clock::to_time_t(fastclock::system_clock::now());
	std::chrono::system_clock::time_point after = std::chrono::system_clock::now();
	EXPECT_GE(t, std::chrono::system_clock::to_time_t(before) - 1);
	EXPECT_LE(t, std::chrono::system_clock::to_time_t(after) + 1);
	// comparison and difference across the two clocks: within a second (the two clocks agree to microseconds;
	// the margin is for a preempted test, not for the clocks)
	auto fw = fastclock::system_clock::now();
	auto sw = std::chrono::system_clock::now();
	EXPECT_TRUE(fw < sw + std::chrono::seconds(1) && sw < fw + std::chrono::seconds(1));
	std::chrono::steady_clock::time_point deadline = fastclock::steady_clock::now() + std::chrono::seconds(1);
	EXPECT_LT(std::chrono::steady_clock::now(), deadline);
	EXPECT_LT(deadline - std::chrono::steady_clock::now(), std::chrono::seconds(2));
	EXPECT_EQ(fastclock::system_clock::to_time_t(std::chrono::system_clock::from_time_t(12345)), 12345);
}

} // namespace

TEST(Api, ns_split_rounds_towards_minus_infinity_like_timespec)
{
	struct { int64_t ns; int64_t s, sub; } cases[] = {
		{0, 0, 0}, {1, 0, 1}, {999999999, 0, 999999999}, {1000000000, 1, 0}, {-1, -1, 999999999},
		{-999999999, -1, 1}, {-1000000000, -1, 0}, {-1000000001, -2, 999999999},
		{INT64_MAX, INT64_MAX / 1000000000, INT64_MAX % 1000000000},
		{INT64_MIN, INT64_MIN / 1000000000 - 1, INT64_MIN % 1000000000 + 1000000000},
	};
	for (auto &c : cases) {
		int64_t s, sub, us;
		fc__ns_split(c.ns, &s, &sub, 1);
		EXPECT_EQ(s, c.s) << c.ns;
		EXPECT_EQ(sub, c.sub) << c.ns;
		fc__ns_split(c.ns, &s, &us, 1000);
		EXPECT_EQ(us, c.sub / 1000) << c.ns;
	}
}
