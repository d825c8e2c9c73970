/*
 * fastclock — VMClock (/dev/vmclock0, Linux >= 6.13; the layout of include/uapi/linux/vmclock-abi.h, little
 * endian), two roles:
 *   - an overlay on the other sources: a disruption marker that moves (live migration, snapshot restore)
 *     makes the status DISRUPTED until the source served has a measurement taken after the move was seen
 *     (fc__vmc_settle; as ClockBound waits for chronyd's); an UNRELIABLE host clock turns SYNCHRONIZED into
 *     UNKNOWN. A host that never says SYNCHRONIZED (QEMU publishes UNKNOWN) ends a disruption the same way;
 *   - a time source, when the host publishes the time of the CPU's counter (its "advanced mode": counter_id
 *     is this CPU's counter, time_type UTC or TAI with a valid offset, maximum errors flagged valid, clock
 *     SYNCHRONIZED or FREERUNNING): UTC at a counter value is time + (counter - counter_value) x period,
 *     within time_maxerror + |counter - counter_value| x period_maxerror (fc__vmc_time_at), and the bound of
 *     CLOCK_REALTIME against it comes from one bracketed sample (fc__vmc_bound).
 *
 * The device (a character device root made) is mapped; a regular file at the path (a test's, or anyone's) is
 * read with pread into a local copy at each poll, never mapped: a truncation shortens a read instead of raising
 * SIGBUS.
 *
 * Owns: struct fc_vmc (the mapping or the file, the last snapshot, the disruption state), its driver
 * (fc__vmc_driver, for FASTCLOCK_BOUND_SOURCE=vmclock).
 * May call: async-signal-safe libc only (open, fstat, pread, mmap), bound.c, fmt.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmclock.h"
#include "../units.h"

/* Offsets in struct vmclock_abi. */
#define VMC_MAGIC 0
#define VMC_SIZE 4
#define VMC_VERSION 8
#define VMC_COUNTER_ID 10
#define VMC_TIME_TYPE 11
#define VMC_SEQ 12
#define VMC_MARKER 16
#define VMC_FLAGS 24
#define VMC_STATUS 34
#define VMC_TAI_OFFSET 36
#define VMC_LEAP 38
#define VMC_SHIFT 39
#define VMC_COUNTER_VALUE 40
#define VMC_PERIOD 48
#define VMC_PERIOD_MAXERROR 64
#define VMC_TIME_SEC 72
#define VMC_TIME_FRAC 80
#define VMC_MAXERROR 96
#define VMC_LEN 104 /* the structure's size in version 1 */
#define VMC_TRIES 1000 /* torn reads tolerated per poll (the host holds seq_count odd for microseconds) */
#define VMC_FILE_TRIES 4 /* ...of a file (two preads each): one forever odd costs a few syscalls a poll, no more */

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
	fc__file_close(v->fd, v->fd_id);
	v->fd = -1;
}

int fc__vmc_parse(const uint8_t *m, size_t len, struct fc_vmc_snap *s, char *why, size_t n)
{
	if (len < VMC_LEN)
		return fc__bfmt(why, n, "%zu bytes, a VMClock is at least %d", len, VMC_LEN), -1;
	if (le(m + VMC_MAGIC, 4) != FC_VMCLOCK_MAGIC || le(m + VMC_VERSION, 2) != 1 || le(m + VMC_SIZE, 4) < VMC_LEN)
		return fc__bfmt(why, n, "magic %#llx version %llu size %llu (want %#x, 1, >= %d)",
				(unsigned long long)le(m + VMC_MAGIC, 4), (unsigned long long)le(m + VMC_VERSION, 2),
				(unsigned long long)le(m + VMC_SIZE, 4), FC_VMCLOCK_MAGIC, VMC_LEN),
		       -1;
	s->disruption_marker = le(m + VMC_MARKER, 8);
	s->flags = le(m + VMC_FLAGS, 8);
	s->clock_status = (int)m[VMC_STATUS];
	s->leap_indicator = (int)m[VMC_LEAP];
	s->time_maxerror_nanosec = le(m + VMC_MAXERROR, 8);
	s->counter_id = (int)m[VMC_COUNTER_ID];
	s->time_type = (int)m[VMC_TIME_TYPE];
	s->tai_offset_sec = (int16_t)(uint16_t)le(m + VMC_TAI_OFFSET, 2); /* two's complement */
	s->counter_period_shift = (int)m[VMC_SHIFT];
	s->counter_value = le(m + VMC_COUNTER_VALUE, 8);
	s->counter_period_frac_sec = le(m + VMC_PERIOD, 8);
	s->counter_period_maxerror_rate_frac_sec = le(m + VMC_PERIOD_MAXERROR, 8);
	s->time_sec = le(m + VMC_TIME_SEC, 8);
	s->time_frac_sec = le(m + VMC_TIME_FRAC, 8);
	s->seq = (uint32_t)le(m + VMC_SEQ, 4);
	return 0;
}

