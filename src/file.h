/*
 * fastclock — file.c: opening a file from outside the process safely, and judging who could have written it.
 * Floor 0. Owns: struct fc_file_err, struct fc_fd_id, FC_OPEN_*, FC_SYSFS_MAGIC, FC_PROC_SUPER_MAGIC, fc__file_*.
 * May call: fmt.c; async-signal-safe libc.
 */
#ifndef FASTCLOCK_FILE_H
#define FASTCLOCK_FILE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where a refusal is said: text (n bytes, always terminated) names the path and what was wrong; *at (unless NULL)
 * gets now, the caller's CLOCK_MONOTONIC (a bound source's last_error and its time). */
struct fc_file_err {
	char *text;
	size_t n;
	int64_t *at;
	int64_t now;
};
void fc__file_error(struct fc_file_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Open a file from outside the process read-only, never blocking (O_NONBLOCK: a FIFO opens at once), never through a symbolic
 * link as the last component (O_NOFOLLOW), and keep it only if it is of a kind in `kinds` and its owner and mode
 * say who wrote it: a regular file owned by root or by its directory's owner, writable by no other user (group
 * write only for group root, and only without an ACL: the group bits are then its mask); a character device owned
 * by root, writable by no other user likewise, and the vmclock driver's (sysfs says so). What is at the path is
 * looked at (O_PATH) before it is opened: a device that is not a vmclock is never opened (its driver's open may
 * act: /dev/watchdog arms). Returns the fd (st filled), or -1 with e->text naming the path, the kind, owner
 * and mode. */
/* sysfs's f_type (linux/magic.h SYSFS_MAGIC): a file the kernel itself serves (trust.c, vmclock's uevent) */
#define FC_SYSFS_MAGIC 0x62656572
/* procfs's (PROC_SUPER_MAGIC): /proc/self/fd (file.c), net.ipv4.ip_unprivileged_port_start (chrony.c) */
#define FC_PROC_SUPER_MAGIC 0x9fa0
#define FC_OPEN_REG 1
#define FC_OPEN_CHR 2
struct stat;
int fc__file_open(const char *path, int kinds, struct stat *st, struct fc_file_err *e);
/* Does a sysfs uevent (n bytes of it, not a string) say DEVNAME=vmclock<N>? 1 or 0; devname gets the DEVNAME it
 * says, printable ASCII only ("" without one), for the message. */
int fc__file_uevent_is_vmclock(const char *buf, size_t n, char *devname, size_t dn);
/* The one rule a source's owner and mode are judged by, at its open and at every read after it (so the two cannot
 * differ): owned by `owner` or `or_owner`, writable by no other user (group write only for group root, and only
 * without an ACL whose mask lets write). 1, or 0 with e->text naming owner, group and mode ("may be written
 * by <else_who>" for another owner). fd: the descriptor st was taken from (its ACL is read there). */
int fc__file_judge(int fd, const struct stat *st, unsigned owner, unsigned or_owner, const char *path,
		    struct fc_file_err *e, const char *else_who);
/* The open file judged again (an administrator's chmod, chown or setfacl after the open): one fstat of the same
 * descriptor, the rule of fc__file_judge with its owner at open. 1, or 0 with e->text naming them. */
int fc__file_still_trusted(int fd, unsigned owner, const char *path, struct fc_file_err *e);
/* An open descriptor's file (device and inode; 0 0 where fstat fails), and close(fd) only while fd is still that
 * file: a fork child may close every descriptor it did not open (a daemon's close-all, no exec) and reuse the
 * numbers, and a bound source's reopen at its second bounded read closed the program's own files by number. */
struct fc_fd_id {
	uint64_t dev, ino;
};
struct fc_fd_id fc__file_fd_id(int fd);
void fc__file_close(int fd, struct fc_fd_id id);
void fc__file_writers_error(const struct stat *st, const char *path, struct fc_file_err *e,
			     const char *else_who);
/* Could no one but root and the owner of the directory open at dfd have put the socket `base` there (chronyd's
 * socket, `path` for messages)? The directory writable by no one else (group write only for group root), its
 * owner, unless root or this process's user, one no other user could have made theirs (as for a source file),
 * and the entry a socket (not a link: connect() would follow it anywhere) owned by root or that owner. 0, or -1
 * with e->text ("... not trusted"). */
int fc__file_socket_trusted(int dfd, const char *base, const char *path, struct fc_file_err *e);

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_FILE_H */
