// fastclock unit tests — the chronyd source (src/bound/chrony.c) against fakes of chronyd that each test starts
// and stops itself: who may answer (a connected socket, random sequence numbers), where our socket lives (a
// directory of our own, nothing chmod()ed through a name others control, nothing left behind), the command port
// for a process that may not use the unix socket, and the range of every float in a report.
// Tests that play another user (setresuid, as setpriv does) or need their own network namespace (chronyd's
// port 323 on a loopback of their own) run in a child process and skip without root.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "bound/select.h"
#include "fastclock.h"
#include "bound_fixtures.h"

namespace {

constexpr uid_t NOBODY = 65534;
constexpr int SKIP = 77, CANNOT_BECOME = 99;

// Every directory a test makes lies under one root, made when the test program starts (before any test forks)
// and removed with everything in it when that process exits (children's directories included).
int remove_entry(const char *path, const struct stat *, int type, struct FTW *)
{
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

const std::string &test_root()
{
	static const std::string root = [] {
		static char t[] = "/tmp/fc_chrony_XXXXXX";
		static pid_t owner = getpid();
		if (!mkdtemp(t))
			abort();
		chmod(t, 0755); // other users (nobody) pass through to the directories that let them
		atexit([] {
			if (getpid() == owner)
				nftw(t, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
		});
		return std::string(t);
	}();
	return root;
}
const std::string &g_root_made_before_main = test_root();

std::string make_dir(mode_t mode)
{
	std::string t = test_root() + "/XXXXXX";
	EXPECT_NE(mkdtemp(&t[0]), nullptr);
	chmod(t.c_str(), mode);
	return t;
}

// ---- candm replies, as chronyd 4.x sends them ---------------------------------------------------------------
struct Be { // big-endian writer into a reply
	uint8_t *p;
	void u16(size_t at, uint32_t v) { p[at] = (uint8_t)(v >> 8), p[at + 1] = (uint8_t)v; }
	void u32(size_t at, uint32_t v) { u16(at, v >> 16), u16(at + 2, v & 0xffff); }
	// candm's Float: coef (25 bits, signed) * 2^(exp (7 bits, signed) - 25)
	void f(size_t at, double x)
	{
		int e = 0;
		double a = std::fabs(x);
		for (; a >= (1 << 24) && e < 63; e++)
			a /= 2;
		for (; a != 0 && a < (1 << 23) && e > -64; e--)
			a *= 2;
		int32_t c = (int32_t)(x < 0 ? -a : a);
		u32(at, ((uint32_t)(e + 25) & 0x7f) << 25 | ((uint32_t)c & 0x1ffffff));
	}
};

// What the fake says: tracking (correction etc.) and its single source's newest measurement.
struct Report {
	double corr = 0.0, delay = 0.00002, disp = 0.00001, skew = 0.1, resid = 0.0, interval = 2.0;
	double meas = 0.0, meas_err = 0.00001;
	// when chronyd last updated the clock (tracking's ref_time), its source's poll (log2 s) and the age of
	// the source's newest sample (whole seconds)
	uint32_t ref_sec = 1700000000, ref_nsec = 0, since = 1;
	int poll = 0;
};

struct Request {
	sockaddr_storage from{};
	socklen_t fromlen = sizeof(from);
	uint32_t seq = 0, index = 0;
	uint16_t cmd = 0;
};

// A reply to q from r: tracking (33), the source count (14: one source), source data (15: selected).
size_t build_reply(uint8_t *buf, const Request &q, const Report &r)
{
	Be w{buf};
	size_t len = q.cmd == 33 ? 104 : q.cmd == 14 ? 32 : 76;
	memset(buf, 0, len);
	buf[0] = 6, buf[1] = 2;
	w.u16(4, q.cmd), w.u16(6, q.cmd == 33 ? 5 : q.cmd == 14 ? 2 : 3), w.u32(16, q.seq);
	if (q.cmd == 33) {
		w.u16(28 + 24, 1), w.u32(28 + 32, r.ref_sec), w.u32(28 + 36, r.ref_nsec);
		w.f(28 + 40, r.corr), w.f(28 + 60, r.skew), w.f(28 + 56, r.resid);
		w.f(28 + 64, r.delay), w.f(28 + 68, r.disp), w.f(28 + 72, r.interval);
	} else if (q.cmd == 14) {
		w.u32(28, 1);
	} else {
		w.u32(28, 0x0a000001u), w.u16(28 + 16, 1); // 10.0.0.1
		w.u16(28 + 20, (uint16_t)r.poll);
		w.u16(28 + 24, FC_CHRONY_SELECTED), w.u16(28 + 30, 0377), w.u32(28 + 32, r.since);
		w.f(28 + 40, r.meas), w.f(28 + 44, r.meas_err);
	}
	return len;
}

// A fake chronyd on a datagram socket (unix path or loopback port), answered by the test between polls.
struct Fake {
	int fd = -1;
	std::string path;
	Fake() = default;
	explicit Fake(const std::string &dir) : path(dir + "/chronyd.sock")
	{
		sockaddr_un a{};
		a.sun_family = AF_UNIX;
		strcpy(a.sun_path, path.c_str());
		fd = socket(AF_UNIX, SOCK_DGRAM, 0);
		EXPECT_EQ(bind(fd, (sockaddr *)&a, sizeof(a)), 0) << path << ": " << strerror(errno);
	}
	static Fake udp(bool v6, uint16_t port)
	{
		Fake f;
		f.fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);
		sockaddr_in a4{};
		sockaddr_in6 a6{};
		a4.sin_family = AF_INET, a4.sin_port = htons(port), a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		a6.sin6_family = AF_INET6, a6.sin6_port = htons(port), a6.sin6_addr = in6addr_loopback;
		int r = v6 ? bind(f.fd, (sockaddr *)&a6, sizeof(a6)) : bind(f.fd, (sockaddr *)&a4, sizeof(a4));
		EXPECT_EQ(r, 0) << "bind port " << port << ": " << strerror(errno);
		return f;
	}
	~Fake()
	{
		if (fd >= 0)
			close(fd);
	}
	Fake(Fake &&o) noexcept : fd(o.fd), path(o.path) { o.fd = -1; }
	Fake &operator=(Fake &&o) noexcept
	{
		std::swap(fd, o.fd);
		std::swap(path, o.path);
		return *this;
	}
	std::vector<Request> requests()
	{
		std::vector<Request> v;
		uint8_t buf[512];
		for (;;) {
			Request q;
			ssize_t n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (sockaddr *)&q.from, &q.fromlen);
			if (n < 24)
				return v;
			q.cmd = (uint16_t)(buf[4] << 8 | buf[5]);
			q.seq = (uint32_t)buf[8] << 24 | buf[9] << 16 | buf[10] << 8 | buf[11];
			q.index = (uint32_t)buf[20] << 24 | buf[21] << 16 | buf[22] << 8 | buf[23];
			v.push_back(q);
		}
	}
	void answer(const Request &q, const Report &r) const
	{
		uint8_t buf[512];
		size_t len = build_reply(buf, q, r);
		EXPECT_EQ(sendto(fd, buf, len, 0, (const sockaddr *)&q.from, q.fromlen), (ssize_t)len) << strerror(errno);
	}
	int answer_all(const Report &r)
	{
		auto v = requests();
		for (auto &q : v)
			answer(q, r);
		return (int)v.size();
	}
};

// Runs body in a child process (as `uid` when not 0, in a network namespace of its own with its loopback up
// when netns); the child's gtest failures are its exit status. Skips without root.
template <class F> void in_child(bool netns, F body)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root (another user, a network namespace)";
	fflush(nullptr);
	pid_t p = fork();
	if (p == 0) {
		if (netns && !private_loopback())
			_exit(SKIP);
		body();
		fflush(nullptr);
		_exit(::testing::Test::HasFailure() ? 1 : 0);
	}
	int st = 0;
	ASSERT_EQ(waitpid(p, &st, 0), p);
	if (WIFEXITED(st) && (WEXITSTATUS(st) == SKIP || WEXITSTATUS(st) == CANNOT_BECOME))
		GTEST_SKIP() << "no network namespace, or no other user, here";
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "child status " << st;
}

// Drop to uid as setpriv --reuid --regid --clear-groups does; where that is not allowed (no CAP_SETUID), the
// process exits with SKIP (in_child skips the test).
void become(uid_t uid)
{
	if (setgroups(0, nullptr) != 0 || setresgid(uid, uid, uid) != 0 || setresuid(uid, uid, uid) != 0)
		_exit(CANNOT_BECOME);
}

