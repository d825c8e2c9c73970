// fastclock unit tests — a fourth round of attacks from outside the process (docs/THREATS.md): the kernel's
// clocksource file the trust check reads (src/trust.c: a FIFO, a directory, a device, a link, a file that is not
// on sysfs, a NUL in the name); the keeper's start where threads cannot be created (src/updater.c).
#include <gtest/gtest.h>

#include <dirent.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "bound_fixtures.h"
#include "fastclock.h"
#include "bound/bound.h"
#include "trust.h"

namespace {

// A directory of the test's own, removed with what the test leaves in it.
struct TmpDir {
	std::string path;
	TmpDir()
	{
		char t[] = "/tmp/fc_attack4_XXXXXX";
		EXPECT_NE(mkdtemp(t), nullptr) << strerror(errno);
		path = t;
	}
	std::string file(const char *name, const std::string &body) const
	{
		std::string p = path + "/" + name;
		int fd = open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		EXPECT_GE(fd, 0) << strerror(errno);
		EXPECT_EQ(write(fd, body.data(), body.size()), (ssize_t)body.size());
		close(fd);
		return p;
	}
	~TmpDir()
	{
		std::error_code ec;
		std::filesystem::remove_all(path, ec);
		fc__trust_set_path(nullptr, 1); // the kernel's file again, for the tests after this one
	}
};

struct Check {
	int ok;
	std::string why, cs;
};

Check check(const std::string &path, int need_sysfs)
{
	char why[160], cs[32];
	fc__trust_set_path(path.c_str(), need_sysfs);
	Check r;
	r.ok = fc__trust_check(why, sizeof(why), cs, sizeof(cs));
	r.why = why, r.cs = cs;
	return r;
}

struct Waiter {
	std::string path;
	Check r;
	volatile int done = 0;
};

void *check_thread(void *arg)
{
	auto *w = static_cast<Waiter *>(arg);
	w->r = check(w->path, 0);
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return nullptr;
}

} // namespace

// A FIFO at the clocksource's path (a test's path here; /sys on something else in a container): the check used to
// open it O_RDONLY and wait for a writer that never comes, under the writer lock (every slow path of the process
// behind it). Judged by what the check does, not by time: it runs on a thread while this one asks, again and again,
// whether anyone has the FIFO open for reading (a non-blocking open for writing succeeds only then; it also frees
// a check stuck in its open, which then reads end-of-file). Now the FIFO is looked at (O_PATH), never opened.
TEST(TrustFile, a_fifo_is_never_opened_nor_waited_for_and_not_trusted)
{
	TmpDir d;
	std::string p = d.path + "/fifo";
	ASSERT_EQ(mkfifo(p.c_str(), 0644), 0) << strerror(errno);
	Waiter w;
	w.path = p;
	pthread_t t;
	ASSERT_EQ(pthread_create(&t, nullptr, check_thread, &w), 0);
	int opened = 0;
	while (!__atomic_load_n(&w.done, __ATOMIC_ACQUIRE)) {
		int fd = open(p.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0) { // a reader has it open: the check (nothing else here opens it)
			opened++;
			close(fd);
		}
		sched_yield();
	}
	pthread_join(t, nullptr);
	EXPECT_EQ(opened, 0) << "the trust check opened the FIFO for reading";
	EXPECT_EQ(w.r.ok, 0);
	EXPECT_EQ(w.r.cs, "unknown");
	EXPECT_NE(w.r.why.find("FIFO"), std::string::npos) << w.r.why;
}

TEST(TrustFile, a_directory_a_device_or_a_link_is_not_trusted)
{
	TmpDir d;
	std::string good = d.file("good", "tsc\n");
	std::string dir = d.path + "/dir", link = d.path + "/link";
	ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
	ASSERT_EQ(symlink(good.c_str(), link.c_str()), 0);
	Check r = check(dir, 0);
	EXPECT_EQ(r.ok, 0);
	EXPECT_NE(r.why.find("directory"), std::string::npos) << r.why;
	r = check("/dev/null", 0); // a device: never opened (its driver's open may act), never trusted
	EXPECT_EQ(r.ok, 0);
	EXPECT_NE(r.why.find("character device"), std::string::npos) << r.why;
	r = check(link, 0);
	EXPECT_EQ(r.ok, 0);
	EXPECT_NE(r.why.find("ELOOP"), std::string::npos) << r.why;
}

