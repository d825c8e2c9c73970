// fastclock unit tests — chronyd's reports and rounds (src/bound/chrony.c): requests, decoding, the interval
// from tracking and the selected source's newest measurement, rounds over chronyd's source list, and chronyd's
// slew followed through a fake kernel; chronyd played by the test on a datagram socket. The transport's
// defences (who may answer, where our socket lives) are tests/unit/test_bound_chrony.cc's.
#include <gtest/gtest.h>

#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "bound/chrony.h"
#include "bound_fixtures.h"

namespace {

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

} // namespace