// One round against the fake: requests sent, answered with r, replies taken.
void round_trip(fc_chrony *ch, Fake &f, int64_t at, const Report &r, fc_bound *b)
{
	fc__chrony_poll(ch, at, SEC, b);
	EXPECT_GE(f.answer_all(r), 3);
	fc__chrony_poll(ch, at + MS, SEC, b);
}

bool contains(const fc_bound &b, double truth_s)
{
	int64_t t = (int64_t)(truth_s * 1e9);
	return b.center_ns - b.half_ns <= t && t <= b.center_ns + b.half_ns;
}

int count_entries(const std::string &dir, const char *prefix)
{
	int n = 0;
	DIR *d = opendir(dir.c_str());
	for (dirent *e; d && (e = readdir(d));)
		n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	if (d)
		closedir(d);
	return n;
}

// Open the source on chronyd's socket `path` (expecting transport `via`) and send the first round; the requests
// as `peer` (the fake on that transport) received them.
std::vector<Request> open_and_ask(fc_chrony *ch, const std::string &path, const char *via, Fake &peer, fc_bound *b)
{
	if (fc__chrony_open(ch, path.c_str(), b, 0) != 0) {
		ADD_FAILURE() << b->last_error;
		return {};
	}
	EXPECT_STREQ(ch->via_name, via);
	fc__chrony_poll(ch, SEC, SEC, b);
	auto reqs = peer.requests();
	EXPECT_GE(reqs.size(), 3u);
	return reqs;
}

// A fake chronyd on a unix socket in a fresh directory (mode), the source open on it, its first round sent.
struct UnixRound {
	std::string dir;
	Fake f;
	fc_chrony ch{};
	fc_bound b{};
	std::vector<Request> reqs;
	explicit UnixRound(mode_t mode) : dir(make_dir(mode)), f(dir) { reqs = open_and_ask(&ch, f.path, "unix socket", f, &b); }
	~UnixRound() { fc__chrony_close(&ch); }
};

// A forger's replies to the requests, "in sync" (Report{}), sent from fd to `to` (NULL: each request's sender);
// returns how many the kernel accepted.
int forge(int fd, const std::vector<Request> &reqs, const sockaddr *to, socklen_t tolen)
{
	int delivered = 0;
	for (auto &q : reqs) {
		uint8_t buf[512];
		size_t len = build_reply(buf, q, Report{});
		delivered += sendto(fd, buf, len, 0, to ? to : (const sockaddr *)&q.from, to ? tolen : q.fromlen) == (ssize_t)len;
	}
	return delivered;
}

// The worst moment, on demand: chronyd's user (the socket directory's owner) swaps names in its directory right
// as a chmod is about to run. The library's chmod-family calls land here (this executable's definitions come
// before libc's); armed (g_swap_dir set) only by the test below, they otherwise call libc's (RTLD_NEXT).
std::string g_swap_dir, g_victim;

void swap_before_chmod(const std::string &path)
{
	if (g_swap_dir.empty() || path.compare(0, g_swap_dir.size() + 1, g_swap_dir + "/") != 0)
		return;
	std::string rel = path.substr(g_swap_dir.size() + 1), first = rel.substr(0, rel.find('/'));
	std::string top = g_swap_dir + "/" + first, tmp = g_swap_dir + "/.swap";
	if (rel.find('/') == std::string::npos) { // our socket itself (the old layout): a symlink over it
		symlink(g_victim.c_str(), tmp.c_str());
		rename(tmp.c_str(), path.c_str());
	} else { // our directory: moved away, replaced by one whose entry is the symlink
		rename(top.c_str(), (top + ".moved").c_str());
		mkdir(top.c_str(), 0755);
		symlink(g_victim.c_str(), (g_swap_dir + "/" + rel).c_str());
	}
}

} // namespace

extern "C" int chmod(const char *path, mode_t mode)
{
	static auto real = (int (*)(const char *, mode_t))dlsym(RTLD_NEXT, "chmod");
	swap_before_chmod(path);
	return real(path, mode);
}

extern "C" int fchmodat(int dfd, const char *name, mode_t mode, int flags)
{
	static auto real = (int (*)(int, const char *, mode_t, int))dlsym(RTLD_NEXT, "fchmodat");
	if (!g_swap_dir.empty()) {
		char link[64], dir[PATH_MAX];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", dfd);
		ssize_t n = dfd == AT_FDCWD ? -1 : readlink(link, dir, sizeof(dir) - 1);
		if (n > 0)
			swap_before_chmod(std::string(dir, (size_t)n) + "/" + name);
		else if (dfd == AT_FDCWD)
			swap_before_chmod(name);
	}
	return real(dfd, name, mode, flags);
}

// Another user's link on the configured path (FASTCLOCK_CHRONY_SOCKET=<their dir>/chrony/chronyd.sock, the link
// chrony -> chronyd's directory), swapped to their own directory around each connect the library makes: armed
// (g_link set) only by the tests below, which point it at g_evil during the connect and back at g_real after (so
// that replies still find our socket's path); otherwise libc's connect (RTLD_NEXT).
std::string g_link, g_real, g_evil;
int g_link_swaps;

void point_link(const std::string &to)
{
	std::string tmp = g_link + ".new";
	unlink(tmp.c_str());
	if (symlink(to.c_str(), tmp.c_str()) == 0 && rename(tmp.c_str(), g_link.c_str()) == 0)
		return;
	ADD_FAILURE() << "link " << g_link << " -> " << to << ": " << strerror(errno);
}

extern "C" int connect(int fd, const struct sockaddr *a, socklen_t len)
{
	static auto real = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "connect");
	if (g_link.empty() || a->sa_family != AF_UNIX)
		return real(fd, a, len);
	point_link(g_evil);
	g_link_swaps++;
	int r = real(fd, a, len), e = errno;
	point_link(g_real);
	errno = e;
	return r;
}