// The kernel's file is trusted only on sysfs: a file on any other filesystem (an administrator's bind mount over
// /sys, a container's /sys on tmpfs) saying "tsc" is not the kernel's word. The test's path with the sysfs rule on
// (as the kernel's path always has it); the same file with it off is read (the test seam's own use).
TEST(TrustFile, a_clocksource_file_not_on_sysfs_is_not_trusted)
{
	TmpDir d;
	std::string p = d.file("clocksource", "tsc\n");
	Check r = check(p, 1);
	EXPECT_EQ(r.ok, 0);
	EXPECT_EQ(r.cs, "unknown");
	EXPECT_NE(r.why.find("is not on sysfs"), std::string::npos) << r.why;
	r = check(p, 0);
	EXPECT_EQ(r.cs, "tsc") << r.why;
	r = check(d.file("clocksource2", "hpet\n"), 0);
	EXPECT_EQ(r.ok, 0);
	EXPECT_EQ(r.cs, "hpet") << r.why;
}

// "tsc\0hpet": a C string compare saw "tsc". Not a name: not trusted.
TEST(TrustFile, a_nul_in_the_name_is_not_trusted)
{
	TmpDir d;
	Check r = check(d.file("clocksource", std::string("tsc\0hpet\n", 9)), 0);
	EXPECT_EQ(r.ok, 0);
	EXPECT_EQ(r.cs, "unknown");
	EXPECT_NE(r.why.find("NUL"), std::string::npos) << r.why;
	r = check(d.file("empty", ""), 0);
	EXPECT_EQ(r.ok, 0);
	EXPECT_NE(r.why.find("empty"), std::string::npos) << r.why;
}

// A file others may write (group or world write, a user's file in a directory of another's) is not the kernel's.
TEST(TrustFile, a_clocksource_file_others_may_write_is_not_trusted)
{
	TmpDir d;
	std::string p = d.file("clocksource", "tsc\n");
	ASSERT_EQ(chmod(p.c_str(), 0666), 0);
	Check r = check(p, 0);
	EXPECT_EQ(r.ok, 0);
	EXPECT_NE(r.why.find("any user"), std::string::npos) << r.why;
}

// The kernel's own file, as it is on this machine: read through the same checks, the same name as a plain read.
TEST(TrustFile, the_kernels_file_is_read_as_it_is)
{
	const char *k = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
	std::ifstream f(k);
	std::string want;
	if (!(f >> want))
		GTEST_SKIP() << "no " << k << " here";
	char why[160], cs[32];
	fc__trust_set_path(nullptr, 1);
	fc__trust_check(why, sizeof(why), cs, sizeof(cs));
	EXPECT_EQ(std::string(cs), want) << why;
}

// A process that cannot create threads (a container at its pids.max, a user at RLIMIT_NPROC: pthread_create's
// EAGAIN, wrapped at link time in fc_bound_probe): every coarse read tried to start the keeper again, two failed
// thread creations a read in real-time mode (101494 in 200 ms; a coarse read took 3.2 us). Now a failed start is
// tried again a second later. Counted against the time the reads took (a busy machine makes fewer reads, never
// more attempts a second): at most 2 creations an attempt, an attempt at 1 ms and then once a second.
TEST(KeeperStart, a_failed_keeper_start_is_not_retried_at_every_coarse_read)
{
	for (const char *rt : {"1", "0"}) {
		int rc = -1;
		long long reads = 0, creates = 0, us = 0;
		std::string out =
			run(std::string("FASTCLOCK_UPDATER_RT=") + rt + " " + FC_BOUND_PROBE + " keeper-create-fails 300", &rc);
		ASSERT_EQ(rc, 0) << out;
		ASSERT_EQ(sscanf(out.c_str(), "reads=%lld creates=%lld elapsed_us=%lld", &reads, &creates, &us), 3) << out;
		EXPECT_GE(creates, 1) << "rt=" << rt << ": no start attempted (wrapping broken?) " << out;
		EXPECT_LE(creates, 2 * (2 + us / 1000000)) << "rt=" << rt << ": " << out;
	}
}

