/*
 * fastclock — the kernel's NTP state as a bound: adjtimex maxerror, trusted only when the process that writes
 * it is known to set it to a real bound (chronyd: root_delay / 2 + root_dispersion; ntpd: the same root
 * distance). systemd-timesyncd writes maxerror = 0 at every poll, busybox ntpd leaves it alone, and an unknown
 * writer proves nothing: under those the status is UNKNOWN with the reason, never SYNCHRONIZED.
 *
 * Owns: the writer scan (/proc) and the classification of (NTP state, writer).
 * May call: async-signal-safe libc (open, getdents64, readlink, read), bound.c, fmt.c.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <unistd.h>

#include "bound.h"

/* The kernel's maxerror grows by 500 us each second (MAXFREQ, kernel/time/ntp.c): 500 ppm. */
#define KERNEL_GROWTH_PPB 500000

const char *fc__ntp_writer_name(int w)
{
	switch (w) {
	case FC_WRITER_NONE: return "none";
	case FC_WRITER_CHRONYD: return "chronyd";
	case FC_WRITER_NTPD: return "ntpd";
	case FC_WRITER_TIMESYNCD: return "systemd-timesyncd";
	case FC_WRITER_BUSYBOX: return "busybox ntpd";
	case FC_WRITER_OPENNTPD: return "openntpd";
	default: return "?";
	}
}

static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	if (buf[n - 1] == '\n')
		buf[n - 1] = 0;
	return 0;
}

/* Which daemon a process is, from its comm (15 characters at most) and, for the name "ntpd" that three
 * daemons share, its executable. */
static int classify_process(const char *dir)
{
	char path[320], comm[32], exe[256];
	const char *base;
	ssize_t n;
	fc__bfmt(path, sizeof(path), "%s/comm", dir);
	if (read_small(path, comm, sizeof(comm)) != 0)
		return -1;
	if (strcmp(comm, "chronyd") == 0)
		return FC_WRITER_CHRONYD;
	if (strcmp(comm, "systemd-timesyn") == 0 || strcmp(comm, "systemd-timesyncd") == 0)
		return FC_WRITER_TIMESYNCD;
	if (strcmp(comm, "openntpd") == 0)
		return FC_WRITER_OPENNTPD;
	if (strcmp(comm, "ntpd") != 0)
		return -1;
	fc__bfmt(path, sizeof(path), "%s/exe", dir);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0) /* a test's proc tree keeps the target in a file named exe */
		n = read_small(path, exe, sizeof(exe)) == 0 ? (ssize_t)strlen(exe) : 0;
	exe[n > 0 ? n : 0] = 0;
	base = strrchr(exe, '/');
	base = base ? base + 1 : exe;
	if (strncmp(base, "busybox", 7) == 0)
		return FC_WRITER_BUSYBOX;
	if (strstr(exe, "openntpd"))
		return FC_WRITER_OPENNTPD;
	return FC_WRITER_NTPD;
}

/* A dishonest writer outranks an honest one: with both running, maxerror may be the dishonest one's. */
static int rank(int w) { return w == FC_WRITER_NONE ? 0 : (w == FC_WRITER_CHRONYD || w == FC_WRITER_NTPD) ? 1 : 2; }

/* The directory is read with getdents64 (opendir allocates: not async-signal-safe). */
struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

int fc__ntp_writer_scan(const char *proc_root)
{
	char buf[4096];
	long n;
	int best = FC_WRITER_NONE, fd = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return FC_WRITER_NONE;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			const struct linux_dirent64 *e = (const struct linux_dirent64 *)(buf + off);
			char dir[300];
			int w;
			off += e->d_reclen;
			if (e->d_name[0] < '0' || e->d_name[0] > '9')
				continue;
			fc__bfmt(dir, sizeof(dir), "%s/%s", proc_root, e->d_name);
			w = classify_process(dir);
			if (w >= 0 && rank(w) > rank(best))
				best = w;
		}
	}
	close(fd);
	return best;
}

int fc__kernel_eval(const struct fc_ntp *n, int writer, int64_t now, struct fc_bound *b)
{
	b->center_ns = 0;
	b->half_ns = n->maxerror_ns;
	b->as_of_ns = now;
	b->drift_ppb = KERNEL_GROWTH_PPB;
	b->leap = (n->status & STA_INS) ? FC_LEAP_INSERT : (n->status & STA_DEL) ? FC_LEAP_DELETE : FC_LEAP_NONE;
	if (n->sync == FC_SYNC_UNKNOWN) {
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason), "adjtimex failed: the kernel's NTP state is unknown");
	} else if (n->sync == FC_SYNC_FREE_RUNNING) {
		b->status = FC_SYNC_FREE_RUNNING;
		fc__bfmt(b->reason, sizeof(b->reason), "the kernel clock is not disciplined (maxerror %lld us)",
			 (long long)(n->maxerror_ns / 1000));
	} else if (rank(writer) != 1) {
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason), "kernel maxerror is written by %s, which does not set it to a bound",
			 writer == FC_WRITER_NONE ? "an unknown process" : fc__ntp_writer_name(writer));
	} else if (n->maxerror_ns == 0) {
		/* neither chronyd nor ntpd writes 0 (their root distance is never 0): something else wrote it */
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason), "kernel maxerror is 0 under %s: written by another process",
			 fc__ntp_writer_name(writer));
	} else {
		b->status = FC_SYNC_SYNCHRONIZED;
		fc__bfmt(b->reason, sizeof(b->reason), "kernel maxerror %lld us from %s (leaves out its correction)",
			 (long long)(n->maxerror_ns / 1000), fc__ntp_writer_name(writer));
	}
	return b->status;
}
