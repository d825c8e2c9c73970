// fastclock unit tests — the ClockBound source (src/bound/clockbound.c) over segments the tests write as
// clock-bound-d's writer does, and TrueTime on the global clock with its bound from such a segment.
#include <gtest/gtest.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <string>

#include "bound/clockbound.h"
#include "bound_fixtures.h"
#include "fastclock.h"
#include "state.h" // fc__global_clock()->init_state: has this process's clock read its environment yet
#include "track.h" // FC_TRACK_HIST

namespace {

TEST(ClockBound, fresh_segment_with_unknown_status_and_no_as_of_promises_nothing)
{
	Segment g(tmpdir());
	g.s.clock_status = FC_CB_UNKNOWN;
	g.write();
	fc_cb cb;
	fc_bound b{};
	ASSERT_EQ(fc__cb_open(&cb, g.path.c_str(), &b, 0), 0) << b.last_error;
	EXPECT_EQ(fc__cb_poll(&cb, 5 * SEC, nullptr, &b), FC_SYNC_UNKNOWN) << b.reason;
	fc__cb_close(&cb);
}

TEST(ClockBound, synchronized_bound_grows_at_max_drift_like_the_client)
{
	Segment g(tmpdir());
	g.s.bound_nsec = 10000;
	g.set_as_of(100 * SEC, 1100 * SEC);
	g.write();
	fc_cb cb;
	fc_bound b{};
	ASSERT_EQ(fc__cb_open(&cb, g.path.c_str(), &b, 0), 0) << b.last_error;
	EXPECT_EQ(fc__cb_poll(&cb, 102 * SEC, nullptr, &b), FC_SYNC_SYNCHRONIZED) << b.reason;
	EXPECT_EQ(b.center_ns, 0);
	EXPECT_EQ(fc__bound_half_at(&b, 102 * SEC), 12000); // 10 us + 2 s at 1 ppm (the client's own unit test)
	fc__cb_close(&cb);
}

TEST(ClockBound, stopped_daemon_turns_free_running_after_5s_and_unknown_past_void_after)
{
	// a short-lived segment: void_after 8 s after as_of (the daemon writes 1000 s)
	Segment g(tmpdir());
	g.s.bound_nsec = 50000;
	g.set_as_of(100 * SEC, 108 * SEC);
	g.write();
	fc_cb cb;
	fc_bound b{};
	ASSERT_EQ(fc__cb_open(&cb, g.path.c_str(), &b, 0), 0);
	EXPECT_EQ(fc__cb_poll(&cb, 104 * SEC, nullptr, &b), FC_SYNC_SYNCHRONIZED);
	EXPECT_EQ(fc__cb_poll(&cb, 106 * SEC, nullptr, &b), FC_SYNC_FREE_RUNNING) << b.reason;
	EXPECT_EQ(fc__cb_poll(&cb, 108 * SEC, nullptr, &b), FC_SYNC_UNKNOWN) << b.reason;
	EXPECT_NE(strstr(b.reason, "void_after"), nullptr) << b.reason;
	fc__cb_close(&cb);
}

TEST(ClockBound, disruption_marker_bump_is_disrupted_until_a_newer_update)
{
	Segment g(tmpdir());
	g.set_as_of(100 * SEC, 1100 * SEC);
	g.write();
	fc_cb cb;
	fc_bound b{};
	ASSERT_EQ(fc__cb_open(&cb, g.path.c_str(), &b, 0), 0);
	EXPECT_EQ(fc__cb_poll(&cb, 100 * SEC, nullptr, &b), FC_SYNC_SYNCHRONIZED);
	g.s.disruption_marker = 7;
	g.update();
	EXPECT_EQ(fc__cb_poll(&cb, 100 * SEC + MS, nullptr, &b), FC_SYNC_DISRUPTED) << b.reason;
	EXPECT_EQ(fc__cb_poll(&cb, 100 * SEC + 2 * MS, nullptr, &b), FC_SYNC_DISRUPTED); // same snapshot
	g.set_as_of(101 * SEC, 1101 * SEC); // the daemon's next bound, computed after the disruption
	g.update();
	EXPECT_EQ(fc__cb_poll(&cb, 101 * SEC, nullptr, &b), FC_SYNC_SYNCHRONIZED) << b.reason;
	fc__cb_close(&cb);
}

TEST(ClockBound, marker_behind_vmclock_is_unknown_when_the_daemon_watches_vmclock)
{
	Segment g(tmpdir());
	g.set_as_of(100 * SEC, 1100 * SEC);
	g.s.disruption_support = 1;
	g.s.disruption_marker = 3;
	g.write();
	fc_cb cb;
	fc_bound b{};
	uint64_t vm = 4;
	ASSERT_EQ(fc__cb_open(&cb, g.path.c_str(), &b, 0), 0);
	EXPECT_EQ(fc__cb_poll(&cb, 100 * SEC, &vm, &b), FC_SYNC_UNKNOWN) << b.reason;
	vm = 3;
	EXPECT_EQ(fc__cb_poll(&cb, 100 * SEC, &vm, &b), FC_SYNC_SYNCHRONIZED) << b.reason;
	fc__cb_close(&cb);
}

TEST(ClockBound, update_in_progress_keeps_the_last_consistent_snapshot)
{
	Segment g(tmpdir());
	g.s.bound_nsec = 10000;
	g.set_as_of(100 * SEC, 1100 * SEC);
	g.write();
	fc_cb cb;
	fc_bound b{};
	ASSERT_EQ(fc__cb_open(&cb, g.path.c_str(), &b, 0), 0);
	fc__cb_poll(&cb, 100 * SEC, nullptr, &b);
	g.s.generation = (uint16_t)(g.s.generation + 1); // odd: the writer is half way through
	g.s.bound_nsec = 999999999;
	g.write();
	fc__cb_poll(&cb, 100 * SEC, nullptr, &b);
	EXPECT_EQ(b.half_ns, 10000);
	fc__cb_close(&cb);
}

TEST(ClockBound, malformed_segments_are_refused_or_unknown_with_the_value_named)
{
	std::string d = tmpdir();
	Segment g(d);
	g.s.magic[0] = 0xdeadbeef;
	g.write();
	fc_cb cb;
	fc_bound b{};
	EXPECT_EQ(fc__cb_open(&cb, g.path.c_str(), &b, 0), -1);
	EXPECT_NE(strstr(b.last_error, g.path.c_str()), nullptr) << b.last_error;
	EXPECT_NE(strstr(b.last_error, "0xdeadbeef"), nullptr) << b.last_error;
	Segment h(d);
	h.s.max_drift_ppb = 1000000000u;
	h.set_as_of(SEC, 10 * SEC);
	h.write();
	ASSERT_EQ(fc__cb_open(&cb, h.path.c_str(), &b, 0), 0);
	EXPECT_EQ(fc__cb_poll(&cb, 2 * SEC, nullptr, &b), FC_SYNC_UNKNOWN);
	EXPECT_NE(strstr(b.reason, "1000000000"), nullptr) << b.reason;
	fc__cb_close(&cb);
	EXPECT_EQ(fc__cb_open(&cb, (d + "/absent").c_str(), &b, 0), -1);
	EXPECT_NE(strstr(b.last_error, "absent"), nullptr) << b.last_error;
}

// ---- TrueTime on the global clock, its bound from a ClockBound segment the test writes (1 ms, fresh) --------
int64_t clock_ns(clockid_t id)
{
	timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * SEC + ts.tv_nsec;
}

TEST(TrueTime, after_before_and_commit_wait_follow_the_interval)
{
	// The global clock reads FASTCLOCK_BOUND_SOURCE and _CLOCKBOUND_PATH at the process's first call: in a process
	// where another test called first (the whole binary run at once), the segment below would never be its source.
	// ctest runs each test in a process of its own, where this one calls first.
	if (__atomic_load_n(&fc__global_clock()->init_state, __ATOMIC_ACQUIRE) != 0)
		GTEST_SKIP() << "the global clock was initialised by an earlier test of this process: run this test alone "
				"(--gtest_filter=TrueTime.*, or ctest)";
	std::string d = tmpdir();
	Segment g(d);
	int64_t now = clock_ns(CLOCK_MONOTONIC_COARSE);
	g.s.bound_nsec = 1 * MS;
	g.set_as_of(now, now + 1000 * SEC);
	g.write();
	setenv("FASTCLOCK_BOUND_SOURCE", "clockbound", 1);
	setenv("FASTCLOCK_CLOCKBOUND_PATH", g.path.c_str(), 1);
	fc_init();
	// The writer opens the source on its first bound and the tracker vouches once its history is full
	// (FC_TRACK_HIST re-anchors): judged by the library's re-anchors, not the wall clock. The loop's own count
	// stops a library that never re-anchors (the kernel backend publishes no counter re-anchors).
	fc_interval iv;
	struct fc_status st;
	fc_status(&st);
	const uint64_t r0 = st.reanchors;
	for (int i = 0; i < 5000 && (fc_real_bounded(&iv), iv.status != FC_SYNC_SYNCHRONIZED); i++) {
		fc_status(&st);
		if (st.reanchors >= r0 + 8 * FC_TRACK_HIST)
			break;
		usleep(2000); // the next read re-anchors (the default period is shorter)
	}
	ASSERT_EQ(iv.status, FC_SYNC_SYNCHRONIZED) << "after " << st.reanchors - r0 << " re-anchors";
	fc_status(&st);
	EXPECT_STREQ(st.bound_source, "clockbound") << st.bound_why;
	EXPECT_GE(iv.latest_ns - iv.earliest_ns, 2 * MS); // the segment's 1 ms on each side
	// Within the bound (1 ms each side) is judged on reads made within 0.5 ms of r, as CLOCK_REALTIME read
	// around them shows; an attempt preempted longer says nothing and is made again (at most 1000).
	int64_t r = 0, r2 = 0;
	bool within_r = false, within_r10 = false, before_r10 = false;
	for (int i = 0; i < 1000 && (i == 0 || r2 - r > MS / 2); i++) {
		r = clock_ns(CLOCK_REALTIME);
		within_r = fc_real_after(r);
		within_r10 = fc_real_after(r + 10 * MS);
		before_r10 = fc_real_before(r + 10 * MS);
		r2 = clock_ns(CLOCK_REALTIME);
	}
	if (r2 - r <= MS / 2) {
		EXPECT_FALSE(within_r) << "within the bound: not certainly past";
		EXPECT_FALSE(within_r10);
		EXPECT_TRUE(before_r10);
	} else {
		fprintf(stderr, "every attempt preempted for more than 0.5 ms: 'within the bound' not judged\n");
	}
	EXPECT_TRUE(fc_real_after(r - 10 * MS)); // time passing only makes these truer
	EXPECT_FALSE(fc_real_before(r + 200000)); // 0.2 ms ahead: within the bound
	EXPECT_FALSE(fc_real_before(r - 10 * MS));
	int64_t t = clock_ns(CLOCK_REALTIME) + 5 * MS, m0 = clock_ns(CLOCK_MONOTONIC);
	ASSERT_EQ(fc_commit_wait(t, SEC), 0);
	// t is certainly past: the clock is at least t + the bound (1 ms) on return, so the wait took >= 6 ms
	EXPECT_GT(clock_ns(CLOCK_REALTIME) - MS, t);
	EXPECT_GE(clock_ns(CLOCK_MONOTONIC) - m0, 6 * MS - 100000);
	errno = 0;
	EXPECT_EQ(fc_commit_wait(clock_ns(CLOCK_REALTIME) + SEC, 2 * MS), -1);
	EXPECT_EQ(errno, ETIMEDOUT);
	EXPECT_EQ(fc_commit_wait(0, -1), -1);
	EXPECT_EQ(errno, EINVAL);
}

} // namespace