namespace {

// struct sched_attr as the kernel has it (uapi linux/sched/types.h, SCHED_ATTR_SIZE_VER1: with the clamps)
struct sattr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
	uint32_t util_min, util_max;
};

int getattr(pid_t tid, sattr *a)
{
	memset(a, 0, sizeof(*a));
	return (int)syscall(SYS_sched_getattr, tid, a, sizeof(*a), 0);
}

// What a thread's creator may observe of itself: its scheduling attributes (policy, nice, priority, slice, flags,
// clamps), its nice value as getpriority reports it, its signal mask, its name and its timer slack.
struct ThreadState {
	sattr a;
	int attr_rc, prio;
	sigset_t mask;
	char name[17];
	long slack;
	std::string str() const
	{
		char b[256];
		snprintf(b, sizeof(b), "rc=%d policy=%u flags=%#llx nice=%d prio=%u slice=%llu clamp=%u..%u getpriority=%d "
			 "name=%s slack=%ld", attr_rc, a.policy, (unsigned long long)a.flags, a.nice, a.priority,
			 (unsigned long long)a.runtime, a.util_min, a.util_max, prio, name, slack);
		return b;
	}
	bool operator==(const ThreadState &o) const
	{
		return str() == o.str() && memcmp(&mask, &o.mask, sizeof(mask)) == 0;
	}
};

ThreadState snapshot()
{
	ThreadState s{};
	s.attr_rc = getattr(0, &s.a);
	s.prio = getpriority(PRIO_PROCESS, 0);
	pthread_sigmask(SIG_BLOCK, nullptr, &s.mask);
	prctl(PR_GET_NAME, s.name, 0, 0, 0);
	s.slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	return s;
}

// A field of /proc/self/task/TID/status ("SigBlk", "voluntary_ctxt_switches"), "" if not found.
std::string task_status(pid_t tid, const char *field)
{
	char p[64], line[256];
	std::string r;
	snprintf(p, sizeof(p), "/proc/self/task/%d/status", (int)tid);
	FILE *f = fopen(p, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, strlen(field)) && line[strlen(field)] == ':')
			r = line + strlen(field) + 1;
	if (f)
		fclose(f);
	r.erase(0, r.find_first_not_of(" \t"));
	r.erase(r.find_last_not_of("\n") + 1);
	return r;
}

// The process's other thread (the keeper: fc_updater_start made the only one), and its name; -1 if none.
pid_t other_thread(std::string *name)
{
	DIR *d = opendir("/proc/self/task");
	pid_t tid = -1;
	for (dirent *e; d && (e = readdir(d));) {
		pid_t t = atoi(e->d_name);
		if (t <= 0 || t == (pid_t)syscall(SYS_gettid))
			continue;
		char p[64], buf[32] = "";
		snprintf(p, sizeof(p), "/proc/self/task/%d/comm", (int)t);
		FILE *f = fopen(p, "r");
		if (f && fgets(buf, sizeof(buf), f))
			*name = std::string(buf).substr(0, strcspn(buf, "\n"));
		if (f)
			fclose(f);
		tid = t;
	}
	if (d)
		closedir(d);
	return tid;
}

// The keeper's thread id once it has named itself "fastclock" (its first act, before its first store of the coarse
// clock), or -1: no other thread, or one whose coarse value is kept (two reads alike: precise reads always move)
// under another name. Judged by its progress, not by time or by its context switches (a new thread may block in
// pthread_create's handshake before its first act, more than once on a busy machine).
pid_t keeper_tid()
{
	for (;;) {
		std::string name;
		pid_t t = other_thread(&name);
		if (t < 0 || name == "fastclock")
			return name == "fastclock" ? t : -1;
		if (fc_mono_coarse_ns() == fc_mono_coarse_ns()) {
			other_thread(&name); // named after the store's reads? then it named itself first, as it must
			if (name == "fastclock")
				return t;
			ADD_FAILURE() << "the keeper runs named '" << name << "'";
			return -1;
		}
		sched_yield();
	}
}


