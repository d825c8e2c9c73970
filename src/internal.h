/*
 * fastclock — internal interfaces between the library's modules.
 *
 * The seam that makes the algorithm testable: track.c, hands.c and sample.c never touch the hardware or
 * the kernel themselves; they take a struct fc_source (an injected counter and reference clock). clock.c
 * builds the real source from the counter hooks and clock_gettime; tests/sim builds simulated ones.
 */
#ifndef FASTCLOCK_INTERNAL_H
#define FASTCLOCK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "fastclock.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- ntp.c: the kernel's NTP state ------------------------------------------------------------------ */
struct fc_ntp {
	int sync;            /* enum fc_sync (never DISRUPTED: that is the tracker's verdict) */
	int status;          /* STA_* bits */
	int64_t maxerror_ns; /* kernel's bound on its error vs UTC */
	int64_t esterror_ns;
	long tick_us; /* adjtimex tick: us per USER_HZ tick (FC_NTP_TICK_NOMINAL_US untouched); 0: unknown */
	int64_t offset_ns; /* |the kernel PLL's offset still to slew| (fc__ntp_offset_ns); 0 from classify */
};
/* USER_HZ is 100 on x86-64 and arm64 (the architectures with a counter backend): the kernel's nominal tick is
 * 1000000 / USER_HZ us, and ADJ_TICK moves it by 100 ppm a unit within +-10 % (adjtimex(2)). */
#define FC_NTP_TICK_NOMINAL_US 10000L
/* Classify an adjtimex() result (rc: its return value or -1). Pure. Returns out->sync. */
int fc__ntp_classify(int rc, int status, long maxerror_us, long esterror_us, struct fc_ntp *out);
int fc__ntp_read(void *ctx, struct fc_ntp *out); /* adjtimex(modes = 0), classified */
/* adjtimex's offset (the correction the kernel PLL has still to slew in: ns with STA_NANO, else us) as |ns|,
 * at most 16 s. Pure. */
int64_t fc__ntp_offset_ns(long offset, int status);

/* ---- str.c: async-signal-safe string building (no malloc, no stdio, no locale) --------------------- */
/* Append the NULL-terminated list of strings to dst (size n, always terminated, truncated if needed).
 * Everything reachable from a read (initialisation and the trust re-check included) builds its messages
 * with this instead of snprintf, which may allocate. The list ends with a (const char *)0. Returns dst. */
char *fc__str_cat(char *dst, size_t n, ...);

/* ---- config.c: environment parsing (pure) ------------------------------------------------------------- */
/* Default re-anchor period: 1 ms keeps the error from an NTP slew (500 ppm max) under 0.5 us and costs
 * ~0.5 us of sampling per ms (0.05 %) on one thread. */
#define FC_DEFAULT_PERIOD_NS 1000000LL
#define FC_MIN_PERIOD_NS 1000LL
#define FC_MAX_PERIOD_NS 1000000000LL
struct fc_config {
	int backend;       /* 0: auto; FC_BACKEND_* forced */
	int64_t period_ns;
};
/* Parse FASTCLOCK_SOURCE / FASTCLOCK_PERIOD_US values (either may be NULL). Returns the number of errors;
 * each is described in err (naming the bad value) and replaced by the default. */
int fc__config_parse(const char *source, const char *period_us, struct fc_config *out, char *err, size_t errlen);
/* FASTCLOCK_UPDATER=auto|off (NULL: auto): *autostart 1 or 0. Returns 1 (and appends to err) if bad. */
int fc__config_parse_updater(const char *v, int *autostart, char *err, size_t errlen);

/* ---- injected counter and reference clock ---------------------------------------------------------- */
struct fc_source {
	uint64_t (*counter)(void *ctx);                       /* ordered counter read */
	int (*kernel)(void *ctx, clockid_t id, int64_t *ns);  /* reference clock; 0 or -1 */
	int (*ntp)(void *ctx, struct fc_ntp *out);            /* NTP state; NULL: unknown */
	void *ctx;
	uint64_t mask; /* counter width mask (~0 for a 64-bit counter) */
};

