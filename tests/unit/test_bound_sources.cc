// fastclock unit tests — the bound sources against everything on the machine that is not the process:
// the kernel's state decided without process names, files others could write, FIFOs, truncation while read,
// out-of-range segments, VMClock disruptions that end, a set-user-ID copy with a hostile environment, and the
// number of files a first bounded read opens. Each test states the attack and the verdict.
#include <atomic>
#include <gtest/gtest.h>

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "bound/select.h"
#include "bound_fixtures.h"
#include "fastclock.h"

namespace {

constexpr uid_t NOBODY = 65534;

// Runs fn in a child process (a crash or a hang must not take the test binary with it): the child's exit code,
// or 128 + the signal that ended it; a child still running after `seconds` is killed (SIGKILL: 137).
template <class F> int in_child(F fn, int seconds = 10)
{
	pid_t p = fork();
	if (p == 0) {
		alarm((unsigned)seconds);
		_exit(fn());
	}
	int st = 0;
	waitpid(p, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

// ---- the kernel's state, never process names ---------------------------------------------------------------
// The state each daemon leaves (what adjtimex(modes 0) returns: rc, status, maxerror us, esterror us), and the
// verdict: only chronyd's and ntpd's (a maximum and an estimated error, consistent) are a bound.
TEST(KernelState, each_daemons_state_is_judged_by_what_it_writes)
{
	struct Case {
		const char *who;
		int rc, status;
		long max_us, est_us;
		int want;
	} cases[] = {
		{"chronyd, synchronised", TIME_OK, 0, 5000, 120, FC_SYNC_SYNCHRONIZED},
		{"ntpd (kernel PLL)", TIME_OK, STA_PLL | STA_NANO, 20000, 900, FC_SYNC_SYNCHRONIZED},
		{"timesyncd, just polled", TIME_OK, STA_PLL | STA_NANO, 0, 0, FC_SYNC_UNKNOWN},
		{"timesyncd, 64 s after", TIME_OK, STA_PLL | STA_NANO, 32000, 0, FC_SYNC_UNKNOWN},
		{"OpenNTPD, 10 s after", TIME_OK, 0, 5000, 16000000, FC_SYNC_UNKNOWN},
		{"busybox ntpd", TIME_OK, STA_PLL, 16000000, 16000000, FC_SYNC_UNKNOWN},
		{"nobody writes (boot, chronyd -x)", TIME_ERROR, STA_UNSYNC, 16000000, 16000000, FC_SYNC_UNKNOWN},
		{"chronyd, unsynchronised", TIME_ERROR, STA_UNSYNC, 3000, 100, FC_SYNC_UNKNOWN},
		{"clock hardware fault", TIME_OK, STA_CLOCKERR, 5000, 120, FC_SYNC_UNKNOWN},
		// the kernel's TIME_ERROR without STA_UNSYNC (kernel/time/ntp.c is_error_status): PPS discipline asked
		// for and the PPS signal lost, its jitter or wander past limits. Only a privileged daemon sets
		// STA_PPSTIME/STA_PPSFREQ; the kernel sets the rest. The kernel says its clock is in error.
		{"ntpd, kernel PPS time, signal lost", TIME_ERROR, STA_PLL | STA_PPSTIME, 5000, 120, FC_SYNC_UNKNOWN},
		{"ntpd, kernel PPS frequency, signal lost", TIME_ERROR, STA_PLL | STA_PPSFREQ, 5000, 120, FC_SYNC_UNKNOWN},
		{"ntpd, kernel PPS time, jitter", TIME_ERROR, STA_PPSTIME | STA_PPSSIGNAL | STA_PPSJITTER, 5000, 120,
		 FC_SYNC_UNKNOWN},
		{"ntpd, kernel PPS frequency, wander", TIME_ERROR, STA_PPSFREQ | STA_PPSSIGNAL | STA_PPSWANDER, 5000, 120,
		 FC_SYNC_UNKNOWN},
		{"ntpd, kernel PPS, all well", TIME_OK, STA_PLL | STA_PPSTIME | STA_PPSFREQ | STA_PPSSIGNAL, 5000, 120,
		 FC_SYNC_SYNCHRONIZED},
		// kernels before 6.11 stored ADJ_MAXERROR/ADJ_ESTERROR unclamped (root only): a long x 1000 overflowed
		{"an unclamped maxerror (pre-6.11 kernel)", TIME_OK, 0, LONG_MAX, 120, FC_SYNC_UNKNOWN},
		{"an unclamped esterror (pre-6.11 kernel)", TIME_OK, 0, 5000, LONG_MAX, FC_SYNC_UNKNOWN},
		{"a negative maxerror (pre-6.11 kernel)", TIME_OK, 0, LONG_MIN, 120, FC_SYNC_UNKNOWN},
		{"adjtimex failed", -1, 0, 0, 0, FC_SYNC_UNKNOWN},
	};
	for (const Case &c : cases) {
		fc_ntp n;
		fc_bound b{};
		fc__ntp_classify(c.rc, c.status, c.max_us, c.est_us, &n);
		EXPECT_EQ(fc__kernel_eval(&n, 0, &b), c.want) << c.who << ": " << b.reason;
		EXPECT_NE(b.reason[0], 0) << c.who;
	}
}

// ntpd disciplines through the kernel PLL: it hands the kernel its offset (ADJ_OFFSET) and the kernel slews it
// in over minutes; until then the clock is off ntpd's estimate by the remaining offset, which adjtimex reports
// (in ns with STA_NANO, else us), while maxerror is ntpd's root distance alone. A 100 ms correction being
// slewed with maxerror 20 ms: the interval must reach it.
TEST(KernelState, a_correction_the_kernel_is_still_slewing_widens_the_bound)
{
	EXPECT_EQ(fc__ntp_offset_ns(-100000, STA_PLL), 100000000);           // us
	EXPECT_EQ(fc__ntp_offset_ns(-100000000, STA_PLL | STA_NANO), 100000000); // ns
	EXPECT_EQ(fc__ntp_offset_ns(LONG_MIN, STA_PLL), 16000000000LL);        // past the kernel's 0.5 s: capped
	EXPECT_EQ(fc__ntp_offset_ns(LONG_MAX, STA_PLL | STA_NANO), 16000000000LL);
	fc_ntp n;
	fc_bound b{};
	fc__ntp_classify(TIME_OK, STA_PLL | STA_NANO, 20000, 900, &n);
	EXPECT_EQ(n.offset_ns, 0) << "classify knows no offset";
	n.offset_ns = fc__ntp_offset_ns(100000000, n.status);
	EXPECT_EQ(fc__kernel_eval(&n, 0, &b), FC_SYNC_SYNCHRONIZED) << b.reason;
	EXPECT_GE(b.half_ns, 120000000) << b.reason;
}

// The kernel's maxerror decided from the kernel's state alone (KernelState above: each daemon's state).
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

fc_ntp g_state;
int fake_ntp(void *, fc_ntp *out)
{
	*out = g_state;
	return out->sync;
}

// A bounder with FASTCLOCK_BOUND_SOURCE=mode over the segment and VMClock paths given (no chronyd), its adjtimex
// injected (fake_ntp).
void start_bounder(fc_bounder *bd, const char *mode, const std::string &seg, const std::string &vm)
{
	fc_bound_config c;
	char err[200];
	ASSERT_EQ(fc__bound_config_parse(mode, seg.c_str(), (seg + ".none.sock").c_str(), vm.c_str(), &c, err, sizeof(err)),
		  0);
	*bd = fc_bounder{};
	bd->ntp = fake_ntp;
	fc__bounder_init(bd, &c, 0);
}

// OpenNTPD's state (maxerror written 0, grown; esterror left at 16 s) with a process named chronyd running as
// nobody (a copy of sleep): UNKNOWN. The name used to turn it SYNCHRONIZED.
TEST(KernelState, a_process_named_chronyd_changes_nothing)
{
	std::string d = tmpdir();
	ASSERT_EQ(chmod(d.c_str(), 0755), 0);
	std::string fake = d + "/chronyd";
	ASSERT_EQ(system(("cp /bin/sleep " + fake).c_str()), 0);
	pid_t p = fork();
	if (p == 0) {
		if (geteuid() == 0 && (setgid(NOBODY) != 0 || setuid(NOBODY) != 0))
			_exit(1);
		execl(fake.c_str(), "chronyd", "30", (char *)nullptr);
		_exit(1);
	}
	usleep(50000);
	fc__ntp_classify(TIME_OK, 0, 5000, 16000000, &g_state);
	fc_bounder bd;
	start_bounder(&bd, "kernel", d + "/none", d + "/novm");
	const fc_bound *b = fc__bounder_poll(&bd, SEC, SEC);
	EXPECT_EQ(b->status, FC_SYNC_UNKNOWN) << b->reason;
	EXPECT_NE(strstr(b->reason, "esterror"), nullptr) << b->reason;
	fc__bounder_close(&bd);
	kill(p, SIGKILL);
	waitpid(p, nullptr, 0);
}

// The kernel source's files: none. A first bounded read, and the reads of the next 300 ms, open the same
// handful of files whether 2 or 300 processes run (the /proc scan opened one per process, under the writer
// lock). Counted by the probe, whose library calls to open are wrapped at link time.
struct Count {
	int first, later;
};
TEST(OpenCount, a_first_bounded_read_opens_a_fixed_handful_of_files_whatever_the_process_count)
{
	auto count = [](const char *mode) {
		int rc;
		std::string out = run(std::string("FASTCLOCK_BOUND_SOURCE=") + mode + " " + FC_BOUND_PROBE + " opens", &rc);
		int first = -1, later = -1;
		EXPECT_EQ(rc, 0) << out;
		EXPECT_EQ(sscanf(out.c_str(), "first=%d later=%d", &first, &later), 2) << out;
		return Count{first, later};
	};
	for (const char *mode : {"kernel", "auto"}) {
		auto few = count(mode);
		std::vector<pid_t> kids;
		for (int i = 0; i < 300; i++) {
			pid_t p = fork();
			if (p == 0) {
				pause();
				_exit(0);
			}
			kids.push_back(p);
		}
		auto many = count(mode);
		for (pid_t p : kids)
			kill(p, SIGKILL);
		for (pid_t p : kids)
			waitpid(p, nullptr, 0);
		EXPECT_GE(few.first + few.later, 1) << mode << ": the counter sees no open at all (wrapping broken?)";
		if (!strcmp(mode, "auto")) { // the first bounded read opens nothing in auto mode (windup.c), the next do
			EXPECT_EQ(few.first, 0) << mode;
		}
		EXPECT_LE(few.first + few.later, 8) << mode;
		EXPECT_EQ(many.first + many.later, few.first + few.later)
			<< mode << ": " << few.first << "+" << few.later << " files with few processes, " << many.first << "+"
			<< many.later << " with 300 more";
	}
}

// ---- files others could write ------------------------------------------------------------------------------
// A segment is trusted when root or its directory's owner wrote it and no one else may: a 0666 file owned by
// nobody, nobody's 0644 file in root's directory, a file group-writable by a group other than root are refused
// naming path, owner and mode; nobody's 0644 file in nobody's directory (the daemon's user's) is the daemon's.
TEST(Trust, segment_owner_and_mode_say_who_wrote_it)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root to give files to another user";
	struct Case {
		const char *what;
		uid_t file_uid, dir_uid;
		gid_t gid;
		mode_t mode;
		bool trusted;
		const char *says;
	} cases[] = {
		{"0666, owned by nobody", NOBODY, 0, 0, 0666, false, "mode 0666"},
		{"0644, nobody's in root's directory", NOBODY, 0, 0, 0644, false, "owner uid 65534"},
		{"0664, group nogroup", 0, 0, NOBODY, 0664, false, "group 65534"},
		{"0644, nobody's in nobody's directory", NOBODY, NOBODY, NOBODY, 0644, true, ""},
		{"0644, root's", 0, 0, 0, 0644, true, ""},
		{"0664, root's, group root", 0, 0, 0, 0664, true, ""},
	};
	for (const Case &c : cases) {
		// the daemon's directory in one only root can write (a /run: root's mkdtemp directory)
		std::string d = tmpdir() + "/daemon";
		ASSERT_EQ(mkdir(d.c_str(), 0755), 0);
		Segment g(d);
		g.set_as_of(SEC, 1001 * SEC);
		g.s.bound_nsec = 1;
		g.write();
		ASSERT_EQ(chown(g.path.c_str(), c.file_uid, c.gid), 0);
		ASSERT_EQ(chmod(g.path.c_str(), c.mode), 0);
		ASSERT_EQ(chown(d.c_str(), c.dir_uid, 0), 0);
		fc_cb cb;
		fc_bound b{};
		int r = fc__cb_open(&cb, g.path.c_str(), &b, 0);
		if (c.trusted) {
			ASSERT_EQ(r, 0) << c.what << ": " << b.last_error;
			EXPECT_EQ(fc__cb_poll(&cb, 2 * SEC, nullptr, &b), FC_SYNC_SYNCHRONIZED) << c.what;
			fc__cb_close(&cb);
		} else {
			EXPECT_EQ(r, -1) << c.what;
			EXPECT_NE(strstr(b.last_error, g.path.c_str()), nullptr) << c.what << ": " << b.last_error;
			EXPECT_NE(strstr(b.last_error, c.says), nullptr) << c.what << ": " << b.last_error;
		}
	}
}

// A file is its directory owner's word only when no one else could have made that directory theirs: a user can
// create a directory in any world-writable one (/tmp, /dev/shm) and write a segment in it, and a careless
// administrator's path (or a symbolic link in it: /run/clockbound -> /tmp/cb) then names a file that user wrote.
// The real directory (links resolved) and every ancestor must be owned by root or the file's owner and be
// writable by no one else; a daemon's directory under root's /run passes.
TEST(Trust, a_directory_any_user_could_create_does_not_vouch_for_its_files)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root to give files to another user";
	std::string d = tmpdir(); // root's, 0700 (mkdtemp)
	std::string world = d + "/world", evil = world + "/cb", run = d + "/run";
	ASSERT_EQ(mkdir(world.c_str(), 01777), 0);
	ASSERT_EQ(chmod(world.c_str(), 01777), 0); // a /tmp
	ASSERT_EQ(mkdir(run.c_str(), 0755), 0);    // a /run
	struct Case {
		const char *what;
		std::string dir; // created owned by nobody unless it exists
		std::string path;
		bool trusted;
	} cases[] = {
		{"nobody's directory in a world-writable (sticky) one", evil, evil + "/shm0", false},
		{"a link in root's directory to nobody's in a world-writable one", evil, run + "/clockbound/shm0", false},
		{"nobody's directory in a group-writable one", d + "/grp/cb", d + "/grp/cb/shm0", false},
		{"the daemon's directory in root's /run", run + "/daemon", run + "/daemon/shm0", true},
	};
	ASSERT_EQ(mkdir((d + "/grp").c_str(), 0775), 0);
	ASSERT_EQ(chown((d + "/grp").c_str(), 0, NOBODY), 0);
	ASSERT_EQ(chmod((d + "/grp").c_str(), 0775), 0);
	ASSERT_EQ(symlink(evil.c_str(), (run + "/clockbound").c_str()), 0);
	for (const Case &c : cases) {
		if (access(c.dir.c_str(), F_OK) != 0) {
			ASSERT_EQ(mkdir(c.dir.c_str(), 0755), 0) << c.dir;
		}
		ASSERT_EQ(chown(c.dir.c_str(), NOBODY, NOBODY), 0);
		Segment g(c.dir);
		g.set_as_of(SEC, 1001 * SEC);
		g.s.bound_nsec = 1;
		g.write();
		ASSERT_EQ(chown(g.path.c_str(), NOBODY, NOBODY), 0);
		ASSERT_EQ(chmod(g.path.c_str(), 0644), 0);
		fc_cb cb;
		fc_bound b{};
		int r = fc__cb_open(&cb, c.path.c_str(), &b, 0);
		if (c.trusted) {
			ASSERT_EQ(r, 0) << c.what << ": " << b.last_error;
			EXPECT_EQ(fc__cb_poll(&cb, 2 * SEC, nullptr, &b), FC_SYNC_SYNCHRONIZED) << c.what;
			fc__cb_close(&cb);
		} else {
			EXPECT_EQ(r, -1) << c.what << ": opened, " << (r == 0 ? (fc__cb_poll(&cb, 2 * SEC, nullptr, &b), b.reason) : "");
			EXPECT_NE(strstr(b.last_error, "not trusted"), nullptr) << c.what << ": " << b.last_error;
			if (r == 0)
				fc__cb_close(&cb);
		}
	}
}

// Owner and mode were checked at open only: an administrator's chmod 0666 (or chmod -R a+w /run) after the
// process opened the segment let any user write it, and the process kept reading it as its daemon's word
// (SYNCHRONIZED +-1 ns from nobody's write). A new snapshot now re-checks them on the open file.
TEST(Trust, a_segment_made_world_writable_after_open_is_dropped)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root to write as another user";
	std::string d = tmpdir();
	ASSERT_EQ(chmod(d.c_str(), 0755), 0); // a /run/clockbound: others may look in
	Segment g(d);
	g.set_as_of(SEC, 1001 * SEC);
	g.s.bound_nsec = 1000000;
	g.write();
	fc_cb cb;
	fc_bound b{};
	ASSERT_EQ(fc__cb_open(&cb, g.path.c_str(), &b, 0), 0) << b.last_error;
	EXPECT_EQ(fc__cb_poll(&cb, 2 * SEC, nullptr, &b), FC_SYNC_SYNCHRONIZED);
	ASSERT_EQ(chmod(g.path.c_str(), 0666), 0); // the careless administrator
	g.set_as_of(3 * SEC, 1003 * SEC);       // nobody's forgery: a newer, tighter bound
	g.s.bound_nsec = 1;
	g.s.generation = 4;
	int rc = in_child([&] {
		if (setresgid(NOBODY, NOBODY, NOBODY) != 0 || setresuid(NOBODY, NOBODY, NOBODY) != 0)
			return 10;
		int fd = open(g.path.c_str(), O_WRONLY);
		return fd >= 0 && pwrite(fd, &g.s, sizeof(g.s), 0) == (ssize_t)sizeof(g.s) ? 0 : 11;
	});
	ASSERT_EQ(rc, 0) << "nobody could not write the 0666 segment";
	int st = fc__cb_poll(&cb, 3 * SEC + MS, nullptr, &b);
	EXPECT_NE(st, FC_SYNC_SYNCHRONIZED) << b.reason << " (half " << b.half_ns << " ns)";
	EXPECT_NE(b.half_ns, 1) << b.reason;
	EXPECT_NE(strstr(b.last_error, "not trusted"), nullptr) << b.last_error;
	fc__cb_close(&cb);
}

