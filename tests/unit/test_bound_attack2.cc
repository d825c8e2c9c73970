// fastclock unit tests — attacks on the bound sources beyond test_bound_sources.cc's (docs/THREATS.md): who
// could have put chronyd's unix socket where the process is told to ask it (src/bound/chrony.c unix_open), who
// may bind its command port after the open, a mount in its directory, who may write a VMClock device.
// Tests that need files of another user (nobody) run as root and skip otherwise.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "bound/bound.h"
#include "bound/chrony.h"
#include "bound/vmclock.h"
#include "bound_fixtures.h"

namespace {

constexpr uid_t NOBODY = 65534;

// A directory made by mkdtemp from `templ` with `mode`, owned by uid:gid; removed (with its one socket or link)
// when the test ends.
struct Dir {
	std::string path;
	Dir(const char *templ, mode_t mode, uid_t uid, gid_t gid) : path(templ)
	{
		EXPECT_NE(mkdtemp(&path[0]), nullptr) << strerror(errno);
		EXPECT_EQ(chmod(path.c_str(), mode), 0);
		EXPECT_EQ(chown(path.c_str(), uid, gid), 0);
	}
	~Dir()
	{
		unlink((path + "/chronyd.sock").c_str());
		rmdir(path.c_str());
	}
};

// A datagram socket bound at path, owned by uid: where a chronyd (or someone else) would answer. Nothing answers:
// the open alone decides whether the process would ask it.
struct Listener {
	int fd;
	Listener(const std::string &path, uid_t uid)
	{
		sockaddr_un a{};
		a.sun_family = AF_UNIX;
		snprintf(a.sun_path, sizeof(a.sun_path), "%s", path.c_str());
		fd = socket(AF_UNIX, SOCK_DGRAM, 0);
		EXPECT_EQ(bind(fd, (sockaddr *)&a, sizeof(a)), 0) << path << ": " << strerror(errno);
		EXPECT_EQ(chown(path.c_str(), uid, uid), 0);
	}
	~Listener() { close(fd); }
};

// Is the listener l asked when the chrony source is opened on chronyd's socket at path and sends its first round?
// The error is left in *err.
bool asked(const std::string &path, const Listener &l, std::string *err)
{
	constexpr int64_t SEC = 1000000000;
	fc_chrony ch;
	fc_bound b{};
	uint8_t buf[512];
	if (fc__chrony_open(&ch, path.c_str(), &b, 0) == 0) {
		fc__chrony_poll(&ch, SEC, SEC, &b);
		fc__chrony_close(&ch);
	}
	*err = b.last_error;
	return recv(l.fd, buf, sizeof(buf), MSG_DONTWAIT) > 0;
}

// Runs body in a child process with a network namespace (its loopback up) and a mount namespace of its own; the
// child's gtest failures are its exit status. Skips where namespaces cannot be made.
template <class F> void in_namespaces(F body)
{
	int r = forked([&] {
		if (!private_loopback(CLONE_NEWNS) || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
			_exit(77);
		body();
	});
	if (r == 77)
		GTEST_SKIP() << "no namespaces or no other user here";
	EXPECT_EQ(r, 0) << "child status";
}

// Runs victim() in a child process whose openat and openat2 calls each wait, under a seccomp filter's user
// notification, until on(nr, name) has run here: it may change the file system under the call (a mount where the
// caller is about to open), then returns 0 to let the call run as made, or an errno for it to fail with (a kernel
// without openat2). victim returns "" or what went wrong (its exit status and stderr). Returns 77 where seccomp
// user notifications cannot be had (Linux < 5.5), else the child's failures as test failures and 0.
template <class V, class S> int with_open_hook(V victim, S on)
{
	int sv[2];
	fflush(nullptr);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 77;
	pid_t p = fork();
	if (p == 0) {
		sock_filter f[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 1, 0),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 437 /* SYS_openat2 */, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		sock_fprog prog{sizeof(f) / sizeof(f[0]), f};
		char c = 0, ctl[CMSG_SPACE(sizeof(int))] = {};
		iovec io{&c, 1};
		msghdr m{};
		m.msg_iov = &io, m.msg_iovlen = 1, m.msg_control = ctl, m.msg_controllen = sizeof(ctl);
		int l = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
				? (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog)
				: -1;
		cmsghdr *h = CMSG_FIRSTHDR(&m);
		h->cmsg_level = SOL_SOCKET, h->cmsg_type = SCM_RIGHTS, h->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(h), &l, sizeof(l));
		if (l < 0)
			_exit(77);
		if (sendmsg(sv[1], &m, 0) != 1 || read(sv[1], &c, 1) != 1) // the listener, then "watching"
			_exit(2);
		std::string err = victim();
		if (!err.empty())
			fprintf(stderr, "%s\n", err.c_str());
		fflush(nullptr);
		_exit(err.empty() ? 0 : 1); // no exit(): its handlers would undo what the caller looks at
	}
	close(sv[1]);
	char c, ctl[CMSG_SPACE(sizeof(int))] = {};
	iovec io{&c, 1};
	msghdr m{};
	m.msg_iov = &io, m.msg_iovlen = 1, m.msg_control = ctl, m.msg_controllen = sizeof(ctl);
	int l = -1, st = 0;
	if (recvmsg(sv[0], &m, 0) == 1 && CMSG_FIRSTHDR(&m))
		memcpy(&l, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof(l));
	char mem[32];
	snprintf(mem, sizeof(mem), "/proc/%d/mem", (int)p);
	int memfd = open(mem, O_RDONLY | O_CLOEXEC);
	if (l >= 0 && memfd >= 0 && write(sv[0], "g", 1) == 1) {
		for (;;) {
			pollfd pf{l, POLLIN, 0};
			if (poll(&pf, 1, 5000) != 1 || (pf.revents & POLLHUP))
				break; // the child is gone (or stuck: 5 s without a call)
			seccomp_notif req{};
			seccomp_notif_resp resp{};
			char name[256] = {};
			if (ioctl(l, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0)
				continue;
			if (pread(memfd, name, sizeof(name) - 1, (off_t)req.data.args[1]) <= 0)
				name[0] = 0;
			int e = on((int)req.data.nr, std::string(name));
			resp.id = req.id;
			resp.error = e ? -e : 0;
			resp.flags = e ? 0 : SECCOMP_USER_NOTIF_FLAG_CONTINUE;
			ioctl(l, SECCOMP_IOCTL_NOTIF_SEND, &resp);
		}
	}
	if (memfd >= 0)
		close(memfd);
	if (l >= 0)
		close(l);
	close(sv[0]);
	EXPECT_EQ(waitpid(p, &st, 0), p);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		return 77;
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "child status " << st;
	return 0;
}

// A datagram socket on the loopback's port 323, bound by root: chronyd's command port.
int udp323()
{
	sockaddr_in a{};
	a.sin_family = AF_INET, a.sin_port = htons(323), a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	EXPECT_EQ(bind(fd, (sockaddr *)&a, sizeof(a)), 0) << "bind 127.0.0.1:323: " << strerror(errno);
	return fd;
}

// A POSIX access ACL as setfacl writes it (linux/posix_acl_xattr.h): user::`owner`, user:nobody:`named`,
// group::`group`, mask::`mask`, other::`other`. Setting it sets the mode's group bits to the mask.
struct Acl {
	uint32_t version = 2;
	struct { uint16_t tag, perm; uint32_t id; } e[5];
	Acl(uint16_t owner, uint16_t named, uint16_t group, uint16_t mask, uint16_t other)
	    : e{{0x01, owner, ~0u}, {0x02, named, NOBODY}, {0x04, group, ~0u}, {0x10, mask, ~0u}, {0x20, other, ~0u}}
	{
	}
	int set(const std::string &path) const
	{
		return setxattr(path.c_str(), "system.posix_acl_access", this, sizeof(*this), 0);
	}
	int set(int fd) const { return fsetxattr(fd, "system.posix_acl_access", this, sizeof(*this), 0); }
};

// chronyd's socket is its daemon's word only where no one but root and chronyd's user could have put it: in a
// directory that no other user could have made theirs (nobody's mkdir in /tmp), that no other user (a group) may
// write, as a socket (not a link elsewhere) owned by root or the directory's owner. A root process told
// FASTCLOCK_CHRONY_SOCKET=/tmp/x/chronyd.sock (an administrator's mistake) used to ask nobody's fake chronyd:
// SYNCHRONIZED +-2.6 us from a process nobody ran, with the kernel unsynchronised (docs/THREATS.md).
TEST(ChronySocketTrust, a_socket_no_one_but_root_or_chronyds_user_could_place_is_never_asked)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root (files of another user)";
	std::string err;
	Dir top("/tmp/fc_attack2_XXXXXX", 0755, 0, 0); // root's, as /run

	{ // nobody's directory in sticky /tmp, nobody's socket: anyone can make these
		Dir evil("/tmp/fc_attack2_evil_XXXXXX", 0755, NOBODY, NOBODY);
		Listener l(evil.path + "/chronyd.sock", NOBODY);
		EXPECT_FALSE(asked(evil.path + "/chronyd.sock", l, &err)) << "nobody's directory in /tmp was asked";
		EXPECT_NE(err.find("not trusted"), std::string::npos) << err;
	}
	{ // root's directory its group (not root's) may write: a member can replace the socket
		Dir d((top.path + "/grpXXXXXX").c_str(), 0775, 0, NOBODY);
		Listener l(d.path + "/chronyd.sock", 0);
		EXPECT_FALSE(asked(d.path + "/chronyd.sock", l, &err)) << "a directory group " << NOBODY << " may write was asked";
		EXPECT_NE(err.find("not trusted"), std::string::npos) << err;
	}
	{ // a socket owned by neither root nor the directory's owner
		Dir d((top.path + "/ownXXXXXX").c_str(), 0750, 0, 0);
		Listener l(d.path + "/chronyd.sock", NOBODY);
		EXPECT_FALSE(asked(d.path + "/chronyd.sock", l, &err)) << "nobody's socket in root's directory was asked";
		EXPECT_NE(err.find("not trusted"), std::string::npos) << err;
	}
	{ // the name a link to nobody's socket elsewhere (connect follows it)
		Dir evil("/tmp/fc_attack2_evil_XXXXXX", 0755, NOBODY, NOBODY);
		Listener l(evil.path + "/chronyd.sock", NOBODY);
		Dir d((top.path + "/lnkXXXXXX").c_str(), 0750, 0, 0);
		ASSERT_EQ(symlink((evil.path + "/chronyd.sock").c_str(), (d.path + "/chronyd.sock").c_str()), 0);
		EXPECT_FALSE(asked(d.path + "/chronyd.sock", l, &err)) << "a link to nobody's socket was followed";
		EXPECT_NE(err.find("not trusted"), std::string::npos) << err;
	}
	// what chronyd makes still opens: root's 0750 directory and socket (chronyd -u root) ...
	{
		Dir d((top.path + "/rootXXXXXX").c_str(), 0750, 0, 0);
		Listener l(d.path + "/chronyd.sock", 0);
		EXPECT_TRUE(asked(d.path + "/chronyd.sock", l, &err)) << err;
	}
	{ // ... and its user's directory under root's (/run/chrony, _chrony's 0750), the socket its user's
		Dir d((top.path + "/userXXXXXX").c_str(), 0750, NOBODY, NOBODY);
		Listener l(d.path + "/chronyd.sock", NOBODY);
		EXPECT_TRUE(asked(d.path + "/chronyd.sock", l, &err)) << err;
	}
}

// The same rule when chronyd restarts: its old socket gone, the source connects to the name again. An
// administrator's chmod 0777 of chronyd's directory after the open (chmod -R a+w /run) let any user bind a socket
// there while chronyd was down, and the reconnect sent it the round (it would have taken its reply): never asked.
TEST(ChronySocketTrust, a_reconnect_after_a_restart_asks_only_a_socket_still_placed_by_them)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root (files of another user)";
	constexpr int64_t SEC = 1000000000;
	Dir top("/tmp/fc_attack2_XXXXXX", 0755, 0, 0);
	Dir d((top.path + "/runXXXXXX").c_str(), 0750, 0, 0);
	std::string path = d.path + "/chronyd.sock";
	uint8_t buf[512];
	fc_chrony ch;
	fc_bound b{};
	auto chronyd = std::make_unique<Listener>(path, 0);
	ASSERT_EQ(fc__chrony_open(&ch, path.c_str(), &b, 0), 0) << b.last_error;
	fc__chrony_poll(&ch, SEC, SEC, &b);
	EXPECT_GT(recv(chronyd->fd, buf, sizeof(buf), MSG_DONTWAIT), 0) << "chronyd was not asked";
	chronyd.reset(); // chronyd stops: its socket closed and removed
	unlink(path.c_str());
	ASSERT_EQ(chmod(d.path.c_str(), 0777), 0);
	Listener impostor(path, NOBODY);
	fc__chrony_poll(&ch, 3 * SEC, SEC, &b); // the round timed out, the next one sent: reconnect
	fc__chrony_poll(&ch, 5 * SEC, SEC, &b);
	EXPECT_LT(recv(impostor.fd, buf, sizeof(buf), MSG_DONTWAIT), 0) << "the impostor was asked after the restart";
	EXPECT_NE(std::string(b.last_error).find("not trusted"), std::string::npos) << b.last_error;
	fc__chrony_close(&ch);
}