/* ---- sample.c: bracketed counter-kernel-counter sampling -------------------------------------------- */
struct fc_sample {
	uint64_t c_mid;  /* counter at the middle of the tightest counter bracket around a CLOCK_MONOTONIC read */
	uint64_t c_half; /* half that bracket's width, ticks */
	int64_t mono;    /* the CLOCK_MONOTONIC value read inside it */
	int64_t off_lo;  /* CLOCK_REALTIME - CLOCK_MONOTONIC lies in [off_lo, off_hi] */
	int64_t off_hi;
	/* CLOCK_BOOTTIME - CLOCK_MONOTONIC lies in [boot_lo, boot_hi] (lo > hi: not read). It grows only by the
	 * time spent suspended (CLOCK_MONOTONIC stops then, CLOCK_BOOTTIME does not): the tracker tells a suspend
	 * from a counter jump with it. */
	int64_t boot_lo;
	int64_t boot_hi;
};

/* Tries per sample. The best of 4 brackets is within a few ns of the narrowest possible on an idle core and
 * survives up to 3 preempted tries; each try costs one counter pair plus one vDSO call (~40 ns here). */
#define FC_SAMPLE_TRIES 4
int fc__sample_take(const struct fc_source *src, int tries, struct fc_sample *out);

/* The wall offset CLOCK_REALTIME - CLOCK_MONOTONIC: a realtime read between two monotonic reads m1 <= m2 puts
 * it in [lo, hi] = [r - m2, r - m1]; the narrowest of `brackets` such brackets is kept, with its m1. Each
 * kernel read is tried up to `tries` times (fc__kernel_ns: FC_KERNEL_TRIES). Returns -1, at the end of the
 * bracket, if a read still failed (out then holds the narrowest bracket so far, built from the values the
 * failed reads left: 0 for the first bracket, as fc__kernel_ns returns). The readers that add the offset use
 * its middle, fc__offset_mid. */
struct fc_offset {
	int64_t lo, hi, m1;
};
/* clock_gettime(CLOCK_MONOTONIC / CLOCK_REALTIME) cannot fail on Linux with a valid pointer; a seccomp
 * filter on the syscall fallback could make one call fail now and then. Retry: a read that returned 0
 * would be raised to a floor below values already returned (found by fuzz_track). */
#define FC_KERNEL_TRIES 8
int fc__sample_offset(const struct fc_source *src, int brackets, int tries, struct fc_offset *out);
static inline int64_t fc__offset_mid(const struct fc_offset *o) { return o->hi - (o->hi - o->lo) / 2; }

/* ---- track.c: samples in, next hand's parameters out (pure) --------------------------------------- */
#define FC_TRACK_HIST 8 /* samples kept for the rate estimate: a baseline of 8 periods, at least 1 ms */

struct fc_track {
	/* configuration */
	uint64_t mask;
	uint64_t period_ticks; /* re-anchor period P in ticks: hands go stale after P */
	uint64_t valid_ticks;  /* and expire after P + P/8 */
	/* state */
	uint64_t mult_est; /* kernel ns per counter tick, 32.32 */
	uint64_t mult_hint; /* the rate known at start-up (0: none): adopted rates stay within 1/8 of it */
	struct fc_sample hist[FC_TRACK_HIST];
	unsigned nhist;     /* valid entries, newest at hist[nhist - 1] */
	int rate_suspect;   /* the previous sample broke continuity: a second break in a row means a new rate */
	unsigned since_break; /* samples in the history since it last restarted (a break): DISRUPTED until
			       * FC_TRACK_HIST (the history may hold fewer: a narrow counter's baseline is capped) */
	uint64_t break_dev; /* rate deviation (32.32 ns/tick) implied by the last break, if it looked like a rate
			     * change; counts in the bound until the rate is confirmed */
	uint64_t adopt_dev; /* size of the last rate change adopted from two breaks (32.32 ns/tick): counts in the
			     * bound until a continuous sample confirms the new rate, whatever breaks come between */
	uint64_t cand_mult;  /* rate of the last pair of samples taken after a break (0: none), and its noise: a */
	uint64_t cand_noise; /* next such pair that agrees confirms it, whatever its distance from mult_est */
	uint64_t est_noise; /* noise (32.32 ns/tick) of the samples mult_est was last computed from: counts in the
			     * bound while the history is too short to measure it (0: the hint) */
	int have_off;
	int64_t off_lo, off_hi; /* intersection of every wall-offset interval since the last step */
	/* results of the last update, and counters */
	int64_t last_err_ns;     /* old hand minus kernel at the anchor (ns), before correction */
	int64_t max_abs_err_ns;
	uint64_t discontinuities;
	uint64_t real_steps;
	uint64_t swing_mult; /* the kernel_swing() part of the last hand's err_mult (32.32 ns/tick) */
	int disrupted; /* a discontinuity (or start-up on a hint) and not re-converged since: hands not SYNCHRONIZED */
	/* the kernel's NTP tick (fc__track_note_ntp): 0 unknown, 1 nominal, 2 moved (sticky: a daemon that moves
	 * the tick, chronyd, may move it again by thousands of ppm at once) */
	int tick_state;
	long tick_us;         /* the last tick read (us), 0: unknown */
	uint64_t best_half;   /* the narrowest sample half-bracket seen (ticks; UINT64_MAX: none yet) */
	int have_boot;
	int64_t boot_hi;      /* the last sample's CLOCK_BOOTTIME - CLOCK_MONOTONIC upper bound */
	int hold;             /* a suspend left the hands ahead of the kernel: slopes down to 0 until re-converged */
	uint64_t suspends;
};

