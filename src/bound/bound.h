/*
 * fastclock — bound sources: where the UTC part of fc_real_bounded comes from.
 *
 * A source is polled by the writer (windup.c, under the writer lock, at most once a second for anything that
 * costs a syscall; chronyd's rounds when it measures, else once a second), never by a reader. Each poll yields
 * one struct fc_bound: "true UTC lies within half_ns + drift_ppb * (mono - as_of_ns) / 1e9 of CLOCK_REALTIME +
 * center_ns". The writer folds it into
 * each hand (utc_err_ns, utc_corr_ns, sync_status); readers only add.
 *
 * Sources (one file each, all pure over injected paths, sockets and clock values so tests drive them):
 *   clockbound.c  ClockBound's shared-memory segment (protocol v2), read exactly as ClockBound's client;
 *   chrony.c      chronyd's tracking report over its command socket (unix, or its UDP port on the loopback),
 *                 connected, asked without ever blocking;
 *   vmclock.c     /dev/vmclock0 (Linux vmclock-abi.h): its disruption marker and status, an overlay on the
 *                 others; and, when the host publishes the time of the CPU's counter, the first source;
 *   kernel.c      adjtimex maxerror, trusted only when the kernel's state shows a daemon's bound (kernel.c);
 *   select.c      FASTCLOCK_BOUND_SOURCE=auto|vmclock|clockbound|chrony|kernel|none and the path overrides;
 *   bound.c       the shared helpers (half-width at a time, the last error); fmt.c async-signal-safe formatting.
 * The sources may call libc's async-signal-safe functions, ntp.c (select.c: fc__ntp_read) and each other only
 * downwards (select.c -> the sources -> bound.c -> fmt.c). Nothing of the clock core.
 */
#ifndef FASTCLOCK_BOUND_H
#define FASTCLOCK_BOUND_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "../ntp.h"
#include "fastclock.h"
#include "slew.h"