// In a network namespace where any user may bind 323 (ip_unprivileged_port_start 0), hide(f) takes the sysctl's
// file f away or replaces it (0, else the case cannot be set up here: skipped); then, as nobody with a socket of its
// own on 127.0.0.1:323, chronyd's source is opened: nobody's port must not be asked, and the error must say `want`.
template <class H> void port_not_asked_as_nobody(H hide, const char *want)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root (a network and a mount namespace, another user)";
	Dir closed("/tmp/fc_attack2_XXXXXX", 0700, 0, 0); // chronyd's directory, closed to nobody: the port is asked
	std::string path = closed.path + "/chronyd.sock";
	in_namespaces([&] {
		const char *f = "/proc/sys/net/ipv4/ip_unprivileged_port_start";
		int fd = open(f, O_WRONLY);
		if (fd < 0 || write(fd, "0\n", 2) != 2 || hide(f) != 0)
			_exit(77);
		close(fd);
		if (setgroups(0, nullptr) != 0 || setresgid(NOBODY, NOBODY, NOBODY) != 0 || setresuid(NOBODY, NOBODY, NOBODY) != 0)
			_exit(77);
		int impostor = udp323(); // nobody's
		fc_chrony ch;
		fc_bound b{};
		uint8_t buf[512];
		if (fc__chrony_open(&ch, path.c_str(), &b, 0) == 0) {
			fc__chrony_poll(&ch, 1000000000, 1000000000, &b);
			EXPECT_LT(recv(impostor, buf, sizeof(buf), MSG_DONTWAIT), 0) << "nobody's port 323 was asked (" << ch.via_name << ")";
			fc__chrony_close(&ch);
		}
		EXPECT_NE(strstr(b.last_error, want), nullptr) << b.last_error;
	});
}