void fc__track_init(struct fc_track *t, uint64_t mask, uint64_t period_ticks, uint64_t mult_hint);
void fc__track_set_period(struct fc_track *t, uint64_t period_ticks);
/* The hint given to fc__track_init was measured between samples a and b (not a CPUID or kernel figure): its
 * noise is known, so the first hand may be SYNCHRONIZED. */
void fc__track_hint_measured(struct fc_track *t, const struct fc_sample *a, const struct fc_sample *b);
/* The kernel's NTP state read at this re-anchor (adjtimex, modes 0): its tick decides the allowance for an unseen
 * kernel rate change (2000 ppm of nominal while the tick has only been seen nominal, 5000 ppm otherwise). */
void fc__track_note_ntp(struct fc_track *t, const struct fc_ntp *ntp);
/* Compute the hand that follows `old` (NULL or a kernel hand at start-up), anchored at counter value
 * t_anchor, from sample s. Fills every parameter field of *out (not gen/next). Pure: no I/O, no globals. */
void fc__track_update(struct fc_track *t, const struct fc_hand *old, const struct fc_sample *s,
		     uint64_t t_anchor, struct fc_hand *out);
/* The sync status of hand h (just made by fc__track_update) given the kernel's NTP state: DISRUPTED while the
 * tracker is (a discontinuity, or a rate resting on an unmeasured hint) or a pending leap second falls inside
 * the hand's window; otherwise ntp->sync. Pure. */
int fc__track_sync(const struct fc_track *t, const struct fc_hand *h, const struct fc_ntp *ntp);

/* The value of a hand at counter t, in 32.32 fixed point (exactly what readers compute, before the shift),
 * with deltas clamped to the hand's validity window [0, valid_ticks]. Shared by track.c and clock.c. */
__int128 fc__hand_value_fx(const struct fc_hand *h, uint64_t t);

/* ---- hands.c: the writer side of the publication protocol ----------------------------------------- */
struct fc_hands {
	struct fc_hand ring[FC_HANDS];
	struct fc_hand boot; /* kernel hand current before the first publish */
};
/* Link the ring, make `boot` a kernel hand and current; generations start at gen_start (tests start them
 * next to the wrap point). */
void fc__hands_init(struct fc_hands *h, struct fc_pub *pub, uint32_t gen_start);
/* The writer's interleaving points (FC__WRITER_POINT in hands.c; empty in the library, tests/interleave
 * pauses the writer there). */
#define FC__WP_AFTER_W1 1 /* gen zeroed, no field written */
#define FC__WP_MID_W2 2   /* half the fields written (flags .. frac; not mono_ns onwards) */
#define FC__WP_AFTER_W2 3 /* every field written, gen still 0 */
#define FC__WP_AFTER_W3 4 /* new gen published, the hand not current yet */
/* Publish params as the next hand. The caller holds the writer lock. Returns the published hand. */
struct fc_hand *fc__hands_publish(struct fc_pub *pub, const struct fc_hand *params);
/* Sets h's real_ns, mono_sec/mono_subsec and real_sec/real_subsec from its mono_ns, real_off_ns and frac
 * (floor division, whole ns in [0, 10^9) above frac); fc__hands_publish does it for every hand it publishes
 * (tests that build hands field by field call it). */
void fc__hand_anchors(struct fc_hand *h);

/* ---- trust.c ------------------------------------------------------------------------------------------ */
/* 1 if the counter may be used (the kernel's clocksource uses it and the CPU says it is invariant), else 0;
 * `why` gets a sentence either way, `cs` the clocksource name. */
int fc__trust_check(char *why, size_t whylen, char *cs, size_t cslen);
/* Where fc__trust_check reads the clocksource: the kernel's file, or a test's (FASTCLOCK_TEST_CLOCKSOURCE_FILE,
 * read once by the initialisation and passed here; NULL or "": the kernel's). */
void fc__trust_set_path(const char *path);

