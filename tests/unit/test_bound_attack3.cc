// fastclock unit tests — a third round of attacks from outside the process (docs/THREATS.md): a process out of
// file descriptors opening chronyd's socket (src/bound/chrony.c unix_open), a sandbox whose fstatfs fails while a
// VMClock device is looked at (src/bound/bound.c). Tests that need root (a socket or device of root's) skip
// otherwise.
#include <gtest/gtest.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "bound/bound.h"
#include "bound/chrony.h"
#include "bound/vmclock.h"
#include "bound_fixtures.h"

namespace {

// Runs body in a child process (what it changes, its limits and filters, stays there); the child's gtest failures
// are its exit status, 77 a skip.
template <class F> void in_child(F body)
{
	int r = forked(body);
	if (r == 77)
		GTEST_SKIP() << "not possible here (see the child's output)";
	EXPECT_EQ(r, 0) << "child status";
}

// A directory of root's, mode 0750 (as chronyd's /run/chrony), removed with what the test leaves in it.
struct RootDir {
	std::string path;
	RootDir()
	{
		char t[] = "/tmp/fc_attack3_XXXXXX";
		EXPECT_NE(mkdtemp(t), nullptr) << strerror(errno);
		path = t;
		EXPECT_EQ(chmod(t, 0750), 0);
	}
	int entries(const char *prefix) const
	{
		int n = 0;
		DIR *d = opendir(path.c_str());
		for (dirent *e; d && (e = readdir(d));)
			n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
		if (d)
			closedir(d);
		return n;
	}
	~RootDir()
	{
		std::error_code ec;
		std::filesystem::remove_all(path, ec);
	}
};

// A process at its descriptor limit (a server that accepts connections until EMFILE hovers there) opening
// chronyd's unix socket: the open of the directory it just made in chronyd's fails (EMFILE), and it used to try
// again with a new name, leaving each directory behind: 3 an open, one open a second, in chronyd's /run/chrony,
// which no sweep removed (its opens fail too). Now the directory is removed again and the open fails naming EMFILE.
TEST(ChronyDescriptors, a_process_out_of_descriptors_leaves_nothing_in_chronyds_directory)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root (chronyd's directory and socket of root's)";
	RootDir d;
	std::string path = d.path + "/chronyd.sock";
	in_child([&] {
		sockaddr_un a{};
		a.sun_family = AF_UNIX;
		snprintf(a.sun_path, sizeof(a.sun_path), "%s", path.c_str());
		int l = socket(AF_UNIX, SOCK_DGRAM, 0);
		ASSERT_EQ(bind(l, (sockaddr *)&a, sizeof(a)), 0) << strerror(errno);
		rlimit r{64, 64};
		ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &r), 0);
		std::vector<int> fill;
		for (int fd; (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;)
			fill.push_back(fd);
		ASSERT_FALSE(fill.empty());
		close(fill.back()); // exactly one descriptor left: chronyd's directory takes it, ours finds none
		fill.pop_back();
		std::string err;
		for (int i = 0; i < 3; i++) {
			fc_chrony ch;
			fc_bound b{};
			if (fc__chrony_open(&ch, path.c_str(), &b, 0) == 0) {
				ADD_FAILURE() << "opened with one descriptor free";
				fc__chrony_close(&ch);
			}
			err = b.last_error;
		}
		EXPECT_NE(err.find("too many open files (EMFILE)"), std::string::npos) << err;
		close(l);
		for (int fd : fill) // the count below needs one
			close(fd);
		EXPECT_EQ(d.entries("fastclock."), 0) << "directories left in chronyd's directory after 3 opens";
	});
}