// Who may bind chronyd's command port is read from net.ipv4.ip_unprivileged_port_start. Where that file cannot be
// read (a chroot without /proc, systemd's ProcSubset=pid) the source assumed the default 1024, in a network
// namespace where it is 0 (Docker's default for a container's own namespace): nobody bound 127.0.0.1:323 and
// received the round (and would have answered it). Who may bind the port is unknown there: not asked.
TEST(ChronySocketTrust, the_command_port_is_not_trusted_where_who_may_bind_it_cannot_be_read)
{
	// /proc/sys hidden as a chroot or ProcSubset=pid hides it
	port_not_asked_as_nobody([](const char *) { return mount("none", "/proc/sys", "tmpfs", 0, nullptr); }, "323");
}

// The same file replaced by one that is not procfs's (an administrator's or a container runtime's bind mount; attack4)
// saying 1024 where the namespace's value is 0: the value was believed, and nobody's port 323 asked. Only procfs
// says who may bind the port; the open does not wait on a FIFO there either (O_NONBLOCK).
TEST(ChronySocketTrust, the_command_port_is_not_trusted_on_a_value_not_from_procfs)
{
	char fake[] = "/tmp/fc_attack4_portXXXXXX";
	int ff = mkstemp(fake);
	ASSERT_GE(ff, 0);
	ASSERT_EQ(write(ff, "1024\n", 5), 5);
	close(ff);
	chmod(fake, 0644);
	port_not_asked_as_nobody([&](const char *f) { return mount(fake, f, nullptr, MS_BIND, nullptr); }, "cannot be read");
	unlink(fake);
}