/* ---- counter/freq.c: frequency hints ------------------------------------------------------------------ */
/* Returns the counter frequency in Hz (0 if unknown) and sets *src to an enum fc_freq_source. */
uint64_t fc__counter_freq_hint(int *src);

/* =====================================================================================================
 * The clock core, in floors: a file uses only the floors below it (docs/DESIGN.md, "Module map").
 *   1. state.c    the clock object and its globals, kernel-clock reads, the coarse store
 *   2. windup.c   the writer: sample -> track -> next hand -> publish; the switch to a kernel hand
 *   3. start.c    start-up: kernel hand -> trust check -> rate -> first counter hand (start.h)
 *      init.c     lazy initialisation of the global clock and the process's fork handler
 *   4. read.c (slow path, kernel backend), convert.c, dropin.c, status.c, updater.c: public entry points
 * ===================================================================================================== */

struct fc_bounder; /* src/bound/bound.h */

/* ---- state.c: the clock object (one global; tests make their own over simulated sources) ----------- */
struct fc_clock {
	struct fc_pub *pub;
	struct fc_hands hands;
	struct fc_source src;
	struct fc_track track;
	int lock;        /* writer try-lock: 0 free, 1 held */
	int backend;     /* enum fc_backend */
	int64_t period_ns;
	uint64_t counter_hz_initial;
	int freq_source;
	int forced;      /* FASTCLOCK_SOURCE forced a backend */
	unsigned trust_every; /* re-check the clocksource every this many re-anchors (0: never, in tests) */
	unsigned since_trust;
	char reason[160];
	char clocksource[32];
	char config_error[160];
	struct fc_bounder *bounder; /* the UTC bound's source (src/bound); NULL: the kernel's NTP state via src.ntp */
	int bounder_reopen;  /* (re-)open the source on the writer's next bound: at start, and in a fork child */
	struct { /* the bound source's environment, read at start-up (init.c), parsed by the writer (windup.c) */
		const char *source;          /* FASTCLOCK_BOUND_SOURCE */
		const char *clockbound_path; /* FASTCLOCK_CLOCKBOUND_PATH */
		const char *chrony_socket;   /* FASTCLOCK_CHRONY_SOCKET */
		const char *vmclock_path;    /* FASTCLOCK_VMCLOCK_PATH */
	} bound_env;
	/* The kernel backend's bound vs UTC (half-width, centre, status) at the last refresh, for readers that find
	 * the writer lock taken (read.c; relaxed atomics). */
	int64_t kernel_utc_err_ns, kernel_utc_corr_ns;
	int32_t kernel_sync_status;
	struct fc_ntp ntp;   /* last NTP state read */
	int64_t ntp_at;      /* kernel CLOCK_MONOTONIC when it was read */
	int have_ntp;
	/* counters (relaxed atomics; slow path only) */
	uint64_t reanchors, slow_paths, waits, trust_checks;
	/* Start-up without a wait (windup.c): the first hand is a kernel hand; the slow path then checks the
	 * counter's trust and measures its rate against the kernel over START_BASELINE, and publishes the first
	 * counter hand. start_phase (atomic) is FC_START_*; start_due (atomic) the kernel CLOCK_MONOTONIC time
	 * at which the next step is due; start_rate_first the rate measurement's first sample. */
	int start_phase;
	int64_t start_due;
	void (*start_step)(struct fc_clock *c); /* start.c's state machine, called by the writer while starting */
	struct fc_sample start_rate_first;
	struct fc_sample start_anchor; /* the trust step's sample, written once before start_phase becomes RATE
					* (release): converts captures taken before the first counter hand */
	unsigned start_retries;
	/* The kernel's rate against the counter over a long baseline (>= LONG_RATE_MIN_NS between two samples;
	 * windup.c), 32.32 ns per tick, 0 until known; published for conversions of captures in no hand's window,
	 * which a hand's steering slope (up to 1/16 off at short periods) or the tracker's 8-period rate (0.5 %
	 * noise at a 1 us period) would carry over the capture's whole age. long_s: the baseline's first sample. */
	uint64_t rate_long;
	struct fc_sample long_s;
	int have_long_s;
	/* Published by the updater thread (a client of the clock), read by status and the drop-ins. */
	int updater_auto;     /* the first coarse read may start the updater (FASTCLOCK_UPDATER) */
	int updater_running;
	int step_notifier;
	uint64_t step_notifications;
};
enum { FC_START_DONE = 0, FC_START_TRUST = 1, FC_START_RATE = 2 };

