/*
 * fastclock — ClockBound's shared-memory segment (protocol v2, as clock-bound-d 2.x writes it), read the way
 * ClockBound's own client reads it: read-only mapping, header validated once at open, consistent snapshots
 * under the segment's 16-bit generation (a seqlock), the client's status rules and drift growth.
 *
 * Owns: struct fc_cb (the mapping, the last snapshot, the disruption marker seen), its driver (fc__cb_driver).
 * May call: async-signal-safe libc only (open, pread, fstat, fstatfs, lstat, close), bound.c, fmt.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "clockbound.h"
#include "../units.h"

/* ClockBound's client trusts a Synchronized/FreeRunning status for 5 s after as_of (a daemon restart's grace,
 * CLOCKBOUND_RESTART_GRACE_PERIOD), then says FreeRunning until void_after, then Unknown. */
#define CB_GRACE_NS (5 * NS_PER_SEC)
/* ...and accepts a monotonic read up to 1 us older than as_of (CLOCK_MONOTONIC_COARSE's update skew); older
 * is a causality breach. */
#define CB_CAUSALITY_BLUR_NS 1000
/* A drift of 1e9 ppb or more is a malformed segment (the client's sanity check). */
#define CB_MAX_DRIFT_PPB 1000000000u
/* Times are CLOCK_MONOTONIC_COARSE: seconds past 2^33 (272 years of uptime) or negative, or nanoseconds outside
 * [0, 1e9), are no time the daemon wrote (and sec x 1e9 + nsec then always fits an int64). A bound past 2^50 ns
 * (13 days) promises nothing. */
#define CB_MAX_SEC ((int64_t)1 << 33)
#define CB_MAX_BOUND_NS ((int64_t)1 << 50)
/* Reads of the segment per poll before giving up on a consistent one (each a pread of 80 bytes; the writer
 * holds the generation odd for well under a microsecond). */
#define CB_SNAPSHOT_TRIES 100

/* A time namespace's monotonic offset past this (2^29 s, 17 years) is refused: a segment's time (< 2^33 s) moved by
 * it still fits an int64 of ns. */
#define CB_MAX_OFFSET_SEC ((int64_t)1 << 29)

static int64_t ts_ns(int64_t sec, int64_t nsec) { return sec * NS_PER_SEC + nsec; }
static int ts_ok(int64_t sec, int64_t nsec) { return sec >= 0 && sec < CB_MAX_SEC && nsec >= 0 && nsec < NS_PER_SEC; }

int fc__cb_parse(const void *buf, size_t len, struct fc_cb_segment *out, char *why, size_t n)
{
	struct fc_cb_segment h;
	if (len < FC_CB_SIZE)
		return fc__bfmt(why, n, "%zu bytes: a ClockBound v2 segment is at least %d", len, FC_CB_SIZE), -1;
	memcpy(&h, buf, sizeof(h));
	if (h.magic[0] != FC_CB_MAGIC0 || h.magic[1] != FC_CB_MAGIC1)
		return fc__bfmt(why, n, "not a ClockBound segment (magic %#x %#x)", h.magic[0], h.magic[1]), -1;
	if (h.segsize < FC_CB_SIZE)
		return fc__bfmt(why, n, "ClockBound segment says it is %u bytes (at least %d)", h.segsize, FC_CB_SIZE), -1;
	if (h.version != FC_CB_VERSION)
		return fc__bfmt(why, n, "ClockBound segment version %u (want %d)", h.version, FC_CB_VERSION), -1;
	*out = h;
	return 0;
}