namespace {

// ---- who may answer ------------------------------------------------------------------------------------------

// chronyd's clock is 2 s off (its correction says so); a process of another user who can reach the socket
// directory, knowing our socket's path and even the round's sequence number, answers first "in sync, +-15 us":
// the kernel refuses its datagram (our socket is connected to chronyd's), as it refuses one from another socket
// of our own user, and chronyd's reply is the one taken.
TEST(BoundChrony, forged_reply_from_another_user_or_socket_never_reaches_us)
{
	in_child(false, [] {
		UnixRound u(0755);
		auto &[dir, f, ch, b, reqs] = u;
		ASSERT_GE(reqs.size(), 3u);
		Report real;
		real.corr = 2.0;
		sockaddr_un to{};
		to.sun_family = AF_UNIX;
		strcpy(to.sun_path, ch.local);
		// the forger: nobody, racing chronyd with the right sequence numbers
		pid_t p = fork();
		if (p == 0) {
			become(NOBODY);
			_exit(forge(socket(AF_UNIX, SOCK_DGRAM, 0), reqs, (sockaddr *)&to, sizeof(to)));
		}
		int st = 0;
		waitpid(p, &st, 0);
		if (WIFEXITED(st) && WEXITSTATUS(st) == CANNOT_BECOME)
			_exit(CANNOT_BECOME);
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "forged datagrams delivered: " << WEXITSTATUS(st);
		// another socket of the same user (bound beside chronyd's): refused by the kernel too
		Fake other(make_dir(0700));
		EXPECT_EQ(forge(other.fd, {reqs[0]}, (sockaddr *)&to, sizeof(to)), 0);
		EXPECT_EQ(errno, EPERM) << strerror(errno);
		for (auto &q : reqs)
			f.answer(q, real);
		fc__chrony_poll(&ch, SEC + MS, SEC, &b);
		EXPECT_EQ(b.status, FC_SYNC_SYNCHRONIZED) << b.reason;
		EXPECT_GE(b.center_ns + b.half_ns, 2 * SEC) << "the forged report was taken: " << b.reason;
		EXPECT_NE(strstr(b.reason, "via unix socket"), nullptr) << b.reason;
	});
}

// The sequence numbers of a round are drawn at random: neither the first round's nor the next one's follow
// from anything another process can see (they were 8, 16, ... before).
TEST(BoundChrony, sequence_numbers_are_unpredictable)
{
	std::string d = make_dir(0700);
	Fake f(d);
	std::vector<uint32_t> firsts;
	for (int k = 0; k < 4; k++) {
		fc_chrony ch;
		fc_bound b{};
		ASSERT_EQ(fc__chrony_open(&ch, f.path.c_str(), &b, 0), 0) << b.last_error;
		fc__chrony_poll(&ch, SEC, SEC, &b);
		auto r1 = f.requests();
		f.answer_all(Report{}); // (replies to a closed socket are lost)
		fc__chrony_poll(&ch, SEC + MS, SEC, &b);
		fc__chrony_poll(&ch, 2 * SEC + MS, SEC, &b);
		auto r2 = f.requests();
		ASSERT_GE(r1.size(), 3u);
		ASSERT_GE(r2.size(), 3u);
		EXPECT_EQ(r1[1].seq, r1[0].seq + 1); // one round's requests are consecutive (seq + k names request k)
		EXPECT_GT(r2[0].seq - r1[0].seq, (uint32_t)(2 + FC_CHRONY_MAX_SOURCES) * FC_CHRONY_PAST)
			<< "round 2 follows round 1";
		firsts.push_back(r1[0].seq);
		fc__chrony_close(&ch);
	}
	for (size_t i = 0; i < firsts.size(); i++)
		for (size_t j = i + 1; j < firsts.size(); j++)
			EXPECT_NE(firsts[i], firsts[j]) << "two processes' first rounds share sequence " << firsts[i];
}

// chronyd itself (the peer) sends a reply with a sequence number of no request, then the real tracking reply, the
// same again with other values, and the rest of the round: the first is dropped with an error naming it, the
// round completes with the real replies, the repeat changes nothing.
TEST(BoundChrony, a_foreign_sequence_or_a_repeat_never_completes_or_changes_a_round)
{
	UnixRound u(0700);
	auto &[dir, f, ch, b, reqs] = u;
	ASSERT_GE(reqs.size(), 3u);
	Report real, bad;
	real.corr = 0.5, bad.corr = -3.0;
	Request stray = reqs[0];
	stray.seq += 1000;
	f.answer(stray, bad);
	fc__chrony_poll(&ch, SEC + MS, SEC, &b);
	EXPECT_EQ(ch.last_reply, 0) << "a reply to no request was taken";
	EXPECT_NE(strstr(b.last_error, "no request of ours"), nullptr) << b.last_error;
	f.answer(reqs[0], real);
	f.answer(reqs[0], bad); // a repeat of the tracking reply, before the round is complete
	for (size_t i = 1; i < reqs.size(); i++)
		f.answer(reqs[i], real);
	fc__chrony_poll(&ch, SEC + 2 * MS, SEC, &b);
	EXPECT_EQ(b.status, FC_SYNC_SYNCHRONIZED) << b.reason;
	EXPECT_TRUE(contains(b, 0.5)) << b.reason;
	EXPECT_FALSE(contains(b, -3.0)) << "the repeat replaced chronyd's reply: " << b.reason;
}

// ---- where our socket lives -----------------------------------------------------------------------------------

// chronyd's user owns the socket directory and, in a loop, replaces whatever we create there: a socket of ours by
// a symlink to a root-owned 0600 file, a directory of ours by one of its own holding such a symlink named as our
// socket. However the race goes, the file keeps its mode (nothing is chmod()ed through a name it controls).
TEST(BoundChrony, symlink_swaps_in_the_socket_directory_never_change_another_file)
{
	in_child(false, [] {
		std::string d = make_dir(0750), v = make_dir(0700), victim = v + "/secret";
		int vfd = open(victim.c_str(), O_CREAT | O_WRONLY, 0600);
		ASSERT_GE(vfd, 0);
		close(vfd);
		Fake f(d);
		ASSERT_EQ(chown(d.c_str(), NOBODY, NOBODY), 0);
		volatile int *stop = (volatile int *)mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		*stop = 0;
		pid_t attacker = fork();
		if (attacker == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL); // never outlives the test
			become(NOBODY);
			long swaps = 0;
			// woken by each name created in the directory (inotify), it swaps what it finds at once
			int in = inotify_init1(IN_NONBLOCK);
			inotify_add_watch(in, d.c_str(), IN_CREATE);
			std::string prep = d + "/.prep", tmp = d + "/.swap";
			while (!*stop) {
				alignas(inotify_event) char ev[4096];
				std::string last; // the newest name of the batch: the older ones are gone by now
				ssize_t len = read(in, ev, sizeof(ev));
				for (ssize_t off = 0; off < len;) {
					const inotify_event *e = (const inotify_event *)(const void *)(ev + off);
					off += (ssize_t)sizeof(*e) + e->len;
					if (e->len && strncmp(e->name, "fastclock.", 10) == 0 && !strstr(e->name, ".moved"))
						last = e->name;
				}
				std::string n = d + "/" + last;
				struct stat st;
				if (last.empty() || lstat(n.c_str(), &st) != 0)
					continue;
				if (S_ISSOCK(st.st_mode)) { // a socket of ours (before): a symlink over it
					symlink(victim.c_str(), tmp.c_str());
					swaps += rename(tmp.c_str(), n.c_str()) == 0;
				} else if (S_ISDIR(st.st_mode) && st.st_uid != NOBODY) {
					// a directory of ours: once the socket is in it (bind done), the whole directory
					// exchanged in one step for a prepared one whose "sock" is the symlink
					mkdir(prep.c_str(), 0755);
					symlink(victim.c_str(), (prep + "/sock").c_str());
					for (int k = 0; k < 100000 && lstat((n + "/sock").c_str(), &st) != 0 && !*stop; k++)
						;
					swaps += renameat2(AT_FDCWD, prep.c_str(), AT_FDCWD, n.c_str(), RENAME_EXCHANGE) == 0;
					rename(prep.c_str(), (n + ".moved").c_str()); // ours, out of the way
				}
			}
			printf("attacker: %ld swaps\n", swaps); // how many depends on the scheduler: not a verdict
			fflush(stdout);
			_exit(0);
		}
		struct Stop { // the attacker stops however the loop below ends
			volatile int *stop;
			pid_t pid;
			int status = -1;
			~Stop() { finish(); }
			void finish()
			{
				if (pid <= 0)
					return;
				*stop = 1; // it looks at the flag once per directory scan
				waitpid(pid, &status, 0);
				pid = 0;
			}
		} guard{stop, attacker};
		int opened = 0;
		for (int i = 0; i < 400; i++) {
			fc_chrony ch;
			fc_bound b{};
			opened += fc__chrony_open(&ch, f.path.c_str(), &b, 0) == 0;
			fc__chrony_close(&ch);
			struct stat st;
			ASSERT_EQ(stat(victim.c_str(), &st), 0);
			ASSERT_EQ(st.st_mode & 07777, 0600u) << "chmod went through a swapped name after " << i << " opens";
		}
		guard.finish();
		if (WIFEXITED(guard.status) && WEXITSTATUS(guard.status) == CANNOT_BECOME)
			_exit(CANNOT_BECOME);
		EXPECT_TRUE(WIFEXITED(guard.status) && WEXITSTATUS(guard.status) == 0) << "attacker status " << guard.status;
		printf("opens that survived the swaps: %d of 400\n", opened);
	});
}

// The same swap at the worst moment, every time: chronyd's user replaces the name right before each chmod. A
// root-owned 0600 file keeps its mode.
TEST(BoundChrony, a_swap_right_before_the_chmod_never_changes_another_file)
{
	std::string d = make_dir(0750), v = make_dir(0700);
	g_victim = v + "/secret";
	int vfd = open(g_victim.c_str(), O_CREAT | O_WRONLY, 0600);
	ASSERT_GE(vfd, 0);
	close(vfd);
	Fake f(d);
	g_swap_dir = d;
	for (int i = 0; i < 3; i++) {
		fc_chrony ch;
		fc_bound b{};
		fc__chrony_open(&ch, f.path.c_str(), &b, 0); // fails: bind went to the swapped-in directory, or not
		fc__chrony_close(&ch);
	}
	g_swap_dir.clear();
	struct stat st;
	ASSERT_EQ(stat(g_victim.c_str(), &st), 0);
	EXPECT_EQ(st.st_mode & 07777, 0600u) << "chmod went through the swapped name";
}