/* The library's own clock and the thread's writer mark: non-zero while this thread holds (or is taking) the
 * writer lock, so a signal handler that reads the clock on the same thread never waits on it. */
struct fc_clock *fc__global_clock(void);
extern __thread int fc__in_writer;

/* The real counter and kernel clocks as an fc_source. */
extern const struct fc_source fc__real_source;

/* clock_gettime(id) through the clock's source, retried (a failed read would otherwise return 0). */
int64_t fc__kernel_ns(const struct fc_clock *c, clockid_t id);

/* Raise the coarse clocks to (mono, real_off): coarse_mono only ever grows (a compare-and-swap maximum), so
 * coarse reads, which are plain loads of one location, never go back within a thread whoever stores. A
 * raise leaves 0 ("not maintained") alone; fc__coarse_first, the keeper's first store, leaves 0. */
void fc__coarse_raise(struct fc_pub *pub, int64_t mono, int64_t real_off);
void fc__coarse_first(struct fc_pub *pub, int64_t mono, int64_t real_off);
/* A value for the coarse clocks now, never waiting, never above a later precise read (state.c). */
void fc__coarse_sample(const struct fc_clock *c, int64_t *mono, int64_t *real_off);

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

/* ---- windup.c: the writer ------------------------------------------------------------------------------ */
/* (Start-up, above the writer: start.h.) The start-up's last step: the first counter hand, from the rate hz
 * measured between samples s0 and s (caller holds the lock). */
void fc__clock_first_hand_locked(struct fc_clock *c, const struct fc_sample *s0, const struct fc_sample *s,
				 uint64_t hz);
/* Build a clock over `src` (pure: no environment, no trust check) with the counter backend, first hand
 * anchored now. Used by tests. */
int fc__clock_setup(struct fc_clock *c, struct fc_pub *pub, const struct fc_source *src, int64_t period_ns,
		   uint64_t counter_hz, uint32_t gen_start);
/* Re-anchor now if the current hand is still `seen` (NULL: unconditionally). Takes the lock; returns 1 if
 * a hand was published, 0 if another writer held the lock or already replaced `seen`. */
int fc__clock_windup(struct fc_clock *c, const struct fc_hand *seen);
/* Switch to the kernel backend (trust lost) or back, without a backward step. Caller holds the lock. */
void fc__clock_set_kernel_locked(struct fc_clock *c, const char *why);
/* The writer lock, the only way to take it: the try-lock (returns 1 if taken; never waits) and, for callers
 * that must wait for it (status, period changes), the lock. Both mark the thread as the writer (fc__in_writer)
 * before they take it and until fc__clock_unlock, so a signal handler on this thread reading the clock never
 * waits on its own thread: it serves from the current hand or the kernel. */
int fc__clock_trylock(struct fc_clock *c);
void fc__clock_lock(struct fc_clock *c);
void fc__clock_unlock(struct fc_clock *c);
/* Re-anchor period (caller holds the lock). */
void fc__clock_set_period_locked(struct fc_clock *c, int64_t period_ns);
/* (ntp.c) Refresh the clock's cached NTP state if it is a second old (caller holds the writer lock). */
void fc__clock_refresh_ntp_locked(struct fc_clock *c, int64_t now);
/* Stamp p's bound fields (ntp_err_ns over [now, now + life_ns], utc_corr_ns, sync_status) from the bound source
 * (or the kernel's NTP state when the clock has none). Caller holds the lock. */
void fc__clock_bound_fields_locked(struct fc_clock *c, struct fc_hand *p, int64_t now, int64_t life_ns);

/* ---- init.c: lazy initialisation of the global clock ------------------------------------------------- */
/* Initialise the global clock if needed. Returns 1 when it is ready, 0 in a signal handler that interrupted
 * its own thread's initialisation: the caller then serves the kernel's clock directly. */
int fc__ensure_init(void);

/* ---- read.c: the slow path and the kernel backend -------------------------------------------------- */
/* The slow path: everything the inline readers do not. how = FC__MONO/FC__REAL | FC__RELAXED. */
int64_t fc__clock_slow(struct fc_clock *c, int how);
/* The same, also filling *b (if not NULL) with the bound of the value returned: the hand's tracking bound at
 * that read (plus a clamp's distance), or on the kernel backend the distance a monotonic read was raised above
 * the kernel's value; and the kernel's NTP error and sync status. fc__slow_bounded is this on the global
 * clock. */
int64_t fc__clock_read(struct fc_clock *c, int how, struct fc__bound *b);

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_INTERNAL_H */
