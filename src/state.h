/*
 * fastclock — state.c: the clock object (one global; tests make their own over simulated sources), the thread's
 * writer mark, the real source, kernel-clock reads, the coarse store.
 *
 * The clock core, in floors: a file uses only the floors below it (docs/DESIGN.md, "Module map").
 *   1. state.c    the clock object and its globals, kernel-clock reads, the coarse store (this header)
 *   2. windup.c   the writer: sample -> track -> next hand -> publish; the switch to a kernel hand (windup.h)
 *   3. start.c    start-up: kernel hand -> trust check -> rate -> first counter hand, each step taken by the
 *                 callers that find the clock starting; the writer only publishes the first hand (start.h)
 *      init.c     lazy initialisation of the global clock and the process's fork handler (init.h)
 *   4. read.c (read.h), convert.c, dropin.c, status.c, truetime.c, updater.c: public entry points
 * Floor 1. Owns: struct fc_clock (its parts struct fc_start and struct fc_keeper are start.c's and updater.c's
 * to write), fc__in_writer, fc__lock_mine, fc__real_source, the coarse store.
 * May call: floor 0: sample.c, ntp.c.
 */
#ifndef FASTCLOCK_STATE_H
#define FASTCLOCK_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "fastclock.h"
#include "hands.h"
#include "ntp.h"
#include "sample.h"
#include "track.h"
#include "vdso.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A hand's sync_status while no bound has been asked for (the global clock before its first bounded read, fc_init or
 * fc_status), unless the tracker's verdict is DISRUPTED: the inline bounded readers take the slow path
 * (src/bounded.c), which installs the bound. */
#define FC_SYNC_UNASKED (-1)

struct fc_clock;

/* The UTC bound's one seam (FreeBSD's ntp_update_second): the writer knows a hand carries a bound and a status, not
 * where they come from. src/bounded.c installs it (c->bound) on the first bounded read; until then the global
 * clock's hands say FC_SYNC_UNASKED, and a clock with no bound_lazy (the simulations' and tests') stamps the
 * kernel's NTP state (windup.c). Every op runs under the writer lock. */
struct fc_bound_ops {
	/* p's bound fields (utc_err_ns over [now, now + life_ns], utc_corr_ns, sync_status): poll: from a poll of the
	 * source (the chores; the source opened on its first use), else from its last poll */
	void (*stamp)(struct fc_clock *c, struct fc_hand *p, int64_t now, int64_t life_ns, int poll);
	/* p's bound fields from the source's last poll, without polling (p->real_ns set): 1, or 0 when there is none
	 * yet (nothing stamped) */
	int (*cached)(struct fc_clock *c, struct fc_hand *p, int64_t now, int64_t life_ns);
	/* A bounded read's bound on the kernel backend or of an unasked hand: 1 with p's bound fields stamped when this
	 * is the process's first and it reads nothing (auto mode), else 0 (stamp with a poll) */
	int (*first)(struct fc_clock *c, struct fc_hand *p);
	/* In a fork child (init.c's handler): the sources are the parent's */
	void (*forked)(struct fc_clock *c);
};

/* Start-up without a wait (start.c, its only writer and reader: others ask fc__start_done, start.h): the first
 * hand is a kernel hand; the slow path then checks the counter's trust and measures its rate against the kernel
 * over START_BASELINE, and publishes the first counter hand. */
enum { FC_START_DONE = 0, FC_START_TRUST = 1, FC_START_RATE = 2 };
struct fc_start {
	int phase;   /* FC_START_* (atomic; release stores: what a phase promises is written before it) */
	int64_t due; /* the kernel CLOCK_MONOTONIC time at which the next step is due (atomic) */
	struct fc_sample rate_first; /* the rate measurement's first sample */
	/* the trust step's sample, written once before phase becomes RATE (release): converts captures taken
	 * before the first counter hand */
	struct fc_sample anchor;
	unsigned retries;
	/* Early captures: before the trust step, fc_ticks returns kernel CLOCK_MONOTONIC ns, told from the counter
	 * ticks captured after it by their value. early_defer: 1 when this clock does so; early_from: the kernel's
	 * CLOCK_MONOTONIC at start (every early capture is >= it); early_c: the counter read before phase left TRUST
	 * (every later counter capture is >= it; published by that store); early_end (atomic, 0 until read):
	 * CLOCK_MONOTONIC read after that store (every early capture is <= it); early_void (atomic): the counter was
	 * found below early_c (it went back), so values no longer tell. */
	int early_defer;
	int early_void;
	int64_t early_from;
	int64_t early_end;
	uint64_t early_c;
};