// The same for a VMClock file, and through the bounder: FASTCLOCK_BOUND_SOURCE=clockbound over an untrusted
// segment is UNKNOWN, and fc_status's error says why.
TEST(Trust, untrusted_vmclock_file_and_segment_through_the_bounder)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root to give files to another user";
	std::string d = tmpdir();
	VmFile f(d);
	ASSERT_EQ(chown(f.path.c_str(), NOBODY, NOBODY), 0);
	ASSERT_EQ(chmod(f.path.c_str(), 0666), 0);
	fc_vmc v;
	fc_bound b{};
	EXPECT_EQ(fc__vmc_open(&v, f.path.c_str(), &b, 0), -1);
	EXPECT_NE(strstr(b.last_error, "mode 0666"), nullptr) << b.last_error;
	Segment g(d);
	g.set_as_of(SEC, 1001 * SEC);
	g.s.bound_nsec = 1;
	g.write();
	ASSERT_EQ(chown(g.path.c_str(), NOBODY, NOBODY), 0);
	ASSERT_EQ(chmod(g.path.c_str(), 0666), 0);
	fc_bounder bd;
	start_bounder(&bd, "clockbound", g.path, f.path);
	const fc_bound *cur = fc__bounder_poll(&bd, 2 * SEC, 2 * SEC);
	EXPECT_EQ(cur->status, FC_SYNC_UNKNOWN) << cur->reason;
	EXPECT_NE(strstr(cur->last_error, "not trusted"), nullptr) << cur->last_error;
	fc__bounder_close(&bd);
}

