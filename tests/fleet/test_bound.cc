// fastclock fleet tests — the bound sources alone, over segments, files, sockets and /proc trees the tests write.
// Each test states the situation and the verdict the source must give.
#include <gtest/gtest.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timex.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "bound/bound.h"
#include "bound_fixtures.h"
#include "fastclock.h"

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

// ---- chronyd's command protocol ----------------------------------------------------------------------------
void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}
void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8), p[1] = (uint8_t)v; }
// candm's Float: coef * 2^(exp - 25); exp chosen so coef keeps 24 bits of precision.
uint32_t put_float(double x)
{
	int e = 0;
	double a = x < 0 ? -x : x;
	while (a >= (1 << 24) && e < 63)
		a /= 2, e++;
	while (a != 0 && a < (1 << 23) && e > -64)
		a *= 2, e--;
	int32_t c = (int32_t)(x < 0 ? -a : a);
	return ((uint32_t)(e + 25) & 0x7f) << 25 | ((uint32_t)c & 0x1ffffff);
}

size_t tracking_reply(uint8_t *buf, uint32_t seq, double corr, double delay, double disp, int leap)
{
	memset(buf, 0, 104);
	buf[0] = 6, buf[1] = 2;
	put16(buf + 4, 33), put16(buf + 6, 5), put32(buf + 16, seq);
	uint8_t *d = buf + 28;
	put16(d + 24, 1), put16(d + 26, (uint16_t)leap);
	put32(d + 32, 1700000000);
	put32(d + 40, put_float(corr)), put32(d + 64, put_float(delay)), put32(d + 68, put_float(disp));
	put32(d + 72, put_float(2.0));
	return 104;
}

TEST(Chrony, requests_are_padded_to_their_reply_length)
{
	uint8_t buf[512];
	EXPECT_EQ(fc__chrony_request(9, buf, sizeof(buf)), 104u); // 28-byte reply header + RPY_Tracking (76)
	EXPECT_EQ(buf[0], 6);
	EXPECT_EQ(buf[5], 33);
	EXPECT_EQ(fc__chrony_request_source(9, 3, buf, sizeof(buf)), 76u); // + RPY_Source_Data (48)
	EXPECT_EQ(buf[5], 15);
	EXPECT_EQ(buf[23], 3); // the index, big endian after the 20-byte header
	EXPECT_EQ(fc__chrony_request_count(9, buf, sizeof(buf)), 32u); // + RPY_N_Sources (4)
	EXPECT_EQ(buf[5], 14);
}

TEST(Chrony, interval_covers_the_uncorrected_and_corrected_clock_and_the_root_distance)
{
	uint8_t buf[512];
	char err[160];
	fc_chrony_tracking t;
	fc_bound b{};
	tracking_reply(buf, 5, 0.050, 0.000020, 0.000010, 0);
	ASSERT_EQ(fc__chrony_decode(buf, 104, 5, &t, err, sizeof(err)), 0) << err;
	EXPECT_NEAR(t.correction, 0.050, 1e-8);
	EXPECT_EQ(fc__chrony_eval(&t, nullptr, 0, &b), FC_SYNC_SYNCHRONIZED) << b.reason;
	// [0, 50 ms] widened by 20 us / 2 + 10 us
	EXPECT_LE(b.center_ns - b.half_ns, -20000 + 2);
	EXPECT_GE(b.center_ns + b.half_ns, 50 * MS + 20000 - 2);
	EXPECT_LE(b.half_ns, 25 * MS + 20000 + 4);
	// the newest measurement says the source is 30 ms further ahead: the interval reaches it
	fc_chrony_source sd{0, 0377, 1, -0.030, 0.0001, 0, {}};
	EXPECT_EQ(fc__chrony_eval(&t, &sd, 0, &b), FC_SYNC_UNKNOWN) << b.reason;
	EXPECT_GE(b.center_ns + b.half_ns, 80 * MS + 100000);
}

// A measurement that disagrees with the tracking estimate by more than root distance + its own error is a step
// chronyd has not tracked yet: its filter may hand on a mix of both sides, so nothing is promised from that
// reply on, and the promise is back once they agree again.
TEST(Chrony, a_measurement_beyond_the_estimates_errors_stops_the_synchronized_claim)
{
	uint8_t buf[512];
	char err[160];
	fc_chrony_tracking t;
	fc_bound b{};
	tracking_reply(buf, 5, 0.050, 0.000020, 0.000010, 0); // root distance 20 us / 2 + 10 us = 20 us
	ASSERT_EQ(fc__chrony_decode(buf, 104, 5, &t, err, sizeof(err)), 0) << err;
	struct {
		double meas, meas_err;
		int want;
	} cases[] = {
		{0.0, 0.000001, FC_SYNC_SYNCHRONIZED},       // steady
		{0.000015, 0.000004, FC_SYNC_SYNCHRONIZED},  // 15 us within 20 + 4 us
		{-0.000023, 0.000004, FC_SYNC_SYNCHRONIZED}, // either sign
		{0.000026, 0.000004, FC_SYNC_UNKNOWN},       // 26 us beyond 20 + 4 us
		{-0.000026, 0.000004, FC_SYNC_UNKNOWN},
		{-0.0138, 0.000001, FC_SYNC_UNKNOWN}, // a +30 ms step seen as 13.8 ms through chronyd's median filter
		{0.0138, 0.02, FC_SYNC_SYNCHRONIZED}, // a measurement that claims 20 ms of error agrees
	};
	for (auto &c : cases) {
		fc_chrony_source sd{0, 0377, 1, c.meas, c.meas_err, 0, {}};
		EXPECT_EQ(fc__chrony_eval(&t, &sd, 0, &b), c.want) << c.meas << " " << b.reason;
		// covered either way: the estimate and the measured point
		EXPECT_LE(b.center_ns - b.half_ns, 50 * MS - (int64_t)(c.meas * 1e9) - (int64_t)(c.meas_err * 1e9) + 2);
		EXPECT_GE(b.center_ns + b.half_ns, 50 * MS - (int64_t)(c.meas * 1e9) + (int64_t)(c.meas_err * 1e9) - 2);
		if (c.want == FC_SYNC_UNKNOWN) {
			EXPECT_NE(strstr(b.reason, "untracked step"), nullptr) << b.reason;
		}
	}
	// an unreachable source's stale measurement says nothing about now
	fc_chrony_source gone{0, 0, 1, -0.030, 0.000001, 0, {}};
	EXPECT_EQ(fc__chrony_eval(&t, &gone, 0, &b), FC_SYNC_SYNCHRONIZED) << b.reason;
}