// A unix socket that is not trusted is one this process may not use: chronyd's command port is asked instead
// (only chronyd can answer from port 323 where it is privileged), the reason the socket was refused kept as the
// last error. Refusing the socket used to drop chronyd altogether: in a directory its group may write (chronyd
// under a umask of 002) a process no member of that group lost the port it had used before.
TEST(ChronySocketTrust, a_refused_socket_leaves_chronyds_command_port)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root (a network namespace, files of another group)";
	Dir top("/tmp/fc_attack2_XXXXXX", 0755, 0, 0);
	Dir d((top.path + "/grpXXXXXX").c_str(), 0775, 0, NOBODY);
	std::string path = d.path + "/chronyd.sock";
	in_namespaces([&] {
		Listener l(path, 0);
		fc_chrony ch;
		fc_bound b{};
		// nothing on the port: no source (auto mode goes on to the next), not a port that never answers
		EXPECT_NE(fc__chrony_open(&ch, path.c_str(), &b, 0), 0) << "opened on " << ch.via_name;
		fc__chrony_close(&ch);
		int port = udp323(); // root's: chronyd's command port
		std::string err;
		uint8_t buf[512];
		EXPECT_FALSE(asked(path, l, &err)) << "the socket in a directory group " << NOBODY << " may write was asked";
		EXPECT_GT(recv(port, buf, sizeof(buf), MSG_DONTWAIT), 0) << "the command port was not asked: " << err;
		EXPECT_NE(err.find("not trusted"), std::string::npos) << err;
	});
}

// The command port is trusted because only a privileged process can bind it (net.ipv4.ip_unprivileged_port_start
// above 323). The sysctl was read at the open only: an administrator's later `sysctl
// net.ipv4.ip_unprivileged_port_start=0` left the open socket trusted, and nobody's socket on 127.0.0.1:323 (bound
// once chronyd was gone) was sent the next round and could have answered it. Read again at most once a second:
// the port is dropped, the reason kept, and nothing is sent.
TEST(ChronySocketTrust, the_command_port_is_dropped_when_any_user_may_bind_it_after_the_open)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root (a network namespace, another user)";
	constexpr int64_t SEC = 1000000000;
	Dir closed("/tmp/fc_attack2_XXXXXX", 0700, 0, 0); // chronyd's directory, closed to nobody: the port is asked
	std::string path = closed.path + "/chronyd.sock";
	in_namespaces([&] {
		fc_chrony ch;
		fc_bound b{};
		uint8_t buf[512];
		// nobody's process (root kept as the saved uid, to play the administrator); the namespace's 1024
		if (setresuid(NOBODY, NOBODY, 0) != 0)
			_exit(77);
		ASSERT_EQ(fc__chrony_open(&ch, path.c_str(), &b, 0), 0) << b.last_error;
		ASSERT_NE(ch.via, FC_CHRONY_VIA_UNIX) << ch.via_name;
		// the administrator lowers it; nobody binds the port (chronyd is not there)
		ASSERT_EQ(setresuid(0, 0, 0), 0);
		int fd = open("/proc/sys/net/ipv4/ip_unprivileged_port_start", O_WRONLY);
		ASSERT_TRUE(fd >= 0 && write(fd, "0\n", 2) == 2) << strerror(errno);
		close(fd);
		ASSERT_EQ(setgroups(0, nullptr), 0);
		ASSERT_TRUE(setresgid(NOBODY, NOBODY, NOBODY) == 0 && setresuid(NOBODY, NOBODY, NOBODY) == 0);
		int impostor = udp323();
		fc__chrony_poll(&ch, 2 * SEC, SEC, &b);
		fc__chrony_poll(&ch, 4 * SEC, SEC, &b);
		EXPECT_LT(recv(impostor, buf, sizeof(buf), MSG_DONTWAIT), 0) << "nobody's port 323 was asked after the open";
		EXPECT_NE(strstr(b.last_error, "any user may bind port 323"), nullptr) << b.last_error;
		EXPECT_LT(ch.fd, 0) << "the port is still open";
		fc__chrony_close(&ch);
	});
}

// The sweep of crashed processes' directories inside chronyd's (root's, at each open, under the writer lock) opened,
// listed and locked whatever was there. chronyd's user may mount a FUSE filesystem on an entry of its directory
// (fusermount, user_allow_other): every request root's sweep makes there waits on that filesystem's server, which
// need never answer. An entry on another filesystem is never entered. Here a tmpfs mounted on a "leftover" stands
// for it (no fusermount needed): the sweep used to enter it and remove its "sock"; a leftover on chronyd's own
// filesystem is still swept.
TEST(ChronySweep, a_mount_in_chronyds_directory_is_never_entered)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root (a mount namespace)";
	Dir top("/tmp/fc_attack2_XXXXXX", 0755, 0, 0);
	Dir d((top.path + "/runXXXXXX").c_str(), 0750, 0, 0);
	std::string path = d.path + "/chronyd.sock";
	std::string mnt = d.path + "/fastclock.1.00000000000000aa", plain = d.path + "/fastclock.1.00000000000000bb";
	in_namespaces([&] {
		Listener l(path, 0);
		ASSERT_TRUE(mkdir(mnt.c_str(), 0711) == 0 && mkdir(plain.c_str(), 0711) == 0) << strerror(errno);
		if (mount("none", mnt.c_str(), "tmpfs", 0, nullptr) != 0)
			_exit(77);
		for (const std::string *dir : {&mnt, &plain}) {
			int fd = open((*dir + "/sock").c_str(), O_CREAT | O_WRONLY, 0644);
			ASSERT_GE(fd, 0) << strerror(errno);
			close(fd);
		}
		fc_chrony ch;
		fc_bound b{};
		ASSERT_EQ(fc__chrony_open(&ch, path.c_str(), &b, 0), 0) << b.last_error;
		fc__chrony_close(&ch);
		EXPECT_EQ(access((mnt + "/sock").c_str(), F_OK), 0) << "the sweep entered a mount in chronyd's directory";
		EXPECT_NE(access(plain.c_str(), F_OK), 0) << "a leftover on chronyd's filesystem was not swept";
		umount(mnt.c_str());
	});
	rmdir(mnt.c_str());
	unlink((plain + "/sock").c_str());
	rmdir(plain.c_str());
}