// Every process that opens the source and exits (exit: the library removes its socket) or crashes (_exit, a
// signal: the next open sweeps what it left) leaves nothing behind; a fork child's copy is the parent's: the
// child's close leaves it, and no sweep takes it while the parent lives.
TEST(BoundChrony, exited_crashed_and_forked_processes_leave_no_socket_behind)
{
	std::string d = make_dir(0700);
	Fake f(d);
	auto child = [&](bool crash) {
		fflush(nullptr);
		pid_t p = fork();
		if (p == 0) {
			fc_chrony ch;
			fc_bound b{};
			int ok = fc__chrony_open(&ch, f.path.c_str(), &b, 0) == 0;
			if (crash)
				_exit(ok ? 0 : 1);
			exit(ok ? 0 : 1); // without closing: the library's exit handler removes it
		}
		int st = 0;
		waitpid(p, &st, 0);
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	};
	for (int i = 0; i < 5; i++)
		child(false);
	EXPECT_EQ(count_entries(d, "fastclock."), 0) << "exited processes left their sockets";
	for (int i = 0; i < 5; i++)
		child(true);
	EXPECT_EQ(count_entries(d, "fastclock."), 1) << "each open sweeps what the crashed ones before left";
	fc_chrony ch;
	fc_bound b{};
	ASSERT_EQ(fc__chrony_open(&ch, f.path.c_str(), &b, 0), 0) << b.last_error;
	EXPECT_EQ(count_entries(d, "fastclock."), 1) << "the crashed processes' directories were not swept";
	// a fork child closes its copy and opens its own; the parent's stays, and works
	fflush(nullptr);
	pid_t p = fork();
	if (p == 0) {
		fc__chrony_close(&ch);
		fc_chrony mine;
		fc_bound bb{};
		int ok = fc__chrony_open(&mine, f.path.c_str(), &bb, 0) == 0 && count_entries(d, "fastclock.") == 2;
		fc__chrony_close(&mine);
		_exit(ok ? 0 : 1);
	}
	int st = 0;
	waitpid(p, &st, 0);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	EXPECT_EQ(count_entries(d, "fastclock."), 1);
	round_trip(&ch, f, SEC, Report{}, &b);
	EXPECT_EQ(b.status, FC_SYNC_SYNCHRONIZED) << b.reason << " | " << b.last_error;
	fc__chrony_close(&ch);
	EXPECT_EQ(count_entries(d, "fastclock."), 0);
}

// Two sources open at once in one process (the library's and a probe, or two contexts): each has its own
// socket, and each gets its own replies.
TEST(BoundChrony, two_sources_in_one_process_have_their_own_sockets)
{
	std::string d = make_dir(0700);
	Fake f(d);
	fc_chrony a, c;
	fc_bound ba{}, bc{};
	ASSERT_EQ(fc__chrony_open(&a, f.path.c_str(), &ba, 0), 0) << ba.last_error;
	ASSERT_EQ(fc__chrony_open(&c, f.path.c_str(), &bc, 0), 0) << bc.last_error;
	EXPECT_STRNE(a.local, c.local);
	Report r;
	r.corr = 0.25;
	fc__chrony_poll(&a, SEC, SEC, &ba);
	fc__chrony_poll(&c, SEC, SEC, &bc);
	EXPECT_EQ(f.answer_all(r), 6);
	fc__chrony_poll(&a, SEC + MS, SEC, &ba);
	fc__chrony_poll(&c, SEC + MS, SEC, &bc);
	EXPECT_TRUE(ba.status == FC_SYNC_SYNCHRONIZED && contains(ba, 0.25)) << ba.reason << " | " << ba.last_error;
	EXPECT_TRUE(bc.status == FC_SYNC_SYNCHRONIZED && contains(bc, 0.25)) << bc.reason << " | " << bc.last_error;
	fc__chrony_close(&a);
	fc__chrony_close(&c);
	EXPECT_EQ(count_entries(d, "fastclock."), 0);
}

// Our socket's directory is removed under us (chronyd's directory recreated, a clean-up): the round times out,
// the source closes itself (to be opened again) instead of asking for ever into a socket nobody can reach.
TEST(BoundChrony, a_removed_socket_is_noticed_and_the_source_closed)
{
	std::string d = make_dir(0700);
	Fake f(d);
	fc_chrony ch;
	fc_bound b{};
	ASSERT_EQ(fc__chrony_open(&ch, f.path.c_str(), &b, 0), 0) << b.last_error;
	round_trip(&ch, f, SEC, Report{}, &b);
	ASSERT_EQ(b.status, FC_SYNC_SYNCHRONIZED) << b.reason;
	std::string local = ch.local, dir = local.substr(0, local.rfind('/'));
	ASSERT_EQ(unlink(local.c_str()), 0);
	ASSERT_EQ(rmdir(dir.c_str()), 0);
	fc__chrony_poll(&ch, 2 * SEC + MS, SEC, &b); // a round: chronyd's replies cannot reach us
	EXPECT_GE(f.requests().size(), 3u);
	fc__chrony_poll(&ch, 3 * SEC + 2 * MS, SEC, &b); // timed out
	EXPECT_EQ(ch.fd, -1);
	EXPECT_NE(strstr(b.last_error, "was removed"), nullptr) << b.last_error;
	fc__chrony_close(&ch);
}

// A program closes our directory's descriptor (a daemon closing every descriptor) and the number is reused for a
// directory of its own holding a file named "sock": closing the source removes nothing of the program's.
TEST(BoundChrony, close_never_removes_through_a_descriptor_that_is_no_longer_ours)
{
	std::string d = make_dir(0700), mine = make_dir(0700);
	Fake f(d);
	fc_chrony ch;
	fc_bound b{};
	ASSERT_EQ(fc__chrony_open(&ch, f.path.c_str(), &b, 0), 0) << b.last_error;
	std::string local = ch.local;
	close(ch.dirfd);
	int o = open(mine.c_str(), O_RDONLY | O_DIRECTORY), other = dup2(o, ch.dirfd); // the number reused
	close(o);
	ASSERT_EQ(other, ch.dirfd) << strerror(errno);
	int fd = openat(other, "sock", O_CREAT | O_WRONLY, 0600);
	ASSERT_GE(fd, 0);
	close(fd);
	fc__chrony_close(&ch); // closes `other` as its own: the program's mistake, and all it costs
	struct stat st;
	EXPECT_EQ(stat((mine + "/sock").c_str(), &st), 0) << "the program's file was removed";
	unlink(local.c_str()); // ours is left behind (swept once this process is gone)
	rmdir(local.substr(0, local.rfind('/')).c_str());
}

// chronyd restarts (a new socket at the same path): the first send after it fails (the kernel disconnected our
// socket from the old one), the source reconnects to the new one, and the round is answered by it.
TEST(BoundChrony, a_restarted_chronyd_is_reconnected)
{
	std::string d = make_dir(0700);
	auto f = std::make_unique<Fake>(d);
	fc_chrony ch;
	fc_bound b{};
	ASSERT_EQ(fc__chrony_open(&ch, f->path.c_str(), &b, 0), 0) << b.last_error;
	round_trip(&ch, *f, SEC, Report{}, &b);
	ASSERT_EQ(b.status, FC_SYNC_SYNCHRONIZED) << b.reason;
	f.reset();
	unlink((d + "/chronyd.sock").c_str());
	f = std::make_unique<Fake>(d);
	Report r;
	r.corr = 0.125;
	round_trip(&ch, *f, 2 * SEC + MS, r, &b);
	EXPECT_TRUE(b.status == FC_SYNC_SYNCHRONIZED && contains(b, 0.125)) << b.reason << " | " << b.last_error;
	fc__chrony_close(&ch);
}

// chronyd's directory judged through a descriptor, chronyd's socket then connected by the path's names again: a
// link on the path that another user owns, pointing at chronyd's directory while it is judged and at theirs
// (with a forger's socket) while connected, made a root process take the forger's "in sync" report. The
// connect goes through the descriptor judged: chronyd (its clock 2 s off: the forger's report never holds 2 s) is
// asked, the forger never.
struct LinkedChronyd {
	std::string home = make_dir(0755), real = make_dir(0755), evil = make_dir(0755), link = home + "/chrony";
	std::unique_ptr<Fake> chronyd = std::make_unique<Fake>(real);
	Fake forger{evil};
	LinkedChronyd()
	{
		EXPECT_EQ(symlink(real.c_str(), link.c_str()), 0);
		if (geteuid() == 0) { // the link's directory and the forger's are another user's
			EXPECT_TRUE(chown(home.c_str(), NOBODY, NOBODY) == 0 && chown(evil.c_str(), NOBODY, NOBODY) == 0);
		}
		g_real = real, g_evil = evil, g_link_swaps = 0;
	}
	~LinkedChronyd() { g_link.clear(); }
	void arm() { g_link = link; }
	void disarm() { g_link.clear(); }
	// a round: chronyd's answers (2 s off) and the forger's ("in sync"); the forger must have had no request
	void round(fc_chrony *ch, int64_t at, fc_bound *b)
	{
		Report off;
		off.corr = 2.0;
		fc__chrony_poll(ch, at, SEC, b);
		EXPECT_EQ(forger.answer_all(Report{}), 0) << "the forger behind the swapped link was asked";
		EXPECT_GE(chronyd->answer_all(off), 3) << "chronyd was not asked";
		fc__chrony_poll(ch, at + MS, SEC, b);
		EXPECT_TRUE(b->status == FC_SYNC_SYNCHRONIZED && contains(*b, 2.0))
			<< b->reason << " | " << b->last_error;
	}
};