int fc__cb_eval(const struct fc_cb_segment *s, int64_t mono_coarse, struct fc_bound *b)
{
	int64_t as_of, void_after;
	b->center_ns = 0;
	b->leap = FC_LEAP_NONE; /* the segment carries no leap information */
	b->holds_until_ns = 0;
	if (!ts_ok(s->as_of_sec, s->as_of_nsec) || !ts_ok(s->void_after_sec, s->void_after_nsec)) {
		/* nothing promised: the age of such an as_of would be meaningless (or overflow) */
		b->half_ns = INT64_MAX / 4;
		b->as_of_ns = mono_coarse;
		b->drift_ppb = 0;
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason),
			 "ClockBound segment times out of range (as_of %lld.%lld s, void_after %lld.%lld s)",
			 (long long)s->as_of_sec, (long long)s->as_of_nsec, (long long)s->void_after_sec,
			 (long long)s->void_after_nsec);
		return b->status;
	}
	as_of = ts_ns(s->as_of_sec, s->as_of_nsec), void_after = ts_ns(s->void_after_sec, s->void_after_nsec);
	b->half_ns = s->bound_nsec;
	b->as_of_ns = as_of;
	b->drift_ppb = s->max_drift_ppb;
	if (s->max_drift_ppb >= CB_MAX_DRIFT_PPB || s->bound_nsec < 0 || s->bound_nsec > CB_MAX_BOUND_NS) {
		b->half_ns = INT64_MAX / 4;
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason), "ClockBound segment malformed (max_drift_ppb %u, bound_nsec %lld)",
			 s->max_drift_ppb, (long long)s->bound_nsec);
		return b->status;
	}
	if (mono_coarse < as_of - CB_CAUSALITY_BLUR_NS) {
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason), "ClockBound segment as_of %lld ns is after now %lld ns",
			 (long long)as_of, (long long)mono_coarse);
		return b->status;
	}
	switch (s->clock_status) {
	case FC_CB_UNKNOWN:
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason), "ClockBound says Unknown");
		break;
	case FC_CB_DISRUPTED:
		b->status = FC_SYNC_DISRUPTED;
		fc__bfmt(b->reason, sizeof(b->reason), "ClockBound says Disrupted");
		break;
	case FC_CB_SYNCHRONIZED:
	case FC_CB_FREE_RUNNING:
		if (mono_coarse < as_of + CB_GRACE_NS) {
			b->holds_until_ns = as_of + CB_GRACE_NS; /* FREE_RUNNING (or UNKNOWN) after it */
			b->status = s->clock_status == FC_CB_SYNCHRONIZED ? FC_SYNC_SYNCHRONIZED : FC_SYNC_FREE_RUNNING;
			fc__bfmt(b->reason, sizeof(b->reason), "ClockBound says %s",
				 s->clock_status == FC_CB_SYNCHRONIZED ? "Synchronized" : "FreeRunning");
		} else if (mono_coarse < void_after) {
			b->holds_until_ns = void_after; /* UNKNOWN after it */
			b->status = FC_SYNC_FREE_RUNNING;
			fc__bfmt(b->reason, sizeof(b->reason), "ClockBound segment not updated for %lld ms",
				 (long long)((mono_coarse - as_of) / 1000000));
		} else {
			b->status = FC_SYNC_UNKNOWN;
			fc__bfmt(b->reason, sizeof(b->reason), "ClockBound segment past void_after (%lld s old)",
				 (long long)((mono_coarse - as_of) / NS_PER_SEC));
		}
		break;
	default:
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason), "ClockBound segment has clock_status %d", s->clock_status);
	}
	return b->status;
}

int fc__cb_parse_timens(const char *buf, size_t len, int64_t *off, char *why, size_t n)
{
	/* the kernel's lines (fs/proc/base.c): "<clock> <sec> <nsec>\n", the clock named ("monotonic", "boottime";
	 * by number before Linux 5.11: 1 CLOCK_MONOTONIC, 7 CLOCK_BOOTTIME), sec signed, 0 <= nsec < 1e9 */
	size_t i = 0;
	int seen = 0;
	*off = 0;
	while (i < len) {
		size_t name = i, name_len;
		int64_t v[2] = {0, 0};
		int neg = 0;
		while (i < len && buf[i] != ' ' && buf[i] != '\n')
			i++;
		name_len = i - name;
		for (int f = 0; f < 2; f++) {
			int digits = 0;
			while (i < len && buf[i] == ' ')
				i++;
			if (f == 0 && i < len && buf[i] == '-')
				neg = 1, i++;
			for (; i < len && buf[i] >= '0' && buf[i] <= '9' && digits < 12; i++, digits++)
				v[f] = v[f] * 10 + (buf[i] - '0');
			if (!digits)
				return fc__bfmt(why, n, "/proc/self/timens_offsets: not a clock's offset at byte %zu", i), -1;
		}
		if (i >= len || buf[i] != '\n' || name_len == 0 || v[1] >= NS_PER_SEC)
			return fc__bfmt(why, n, "/proc/self/timens_offsets: not a clock's offset at byte %zu", i), -1;
		i++;
		if ((name_len == 9 && memcmp(buf + name, "monotonic", 9) == 0) || (name_len == 1 && buf[name] == '1')) {
			if (seen++ || v[0] >= CB_MAX_OFFSET_SEC)
				return fc__bfmt(why, n, "time namespace monotonic offset %s%lld s: refused", neg ? "-" : "",
						(long long)v[0]),
				       -1;
			*off = (neg ? -v[0] : v[0]) * NS_PER_SEC + v[1]; /* a timespec: -0.5 s is -1 s + 500000000 ns */
		}
	}
	if (!seen)
		return fc__bfmt(why, n, "/proc/self/timens_offsets names no monotonic offset"), -1;
	return 0;
}