// Opens the chrony source on root's chronyd socket at path (a Listener), in a child of a mount namespace whose
// openat and openat2 calls go through on() (with_open_hook); judge(ch, b, opened) says there what went wrong ("").
// after(listener) runs in the namespace once that child is gone (it leaves with _exit: nothing undone).
template <class S, class J, class A> void chrony_open_hooked(const std::string &path, S on, J judge, A after)
{
	in_namespaces([&] {
		Listener l(path, 0);
		int r = with_open_hook(
			[&]() -> std::string {
				fc_chrony ch;
				fc_bound b{};
				bool opened = fc__chrony_open(&ch, path.c_str(), &b, 0) == 0;
				return judge(ch, b, opened);
			},
			on);
		if (r == 77)
			_exit(77);
		after(l);
	});
}

// Our own socket directory was opened with a plain openat right after mkdirat made it in chronyd's directory:
// chronyd's user (who may write there) could swap in a FUSE mount for it in between (rmdir, mkdir, fusermount with
// user_allow_other), and root's open, flock and bind in it would wait on that filesystem's server, under the writer
// lock. It is opened as the sweep opens a leftover: openat2 refuses a mount point (EXDEV) or a link before entering
// it. Here the swap is made deterministic: the open waits (a seccomp user notification) while a tmpfs is mounted on
// the directory just made; the socket used to be bound inside that mount. Now that name is given up and another made.
TEST(ChronySweep, a_mount_swapped_in_for_our_own_directory_is_never_entered)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root (a mount namespace)";
	Dir top("/tmp/fc_attack2_XXXXXX", 0755, 0, 0);
	Dir d((top.path + "/runXXXXXX").c_str(), 0750, 0, 0);
	std::string mnt;
	chrony_open_hooked(
		d.path + "/chronyd.sock",
		[&](int, const std::string &name) {
			if (mnt.empty() && name.compare(0, 10, "fastclock.") == 0) {
				mnt = d.path + "/" + name;
				if (mount("none", mnt.c_str(), "tmpfs", 0, nullptr) != 0)
					ADD_FAILURE() << "mount " << mnt << ": " << strerror(errno);
			}
			return 0;
		},
		[](const fc_chrony &ch, const fc_bound &b, bool opened) -> std::string {
			if (!opened)
				return std::string("open failed: ") + b.last_error;
			return strcmp(ch.via_name, "unix socket") == 0 ? "" : std::string("asked via ") + ch.via_name;
		},
		[&](const Listener &) {
			ASSERT_FALSE(mnt.empty()) << "our directory was never opened";
			EXPECT_NE(access((mnt + "/sock").c_str(), F_OK), 0) << "our socket was bound inside the mount";
			umount(mnt.c_str());
			rmdir(mnt.c_str());
			std::unique_ptr<DIR, int (*)(DIR *)> dir(opendir(d.path.c_str()), closedir); // the child's own, left
			for (dirent *e; dir && (e = readdir(dir.get()));)
				if (strncmp(e->d_name, "fastclock.", 10) == 0) {
					std::string own = d.path + "/" + e->d_name;
					unlink((own + "/sock").c_str());
					rmdir(own.c_str());
				}
		});
}

// Where openat2 is missing (Linux < 5.6; a seccomp filter answering ENOSYS, as here, or EPERM), our directory is not
// entered at all: it is removed again, and the unix socket is not used (the reason kept; the command port instead
// where it listens: none does here). It used to be opened with a plain openat.
TEST(ChronySweep, without_openat2_our_directory_is_not_entered)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root (a mount namespace)";
	Dir top("/tmp/fc_attack2_XXXXXX", 0755, 0, 0);
	Dir d((top.path + "/runXXXXXX").c_str(), 0750, 0, 0);
	chrony_open_hooked(
		d.path + "/chronyd.sock", [](int nr, const std::string &) { return nr == 437 ? ENOSYS : 0; },
		[](const fc_chrony &ch, const fc_bound &b, bool opened) -> std::string {
			if (opened)
				return std::string("opened via ") + ch.via_name;
			if (!strstr(b.last_error, "is not entered without openat2 (not implemented (ENOSYS))"))
				return std::string("error: ") + b.last_error;
			return "";
		},
		[&](const Listener &l) {
			uint8_t buf[64];
			EXPECT_LT(recv(l.fd, buf, sizeof(buf), MSG_DONTWAIT), 0) << "chronyd's socket was asked";
			std::unique_ptr<DIR, int (*)(DIR *)> dir(opendir(d.path.c_str()), closedir);
			ASSERT_TRUE(dir);
			for (dirent *e; (e = readdir(dir.get()));)
				EXPECT_NE(strncmp(e->d_name, "fastclock.", 10), 0) << e->d_name << " left in chronyd's directory";
		});
}