TEST(Chrony, unsynchronised_or_not_yet_updated_chronyd_is_unknown)
{
	uint8_t buf[512];
	char err[160];
	fc_chrony_tracking t;
	fc_bound b{};
	tracking_reply(buf, 5, 0.0, 0.0, 0.0, 3);
	ASSERT_EQ(fc__chrony_decode(buf, 104, 5, &t, err, sizeof(err)), 0);
	EXPECT_EQ(fc__chrony_eval(&t, nullptr, 0, &b), FC_SYNC_UNKNOWN);
	tracking_reply(buf, 5, 0.0, 0.0, 0.0, 0);
	put32(buf + 28 + 72, 0); // last update interval 0: chronyd's first report
	ASSERT_EQ(fc__chrony_decode(buf, 104, 5, &t, err, sizeof(err)), 0);
	EXPECT_EQ(fc__chrony_eval(&t, nullptr, 0, &b), FC_SYNC_UNKNOWN) << b.reason;
}

TEST(Chrony, bad_replies_are_rejected_naming_the_field)
{
	uint8_t buf[512];
	char err[160];
	fc_chrony_tracking t;
	tracking_reply(buf, 5, 0.01, 0, 0, 0);
	EXPECT_EQ(fc__chrony_decode(buf, 104, 6, &t, err, sizeof(err)), -1);
	EXPECT_NE(strstr(err, "sequence 5"), nullptr) << err;
	EXPECT_EQ(fc__chrony_decode(buf, 60, 5, &t, err, sizeof(err)), -1);
	EXPECT_NE(strstr(err, "length 60"), nullptr) << err;
	put16(buf + 8, 2);
	EXPECT_EQ(fc__chrony_decode(buf, 104, 5, &t, err, sizeof(err)), -1);
	EXPECT_NE(strstr(err, "status 2"), nullptr) << err;
}

// A datagram socket bound at path: a fake chronyd's.
int bind_dgram(const std::string &path)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	sockaddr_un a{};
	a.sun_family = AF_UNIX;
	strcpy(a.sun_path, path.c_str());
	EXPECT_EQ(bind(fd, (sockaddr *)&a, sizeof(a)), 0) << path;
	return fd;
}

// A fake chronyd: a datagram socket at a path, answered by the test between two polls.
TEST(Chrony, poll_never_blocks_collects_the_reply_later_and_times_out_a_silent_daemon)
{
	std::string d = tmpdir(), path = d + "/chronyd.sock";
	int srv = bind_dgram(path);
	fc_chrony ch;
	fc_bound b{};
	ASSERT_EQ(fc__chrony_open(&ch, path.c_str(), &b, 0), 0) << b.last_error;
	EXPECT_EQ(fc__chrony_poll(&ch, 1 * SEC, SEC, &b), 0); // sends, returns at once
	uint8_t buf[512];
	sockaddr_un from{};
	socklen_t fl = sizeof(from);
	ssize_t n = recvfrom(srv, buf, sizeof(buf), 0, (sockaddr *)&from, &fl);
	ASSERT_EQ(n, 104);
	uint32_t seq = (uint32_t)buf[8] << 24 | buf[9] << 16 | buf[10] << 8 | buf[11];
	EXPECT_EQ(fc__chrony_poll(&ch, 1 * SEC + MS, SEC, &b), 0); // nothing yet: no wait
	size_t len = tracking_reply(buf, seq, -0.002, 0.0001, 0.00005, 0);
	ASSERT_EQ(sendto(srv, buf, len, 0, (sockaddr *)&from, fl), (ssize_t)len);
	EXPECT_EQ(fc__chrony_poll(&ch, 1 * SEC + 2 * MS, SEC, &b), 1);
	EXPECT_EQ(b.status, FC_SYNC_SYNCHRONIZED) << b.reason;
	EXPECT_EQ(b.as_of_ns, 1 * SEC); // as of the request
	EXPECT_LE(b.center_ns - b.half_ns, -2 * MS - 100000);
	// the source-data request is left unanswered: after a second it counts as lost, with the path named
	fc__chrony_poll(&ch, 2 * SEC + 2 * MS, SEC, &b);
	EXPECT_NE(strstr(b.last_error, "no reply"), nullptr) << b.last_error;
	EXPECT_NE(strstr(b.last_error, path.c_str()), nullptr) << b.last_error;
	fc__chrony_close(&ch);
	close(srv);
}

// A fake chronyd that answers every request of a round, as the test sets its sources: tracking (a 50 ms
// correction), the count (`count`, normally the list's size) and each source's state and newest measurement;
// an index past the list gets STT_NOSUCHSOURCE, as from chronyd whose list shrank.
struct FakeSources {
	std::string path;
	int fd = -1;
	uint32_t count = 0;
	struct Src {
		int state;
		double meas;
		uint32_t addr = 0; // its IPv4 address (0: 10.0.0.index)
	};
	std::vector<Src> src;
	explicit FakeSources(const std::string &dir) : path(dir + "/chronyd.sock"), fd(bind_dgram(path)) {}
	~FakeSources() { close(fd); }
	static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]; }
	int answer() // every request waiting; returns how many source-data requests came
	{
		uint8_t buf[512];
		int asked = 0;
		for (;;) {
			sockaddr_un from{};
			socklen_t fl = sizeof(from);
			ssize_t r = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (sockaddr *)&from, &fl);
			if (r < 24)
				return asked;
			uint32_t seq = get32(buf + 8), cmd = (uint32_t)buf[4] << 8 | buf[5];
			size_t len = 0;
			if (cmd == 33) {
				len = tracking_reply(buf, seq, 0.050, 0.000020, 0.000010, 0);
			} else if (cmd == 14) {
				memset(buf, 0, 32);
				buf[0] = 6, buf[1] = 2;
				put16(buf + 4, 14), put16(buf + 6, 2), put32(buf + 16, seq), put32(buf + 28, count);
				len = 32;
			} else if (cmd == 15) {
				uint32_t i = get32(buf + 20);
				asked++;
				memset(buf, 0, 76);
				buf[0] = 6, buf[1] = 2;
				put16(buf + 4, 15), put16(buf + 6, 3), put32(buf + 16, seq);
				if (i < src.size()) {
					uint8_t *d = buf + 28;
					put32(d, src[i].addr ? src[i].addr : 0x0a000000u + i), put16(d + 16, 1); // IPADDR_INET4
					put16(d + 24, (uint16_t)src[i].state), put16(d + 30, 0377), put32(d + 32, 1);
					put32(d + 40, put_float(src[i].meas)), put32(d + 44, put_float(0.00001));
				} else {
					put16(buf + 8, 4); // STT_NOSUCHSOURCE
				}
				len = 76;
			}
			if (len)
				sendto(fd, buf, len, 0, (sockaddr *)&from, fl);
		}
	}
};

// One round: the requests, chronyd's answers, the replies taken.
int round_trip(fc_chrony *ch, FakeSources &f, int64_t at, fc_bound *b)
{
	fc__chrony_poll(ch, at, SEC, b);
	int asked = f.answer();
	fc__chrony_poll(ch, at + MS, SEC, b);
	return asked;
}