// 0 if an open was refused with an error that says `says`; else prints what happened and returns `code`.
int refused(int open_rc, const fc_bound &b, const char *says, const char *what, int code)
{
	if (open_rc == -1 && strstr(b.last_error, says))
		return 0;
	fprintf(stderr, "%s: open returned %d, error \"%s\" (want \"%s\")\n", what, open_rc, b.last_error, says);
	return code;
}

// ---- FIFOs and other non-files -----------------------------------------------------------------------------
// A FIFO at the segment or VMClock path opens at once and is refused, naming it; a directory, a symbolic link
// too. FASTCLOCK_BOUND_SOURCE=none opens nothing (a FIFO at the VMClock path is never touched).
TEST(Kinds, a_fifo_or_link_at_a_source_path_never_blocks_and_is_refused)
{
	std::string d = tmpdir();
	std::string fifo = d + "/fifo", link = d + "/link", target = d + "/target";
	ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
	Segment g(d);
	g.write();
	ASSERT_EQ(symlink(g.path.c_str(), link.c_str()), 0);
	int rc = in_child(
		[&] {
			fc_cb cb;
			fc_vmc v;
			fc_bound b{};
			if (int e = refused(fc__cb_open(&cb, fifo.c_str(), &b, 0), b, "FIFO", "segment", 1) +
				    refused(fc__vmc_open(&v, fifo.c_str(), &b, 0), b, "FIFO", "vmclock", 2) +
				    refused(fc__cb_open(&cb, d.c_str(), &b, 0), b, "directory", "directory", 3) +
				    refused(fc__cb_open(&cb, link.c_str(), &b, 0), b, "symbolic link", "link", 4))
				return e;
			fc_bound_config c;
			char err[200];
			fc__bound_config_parse("none", fifo.c_str(), nullptr, fifo.c_str(), &c, err, sizeof(err));
			fc_bounder bd{};
			bd.ntp = fake_ntp;
			fc__bounder_init(&bd, &c, 0);
			const fc_bound *cur = fc__bounder_poll(&bd, SEC, SEC);
			if (bd.have_vm || bd.vm.fd >= 0 || bd.vm.map || cur->status != FC_SYNC_UNKNOWN)
				return fprintf(stderr, "none opened VMClock\n"), 5;
			fc__bounder_close(&bd);
			return 0;
		},
		5);
	EXPECT_EQ(rc, 0) << "14 (SIGALRM): an open blocked on the FIFO";
	// none with a regular VMClock file: still not opened
	VmFile f(d);
	fc_bound_config c;
	char err[200];
	fc__bound_config_parse("none", fifo.c_str(), nullptr, f.path.c_str(), &c, err, sizeof(err));
	fc_bounder bd{};
	fc__bounder_init(&bd, &c, 0);
	EXPECT_FALSE(bd.have_vm);
	fc__bounder_close(&bd);
}