// In a child process: set the creating thread up (setup: 0, or 77 to skip), start the keeper with
// fc_updater_start, and check that the creator is left exactly as it was, that the keeper runs named "fastclock"
// with every signal blocked and in the policy `want_policy` (-1: any), and that the coarse clock it keeps
// advances (by the keeper's own stores: judged by progress, not time).
template <class F> void keeper_start_leaves_creator_alone(const char *what, const char *rt, int want_policy, F setup)
{
	int r = forked([&] {
		setenv("FASTCLOCK_UPDATER_RT", rt, 1);
		int s = setup();
		if (s == 77)
			_exit(77);
		ASSERT_EQ(s, 0) << what << ": setup: " << strerror(errno);
		(void)fc_mono_ns(); // initialised before the snapshot
		ThreadState before = snapshot();
		ASSERT_EQ(fc_updater_start(0), 0) << what << ": " << strerror(errno);
		ThreadState after = snapshot();
		EXPECT_TRUE(before == after) << what << ":\n before " << before.str() << "\n after  " << after.str();
		pid_t k = keeper_tid();
		ASSERT_GT(k, 0) << what << ": no thread named fastclock";
		EXPECT_EQ(task_status(k, "SigBlk"), "fffffffe7ffbfeff") << what << ": the keeper's blocked signals (all but SIGKILL, SIGSTOP and glibc's 32 and 33)";
		if (want_policy >= 0) {
			sattr ka;
			ASSERT_EQ(getattr(k, &ka), 0) << strerror(errno);
			EXPECT_EQ((int)ka.policy, want_policy) << what << ": the keeper's policy";
		}
		// the keeper keeps the coarse clock: until its first store coarse reads are precise reads, which always move;
		// a kept value reads alike twice, then moves (a keeper that never stores hangs here: ctest's timeout)
		int64_t c0 = fc_mono_coarse_ns(), c1;
		while ((c1 = fc_mono_coarse_ns()) != c0)
			c0 = c1;
		while ((c1 = fc_mono_coarse_ns()) == c0)
			;
		EXPECT_GT(c1, c0) << what << ": the coarse clock went back";
		EXPECT_EQ(fc_updater_stop(), 0);
		EXPECT_TRUE(before == snapshot()) << what << ": after fc_updater_stop";
	});
	if (r == 77)
		GTEST_SKIP() << what << ": cannot be set up here (root for a real-time creator, seccomp for a filter)";
	EXPECT_EQ(r, 0) << what << ": child status";
}

int set_attr(uint32_t policy, int nice, uint64_t slice, uint64_t flags, uint32_t prio = 0)
{
	sattr a{};
	a.size = 48;
	a.policy = policy, a.nice = nice, a.runtime = slice, a.flags = flags, a.priority = prio;
	return (int)syscall(SYS_sched_setattr, 0, &a, 0);
}

} // namespace

