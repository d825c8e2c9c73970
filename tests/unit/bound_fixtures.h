// fastclock unit tests — what the bound-source tests (tests/unit/test_bound_*.cc) write and play: a temporary
// directory, a ClockBound segment, a VMClock page and a host's line in it, and chronyd's side of its command
// protocol (replies, a fake chronyd on a datagram socket).
#ifndef FASTCLOCK_TEST_BOUND_FIXTURES_H
#define FASTCLOCK_TEST_BOUND_FIXTURES_H

#include <gtest/gtest.h>

#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "bound/clockbound.h"
#include "bound/vmclock.h"
#include "state.h"

namespace {

constexpr int64_t MS = 1000000, SEC = 1000000000;

// A test of what a process's first use of the library decides (the environment, read once; the keeper's first start)
// needs a process where the library has not started: ctest runs each test in a process of its own. Run as one
// process (the binary alone), such a test after others would find it started and judge another process's choices:
// it is skipped, saying so.
#define FC_TEST_NEEDS_A_FRESH_LIBRARY()                                                                           \
	do {                                                                                                       \
		if (__atomic_load_n(&fc__global_clock()->init_state, __ATOMIC_RELAXED) != 0)                       \
			GTEST_SKIP() << "the library has started in this process: this test needs one of its own, " \
				     << "as ctest gives it (ctest -R "                                              \
				     << ::testing::UnitTest::GetInstance()->current_test_info()->name() << ")";     \
	} while (0)

// Runs body in a forked child (which leaves with _exit: nothing of the parent's is undone) and says how it ended: 0
// (no gtest failure there), 1 (one), 77 (body asked to be skipped: _exit(77)), else 1000 + the wait status.
template <class F> int forked(F body)
{
	fflush(nullptr);
	pid_t p = fork();
	if (p == 0) {
		body();
		fflush(nullptr);
		_exit(::testing::Test::HasFailure() ? 1 : 0);
	}
	int st = 0;
	if (waitpid(p, &st, 0) != p)
		return 1000;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + st;
}

// Fails every call of system call nr (only those whose first argument is fd, where fd >= 0) with errno e, in this
// process from now on: a sandbox's seccomp filter (Docker's answers EPERM; an old kernel's, ENOSYS). 0, or -1 where
// seccomp filters cannot be set.
inline int seccomp_fail(long nr, int e, int fd = -1)
{
	const bool any = fd < 0;
	const uint8_t skip = any ? 0 : 1; /* on a first argument that is not fd: to ALLOW */
	sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, any ? 0u : (uint32_t)fd, 0, skip),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (uint32_t)e),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	sock_fprog prog{sizeof(f) / sizeof(f[0]), f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

// The output and exit code of a command line run by sh.
inline std::string run(const std::string &cmd, int *rc = nullptr)
{
	std::string out;
	FILE *f = popen(cmd.c_str(), "r");
	char buf[512];
	while (f && fgets(buf, sizeof(buf), f))
		out += buf;
	int st = f ? pclose(f) : -1;
	if (rc)
		*rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return out;
}

inline std::string tmpdir()
{
	char t[] = "/tmp/fc_bound_XXXXXX";
	EXPECT_NE(mkdtemp(t), nullptr);
	return t;
}

// A ClockBound segment written as clock-bound-d's writer does: generation odd while writing, even after.
struct Segment {
	std::string path;
	fc_cb_segment s{};
	explicit Segment(const std::string &dir) : path(dir + "/shm0")
	{
		s.magic[0] = FC_CB_MAGIC0;
		s.magic[1] = FC_CB_MAGIC1;
		s.segsize = FC_CB_SIZE;
		s.version = FC_CB_VERSION;
		s.generation = 2;
		s.max_drift_ppb = 1000;
		s.clock_status = FC_CB_SYNCHRONIZED;
	}
	void set_as_of(int64_t ns, int64_t void_after_ns)
	{
		s.as_of_sec = ns / SEC, s.as_of_nsec = ns % SEC;
		s.void_after_sec = void_after_ns / SEC, s.void_after_nsec = void_after_ns % SEC;
	}
	void write()
	{
		int fd = open(path.c_str(), O_RDWR | O_CREAT, 0644);
		ASSERT_GE(fd, 0);
		ASSERT_EQ(pwrite(fd, &s, sizeof(s), 0), (ssize_t)sizeof(s));
		close(fd);
	}
	void update() // a complete update: two generation steps
	{
		s.generation = (uint16_t)(s.generation + 2);
		if (s.generation == 0)
			s.generation = 2;
		write();
	}
};

struct VmFile {
	std::string path;
	uint8_t m[4096]{};
	explicit VmFile(const std::string &d) : path(d + "/vmclock0")
	{
		uint32_t magic = FC_VMCLOCK_MAGIC, size = 104;
		memcpy(m, &magic, 4), memcpy(m + 4, &size, 4);
		m[8] = 1;              // version
		m[34] = FC_VMC_SYNCHRONIZED;
		write();
	}
	void marker(uint64_t v) { memcpy(m + 16, &v, 8); }
	void write()
	{
		int fd = open(path.c_str(), O_RDWR | O_CREAT, 0644);
		ASSERT_EQ(pwrite(fd, m, sizeof(m), 0), (ssize_t)sizeof(m));
		close(fd);
	}
};

// ---- VMClock as a time source ------------------------------------------------------------------------------
// A snapshot of a host that publishes the time of a 2.5 GHz counter (shift 4), 10 us and 10 ppm maximum errors.
constexpr long double TWO64 = 18446744073709551616.0L;
inline fc_vmc_snap vm_line()
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

// The counter and CLOCK_REALTIME a bounder's VMClock sample reads (fc_bounder's counter, realtime, clk_ctx).
struct FakeHost {
	uint64_t counter = 0;
	int64_t real = 0;
	static uint64_t read_counter(void *p) { return ((FakeHost *)p)->counter; }
	static int64_t read_real(void *p) { return ((FakeHost *)p)->real; }
};

// The page of snapshot s, laid out as the host writes it.
inline void vm_page(VmFile &f, const fc_vmc_snap &s)
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

// ---- chronyd's command protocol ----------------------------------------------------------------------------
inline void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}
inline void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8), p[1] = (uint8_t)v; }
// candm's Float: coef * 2^(exp - 25); exp chosen so coef keeps 24 bits of precision.
inline uint32_t put_float(double x)
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