TEST(BoundChrony, a_link_swapped_between_the_check_and_the_connect_never_reaches_a_forger)
{
	LinkedChronyd s;
	fc_chrony ch;
	fc_bound b{};
	s.arm();
	ASSERT_EQ(fc__chrony_open(&ch, (s.link + "/chronyd.sock").c_str(), &b, 0), 0) << b.last_error;
	s.disarm();
	EXPECT_EQ(g_link_swaps, 1);
	s.round(&ch, SEC, &b);
	fc__chrony_close(&ch);
}

// The same swap at the reconnect after chronyd restarts (each restart reopened the window).
TEST(BoundChrony, a_link_swapped_at_the_reconnect_never_reaches_a_forger)
{
	LinkedChronyd s;
	fc_chrony ch;
	fc_bound b{};
	ASSERT_EQ(fc__chrony_open(&ch, (s.link + "/chronyd.sock").c_str(), &b, 0), 0) << b.last_error;
	s.round(&ch, SEC, &b);
	s.chronyd.reset(); // chronyd restarts
	unlink((s.real + "/chronyd.sock").c_str());
	s.chronyd = std::make_unique<Fake>(s.real);
	s.arm();
	s.round(&ch, 2 * SEC + MS, &b);
	s.disarm();
	EXPECT_EQ(g_link_swaps, 1) << "no reconnect";
	fc__chrony_close(&ch);
}

// Closing the source removes our directory from the directory that holds it, reached from ours (".."), never by
// the configured path again: with the link on that path repointed after the open (at a directory holding an empty
// one under our directory's name), the close removed that one (rmdir by the path) and left ours.
TEST(BoundChrony, close_removes_our_directory_never_one_a_link_swapped_since_leads_to)
{
	LinkedChronyd s;
	fc_chrony ch;
	fc_bound b{};
	ASSERT_EQ(fc__chrony_open(&ch, (s.link + "/chronyd.sock").c_str(), &b, 0), 0) << b.last_error;
	std::string local = ch.local, ours = local.substr(0, local.rfind('/'));
	std::string name = ours.substr(ours.rfind('/') + 1), other = make_dir(0755), theirs = other + "/" + name;
	ASSERT_EQ(mkdir(theirs.c_str(), 0700), 0);
	g_link = s.link;
	point_link(other);
	g_link.clear();
	fc__chrony_close(&ch);
	struct stat st;
	EXPECT_EQ(stat(theirs.c_str(), &st), 0) << "the directory the link leads to now was removed";
	EXPECT_NE(lstat((s.real + "/" + name).c_str(), &st), 0) << "ours was left in chronyd's directory";
}

// chronyd's user renames our directory away and puts an empty directory of its own under that name before the
// close: that one is not ours, and stays (the close removed whatever stood at the name).
TEST(BoundChrony, close_never_removes_another_directory_put_under_our_directorys_name)
{
	std::string d = make_dir(0700);
	Fake f(d);
	fc_chrony ch;
	fc_bound b{};
	ASSERT_EQ(fc__chrony_open(&ch, f.path.c_str(), &b, 0), 0) << b.last_error;
	std::string local = ch.local, ours = local.substr(0, local.rfind('/'));
	ASSERT_EQ(rename(ours.c_str(), (ours + ".moved").c_str()), 0);
	ASSERT_EQ(mkdir(ours.c_str(), 0700), 0);
	fc__chrony_close(&ch);
	struct stat st;
	EXPECT_EQ(stat(ours.c_str(), &st), 0) << "the directory put under our directory's name was removed";
	EXPECT_NE(lstat((ours + ".moved/sock").c_str(), &st), 0) << "our socket was left";
	rmdir(ours.c_str());
	rmdir((ours + ".moved").c_str());
}

// ---- the command port, for everyone else ---------------------------------------------------------------------

// A process that may not use chronyd's unix socket (its directory is root's, 0700 here; chronyd's user's on a
// real system) asks the command port 127.0.0.1:323; the kernel delivers only what comes from that port: a forged
// reply from another port of the loopback never arrives, chronyd's does. The reason names the transport.
TEST(BoundChrony, unprivileged_process_asks_the_command_port_and_hears_only_it)
{
	in_child(true, [] {
		std::string d = make_dir(0700);
		Fake unix_sock(d), port = Fake::udp(false, FC_CHRONY_CMDPORT), forger = Fake::udp(false, 4323);
		become(NOBODY);
		fc_chrony ch;
		fc_bound b{};
		auto reqs = open_and_ask(&ch, unix_sock.path, "udp 127.0.0.1:323", port, &b);
		ASSERT_GE(reqs.size(), 3u);
		EXPECT_STREQ(b.last_error, "") << "the unix socket's refusal is no error for this user";
		Report real;
		real.corr = 2.0;
		forge(forger.fd, reqs, nullptr, 0); // the forger knows our port and the sequence numbers
		fc__chrony_poll(&ch, SEC + MS, SEC, &b);
		EXPECT_EQ(ch.last_reply, 0) << "a datagram from port 4323 was taken";
		for (auto &q : reqs)
			port.answer(q, real);
		fc__chrony_poll(&ch, SEC + 2 * MS, SEC, &b);
		EXPECT_EQ(b.status, FC_SYNC_SYNCHRONIZED) << b.reason << " | " << b.last_error;
		EXPECT_TRUE(contains(b, 2.0)) << b.reason;
		EXPECT_NE(strstr(b.reason, "via udp 127.0.0.1:323"), nullptr) << b.reason;
		fc__chrony_close(&ch);
	});
}

// chronyd listens on ::1 only (bindcmdaddress ::1): a round without any reply on 127.0.0.1 moves to [::1]:323.
TEST(BoundChrony, command_port_on_the_ipv6_loopback_is_found)
{
	in_child(true, [] {
		std::string d = make_dir(0700);
		int v6 = socket(AF_INET6, SOCK_DGRAM, 0);
		sockaddr_in6 a6{};
		a6.sin6_family = AF_INET6, a6.sin6_addr = in6addr_loopback;
		if (v6 < 0 || bind(v6, (sockaddr *)&a6, sizeof(a6)) != 0) // no IPv6 here
			_exit(SKIP);
		close(v6);
		Fake unix_sock(d), port = Fake::udp(true, FC_CHRONY_CMDPORT);
		become(NOBODY);
		fc_chrony ch;
		fc_bound b{};
		ASSERT_EQ(fc__chrony_open(&ch, unix_sock.path.c_str(), &b, 0), 0) << b.last_error;
		int64_t t = SEC;
		for (int i = 0; i < 4 && b.status != FC_SYNC_SYNCHRONIZED; i++, t += 2 * SEC) {
			fc__chrony_poll(&ch, t, SEC, &b); // a round (on 127.0.0.1 first: refused, or silence)
			port.answer_all(Report{});
			fc__chrony_poll(&ch, t + MS, SEC, &b);
			fc__chrony_poll(&ch, t + SEC + MS, SEC, &b); // an unanswered round times out
		}
		EXPECT_EQ(b.status, FC_SYNC_SYNCHRONIZED) << b.reason << " | " << b.last_error;
		EXPECT_NE(strstr(b.reason, "via udp [::1]:323"), nullptr) << b.reason;
		fc__chrony_close(&ch);
	});
}