// ---- truncation, short and empty files ---------------------------------------------------------------------
// A reader polls the segment and a VMClock file while another thread truncates and rewrites them: no SIGBUS
// (the files used to be mapped, and a read past the new end killed the process); the truncation is seen and
// said (UNKNOWN, "bytes now"), and the rewritten segment is taken again.
struct Truncator {
	std::string seg, vm;
	const fc_cb_segment *s;
	const uint8_t *page;
	std::atomic<bool> stop{false}; // read by the truncating thread (TSan: a volatile flag is a race)
	static void *loop(void *p)
	{
		auto *t = (Truncator *)p;
		while (!t->stop) {
			int a = open(t->seg.c_str(), O_RDWR), b = open(t->vm.c_str(), O_RDWR);
			if (ftruncate(a, 0) != 0 || ftruncate(b, 0) != 0)
				abort();
			usleep(200);
			if (pwrite(a, t->s, sizeof(*t->s), 0) != (ssize_t)sizeof(*t->s) || pwrite(b, t->page, 4096, 0) != 4096)
				abort();
			close(a), close(b);
			usleep(200);
		}
		return nullptr;
	}
};

TEST(Truncation, files_truncated_while_read_never_raise_sigbus)
{
	std::string d = tmpdir();
	Segment g(d);
	g.set_as_of(SEC, 1001 * SEC);
	g.write();
	VmFile f(d);
	int rc = in_child(
		[&] {
			fc_cb cb;
			fc_vmc v;
			fc_bound b{};
			if (fc__cb_open(&cb, g.path.c_str(), &b, 0) != 0 || fc__vmc_open(&v, f.path.c_str(), &b, 0) != 0)
				return fprintf(stderr, "open: %s\n", b.last_error), 1;
			Truncator t{g.path, f.path, &g.s, f.m};
			pthread_t th;
			pthread_create(&th, nullptr, Truncator::loop, &t);
			int shrunk = 0, vm_short = 0, retaken = 0;
			for (int64_t i = 0; i < 20000; i++) {
				if (cb.fd < 0 && fc__cb_open(&cb, g.path.c_str(), &b, 0) == 0)
					retaken++;
				fc__cb_poll(&cb, 2 * SEC + i, nullptr, &b); // a new coarse tick each time: read each time
				if (cb.fd < 0 && strstr(b.last_error, "bytes now"))
					shrunk++;
				if (fc__vmc_poll(&v, &b, i) != 0 && strstr(b.last_error, "bytes now"))
					vm_short++;
				(void)fc__vmc_unchanged(&v);
			}
			t.stop = true;
			pthread_join(th, nullptr);
			fprintf(stderr, "truncations seen: segment %d (taken again %d), vmclock %d\n", shrunk, retaken, vm_short);
			return shrunk > 0 && retaken > 0 && vm_short > 0 ? 0 : 2;
		},
		60);
	EXPECT_EQ(rc, 0) << "135 is SIGBUS";
}

// End to end: a process that only calls fc_mono_ns(), its bound source a segment and a VMClock file that are
// truncated and rewritten all the while (an administrator's `: > shm0`, the daemon recreating it). It used to
// die of SIGBUS within one re-anchor.
TEST(Truncation, a_process_reading_only_fc_mono_ns_survives_its_sources_truncated)
{
	std::string d = tmpdir();
	Segment g(d);
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	g.set_as_of((int64_t)ts.tv_sec * SEC + ts.tv_nsec, (int64_t)ts.tv_sec * SEC + ts.tv_nsec + 1000 * SEC);
	g.write();
	VmFile f(d);
	Truncator t{g.path, f.path, &g.s, f.m};
	pthread_t th;
	pthread_create(&th, nullptr, Truncator::loop, &t);
	int rc;
	std::string out = run("FASTCLOCK_BOUND_SOURCE=clockbound FASTCLOCK_CLOCKBOUND_PATH=" + g.path +
				      " FASTCLOCK_VMCLOCK_PATH=" + f.path + " FASTCLOCK_PERIOD_US=100 " + FC_BOUND_PROBE +
				      " mono 1500 2>&1; echo rc=$?",
			      &rc);
	t.stop = true;
	pthread_join(th, nullptr);
	EXPECT_NE(out.find("rc=0"), std::string::npos) << "rc=135 is SIGBUS: " << out;
}