// A VMClock character device was trusted because root owns it, whatever its mode: FASTCLOCK_VMCLOCK_PATH=/dev/fb0
// (root:video 0660, can be mapped) made group video's writes the "hypervisor's page". The vmclock driver's device
// is root's 0600 (misc_register with no mode); a device others, or a group other than root, may write is refused
// naming its mode. A copy of /dev/zero (1, 5: mappable) stands for it.
TEST(VmClockDevice, a_device_others_may_write_is_not_the_hypervisors)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root (mknod)";
	Dir d("/tmp/fc_attack2_XXXXXX", 0755, 0, 0);
	std::string path = d.path + "/vmclock0";
	auto open_error = [&](mode_t mode, gid_t gid) {
		fc_vmc v;
		fc_bound b{};
		unlink(path.c_str());
		EXPECT_EQ(mknod(path.c_str(), S_IFCHR | mode, makedev(1, 5)), 0) << strerror(errno);
		EXPECT_TRUE(chmod(path.c_str(), mode) == 0 && chown(path.c_str(), 0, gid) == 0);
		if (fc__vmc_open(&v, path.c_str(), &b, 0) == 0)
			fc__vmc_close(&v);
		return std::string(b.last_error);
	};
	std::string err = open_error(0666, 0);
	EXPECT_NE(err.find("may be written by any user: not trusted"), std::string::npos) << err;
	err = open_error(0660, NOBODY);
	EXPECT_NE(err.find("may be written by its group: not trusted"), std::string::npos) << err;
	// root's 0600 (the driver's) and group root's 0660 pass the check (then the zeros are no VMClock page)
	for (mode_t mode : {0600, 0660, 0444}) {
		err = open_error(mode, 0);
		EXPECT_EQ(err.find("not trusted"), std::string::npos) << std::oct << mode << ": " << err;
		EXPECT_NE(err, "") << "a page of zeros was taken";
	}
	// root's 0640 made 0660 by `setfacl -m u:nobody:rw` (the group bits are the ACL's mask)
	open_error(0640, 0);
	if (Acl(6, 6, 4, 6, 0).set(path) == 0) {
		fc_vmc v;
		fc_bound b{};
		if (fc__vmc_open(&v, path.c_str(), &b, 0) == 0)
			fc__vmc_close(&v);
		EXPECT_NE(std::string(b.last_error).find("has an ACL"), std::string::npos) << b.last_error;
	}
	unlink(path.c_str());
}

// Opening a device runs its driver's open before any check can look at what was opened: an administrator's
// FASTCLOCK_VMCLOCK_PATH=/dev/watchdog armed the watchdog (and the close without its magic 'V' may reboot the
// machine), a tty raised DTR, a tape rewound at close. What is at the path is looked at first (O_PATH: no driver's
// open), and a device is opened only once sysfs says it is the vmclock driver's (DEVNAME=vmclock<N>). A pty slave
// shows whether its driver's open ran: once opened and closed, its master reads a hang-up (POLLHUP); root's 0600
// slave passes the owner and mode checks and used to be opened (then refused: no mapping). A copy of /dev/null
// (1, 3) is refused naming what sysfs says it is.
bool hung_up(int master)
{
	pollfd p{master, POLLIN, 0};
	return poll(&p, 1, 0) == 1 && (p.revents & POLLHUP);
}

TEST(VmClockDevice, a_device_that_is_not_a_vmclock_is_never_opened)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root (a device of root's)";
	int master = posix_openpt(O_RDWR | O_NOCTTY | O_NONBLOCK);
	if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0 || ptsname(master) == nullptr)
		GTEST_SKIP() << "no pseudo-terminals here: " << strerror(errno);
	std::string slave = ptsname(master);
	ASSERT_TRUE(chown(slave.c_str(), 0, 0) == 0 && chmod(slave.c_str(), 0600) == 0) << strerror(errno);
	ASSERT_FALSE(hung_up(master));
	{
		fc_vmc v;
		fc_bound b{};
		EXPECT_NE(fc__vmc_open(&v, slave.c_str(), &b, 0), 0) << "a pty was taken for a VMClock";
		EXPECT_FALSE(hung_up(master)) << "the tty driver's open ran: " << b.last_error;
		EXPECT_NE(strstr(b.last_error, "not opened: sysfs cannot tell a vmclock"), nullptr) << b.last_error;
		struct stat st;
		int fd = fc__bound_open_file(slave.c_str(), FC_OPEN_REG, &st, &b, 0); // a ClockBound path likewise
		EXPECT_LT(fd, 0);
		EXPECT_FALSE(hung_up(master)) << "the tty driver's open ran for a ClockBound path: " << b.last_error;
		EXPECT_NE(strstr(b.last_error, "character device"), nullptr) << b.last_error;
	}
	int fd = open(slave.c_str(), O_RDONLY | O_NOCTTY | O_NONBLOCK); // an open and a close do show
	EXPECT_GE(fd, 0) << strerror(errno);
	close(fd);
	EXPECT_TRUE(hung_up(master)) << "a pty's master shows no close of its slave here: the test shows nothing";
	close(master);

	Dir d("/tmp/fc_attack2_XXXXXX", 0755, 0, 0);
	std::string path = d.path + "/vmclock0";
	ASSERT_EQ(mknod(path.c_str(), S_IFCHR | 0600, makedev(1, 3)), 0) << strerror(errno);
	fc_vmc v;
	fc_bound b{};
	EXPECT_NE(fc__vmc_open(&v, path.c_str(), &b, 0), 0);
	if (access("/sys/dev/char/1:3/uevent", R_OK) == 0)
		EXPECT_NE(strstr(b.last_error, "not opened: not a vmclock device (1:3, DEVNAME=null)"), nullptr) << b.last_error;
	else
		EXPECT_NE(strstr(b.last_error, "not opened: sysfs cannot tell a vmclock (1:3"), nullptr) << b.last_error;
	unlink(path.c_str());
}