/* One consistent copy of the page: 0, 1 (torn, or the host is writing: try again), -1 (a file shorter than a
 * VMClock now: why). */
static int vmc_copy(const struct fc_vmc *v, uint8_t page[VMC_LEN], char *why, size_t n)
{
	if (v->map) {
		/* V1: acquire pairs with the host's barrier after it makes seq_count even: the fields written before
		 * are visible. V2: the acquire fence orders the copy's loads before the second seq_count load. */
		const uint8_t *m = v->map;
		uint32_t q1 = __atomic_load_n((const uint32_t *)(m + VMC_SEQ), __ATOMIC_ACQUIRE), q2; /* V1 */
		if (q1 & 1)
			return 1;
		memcpy(page, m, VMC_LEN); /* between V1 and V2: the compiler cannot move it out */
		__atomic_thread_fence(__ATOMIC_ACQUIRE); /* V2 */
		q2 = __atomic_load_n((const uint32_t *)(m + VMC_SEQ), __ATOMIC_RELAXED);
		memcpy(page + VMC_SEQ, &q1, 4); /* the copy's seq_count is the one it was read under */
		return q1 == q2 ? 0 : 1;
	}
	/* A file: two copies, the second read after the first (F1: the acquire fence orders the first copy's
	 * loads, made by the kernel on this thread, before the second's); identical, with seq_count even, no
	 * write ran between or across them. */
	{
		uint8_t again[VMC_LEN];
		ssize_t r = pread(v->fd, page, VMC_LEN, 0);
		if (r == VMC_LEN) {
			__atomic_thread_fence(__ATOMIC_ACQUIRE); /* F1 */
			r = pread(v->fd, again, VMC_LEN, 0);
		}
		if (r != VMC_LEN)
			return fc__bfmt(why, n, "%.80s is %zd bytes now, a VMClock is %d (truncated?)", v->path, r, VMC_LEN), -1;
		return (le(page + VMC_SEQ, 4) & 1) || memcmp(page, again, VMC_LEN) != 0 ? 1 : 0;
	}
}

int fc__vmc_open(struct fc_vmc *v, const char *path, struct fc_bound *b, int64_t now)
{
	struct stat st;
	uint8_t page[VMC_LEN];
	struct fc_vmc_snap s;
	char why[FC_BOUND_TEXT] = "";
	int fd, r = 1;
	memset(v, 0, sizeof(*v));
	v->fd = -1;
	fc__bfmt(v->path, sizeof(v->path), "%s", path);
	fd = fc__bound_open_file(path, FC_OPEN_CHR | FC_OPEN_REG, &st, b, now);
	if (fd < 0)
		return -1;
	v->owner = (unsigned)st.st_uid;
	if (S_ISCHR(st.st_mode)) {
		/* the device: its page is the hypervisor's, never truncated; mapped (the kernel maps the whole page).
		 * The descriptor is kept to judge its owner and mode again (vmc_still_trusted) */
		void *m = mmap(NULL, VMC_LEN, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED) {
			fc__bound_error(b, now, "mmap %.100s: %s", path, fc__errname(errno));
			close(fd);
			return -1;
		}
		v->map = m;
		v->maplen = VMC_LEN;
		v->fd = fd;
		v->fd_id = (struct fc_fd_id){(uint64_t)st.st_dev, (uint64_t)st.st_ino};
		v->judged_at = now;
	} else if (st.st_size < VMC_LEN) {
		fc__bound_error(b, now, "%.100s: %lld bytes, a VMClock is %d", path, (long long)st.st_size, VMC_LEN);
		close(fd);
		return -1;
	} else {
		v->fd = fd;
		v->fd_id = (struct fc_fd_id){(uint64_t)st.st_dev, (uint64_t)st.st_ino};
	}
	for (int i = 0; i < (v->map ? VMC_TRIES : VMC_FILE_TRIES) && r == 1; i++)
		r = vmc_copy(v, page, why, sizeof(why));
	if (r == 0 && fc__vmc_parse(page, VMC_LEN, &s, why, sizeof(why)) != 0)
		r = -1;
	if (r != 0) {
		fc__bound_error(b, now, "%.100s: %s", path, r > 0 ? "no consistent VMClock read" : why);
		fc__vmc_close(v);
		return -1;
	}
	return 0;
}