// An empty file at the VMClock path (and a short one) is refused with its size, at open; so is a 40-byte
// segment (the message is about its size, not its version); the bounder starts over them without a crash.
TEST(Truncation, empty_and_short_files_are_refused_with_their_size)
{
	std::string d = tmpdir();
	std::string empty = d + "/vmclock0", short_seg = d + "/shm0";
	close(open(empty.c_str(), O_RDWR | O_CREAT, 0644));
	Segment g(d);
	g.write();
	ASSERT_EQ(truncate(short_seg.c_str(), 40), 0);
	int rc = in_child([&] {
		fc_vmc v;
		fc_cb cb;
		fc_bound b{};
		if (int e = refused(fc__vmc_open(&v, empty.c_str(), &b, 0), b, "0 bytes", "vmclock", 1) +
			    refused(fc__cb_open(&cb, short_seg.c_str(), &b, 0), b, "40 bytes", "segment", 2))
			return e;
		fc_bound_config c;
		char err[200];
		fc__bound_config_parse(nullptr, short_seg.c_str(), (d + "/none.sock").c_str(), empty.c_str(), &c, err,
				      sizeof(err));
		fc_bounder bd{};
		bd.ntp = fake_ntp;
		fc__bounder_init(&bd, &c, 0);
		fc__bounder_poll(&bd, SEC, SEC);
		fc__bounder_close(&bd);
		return 0;
	});
	EXPECT_EQ(rc, 0) << "135 is SIGBUS";
}

// ---- out-of-range segments ---------------------------------------------------------------------------------
// as_of near INT64_MIN (a 292-year age that used to wrap and never grow), nanoseconds past a second, a bound
// of INT64_MAX: UNKNOWN with the reason, never SYNCHRONIZED, and the half-width saturates.
TEST(Ranges, segment_times_and_bounds_past_sane_are_unknown)
{
	struct Case {
		const char *what;
		void (*spoil)(fc_cb_segment *);
		const char *says;
	} cases[] = {
		{"as_of near INT64_MIN", [](fc_cb_segment *s) { s->as_of_sec = INT64_MIN / SEC; }, "out of range"},
		{"as_of past 2^33 s", [](fc_cb_segment *s) { s->as_of_sec = (int64_t)1 << 40; }, "out of range"},
		{"as_of_nsec of 2 s", [](fc_cb_segment *s) { s->as_of_nsec = 2 * SEC; }, "out of range"},
		{"void_after near INT64_MAX", [](fc_cb_segment *s) { s->void_after_sec = INT64_MAX / SEC; }, "out of range"},
		{"bound INT64_MAX", [](fc_cb_segment *s) { s->bound_nsec = INT64_MAX; }, "malformed"},
	};
	for (const Case &c : cases) {
		Segment g(tmpdir());
		g.set_as_of(100 * SEC, 1100 * SEC);
		g.s.bound_nsec = 1000;
		c.spoil(&g.s);
		fc_bound b{};
		EXPECT_EQ(fc__cb_eval(&g.s, 101 * SEC, &b), FC_SYNC_UNKNOWN) << c.what << ": " << b.reason;
		EXPECT_NE(strstr(b.reason, c.says), nullptr) << c.what << ": " << b.reason;
		EXPECT_EQ(fc__bound_half_at(&b, 101 * SEC), INT64_MAX / 4) << c.what;
	}
	fc_bound b{};
	b.half_ns = 10, b.as_of_ns = INT64_MIN + 5, b.drift_ppb = 1000; // an as_of no source gives: the age saturates
	EXPECT_EQ(fc__bound_half_at(&b, INT64_MAX - 5), 10 + INT64_MAX / SEC * 1000 + 854); // 292 years at 1 ppm, not 0
	// VMClock's saturated rate (1000x, three of them: 3e12 ppb) 40 days on: the growth passes 2^63 ns and used
	// to wrap negative (fuzz_vmclock); saturated
	b.half_ns = 10, b.as_of_ns = 0, b.drift_ppb = 3000000000000LL;
	EXPECT_EQ(fc__bound_half_at(&b, 40 * 86400 * SEC), INT64_MAX / 4);
}

// fuzz_vmclock (seed error_past_the_cap_narrowed): a page whose period error rate, over a counter 2^62 ticks
// from its counter_value, gives a maximum error of 136 years: the half-width was served, and the saturation at
// INT64_MAX / 4 (73 years) then narrowed it. Such an error promises nothing: refused.
TEST(Ranges, a_vmclock_error_past_the_saturation_is_refused_not_narrowed)
{
	static const uint8_t page[104] = {
		0x56, 0x43, 0x4c, 0x4b, 0x68, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x50, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00,
		0x1a, 0x00, 0x03, 0x1c, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc0,
		0x4f, 0x2f, 0x0b, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf5, 0x7f, 0x54, 0x07, 0x29,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x9f,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
	const uint64_t ctr = 0x4000000000000000ull;
	const int64_t r0 = 4369440882156306432LL, r1 = r0 + 22367, mono = 58580243991920384LL;
	fc_vmc v{};
	char why[FC_BOUND_TEXT];
	ASSERT_EQ(fc__vmc_parse(page, sizeof(page), &v.snap, why, sizeof(why)), 0) << why;
	v.have_snap = 1;
	v.fd = -1;
	fc_bound b{};
	if (fc__vmc_bound(&v, FC_VMC_COUNTER_X86_TSC, mono, r0, ctr, r1, &b)) {
		ADD_FAILURE() << "served: status " << b.status << ", half " << b.half_ns << " ns, served as "
			      << fc__bound_half_at(&b, mono) << " ns";
	} else {
		EXPECT_NE(strstr(v.why, "promises nothing"), nullptr) << v.why;
	}
}

// A segment a live daemon wrote just now: SYNCHRONIZED, a 1 ms bound, void in 1000 s.
void one_ms_segment(Segment *g)
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	int64_t now = (int64_t)ts.tv_sec * SEC + ts.tv_nsec;
	g->s.bound_nsec = MS;
	g->set_as_of(now, now + 1000 * SEC);
	g->write();
}