/* The keeper's own state (updater.c), on the page the first call writes anyway, not in .bss (a first coarse
 * read's page faults); the fields others touch say who. */
struct fc_keeper {
	int running, no_auto, starting, checked; /* updater.c's u_running, u_no_auto, u_starting, u_checked */
	int64_t first_coarse;
	int64_t first_reanchor; /* CLOCK_MONOTONIC of the first reader's re-anchor (read.c); 0: none */
	int coarse_wanted;      /* a coarse read found no value kept: the keeper keeps them, and never parks */
	/* The keeper's probe: while probing, the writer publishes probe hands (FC_HAND_PROBE, windup.c), and a read
	 * of one sets probe_seen (read.c; relaxed atomics, slow path only) */
	int probing, probe_seen;
	int parked; /* the keeper is parked (relaxed, for tests) */
	int step_notifier;
	uint64_t step_notifications;
};

struct fc_clock {
	struct fc_pub *pub;
	struct fc_hands hands;
	struct fc_source src;
	/* the vDSO's clock_gettime, which the real source calls (vdso.c; NULL: libc's), found by the start-up's trust
	 * step (start.c; atomic: readers load it) */
	fc_kernel_gettime_fn kernel_gettime;
	struct fc_track track;
	int lock;        /* writer try-lock: 0 free, 1 held */
	int init_state;  /* init.c's g_state (atomic): on the page the first call writes anyway */
	int hands_static; /* the hands are still as FC__HANDS_STATIC left them: fc__start_clock skips fc__hands_init */
	int backend;     /* enum fc_backend */
	int64_t period_ns;
	/* FC_PERIOD_*: the default period, which follows use (config.h), or fixed (atomic: readers load it) */
	int period_auto;
	uint64_t counter_hz_initial;
	int freq_source;
	int forced;      /* FASTCLOCK_SOURCE forced a backend */
	unsigned trust_every; /* re-check the clocksource every this many re-anchors (0: never, in tests) */
	unsigned since_trust;
	int64_t trust_at; /* CLOCK_MONOTONIC_COARSE at the last re-check (windup.c; 0: none yet) */
	char reason[160];
	char clocksource[32];
	char config_error[160];
	/* The UTC bound (the seam above; atomic: readers load it, src/bounded.c stores it once), NULL until installed;
	 * bound_lazy: NULL means "not asked yet" (FC_SYNC_UNASKED hands), not "the kernel's NTP state" */
	const struct fc_bound_ops *bound;
	int bound_lazy;
	/* The kernel backend's bound vs UTC (half-width, centre, status) at the last refresh, for readers that find
	 * the writer lock taken (read.c; relaxed atomics), and the CLOCK_MONOTONIC until which it holds (release
	 * after them; 0: none yet): past it a reader gets no promise. */
	int64_t kernel_utc_err_ns, kernel_utc_corr_ns;
	int32_t kernel_sync_status;
	int64_t kernel_bound_until;
	/* The chores (windup.c: the clocksource re-check, the NTP state, the bound source's poll): CLOCK_MONOTONIC when
	 * they were last done (atomic: the keeper reads it), and how old they may get before a reader's re-anchor does
	 * them itself (0: at every re-anchor). */
	int64_t chores_at;
	int64_t chores_max_age_ns;
	struct fc_ntp ntp;   /* last NTP state read */
	int64_t ntp_at;      /* kernel CLOCK_MONOTONIC when it was read */
	int have_ntp;
	/* counters (relaxed atomics; slow path only) */
	uint64_t reanchors, slow_paths, waits, trust_checks;
	/* The start-up's state (start.c's alone; struct fc_start above). */
	struct fc_start start;
	/* The kernel's rate against the counter over a long baseline (>= LONG_RATE_MIN_NS between two samples;
	 * windup.c), 32.32 ns per tick, 0 until known; published for conversions of captures in no hand's window,
	 * which a hand's steering slope (up to 1/16 off at short periods) or the tracker's 8-period rate (0.5 %
	 * noise at a 1 us period) would carry over the capture's whole age. long_s: the baseline's first sample. */
	uint64_t rate_long;
	struct fc_sample long_s;
	int have_long_s;
	/* Published by the updater thread (a client of the clock), read by status and the drop-ins. */
	int updater_auto;     /* the first coarse read may start the updater (FASTCLOCK_UPDATER) */
	int updater_rt;       /* the updater may ask for SCHED_FIFO (FASTCLOCK_UPDATER_RT) */
	int updater_running;
	/* The keeper's own state (updater.c; struct fc_keeper above), and what the writer and readers share with it. */
	struct fc_keeper keeper;
	/* The coarse clocks' value kept by a keeper without real-time priority ("checked": updater.c), 0 otherwise:
	 * fc__pub.coarse_mono then stays 0, so every coarse read comes to fc__coarse_init, which returns the larger
	 * of this and the kernel's coarse clock (atomic; only grows, as coarse_mono) */
	int64_t coarse_kept;
};

