// fastclock unit tests — the bounder's choice of source (src/bound/select.c): FASTCLOCK_BOUND_SOURCE, auto mode's
// order and its re-checks over segments, VMClock pages and fake chronyds the tests write and play, and the
// messages the sources build (src/bound/fmt.c).
#include <gtest/gtest.h>

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <string>

#include "bound/select.h"
#include "bound_fixtures.h"

namespace {

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

// ---- a source's owner and mode judged again at every read ---------------------------------------------------
// Writes n bytes at offset 0 of path as nobody (a forked child): 0, or what failed.
constexpr uid_t NOBODY_UID = 65534;
int write_as_nobody(const std::string &path, const void *buf, size_t n)
{
	return forked([&] {
		if (setresgid(NOBODY_UID, NOBODY_UID, NOBODY_UID) != 0 || setresuid(NOBODY_UID, NOBODY_UID, NOBODY_UID) != 0)
			_exit(10);
		int fd = open(path.c_str(), O_WRONLY);
		_exit(fd >= 0 && pwrite(fd, buf, n, 0) == (ssize_t)n ? 0 : 11);
	});
}

// A VMClock file was judged at open only: an administrator's chmod 0666 after the open, then nobody's page saying
// UTC + 1 s, and the process that had opened it served SYNCHRONIZED 1.003 s off. Every read now judges it again
// (one fstat of the same descriptor): UNKNOWN from that read on, saying why.
TEST(Trust, a_vmclock_file_made_world_writable_after_open_is_refused_at_the_next_read)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root to write as another user";
	std::string d = tmpdir();
	ASSERT_EQ(chmod(d.c_str(), 0755), 0);
	VmFile f(d);
	fc_vmc_snap s = vm_line();
	vm_page(f, s);
	FakeHost host;
	fc_bounder bd;
	start_vm_bounder(&bd, "vmclock", d, f, s, &host);
	const fc_bound *b = fc__bounder_poll(&bd, SEC, SEC);
	ASSERT_EQ(b->status, FC_SYNC_SYNCHRONIZED) << b->reason;
	ASSERT_EQ(b->center_ns, 3 * MS);
	ASSERT_EQ(chmod(f.path.c_str(), 0666), 0); // the careless administrator
	VmFile forged = f;
	forged.path = d + "/scratch"; // the forged page's bytes (vm_page writes them there), then nobody writes them
	s.time_sec += 1, s.seq = 2;
	vm_page(forged, s);
	ASSERT_EQ(write_as_nobody(f.path, forged.m, sizeof(forged.m)), 0) << "nobody could not write the 0666 page";
	b = fc__bounder_poll(&bd, 2 * SEC, 2 * SEC);
	EXPECT_NE(b->status, FC_SYNC_SYNCHRONIZED) << b->reason << " (centre " << b->center_ns << " ns)";
	EXPECT_NE(b->center_ns, SEC + 3 * MS) << b->reason;
	EXPECT_NE(strstr(b->reason, "mode 0666"), nullptr) << b->reason;
	EXPECT_NE(strstr(b->last_error, "not trusted"), nullptr) << b->last_error;
	// and from then on (the file is not trusted again while others may write it)
	b = fc__bounder_poll(&bd, 3 * SEC, 3 * SEC);
	EXPECT_EQ(b->status, FC_SYNC_UNKNOWN) << b->reason;
	fc__bounder_close(&bd);
}

// The same file as the overlay on a segment: nobody's page moving the disruption marker after the chmod made the
// bound DISRUPTED. A page that failed the judgement drives nothing.
TEST(Trust, a_vmclock_file_made_world_writable_after_open_drives_no_overlay)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root to write as another user";
	std::string d = tmpdir();
	ASSERT_EQ(chmod(d.c_str(), 0755), 0);
	VmFile f(d);
	f.marker(5);
	f.write();
	Segment g(d);
	g.set_as_of(SEC, 1001 * SEC);
	g.write();
	FakeChronyd chronyd(d);
	fc_bounder bd{};
	start_bounder(&bd, "clockbound", g, chronyd, d, f.path.c_str());
	ASSERT_TRUE(bd.have_vm);
	ASSERT_EQ(fc__bounder_poll(&bd, SEC + MS, SEC + MS)->status, FC_SYNC_SYNCHRONIZED);
	ASSERT_EQ(chmod(f.path.c_str(), 0666), 0);
	VmFile forged = f;
	forged.marker(6);
	ASSERT_EQ(write_as_nobody(f.path, forged.m, sizeof(forged.m)), 0);
	const fc_bound *b = fc__bounder_poll(&bd, 2 * SEC, 2 * SEC);
	EXPECT_NE(b->status, FC_SYNC_DISRUPTED) << "nobody's page drove the overlay: " << b->reason;
	EXPECT_NE(strstr(b->last_error, "mode 0666"), nullptr) << b->last_error;
	fc__bounder_close(&bd);
}

// A segment was judged again only when its contents changed: after a chmod 0666 (or a chown to another user) its
// unchanged page stayed SYNCHRONIZED until the next update. Every read judges it now.
TEST(Trust, a_segment_made_anothers_after_open_is_refused_at_the_next_read_unchanged)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root to chown";
	struct Case {
		const char *what;
		uid_t uid;
		mode_t mode;
		const char *says;
	} cases[] = {{"chmod 0666", 0, 0666, "mode 0666"}, {"chown nobody", NOBODY_UID, 0644, "owner uid 65534"}};
	for (const Case &c : cases) {
		std::string d = tmpdir();
		ASSERT_EQ(chmod(d.c_str(), 0755), 0);
		Segment g(d);
		g.set_as_of(SEC, 1001 * SEC);
		g.write();
		fc_cb cb;
		fc_bound b{};
		ASSERT_EQ(fc__cb_open(&cb, g.path.c_str(), &b, 0), 0) << b.last_error;
		ASSERT_EQ(fc__cb_poll(&cb, 2 * SEC, nullptr, &b), FC_SYNC_SYNCHRONIZED) << b.reason;
		ASSERT_EQ(chown(g.path.c_str(), c.uid, c.uid), 0);
		ASSERT_EQ(chmod(g.path.c_str(), c.mode), 0);
		EXPECT_EQ(fc__cb_poll(&cb, 2 * SEC + MS, nullptr, &b), FC_SYNC_UNKNOWN) << c.what << ": " << b.reason;
		EXPECT_NE(strstr(b.last_error, c.says), nullptr) << c.what << ": " << b.last_error;
		EXPECT_NE(strstr(b.last_error, "not trusted"), nullptr) << c.what << ": " << b.last_error;
		fc__cb_close(&cb);
	}
}

} // namespace
