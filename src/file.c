/*
 * fastclock — opening a file from outside the process safely (floor 0): what is at a path looked at before it is
 * opened, kept only if its owner and mode say who could have written it (docs/THREATS.md). The clocksource's file
 * (trust.c) and the bound sources' files and sockets (src/bound) are opened and judged by these.
 *
 * Owns: struct fc_file_err, fc__file_error, fc__file_open, fc__file_judge, fc__file_still_trusted,
 * fc__file_writers_error, fc__file_socket_trusted, fc__file_uevent_is_vmclock, struct fc_fd_id, fc__file_fd_id,
 * fc__file_close.
 * May call: fmt.c, async-signal-safe libc (open, openat, read, fstat, fstatat, fstatfs, fgetxattr, getxattr, close,
 * geteuid).
 */
#define _GNU_SOURCE /* O_PATH */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "file.h"
#include "fmt.h"

void fc__file_error(struct fc_file_err *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	/* clang-analyzer 14 misreads va_start here (a false positive) */
	fc__bvfmt(e->text, e->n, fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized)
	va_end(ap);
	if (e->at)
		*e->at = e->now;
}

/* Writable by someone other than its owner and group root (a sticky bit does not help: anyone may create an
 * entry of their own in a sticky directory). */
static int others_may_write(const struct stat *s)
{
	return (s->st_mode & S_IWOTH) || ((s->st_mode & S_IWGRP) && s->st_gid != 0);
}

/* Group write is trusted for group root only, but on a file with an access ACL the group bits are the ACL's mask,
 * which also bounds the users and groups it names: an administrator's `setfacl -m u:alice:rw` on root's 0644 file
 * shows 0664 group root and lets alice write it. 1 (the reason recorded) where such a file may be written by
 * them; 0 without an ACL (ENODATA, or a filesystem without them) or with a mask that lets no one write. fd may be
 * an O_PATH descriptor (a device not opened yet): fgetxattr refuses those (EBADF), its inode's ACL is then read
 * through procfs's link to it, and one that cannot be read counts as there. */
static int acl_may_let_others_write(int fd, const struct stat *st, const char *path, struct fc_file_err *e)
{
	ssize_t r;
	if (!(st->st_mode & S_IWGRP))
		return 0;
	r = fgetxattr(fd, "system.posix_acl_access", NULL, 0);
	if (r < 0 && errno == EBADF) {
		char link[32];
		fc__bfmt(link, sizeof(link), "/proc/self/fd/%d", fd);
		r = getxattr(link, "system.posix_acl_access", NULL, 0);
		if (r < 0 && errno != ENODATA && errno != EOPNOTSUPP)
			r = 1;
	}
	if (r <= 0)
		return 0;
	fc__file_error(e, "%.100s (owner uid %u, group %u, mode 0%o) has an ACL whose mask lets the users and "
		       "groups it names write: not trusted", path, (unsigned)st->st_uid, (unsigned)st->st_gid,
		       (unsigned)(st->st_mode & 07777));
	return 1;
}

void fc__file_writers_error(const struct stat *st, const char *path, struct fc_file_err *e,
			     const char *else_who)
{
	fc__file_error(e, "%.100s (owner uid %u, group %u, mode 0%o) may be written by %s: not trusted", path,
		       (unsigned)st->st_uid, (unsigned)st->st_gid, (unsigned)(st->st_mode & 07777),
		       (st->st_mode & S_IWOTH) ? "any user" : (st->st_mode & S_IWGRP) && st->st_gid != 0 ? "its group"
		       : else_who);
}

int fc__file_judge(int fd, const struct stat *st, unsigned owner, unsigned or_owner, const char *path,
		    struct fc_file_err *e, const char *else_who)
{
	if ((st->st_uid != owner && st->st_uid != or_owner) || others_may_write(st)) {
		fc__file_writers_error(st, path, e, else_who);
		return 0;
	}
	return !acl_may_let_others_write(fd, st, path, e);
}