inline size_t tracking_reply(uint8_t *buf, uint32_t seq, double corr, double delay, double disp, int leap)
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

// A datagram socket bound at path: a fake chronyd's.
inline int bind_dgram(const std::string &path)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	sockaddr_un a{};
	a.sun_family = AF_UNIX;
	strcpy(a.sun_path, path.c_str());
	EXPECT_EQ(bind(fd, (sockaddr *)&a, sizeof(a)), 0) << path;
	return fd;
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

// In a child process: a network namespace of its own (plus `more` unshare flags, e.g. CLONE_NEWNS) with its
// loopback up, so a test may bind chronyd's port 323 or talk to a fake chronyd without touching the host's
// network. false where the kernel or the privileges do not allow it (the caller skips).
inline bool private_loopback(int more = 0)
{
	ifreq r{};
	int s;
	if (unshare(CLONE_NEWNET | more) != 0)
		return false;
	s = socket(AF_INET, SOCK_DGRAM, 0);
	strcpy(r.ifr_name, "lo");
	bool up = s >= 0 && ioctl(s, SIOCGIFFLAGS, &r) == 0 && (r.ifr_flags |= IFF_UP, ioctl(s, SIOCSIFFLAGS, &r)) == 0;
	if (s >= 0)
		close(s);
	return up;
}

} // namespace

#endif
