/*
 * fastclock — ClockBound's shared-memory segment (protocol v2, as clock-bound-d 2.x writes it), read the way
 * ClockBound's own client reads it: read-only mapping, header validated once at open, consistent snapshots
 * under the segment's 16-bit generation (a seqlock), the client's status rules and drift growth.
 *
 * Owns: struct fc_cb (the mapping, the last snapshot, the disruption marker seen).
 * May call: async-signal-safe libc only (open, read, fstat, mmap), bound.c, fmt.c.
 */
#include <fcntl.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bound.h"

#define NS_PER_SEC 1000000000LL
/* ClockBound's client trusts a Synchronized/FreeRunning status for 5 s after as_of (a daemon restart's grace,
 * CLOCKBOUND_RESTART_GRACE_PERIOD), then says FreeRunning until void_after, then Unknown. */
#define CB_GRACE_NS (5 * NS_PER_SEC)
/* ...and accepts a monotonic read up to 1 us older than as_of (CLOCK_MONOTONIC_COARSE's update skew); older
 * is a causality breach. */
#define CB_CAUSALITY_BLUR_NS 1000
/* A drift of 1e9 ppb or more is a malformed segment (the client's sanity check). */
#define CB_MAX_DRIFT_PPB 1000000000u
/* Retries for a consistent snapshot before giving up on this poll (the client's 1e6; the writer holds the
 * generation odd for well under a microsecond, so a thousand tries is already far past a torn read). */
#define CB_SNAPSHOT_TRIES 1000

static int64_t ts_ns(int64_t sec, int64_t nsec) { return sec * NS_PER_SEC + nsec; }

int fc__cb_eval(const struct fc_cb_segment *s, int64_t mono_coarse, struct fc_bound *b)
{
	int64_t as_of = ts_ns(s->as_of_sec, s->as_of_nsec), void_after = ts_ns(s->void_after_sec, s->void_after_nsec);
	b->center_ns = 0;
	b->half_ns = s->bound_nsec;
	b->as_of_ns = as_of;
	b->drift_ppb = s->max_drift_ppb;
	b->leap = FC_LEAP_NONE; /* the segment carries no leap information */
	if (s->max_drift_ppb >= CB_MAX_DRIFT_PPB || s->bound_nsec < 0) {
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
			b->status = s->clock_status == FC_CB_SYNCHRONIZED ? FC_SYNC_SYNCHRONIZED : FC_SYNC_FREE_RUNNING;
			fc__bfmt(b->reason, sizeof(b->reason), "ClockBound says %s",
				 s->clock_status == FC_CB_SYNCHRONIZED ? "Synchronized" : "FreeRunning");
		} else if (mono_coarse < void_after) {
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

void fc__cb_close(struct fc_cb *cb)
{
	if (cb->seg)
		munmap((void *)cb->seg, cb->maplen);
	cb->seg = NULL;
	cb->have_snap = 0;
}

int fc__cb_open(struct fc_cb *cb, const char *path, struct fc_bound *b, int64_t now)
{
	struct fc_cb_segment h;
	struct stat st;
	ssize_t n;
	void *m;
	int fd;

	memset(cb, 0, sizeof(*cb));
	cb->disrupted_as_of = INT64_MIN;
	fc__bfmt(cb->path, sizeof(cb->path), "%s", path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fc__bound_error(b, now, "open %s: %s", path, fc__errname(errno));
		return -1;
	}
	n = read(fd, &h, sizeof(h));
	if (n < 16 || h.magic[0] != FC_CB_MAGIC0 || h.magic[1] != FC_CB_MAGIC1) {
		fc__bound_error(b, now, "%s is not a ClockBound segment (%zd bytes, magic %#x %#x)", path, n,
			       n >= 8 ? h.magic[0] : 0, n >= 8 ? h.magic[1] : 0);
		close(fd);
		return -1;
	}
	if (h.version != FC_CB_VERSION || h.generation == 0 || h.segsize < FC_CB_SIZE || fstat(fd, &st) != 0 ||
	    st.st_size < (off_t)FC_CB_SIZE) {
		fc__bound_error(b, now, "%s: ClockBound segment version %u (want %d), generation %u, segsize %u",
			       path, h.version, FC_CB_VERSION, h.generation, h.segsize);
		close(fd);
		return -1;
	}
	m = mmap(NULL, FC_CB_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		fc__bound_error(b, now, "mmap %s: %s", path, fc__errname(errno));
		return -1;
	}
	cb->seg = m;
	cb->maplen = FC_CB_SIZE;
	return 0;
}

/* The segment's seqlock, reader side. S1: acquire load of the generation pairs with the writer's release
 * store of the even value after its writes (clock-bound-shm writer.rs): the body it wrote before is visible.
 * S2: the acquire fence orders the body loads before the second generation load, so a body torn by a
 * concurrent write shows up as a changed generation. */
static int cb_snapshot(struct fc_cb *cb)
{
	const struct fc_cb_segment *s = cb->seg;
	uint16_t g1 = __atomic_load_n(&s->generation, __ATOMIC_ACQUIRE), g2; /* S1 */
	struct fc_cb_segment copy;

	/* Never written, being written, or unchanged: keep the last snapshot (the client does the same; a
	 * stale one ages into FreeRunning and Unknown). */
	if (g1 == 0 || (g1 & 1) || (cb->have_snap && g1 == cb->snap_gen))
		return cb->have_snap ? 0 : -1;
	for (int i = 0; i < CB_SNAPSHOT_TRIES; i++) {
		memcpy(&copy, s, sizeof(copy)); /* between S1 and S2: the compiler cannot move it out */
		__atomic_thread_fence(__ATOMIC_ACQUIRE); /* S2 */
		g2 = __atomic_load_n(&s->generation, __ATOMIC_RELAXED);
		if (g1 == g2) {
			cb->snap = copy;
			cb->snap_gen = g1;
			cb->have_snap = 1;
			return 0;
		}
		if (!(g2 & 1) && g2 != 0)
			g1 = g2;
		else
			g1 = __atomic_load_n(&s->generation, __ATOMIC_ACQUIRE);
	}
	return cb->have_snap ? 0 : -1;
}

int fc__cb_poll(struct fc_cb *cb, int64_t mono_coarse, const uint64_t *vm_marker, struct fc_bound *b)
{
	int64_t as_of;
	if (!cb->seg || cb_snapshot(cb) != 0) {
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason), "no consistent ClockBound snapshot of %.80s", cb->path);
		return b->status;
	}
	fc__cb_eval(&cb->snap, mono_coarse, b);
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