/* This process's CLOCK_MONOTONIC minus the host's (its time namespace's offset: unshare --time, a container
 * restored elsewhere): the segment's times are the daemon's CLOCK_MONOTONIC_COARSE, the host's. Read once at the
 * open, through one descriptor that must be procfs's, bounded. No such file on a procfs: a kernel without time
 * namespaces, offset 0. Anything else (no procfs, unreadable, malformed): -1 with why, the source refused. */
static int cb_mono_offset(int64_t *off, char *why, size_t n)
{
	char buf[160];
	struct statfs sf;
	ssize_t r;
	int fd = open("/proc/self/timens_offsets", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), e = errno, ok;
	*off = 0;
	if (fd < 0 && e == ENOENT) {
		fd = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ok = fd >= 0 && fstatfs(fd, &sf) == 0 && sf.f_type == FC_PROC_SUPER_MAGIC;
		if (fd >= 0)
			close(fd);
		if (ok)
			return 0;
	}
	if (fd < 0)
		return fc__bfmt(why, n, "cannot tell this process's time namespace offset (/proc/self/timens_offsets: %s)",
				fc__errname(e)),
		       -1;
	ok = fstatfs(fd, &sf) == 0 && sf.f_type == FC_PROC_SUPER_MAGIC;
	r = ok ? pread(fd, buf, sizeof(buf), 0) : -1;
	e = errno;
	close(fd);
	if (!ok || r < 0 || r == (ssize_t)sizeof(buf))
		return fc__bfmt(why, n, "cannot tell this process's time namespace offset (/proc/self/timens_offsets: %s)",
				!ok ? "not procfs" : r < 0 ? fc__errname(e) : "too long"),
		       -1;
	return fc__cb_parse_timens(buf, (size_t)r, off, why, n);
}

void fc__cb_close(struct fc_cb *cb)
{
	fc__file_close(cb->fd, cb->fd_id);
	cb->fd = -1;
	cb->have_snap = 0;
}

int fc__cb_open(struct fc_cb *cb, const char *path, struct fc_bound *b, int64_t now)
{
	unsigned char buf[FC_CB_SIZE];
	struct fc_cb_segment h;
	char why[FC_BOUND_TEXT] = "";
	struct stat st;
	ssize_t n;
	int64_t off;
	int fd;

	memset(cb, 0, sizeof(*cb));
	cb->fd = -1;
	cb->disrupted_as_of = INT64_MIN;
	cb->read_at = INT64_MIN;
	cb->checked_at = INT64_MIN;
	fc__bfmt(cb->path, sizeof(cb->path), "%s", path);
	fd = fc__bound_open_file(path, FC_OPEN_REG, &st, b, now);
	if (fd < 0)
		return -1;
	n = pread(fd, buf, sizeof(buf), 0);
	memset(&h, 0, sizeof(h));
	if (n < 0 || fc__cb_parse(buf, (size_t)n, &h, why, sizeof(why)) != 0 || h.generation == 0) {
		if (n < 0)
			fc__bfmt(why, sizeof(why), "read: %s", fc__errname(errno));
		else if (why[0] == 0)
			fc__bfmt(why, sizeof(why), "ClockBound segment never written yet (generation 0)");
		fc__bound_error(b, now, "%.100s: %s", path, why);
		close(fd);
		return -1;
	}
	if (cb_mono_offset(&off, why, sizeof(why)) != 0) {
		fc__bound_error(b, now, "%.100s: %s", path, why);
		close(fd);
		return -1;
	}
	cb->mono_off = off;
	cb->fd = fd;
	cb->owner = (unsigned)st.st_uid;
	cb->fd_id = (struct fc_fd_id){(uint64_t)st.st_dev, (uint64_t)st.st_ino};
	return 0;
}

/* A consistent copy of the segment. It is read with pread, never mapped: a file someone truncates (an
 * administrator's `: > shm0`, the daemon recreating it) shortens a read instead of raising SIGBUS in every
 * process that maps it. The segment's seqlock is kept with two copies: the first one's generation must be even
 * and not 0, and a second copy, read after it (R1: the acquire fence orders the first copy's loads, made by the
 * kernel on this thread, before the second's), must be identical, so no update ran between or across them. A
 * first copy identical to the last snapshot needs no second one. Returns 0 (cb->snap updated or kept), 1 (no
 * consistent copy this time: keep the last), -1 (the file is shorter than a segment now: why). */