// chronyd's list holds a source it does not select (here one 500 ms off, as a `noselect` or falseticker one):
// its measurement stays out of the interval; the source chronyd selects is followed, its newest measurement in
// the interval (a reference step shows there first); while chronyd selects none, the one it selected last is
// followed; when it selects another, that one. Rounds ask for every source the count says (at most
// FC_CHRONY_MAX_SOURCES), and a source that vanished meanwhile ends the round without an error.
TEST(Chrony, the_selected_source_joins_the_interval_and_unselected_ones_never_do)
{
	std::string d = tmpdir();
	FakeSources f(d);
	f.src = {{1, -0.5}, {FC_CHRONY_SELECTED, 0.0}}; // 1: RPY_SD_ST_NONSELECTABLE
	f.count = 2;
	fc_chrony ch;
	fc_bound b{};
	ASSERT_EQ(fc__chrony_open(&ch, f.path.c_str(), &b, 0), 0) << b.last_error;
	// round 1: the count is not known yet, source 0 alone is asked: not selected, left out
	EXPECT_EQ(round_trip(&ch, f, 1 * SEC, &b), 1);
	EXPECT_EQ(b.status, FC_SYNC_SYNCHRONIZED) << b.reason;
	EXPECT_LE(b.half_ns, 25 * MS + 100000) << "the unselected source's 500 ms widened the interval";
	EXPECT_NE(strstr(b.reason, "no source data"), nullptr) << b.reason;
	// round 2: both; source 1 is selected and in the interval
	EXPECT_EQ(round_trip(&ch, f, 2 * SEC, &b), 2);
	EXPECT_NE(strstr(b.reason, "selected source 1"), nullptr) << b.reason;
	EXPECT_LE(b.half_ns, 25 * MS + 100000);
	// the reference steps 30 ms ahead: the selected source's newest measurement shows it
	f.src[1].meas = -0.030;
	round_trip(&ch, f, 3 * SEC, &b);
	EXPECT_GE(b.center_ns + b.half_ns, 80 * MS);
	// chronyd stops calling it selected (jittery) and selects none: still followed
	f.src[1].state = 3;
	round_trip(&ch, f, 4 * SEC, &b);
	EXPECT_GE(b.center_ns + b.half_ns, 80 * MS);
	EXPECT_NE(strstr(b.reason, "last selected source 1"), nullptr) << b.reason;
	// chronyd selects source 0 now (back to the 50 ms line): source 1 is left out
	f.src[0] = {FC_CHRONY_SELECTED, 0.0};
	round_trip(&ch, f, 5 * SEC, &b);
	EXPECT_NE(strstr(b.reason, "selected source 0"), nullptr) << b.reason;
	EXPECT_LE(b.center_ns + b.half_ns, 50 * MS + 100000);
	// the count says 3, the list has 2: index 2 is answered STT_NOSUCHSOURCE, the round ends, no error
	f.count = 3;
	round_trip(&ch, f, 6 * SEC, &b);
	b.last_error[0] = 0;
	EXPECT_EQ(round_trip(&ch, f, 7 * SEC, &b), 3);
	round_trip(&ch, f, 8 * SEC, &b);
	EXPECT_STREQ(b.last_error, "");
	EXPECT_EQ(b.as_of_ns, 8 * SEC);
	fc__chrony_close(&ch);
}

// More sources than one round asks for: rounds without the selected one move on to the next indices.
TEST(Chrony, a_selected_source_past_the_first_rounds_window_is_found)
{
	std::string d = tmpdir();
	FakeSources f(d);
	f.src.assign(2 * FC_CHRONY_MAX_SOURCES + 2, {4, 0.2}); // RPY_SD_ST_UNSELECTED, 200 ms off
	f.src[2 * FC_CHRONY_MAX_SOURCES] = {FC_CHRONY_SELECTED, -0.001};
	f.count = (uint32_t)f.src.size();
	fc_chrony ch;
	fc_bound b{};
	ASSERT_EQ(fc__chrony_open(&ch, f.path.c_str(), &b, 0), 0) << b.last_error;
	EXPECT_EQ(round_trip(&ch, f, 1 * SEC, &b), 1); // index 0: the count is not known yet
	EXPECT_EQ(round_trip(&ch, f, 2 * SEC, &b), FC_CHRONY_MAX_SOURCES); // 5..10: each round moves on by 5
	EXPECT_NE(strstr(b.reason, "no source data"), nullptr) << b.reason;
	EXPECT_EQ(round_trip(&ch, f, 3 * SEC, &b), FC_CHRONY_MAX_SOURCES); // 10..13, 0, 1, round the list
	std::string want = "selected source " + std::to_string(2 * FC_CHRONY_MAX_SOURCES);
	EXPECT_NE(strstr(b.reason, want.c_str()), nullptr) << b.reason;
	EXPECT_GE(b.center_ns + b.half_ns, 51 * MS); // its measurement: 1 ms further ahead
	EXPECT_LE(b.half_ns, 26 * MS);
	// chronyd selects another source, outside this window, and still reaches the old one (unselected now,
	// 200 ms off): the old one is followed (asked first) only until the window finds the new selection
	f.src[2 * FC_CHRONY_MAX_SOURCES] = {4, 0.2};
	f.src[3] = {FC_CHRONY_SELECTED, 0.0};
	int rounds = 0;
	want = "selected source 3";
	while (rounds < 4 && !strstr(b.reason, want.c_str()))
		round_trip(&ch, f, (4 + rounds++) * SEC, &b);
	EXPECT_NE(strstr(b.reason, want.c_str()), nullptr) << b.reason << " after " << rounds << " rounds";
	EXPECT_LE(b.center_ns + b.half_ns, 50 * MS + 100000); // the old source's 200 ms left out
	fc__chrony_close(&ch);
}