// Auto mode for a process that may not use the unix socket: chronyd's command port when something listens on it,
// the next source (the kernel's) when chronyd runs with its port off (cmdport 0), not a chrony source that never
// answers.
TEST(BoundChrony, auto_mode_asks_the_command_port_only_where_it_listens)
{
	in_child(true, [] {
		std::string d = make_dir(0700);
		Fake unix_sock(d);
		fc_bound_config cfg;
		char err[200] = "";
		ASSERT_EQ(fc__bound_config_parse("auto", (d + "/no-shm0").c_str(), unix_sock.path.c_str(), "/nonexistent",
						 &cfg, err, sizeof(err)), 0) << err;
		auto kind = [&](bool listening) {
			Fake port;
			if (listening)
				port = Fake::udp(false, FC_CHRONY_CMDPORT);
			fflush(nullptr);
			pid_t p = fork();
			if (p == 0) {
				become(NOBODY);
				static fc_bounder bd;
				fc__bounder_init(&bd, &cfg, SEC);
				int k = bd.kind;
				fc__bounder_close(&bd);
				_exit(k);
			}
			int st = 0;
			waitpid(p, &st, 0);
			if (WIFEXITED(st) && WEXITSTATUS(st) == CANNOT_BECOME)
				_exit(CANNOT_BECOME);
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		};
		EXPECT_EQ(kind(false), FC_BOUND_KERNEL) << "chronyd's port is off: the kernel's source serves";
		EXPECT_EQ(kind(true), FC_BOUND_CHRONY);
	});
}

// Where every user may bind port 323 (net.ipv4.ip_unprivileged_port_start lowered), anyone could be answering
// from it: the port is not asked, the error says why.
TEST(BoundChrony, command_port_any_user_may_bind_is_not_trusted)
{
	in_child(true, [] {
		std::string d = make_dir(0700);
		Fake unix_sock(d);
		int fd = open("/proc/sys/net/ipv4/ip_unprivileged_port_start", O_WRONLY);
		if (fd < 0 || write(fd, "0\n", 2) != 2)
			_exit(SKIP);
		close(fd);
		become(NOBODY);
		fc_chrony ch;
		fc_bound b{};
		EXPECT_EQ(fc__chrony_open(&ch, unix_sock.path.c_str(), &b, 0), -1);
		EXPECT_NE(strstr(b.last_error, "any user may bind port 323"), nullptr) << b.last_error;
	});
}

// A socket on 127.0.0.1:323 of user `uid`, bound with this (root) process's CAP_NET_BIND_SERVICE, as a service
// user given that capability (systemd's AmbientCapabilities=, setcap) binds it: the socket is made under that
// fsuid, so the kernel (sock_diag) reports it as that user's.
Fake port_of(uid_t uid)
{
	setfsuid(uid);
	Fake f = Fake::udp(false, FC_CHRONY_CMDPORT);
	setfsuid(0);
	return f;
}

// Binding port 323 needs a privilege, not chronyd's: a capability holder that is not chronyd (the port free while
// chronyd is stopped or restarting) answered an unprivileged process's rounds, SYNCHRONIZED from its forgery. The
// kernel says whose socket holds the port: root's or chronyd's user's (the owner of chronyd's socket directory)
// is asked, anyone else's is refused at the open, naming its uid, and never sent a request.
TEST(BoundChrony, a_command_port_held_by_another_user_is_not_trusted)
{
	in_child(true, [] {
		constexpr uid_t CHRONY = 4242;
		std::string d = make_dir(0700), du = make_dir(0700);
		Fake unix_sock(d), user_sock(du);
		ASSERT_EQ(chown(du.c_str(), CHRONY, CHRONY), 0); // chronyd's user's directory (/run/chrony)
		if (setresuid(NOBODY, NOBODY, 0) != 0) // nobody's process; root kept as the saved uid to bind the ports
			_exit(CANNOT_BECOME);
		auto as_root = [](auto f) { EXPECT_EQ(seteuid(0), 0); auto r = f(); EXPECT_EQ(seteuid(NOBODY), 0); return r; };
		{
			Fake forger = as_root([] { return port_of(NOBODY); });
			fc_chrony ch;
			fc_bound b{};
			EXPECT_EQ(fc__chrony_open(&ch, unix_sock.path.c_str(), &b, 0), -1) << "opened on " << ch.via_name;
			EXPECT_NE(strstr(b.last_error, "port 323 held by uid 65534"), nullptr) << b.last_error;
			fc__chrony_poll(&ch, SEC, SEC, &b);
			EXPECT_EQ(forger.requests().size(), 0u) << "the forger's port was asked";
			fc__chrony_close(&ch);
			// chronyd's user is the owner of chronyd's socket directory only: that directory's user is not nobody
			EXPECT_EQ(fc__chrony_open(&ch, user_sock.path.c_str(), &b, 0), -1) << "opened on " << ch.via_name;
			fc__chrony_close(&ch);
		}
		{ // a directory of uid 4343's in sticky /tmp (anyone can make one) names no user of chronyd's
			std::string evil = as_root([] {
				std::string e = "/tmp/fc_chrony_evil_XXXXXX";
				EXPECT_NE(mkdtemp(&e[0]), nullptr);
				EXPECT_EQ(chown(e.c_str(), 4343, 4343), 0);
				return e;
			});
			Fake forger = as_root([] { return port_of(4343); });
			fc_chrony ch;
			fc_bound b{};
			EXPECT_EQ(fc__chrony_open(&ch, (evil + "/chronyd.sock").c_str(), &b, 0), -1) << "opened on " << ch.via_name;
			EXPECT_NE(strstr(b.last_error, "port 323 held by uid 4343"), nullptr) << b.last_error;
			fc__chrony_close(&ch);
			as_root([&] { return rmdir(evil.c_str()); });
		}
		{ // chronyd's (root's) socket on 127.0.0.1:323 and another user's on [::1]:323 beside it: refused
			Fake chronyd = as_root([] { return Fake::udp(false, FC_CHRONY_CMDPORT); });
			int v6 = as_root([] {
				setfsuid(NOBODY);
				int fd = socket(AF_INET6, SOCK_DGRAM, 0);
				setfsuid(0);
				sockaddr_in6 a6{};
				a6.sin6_family = AF_INET6, a6.sin6_port = htons(FC_CHRONY_CMDPORT), a6.sin6_addr = in6addr_loopback;
				if (fd >= 0 && bind(fd, (sockaddr *)&a6, sizeof(a6)) != 0) { // no IPv6 here
					close(fd);
					fd = -1;
				}
				return fd;
			});
			if (v6 >= 0) {
				fc_chrony ch;
				fc_bound b{};
				EXPECT_EQ(fc__chrony_open(&ch, unix_sock.path.c_str(), &b, 0), -1) << "opened on " << ch.via_name;
				EXPECT_NE(strstr(b.last_error, "port 323 held by uid 65534"), nullptr) << b.last_error;
				fc__chrony_close(&ch);
				close(v6);
			}
		}
		for (uid_t holder : {(uid_t)0, CHRONY}) { // root's port and chronyd's user's: asked, and believed
			Fake port = as_root([&] { return port_of(holder); });
			fc_chrony ch;
			fc_bound b{};
			auto reqs = open_and_ask(&ch, user_sock.path, "udp 127.0.0.1:323", port, &b);
			for (auto &q : reqs)
				port.answer(q, Report{});
			fc__chrony_poll(&ch, SEC + MS, SEC, &b);
			EXPECT_EQ(b.status, FC_SYNC_SYNCHRONIZED) << holder << ": " << b.reason << " | " << b.last_error;
			fc__chrony_close(&ch);
		}
	});
}

// The port held by root's socket (chronyd) at the open; chronyd stops and a capability holder binds the port and
// answers the round sent: its reply is not taken (the kernel asked who holds the port before it), the source is
// UNKNOWN with the reason and closed.
TEST(BoundChrony, a_command_port_taken_over_after_the_open_is_dropped_before_its_reply)
{
	in_child(true, [] {
		std::string d = make_dir(0700);
		Fake unix_sock(d);
		auto chronyd = std::make_unique<Fake>(Fake::udp(false, FC_CHRONY_CMDPORT));
		if (setresuid(NOBODY, NOBODY, 0) != 0)
			_exit(CANNOT_BECOME);
		fc_chrony ch;
		fc_bound b{};
		auto reqs = open_and_ask(&ch, unix_sock.path, "udp 127.0.0.1:323", *chronyd, &b);
		ASSERT_GE(reqs.size(), 3u);
		chronyd.reset();
		ASSERT_EQ(seteuid(0), 0);
		Fake forger = port_of(NOBODY);
		ASSERT_EQ(seteuid(NOBODY), 0);
		EXPECT_EQ(forge(forger.fd, reqs, nullptr, 0), (int)reqs.size());
		fc__chrony_poll(&ch, SEC + MS, SEC, &b);
		EXPECT_EQ(ch.last_reply, 0) << "the forger's reply was taken: " << b.reason;
		EXPECT_NE(b.status, FC_SYNC_SYNCHRONIZED) << b.reason;
		EXPECT_NE(strstr(b.reason, "port 323 held by uid 65534"), nullptr) << b.reason << " | " << b.last_error;
		EXPECT_LT(ch.fd, 0) << "the port is still open";
		fc__chrony_close(&ch);
	});
}