// A probe on a segment with a 1 ms bound: fc_commit_wait with a timeout of INT64_MAX waits and succeeds (the
// deadline used to wrap negative: ETIMEDOUT at once), and a t that never comes times out after sleeping, not
// spinning (CPU time well under the wall time).
TEST(CommitWait, saturating_timeout_and_no_spin)
{
	std::string d = tmpdir();
	Segment g(d);
	one_ms_segment(&g);
	int rc;
	std::string out = run("FASTCLOCK_BOUND_SOURCE=clockbound FASTCLOCK_CLOCKBOUND_PATH=" + g.path + " " +
				      FC_BOUND_PROBE + " commit-wait",
			      &rc);
	ASSERT_EQ(rc, 0) << out;
	int r1, e1, r2, e2;
	long long cpu, wall;
	ASSERT_EQ(sscanf(out.c_str(), "max_timeout=%d errno=%d far=%d errno=%d cpu_ns=%lld wall_ns=%lld", &r1, &e1, &r2,
			 &e2, &cpu, &wall),
		  6)
		<< out;
	EXPECT_EQ(r1, 0) << out;
	EXPECT_EQ(r2, -1) << out;
	EXPECT_EQ(e2, ETIMEDOUT) << out;
	EXPECT_GE(wall, 100 * MS) << out;
	EXPECT_LT(cpu, wall / 2) << out;
}

// A process whose first call is a commit wait for a time already past, on a ClockBound segment that says
// SYNCHRONIZED: its first bounded read promises nothing (auto mode opens no source then), so the wait asks again
// at once and returns 0 without a sleep (the library's clock_nanosleep calls counted by the probe).
TEST(CommitWait, a_first_call_asks_again_before_it_sleeps)
{
	std::string d = tmpdir();
	Segment g(d);
	one_ms_segment(&g);
	int rc;
	std::string out = run("FASTCLOCK_CLOCKBOUND_PATH=" + g.path + " FASTCLOCK_CHRONY_SOCKET=" + d +
				      "/none.sock FASTCLOCK_VMCLOCK_PATH=" + d + "/none " + FC_BOUND_PROBE + " commit-wait-first",
			      &rc);
	ASSERT_EQ(rc, 0) << out;
	int r, sleeps, status;
	ASSERT_EQ(sscanf(out.c_str(), "rc=%d sleeps=%d status=%d", &r, &sleeps, &status), 3) << out;
	EXPECT_EQ(status, FC_SYNC_SYNCHRONIZED) << out; // the segment is served
	EXPECT_EQ(r, 0) << out;
	EXPECT_EQ(sleeps, 0) << out;
}

// A process that calls fc_init() at start-up: its first bounded read is served by the segment (fc_init's first
// counter hand stamps the bound from the sources), and fc_real_after of a time a second ago is 1. Without
// fc_init the same first read says UNKNOWN (auto mode reads no source on a first bounded read).
TEST(CommitWait, fc_init_gives_the_first_bounded_read_its_source)
{
	std::string d = tmpdir();
	Segment g(d);
	one_ms_segment(&g);
	int rc;
	const std::string env = "FASTCLOCK_CLOCKBOUND_PATH=" + g.path + " FASTCLOCK_CHRONY_SOCKET=" + d +
				"/none.sock FASTCLOCK_VMCLOCK_PATH=" + d + "/none ";
	std::string out = run(env + FC_BOUND_PROBE + " init-first", &rc);
	ASSERT_EQ(rc, 0) << out;
	int status, after;
	ASSERT_EQ(sscanf(out.c_str(), "status=%d after=%d", &status, &after), 2) << out;
	EXPECT_EQ(status, FC_SYNC_SYNCHRONIZED) << out;
	EXPECT_EQ(after, 1) << out;
}

// A program that used the clock core alone before its first bounded read (20 ms: its first counter hand made, the
// keeper started) ran nothing of the bound meanwhile: that read is the process's first bound (auto mode: UNKNOWN,
// nothing read) and the next is the segment's (SYNCHRONIZED, its 1 ms). core-first-held: the same while another
// thread's writer holds the lock, as a preempted keeper does: the reads wait for it rather than give up (the second
// read said UNKNOWN, and a keeper's re-anchor in between opened the sources for the first).
static void expect_first_bound_then_the_source(const char *mode)
{
	std::string d = tmpdir();
	Segment g(d);
	one_ms_segment(&g);
	int rc;
	std::string out = run("FASTCLOCK_CLOCKBOUND_PATH=" + g.path + " FASTCLOCK_CHRONY_SOCKET=" + d +
				      "/none.sock FASTCLOCK_VMCLOCK_PATH=" + d + "/none " + FC_BOUND_PROBE + " " + mode,
			      &rc);
	ASSERT_EQ(rc, 0) << out;
	int first, second;
	long long half_us;
	char source[32] = "";
	ASSERT_EQ(sscanf(out.c_str(), "first=%d second=%d half_us=%lld source=%31s", &first, &second, &half_us, source), 4)
		<< out;
	EXPECT_EQ(first, FC_SYNC_UNKNOWN) << out;
	EXPECT_EQ(second, FC_SYNC_SYNCHRONIZED) << out;
	EXPECT_STREQ(source, "clockbound") << out;
	EXPECT_GE(half_us, 1000) << out; // the segment's 1 ms, and the clock's own tracking bound
	EXPECT_LT(half_us, 2000) << out;
}

TEST(BoundSeam, a_first_bounded_read_after_the_core_alone_is_the_processs_first_bound)
{
	expect_first_bound_then_the_source("core-first");
}

TEST(BoundSeam, a_writer_at_work_is_waited_for_by_the_first_two_bounded_reads)
{
	expect_first_bound_then_the_source("core-first-held");
}

// ---- a VMClock disruption ends with a measurement after it -------------------------------------------------
// QEMU's VMClock says UNKNOWN for ever. Its marker moves: DISRUPTED, until the source served (here the
// kernel's state) shows a measurement taken after the move (maxerror written lower since); not for life.
TEST(VmDisruption, a_host_that_never_says_synchronized_ends_a_disruption_like_any_other)
{
	std::string d = tmpdir();
	VmFile f(d);
	f.m[34] = FC_VMC_UNKNOWN;
	f.write();
	fc__ntp_classify(TIME_OK, 0, 5000, 100, &g_state); // chronyd's state
	fc_bounder bd;
	start_bounder(&bd, "kernel", d + "/none", f.path);
	ASSERT_TRUE(bd.have_vm);
	EXPECT_EQ(fc__bounder_poll(&bd, SEC, SEC)->status, FC_SYNC_SYNCHRONIZED);
	f.marker(1); // the migration
	f.write();
	const fc_bound *b = fc__bounder_poll(&bd, 2 * SEC, 2 * SEC);
	EXPECT_EQ(b->status, FC_SYNC_DISRUPTED) << b->reason;
	// chronyd has not written since: maxerror grows (the kernel's 500 ppm); still DISRUPTED
	fc__ntp_classify(TIME_OK, 0, 5500, 100, &g_state);
	EXPECT_EQ(fc__bounder_poll(&bd, 3 * SEC, 3 * SEC)->status, FC_SYNC_DISRUPTED);
	fc__ntp_classify(TIME_OK, 0, 6000, 100, &g_state); // a read after a read after the move: still no write
	EXPECT_EQ(fc__bounder_poll(&bd, 4 * SEC, 4 * SEC)->status, FC_SYNC_DISRUPTED);
	// chronyd writes after its first measurement on the new host: maxerror down; the read before was after the
	// move, so the write was too
	fc__ntp_classify(TIME_OK, 0, 4000, 100, &g_state);
	b = fc__bounder_poll(&bd, 5 * SEC, 5 * SEC);
	EXPECT_EQ(b->status, FC_SYNC_SYNCHRONIZED) << b->reason;
	fc__bounder_close(&bd);
}

