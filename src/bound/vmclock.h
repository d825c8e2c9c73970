/*
 * fastclock — VMClock as a bound source and as the overlay on the others (vmclock.c): the fields of Linux's
 * struct vmclock_abi, the source's state and its driver.
 *
 * Owns: struct fc_vmc_snap, struct fc_vmc, fc__vmc_*, fc__vmc_driver.
 * May call: bound.c, fmt.c.
 */
#ifndef FASTCLOCK_BOUND_VMCLOCK_H
#define FASTCLOCK_BOUND_VMCLOCK_H

#include "bound.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FC_VMCLOCK_PATH "/dev/vmclock0"
#define FC_VMCLOCK_MAGIC 0x4b4c4356u /* "VCLK" */
enum fc_vmc_status {
	FC_VMC_UNKNOWN = 0,
	FC_VMC_INITIALIZING = 1,
	FC_VMC_SYNCHRONIZED = 2,
	FC_VMC_FREERUNNING = 3,
	FC_VMC_UNRELIABLE = 4
};
/* Constants of Linux's include/uapi/linux/vmclock-abi.h. */
#define FC_VMC_COUNTER_ARM_VCNT 0
#define FC_VMC_COUNTER_X86_TSC 1
#define FC_VMC_TIME_UTC 0
#define FC_VMC_TIME_TAI 1
#define FC_VMC_FLAG_TAI_OFFSET_VALID (1u << 0)
#define FC_VMC_FLAG_PERIOD_MAXERROR_VALID (1u << 4)
#define FC_VMC_FLAG_TIME_MAXERROR_VALID (1u << 6)
#define FC_VMC_LEAP_PRE_POS 1 /* a positive leap second at the end of the month */
#define FC_VMC_LEAP_PRE_NEG 2
#define FC_VMC_LEAP_POS 3     /* during 23:59:60 */
/* This CPU's counter in VMClock's numbering (-1: none it can describe). */
#if defined(__x86_64__)
#define FC_VMC_OUR_COUNTER FC_VMC_COUNTER_X86_TSC
#elif defined(__aarch64__)
#define FC_VMC_OUR_COUNTER FC_VMC_COUNTER_ARM_VCNT
#else
#define FC_VMC_OUR_COUNTER (-1)
#endif
/* The time source's growth terms (fc__vmc_bound): the rate of CLOCK_REALTIME against VMClock's time before
 * a first measurement (500 ppm: the kernel's largest NTP frequency, MAXFREQ), the shortest baseline that
 * measures it (1 ms, as the tracker's rate), and the swing it may take before the next sample (5000 ppm: the
 * tracker's contract, src/track.c KERNEL_SWING_DIV). */
#define FC_VMC_FIRST_RATE_PPB 500000u
#define FC_VMC_RATE_BASELINE_NS 1000000LL
#define FC_VMC_SWING_PPB 5000000u
/* The fields of Linux's struct vmclock_abi that we use, little endian. */
struct fc_vmc_snap {
	uint64_t disruption_marker;
	uint64_t flags;
	int clock_status;
	int leap_indicator;
	uint64_t time_maxerror_nanosec;
	int counter_id, time_type, tai_offset_sec, counter_period_shift;
	uint64_t counter_value, counter_period_frac_sec, counter_period_maxerror_rate_frac_sec;
	uint64_t time_sec, time_frac_sec; /* time_frac_sec: units of 2^-64 s */
	uint32_t seq;                     /* the seq_count it was read under */
};
struct fc_vmc {
	char path[256];
	const uint8_t *map; /* the device's page, mapped read-only (read under seq_count only); or NULL */
	size_t maplen;
	int fd;             /* a regular file at the path: read with pread at each poll (never mapped); the device
			     * (mapped) kept open to judge it again; or -1 */
	unsigned owner;     /* its owner at open (uid): owner and mode judged again (a file at every read) */
	int64_t judged_at;  /* CLOCK_MONOTONIC of the device's last judgement (once a second) */
	struct fc_fd_id fd_id; /* its file: closed only while fd is still it (fc__file_close) */
	struct fc_vmc_snap snap;
	int have_snap;
	uint64_t marker_seen;
	int disrupted;        /* the marker moved and the source served has no measurement taken since */
	int64_t disrupted_at; /* CLOCK_MONOTONIC of the poll that saw it move */
	/* the time source */
	char why[FC_BOUND_TEXT]; /* why the last snapshot gave no time ("" when it did) */
	int64_t rate_at, rate_center; /* baseline of the CLOCK_REALTIME-vs-VMClock rate: mono, centre (0: none) */
	uint64_t seen_ppb;            /* that rate, last measured */
};
/* Open the path (fc__bound_open_file: a character device root made that sysfs says is the vmclock driver's, never
 * opened otherwise, mapped; or a regular file its owner and mode vouch for, at least a VMClock long, read with
 * pread) and check one snapshot. 0, or -1 with b->last_error. */