/* The open page judged again by the rule it was opened under (fc__bound_judge: an administrator's chmod 0666, chown
 * or setfacl after the open): a file at every read, one fstat of the same descriptor; the device once a second
 * (its page is read-only to every mapping, the driver's mmap refuses write, so its mode says only who may look;
 * judged all the same, without a system call at every read). 1, or 0 with b->last_error. */
static int vmc_still_trusted(struct fc_vmc *v, struct fc_bound *b, int64_t now)
{
	if (v->map && now - v->judged_at < NS_PER_SEC && now >= v->judged_at)
		return 1;
	v->judged_at = now;
	return fc__bound_still_trusted(v->fd, v->owner, v->path, b, now);
}

int fc__vmc_poll(struct fc_vmc *v, struct fc_bound *b, int64_t now)
{
	uint8_t page[VMC_LEN];
	struct fc_vmc_snap s;
	char why[FC_BOUND_TEXT];
	if (!v->map && v->fd < 0)
		return -1;
	/* before the page is used: a page others may have written drives neither the time nor the overlay; the
	 * source is closed (UNKNOWN with the reason from this read on; reopened, and judged, as at start) */
	if (!vmc_still_trusted(v, b, now)) {
		fc__bfmt(v->why, sizeof(v->why), "%s", b->last_error);
		fc__vmc_close(v);
		v->have_snap = 0;
		v->disrupted = 0;
		return -1;
	}
	for (int i = 0; i < (v->map ? VMC_TRIES : VMC_FILE_TRIES); i++) {
		int r = vmc_copy(v, page, why, sizeof(why));
		if (r > 0)
			continue;
		if (r < 0 || fc__vmc_parse(page, VMC_LEN, &s, why, sizeof(why)) != 0) {
			fc__bound_error(b, now, "%s", why);
			return -1;
		}
		if (v->have_snap && s.disruption_marker != v->marker_seen) {
			/* a disruption: it ends once the source served has a measurement taken after now */
			v->disrupted = 1;
			v->disrupted_at = now;
		}
		v->marker_seen = s.disruption_marker;
		v->snap = s;
		v->have_snap = 1;
		return 0;
	}
	fc__bound_error(b, now, "%.100s: no consistent VMClock read in %d tries", v->path,
		       v->map ? VMC_TRIES : VMC_FILE_TRIES);
	return -1;
}

void fc__vmc_settle(struct fc_vmc *v, int64_t measured_at)
{
	if (v->disrupted && measured_at > v->disrupted_at)
		v->disrupted = 0;
}

void fc__vmc_apply(const struct fc_vmc *v, struct fc_bound *b)
{
	if (!v->have_snap)
		return;
	if (v->disrupted) {
		b->status = FC_SYNC_DISRUPTED;
		fc__bfmt(b->reason, sizeof(b->reason), "VMClock disruption marker moved to %llu (no measurement since)",
			 (unsigned long long)v->snap.disruption_marker);
	} else if (v->snap.clock_status == FC_VMC_UNRELIABLE && b->status == FC_SYNC_SYNCHRONIZED) {
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason), "VMClock says the host clock is unreliable");
	}
}

/* ---- the time source -------------------------------------------------------------------------------------- */

/* Counter deltas, times and errors past these are refused, not computed: 2^62 ticks (146 years at 1 GHz),
 * 2^32 s of elapsed time or of its error (136 years), time_sec up to 2^33 s (year 2242), a result within
 * +-MAX_UTC_SEC: every product below then fits its 128-bit type, the time an int64 of ns, and the error
 * (below 2^50 + 2^32 x 10^9 ns < 2^63) too. */
