/*
 * fastclock — chronyd as a bound source (chrony.c): its command protocol (candm.h) decoded, the source's state
 * (the connected socket, the outstanding round, the last report) and its driver.
 *
 * Owns: struct fc_chrony_tracking, struct fc_chrony_source, struct fc_chrony, fc__chrony_*, fc__chrony_driver.
 * May call: bound.c, fmt.c, slew.c.
 */
#ifndef FASTCLOCK_BOUND_CHRONY_H
#define FASTCLOCK_BOUND_CHRONY_H

#include "bound.h"
#include "slew.h"
#include "../units.h"

#ifdef __cplusplus
extern "C" {
#endif

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
 * restart) is seen within 1 s, and the report, trusted for 5 s (FC_CHRONY_GRACE_NS), stays fresh through three
 * lost rounds. */
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
	struct fc_fd_id fd_id; /* its socket: closed only while fd is still it (fc__file_close) */
	int dirfd;       /* unix: our socket's directory, flock()ed while we live (-1: none) */
	uint64_t dir_dev, dir_ino; /* its identity: nothing is removed through a descriptor that is no longer it */
	int owner;  /* pid that made `local`: only it removes it (a fork child closes its copies of the fds only) */
	int via;    /* enum fc_chrony_via */
	int denied; /* the unix socket is closed to this process (EACCES, EPERM; 2: not trusted): the command port is asked */
	int64_t port_checked; /* udp: when ip_unprivileged_port_start last showed the port privileged (chrony.c) */
	long chronyd_uid;     /* udp: chronyd's user, who besides root may hold the port (chrony.c, cmdport_held); -1 none */
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

/* chronyd's report ages like ClockBound's segment (the driver's poll): trusted for 5 s, then FREE_RUNNING,
 * UNKNOWN after 1000 s (ClockBound's grace period and void_after). Silent: no reply for the grace. */
#define FC_CHRONY_GRACE_NS (5 * NS_PER_SEC)
#define FC_CHRONY_VOID_NS (1000 * NS_PER_SEC)
/* The driver (select.c's table): state struct fc_chrony, the path FASTCLOCK_CHRONY_SOCKET; open is
 * fc__chrony_present then fc__chrony_open; poll is fc__chrony_poll (a round at most every t->every_ns), the
 * report aged as above; measured at the selected source's newest sample; via its transport's name. */
extern const struct fc_bound_driver fc__chrony_driver;

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_BOUND_CHRONY_H */