int fc__file_still_trusted(int fd, unsigned owner, const char *path, struct fc_file_err *e)
{
	struct stat st;
	if (fstat(fd, &st) != 0) {
		fc__file_error(e, "fstat %.100s: %s", path, fc__errname(errno));
		return 0;
	}
	return fc__file_judge(fd, &st, owner, owner, path, e, "a new owner");
}

struct fc_fd_id fc__file_fd_id(int fd)
{
	struct stat st;
	struct fc_fd_id id = {0, 0};
	if (fd >= 0 && fstat(fd, &st) == 0)
		id.dev = (uint64_t)st.st_dev, id.ino = (uint64_t)st.st_ino;
	return id;
}

void fc__file_close(int fd, struct fc_fd_id id)
{
	struct fc_fd_id now = fc__file_fd_id(fd);
	if (fd >= 0 && now.dev == id.dev && now.ino == id.ino && (id.dev | id.ino) != 0)
		close(fd);
}

/* Does the directory at the (O_PATH) descriptor fd have an ACL whose mask lets write? Read only where its group
 * bits let group root write (otherwise others_may_write decides, and no system call is made); one that cannot be
 * opened to read its ACL counts as having one. */
static int dir_acl_lets_write(int fd, const struct stat *st)
{
	int rfd, r;
	if (!(st->st_mode & S_IWGRP) || st->st_gid != 0)
		return 0;
	rfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return 1;
	r = fgetxattr(rfd, "system.posix_acl_access", NULL, 0) > 0;
	close(rfd);
	return r;
}

/* 0 if no user but root and `uid` could have put the directory open at dfd where it is (its real location:
 * links in the path resolved): each directory from it up to "/" is owned by root or `uid`, and its parent lets
 * no one else replace it (writable by no one else, or sticky with the entry root's: in a sticky directory
 * anyone can still create an entry of their own). Else -1 with *bad the directory that fails. Walks up by ".."
 * from the opened directory, so nothing can be swapped between the check and the open; at most FC_DIR_DEPTH
 * levels (a path is at most 255 bytes: 128 components). */
#define FC_DIR_DEPTH 128
static int dir_chain_owned_by(int dfd, uid_t uid, struct stat *bad)
{
	struct stat cur, up;
	int fd = dfd, r = -1;
	memset(bad, 0, sizeof(*bad));
	if (fstat(fd, &cur) != 0)
		return -1;
	for (int depth = 0; depth < FC_DIR_DEPTH; depth++) {
		int pfd;
		if (cur.st_uid != 0 && cur.st_uid != uid) {
			*bad = cur;
			break;
		}
		pfd = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (pfd < 0 || fstat(pfd, &up) != 0) {
			if (pfd >= 0)
				close(pfd);
			break;
		}
		if (fd != dfd)
			close(fd);
		fd = pfd;
		if (up.st_dev == cur.st_dev && up.st_ino == cur.st_ino) {
			r = 0; /* "/": its own parent */
			break;
		}
		if ((others_may_write(&up) || dir_acl_lets_write(fd, &up)) && !((up.st_mode & S_ISVTX) && cur.st_uid == 0)) {
			*bad = up;
			break;
		}
		cur = up;
	}
	if (fd != dfd)
		close(fd);
	return r;
}

