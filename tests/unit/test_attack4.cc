// fastclock unit tests — a fourth round of attacks from outside the process (docs/THREATS.md): the kernel's
// clocksource file the trust check reads (src/trust.c: a FIFO, a directory, a device, a link, a file that is not
// on sysfs, a NUL in the name); the keeper's start where threads cannot be created (src/updater.c).
#include <gtest/gtest.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "bound_fixtures.h"
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