static int cb_snapshot(struct fc_cb *cb, struct fc_bound *b, char *why, size_t n)
{
	union {
		struct fc_cb_segment s;
		unsigned char b[FC_CB_SIZE];
	} a, c;
	for (int i = 0; i < CB_SNAPSHOT_TRIES; i++) {
		ssize_t r = pread(cb->fd, a.b, sizeof(a.b), 0);
		if (r != FC_CB_SIZE)
			return fc__bfmt(why, n, "ClockBound segment %.80s is %zd bytes now (truncated or recreated)", cb->path, r),
			       -1;
		/* at every read, new contents or not: whoever may write it must still be its owner at open alone (an
		 * administrator's chmod 0666 after the open let anyone write it). One fstat of the same descriptor,
		 * after the read: a mode seen bad drops the source from this read on. */
		if (i == 0 && !fc__bound_still_trusted(cb->fd, cb->owner, cb->path, b, cb->read_at))
			return fc__bfmt(why, n, "%s", b->last_error), -1;
		if (a.s.generation == 0 || (a.s.generation & 1))
			continue; /* never written, or being written */
		if (cb->have_snap && memcmp(&a.s, &cb->snap, sizeof(a.s)) == 0)
			return 0;
		__atomic_thread_fence(__ATOMIC_ACQUIRE); /* R1 */
		r = pread(cb->fd, c.b, sizeof(c.b), 0);
		if (r != FC_CB_SIZE)
			return fc__bfmt(why, n, "ClockBound segment %.80s is %zd bytes now (truncated or recreated)", cb->path, r),
			       -1;
		if (memcmp(a.b, c.b, sizeof(a.b)) != 0)
			continue;
		if (fc__cb_parse(a.b, sizeof(a.b), &c.s, why, n) != 0)
			return -1; /* rewritten as something else */
		cb->snap = a.s;
		cb->snap_gen = a.s.generation;
		cb->have_snap = 1;
		return 0;
	}
	return 1;
}

/* A daemon that restarts may leave a new file at the path (systemd's RuntimeDirectory= removes the directory at
 * stop; an administrator's rm): the open one is then an unlinked inode nobody writes. While the segment is
 * stale (not updated for the client's grace), its path is checked once a second; a different file there that
 * opens (the same checks as at start) replaces it, keeping the disruption marker seen (a marker that moved
 * across the restart is a disruption). A path with nothing there keeps the old one: its last word ages. */
static void cb_follow_path(struct fc_cb *cb, int64_t mono_coarse, struct fc_bound *b)
{
	struct stat open_st, path_st;
	struct fc_cb fresh;
	int64_t as_of = fc__cb_as_of(cb), since; /* as_of: [0, 2^33 s) or INT64_MIN */
	if (cb->fd < 0 || as_of == INT64_MIN || mono_coarse < as_of + CB_GRACE_NS ||
	    (!__builtin_sub_overflow(mono_coarse, cb->checked_at, &since) && since < NS_PER_SEC))
		return;
	cb->checked_at = mono_coarse;
	if (fstat(cb->fd, &open_st) != 0 || lstat(cb->path, &path_st) != 0 ||
	    (open_st.st_dev == path_st.st_dev && open_st.st_ino == path_st.st_ino))
		return;
	if (fc__cb_open(&fresh, cb->path, b, mono_coarse) != 0)
		return; /* b->last_error says why; the old one stays */
	fresh.marker_seen = cb->marker_seen;
	fresh.marker_known = cb->marker_known;
	fresh.disrupted_as_of = cb->disrupted_as_of;
	fc__cb_close(cb);
	*cb = fresh;
}