int fc__file_socket_trusted(int dfd, const char *base, const char *path, struct fc_file_err *e)
{
	struct stat ds, ss, bad;
	if (fstat(dfd, &ds) != 0 || fstatat(dfd, base, &ss, AT_SYMLINK_NOFOLLOW) != 0) {
		fc__file_error(e, "stat %.100s: %s", path, fc__errname(errno));
		return -1;
	}
	if (others_may_write(&ds)) {
		fc__file_error(e, "not trusted (its directory, uid %u group %u mode 0%o, may be written by %s): %.100s",
			       (unsigned)ds.st_uid, (unsigned)ds.st_gid, (unsigned)(ds.st_mode & 07777),
			       (ds.st_mode & S_IWOTH) ? "any user" : "its group", path);
		return -1;
	}
	if (acl_may_let_others_write(dfd, &ds, path, e))
		return -1;
	if (!S_ISSOCK(ss.st_mode) || (ss.st_uid != 0 && ss.st_uid != ds.st_uid)) {
		fc__file_error(e, "not trusted (%s owned by uid %u in a directory of uid %u): %.100s",
			       S_ISLNK(ss.st_mode) ? "a symbolic link" : S_ISSOCK(ss.st_mode) ? "a socket" : "no socket",
			       (unsigned)ss.st_uid, (unsigned)ds.st_uid, path);
		return -1;
	}
	if (ds.st_uid != 0 && ds.st_uid != geteuid() && dir_chain_owned_by(dfd, ds.st_uid, &bad) != 0) {
		fc__file_error(e, "not trusted (socket directory of uid %u; uid %u group %u mode 0%o on its path lets others in): %.100s",
			       (unsigned)ds.st_uid, (unsigned)bad.st_uid, (unsigned)bad.st_gid,
			       (unsigned)(bad.st_mode & 07777), path);
		return -1;
	}
	return 0;
}

int fc__file_uevent_is_vmclock(const char *buf, size_t n, char *devname, size_t dn)
{
	/* a line "DEVNAME=vmclock<N>", N a decimal without a leading zero (the driver's "vmclock%d" of an ida index);
	 * only whole lines count (sysfs ends each with a newline: one the end of the buffer cuts does not), and
	 * nothing in buf is trusted to be a string: it is bytes, NULs included */
	static const char key[] = "DEVNAME=", want[] = "vmclock";
	size_t start = 0;
	if (dn)
		devname[0] = 0;
	while (start < n) {
		const char *line = buf + start, *nl = memchr(line, '\n', n - start);
		size_t len;
		if (!nl)
			break;
		len = (size_t)(nl - line);
		start += len + 1;
		if (len < sizeof(key) - 1 || memcmp(line, key, sizeof(key) - 1) != 0)
			continue;
		line += sizeof(key) - 1, len -= sizeof(key) - 1;
		for (size_t i = 0; dn && i < len && i < dn - 1; i++) /* for the message: printable ASCII only */
			devname[i] = line[i] > ' ' && line[i] < 127 ? line[i] : '?', devname[i + 1] = 0;
		if (len <= sizeof(want) - 1 || len > sizeof(want) - 1 + 10 || memcmp(line, want, sizeof(want) - 1) != 0)
			return 0;
		line += sizeof(want) - 1, len -= sizeof(want) - 1;
		if (line[0] == '0' && len > 1)
			return 0;
		for (size_t i = 0; i < len; i++)
			if (line[i] < '0' || line[i] > '9')
				return 0;
		return 1;
	}
	return 0;
}

/* Is the character device rdev the vmclock driver's (drivers/ptp/ptp_vmclock.c: a misc device named "vmclock%d")?
 * Asked of sysfs, never of the device: opening a device runs its driver's open (/dev/watchdog arms, and a close
 * without its magic 'V' may reboot; a tty raises DTR; a tape rewinds at close). 0, or -1 with the reason. */