#define MAX_DELTA ((uint64_t)1 << 62)
#define MAX_SPAN_SEC ((uint64_t)1 << 32)
#define MAX_TIME_SEC ((uint64_t)1 << 33)
#define MAX_UTC_SEC (INT64_MAX / NS_PER_SEC - 1) /* 9223372035 s: sec x 10^9 + 10^9 fits an int64 */
#define MAX_ERROR_NS ((uint64_t)1 << 50) /* 13 days: a "maximum error" past this promises nothing */
/* Rates past this (1000x, in ppb) are saturated: a bound growing that fast promises nothing anyway, and the
 * sum of three stays far from INT64_MAX. */
#define MAX_PPB 1000000000000ull
/* The widest CLOCK_REALTIME bracket a sample may have (a sample preempted for longer is refused). */
#define MAX_BRACKET_NS NS_PER_SEC

int fc__vmc_usable(const struct fc_vmc_snap *s, int counter_id, char *why, size_t n)
{
	const uint64_t need = FC_VMC_FLAG_PERIOD_MAXERROR_VALID | FC_VMC_FLAG_TIME_MAXERROR_VALID;
	if (counter_id < 0 || s->counter_id != counter_id)
		return fc__bfmt(why, n, "VMClock counter_id %d is not this CPU's counter (%d)", s->counter_id, counter_id),
		       0;
	if (s->time_type != FC_VMC_TIME_UTC && !(s->time_type == FC_VMC_TIME_TAI && (s->flags & FC_VMC_FLAG_TAI_OFFSET_VALID)))
		return fc__bfmt(why, n, "VMClock time_type %d (flags %#llx): not UTC, nor TAI with a valid offset",
				s->time_type, (unsigned long long)s->flags),
		       0;
	if ((s->flags & need) != need)
		return fc__bfmt(why, n, "VMClock flags %#llx: no valid maximum error for the time and the period",
				(unsigned long long)s->flags),
		       0;
	if (s->clock_status != FC_VMC_SYNCHRONIZED && s->clock_status != FC_VMC_FREERUNNING)
		return fc__bfmt(why, n, "VMClock clock_status %d (neither SYNCHRONIZED nor FREERUNNING)", s->clock_status),
		       0;
	if (s->counter_period_shift > 63 || s->counter_period_frac_sec == 0)
		return fc__bfmt(why, n, "VMClock counter period %llu >> %d: not a period",
				(unsigned long long)s->counter_period_frac_sec, s->counter_period_shift),
		       0;
	if (s->counter_period_maxerror_rate_frac_sec > s->counter_period_frac_sec)
		return fc__bfmt(why, n, "VMClock counter period maximum error %llu above the period %llu",
				(unsigned long long)s->counter_period_maxerror_rate_frac_sec,
				(unsigned long long)s->counter_period_frac_sec),
		       0;
	if (s->time_sec >= MAX_TIME_SEC || s->time_maxerror_nanosec >= MAX_ERROR_NS)
		return fc__bfmt(why, n, "VMClock time_sec %llu, time_maxerror_nanosec %llu: out of range",
				(unsigned long long)s->time_sec, (unsigned long long)s->time_maxerror_nanosec),
		       0;
	return 1;
}

/* |d| x rate >> shift: a span in units of 2^-64 s (rate in 2^-(64 + shift) s per tick). */
static unsigned __int128 span(uint64_t ad, uint64_t rate, int shift)
{
	return ((unsigned __int128)ad * rate) >> shift;
}

/* A span of 2^-64 s units in ns, rounded up. */
static uint64_t span_ns_up(unsigned __int128 e)
{
	uint64_t sec = (uint64_t)(e >> 64), frac = (uint64_t)e;
	unsigned __int128 f = (unsigned __int128)frac * NS_PER_SEC;
	return sec * (uint64_t)NS_PER_SEC + (uint64_t)(f >> 64) + ((uint64_t)f != 0);
}