// Whether a device is a vmclock is sysfs's word, and it is reopened through procfs's link to the inode looked at:
// where /sys or /proc is not the kernel's (a chroot's, a tmpfs over them: here in a mount namespace of the test's),
// the device is refused naming which, never opened. A fake /sys/dev/char/1:3/uevent saying DEVNAME=vmclock0 is not
// believed.
TEST(VmClockDevice, only_sysfs_says_what_a_device_is_and_only_procfs_reopens_it)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root (mknod, a mount namespace)";
	Dir d("/tmp/fc_attack2_XXXXXX", 0755, 0, 0);
	std::string path = d.path + "/vmclock0";
	ASSERT_EQ(mknod(path.c_str(), S_IFCHR | 0600, makedev(1, 3)), 0) << strerror(errno);
	auto open_error = [&] {
		fc_vmc v;
		fc_bound b{};
		if (fc__vmc_open(&v, path.c_str(), &b, 0) == 0)
			fc__vmc_close(&v);
		return std::string(b.last_error);
	};
	in_namespaces([&] {
		if (mount("none", "/sys", "tmpfs", 0, nullptr) != 0)
			_exit(77);
		static const char fake[] = "MAJOR=1\nMINOR=3\nDEVNAME=vmclock0\n";
		int fd = -1;
		ASSERT_TRUE(mkdir("/sys/dev", 0755) == 0 && mkdir("/sys/dev/char", 0755) == 0 &&
			    mkdir("/sys/dev/char/1:3", 0755) == 0 &&
			    (fd = open("/sys/dev/char/1:3/uevent", O_CREAT | O_WRONLY, 0644)) >= 0 &&
			    write(fd, fake, sizeof(fake) - 1) == (ssize_t)sizeof(fake) - 1) << strerror(errno);
		close(fd);
		std::string err = open_error();
		EXPECT_NE(err.find("not opened: sysfs cannot tell a vmclock (1:3: /sys is not sysfs)"), std::string::npos) << err;
		umount("/sys");
		if (mount("none", "/proc", "tmpfs", 0, nullptr) != 0)
			_exit(77);
		err = open_error();
		EXPECT_NE(err.find("not opened: no procfs to reopen a device by (no such file"), std::string::npos) << err;
		ASSERT_TRUE(mkdir("/proc/self", 0755) == 0 && mkdir("/proc/self/fd", 0755) == 0) << strerror(errno);
		err = open_error(); // a /proc/self/fd of anyone's making is not the kernel's link to the inode
		EXPECT_NE(err.find("not opened: no procfs to reopen a device by (/proc is not procfs)"), std::string::npos) << err;
		umount("/proc");
	});
	unlink(path.c_str());
}

// The uevent is parsed as bytes from outside: only a whole line DEVNAME=vmclock<N> (N decimal, no leading zero, at
// most 10 digits) says vmclock, and a line is whole when its newline is there (sysfs ends each with one: a buffer
// can cut the last); the name given for the message is printable ASCII, cut to the buffer.
TEST(VmClockDevice, a_uevent_says_vmclock_only_in_a_whole_devname_line)
{
	auto is = [](const std::string &s, std::string *name = nullptr) {
		char n[12];
		int r = fc__file_uevent_is_vmclock(s.data(), s.size(), n, sizeof(n));
		if (name)
			*name = n;
		return r;
	};
	std::string name;
	EXPECT_EQ(is("MAJOR=10\nMINOR=123\nDEVNAME=vmclock0\n", &name), 1);
	EXPECT_EQ(name, "vmclock0");
	EXPECT_EQ(is("DEVNAME=vmclock4294967295\n"), 1);
	EXPECT_EQ(is("MAJOR=1\nMINOR=3\nDEVNAME=null\nDEVMODE=0666\n", &name), 0);
	EXPECT_EQ(name, "null");
	for (const char *bad : {"", "DEVNAME=vmclock\n", "DEVNAME=vmclock01\n", "DEVNAME=vmclock0x\n", "DEVNAME=vmclock 0\n",
				"DEVNAME=vmclock-1\n", "DEVNAME=vmclock12345678901\n", "XDEVNAME=vmclock0\n", " DEVNAME=vmclock0\n",
				"DEVNAME=vmclock0\r\n", "DEVNAME=misc/vmclock0\n", "DEVNAME=VMCLOCK0\n", "MAJOR=10\nMINOR=1\n",
				"DEVNAME=\n", "DEVNAME", "DEVNAME=vmclock0"})
		EXPECT_EQ(is(bad), 0) << bad;
	EXPECT_EQ(is(std::string("DEVNAME=vmclock0\0\n", 18)), 0);
	EXPECT_EQ(is(std::string("DEVNAME=null\nDEVNAME=vmclock0\n")), 0) << "the first DEVNAME decides";
	EXPECT_EQ(is(std::string("DEVNAME=x\x01y\xffzzzzzzzzzzzzzzz\n"), &name), 0);
	EXPECT_EQ(name, "x?y?zzzzzzz") << "not printable, or past the buffer";
	EXPECT_EQ(fc__file_uevent_is_vmclock("DEVNAME=vmclock10\n", 16, nullptr, 0), 0) << "a cut line read as whole";
}