// chronyd's list changes under the source followed (a source removed before it, or a pool server replaced):
// it is known by its address, not its index. The followed source, unselected right after a reference step,
// has moved from index 1 to 0; a new source now at index 1 is never taken for it. Late replies to a round
// that timed out are dropped without an error.
TEST(Chrony, the_source_followed_is_known_by_its_address_when_the_list_changes)
{
	std::string d = tmpdir();
	FakeSources f(d);
	f.src = {{4, 0.3, 0x0a000001u}, {FC_CHRONY_SELECTED, 0.0, 0x0a000002u}};
	f.count = 2;
	fc_chrony ch;
	fc_bound b{};
	ASSERT_EQ(fc__chrony_open(&ch, f.path.c_str(), &b, 0), 0) << b.last_error;
	round_trip(&ch, f, 1 * SEC, &b);
	round_trip(&ch, f, 2 * SEC, &b);
	ASSERT_NE(strstr(b.reason, "selected source 1"), nullptr) << b.reason;
	// the step: the followed source (10.0.0.2) shows +30 ms and is no longer called selected; the source
	// before it is removed, and a new one (10.0.0.9, unselected, 400 ms off) appended
	f.src = {{3, -0.030, 0x0a000002u}, {4, -0.4, 0x0a000009u}};
	round_trip(&ch, f, 3 * SEC, &b);
	EXPECT_NE(strstr(b.reason, "last selected source 0"), nullptr) << b.reason;
	EXPECT_GE(b.center_ns + b.half_ns, 80 * MS);
	EXPECT_LE(b.center_ns + b.half_ns, 81 * MS); // not the new source's 450 ms
	// a round that times out (chronyd silent for 1 s), then its replies arrive: dropped, no error
	fc__chrony_poll(&ch, 4 * SEC, SEC, &b);
	fc__chrony_poll(&ch, 5 * SEC + MS, SEC, &b); // times out; the next round is sent
	b.last_error[0] = 0;
	f.answer(); // answers both rounds: the first's replies are late
	fc__chrony_poll(&ch, 5 * SEC + 2 * MS, SEC, &b);
	EXPECT_STREQ(b.last_error, "");
	EXPECT_EQ(b.as_of_ns, 5 * SEC + MS);
	fc__chrony_close(&ch);
}

// ---- the kernel's maxerror --------------------------------------------------------------------------------
// Decided from the kernel's state alone (tests/unit/test_bound_sources.cc has each daemon's state).
TEST(Kernel, timesyncd_style_maxerror_zero_is_never_synchronized)
{
	fc_ntp n{FC_SYNC_SYNCHRONIZED, 0, 0, 0, 0, 0};
	fc_bound b{};
	EXPECT_EQ(fc__kernel_eval(&n, 0, &b), FC_SYNC_UNKNOWN);
	EXPECT_NE(strstr(b.reason, "timesyncd"), nullptr) << b.reason;
	n.maxerror_ns = 5 * MS; // 10 s after timesyncd's write: maxerror grown, esterror still 0
	EXPECT_EQ(fc__kernel_eval(&n, 0, &b), FC_SYNC_UNKNOWN) << b.reason;
	n.esterror_ns = 100000; // chronyd's pair: esterror 100 us, maxerror 5 ms
	EXPECT_EQ(fc__kernel_eval(&n, 0, &b), FC_SYNC_SYNCHRONIZED) << b.reason;
	EXPECT_EQ(fc__bound_half_at(&b, SEC), 5 * MS + 500000); // + 500 ppm for 1 s, the kernel's rule
	n.status = STA_INS;
	fc__kernel_eval(&n, 0, &b);
	EXPECT_EQ(b.leap, FC_LEAP_INSERT);
}

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

// ---- VMClock as a time source ------------------------------------------------------------------------------
// A snapshot of a host that publishes the time of a 2.5 GHz counter (shift 4), 10 us and 10 ppm maximum errors.
constexpr long double TWO64 = 18446744073709551616.0L;
fc_vmc_snap vm_line()
{
	fc_vmc_snap s{};
	s.counter_id = FC_VMC_COUNTER_X86_TSC;
	s.time_type = FC_VMC_TIME_UTC;
	s.flags = FC_VMC_FLAG_TIME_MAXERROR_VALID | FC_VMC_FLAG_PERIOD_MAXERROR_VALID;
	s.clock_status = FC_VMC_SYNCHRONIZED;
	s.counter_period_shift = 4;
	s.counter_value = 1000000000000ull;
	s.counter_period_frac_sec = (uint64_t)(TWO64 * 16 / 2.5e9L);
	s.counter_period_maxerror_rate_frac_sec = s.counter_period_frac_sec / 100000; // 10 ppm
	s.time_sec = 1700000000;
	s.time_frac_sec = (uint64_t)(0.3L * TWO64);
	s.time_maxerror_nanosec = 10000;
	return s;
}

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

// ---- selection ---------------------------------------------------------------------------------------------
TEST(Select, bad_source_name_is_reported_with_the_value)
{
	fc_bound_config c;
	char err[200] = "";
	EXPECT_EQ(fc__bound_config_parse("sundial", nullptr, nullptr, nullptr, &c, err, sizeof(err)), 1);
	EXPECT_NE(strstr(err, "FASTCLOCK_BOUND_SOURCE=sundial"), nullptr) << err;
	EXPECT_EQ(c.mode, -1); // auto
	EXPECT_STREQ(c.clockbound, FC_CLOCKBOUND_PATH);
	EXPECT_EQ(fc__bound_config_parse("kernel", "/x/shm", "/x/sock", nullptr, &c, err, sizeof(err)), 0);
	EXPECT_EQ(c.mode, FC_BOUND_KERNEL);
	EXPECT_STREQ(c.chrony, "/x/sock");
}

int fake_ntp_maxerror0(void *, fc_ntp *out)
{
	*out = fc_ntp{FC_SYNC_SYNCHRONIZED, 0, 0, 0, 0, 0}; // what the kernel shows right after a timesyncd poll
	return out->sync;
}

// A bounder over a VMClock page and injected reads (the counter, CLOCK_REALTIME).
struct FakeHost {
	uint64_t counter = 0;
	int64_t real = 0;
	static uint64_t read_counter(void *p) { return ((FakeHost *)p)->counter; }
	static int64_t read_real(void *p) { return ((FakeHost *)p)->real; }
};

void vm_page(VmFile &f, const fc_vmc_snap &s)
{
	auto put = [&](int off, uint64_t v, int n) {
		for (int i = 0; i < n; i++)
			f.m[off + i] = (uint8_t)(v >> (8 * i));
	};
	f.m[10] = (uint8_t)s.counter_id, f.m[11] = (uint8_t)s.time_type;
	put(12, s.seq, 4), put(16, s.disruption_marker, 8);
	put(24, s.flags, 8);
	put(36, (uint16_t)s.tai_offset_sec, 2);
	f.m[34] = (uint8_t)s.clock_status;
	f.m[39] = (uint8_t)s.counter_period_shift;
	put(40, s.counter_value, 8), put(48, s.counter_period_frac_sec, 8);
	put(64, s.counter_period_maxerror_rate_frac_sec, 8), put(72, s.time_sec, 8), put(80, s.time_frac_sec, 8);
	put(96, s.time_maxerror_nanosec, 8);
	f.write();
}

