/*
 * fastclock — ClockBound's shared-memory segment as a bound source (clockbound.c): the segment's layout
 * (protocol v2), the source's state and its driver.
 *
 * Owns: struct fc_cb_segment, struct fc_cb, fc__cb_open/close/poll/parse/eval/as_of, fc__cb_driver.
 * May call: bound.c, fmt.c.
 */
#ifndef FASTCLOCK_BOUND_CLOCKBOUND_H
#define FASTCLOCK_BOUND_CLOCKBOUND_H

#include "bound.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FC_CLOCKBOUND_PATH "/var/run/clockbound/shm0"
/* The segment, protocol v2 (clock-bound-shm 2.x): a 16-byte header then a 64-byte body, native endian. */
#define FC_CB_MAGIC0 0x414D5A4Eu
#define FC_CB_MAGIC1 0x43420200u
#define FC_CB_VERSION 2
#define FC_CB_SIZE 80
enum fc_cb_status { FC_CB_UNKNOWN = 0, FC_CB_SYNCHRONIZED = 1, FC_CB_FREE_RUNNING = 2, FC_CB_DISRUPTED = 3 };
struct fc_cb_segment {
	uint32_t magic[2];
	uint32_t segsize;
	uint16_t version;
	uint16_t generation; /* seqlock: odd while the writer writes, 0 never written */
	int64_t as_of_sec, as_of_nsec;           /* CLOCK_MONOTONIC_COARSE */
	int64_t void_after_sec, void_after_nsec; /* CLOCK_MONOTONIC_COARSE */
	int64_t bound_nsec;
	uint64_t disruption_marker;
	uint32_t max_drift_ppb;
	int32_t clock_status; /* enum fc_cb_status */
	uint8_t disruption_support;
	uint8_t pad[7];
};
#ifdef __cplusplus
static_assert(sizeof(struct fc_cb_segment) == FC_CB_SIZE, "ClockBound v2 segment is 80 bytes");
#else
_Static_assert(sizeof(struct fc_cb_segment) == FC_CB_SIZE, "ClockBound v2 segment is 80 bytes");
#endif

struct fc_cb {
	char path[256];
	int fd; /* the segment, open read-only and read with pread (never mapped: a truncation would be SIGBUS); -1 */
	int64_t read_at; /* CLOCK_MONOTONIC_COARSE of the last read (one per tick at most) */
	struct fc_cb_segment snap; /* last consistent copy */
	uint16_t snap_gen;
	int have_snap;
	uint64_t marker_seen;    /* disruption marker of the previous snapshot */
	int marker_known;
	int64_t disrupted_as_of; /* as_of (ns) of the snapshot that showed a marker bump: DISRUPTED until a newer
				  * one; INT64_MIN: none */
	int64_t checked_at;      /* CLOCK_MONOTONIC_COARSE when a stale segment's path was last checked for a new
				  * file (a restarted daemon's) */
	unsigned owner;          /* its owner at open (uid): owner and mode judged again at every read */
	int64_t mono_off;        /* this process's CLOCK_MONOTONIC minus the host's (its time namespace's offset, read
				  * at open): the segment's times are the host's */
	struct fc_fd_id fd_id;   /* fd's file: closed only while fd is still it (fc__file_close) */
};
/* Open `path` read-only (fc__bound_open_file: a regular file root or its directory's owner wrote), validating
 * the header as ClockBound's client does, and read this process's time namespace offset (cb->mono_off). Returns 0,
 * or -1 with b->last_error set (the path and what was wrong: its kind, owner and mode, its size, magic or version,
 * an offset that cannot be read). */
int fc__cb_open(struct fc_cb *cb, const char *path, struct fc_bound *b, int64_t now);
void fc__cb_close(struct fc_cb *cb);
/* Take a consistent snapshot (a pread, at most once per value of mono_coarse) and compute the bound at
 * mono_coarse (CLOCK_MONOTONIC_COARSE now) exactly as ClockBound's client (status rules, drift growth); center
 * 0. A file that shrank is closed (cb->fd -1, b->last_error says so) and UNKNOWN.
 * vm_marker: VMClock's disruption marker when
 * the segment says disruption support is on and a VMClock is readable, else NULL. Returns b->status. */
int fc__cb_poll(struct fc_cb *cb, int64_t mono_coarse, const uint64_t *vm_marker, struct fc_bound *b);
/* The header checks alone, on len bytes (pure; fuzzed): 0 with *out, or -1 with why (the size, magic, segsize
 * or version named). */
int fc__cb_parse(const void *buf, size_t len, struct fc_cb_segment *out, char *why, size_t n);
/* The last snapshot's as_of on this process's CLOCK_MONOTONIC_COARSE (the host's moved by its time namespace's
 * offset, ns), or INT64_MIN: none, or out of range. */
int64_t fc__cb_as_of(const struct fc_cb *cb);
/* The CLOCK_MONOTONIC offset in /proc/self/timens_offsets's text (len bytes, not a string): 0 with *off (ns), or
 * -1 with why (malformed, no monotonic line, or an offset past 2^29 s). Pure; fuzzed. */
int fc__cb_parse_timens(const char *buf, size_t len, int64_t *off, char *why, size_t n);
/* The rules alone, on a snapshot (pure; tests, the fuzzer and fc__cb_poll): times out of range, a drift or a
 * bound past sane are UNKNOWN with half_ns INT64_MAX / 4. */
int fc__cb_eval(const struct fc_cb_segment *s, int64_t mono_coarse, struct fc_bound *b);

/* The driver (select.c's table): state struct fc_cb, the path FASTCLOCK_CLOCKBOUND_PATH; poll is fc__cb_poll at
 * t->mono_coarse with t->vm_marker; silent once the segment's daemon stopped updating it for the client's grace
 * (never written, or as_of older than 5 s; no snapshot yet is not silence); measured at the snapshot's as_of. */
extern const struct fc_bound_driver fc__cb_driver;

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_BOUND_CLOCKBOUND_H */