int fc__vmc_time_at(const struct fc_vmc_snap *s, int counter_id, uint64_t ctr, int64_t *utc_ns, int64_t *err_ns,
		    char *why, size_t n)
{
	uint64_t d = ctr - s->counter_value, ad;
	int neg = d >> 63;
	unsigned __int128 e, ee;
	__int128 t;
	int64_t sec;
	if (!fc__vmc_usable(s, counter_id, why, n))
		return -1;
	ad = neg ? -d : d;
	if (ad >= MAX_DELTA)
		return fc__bfmt(why, n, "counter %llu is %s%llu ticks from VMClock's counter_value %llu",
				(unsigned long long)ctr, neg ? "-" : "", (unsigned long long)ad,
				(unsigned long long)s->counter_value),
		       -1;
	e = span(ad, s->counter_period_frac_sec, s->counter_period_shift);
	ee = span(ad, s->counter_period_maxerror_rate_frac_sec, s->counter_period_shift);
	if ((e >> 64) >= MAX_SPAN_SEC || (ee >> 64) >= MAX_SPAN_SEC)
		return fc__bfmt(why, n, "counter %llu is %llu ticks from VMClock's counter_value: beyond 2^32 s",
				(unsigned long long)ctr, (unsigned long long)ad),
		       -1;
	/* time_sec.time_frac_sec +- e, in 2^-64 s; TAI to UTC by the published offset */
	t = (__int128)((unsigned __int128)s->time_sec << 64 | s->time_frac_sec);
	t = neg ? t - (__int128)e : t + (__int128)e;
	if (s->time_type == FC_VMC_TIME_TAI)
		t -= (__int128)s->tai_offset_sec * ((__int128)1 << 64);
	sec = (int64_t)(t >> 64); /* floor (arithmetic shift) */
	if (sec < -MAX_UTC_SEC || sec > MAX_UTC_SEC)
		return fc__bfmt(why, n, "VMClock time %lld s at counter %llu: out of range", (long long)sec,
				(unsigned long long)ctr),
		       -1;
	/* floor to the ns: the truth lies in [*utc_ns, *utc_ns + 1) */
	*utc_ns = sec * NS_PER_SEC + (int64_t)(((unsigned __int128)(uint64_t)t * NS_PER_SEC) >> 64);
	*err_ns = (int64_t)(s->time_maxerror_nanosec + span_ns_up(ee));
	return 0;
}

/* A rate in ppb, rounded up by one and saturated at MAX_PPB. */
static uint64_t ppb(unsigned __int128 x)
{
	return x >= MAX_PPB ? MAX_PPB : (uint64_t)x + 1;
}

int fc__vmc_unchanged(const struct fc_vmc *v)
{
	/* acquire: the caller's reads before this load (its sample) are not moved after it by the compiler; the
	 * counter read itself is ordered by the caller (select.c vm_time) */
	uint8_t q[4];
	if (!v->have_snap)
		return 0;
	if (v->map)
		return __atomic_load_n((const uint32_t *)(v->map + VMC_SEQ), __ATOMIC_ACQUIRE) == v->snap.seq;
	/* a file (a test's, or anyone's: the device is mapped): its seq_count read again */
	return v->fd >= 0 && pread(v->fd, q, sizeof(q), VMC_SEQ) == (ssize_t)sizeof(q) && le(q, 4) == v->snap.seq;
}