// A bounder (FASTCLOCK_BOUND_SOURCE=mode, nullptr: auto) over the VMClock page f, no ClockBound segment, no
// chronyd, the kernel's maxerror written by chronyd (0); its sample reads host's counter and CLOCK_REALTIME.
// The host is set 2.5 ms of a 2.5 GHz counter past the page's counter_value, CLOCK_REALTIME 3 ms behind
// VMClock's time there; returns VMClock's maximum error at that count.
int64_t start_vm_bounder(fc_bounder *bd, const char *mode, const std::string &d, const VmFile &f, const fc_vmc_snap &s,
			 FakeHost *host)
{
	int64_t utc = 0, err = 0;
	char why[FC_BOUND_TEXT] = "", cerr[200] = "";
	fc_bound_config c;
	host->counter = s.counter_value + 2500000;
	EXPECT_EQ(fc__vmc_time_at(&s, FC_VMC_COUNTER_X86_TSC, host->counter, &utc, &err, why, sizeof(why)), 0) << why;
	host->real = utc - 3 * MS;
	EXPECT_EQ(fc__bound_config_parse(mode, (d + "/none").c_str(), (d + "/none.sock").c_str(), f.path.c_str(), &c,
					 cerr, sizeof(cerr)),
		  0)
		<< cerr;
	*bd = fc_bounder{};
	bd->ntp = fake_ntp_maxerror0;
	bd->counter = FakeHost::read_counter, bd->realtime = FakeHost::read_real, bd->clk_ctx = host;
	bd->vm_counter = FC_VMC_COUNTER_X86_TSC;
	fc__bounder_init(bd, &c, 0);
	return err;
}

// Auto mode serves VMClock while its page gives the time of the counter, and the next source (here the kernel)
// when it does not; FASTCLOCK_BOUND_SOURCE=vmclock is UNKNOWN then, saying why. The status names the source.
TEST(Select, vmclock_gives_the_time_while_it_can_and_the_next_source_serves_otherwise)
{
	std::string d = tmpdir();
	VmFile f(d);
	fc_vmc_snap s = vm_line();
	vm_page(f, s);
	FakeHost host;
	for (const char *mode : {(const char *)nullptr, "vmclock"}) {
		fc_bounder bd;
		const int64_t err = start_vm_bounder(&bd, mode, d, f, s, &host);
		const fc_bound *b = fc__bounder_poll(&bd, SEC, SEC);
		EXPECT_STREQ(fc__bounder_name(&bd), "vmclock") << (mode ? mode : "auto");
		EXPECT_EQ(b, fc__bounder_current(&bd));
		EXPECT_EQ(b->status, FC_SYNC_SYNCHRONIZED) << b->reason;
		EXPECT_EQ(b->center_ns, 3 * MS);
		EXPECT_EQ(b->half_ns, err + 1);
		// the host stops vouching: auto serves the kernel's maxerror (chronyd writes it: maxerror 0 here),
		// the explicit mode promises nothing, and says why
		f.m[34] = FC_VMC_UNRELIABLE;
		f.write();
		b = fc__bounder_poll(&bd, 2 * SEC, 2 * SEC);
		EXPECT_EQ(b, fc__bounder_current(&bd)); // fc_status reports what the reads use
		if (!mode) {
			EXPECT_STREQ(fc__bounder_name(&bd), "kernel");
			EXPECT_EQ(b->center_ns, 0);
			EXPECT_NE(b->half_ns, err + 1);
		} else {
			EXPECT_STREQ(fc__bounder_name(&bd), "vmclock");
			EXPECT_EQ(b->status, FC_SYNC_UNKNOWN);
			EXPECT_NE(strstr(b->reason, "clock_status 4"), nullptr) << b->reason;
		}
		f.m[34] = FC_VMC_SYNCHRONIZED;
		f.write();
		EXPECT_EQ(fc__bounder_poll(&bd, 3 * SEC, 3 * SEC)->center_ns, 3 * MS);
		EXPECT_STREQ(fc__bounder_name(&bd), "vmclock");
		fc__bounder_close(&bd);
	}
}

// A live migration between the snapshot and the sample: the host rewrites the page (a new marker, a new line
// for the new host's counter) while the bounder reads the counter. The sample is taken again under the new
// snapshot (never the old line applied to the new counter) and the moved marker makes it DISRUPTED.
VmFile *migrating_page;
fc_vmc_snap migrated_line;
uint64_t migrating_counter(void *p)
{
	if (migrating_page) { // the first counter read of the sample: the host migrates right then
		vm_page(*migrating_page, migrated_line);
		migrating_page = nullptr;
	}
	return FakeHost::read_counter(p);
}

TEST(Select, vmclock_rewritten_during_the_sample_is_sampled_again_under_the_new_snapshot)
{
	std::string d = tmpdir();
	VmFile f(d);
	fc_vmc_snap s = vm_line();
	s.seq = 2, s.disruption_marker = 1;
	vm_page(f, s);
	FakeHost host;
	fc_bounder bd;
	start_vm_bounder(&bd, "vmclock", d, f, s, &host);
	const fc_bound *b = fc__bounder_poll(&bd, SEC, SEC);
	ASSERT_EQ(b->status, FC_SYNC_SYNCHRONIZED) << b->reason;
	ASSERT_EQ(b->center_ns, 3 * MS);
	// the next poll's sample: the host moves the marker and its line 7 s on during the counter read
	migrated_line = s;
	migrated_line.seq = 4, migrated_line.disruption_marker = 2, migrated_line.time_sec += 7;
	migrating_page = &f;
	bd.counter = migrating_counter;
	b = fc__bounder_poll(&bd, 2 * SEC, 2 * SEC);
	EXPECT_EQ(b->center_ns, 7 * SEC + 3 * MS) << "the old line was applied to the new host's counter";
	EXPECT_EQ(b->status, FC_SYNC_DISRUPTED) << b->reason;
	fc__bounder_close(&bd);
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

TEST(Select, auto_falls_back_to_chrony_then_kernel_and_timesyncd_maxerror_zero_is_unknown)
{
	std::string d = tmpdir();
	fc_bound_config c;
	char err[200];
	fc__bound_config_parse(nullptr, (d + "/none").c_str(), (d + "/none.sock").c_str(), (d + "/novm").c_str(), &c,
			      err, sizeof(err));
	fc_bounder bd{};
	bd.ntp = fake_ntp_maxerror0;
	fc__bounder_init(&bd, &c, 0);
	EXPECT_EQ(bd.kind, FC_BOUND_KERNEL) << bd.why;
	const fc_bound *b = fc__bounder_poll(&bd, SEC, SEC);
	EXPECT_EQ(b->status, FC_SYNC_UNKNOWN) << b->reason;
	EXPECT_NE(strstr(b->reason, "timesyncd"), nullptr) << b->reason;
	fc__bounder_close(&bd);

	Segment g(d); // a ClockBound segment at start: auto takes it
	g.set_as_of(SEC, 1001 * SEC);
	g.write();
	fc__bound_config_parse(nullptr, g.path.c_str(), nullptr, (d + "/novm").c_str(), &c, err, sizeof(err));
	fc__bounder_init(&bd, &c, 0);
	EXPECT_EQ(bd.kind, FC_BOUND_CLOCKBOUND) << bd.why;
	EXPECT_EQ(fc__bounder_poll(&bd, 2 * SEC, 2 * SEC)->status, FC_SYNC_SYNCHRONIZED);
	fc__bounder_close(&bd);
}

TEST(Select, auto_upgrades_to_a_clockbound_segment_that_appears_later)
{
	std::string d = tmpdir();
	fc_bound_config c;
	char err[200];
	Segment g(d);
	fc__bound_config_parse(nullptr, g.path.c_str(), (d + "/none.sock").c_str(), (d + "/novm").c_str(), &c, err,
			      sizeof(err));
	fc_bounder bd{};
	bd.ntp = fake_ntp_maxerror0;
	fc__bounder_init(&bd, &c, 0);
	ASSERT_EQ(bd.kind, FC_BOUND_KERNEL) << bd.why;
	g.set_as_of(10 * SEC, 1010 * SEC);
	g.write();
	fc__bounder_poll(&bd, 5 * SEC, 5 * SEC);
	EXPECT_EQ(bd.kind, FC_BOUND_KERNEL); // looked for every 10 s, not at every poll
	const fc_bound *b = fc__bounder_poll(&bd, 10 * SEC, 10 * SEC);
	EXPECT_EQ(bd.kind, FC_BOUND_CLOCKBOUND) << bd.why;
	EXPECT_EQ(b->status, FC_SYNC_SYNCHRONIZED) << b->reason;
	fc__bounder_close(&bd);
}

// A fake chronyd on a datagram socket: answers each tracking request with a synchronised report.
struct FakeChronyd {
	std::string path;
	int fd = -1;
	explicit FakeChronyd(const std::string &dir) : path(dir + "/chronyd.sock"), fd(bind_dgram(path)) {}
	~FakeChronyd() { close(fd); }
	int answer() // every request waiting: tracking ones get a report; returns how many were answered
	{
		uint8_t buf[512];
		int n = 0;
		for (;;) {
			sockaddr_un from{};
			socklen_t fl = sizeof(from);
			ssize_t r = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (sockaddr *)&from, &fl);
			if (r < 12)
				return n;
			if (r != 104) // not a tracking request (source data): left unanswered
				continue;
			uint32_t seq = (uint32_t)buf[8] << 24 | buf[9] << 16 | buf[10] << 8 | buf[11];
			size_t len = tracking_reply(buf, seq, -0.0001, 0.0001, 0.00005, 0);
			if (sendto(fd, buf, len, 0, (sockaddr *)&from, fl) == (ssize_t)len) // a closed client: not counted
				n++;
		}
	}
};