#ifdef __cplusplus
extern "C" {
#endif

enum fc_bound_kind {
	FC_BOUND_NONE = 0,
	FC_BOUND_CLOCKBOUND = 1,
	FC_BOUND_CHRONY = 2,
	FC_BOUND_KERNEL = 3,
	FC_BOUND_VMCLOCK = 4,
};

enum fc_leap { FC_LEAP_NONE = 0, FC_LEAP_INSERT = 1, FC_LEAP_DELETE = 2 };

#define FC_BOUND_TEXT 120

/* One poll's answer. */
struct fc_bound {
	int64_t center_ns;  /* true UTC ~ CLOCK_REALTIME + center_ns (chrony's current correction; else 0) */
	int64_t half_ns;    /* half-width at as_of_ns; INT64_MAX/4 when nothing is promised */
	int64_t as_of_ns;   /* CLOCK_MONOTONIC at which half_ns held */
	int64_t drift_ppb;  /* growth of half_ns per second after as_of_ns, ns/s = ppb */
	int status;         /* enum fc_sync */
	int leap;           /* enum fc_leap: a leap second is announced for the end of this UTC day */
	char reason[FC_BOUND_TEXT];     /* why this status (human readable) */
	char last_error[FC_BOUND_TEXT]; /* "" or the last failure of this source, naming the value or path */
	int64_t last_error_at;          /* CLOCK_MONOTONIC of last_error (0: none) */
};

/* Async-signal-safe formatting (fmt.c): a printf subset (%s %.Ns %.*s %d %u %o %x %#x, l/ll/z, %.Nf, %%), and a
 * readable name for an errno value (strerror reads the locale). */
int fc__bfmt(char *dst, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int fc__bvfmt(char *dst, size_t n, const char *fmt, va_list ap);
const char *fc__errname(int e);

/* half-width at mono (>= as_of), saturating: never wraps for an absurd age or rate. */
int64_t fc__bound_half_at(const struct fc_bound *b, int64_t mono);

/* Record an error: formats last_error and stamps it with `now`. */
void fc__bound_error(struct fc_bound *b, int64_t now, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Open a source's file read-only, never blocking (O_NONBLOCK: a FIFO opens at once), never through a symbolic
 * link as the last component (O_NOFOLLOW), and keep it only if it is of a kind in `kinds` and its owner and mode
 * say who wrote it: a regular file owned by root or by its directory's owner, writable by no other user (group
 * write only for group root); a character device owned by root. Returns the fd (st filled), or -1 with
 * b->last_error naming the path, the kind, owner and mode. */
#define FC_OPEN_REG 1
#define FC_OPEN_CHR 2
struct stat;
int fc__bound_open_file(const char *path, int kinds, struct stat *st, struct fc_bound *b, int64_t now);
/* The open file's owner and mode still say who wrote it (an administrator may chmod it after the open): 1, or
 * 0 with b->last_error naming them. owner: its owner (uid) at open. */
int fc__bound_still_trusted(int fd, unsigned owner, const char *path, struct fc_bound *b, int64_t now);
void fc__bound_writers_error(const struct stat *st, const char *path, struct fc_bound *b, int64_t now,
			     const char *else_who);
/* Could no one but root and the owner of the directory open at dfd have put the socket `base` there (chronyd's
 * socket, `path` for messages)? The directory writable by no one else (group write only for group root), its
 * owner, unless root or this process's user, one no other user could have made theirs (as for a source file),
 * and the entry a socket (not a link: connect() would follow it anywhere) owned by root or that owner. 0, or -1
 * with b->last_error ("... not trusted"). */
int fc__bound_socket_trusted(int dfd, const char *base, const char *path, struct fc_bound *b, int64_t now);

/* ---- clockbound.c ---------------------------------------------------------------------------------------- */
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
	unsigned owner;          /* its owner at open (uid): owner and mode re-checked at each new snapshot */
};
/* Open `path` read-only (fc__bound_open_file: a regular file root or its directory's owner wrote), validating
 * the header as ClockBound's client does. Returns 0, or -1 with b->last_error set (the path and what was wrong:
 * its kind, owner and mode, its size, magic or version). */
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
/* The last snapshot's as_of (CLOCK_MONOTONIC_COARSE ns), or INT64_MIN: none, or out of range. */
int64_t fc__cb_as_of(const struct fc_cb *cb);
/* The rules alone, on a snapshot (pure; tests, the fuzzer and fc__cb_poll): times out of range, a drift or a
 * bound past sane are UNKNOWN with half_ns INT64_MAX / 4. */
int fc__cb_eval(const struct fc_cb_segment *s, int64_t mono_coarse, struct fc_bound *b);

/* ---- chrony.c -------------------------------------------------------------------------------------------- */
#define FC_CHRONY_SOCK "/var/run/chrony/chronyd.sock"
/* chronyd's max clock error (maxclockerror, its default 1 ppm): the growth of its dispersion between updates,
 * which chrony adds to root_dispersion in each report; used for our growth between polls. */
#define FC_CHRONY_DRIFT_PPB 1000
/* A reply not here this long after the request counts as lost (chronyc waits 1 s before a retry). */
#define FC_CHRONY_TIMEOUT_NS 1000000000LL
/* chronyd's rounds (chrony.c, due): every caller's interval (select.c: 100 ms) from shortly before chronyd's next
 * measurement is due until it is seen (its phase learnt from when chronyd's data last changed, its period from
 * the followed source's poll), every eighth of it within one round's uncertainty of that instant; otherwise one
 * every FC_CHRONY_CAP_NS, less a random quarter (so that processes do not ask in step). The cap: what chronyd
 * does outside its measurements (a reselection onto another source's phase, a chronyc makestep or settime, a
 * restart) is seen within 1 s, and the report, trusted for 5 s (select.c), stays fresh through three lost
 * rounds. */
#define FC_CHRONY_CAP_NS 1000000000LL
/* chronyd's tracking report, decoded (candm.h RPY_Tracking). */
struct fc_chrony_tracking {
	uint32_t ref_id;
	int stratum, leap_status; /* leap_status: 0 normal, 1 insert, 2 delete, 3 unsynchronised */
	int64_t ref_time_sec;
	uint32_t ref_time_nsec; /* with ref_time_sec: the time of chronyd's last clock update (changes at each) */
	double correction; /* s; > 0: the system clock is slow of NTP time (true time = clock + correction) */
	double last_offset, rms_offset, freq_ppm, resid_freq_ppm, skew_ppm;
	double root_delay, root_dispersion, last_update_interval; /* s */
};
/* chronyd's source data for one source (candm.h RPY_Source_Data): its state and newest measurement. */
struct fc_chrony_source {
	int state, reachability; /* state: FC_CHRONY_SELECTED is the source chronyd synchronises to */
	uint32_t since_sample; /* s */
	double latest_meas;     /* s; the local clock's offset from the source (> 0: local ahead) */
	double latest_meas_err; /* s */
	int index;              /* its index in chronyd's list of sources */
	uint8_t addr[20];       /* candm's IPAddr as sent: what identifies the source across rounds */
};
/* candm.h RPY_SD_ST_SELECTED (chrony >= 4.0; RPY_SD_ST_SYNC, also 0, before). */
#define FC_CHRONY_SELECTED 0
/* Source-data requests in one round (indices first, first + 1, ... round the list). A round's datagrams are
 * sent back to back and answered into our socket before we read it: with the tracking and count requests they
 * must fit a unix datagram queue, whose Linux default length is 10 (net.unix.max_dgram_qlen), with room for
 * another client of chronyd's (chronyc, ClockBound's daemon). chronyd's sources are usually few (a `pool`
 * adds 4 by default); past this many, each round without the selected source looks at the next ones. */
#define FC_CHRONY_MAX_SOURCES 6
/* Datagrams read per poll at most (a round's replies are 2 + FC_CHRONY_MAX_SOURCES): a flood never holds the
 * writer. */
#define FC_CHRONY_RECV_MAX 32
/* What a report may hold (chrony.c refused): times within +-2^20 s (12 days; sums of a few stay far inside an
 * int64 of ns; chronyd's own limits, maxdistance and makestep, are seconds) and rates within 1e6 ppm (the
 * saturation of the growth before). Past them a report is refused: UNKNOWN naming the field. */
#define FC_CHRONY_MAX_SEC 1048576.0
#define FC_CHRONY_MAX_PPM 1e6
/* chronyd's command port (its cmdport default), asked on 127.0.0.1 then ::1 by a process that may not use its
 * unix socket. */
#define FC_CHRONY_CMDPORT 323
enum fc_chrony_via { FC_CHRONY_VIA_UNIX = 0, FC_CHRONY_VIA_UDP4 = 1, FC_CHRONY_VIA_UDP6 = 2 };
/* Rounds before the current one whose late replies are still recognised (and dropped without an error). */
#define FC_CHRONY_PAST 4
struct fc_chrony {
	char path[108];  /* chronyd's unix socket */
	char local[108]; /* unix: our socket, <directory of path>/fastclock.<pid>.<random>/sock */
	int fd;          /* connected to chronyd's socket or command port */
	int dirfd;       /* unix: our socket's directory, flock()ed while we live (-1: none) */
	uint64_t dir_dev, dir_ino; /* its identity: nothing is removed through a descriptor that is no longer it */
	int owner;  /* pid that made `local`: only it removes it (a fork child closes its copies of the fds only) */
	int via;    /* enum fc_chrony_via */
	int denied; /* the unix socket is closed to this process (EACCES, EPERM; 2: not trusted): the command port is asked */
	char via_name[32]; /* "unix socket", "udp 127.0.0.1:323", "udp [::1]:323" */
	uint64_t rng;      /* rand32's fallback state */
	uint32_t seq;      /* the round's first sequence number (random) */
	uint32_t rounds;   /* rounds sent */
	uint32_t past[FC_CHRONY_PAST]; /* the previous rounds' first sequence numbers */
	int64_t sent_at;    /* CLOCK_MONOTONIC of the outstanding request (0: none) */
	int64_t last_sent;  /* of the last request sent or tried */
	int64_t last_reply; /* of the last good reply (0: none) */
	int64_t tracking_at; /* send time of the request the last tracking report answered */
	struct fc_chrony_tracking last;
	struct fc_chrony_source src; /* the selected source's newest data (have_src), from the last full round */
	int have_src;
	int src_index;       /* the index of the source followed (-1: none): asked first in each round */
	uint32_t n_sources;  /* chronyd's count of sources, last reported (0: none yet) */
	uint32_t first;      /* the round's first source index */
	/* the outstanding round: tracking (seq), the source count (seq + 1), source data (seq + 2 + i) */
	int got;             /* 1 tracking, 2 the count */
	int want_src, got_src; /* source-data requests sent, replies taken */
	uint32_t src_got;    /* bit i: the reply to source-data request i taken (a repeat is dropped) */
	uint32_t req_index[FC_CHRONY_MAX_SOURCES]; /* the index each source-data request asked for */
	struct fc_chrony_source round_src; /* the best source of the round so far (round_rank > 0) */
	int round_rank;      /* 2 selected, 1 the one selected last, 0 none */
	/* chronyd's slew followed (slew.c): the kernel read right before this round's tracking request was sent
	 * (round_k_ok), and the one before the request the tracking report held answered, with the REALTIME at
	 * which that reply arrived (slew_ok: both read) */
	struct fc_slew_kernel round_k, slew_k;
	int round_k_ok, slew_ok;
	int64_t slew_reply_rt;
	/* the schedule (chrony.c, due): when chronyd's data last changed it was between the send time of the last
	 * round that carried the old data (seen_sent) and the end of the round that showed the new; the next
	 * measurement is expected in [window_lo, window_hi] (0: not known), where rounds go every fine_ns */
	int64_t seen_sent, window_lo, window_hi;
	int64_t core_lo, core_hi; /* where it is expected within one round's uncertainty: rounds every fine_ns / 8 */
	int64_t fine_ns; /* the caller's interval (fc__chrony_poll's min_interval) */
	int64_t cap_ns;  /* the interval to the next round outside the window: FC_CHRONY_CAP_NS less up to a quarter */
	int round_changed; /* this round's tracking shows a clock update since the last report */
	int round_poll, poll; /* the source's poll (log2 s: chronyd's interval between its measurements): the best
			       * of this round so far's, the followed source's */
};
/* The kernel's state as slew.c wants it (adjtimex modes 0 between CLOCK_MONOTONIC reads, CLOCK_REALTIME right
 * after it): 0, or -1. Replaced by tests (a kernel that slews, or one with the PLL on); NULL: the real one. */
extern int (*fc__chrony_kernel_read)(struct fc_slew_kernel *k);
/* Build a tracking request (its padded length, as chronyd requires) into buf; returns its length. Pure. */
size_t fc__chrony_request(uint32_t seq, uint8_t *buf, size_t len);
/* Decode a reply to request seq: 0, or -1 with a reason in err (naming the bad field and value). Pure. */
int fc__chrony_decode(const uint8_t *buf, size_t len, uint32_t seq, struct fc_chrony_tracking *t, char *err,
		     size_t errlen);
size_t fc__chrony_request_source(uint32_t seq, uint32_t index, uint8_t *buf, size_t len); /* source data */
size_t fc__chrony_request_count(uint32_t seq, uint8_t *buf, size_t len);                 /* the source count */
int fc__chrony_decode_source(const uint8_t *buf, size_t len, uint32_t seq, struct fc_chrony_source *sd, char *err,
			    size_t errlen);
int fc__chrony_decode_count(const uint8_t *buf, size_t len, uint32_t seq, uint32_t *n, char *err, size_t errlen);
/* A decoded report (and the newest measurement, or NULL) to a bound as of `at` (the request's send time: the
 * report is at least that fresh). */
int fc__chrony_eval(const struct fc_chrony_tracking *t, const struct fc_chrony_source *sd, int64_t at,
		   struct fc_bound *b);
/* The report (last tracking, the source followed) evaluated as of `at`, its reason naming the transport. */
void fc__chrony_report(const struct fc_chrony *ch, int64_t at, struct fc_bound *b);
/* Open a nonblocking datagram socket connected to chronyd: its unix socket at `path` (ours bound in a directory
 * of our own beside it: chronyd replies only to a path), or, where this process may not use that socket, its
 * command port on the loopback. Returns 0, or -1 with b->last_error set. */
int fc__chrony_open(struct fc_chrony *ch, const char *path, struct fc_bound *b, int64_t now);
/* Is chronyd there to be asked: its socket at path, or a directory of it closed to us (then its port)? */
int fc__chrony_present(const char *path);
void fc__chrony_close(struct fc_chrony *ch);
/* Never blocks: collects the replies waiting (updating *b), then sends a new round of requests if none is out
 * and one is due (FC_CHRONY_CAP_NS; never sooner than min_interval after the last): tracking, the source count,
 * and the data of each source, of which the one chronyd selected (or, while none is, the one it selected last)
 * joins the interval. A request unanswered after FC_CHRONY_TIMEOUT_NS is an error; the previous bound stays
 * (growing) until void. Returns 1 if *b was updated from a new reply, else 0. */
int fc__chrony_poll(struct fc_chrony *ch, int64_t now, int64_t min_interval, struct fc_bound *b);

/* ---- vmclock.c ------------------------------------------------------------------------------------------- */
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
	int fd;             /* a regular file at the path: read with pread at each poll (never mapped); or -1 */
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
/* Open the path (fc__bound_open_file: a character device root made, mapped; or a regular file its owner and mode
 * vouch for, at least a VMClock long, read with pread) and check one snapshot. 0, or -1 with b->last_error. */
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

/* ---- kernel.c -------------------------------------------------------------------------------------------- */
/* The kernel's NTP state to a bound, from the state alone (pure; the rules in kernel.c and docs/THREATS.md):
 * SYNCHRONIZED only for 0 < esterror <= maxerror < 16 s with STA_UNSYNC and STA_CLOCKERR clear. */
int fc__kernel_eval(const struct fc_ntp *n, int64_t now, struct fc_bound *b);

/* ---- select.c -------------------------------------------------------------------------------------------- */
struct fc_bound_config {
	int mode; /* -1: auto, else enum fc_bound_kind (FC_BOUND_VMCLOCK: VMClock's time only) */
	char clockbound[256], chrony[108], vmclock[256];
};
/* Parse FASTCLOCK_BOUND_SOURCE and the path overrides FASTCLOCK_CLOCKBOUND_PATH, FASTCLOCK_CHRONY_SOCKET,
 * FASTCLOCK_VMCLOCK_PATH (each may be NULL: the default). Returns the number of errors, described in err. */
int fc__bound_config_parse(const char *mode, const char *cb_path, const char *chrony_path, const char *vm_path,
			  struct fc_bound_config *out, char *err, size_t errlen);

struct fc_bounder {
	struct fc_bound_config cfg;
	int kind;             /* enum fc_bound_kind in use */
	char why[FC_BOUND_TEXT]; /* why this source */
	struct fc_cb cb;
	struct fc_chrony ch;
	struct fc_vmc vm;
	int have_vm;
	int64_t kernel_at;      /* when adjtimex was last read */
	int64_t kernel_max;     /* the maxerror it showed (ns; -1: none yet) */
	int64_t kernel_wrote;   /* CLOCK_MONOTONIC before which the last write seen (maxerror went down) happened
				 * after: the read before it (INT64_MIN: none seen) */
	int64_t chosen_at;      /* when the source was chosen (auto re-tries the better ones every 10 s) */
	struct fc_bound cur;    /* the current bound */
	/* Auto mode on a ClockBound segment that vouches for nothing better than FREE_RUNNING (its daemon died,
	 * or never wrote it): chronyd's socket is probed beside it, and replaces it once chronyd's report is
	 * better (select.c fall_back). */
	struct fc_chrony probe;
	struct fc_bound probe_b;  /* the probe's own report */
	int probing;              /* probe is open */
	int64_t probe_at;         /* when the probe was last opened or tried */
	/* the kernel's NTP state: injected (tests), else fc__ntp_read */
	int (*ntp)(void *ctx, struct fc_ntp *out);
	void *ntp_ctx;
	/* VMClock as the time source (auto and FASTCLOCK_BOUND_SOURCE=vmclock): used while its snapshot gives
	 * the time of the counter; auto mode goes on polling the source chosen above, and serves it otherwise */
	int use_vm;             /* the last poll served vm_b */
	struct fc_bound vm_b;   /* its bound */
	int vm_counter;         /* VMClock's number for the counter read below (FC_VMC_OUR_COUNTER) */
	/* the sample's reads: injected (tests), else the hardware counter and clock_gettime(CLOCK_REALTIME) */
	uint64_t (*counter)(void *ctx);
	int64_t (*realtime)(void *ctx);
	void *clk_ctx;
};
/* Choose a source per cfg (auto: chronyd if it can be asked, else a ClockBound segment that opens, else the
 * kernel; beside a VMClock the segment before chronyd; a VMClock that gives the time of the counter before them
 * all, while it does: select.c prefer_chrony). now: CLOCK_MONOTONIC. */
void fc__bounder_init(struct fc_bounder *bd, const struct fc_bound_config *cfg, int64_t now);
void fc__bounder_close(struct fc_bounder *bd);
/* Poll the source if due (ClockBound: every call, a memory read; chrony: a round every 100 ms around chronyd's
 * next measurement, else once a second, replies collected without blocking; kernel: adjtimex once a second).
 * mono: CLOCK_MONOTONIC, mono_coarse: CLOCK_MONOTONIC_COARSE (ClockBound's time base). Returns &bd->cur. */
const struct fc_bound *fc__bounder_poll(struct fc_bounder *bd, int64_t mono, int64_t mono_coarse);
const char *fc__bound_kind_name(int kind);
/* What the last poll served: the bound, the source's name and why it is the one. */
const struct fc_bound *fc__bounder_current(const struct fc_bounder *bd);
const char *fc__bounder_name(const struct fc_bounder *bd);
const char *fc__bounder_why(const struct fc_bounder *bd);

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_BOUND_H */