// Who holds the port cannot be asked (a seccomp filter refuses netlink sockets, as a sandbox may): not trusted,
// with the reason, and nothing is sent.
TEST(BoundChrony, a_command_port_whose_holder_cannot_be_asked_is_not_trusted)
{
	in_child(true, [] {
		std::string d = make_dir(0700);
		Fake unix_sock(d), chronyd = Fake::udp(false, FC_CHRONY_CMDPORT);
		if (setresuid(NOBODY, NOBODY, 0) != 0)
			_exit(CANNOT_BECOME);
		if (seccomp_fail(SYS_socket, EPERM, AF_NETLINK) != 0)
			_exit(SKIP);
		fc_chrony ch;
		fc_bound b{};
		EXPECT_EQ(fc__chrony_open(&ch, unix_sock.path.c_str(), &b, 0), -1) << "opened on " << ch.via_name;
		EXPECT_NE(strstr(b.last_error, "its holder unknown (sock_diag socket: operation not permitted"), nullptr)
			<< b.last_error;
		fc__chrony_poll(&ch, SEC, SEC, &b);
		EXPECT_EQ(chronyd.requests().size(), 0u);
		fc__chrony_close(&ch);
	});
}

// ---- what a report may hold -----------------------------------------------------------------------------------

// Values between 2^31 and 2^33 s (and beyond), negative delays and dispersions, NaN and infinities: UNKNOWN
// naming the field, never an interval with earliest > latest, never an overflow (UBSan).
TEST(BoundChrony, floats_past_what_the_interval_can_hold_are_refused_naming_the_field)
{
	struct Case {
		const char *field;
		void (*set)(fc_chrony_tracking *, fc_chrony_source *);
	} cases[] = {
		{"correction", [](fc_chrony_tracking *t, fc_chrony_source *) { t->correction = 3e9; }},
		{"correction", [](fc_chrony_tracking *t, fc_chrony_source *) { t->correction = -8.5e9; }},
		{"root delay", [](fc_chrony_tracking *t, fc_chrony_source *) { t->root_delay = -0.5; }},
		{"root dispersion", [](fc_chrony_tracking *t, fc_chrony_source *) { t->root_dispersion = NAN; }},
		{"root dispersion", [](fc_chrony_tracking *t, fc_chrony_source *) { t->root_dispersion = INFINITY; }},
		{"skew", [](fc_chrony_tracking *t, fc_chrony_source *) { t->skew_ppm = -1; }},
		{"residual frequency", [](fc_chrony_tracking *t, fc_chrony_source *) { t->resid_freq_ppm = 1e12; }},
		{"newest measurement", [](fc_chrony_tracking *, fc_chrony_source *s) { s->latest_meas = 4.3e9; }},
		{"measurement error", [](fc_chrony_tracking *, fc_chrony_source *s) { s->latest_meas_err = -1e-3; }},
	};
	for (auto &c : cases) {
		fc_chrony_tracking t{};
		fc_chrony_source s{FC_CHRONY_SELECTED, 0377, 1, 0.0, 1e-5, 0, {}};
		t.ref_time_sec = 1700000000, t.last_update_interval = 2, t.root_delay = 1e-4, t.root_dispersion = 1e-4;
		c.set(&t, &s);
		fc_bound b{};
		EXPECT_EQ(fc__chrony_eval(&t, &s, SEC, &b), FC_SYNC_UNKNOWN) << c.field;
		EXPECT_NE(strstr(b.reason, c.field), nullptr) << b.reason;
		EXPECT_GE(b.half_ns, 0);
	}
	// an update interval that is NaN is no update
	fc_chrony_tracking t{};
	fc_bound b{};
	t.ref_time_sec = 1700000000, t.last_update_interval = NAN;
	EXPECT_EQ(fc__chrony_eval(&t, nullptr, SEC, &b), FC_SYNC_UNKNOWN) << b.reason;
	// a negative root delay no longer cancels the dispersion (it was |delay / 2 + dispersion|)
	t.last_update_interval = 2, t.root_delay = -2.0, t.root_dispersion = 1.0;
	EXPECT_EQ(fc__chrony_eval(&t, nullptr, SEC, &b), FC_SYNC_UNKNOWN) << b.reason;
}

// Every candm Float exponent, at the extreme coefficients, in every float field of a decoded tracking and
// source-data reply: the interval is ordered and its ends fit an int64 of ns, or the report is UNKNOWN.
TEST(BoundChrony, every_float_chronyd_can_send_gives_an_ordered_interval_or_unknown)
{
	const size_t tracking_fields[] = {40, 44, 48, 52, 56, 60, 64, 68, 72}, source_fields[] = {36, 40, 44};
	const uint32_t coefs[] = {0x0ffffffu, 0x1000000u, 0x1ffffffu, 1u};
	uint8_t tb[104], sb[76];
	Request qt, qs;
	qt.cmd = 33, qs.cmd = 15;
	char err[160];
	int synced = 0, refused = 0;
	for (size_t fi = 0; fi < 12; fi++)
		for (int e = 0; e < 128; e++)
			for (uint32_t c : coefs) {
				Report r;
				r.corr = 0.01, r.meas = 0.001;
				build_reply(tb, qt, r), build_reply(sb, qs, r);
				uint32_t x = (uint32_t)e << 25 | c;
				Be w{fi < 9 ? tb + 28 : sb + 28};
				w.u32(fi < 9 ? tracking_fields[fi] : source_fields[fi - 9], x);
				fc_chrony_tracking t;
				fc_chrony_source s;
				ASSERT_EQ(fc__chrony_decode(tb, sizeof(tb), 0, &t, err, sizeof(err)), 0) << err;
				ASSERT_EQ(fc__chrony_decode_source(sb, sizeof(sb), 0, &s, err, sizeof(err)), 0) << err;
				fc_bound b{};
				int st = fc__chrony_eval(&t, &s, SEC, &b);
				if (st == FC_SYNC_UNKNOWN) {
					refused++;
					continue;
				}
				synced++;
				__int128 lo = (__int128)b.center_ns - b.half_ns, hi = (__int128)b.center_ns + b.half_ns;
				ASSERT_LE(lo, hi) << "field " << fi << " exp " << e << " coef " << c << ": " << b.reason;
				ASSERT_GE(lo, (__int128)INT64_MIN / 2) << b.reason;
				ASSERT_LE(hi, (__int128)INT64_MAX / 2) << b.reason;
				ASSERT_GE(fc__bound_half_at(&b, 1000 * SEC), b.half_ns);
			}
	EXPECT_GT(synced, 0);
	EXPECT_GT(refused, 0);
}

} // namespace