// A VMClock device is opened only once procfs (/proc/self/fd) and sysfs (its uevent) say what it is, each checked by
// fstatfs. Where that fstatfs itself fails (a sandbox's filter), the refusal said "/proc is not procfs" or "/sys is
// not sysfs": untrue, and the error that would tell an administrator why was lost. Now it is named. The device is
// refused all the same. fc__bound_open_file opens, in order from the lowest free descriptor n (the holes below the
// highest open one filled first): the directory (n), the path O_PATH (n + 1), /proc/self/fd (n + 2), the uevent
// (n + 3): the filter fails one of their fstatfs.
TEST(VmClockDevice, a_failing_fstatfs_is_named_not_taken_for_another_filesystem)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root (mknod)";
	RootDir d;
	std::string path = d.path + "/vmclock0";
	ASSERT_EQ(mknod(path.c_str(), S_IFCHR | 0600, makedev(1, 3)), 0) << strerror(errno);
	if (access("/sys/dev/char/1:3/uevent", R_OK) != 0 || access("/proc/self/fd", R_OK) != 0)
		GTEST_SKIP() << "no sysfs or procfs here";
	for (int which : {2, 3}) {
		in_child([&] {
			int hi = 2, n; // no hole below the descriptors it will open: they then come in order from n
			for (int fd = 3; fd < 1024; fd++)
				if (fcntl(fd, F_GETFD) >= 0)
					hi = fd;
			while ((n = open("/dev/null", O_RDONLY)) >= 0 && n < hi)
				;
			if (n >= 0)
				close(n);
			if (seccomp_fail(SYS_fstatfs, EPERM, n + which) != 0) {
				fprintf(stderr, "no seccomp filter: %s\n", strerror(errno));
				_exit(77);
			}
			fc_vmc v;
			fc_bound b{};
			EXPECT_NE(fc__vmc_open(&v, path.c_str(), &b, 0), 0) << "a device whose filesystem is unknown was opened";
			std::string err = b.last_error;
			const char *want = which == 2 ? "not opened: no procfs to reopen a device by (operation not permitted (EPERM))"
						      : "not opened: sysfs cannot tell a vmclock (1:3: operation not permitted (EPERM))";
			EXPECT_NE(err.find(want), std::string::npos) << err;
		});
	}
}

// A fork child that closes every descriptor it did not open (a daemon's close-all, no exec) and reuses the numbers
// for its own files: the sources' reopen at its second bounded read (fc__bounder_close) closed them by number (end
// to end, FASTCLOCK_BOUND_SOURCE=clockbound: the program's /dev/null under the segment's old number 5 was gone after
// the child's bounded reads). Each source now closes a descriptor only while it is still the file it opened: here
// /dev/null is put under each of their numbers (dup2: the program's close and open in one), and must stay open.
TEST(ForkCloseAll, a_sources_close_leaves_a_file_the_program_put_under_its_number)
{
	std::string d = tmpdir(); // ours, 0700: a segment and a socket of ours are trusted here
	Segment seg(d);
	seg.write();
	VmFile vf(d);
	FakeChronyd fake(d);
	fc_cb cb;
	fc_vmc v;
	fc_chrony ch;
	fc_bound b{};
	ASSERT_EQ(fc__cb_open(&cb, seg.path.c_str(), &b, 0), 0) << b.last_error;
	ASSERT_EQ(fc__vmc_open(&v, vf.path.c_str(), &b, 0), 0) << b.last_error;
	ASSERT_EQ(fc__chrony_open(&ch, fake.path.c_str(), &b, 0), 0) << b.last_error;
	const int fds[] = {cb.fd, v.fd, ch.fd, ch.dirfd};
	for (int fd : fds) {
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		ASSERT_GE(fd, 0);
		ASSERT_EQ(dup2(null, fd), fd) << strerror(errno);
		close(null);
	}
	fc__cb_close(&cb);
	fc__vmc_close(&v);
	fc__chrony_close(&ch);
	const char *what[] = {"the segment's", "the VMClock file's", "chronyd socket's", "our socket directory's"};
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		struct stat st;
		EXPECT_TRUE(fstat(fds[i], &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3))
			<< "the program's /dev/null under " << what[i] << " number " << fds[i] << " was closed";
		close(fds[i]);
	}
	std::error_code ec;
	std::filesystem::remove_all(d, ec);
}

} // namespace