// A segment source over the same page: DISRUPTED after the move until the daemon publishes a bound computed
// after it (a newer as_of); the host's UNKNOWN status does not hold it for life.
TEST(VmDisruption, a_segment_update_after_the_move_ends_it)
{
	std::string d = tmpdir();
	VmFile f(d);
	f.m[34] = FC_VMC_UNKNOWN;
	f.write();
	Segment g(d);
	g.set_as_of(SEC, 1001 * SEC);
	g.write();
	fc_bounder bd;
	start_bounder(&bd, "clockbound", g.path, f.path);
	EXPECT_EQ(fc__bounder_poll(&bd, SEC + MS, SEC + MS)->status, FC_SYNC_SYNCHRONIZED);
	f.marker(1);
	f.write();
	EXPECT_EQ(fc__bounder_poll(&bd, 2 * SEC, 2 * SEC)->status, FC_SYNC_DISRUPTED);
	EXPECT_EQ(fc__bounder_poll(&bd, 3 * SEC, 3 * SEC)->status, FC_SYNC_DISRUPTED); // the same as_of
	g.set_as_of(3 * SEC, 1003 * SEC);
	g.update();
	const fc_bound *b = fc__bounder_poll(&bd, 3 * SEC + MS, 3 * SEC + MS);
	EXPECT_EQ(b->status, FC_SYNC_SYNCHRONIZED) << b->reason;
	fc__bounder_close(&bd);
}

// ---- a restarting daemon ---------------------------------------------------------------------------------
// clock-bound-d restarted under systemd's RuntimeDirectory= (the directory and its shm0 removed at stop, made
// again at start), or an administrator's rm + restart: a new file at the path. The reader followed the old,
// unlinked inode for the life of the process (FREE_RUNNING, then UNKNOWN past void_after; explicit clockbound
// mode never came back). Now a stale segment's path is checked once a second and a new file there is opened,
// keeping the disruption marker seen.
TEST(Restart, a_segment_recreated_by_a_restarting_daemon_is_followed)
{
	std::string d = tmpdir();
	Segment g(d);
	g.set_as_of(SEC, 1001 * SEC);
	g.write();
	fc_bounder bd;
	start_bounder(&bd, "clockbound", g.path, d + "/no-vmclock");
	EXPECT_EQ(fc__bounder_poll(&bd, SEC + MS, SEC + MS)->status, FC_SYNC_SYNCHRONIZED);
	ASSERT_EQ(unlink(g.path.c_str()), 0); // the daemon stops: its file goes
	const fc_bound *b = fc__bounder_poll(&bd, 7 * SEC, 7 * SEC);
	EXPECT_EQ(b->status, FC_SYNC_FREE_RUNNING) << b->reason; // the last word ages, honestly
	g.set_as_of(8 * SEC, 1008 * SEC);                           // it starts again: a new file
	g.write();
	b = fc__bounder_poll(&bd, 8 * SEC + MS, 8 * SEC + MS);
	EXPECT_EQ(b->status, FC_SYNC_SYNCHRONIZED) << b->reason << " / " << b->last_error;
	EXPECT_EQ(b->as_of_ns, 8 * SEC);
	// the marker seen before the restart is kept: a new one is a disruption until a newer as_of
	ASSERT_EQ(unlink(g.path.c_str()), 0);
	g.s.disruption_marker = 5;
	g.write();
	b = fc__bounder_poll(&bd, 14 * SEC, 14 * SEC);
	EXPECT_EQ(b->status, FC_SYNC_DISRUPTED) << b->reason;
	g.set_as_of(14 * SEC, 1014 * SEC);
	g.update();
	b = fc__bounder_poll(&bd, 14 * SEC + MS, 14 * SEC + MS);
	EXPECT_EQ(b->status, FC_SYNC_SYNCHRONIZED) << b->reason;
	fc__bounder_close(&bd);
}

// ---- a set-user-ID program and its caller's environment ----------------------------------------------------
// The library as installed has no test seams (no FASTCLOCK_TEST_ string in it).
TEST(SetUid, the_installed_library_has_no_test_seams)
{
	int rc;
	std::string out = run(std::string("grep -l FASTCLOCK_TEST_ ") + FC_INSTALLED_LIBS + " " + FC_BOUND_PROBE, &rc);
	EXPECT_EQ(rc, 1) << "these mention FASTCLOCK_TEST_: " << out;
	out = run(std::string("grep -l FASTCLOCK_TEST_ ") + FC_TESTING_LIB, &rc);
	EXPECT_EQ(rc, 0) << "the tests' library has no seams either: the check above proves nothing";
}

// A copy of the probe installed set-user-ID root, run by nobody with a hostile environment: a segment nobody
// wrote in nobody's directory (trusted for nobody's own processes: the control run shows it is taken there),
// another clocksource from /etc/shadow. The set-user-ID run ignores all of it.
TEST(SetUid, a_setuid_copy_ignores_its_callers_environment)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root to install a set-user-ID copy";
	std::string d = tmpdir(), home = tmpdir();
	ASSERT_EQ(chmod(d.c_str(), 0755), 0);
	std::string probe = d + "/probe";
	ASSERT_EQ(system(("cp " + std::string(FC_BOUND_PROBE) + " " + probe).c_str()), 0);
	ASSERT_EQ(chmod(probe.c_str(), 04755), 0);
	ASSERT_EQ(chown(home.c_str(), NOBODY, NOBODY), 0);
	ASSERT_EQ(chmod(home.c_str(), 0755), 0);
	Segment g(home);
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	int64_t now = (int64_t)ts.tv_sec * SEC + ts.tv_nsec;
	g.s.bound_nsec = 1;
	g.set_as_of(now, now + 1000 * SEC);
	g.write();
	ASSERT_EQ(chown(g.path.c_str(), NOBODY, NOBODY), 0);
	std::string hostile = "FASTCLOCK_BOUND_SOURCE=clockbound FASTCLOCK_CLOCKBOUND_PATH=" + g.path +
			      " FASTCLOCK_TEST_CLOCKSOURCE_FILE=/etc/shadow FASTCLOCK_TEST_INIT_DELAY_US=3000000";
	std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups env " + hostile + " ";
	int rc;
	// control: the same copy without the set-user-ID bit, run by nobody: nobody's environment is its own
	ASSERT_EQ(chmod(probe.c_str(), 0755), 0);
	std::string out = run(as_nobody + probe + " status", &rc);
	ASSERT_EQ(rc, 0) << out;
	EXPECT_NE(out.find("source=clockbound status=1 "), std::string::npos) << "nobody's own segment, +-1 ns: " << out;
	EXPECT_EQ(out.find("root:"), std::string::npos) << out;
	// set-user-ID root
	ASSERT_EQ(chmod(probe.c_str(), 04755), 0);
	struct stat st;
	ASSERT_EQ(stat(probe.c_str(), &st), 0);
	ASSERT_TRUE(st.st_mode & S_ISUID);
	out = run(as_nobody + probe + " status", &rc);
	ASSERT_EQ(rc, 0) << out;
	EXPECT_EQ(out.find(g.path), std::string::npos) << "the caller's segment path reached the program: " << out;
	EXPECT_EQ(out.find("source=clockbound"), std::string::npos) << "FASTCLOCK_BOUND_SOURCE obeyed: " << out;
	EXPECT_EQ(out.find("root:"), std::string::npos) << "/etc/shadow read into clocksource: " << out;
}