namespace {

// ---- when chronyd is asked -----------------------------------------------------------------------------------

// A chronyd whose source (a refclock at poll 1, as in the fleet) yields a measurement every 2 s at a fixed phase,
// each one updating the clock (tracking's ref_time moves, the source's sample is new); the one at `step_k` is
// 30 ms off (a reference step, far beyond the errors), and the one at `skip_k` never comes (a sample chronyd's
// filter dropped). The source is polled every 1 ms of the test's clock with the library's 100 ms interval, and
// the fake answers each request with what chronyd knew at that instant.
struct Schedule {
	static constexpr int64_t PHASE = 370 * MS, FINE = 100 * MS, TICK = MS;
	int64_t P = 2 * SEC;
	int poll = 1; // log2 of P in s
	int step_k = -1, skip_k = -1;
	std::vector<int64_t> sent;       // send time of each round (its tracking request)
	std::vector<int64_t> unknown_at; // first tick with the status UNKNOWN after each measurement (or -1)
	int64_t spread = 0; // each measurement moved by up to this, either way (an NTP source's randomised polls)
	int64_t m(int k) const { return PHASE + k * P + (k * 7919 % 201 - 100) * spread / 100; }
	// chronyd's state at t: the newest measurement taken at or before t
	int last_k(int64_t t) const
	{
		int k = t < PHASE ? -1 : (int)((t - PHASE) / P);
		if (k >= 0 && t < m(k))
			k--;
		else if (t >= m(k + 1))
			k++;
		if (k == skip_k)
			k--;
		return k;
	}
	Report at(int64_t t) const
	{
		Report r;
		int k = last_k(t);
		r.poll = poll;
		r.ref_sec = 1700000000 + (uint32_t)(k + 1) * 2, r.ref_nsec = (uint32_t)((k + 1) % 1000) * 1000000;
		r.meas = k == step_k ? 0.030 : 1e-6 * ((k + 1) % 5);
		r.since = k < 0 ? 100 : (uint32_t)((t - m(k)) / SEC);
		r.interval = (double)P / 1e9 * 4; // not the period: the source's poll is
		return r;
	}
	void run(int64_t until)
	{
		std::string dir = make_dir(0755);
		Fake f(dir);
		fc_chrony ch{};
		fc_bound b{};
		ASSERT_EQ(fc__chrony_open(&ch, f.path.c_str(), &b, 0), 0) << b.last_error;
		unknown_at.assign((size_t)(until / P + 2), -1);
		for (int64_t t = TICK; t < until; t += TICK) {
			fc__chrony_poll(&ch, t, FINE, &b);
			for (auto &q : f.requests()) {
				if (q.cmd == 33)
					sent.push_back(t);
				f.answer(q, at(t));
			}
			int k = last_k(t);
			if (b.status == FC_SYNC_UNKNOWN && k >= 0 && unknown_at[(size_t)k] < 0)
				unknown_at[(size_t)k] = t;
		}
		fc__chrony_close(&ch);
	}
	// Is t where a round may come sooner than the cap: from a 32nd of the period and two intervals (the round
	// before the measurement was seen, and the random start) before a measurement until the interval after it
	// (and one tick for the reply)? After a dropped measurement, the next one is found by a cap round, and the
	// window before the one after is as wide as that round's uncertainty: not judged.
	bool in_window(int64_t t) const
	{
		if (skip_k >= 0 && t > m(skip_k) && t <= m(skip_k + 2) + FINE)
			return true;
		for (int k = 0; m(k) - P / 32 - 2 * FINE <= t; k++)
			if (t <= m(k) + FINE + TICK)
				return true;
		return false;
	}
};

// No round before one is due: never two within an eighth of the library's 100 ms, two within 100 ms only right
// around a measurement (from the round before it was seen last period to an eighth after it), and away from
// chronyd's next measurement (once its phase is seen) never two within three quarters of the cap. A round sent
// promptly once due: never more than the cap apart; one within 100 ms (+ the 1 ms the test polls at) of each
// measurement chronyd takes, and within an eighth of it once the one before was seen in the window. A fraction
// of the fixed 100 ms cadence's 10 rounds a second.
TEST(BoundChrony, rounds_are_asked_when_chronyd_measures_and_once_a_second_otherwise)
{
	constexpr int64_t FINE = Schedule::FINE, NEAR = Schedule::FINE / 8, TICK = Schedule::TICK;
	Schedule s;
	s.skip_k = 12;
	s.run(40 * SEC);
	ASSERT_GT(s.sent.size(), 10u);
	const int64_t learnt = s.m(2) + FINE; // the first change seen by a cap round, the next by the window
	auto near_m = [&](int64_t t) {
		for (int k = 0; s.m(k) - FINE - NEAR <= t; k++)
			if (t <= s.m(k) + NEAR + 2 * TICK)
				return true;
		return s.skip_k >= 0 && t > s.m(s.skip_k) && t <= s.m(s.skip_k + 2) + FINE;
	};
	for (size_t i = 1; i < s.sent.size(); i++) {
		int64_t t = s.sent[i], gap = t - s.sent[i - 1];
		EXPECT_GE(gap, NEAR) << "round " << i << " at " << t;
		EXPECT_LE(gap, FC_CHRONY_CAP_NS + TICK) << "round " << i << " at " << t;
		if (gap < FINE) {
			EXPECT_TRUE(near_m(t)) << "round " << i << " at " << t << ": " << gap << " ns after the last";
		}
		if (t > learnt && !s.in_window(t)) {
			EXPECT_GE(gap, FC_CHRONY_CAP_NS - FC_CHRONY_CAP_NS / 4) << "round " << i << " at " << t << ": early";
		}
	}
	double lat = 0;
	int nlat = 0;
	for (int k = 3; s.m(k) < 40 * SEC - SEC; k++) {
		if (k == s.skip_k || k == s.skip_k + 1) // the dropped one, and the next (found by a cap round)
			continue;
		auto first = std::lower_bound(s.sent.begin(), s.sent.end(), s.m(k));
		ASSERT_NE(first, s.sent.end());
		EXPECT_LE(*first - s.m(k), FINE + TICK) << "measurement " << k << " at " << s.m(k);
		if (k >= 4 && k != s.skip_k + 2) { // the one before seen in its window
			EXPECT_LE(*first - s.m(k), NEAR + 2 * TICK) << "measurement " << k << " at " << s.m(k);
		}
		lat += (double)(*first - s.m(k));
		nlat++;
	}
	double per_s = (double)s.sent.size() / 40.0;
	printf("rounds per second: %.2f, first round %.1f ms after a measurement on average (chronyd measuring every "
	       "2 s; a fixed 100 ms cadence: 10, 50 ms)\n", per_s, lat / nlat / 1e6);
	EXPECT_LT(per_s, 5.0);
}

// The step is still seen at the first reply after the measurement that carries it: the status is UNKNOWN
// within 12.5 ms (an eighth of the library's interval, + the ticks of the round trip) of chronyd taking the 30 ms
// measurement, and SYNCHRONIZED again after the next.
TEST(BoundChrony, a_step_is_seen_at_the_first_round_after_chronyds_measurement_of_it)
{
	Schedule s;
	s.step_k = 9;
	s.run(24 * SEC);
	for (int k = 3; k < 11; k++) {
		if (k == s.step_k + 1) // UNKNOWN until the round after the next measurement
			continue;
		if (k == s.step_k) {
			ASSERT_GE(s.unknown_at[(size_t)k], 0) << "the step was never seen";
			EXPECT_LE(s.unknown_at[(size_t)k] - s.m(k), Schedule::FINE / 8 + 3 * Schedule::TICK);
		} else {
			EXPECT_EQ(s.unknown_at[(size_t)k], -1) << "measurement " << k;
		}
	}
}

} // namespace

namespace {

// A chronyd measuring every 2^-5 s (a refclock at poll -5) is asked every 100 ms, as before the schedule, never
// more often: the 12.5 ms core is for periods of a second or more.
TEST(BoundChrony, a_chronyd_measuring_more_often_than_once_a_second_is_asked_every_100_ms)
{
	Schedule s;
	s.poll = -5;
	s.P = SEC / 32;
	s.run(10 * SEC);
	ASSERT_GT(s.sent.size(), 10u);
	for (size_t i = 1; i < s.sent.size(); i++) {
		int64_t gap = s.sent[i] - s.sent[i - 1];
		EXPECT_GE(gap, Schedule::FINE) << "round " << i << " at " << s.sent[i];
		if (s.sent[i - 1] > 2 * SEC) { // and every 100 ms once its phase is seen: a measurement is always due
			EXPECT_LE(gap, Schedule::FINE + 2 * Schedule::TICK) << "round " << i << " at " << s.sent[i];
		}
	}
}

} // namespace

namespace {

// chronyd randomises an NTP source's polls by up to 2 %: measurements up to 40 ms either side of the 2 s grid
// are still each seen within 100 ms (the window's 32nd of the period covers them; the 12.5 ms core, where they
// fall outside it, costs nothing), at a fraction of the fixed cadence's rounds.
TEST(BoundChrony, randomised_polls_are_each_seen_within_100_ms)
{
	Schedule s;
	s.spread = 2 * SEC / 50;
	s.run(40 * SEC);
	for (int k = 3; s.m(k) < 39 * SEC; k++) {
		auto first = std::lower_bound(s.sent.begin(), s.sent.end(), s.m(k));
		ASSERT_NE(first, s.sent.end());
		EXPECT_LE(*first - s.m(k), Schedule::FINE + Schedule::TICK) << "measurement " << k << " at " << s.m(k);
	}
	for (size_t i = 1; i < s.sent.size(); i++)
		EXPECT_GE(s.sent[i] - s.sent[i - 1], Schedule::FINE / 8) << "round " << i << " at " << s.sent[i];
	printf("rounds per second: %.2f (measurements within 40 ms of a 2 s grid)\n", (double)s.sent.size() / 40.0);
	EXPECT_LT((double)s.sent.size() / 40.0, 5.0);
}

} // namespace