/* The library's own clock and the thread's writer mark: non-zero while this thread holds (or is taking) the
 * writer lock, so a signal handler that reads the clock on the same thread never waits on it. */
extern struct fc_clock fc__clock_global; /* not exported (hidden, as every fc__ name outside the API) */
static inline struct fc_clock *fc__global_clock(void) { return &fc__clock_global; }
/* The library's thread-local variables: initial-exec, so a first call reads them at a fixed offset from the thread
 * pointer instead of calling __tls_get_addr (a lazy binding of its own, ~700 instructions and cold ld.so data on
 * the process's first call). The library is loaded with the program (or dlopen'd into glibc's surplus static TLS:
 * its 16 bytes fit). */
#define FC_TLS __thread __attribute__((tls_model("initial-exec")))
extern FC_TLS int fc__in_writer;
/* This thread holds the writer lock (set after the compare-and-swap, cleared before the release): the fork handler
 * (init.c) frees a lock only another thread held, and leaves this thread's own, and its writer mark, to the writer a
 * signal handler's fork() interrupted (it goes on in the child and unlocks). */
extern FC_TLS int fc__lock_mine;

/* The real counter and kernel clocks as an fc_source. */
extern const struct fc_source fc__real_source;

/* clock_gettime(id) through the clock's source, retried (a failed read would otherwise return 0). */
int64_t fc__kernel_ns(const struct fc_clock *c, clockid_t id);

/* Raise a coarse location (fc__pub.coarse_mono, or the clock's coarse_kept) to mono, and the wall offset to
 * real_off: it only ever grows (a compare-and-swap maximum), so coarse reads, which are plain loads of one
 * location, never go back within a thread whoever stores. A raise leaves 0 ("not maintained") alone;
 * fc__coarse_first, the keeper's first store, leaves 0. */
void fc__coarse_raise(struct fc_pub *pub, int64_t *loc, int64_t mono, int64_t real_off);
void fc__coarse_first(struct fc_pub *pub, int64_t *loc, int64_t mono, int64_t real_off);
/* A value for the coarse clocks now, never waiting, never above a later precise read (state.c). */
void fc__state_coarse_sample(const struct fc_clock *c, int64_t *mono, int64_t *real_off);

/* The kernel's coarse clock (CLOCK_MONOTONIC_COARSE, or CLOCK_REALTIME_COARSE for how & FC__REAL: its clock at
 * its last tick, never ahead of its own precise clock read after it); INT64_MIN if it cannot be read. */
int64_t fc__kernel_coarse(int how);

/* Bounded string copy (always terminated). */
void fc__copy_str(char *dst, size_t n, const char *src);

static inline void fc__cpu_relax(void)
{
#if defined(__x86_64__)
	__asm__ __volatile__("pause");
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_STATE_H */