// The kernel the chrony source reads for chronyd's slew (fc__chrony_kernel_read): the real clocks, and a tick,
// freq and status the test sets, as chronyd's sys_linux.c set_frequency would (tick 10000 - x: x * 100 ppm slower).
struct FakeKernel {
	static long tick, freq;
	static int status;
	static int read(fc_slew_kernel *k)
	{
		timespec m0, r, m1;
		clock_gettime(CLOCK_MONOTONIC, &m0);
		clock_gettime(CLOCK_REALTIME, &r);
		clock_gettime(CLOCK_MONOTONIC, &m1);
		k->rt_ns = r.tv_sec * SEC + r.tv_nsec;
		k->mono_lo = m0.tv_sec * SEC + m0.tv_nsec;
		k->mono_hi = m1.tv_sec * SEC + m1.tv_nsec;
		k->tick = tick, k->freq = freq, k->offset = 0, k->status = status;
		return 0;
	}
	FakeKernel() { tick = 10000, freq = 0, status = 0, fc__chrony_kernel_read = read; }
	~FakeKernel() { fc__chrony_kernel_read = nullptr; }
};
long FakeKernel::tick, FakeKernel::freq;
int FakeKernel::status;

// chronyd's slew followed, fail closed: the kernel untouched as chronyd left it (-x, or nothing to slew) keeps the
// report's interval; a kernel that began slewing 30000 ppm after the request (chronyd found a 30 ms offset its
// reply did not hold: a step) is UNKNOWN from that reply, and the next round is asked at the next poll; a kernel
// with its PLL on (not chronyd's slew) keeps the report's interval and says the slew is not followed.
TEST(Chrony, the_kernels_slew_is_followed_and_a_slew_the_reply_did_not_hold_is_unknown)
{
	std::string d = tmpdir();
	FakeChronyd chronyd(d);
	FakeKernel k;
	fc_chrony ch;
	fc_bound b{};
	ASSERT_EQ(fc__chrony_open(&ch, chronyd.path.c_str(), &b, 0), 0) << b.last_error;
	fc__chrony_poll(&ch, 1 * SEC, SEC, &b);
	ASSERT_EQ(chronyd.answer(), 1);
	fc__chrony_poll(&ch, 1 * SEC + MS, SEC, &b);
	ASSERT_EQ(b.status, FC_SYNC_SYNCHRONIZED) << b.reason;
	fc_bound plain{};
	fc__chrony_eval(&ch.last, nullptr, ch.tracking_at, &plain);
	EXPECT_EQ(b.center_ns, plain.center_ns);
	EXPECT_EQ(b.half_ns, plain.half_ns); // -x: nothing slewed, [c, 0] + root distance as before
	// the next round is due 1 s on; chronyd slews 30 ms at 30000 ppm by the time it answers
	fc__chrony_poll(&ch, 2 * SEC + 2 * MS, SEC, &b);
	k.tick = 10000 - 300;
	ASSERT_EQ(chronyd.answer(), 1);
	fc__chrony_poll(&ch, 2 * SEC + 3 * MS, SEC, &b);
	EXPECT_EQ(b.status, FC_SYNC_UNKNOWN) << b.reason;
	chronyd.answer();
	// the round ends (the fake answers no source data: at its timeout) and the next is sent at once, not after
	// the interval between rounds (5 s here)
	fc__chrony_poll(&ch, 2 * SEC + 4 * MS, 5 * SEC, &b);
	fc__chrony_poll(&ch, 2 * SEC + 4 * MS + FC_CHRONY_TIMEOUT_NS, 5 * SEC, &b);
	fc__chrony_poll(&ch, 2 * SEC + 5 * MS + FC_CHRONY_TIMEOUT_NS, 5 * SEC, &b);
	EXPECT_EQ(chronyd.answer(), 1) << "asked again at once";
	// the PLL on: not chronyd's slew; the report's interval, never narrower
	k.tick = 10000, k.status = 0x0001; // STA_PLL
	fc__chrony_poll(&ch, 2 * SEC + 6 * MS + FC_CHRONY_TIMEOUT_NS, SEC, &b);
	EXPECT_EQ(b.status, FC_SYNC_SYNCHRONIZED) << b.reason;
	EXPECT_NE(strstr(b.reason, "slew not followed"), nullptr) << b.reason;
	EXPECT_GE(b.half_ns, plain.half_ns);
	fc__chrony_close(&ch);
}