// ---- time namespaces ---------------------------------------------------------------------------------------
// The status line of fc_bound_probe run in a new time namespace whose CLOCK_MONOTONIC is off_s seconds from this
// process's (unshare --time), its bound FASTCLOCK_BOUND_SOURCE=clockbound over seg; "" where the namespace cannot
// be made here (*why says what unshare said).
std::string probe_in_timens(const std::string &seg, const std::string &d, long long off_s, std::string *why)
{
	int rc = -1;
	std::string t = run("unshare --time --monotonic=" + std::to_string(off_s) + " true 2>&1", &rc);
	if (rc != 0) {
		*why = "unshare --time --monotonic=" + std::to_string(off_s) + " is refused here (exit " +
		       std::to_string(rc) + "): " + t;
		return "";
	}
	return run("FASTCLOCK_BOUND_SOURCE=clockbound FASTCLOCK_CLOCKBOUND_PATH=" + seg + " FASTCLOCK_CHRONY_SOCKET=" + d +
		   "/none.sock FASTCLOCK_VMCLOCK_PATH=" + d + "/none unshare --time --monotonic=" + std::to_string(off_s) +
		   " " + FC_BOUND_PROBE + " status 2>&1");
}

// A segment's times are the host's CLOCK_MONOTONIC_COARSE (its daemon's); a process in a time namespace reads its
// own, offset. A negative offset made a dead daemon's segment look younger: its daemon stopped 60 s ago, and the
// process 58 s behind the host served it SYNCHRONIZED ("ClockBound says Synchronized", its bound grown for 2 s);
// a positive one made a live daemon's look older (UNKNOWN, past void_after). The namespace's offset is read at
// the open (/proc/self/timens_offsets) and the segment judged on the host's clock.
TEST(TimeNamespace, a_segments_age_is_the_hosts_whatever_the_namespaces_offset)
{
	int64_t own = 0;
	char why[FC_BOUND_TEXT] = "", buf[160];
	int fd = open("/proc/self/timens_offsets", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	if (fd >= 0)
		close(fd);
	if (n > 0 && (fc__cb_parse_timens(buf, (size_t)n, &own, why, sizeof(why)) != 0 || own != 0))
		GTEST_SKIP() << "this test runs in a time namespace of its own (offset " << own << " ns): " << why;
	std::string d = tmpdir();
	Segment g(d);
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	const int64_t host = (int64_t)ts.tv_sec * SEC + ts.tv_nsec;
	std::string skip;
	// a live daemon's segment (as_of now), read 100000 s ahead of the host: its age is the host's (seconds at most)
	g.set_as_of(host, host + 1000 * SEC);
	g.s.bound_nsec = 1000000;
	g.write();
	std::string out = probe_in_timens(g.path, d, 100000, &skip);
	if (out.empty())
		GTEST_SKIP() << skip;
	EXPECT_EQ(out.find("past void_after"), std::string::npos) << "a live segment taken for a dead one: " << out;
	EXPECT_EQ(out.find("status=0"), std::string::npos) << out; // FC_SYNC_UNKNOWN
	EXPECT_NE(out.find("source=clockbound"), std::string::npos) << out;
	// a daemon dead for 60 s, read 58 s behind the host: 60 s old, not 2 s (the host must have run 70 s)
	if (host < 70 * SEC)
		GTEST_SKIP() << "the machine has been up " << host / SEC << " s: a namespace 58 s behind it cannot be made";
	g.set_as_of(host - 60 * SEC, host + 1000 * SEC);
	g.update();
	out = probe_in_timens(g.path, d, -58, &skip);
	ASSERT_FALSE(out.empty()) << skip;
	EXPECT_EQ(out.find("status=1 "), std::string::npos) << "a dead daemon's segment served SYNCHRONIZED: " << out;
	long long ms = 0;
	const size_t at = out.find("not updated for ");
	ASSERT_NE(at, std::string::npos) << out;
	ASSERT_EQ(sscanf(out.c_str() + at, "not updated for %lld ms", &ms), 1) << out;
	EXPECT_GE(ms, 60000) << "the segment's age seen from the namespace: " << out;
}

// /proc/self/timens_offsets as the kernel writes it (names since Linux 5.11, clock numbers before); anything else is
// refused, naming it. A negative fraction is a timespec's: -1 s + 500000000 ns is -0.5 s.
TEST(TimeNamespace, the_offsets_file_is_read_strictly)
{
	struct Case {
		const char *text;
		int rc;
		int64_t off;
	} cases[] = {
		{"monotonic           0         0\nboottime            0         0\n", 0, 0},
		{"monotonic      100000         0\nboottime            0         0\n", 0, 100000 * SEC},
		{"monotonic         -58         0\nboottime            5         0\n", 0, -58 * SEC},
		{"monotonic          -1 500000000\nboottime            0         0\n", 0, -SEC / 2},
		{"1 7 25\n7 0 0\n", 0, 7 * SEC + 25},
		{"boottime 0 0\n", -1, 0},                          // no monotonic line
		{"monotonic 0 0\nmonotonic 5 0\n", -1, 0},          // two
		{"monotonic 0 1000000000\n", -1, 0},                // nsec out of range
		{"monotonic 536870912 0\n", -1, 0},                 // 2^29 s
		{"monotonic 1 0", -1, 0},                           // cut short
		{"monotonic x 0\n", -1, 0},
		{"monotonic 9999999999999999999 0\n", -1, 0},       // more digits than any offset
		{"", -1, 0},
	};
	for (const Case &c : cases) {
		int64_t off = 12345;
		char why[FC_BOUND_TEXT] = "";
		EXPECT_EQ(fc__cb_parse_timens(c.text, strlen(c.text), &off, why, sizeof(why)), c.rc) << c.text << why;
		if (c.rc == 0)
			EXPECT_EQ(off, c.off) << c.text;
		else
			EXPECT_NE(why[0], 0) << c.text;
	}
}

} // namespace