static int is_vmclock(dev_t rdev, const char *path, struct fc_file_err *err)
{
	char ue[48], buf[512], name[24];
	struct statfs sf;
	ssize_t n = -1;
	int fd, e, fs_ok;
	fc__bfmt(ue, sizeof(ue), "/sys/dev/char/%u:%u/uevent", (unsigned)major(rdev), (unsigned)minor(rdev));
	fd = open(ue, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	e = errno;
	/* fs_ok: -1 fstatfs failed (its errno in e: the message names it, not "not sysfs"), 0 not sysfs, 1 sysfs */
	fs_ok = fd < 0 ? -1 : fstatfs(fd, &sf) != 0 ? (e = errno, -1) : sf.f_type == FC_SYSFS_MAGIC;
	if (fs_ok == 1) {
		n = pread(fd, buf, sizeof(buf), 0); /* at 0: a fork meanwhile shares the offset (trust.c) */
		e = errno;
	}
	if (fd >= 0)
		close(fd);
	if (fs_ok != 1 || n < 0) {
		fc__file_error(err, "not opened: sysfs cannot tell a vmclock (%u:%u: %s): %.100s", (unsigned)major(rdev),
			       (unsigned)minor(rdev), fs_ok == 0 ? "/sys is not sysfs" : fc__errname(e), path);
		return -1;
	}
	if (!fc__file_uevent_is_vmclock(buf, (size_t)n, name, sizeof(name))) {
		fc__file_error(err, "not opened: not a vmclock device (%u:%u, DEVNAME=%s): %.100s", (unsigned)major(rdev),
			       (unsigned)minor(rdev), name, path);
		return -1;
	}
	return 0;
}

int fc__file_open(const char *path, int kinds, struct stat *st, struct fc_file_err *e)
{
	struct stat ds;
	char dir[256];
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	int fd = -1, pfd, dfd, procd = -1;
	/* The directory is opened first and the file relative to it, so the directory checked below is the one the
	 * file is in (a link in the directory part is followed once, here; the checks see where it led). */
	if (slash && (size_t)(slash - path) >= sizeof(dir)) { /* cut to fit, it would name another directory */
		fc__file_error(e, "not opened: a directory too long to check (%s): %.60s", fc__errname(ENAMETOOLONG), path);
		return -1;
	}
	if (!slash)
		fc__bfmt(dir, sizeof(dir), ".");
	else if (slash == path)
		fc__bfmt(dir, sizeof(dir), "/");
	else
		fc__bfmt(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		fc__file_error(e, "open %.100s: %s", path, fc__errname(errno)); /* its directory's error */
		return -1;
	}
	/* O_PATH: what is at the path is looked at before anything opens it: an open of a device runs its driver's
	 * open (see is_vmclock), an O_PATH one does not (nor does it wait for a FIFO's writer). O_NOFOLLOW: the last
	 * component is the file itself, not a link someone else may point anywhere (O_PATH gives the link: refused). */
	pfd = openat(dfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0) {
		fc__file_error(e, "open %.100s: %s", path, fc__errname(errno));
		close(dfd);
		return -1;
	}
	if (fstat(pfd, st) != 0) {
		fc__file_error(e, "fstat %.100s: %s", path, fc__errname(errno));
		goto refused;
	}
	if (S_ISLNK(st->st_mode)) {
		fc__file_error(e, "open %.100s: %s", path, fc__errname(ELOOP));
		goto refused;
	}
	if (S_ISCHR(st->st_mode) && (kinds & FC_OPEN_CHR)) {
		/* a device's contents come from its driver; only root makes device nodes. But a device its group or
		 * others may write (/dev/fb0, root:video 0660, can be mapped) is its writers' word, not the hypervisor's:
		 * the vmclock driver's /dev/vmclock0 is root's 0600 (misc_register without a mode), read-only mappings */
		struct stat again;
		char fdname[16];
		struct statfs sf;
		int pe;
		if (!fc__file_judge(pfd, st, 0, 0, path, e, "a user other than root"))
			goto refused;
		/* The device is reopened, once shown to be a vmclock, through procfs's link to the inode pfd holds
		 * (/proc/self/fd/N: that inode, not the path again, where something else may stand by then); its ACL
		 * is read there too. No procfs, no device: fail closed. */
		procd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
		pe = procd < 0 || fstatfs(procd, &sf) != 0 ? errno : sf.f_type != FC_PROC_SUPER_MAGIC ? -1 : 0;
		if (pe) { /* the open's or fstatfs's errno; "not procfs" only for a filesystem fstatfs named */
			fc__file_error(e, "not opened: no procfs to reopen a device by (%s): %.100s",
				       pe > 0 ? fc__errname(pe) : "/proc is not procfs", path);
			goto refused;
		}
		if (is_vmclock(st->st_rdev, path, e) != 0)
			goto refused;
		fc__bfmt(fdname, sizeof(fdname), "%d", pfd);
		/* O_NONBLOCK: a driver that waits for a peer does not wait here; O_NOCTTY: a terminal never becomes ours */
		fd = openat(procd, fdname, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (fd < 0 || fstat(fd, &again) != 0) {
			fc__file_error(e, "open %.100s: %s", path, fc__errname(errno));
			goto refused;
		}
		if (again.st_dev != st->st_dev || again.st_ino != st->st_ino || again.st_rdev != st->st_rdev ||
		    !S_ISCHR(again.st_mode)) {
			fc__file_error(e, "%.100s: /proc/self/fd/%d opened another file: refused", path, pfd);
			goto refused;
		}
		close(procd);
		close(pfd);
		close(dfd);
		return fd;
	}
	if (!S_ISREG(st->st_mode)) {
		fc__file_error(e, "%.100s is a %s (mode 0%o), not a %s: refused", path,
			       S_ISFIFO(st->st_mode) ? "FIFO" : S_ISDIR(st->st_mode) ? "directory" : S_ISSOCK(st->st_mode) ? "socket"
			       : S_ISCHR(st->st_mode) ? "character device" : S_ISBLK(st->st_mode) ? "block device" : "special file",
			       (unsigned)st->st_mode, (kinds & FC_OPEN_CHR) ? "character device or regular file" : "regular file");
		goto refused;
	}
	/* A regular file: opened again by its name in the directory, and kept only if that is the file looked at
	 * (no /proc needed). Only root could have put a device there in between (mknod needs CAP_MKNOD, and
	 * fs.protected_hardlinks keeps other users from linking one of root's). */
	{
		struct stat seen = *st;
		fd = openat(dfd, base, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
		if (fd < 0 || fstat(fd, st) != 0) {
			fc__file_error(e, "open %.100s: %s", path, fc__errname(errno));
			goto refused;
		}
		if (st->st_dev != seen.st_dev || st->st_ino != seen.st_ino) {
			fc__file_error(e, "%.100s was replaced as it was opened: refused", path);
			goto refused;
		}
	}
	/* A regular file is trusted when only root or its directory's owner (the daemon's user, who created the
	 * directory, e.g. /run/clockbound) can have written it: owned by one of them, and writable by no one else
	 * (group-writable only for group root). */
	if (fstat(dfd, &ds) != 0) {
		fc__file_error(e, "fstat %.100s: %s", dir, fc__errname(errno));
		goto refused;
	}
	if (!fc__file_judge(fd, st, 0, (unsigned)ds.st_uid, path, e,
			     "a user who is neither root nor its directory's owner"))
		goto refused;
	/* ...and that owner is the daemon's user only if no one else could have made the directory theirs: a user
	 * can create one in any directory it may write (/tmp, /dev/shm) and write a "segment" there. A file of
	 * root's, or of this process's own user, needs no such proof. */
	if (st->st_uid != 0 && st->st_uid != geteuid() && dir_chain_owned_by(dfd, st->st_uid, &ds) != 0) {
		/* "not trusted" first: the path may not fit */
		fc__file_error(e, "not trusted (owner uid %u; directory uid %u group %u mode 0%o lets others in): %.100s",
			       (unsigned)st->st_uid, (unsigned)ds.st_uid, (unsigned)ds.st_gid, (unsigned)(ds.st_mode & 07777),
			       path);
		goto refused;
	}
	close(pfd);
	close(dfd);
	return fd;
refused:
	if (fd >= 0)
		close(fd);
	if (procd >= 0)
		close(procd);
	close(pfd);
	close(dfd);
	return -1;
}