int fc__cb_poll(struct fc_cb *cb, int64_t mono_coarse, const uint64_t *vm_marker, struct fc_bound *b)
{
	int64_t as_of, host;
	char why[FC_BOUND_TEXT];
	int r = 0;
	cb_follow_path(cb, mono_coarse, b);
	if (cb->fd >= 0 && (!cb->have_snap || mono_coarse != cb->read_at)) {
		/* read once per tick of CLOCK_MONOTONIC_COARSE at most (the segment's own time base: nothing newer
		 * can be told apart within one) */
		cb->read_at = mono_coarse;
		r = cb_snapshot(cb, b, why, sizeof(why));
		if (r < 0) {
			/* the file shrank or changed kind: dropped; the bounder opens the path again (once a second) */
			fc__bound_error(b, mono_coarse, "%s", why);
			fc__cb_close(cb);
		}
	}
	if (cb->fd < 0 || !cb->have_snap) {
		b->holds_until_ns = 0;
		b->status = FC_SYNC_UNKNOWN;
		b->half_ns = INT64_MAX / 4;
		b->center_ns = 0;
		b->drift_ppb = 0;
		fc__bfmt(b->reason, sizeof(b->reason), "no consistent ClockBound snapshot of %.80s", cb->path);
		return b->status;
	}
	/* judged on the host's clock (the segment's), served on ours: as_of moved by the time namespace's offset */
	if (__builtin_sub_overflow(mono_coarse, cb->mono_off, &host))
		host = mono_coarse < 0 ? INT64_MIN : INT64_MAX;
	fc__cb_eval(&cb->snap, host, b);
	if (__builtin_add_overflow(b->as_of_ns, cb->mono_off, &b->as_of_ns))
		b->as_of_ns = mono_coarse;
	if (b->holds_until_ns && __builtin_add_overflow(b->holds_until_ns, cb->mono_off, &b->holds_until_ns))
		b->holds_until_ns = mono_coarse; /* held until now at most */
	if (!ts_ok(cb->snap.as_of_sec, cb->snap.as_of_nsec))
		return b->status;
	as_of = ts_ns(cb->snap.as_of_sec, cb->snap.as_of_nsec);
	if (!cb->marker_known || cb->snap.disruption_marker != cb->marker_seen) {
		/* The first snapshot only learns the marker; a change after it is a disruption the daemon reported:
		 * DISRUPTED until the daemon publishes a bound computed after it (a newer as_of). */
		if (cb->marker_known)
			cb->disrupted_as_of = as_of;
		cb->marker_seen = cb->snap.disruption_marker;
		cb->marker_known = 1;
	}
	if (cb->disrupted_as_of != INT64_MIN) {
		if (as_of > cb->disrupted_as_of) {
			cb->disrupted_as_of = INT64_MIN;
		} else if (b->status != FC_SYNC_UNKNOWN) {
			b->status = FC_SYNC_DISRUPTED;
			fc__bfmt(b->reason, sizeof(b->reason), "ClockBound disruption marker moved to %llu",
				 (unsigned long long)cb->snap.disruption_marker);
		}
	}
	/* The client's rule when the daemon watches VMClock: a marker that differs from VMClock's means the
	 * segment has not caught up with a disruption yet, so its status cannot be trusted. */
	if (vm_marker && cb->snap.disruption_support && *vm_marker != cb->snap.disruption_marker) {
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason), "ClockBound disruption marker %llu behind VMClock's %llu",
			 (unsigned long long)cb->snap.disruption_marker, (unsigned long long)*vm_marker);
	}
	return b->status;
}

int64_t fc__cb_as_of(const struct fc_cb *cb)
{
	if (!cb->have_snap || !ts_ok(cb->snap.as_of_sec, cb->snap.as_of_nsec))
		return INT64_MIN;
	return ts_ns(cb->snap.as_of_sec, cb->snap.as_of_nsec) + cb->mono_off; /* < 2^33 + 2^29 s: no overflow */
}

/* ---- the driver (select.c's table) ------------------------------------------------------------------------ */

static void drv_init(void *s) { ((struct fc_cb *)s)->fd = -1; }
static int drv_open(void *s, const char *path, struct fc_bound *b, int64_t now) { return fc__cb_open(s, path, b, now); }
static void drv_close(void *s) { fc__cb_close(s); }
static int drv_is_open(const void *s) { return ((const struct fc_cb *)s)->fd >= 0; }
static void drv_poll(void *s, const struct fc_bound_tick *t, struct fc_bound *b)
{
	fc__cb_poll(s, t->mono_coarse, t->vm_marker, b);
}

/* Has the segment's daemon stopped vouching: never written (as_of 0), or not updated for the client's grace?
 * A segment its daemon keeps updating that says Unknown (a disruption it handles, its chronyd unsynchronised)
 * is its daemon's verdict, not a dead daemon. */
static int drv_silent(const void *s, const struct fc_bound_tick *t)
{
	int64_t as_of = fc__cb_as_of(s);
	if (as_of == INT64_MIN)
		return 0; /* no snapshot, or malformed: UNKNOWN stays */
	return as_of == 0 || t->mono_coarse - as_of >= CB_GRACE_NS;
}

static int64_t drv_measured_at(const void *s) { return fc__cb_as_of(s); }

const struct fc_bound_driver fc__cb_driver = {
	.name = "clockbound", .init = drv_init, .open = drv_open, .close = drv_close, .is_open = drv_is_open,
	.poll = drv_poll, .silent = drv_silent, .measured_at = drv_measured_at,
};