// A bounder with FASTCLOCK_BOUND_SOURCE=mode (nullptr: auto) over the segment and the fake chronyd, no VMClock.
void start_bounder(fc_bounder *bd, const char *mode, const Segment &g, const FakeChronyd &chronyd, const std::string &d,
		   const char *vm = nullptr)
{
	fc_bound_config c;
	char err[200];
	fc__bound_config_parse(mode, g.path.c_str(), chronyd.path.c_str(), vm ? vm : (d + "/novm").c_str(), &c, err,
			      sizeof(err));
	bd->ntp = fake_ntp_maxerror0;
	fc__bounder_init(bd, &c, 0);
}

// Auto mode without a VMClock: chronyd asked directly comes first, beside a live segment too (the segment is
// built from the same chronyd's report, twice as wide, and blind to its newest measurement); fc_status's why says
// so. chronyd silent for ClockBound's 5 s grace while the segment's daemon keeps it updated: the 10 s re-check
// takes the segment; a segment as dead as chronyd is never taken. An explicit FASTCLOCK_BOUND_SOURCE=clockbound
// never moves.
TEST(Select, auto_asks_chronyd_before_a_segment_and_takes_the_segment_only_while_chronyd_is_silent)
{
	std::string d = tmpdir();
	Segment g(d);
	g.s.bound_nsec = 50000;
	g.set_as_of(1 * SEC, 1001 * SEC);
	g.write();
	FakeChronyd chronyd(d);
	fc_bounder bd{};
	start_bounder(&bd, nullptr, g, chronyd, d);
	ASSERT_EQ(bd.kind, FC_BOUND_CHRONY) << bd.why;
	EXPECT_NE(strstr(bd.why, "chronyd asked directly"), nullptr) << bd.why;
	fc__bounder_poll(&bd, 1 * SEC, 1 * SEC);
	EXPECT_EQ(chronyd.answer(), 1);
	EXPECT_EQ(fc__bounder_poll(&bd, 1 * SEC + MS, 1 * SEC + MS)->status, FC_SYNC_SYNCHRONIZED);
	// chronyd answers at every poll for 20 s: the live segment is never taken
	for (int64_t t = 2 * SEC; t <= 22 * SEC; t += SEC) {
		g.set_as_of(t, t + 1000 * SEC);
		g.update();
		fc__bounder_poll(&bd, t, t);
		chronyd.answer();
		ASSERT_EQ(fc__bounder_poll(&bd, t + MS, t + MS)->status, FC_SYNC_SYNCHRONIZED);
		ASSERT_EQ(bd.kind, FC_BOUND_CHRONY) << "at " << t / MS << " ms: " << bd.why;
	}
	// chronyd falls silent after 22 s, and so does the segment's daemon (one chronyd feeds both): not taken
	for (int64_t t = 23 * SEC; t <= 34 * SEC; t += SEC) {
		fc__bounder_poll(&bd, t, t);
		ASSERT_EQ(bd.kind, FC_BOUND_CHRONY) << "at " << t / MS << " ms: " << bd.why;
	}
	// the segment's daemon lives again (chronyd still silent to us): the next re-check takes it
	const fc_bound *b = nullptr;
	for (int64_t t = 35 * SEC; t <= 46 * SEC && bd.kind == FC_BOUND_CHRONY; t += SEC) {
		g.set_as_of(t, t + 1000 * SEC);
		g.update();
		b = fc__bounder_poll(&bd, t, t);
	}
	ASSERT_EQ(bd.kind, FC_BOUND_CLOCKBOUND) << bd.why;
	EXPECT_NE(strstr(bd.why, "chronyd silent"), nullptr) << bd.why;
	fc__bounder_close(&bd);

	// explicit: the segment stays the source, and chronyd is never asked
	chronyd.answer(); // what the closed bounder left
	start_bounder(&bd, "clockbound", g, chronyd, d);
	ASSERT_EQ(bd.kind, FC_BOUND_CLOCKBOUND) << bd.why;
	fc__bounder_poll(&bd, 47 * SEC, 47 * SEC);
	fc__bounder_poll(&bd, 60 * SEC, 60 * SEC);
	EXPECT_EQ(chronyd.answer(), 0);
	EXPECT_EQ(bd.kind, FC_BOUND_CLOCKBOUND) << bd.why;
	(void)b;
	fc__bounder_close(&bd);
}

// A segment serves while chronyd cannot be asked (its socket absent at start); chronyd is probed beside it once a
// second and replaces it as soon as it answers, even with UNKNOWN: chronyd's own verdict (an untracked step, no
// update yet) is truer than the segment's SYNCHRONIZED built from the same chronyd's older report. A segment never
// written (as_of 0) falls back the same way.
TEST(Select, auto_leaves_the_segment_for_chronyd_once_chronyd_answers)
{
	for (int never_written = 0; never_written < 2; never_written++) {
		std::string d = tmpdir();
		Segment g(d);
		if (never_written)
			g.s.clock_status = FC_CB_UNKNOWN;
		else
			g.set_as_of(1 * SEC, 1001 * SEC);
		g.write();
		fc_bound_config c;
		char err[200];
		fc__bound_config_parse(nullptr, g.path.c_str(), (d + "/chronyd.sock").c_str(), (d + "/novm").c_str(), &c,
				      err, sizeof(err));
		fc_bounder bd{};
		bd.ntp = fake_ntp_maxerror0;
		fc__bounder_init(&bd, &c, 0);
		ASSERT_EQ(bd.kind, FC_BOUND_CLOCKBOUND) << bd.why;
		EXPECT_NE(strstr(bd.why, "chronyd cannot be asked"), nullptr) << bd.why;
		EXPECT_EQ(fc__bounder_poll(&bd, 2 * SEC, 2 * SEC)->status,
			  never_written ? FC_SYNC_UNKNOWN : FC_SYNC_SYNCHRONIZED);
		FakeChronyd chronyd(d); // chronyd starts
		g.set_as_of(3 * SEC, 1003 * SEC);
		if (!never_written)
			g.update();
		fc__bounder_poll(&bd, 3 * SEC, 3 * SEC);
		EXPECT_EQ(bd.kind, FC_BOUND_CLOCKBOUND); // not before chronyd has answered
		EXPECT_EQ(chronyd.answer(), 1);
		const fc_bound *b = fc__bounder_poll(&bd, 3 * SEC + MS, 3 * SEC + MS);
		ASSERT_EQ(bd.kind, FC_BOUND_CHRONY) << bd.why;
		EXPECT_EQ(b->status, FC_SYNC_SYNCHRONIZED) << b->reason; // the probe's report came with the switch
		EXPECT_NE(strstr(bd.why, never_written ? "fell back to chronyd" : "narrower than ClockBound"), nullptr)
			<< bd.why;
		fc__bounder_close(&bd);
	}
}