int fc__vmc_bound(struct fc_vmc *v, int counter_id, int64_t mono, int64_t r0, uint64_t ctr, int64_t r1,
		  struct fc_bound *b)
{
	const struct fc_vmc_snap *s = &v->snap;
	int64_t utc, err, mid, center;
	__int128 c128;
	uint64_t rate_ppb, seen_ppb;
	if (!v->have_snap)
		return fc__bfmt(v->why, sizeof(v->why), "no consistent VMClock read yet"), 0;
	if (fc__vmc_time_at(s, counter_id, ctr, &utc, &err, v->why, sizeof(v->why)) != 0)
		return 0;
	/* the time's error plus the period's over the span: up to 2^50 ns + 2^32 s. Past 2^50 ns (13 days) it
	 * promises nothing, and past INT64_MAX / 4 the growth's saturation (fc__bound_half_at) would narrow it
	 * (fuzz_vmclock: seed error_past_the_cap_narrowed, 87 years served as 73) */
	if (err >= (int64_t)MAX_ERROR_NS)
		return fc__bfmt(v->why, sizeof(v->why), "VMClock's maximum error at counter %llu is %lld s: promises nothing",
				(unsigned long long)ctr, (long long)(err / NS_PER_SEC)),
		       0;
	if (r1 < r0)
		return fc__bfmt(v->why, sizeof(v->why), "CLOCK_REALTIME went back %llu ns across the VMClock sample",
				(unsigned long long)((uint64_t)r0 - (uint64_t)r1)),
		       0;
	if ((uint64_t)r1 - (uint64_t)r0 > (uint64_t)MAX_BRACKET_NS)
		return fc__bfmt(v->why, sizeof(v->why), "CLOCK_REALTIME bracket of %llu ns around the VMClock sample",
				(unsigned long long)((uint64_t)r1 - (uint64_t)r0)),
		       0;
	mid = r0 + (int64_t)(((uint64_t)r1 - (uint64_t)r0) / 2);
	c128 = (__int128)utc - mid;
	if (c128 > (__int128)(INT64_MAX / 4) || c128 < -(__int128)(INT64_MAX / 4))
		return fc__bfmt(v->why, sizeof(v->why), "VMClock's time is %lld s from CLOCK_REALTIME",
				(long long)(c128 / NS_PER_SEC)),
		       0;
	center = (int64_t)c128;
	/* the growth of |UTC - CLOCK_REALTIME| after this sample: VMClock's own period error, the rate
	 * CLOCK_REALTIME was seen to run at against VMClock's time (over >= 1 ms; 500 ppm, the kernel's largest
	 * NTP frequency, before a first measurement), and the swing that rate may take before the next sample
	 * (the tracker's contract, src/track.c: 5000 ppm) */
	rate_ppb = ppb(((unsigned __int128)s->counter_period_maxerror_rate_frac_sec * NS_PER_SEC) /
		       s->counter_period_frac_sec);
	seen_ppb = FC_VMC_FIRST_RATE_PPB;
	if (v->rate_at && mono - v->rate_at >= FC_VMC_RATE_BASELINE_NS) {
		int64_t dc = center - v->rate_center; /* both within +-INT64_MAX / 4 */
		seen_ppb = ppb(((unsigned __int128)(uint64_t)(dc < 0 ? -dc : dc) * NS_PER_SEC) /
			       (uint64_t)(mono - v->rate_at));
		v->seen_ppb = seen_ppb;
	} else if (v->rate_at) {
		seen_ppb = v->seen_ppb ? v->seen_ppb : FC_VMC_FIRST_RATE_PPB;
	}
	if (!v->rate_at || mono - v->rate_at >= FC_VMC_RATE_BASELINE_NS)
		v->rate_at = mono, v->rate_center = center;
	b->center_ns = center;
	b->half_ns = err + (r1 - r0 + 1) / 2 + 1; /* + half the bracket, + the ns floor */
	b->as_of_ns = mono;
	b->drift_ppb = (int64_t)(rate_ppb + seen_ppb + FC_VMC_SWING_PPB);
	b->status = s->clock_status == FC_VMC_SYNCHRONIZED ? FC_SYNC_SYNCHRONIZED : FC_SYNC_FREE_RUNNING;
	b->leap = s->leap_indicator == FC_VMC_LEAP_PRE_POS || s->leap_indicator == FC_VMC_LEAP_POS ? FC_LEAP_INSERT
		  : s->leap_indicator == FC_VMC_LEAP_PRE_NEG ? FC_LEAP_DELETE
							      : FC_LEAP_NONE;
	fc__bfmt(b->reason, sizeof(b->reason), "VMClock %s: the host's time of the counter, max error %lld ns",
		 s->clock_status == FC_VMC_SYNCHRONIZED ? "synchronized" : "free running", (long long)err);
	return 1;
}

/* ---- the driver (select.c's table), for FASTCLOCK_BOUND_SOURCE=vmclock -------------------------------------- */

static void drv_init(void *s) { ((struct fc_vmc *)s)->fd = -1; }
static int drv_is_open(const void *s)
{
	const struct fc_vmc *v = s;
	return v->map || v->fd >= 0;
}

/* The page may be open already: it is the overlay's too. */
static int drv_open(void *s, const char *path, struct fc_bound *b, int64_t now)
{
	return drv_is_open(s) ? 0 : fc__vmc_open(s, path, b, now);
}

const struct fc_bound_driver fc__vmc_driver = {
	.name = "vmclock", .init = drv_init, .open = drv_open, .is_open = drv_is_open,
	/* no close: the page stays open for the overlay (fc__bounder_close closes it); no poll: the page is
	 * polled for the overlay, and its time sampled by select.c (vm_time) whatever the source */
};