// The keeper's creator lends it a short slice (EEVDF) across pthread_create and takes its own attributes back:
// whatever they were, the creating thread is left exactly as it was (policy, nice, slice, reset-on-fork, clamps,
// signal mask, name, timer slack), in both keeper modes.
TEST(KeeperStart, the_creating_thread_is_left_as_it_was_whatever_its_attributes)
{
	for (const char *rt : {"0", "1"}) {
		keeper_start_leaves_creator_alone("default", rt, -1, [] { return 0; });
		keeper_start_leaves_creator_alone("nice 5", rt, -1, [] { return setpriority(PRIO_PROCESS, 0, 5); });
		keeper_start_leaves_creator_alone("slice 50 ms", rt, -1, [] { return set_attr(SCHED_OTHER, 0, 50000000, 0); });
		keeper_start_leaves_creator_alone("slice 100 us", rt, -1, [] { return set_attr(SCHED_OTHER, 0, 100000, 0); });
		keeper_start_leaves_creator_alone("reset on fork, nice 3, slice 20 ms", rt, -1,
						  [] { return set_attr(SCHED_OTHER, 3, 20000000, 0x01 /* SCHED_FLAG_RESET_ON_FORK */); });
		keeper_start_leaves_creator_alone("batch", rt, -1, [] { return set_attr(SCHED_BATCH, 0, 0, 0); });
		keeper_start_leaves_creator_alone("idle", rt, -1, [] { return set_attr(SCHED_IDLE, 0, 0, 0); });
		keeper_start_leaves_creator_alone("name and slack", rt, -1, [] {
			return prctl(PR_SET_NAME, "victim", 0, 0, 0) | prctl(PR_SET_TIMERSLACK, 12345, 0, 0, 0);
		});
		keeper_start_leaves_creator_alone("a blocked and a handled signal", rt, -1, [] {
			sigset_t m;
			sigemptyset(&m);
			sigaddset(&m, SIGUSR2);
			signal(SIGUSR1, [](int) {});
			return pthread_sigmask(SIG_BLOCK, &m, nullptr);
		});
	}
}

// A sandbox that refuses sched_getattr or sched_setattr (EPERM, as Docker's default profile for a call it does
// not know; ENOSYS, an old kernel's answer): nothing is lent, nothing is changed, the keeper runs.
TEST(KeeperStart, a_sandbox_refusing_the_scheduler_calls_changes_nothing)
{
	for (long nr : {(long)SYS_sched_getattr, (long)SYS_sched_setattr})
		for (int e : {EPERM, ENOSYS})
			keeper_start_leaves_creator_alone(nr == SYS_sched_getattr ? "sched_getattr refused" : "sched_setattr refused",
							  "0", -1, [=] {
								  if (set_attr(SCHED_OTHER, 0, 20000000, 0) != 0)
									  return -1;
								  return seccomp_fail(nr, e) == 0 ? 0 : 77;
							  });
}

// A real-time creator (SCHED_FIFO 10: root's, or one given it by an administrator's chrt): with
// FASTCLOCK_UPDATER_RT=0 the keeper is an ordinary thread (documented: "FASTCLOCK_UPDATER_RT=0 keeps it
// SCHED_OTHER"), not one at its creator's real-time priority; with 1 it is SCHED_FIFO (at priority 1).
TEST(KeeperStart, a_real_time_creator_gets_the_keeper_its_mode_says)
{
	FC_TEST_NEEDS_A_FRESH_LIBRARY();
	keeper_start_leaves_creator_alone("fifo 10, rt 0", "0", SCHED_OTHER,
					  [] { return set_attr(SCHED_FIFO, 0, 0, 0, 10) == 0 ? 0 : 77; });
	keeper_start_leaves_creator_alone("fifo 10, rt 1", "1", SCHED_FIFO,
					  [] { return set_attr(SCHED_FIFO, 0, 0, 0, 10) == 0 ? 0 : 77; });
	keeper_start_leaves_creator_alone("rr 10, rt 0", "0", SCHED_OTHER,
					  [] { return set_attr(SCHED_RR, 0, 0, 0, 10) == 0 ? 0 : 77; });
}

// A source's path whose directory part is longer than the opener's buffer (255 bytes) was cut to fit: the checks and
// the open then ran in another directory, the one the cut named (a prefix of the real one), and its file was opened
// as the source. Now refused with ENAMETOOLONG.
TEST(SourcePath, a_directory_too_long_to_hold_is_refused_not_cut)
{
	TmpDir d;
	std::string cut = d.path + "/" + std::string(255 - d.path.size() - 1, 'a'); // 255 bytes: what the buffer held
	ASSERT_EQ(cut.size(), 255u);
	ASSERT_EQ(mkdir(cut.c_str(), 0755), 0) << strerror(errno);
	std::string other = d.file((cut.substr(d.path.size() + 1) + "/shm0").c_str(), "another file"); // the cut's
	std::string path = cut + "b/shm0"; // no such directory
	struct stat st;
	fc_bound b{};
	int fd = fc__bound_open_file(path.c_str(), FC_OPEN_REG, &st, &b, 0);
	if (fd >= 0)
		close(fd);
	EXPECT_LT(fd, 0) << "opened " << other << " for " << path;
	EXPECT_NE(std::string(b.last_error).find("ENAMETOOLONG"), std::string::npos) << b.last_error;
}