int fc__vmc_open(struct fc_vmc *v, const char *path, struct fc_bound *b, int64_t now);
void fc__vmc_close(struct fc_vmc *v);
/* The page's fields from len bytes (pure; fuzzed): 0, or -1 with why (size, magic, version named). */
int fc__vmc_parse(const uint8_t *page, size_t len, struct fc_vmc_snap *s, char *why, size_t n);
/* Snapshot under its seq_count; returns 0 (v->snap updated; a moved marker sets v->disrupted, disrupted_at =
 * now), or -1 (torn for every try, malformed or shrunk: b->last_error). */
int fc__vmc_poll(struct fc_vmc *v, struct fc_bound *b, int64_t now);
/* End a disruption once the bound served rests on a measurement taken after it was seen: measured_at is that
 * measurement's CLOCK_MONOTONIC (INT64_MIN: none known). */
void fc__vmc_settle(struct fc_vmc *v, int64_t measured_at);
/* Has the host left the page as it was at the last snapshot (same seq_count)? A sample taken after the
 * snapshot is valid for it only if so: a live migration between the two rewrites the line for another
 * host's counter. */
int fc__vmc_unchanged(const struct fc_vmc *v);
/* Does the snapshot give the time of `counter_id` (FC_VMC_OUR_COUNTER)? 1, or 0 with why (naming the field
 * and its value). Pure. */
int fc__vmc_usable(const struct fc_vmc_snap *s, int counter_id, char *why, size_t n);
/* UTC at counter value ctr, floored to the ns, and VMClock's maximum error there, rounded up: 0, or -1 with
 * why (the snapshot gives no time, or ctr is too far from counter_value to compute). Pure. */
int fc__vmc_time_at(const struct fc_vmc_snap *s, int counter_id, uint64_t ctr, int64_t *utc_ns, int64_t *err_ns,
		    char *why, size_t n);
/* The time source: the bound of CLOCK_REALTIME against VMClock's time, from one sample r0 <= ctr <= r1
 * (CLOCK_REALTIME before, the counter, CLOCK_REALTIME after) taken at CLOCK_MONOTONIC mono. Returns 1 with *b
 * set (centre, half-width, growth, status, leap), or 0 with v->why. Pure but for the rate baseline in *v. */
int fc__vmc_bound(struct fc_vmc *v, int counter_id, int64_t mono, int64_t r0, uint64_t ctr, int64_t r1,
		  struct fc_bound *b);
/* Apply the overlay to the bound served: DISRUPTED while v->disrupted, UNKNOWN while VMClock says its clock is
 * unreliable. */
void fc__vmc_apply(const struct fc_vmc *v, struct fc_bound *b);

/* The driver (select.c's table) for FASTCLOCK_BOUND_SOURCE=vmclock: state struct fc_vmc (the overlay's: open
 * opens it if it is not, close leaves it to the overlay's owner), the path FASTCLOCK_VMCLOCK_PATH. Its poll does
 * nothing: the page is polled for the overlay, and VMClock's time is sampled by select.c (vm_time) whatever the
 * source. */
extern const struct fc_bound_driver fc__vmc_driver;

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_BOUND_VMCLOCK_H */