// QEMU's VMClock (status UNKNOWN: no time source, only its marker) at marker 5, and a segment written at 1 s by
// a daemon that watches it (disruption support) at marker seg_marker.
void watched_segment(VmFile &f, Segment &g, uint64_t seg_marker)
{
	f.m[34] = FC_VMC_UNKNOWN;
	f.marker(5);
	f.write();
	g.s.disruption_support = 1;
	g.s.disruption_marker = seg_marker;
	g.set_as_of(SEC, 1001 * SEC);
	g.write();
}

// A segment its daemon keeps updating, but behind VMClock's disruption marker (the daemon has not caught up with
// a migration): ClockBound's own client says Unknown, and so does auto mode, for as long as it lasts. A live
// chronyd beside it is never taken instead (it used to be, SYNCHRONIZED within 3 ms). The daemon catches up:
// SYNCHRONIZED from the segment.
TEST(Select, auto_never_sidesteps_a_live_segment_clockbound_calls_unknown)
{
	std::string d = tmpdir();
	VmFile f(d);
	Segment g(d);
	watched_segment(f, g, 4);
	FakeChronyd chronyd(d);
	fc_bounder bd{};
	start_bounder(&bd, nullptr, g, chronyd, d, f.path.c_str());
	ASSERT_EQ(bd.kind, FC_BOUND_CLOCKBOUND) << bd.why;
	for (int64_t t = SEC; t <= 30 * SEC; t += SEC / 2) {
		g.set_as_of(t, t + 1000 * SEC);
		g.update();
		chronyd.answer();
		const fc_bound *b = fc__bounder_poll(&bd, t + MS, t + MS);
		ASSERT_EQ(bd.kind, FC_BOUND_CLOCKBOUND) << "at " << t / MS << " ms: " << bd.why;
		ASSERT_EQ(b->status, FC_SYNC_UNKNOWN) << b->reason;
		EXPECT_NE(strstr(b->reason, "behind VMClock"), nullptr) << b->reason;
	}
	g.s.disruption_marker = 5; // caught up: its own marker moved, DISRUPTED until its next update
	g.set_as_of(31 * SEC, 1031 * SEC);
	g.update();
	EXPECT_EQ(fc__bounder_poll(&bd, 31 * SEC + MS, 31 * SEC + MS)->status, FC_SYNC_DISRUPTED);
	g.set_as_of(32 * SEC, 1032 * SEC);
	g.update();
	EXPECT_EQ(fc__bounder_poll(&bd, 32 * SEC + MS, 32 * SEC + MS)->status, FC_SYNC_SYNCHRONIZED);
	fc__bounder_close(&bd);
}

// Auto mode on chronyd after a dead segment: the daemon comes back but behind VMClock's marker. The 10 s
// re-check judges it as it would be served (UNKNOWN) and stays on chronyd: no switch back and forth every 10 s
// (it used to judge it without VMClock's marker, take it, find it UNKNOWN, and fall back again).
TEST(Select, auto_does_not_flap_back_to_a_segment_behind_vmclocks_marker)
{
	std::string d = tmpdir();
	VmFile f(d);
	Segment g(d);
	watched_segment(f, g, 5);
	FakeChronyd chronyd(d);
	fc_bounder bd{};
	start_bounder(&bd, nullptr, g, chronyd, d, f.path.c_str());
	ASSERT_EQ(fc__bounder_poll(&bd, 2 * SEC, 2 * SEC)->status, FC_SYNC_SYNCHRONIZED);
	fc__bounder_poll(&bd, 8 * SEC, 8 * SEC); // the daemon died at 1 s: chronyd probed
	chronyd.answer();
	fc__bounder_poll(&bd, 8 * SEC + MS, 8 * SEC + MS);
	ASSERT_EQ(bd.kind, FC_BOUND_CHRONY) << bd.why;
	g.s.disruption_marker = 4; // restarted, not caught up with VMClock
	for (int64_t t = 9 * SEC; t <= 40 * SEC; t += SEC / 2) {
		g.set_as_of(t, t + 1000 * SEC);
		g.update();
		chronyd.answer();
		const fc_bound *b = fc__bounder_poll(&bd, t + MS, t + MS);
		ASSERT_EQ(bd.kind, FC_BOUND_CHRONY) << "at " << t / MS << " ms: " << bd.why;
		EXPECT_EQ(b->status, FC_SYNC_SYNCHRONIZED) << b->reason;
	}
	fc__bounder_close(&bd);
}

TEST(Format, messages_are_built_without_snprintf_and_match_it)
{
	char a[128], b[128];
	fc__bfmt(a, sizeof(a), "%s|%.3s|%d|%lld|%u|%#x|%zu|%zd|%.6f|%.3f|%%", "path", "abcdef", -42, -9000000000LL, 7u,
		0xbeefu, (size_t)12, (ssize_t)-3, -0.0500014, 2.0006);
	snprintf(b, sizeof(b), "%s|%.3s|%d|%lld|%u|%#x|%zu|%zd|%.6f|%.3f|%%", "path", "abcdef", -42, -9000000000LL, 7u,
		 0xbeefu, (size_t)12, (ssize_t)-3, -0.0500014, 2.0006);
	EXPECT_STREQ(a, b);
	char small[8];
	EXPECT_EQ(fc__bfmt(small, sizeof(small), "%s", "0123456789"), 10); // truncated, terminated, full length returned
	EXPECT_STREQ(small, "0123456");
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
	std::string d = tmpdir();
	Segment g(d);
	int64_t now = clock_ns(CLOCK_MONOTONIC_COARSE);
	g.s.bound_nsec = 1 * MS;
	g.set_as_of(now, now + 1000 * SEC);
	g.write();
	setenv("FASTCLOCK_BOUND_SOURCE", "clockbound", 1);
	setenv("FASTCLOCK_CLOCKBOUND_PATH", g.path.c_str(), 1);
	fc_init();
	fc_interval iv;
	for (int i = 0; i < 100 && (fc_real_bounded(&iv), iv.status != FC_SYNC_SYNCHRONIZED); i++)
		usleep(2000); // the writer opens the source on its first bound
	ASSERT_EQ(iv.status, FC_SYNC_SYNCHRONIZED);
	struct fc_status st;
	fc_status(&st);
	EXPECT_STREQ(st.bound_source, "clockbound") << st.bound_why;
	EXPECT_GE(iv.latest_ns - iv.earliest_ns, 2 * MS); // the segment's 1 ms on each side
	int64_t r = clock_ns(CLOCK_REALTIME);
	EXPECT_TRUE(fc_real_after(r - 10 * MS));
	EXPECT_FALSE(fc_real_after(r));       // within the bound: not certainly past
	EXPECT_FALSE(fc_real_after(r + 10 * MS));
	EXPECT_TRUE(fc_real_before(r + 10 * MS));
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