// Group root's write bit is trusted (only root is in group root, as a rule). But on a file with an access ACL the
// group bits are the ACL's mask, which bounds the users and groups the ACL names: an administrator's `setfacl -m
// u:nobody:rw shm0` on root's 0644 segment makes it 0664 group root, and nobody may write it. It was trusted (the
// segment nobody writes read as root's); a file with an ACL whose mask lets write is refused, naming it.
TEST(Trust, a_file_whose_acl_lets_others_write_is_not_trusted)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root (a file of root's that nobody may write)";
	Dir d("/tmp/fc_attack2_XXXXXX", 0755, 0, 0);
	std::string path = d.path + "/shm0";
	int fd = open(path.c_str(), O_CREAT | O_WRONLY, 0644);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, "x", 1), 1);
	if (Acl(6, 6, 4, 6, 4).set(fd) != 0) { // setfacl -m u:nobody:rw
		close(fd), unlink(path.c_str());
		GTEST_SKIP() << "no POSIX ACLs on /tmp here: " << strerror(errno);
	}
	close(fd);
	struct stat st;
	ASSERT_EQ(stat(path.c_str(), &st), 0);
	EXPECT_EQ(st.st_mode & 0777, 0664u) << std::oct << st.st_mode;
	pid_t p = fork(); // nobody may write it indeed
	if (p == 0)
		_exit(setresuid(NOBODY, NOBODY, NOBODY) == 0 && open(path.c_str(), O_WRONLY) >= 0 ? 0 : 1);
	int ws = 0;
	ASSERT_EQ(waitpid(p, &ws, 0), p);
	EXPECT_TRUE(WIFEXITED(ws) && WEXITSTATUS(ws) == 0) << "nobody cannot write it: the test shows nothing";
	fc_bound b{};
	fd = fc__bound_open_file(path.c_str(), FC_OPEN_REG, &st, &b, 0);
	EXPECT_LT(fd, 0) << "a file nobody may write (an ACL) was trusted";
	EXPECT_NE(std::string(b.last_error).find("ACL"), std::string::npos) << b.last_error;
	if (fd >= 0)
		close(fd);
	// the same file without the ACL (0644 root's) is trusted, and an ACL that grants no write changes nothing
	ASSERT_EQ(removexattr(path.c_str(), "system.posix_acl_access"), 0);
	ASSERT_EQ(chmod(path.c_str(), 0644), 0);
	fd = fc__bound_open_file(path.c_str(), FC_OPEN_REG, &st, &b, 0);
	EXPECT_GE(fd, 0) << b.last_error;
	if (fd >= 0) {
		EXPECT_EQ(Acl(6, 4, 4, 4, 4).set(fd), 0) << strerror(errno); // user:nobody:r--, mask::r--
		EXPECT_EQ(fc__bound_still_trusted(fd, 0, path.c_str(), &b, 0), 1) << b.last_error;
		EXPECT_EQ(Acl(6, 6, 4, 6, 4).set(fd), 0) << strerror(errno); // the administrator's setfacl after the open
		EXPECT_EQ(fc__bound_still_trusted(fd, 0, path.c_str(), &b, 0), 0) << "an ACL set after the open was not seen";
		close(fd);
	}
	unlink(path.c_str());
	// chronyd's socket directory likewise: root's 0750 made 0775 by `setfacl -m u:nobody:rwx` (nobody could
	// replace the socket)
	const Acl rwx(7, 7, 5, 7, 5); // setfacl -m u:nobody:rwx: the mode shows 0775 group root
	Dir run((d.path + "/runXXXXXX").c_str(), 0750, 0, 0);
	Listener l(run.path + "/chronyd.sock", 0);
	std::string err;
	ASSERT_EQ(rwx.set(run.path), 0) << strerror(errno);
	EXPECT_FALSE(asked(run.path + "/chronyd.sock", l, &err)) << "a socket directory nobody may write (an ACL) was asked";
	EXPECT_NE(err.find("ACL"), std::string::npos) << err;
	ASSERT_EQ(removexattr(run.path.c_str(), "system.posix_acl_access"), 0);
	ASSERT_EQ(chmod(run.path.c_str(), 0750), 0);
	EXPECT_TRUE(asked(run.path + "/chronyd.sock", l, &err)) << err;
	// and a directory above a daemon user's file: root's 0755 /run-like directory that nobody may write (an ACL,
	// 0775 group root) lets nobody make the daemon's directory there, and its segment is nobody's word
	Dir top((d.path + "/topXXXXXX").c_str(), 0755, 0, 0);
	Dir daemon((top.path + "/cbXXXXXX").c_str(), 0755, NOBODY, NOBODY);
	path = daemon.path + "/shm0";
	fd = open(path.c_str(), O_CREAT | O_WRONLY, 0644);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(fchown(fd, NOBODY, NOBODY), 0);
	close(fd);
	fd = fc__bound_open_file(path.c_str(), FC_OPEN_REG, &st, &b, 0);
	EXPECT_GE(fd, 0) << "the daemon's own directory under root's: " << b.last_error;
	if (fd >= 0)
		close(fd);
	ASSERT_EQ(rwx.set(top.path), 0) << strerror(errno);
	fd = fc__bound_open_file(path.c_str(), FC_OPEN_REG, &st, &b, 0);
	EXPECT_LT(fd, 0) << "a directory nobody could have made (an ACL on the one above) vouched for nobody's file";
	EXPECT_NE(std::string(b.last_error).find("lets others in"), std::string::npos) << b.last_error;
	if (fd >= 0)
		close(fd);
	unlink(path.c_str());
}

} // namespace
