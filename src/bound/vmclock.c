/*
 * fastclock — VMClock (/dev/vmclock0, Linux >= 6.13; the layout of include/uapi/linux/vmclock-abi.h, little
 * endian): its disruption marker and clock status, an overlay on the other sources. A marker that moves
 * (live migration, snapshot restore) makes the status DISRUPTED until a good sample: one read with the same
 * marker as the previous one and a SYNCHRONIZED clock status.
 *
 * Owns: struct fc_vmc (the mapping, the last snapshot, the disruption state).
 * May call: async-signal-safe libc only (open, fstat, mmap), bound.c, fmt.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bound.h"

/* Offsets in struct vmclock_abi. */
#define VMC_MAGIC 0
#define VMC_SIZE 4
#define VMC_VERSION 8
#define VMC_SEQ 12
#define VMC_MARKER 16
#define VMC_FLAGS 24
#define VMC_STATUS 34
#define VMC_LEAP 38
#define VMC_MAXERROR 96
#define VMC_LEN 104 /* the structure's size in version 1 */
#define VMC_TRIES 1000 /* torn reads tolerated per poll (the host holds seq_count odd for microseconds) */

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

void fc__vmc_close(struct fc_vmc *v)
{
	if (v->map)
		munmap((void *)v->map, v->maplen);
	v->map = NULL;
}

int fc__vmc_open(struct fc_vmc *v, const char *path, struct fc_bound *b, int64_t now)
{
	struct stat st;
	void *m;
	int fd;
	memset(v, 0, sizeof(*v));
	fc__bfmt(v->path, sizeof(v->path), "%s", path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fc__bound_error(b, now, "open %s: %s", path, fc__errname(errno));
		return -1;
	}
	/* the device reports size 0 to fstat; its mapping is one page */
	if (fstat(fd, &st) != 0 || (st.st_size != 0 && st.st_size < VMC_LEN)) {
		fc__bound_error(b, now, "%s: %lld bytes, a VMClock is %d", path, (long long)st.st_size, VMC_LEN);
		close(fd);
		return -1;
	}
	v->maplen = VMC_LEN; /* the kernel maps (and unmaps) the whole page that holds it */
	m = mmap(NULL, v->maplen, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		fc__bound_error(b, now, "mmap %s: %s", path, fc__errname(errno));
		return -1;
	}
	v->map = m;
	if (le(v->map + VMC_MAGIC, 4) != FC_VMCLOCK_MAGIC || le(v->map + VMC_VERSION, 2) != 1 ||
	    le(v->map + VMC_SIZE, 4) < VMC_LEN) {
		fc__bound_error(b, now, "%s: magic %#llx version %llu size %llu (want %#x, 1, >= %d)", path,
			       (unsigned long long)le(v->map + VMC_MAGIC, 4), (unsigned long long)le(v->map + VMC_VERSION, 2),
			       (unsigned long long)le(v->map + VMC_SIZE, 4), FC_VMCLOCK_MAGIC, VMC_LEN);
		fc__vmc_close(v);
		return -1;
	}
	return 0;
}

int fc__vmc_poll(struct fc_vmc *v, struct fc_bound *b, int64_t now)
{
	const uint8_t *m = v->map;
	struct fc_vmc_snap s;
	if (!m)
		return -1;
	for (int i = 0; i < VMC_TRIES; i++) {
		/* V1: acquire pairs with the host's barrier after it makes seq_count even: the fields written before
		 * are visible. V2: the acquire fence orders the field loads before the second seq_count load. */
		uint32_t q1 = __atomic_load_n((const uint32_t *)(m + VMC_SEQ), __ATOMIC_ACQUIRE), q2; /* V1 */
		if (q1 & 1)
			continue;
		s.disruption_marker = le(m + VMC_MARKER, 8);
		s.flags = le(m + VMC_FLAGS, 8);
		s.clock_status = (int)m[VMC_STATUS];
		s.leap_indicator = (int)m[VMC_LEAP];
		s.time_maxerror_nanosec = le(m + VMC_MAXERROR, 8);
		__atomic_thread_fence(__ATOMIC_ACQUIRE); /* V2 */
		q2 = __atomic_load_n((const uint32_t *)(m + VMC_SEQ), __ATOMIC_RELAXED);
		if (q1 != q2)
			continue;
		if (v->have_snap && s.disruption_marker != v->marker_seen)
			v->disrupted = 1;
		else if (v->disrupted && v->have_snap && s.clock_status == FC_VMC_SYNCHRONIZED)
			v->disrupted = 0;
		v->marker_seen = s.disruption_marker;
		v->snap = s;
		v->have_snap = 1;
		return 0;
	}
	fc__bound_error(b, now, "%s: no consistent VMClock read in %d tries", v->path, VMC_TRIES);
	return -1;
}

void fc__vmc_apply(const struct fc_vmc *v, struct fc_bound *b)
{
	if (!v->have_snap)
		return;
	if (v->disrupted) {
		b->status = FC_SYNC_DISRUPTED;
		fc__bfmt(b->reason, sizeof(b->reason), "VMClock disruption marker moved to %llu (no good sample since)",
			 (unsigned long long)v->snap.disruption_marker);
	} else if (v->snap.clock_status == FC_VMC_UNRELIABLE && b->status == FC_SYNC_SYNCHRONIZED) {
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason), "VMClock says the host clock is unreliable");
	}
}