namespace {
volatile sig_atomic_t g_handler_reads;
void read_in_handler(int) { (void)fc_mono_ns(), g_handler_reads = g_handler_reads + 1; }
} // namespace

// Reads whose hand is stale start the keeper (the library's own decision), but pthread_create is not
// async-signal-safe: a profiler's handler that reads the clock must never create it (it may have interrupted
// malloc, whose lock the new thread's TLS takes). Reads made only in a handler re-anchor and start nothing; the
// first read outside one starts the keeper. Judged by what happened, not by time.
TEST(KeeperStart, a_read_in_a_signal_handler_never_starts_the_keeper)
{
	FC_TEST_NEEDS_A_FRESH_LIBRARY();
#if defined(__SANITIZE_THREAD__)
	GTEST_SKIP() << "ThreadSanitizer runs a handler at its own safe point, outside the signal's context and mask";
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
	GTEST_SKIP() << "ThreadSanitizer runs a handler at its own safe point, outside the signal's context and mask";
#endif
#endif
	int r = forked([] {
		struct sigaction sa {};
		sa.sa_handler = read_in_handler; // no SA_NODEFER: the handler runs with SIGUSR1 blocked
		ASSERT_EQ(sigaction(SIGUSR1, &sa, nullptr), 0);
		(void)fc_mono_ns();
		struct fc_status s0, s1;
		fc_status(&s0);
		const struct timespec pause = {0, 3000000}; // past the default period: each read finds its hand stale
		for (int i = 0; i < 40; i++) {
			nanosleep(&pause, nullptr);
			raise(SIGUSR1);
		}
		fc_status(&s1);
		ASSERT_EQ(g_handler_reads, 40);
		ASSERT_GE(s1.reanchors - s0.reanchors, 20u) << "the handlers' reads did not re-anchor";
		std::string name;
		EXPECT_LT(other_thread(&name), 0) << "a thread was started from a signal handler: " << name;
		EXPECT_EQ(s1.updater_running, 0);
		// Outside a handler, a read after a pause starts it (tried again a second after the last refusal)
		while (fc_status(&s1), s1.updater_running == 0) {
			nanosleep(&pause, nullptr);
			(void)fc_mono_ns();
		}
		EXPECT_GT(keeper_tid(), 0);
	});
	EXPECT_EQ(r, 0);
}

// A server that blocks SIGINT and SIGTERM to take them with sigwait or signalfd (no handler) is not in a handler:
// its reads start the keeper as any program's. Judged by the kernel's clock against the code's own retry (a
// refused start is tried again a second later): within 3 s of reads the keeper runs.
TEST(KeeperStart, a_thread_blocking_signals_it_has_no_handler_for_starts_the_keeper)
{
	FC_TEST_NEEDS_A_FRESH_LIBRARY();
	int r = forked([] {
		sigset_t m;
		sigemptyset(&m);
		sigaddset(&m, SIGINT);
		sigaddset(&m, SIGTERM);
		ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &m, nullptr), 0);
		struct fc_status st;
		const struct timespec pause = {0, 3000000};
		struct timespec t0, t;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			nanosleep(&pause, nullptr);
			(void)fc_mono_ns();
			fc_status(&st);
			clock_gettime(CLOCK_MONOTONIC, &t);
		} while (st.updater_running == 0 && t.tv_sec - t0.tv_sec < 3);
		EXPECT_NE(st.updater_running, 0) << "no keeper in 3 s of reads with SIGINT and SIGTERM blocked";
	});
	EXPECT_EQ(r, 0);
}
