/*
 * fastclock: CLOCK_MONOTONIC and CLOCK_REALTIME at the cost of a CPU counter read, with a bound on the distance
 * to UTC.
 *
 * Every time is nanoseconds in an int64_t; a capture (fc_ticks) is an opaque uint64_t. Every function may be
 * called from any thread at any time, in a child after fork() included. Every read is async-signal-safe: one
 * starts the keeper thread only outside a signal handler, as its signal mask tells (see fc_updater_start).
 * Functions returning int return 0, or -1
 * with errno set, as their libc counterparts. The full contract, with the reasons: API.md, installed as
 * share/doc/fastclock/API.md (docs/API.md in the source).
 *
 * Quick reference (name, returns, what, cost class, ordering):
 *   fc_mono_ns()                int64_t   CLOCK_MONOTONIC ns                     counter read  ordered
 *   fc_mono_ns_relaxed()        int64_t   CLOCK_MONOTONIC ns                     counter read  relaxed
 *   fc_real_ns()                int64_t   CLOCK_REALTIME ns since the epoch      counter read  ordered
 *   fc_real_ns_relaxed()        int64_t   CLOCK_REALTIME ns since the epoch      counter read  relaxed
 *   fc_mono_coarse_ns()         int64_t   CLOCK_MONOTONIC ns, ~1 period old      one load      coarse
 *   fc_real_coarse_ns()         int64_t   CLOCK_REALTIME ns, ~1 period old       two loads     coarse
 *   fc_real_bounded(&iv)        int       REALTIME interval around UTC, status   counter read  ordered
 *   fc_mono_bounded(&iv)        int       MONOTONIC interval, status             counter read  ordered
 *   fc_real_after(t)            int       1: UTC t has certainly passed          counter read  ordered
 *   fc_real_before(t)           int       1: UTC t has certainly not come        counter read  ordered
 *   fc_commit_wait(t, timeout)  int       sleeps until fc_real_after(t)          sleeps
 *   fc_ticks()                  uint64_t  a capture (opaque)                     counter read  ordered
 *   fc_ticks_relaxed()          uint64_t  a capture (opaque)                     counter read  relaxed
 *   fc_ticks_to_mono_ns(cap)    int64_t   the capture's CLOCK_MONOTONIC ns       a few loads
 *   fc_ticks_to_real_ns(cap)    int64_t   the capture's CLOCK_REALTIME ns        a few loads
 *   fc_clock_gettime(id, &ts)   int       clock_gettime, CLOCK_MONOTONIC/REALTIME  counter read  ordered
 *   fc_gettimeofday(&tv, tz)    int       gettimeofday                           counter read  ordered
 *   fc_ustime(), fc_mstime()    int64_t   CLOCK_REALTIME us, ms                  counter read  ordered
 *   fc_mono_us()                int64_t   CLOCK_MONOTONIC us                     counter read  ordered
 *   fc_init()                   int       finish the start-up now (~1 ms), open the UTC sources
 *   fc_set_period_ns(p)         int       the re-anchor period, 1 us .. 1 s (default: 16 ms, 1 ms once bounds
 *                                         or coarse clocks are read)
 *   fc_updater_start(p)         int       start the keeper thread (re-anchors, keeps the coarse clocks)
 *   fc_updater_stop()           int       stop it
 *   fc_status(&st)              int       backend and why, rate, counts, bound source (takes the writer lock)
 *   fc_coarse_one_load()        int       1: a coarse read is one load now (a real-time keeper keeps them)
 *   fc_sync_name(s), fc_backend_name(b), fc_freq_source_name(f), fc_version()   const char *, printable
 *   fc_abi()                    int       the library's FASTCLOCK_ABI
 *   (fc_clock_gettime's _COARSE ids are the coarse clocks; every other id goes to the kernel.)
 *
 * Cost classes:
 *   counter read  one hardware counter read (TSC, CNTVCT_EL0), a multiply and an add: no lock, no shared write,
 *                 no division, no system call. Once per re-anchor period the first reader that finds its hand
 *                 stale re-anchors it instead: that read costs one kernel sample more (API.md, "Cost
 *                 classes"), unless the keeper thread re-anchors first (the library starts it 1 ms after the
 *                 first such re-anchor and parks it while nobody reads).
 *   one load      a load of a value the keeper thread stored (with a keeper that is not real-time: the kernel's
 *                 coarse clock read more; API.md, "The coarse clocks").
 *   kernel        clock_gettime on every read, where the counter is not trusted (fc_status says why).
 * Ordering:
 *   ordered  like clock_gettime: if one read happens-before another (C11 sense, across threads), the second is
 *            >= the first (realtime: unless the kernel's wall clock was stepped back in between).
 *   relaxed  never decreases within one thread; not ordered against other threads' reads.
 *   coarse   never decreases within one thread; never ahead of a precise read made after it.
 * Going back: the monotonic clocks never go back for a change of the kernel's clocks (the realtime ones follow
 *   its wall-clock steps). A hardware counter that jumps back (a migration, a reset) is the exception, as in
 *   the vDSO: landing inside its hand, reads return the hand's earlier value there; behind the hand's anchor by
 *   less than 1/64 of its window, the anchor's value; further behind, the reader re-anchors and the clock
 *   resumes at or above every value returned. Beyond the tracker's envelope (a counter discontinuity in every
 *   period) it can step back by about 1 us (API.md, "When a clock jumps back").
 * Fail closed: when the kernel does not itself use the counter, or the CPU reports no invariant TSC, every clock
 *   is served by clock_gettime. Environment (FASTCLOCK_*): API.md, "Environment"; invalid values are reported in
 *   fc_status().config_error and the default is used.
 */
#ifndef FASTCLOCK_H
#define FASTCLOCK_H

#include <stdint.h>
#include <time.h>
#include <sys/time.h>

/* The inline code below uses C casts; C++ code built with -Wold-style-cast includes it without a warning. */
#if defined(__cplusplus) && defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
#endif

#include "fastclock/fc_counter.h"
#include "fastclock/fc_hand.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version of these headers (the library's: fc_version()). CMakeLists.txt reads the project version from
 * these three lines, so they are its only source. */
#define FASTCLOCK_VERSION_MAJOR 0
#define FASTCLOCK_VERSION_MINOR 1
#define FASTCLOCK_VERSION_PATCH 0
#define FASTCLOCK_VERSION (FASTCLOCK_VERSION_MAJOR * 10000 + FASTCLOCK_VERSION_MINOR * 100 + FASTCLOCK_VERSION_PATCH)
/* The ABI number, libfastclock.so.FASTCLOCK_ABI (the SONAME). The inline readers compile the layouts of
 * struct fc_hand, fc_pub, fc__bound, fc_interval and fc_status and the FC__* constants into applications, so
 * any change to them, or to what an exported fc__ entry point does, bumps it (the source's docs/ABI.md; the check:
 * tests/abi, fingerprints in cmake/abi-layout.txt). */
#define FASTCLOCK_ABI 2

/* Exported from the shared library. The library is built with hidden visibility and a version script
 * generated from cmake/fastclock.api, so a name the headers do not declare with FC_API is not exported. */
#ifndef FC_API
#if defined(__GNUC__)
#define FC_API __attribute__((visibility("default")))
#else
#define FC_API
#endif
#endif

/* The library's version as "MAJOR.MINOR.PATCH" (compare with FASTCLOCK_VERSION_* of the headers built with). */
FC_API const char *fc_version(void);
/* The library's FASTCLOCK_ABI: an application built with these headers may only run with the same. */
FC_API int fc_abi(void);

/* ---------------------------------------------------------------------------------------------------------
 * Internal entry points used by the inline readers below. Not part of the API, but of the ABI.
 */
extern FC_API struct fc_pub fc__pub;
#define FC__MONO 0
#define FC__REAL 1
#define FC__RELAXED 2
FC_API int64_t fc__slow_ns(int how);
struct fc_interval;
FC_API int fc__slow_bounded(struct fc_interval *out, int how);

/* ---------------------------------------------------------------------------------------------------------
 * Precise clocks. Cost: counter read. No errors. Async-signal-safe, fork-safe.
 */

/* CLOCK_MONOTONIC in ns, ordered. */
static inline int64_t fc_mono_ns(void)
{
	int64_t m;
	if (FC__LIKELY(fc__hand_read_ns(&fc__pub, fc__hand_ticks_ordered, FC__MONO, &m)))
		return m;
	return fc__slow_ns(FC__MONO);
}

/* CLOCK_MONOTONIC in ns, relaxed: monotonic within one thread only. */
static inline int64_t fc_mono_ns_relaxed(void)
{
	int64_t m;
	if (FC__LIKELY(fc__hand_read_ns(&fc__pub, fc__hand_ticks_relaxed, FC__MONO, &m)))
		return m;
	return fc__slow_ns(FC__MONO | FC__RELAXED);
}

/* CLOCK_REALTIME in ns since the epoch, ordered. */
static inline int64_t fc_real_ns(void)
{
	int64_t r;
	if (FC__LIKELY(fc__hand_read_ns(&fc__pub, fc__hand_ticks_ordered, FC__REAL, &r)))
		return r;
	return fc__slow_ns(FC__REAL);
}

/* CLOCK_REALTIME in ns since the epoch, relaxed. */
static inline int64_t fc_real_ns_relaxed(void)
{
	int64_t r;
	if (FC__LIKELY(fc__hand_read_ns(&fc__pub, fc__hand_ticks_relaxed, FC__REAL, &r)))
		return r;
	return fc__slow_ns(FC__REAL | FC__RELAXED);
}

/* ---------------------------------------------------------------------------------------------------------
 * Bounded reads. Cost: counter read (fc_real_bounded: and a read of the kernel's CLOCK_REALTIME_COARSE, see "wall
 * steps" below). Ordered. Async-signal-safe, fork-safe. Returns 0, or -1/EFAULT for NULL.
 * TrueTime-style: the true time lies in [earliest_ns, latest_ns]. The half-width adds
 *   (a) fastclock's own tracking error against the kernel's clock: its distance to the bracketed kernel sample
 *       at the last re-anchor, half that sample's bracket and half the REALTIME-MONOTONIC offset's, grown since
 *       at the rate's measured uncertainty plus the allowance below for a kernel rate change unseen before the
 *       next re-anchor;
 *   (b) for fc_real_bounded only, the error of CLOCK_REALTIME against UTC, from the bound source chosen by
 *       FASTCLOCK_BOUND_SOURCE=auto|vmclock|clockbound|chrony|kernel|none (auto: a VMClock that gives the
 *       counter's time, then chronyd, then ClockBound's segment, then the kernel's NTP state;
 *       fc_status().bound_why says which and why), polled by the writer at re-anchors. How each source is read
 *       and who can move it: API.md, "Bounded reads". What cannot be shown gives UNKNOWN with the reason in
 *       fc_status().bound_reason, never SYNCHRONIZED.
 * The contract. While status is not FC_SYNC_DISRUPTED (SYNCHRONIZED, FREE_RUNNING or UNKNOWN: those speak of
 * (b)), (a) holds at every read, at every period from 1 us to 1 s, however often or rarely the process reads
 * (on a counter narrower than 64 bits, at least once per half its range), on these conditions:
 *   - rate: the kernel's CLOCK_MONOTONIC rate against the counter stays within the allowance of the rate the
 *     tracker measured (its 8-period mean, and the newest 1 and 3 periods where they differ) until the next
 *     re-anchor. The allowance is in ppm of the kernel's nominal rate: 2000 ppm while the adjtimex reads
 *     (modes 0) show the tick nominal over the whole window that mean comes from (the last read before it and
 *     every one since, at least one inside it) and none has ever shown it moved (ntpd, systemd-timesyncd: an
 *     NTP frequency write, +-500 ppm, and an adjtime() slew starting, ending or reversing, +-500 ppm,
 *     together); 5000 ppm otherwise: the tick moved (chronyd), unknown, or not read inside the window (that,
 *     plus 30 tick units). Not covered: a move of the tick by more than 2000 ppm that no read has seen (away
 *     from nominal and back between two reads, or before the next read); any larger change (chrony's fast
 *     slew, the kernel PLL with a large offset). Such a
 *     change is seen at the next re-anchor as a break (> 1000 ppm), and status is DISRUPTED from there until
 *     the rate history has refilled (8 samples) and the error is back within 1 us or the old hand's bound;
 *   - leap seconds: CLOCK_REALTIME is stepped only by a leap second announced in adjtimex (STA_INS / STA_DEL);
 *     the hands are DISRUPTED from 2 s before to 2 s after each UTC midnight while it is, which covers the
 *     kernel applying it a tick (or a NOHZ second) late;
 *   - wall steps (settimeofday, clock_settime): a hand follows one when re-anchored, at the next re-anchor or
 *     as soon as the updater thread's step notifier wakes it. fc_real_bounded also reads the kernel's
 *     CLOCK_REALTIME_COARSE (its clock at its last tick, which a step moves at once) and re-anchors when that
 *     is past its value and bound: a step forward by more than the coarse clock's lag (about one kernel tick)
 *     is covered from the step on. Not covered until the next re-anchor or the notifier: a smaller step
 *     forward (off by less than that lag), and any step back;
 *   - suspend: a suspend shorter than the hand's window (P + P/8) with the counter running is not covered
 *     between the resume and the next re-anchor (the reads see the counter alone); the re-anchor tells it by
 *     CLOCK_BOOTTIME - CLOCK_MONOTONIC, status is DISRUPTED and the clock holds (slope down to 0) until the
 *     kernel has caught up, within a period or two. A suspend past the window with the counter running is
 *     covered (the first read re-anchors). With the counter stopped, CLOCK_MONOTONIC stops with it and
 *     fc_mono_bounded is covered; CLOCK_REALTIME jumps at the resume, a step forward as above: fc_real_bounded
 *     is covered after a suspend longer than that lag (its first read re-anchors), while plain real reads stay
 *     behind by the suspend's length until the next re-anchor or the notifier's wake-up (it fires on a resume);
 *   - clocksource: the kernel's values are assumed finer than the extra time a read of them takes over the
 *     narrowest sample seen (hpet: 70 ns steps, ~0.5 us a read; acpi_pm: 279 ns, ~1 us); a switch to one
 *     is not covered until the next re-anchor, and the trust re-check (at a re-anchor, at least once a second)
 *     then leaves the counter. jiffies is not covered until that re-check;
 *   - counter width: the period is capped so 9 periods fit in a quarter of the counter's range (a 32-bit
 *     counter at 1 GHz: 119 ms).
 * (b) is the bound source's claim. On the kernel backend, (a) is 0 for real reads and the clamp's distance for
 * monotonic ones.
 * status (enum fc_sync), rules in order:
 *   FC_SYNC_DISRUPTED     a discontinuity (suspend, migration, counter jump, backend switch, a rate change
 *                         beyond 1000 ppm) was detected and fastclock has not re-converged on the kernel
 *                         since (8 samples since it, and the error at a re-anchor within 1 us or within the
 *                         previous hand's bound); or the rate still rests on a frequency hint, not a
 *                         measurement (start-up); or a leap second is pending and the hand's window reaches
 *                         within 2 s of a UTC midnight, or it was anchored within 2 s after one; or
 *                         the source (ClockBound, VMClock) reports a disruption;
 *   FC_SYNC_UNKNOWN       the source makes no promise (fc_status().bound_reason says why): (b) is not a bound;
 *                         so is a process's first bounded read in auto mode (no source read yet; the next
 *                         bound opens them);
 *   FC_SYNC_FREE_RUNNING  the source's data is stale or the clock undisciplined; (b) still holds, growing;
 *   FC_SYNC_SYNCHRONIZED  otherwise.
 * Monotonic counterpart: fc_mono_bounded gives the interval for CLOCK_MONOTONIC, (a) only.
 * Returns 0, or -1/EFAULT for NULL.
 */
enum fc_sync { FC_SYNC_UNKNOWN = 0, FC_SYNC_SYNCHRONIZED = 1, FC_SYNC_FREE_RUNNING = 2, FC_SYNC_DISRUPTED = 3 };
struct fc_interval {
	int64_t earliest_ns, latest_ns;
	int status; /* enum fc_sync */
};

/* The kernel's CLOCK_REALTIME_COARSE (fc__hand_read_real_bounded). Where <time.h> hides clock_gettime (strict ISO
 * C), a value no hand reaches: every bounded real read takes the slow path, which reads it itself. */
#if defined(CLOCK_REALTIME_COARSE) && defined(CLOCK_REALTIME)
static inline int64_t fc__wall_coarse(void)
{
	struct timespec ts;
	if (FC__UNLIKELY(clock_gettime(CLOCK_REALTIME_COARSE, &ts) != 0))
		return INT64_MIN; /* not seen: the hand's value, unchecked */
	return (int64_t)ts.tv_sec * 1000000000 + (int64_t)ts.tv_nsec;
}
#else
static inline int64_t fc__wall_coarse(void) { return INT64_MAX; }
#endif

static inline int fc_real_bounded(struct fc_interval *out)
{
	int64_t m;
	struct fc__bound b;
	if (FC__UNLIKELY(out == NULL) ||
	    FC__UNLIKELY(!fc__hand_read_real_bounded(&fc__pub, fc__hand_ticks_ordered, fc__wall_coarse, &m, &b)) ||
	    FC__UNLIKELY(b.sync_status < 0)) /* no bound asked for yet: the slow path asks */
		return fc__slow_bounded(out, FC__REAL);
	m += b.utc_corr_ns;
	out->earliest_ns = m - b.track_err_ns - b.utc_err_ns;
	out->latest_ns = m + b.track_err_ns + b.utc_err_ns;
	out->status = b.sync_status;
	return 0;
}

static inline int fc_mono_bounded(struct fc_interval *out)
{
	int64_t m;
	struct fc__bound b;
	if (FC__UNLIKELY(out == NULL) ||
	    FC__UNLIKELY(!fc__hand_read_bounded(&fc__pub, fc__hand_ticks_ordered, FC__MONO, &m, &b)) ||
	    FC__UNLIKELY(b.sync_status < 0)) /* no bound asked for yet: the slow path asks */
		return fc__slow_bounded(out, FC__MONO);
	out->earliest_ns = m - b.track_err_ns;
	out->latest_ns = m + b.track_err_ns;
	out->status = b.sync_status;
	return 0;
}

/* Printable name of an enum fc_sync: "unknown", "synchronized", "free-running", "disrupted". */
FC_API const char *fc_sync_name(int status);

/* ---------------------------------------------------------------------------------------------------------
 * TrueTime helpers (Spanner's TT.after / TT.before / commit wait).
 * fc_real_after(t): 1 if UTC t (ns since the epoch) has certainly passed (t < earliest of fc_real_bounded);
 * fc_real_before(t): 1 if t has certainly not come (t > latest). Both answer 0 when the bound makes no promise
 * (UNKNOWN, DISRUPTED), so "not after" never means "before". Cost: one bounded read. No errors.
 * fc_commit_wait(t, timeout_ns): sleeps (CLOCK_MONOTONIC, never spinning) until fc_real_after(t); a bound that
 * makes no promise is asked again at once before the first sleep. Returns 0, or -1 with errno ETIMEDOUT (t not
 * certainly past within timeout_ns) or EINVAL (timeout_ns < 0). All three: async-signal-safe (bounded reads
 * and clock_nanosleep only), fork-safe.
 */
static inline int fc_real_after(int64_t t_ns)
{
	struct fc_interval iv;
	fc_real_bounded(&iv);
	return (iv.status == FC_SYNC_SYNCHRONIZED || iv.status == FC_SYNC_FREE_RUNNING) && t_ns < iv.earliest_ns;
}

static inline int fc_real_before(int64_t t_ns)
{
	struct fc_interval iv;
	fc_real_bounded(&iv);
	return (iv.status == FC_SYNC_SYNCHRONIZED || iv.status == FC_SYNC_FREE_RUNNING) && t_ns > iv.latest_ns;
}

FC_API int fc_commit_wait(int64_t t_ns, int64_t timeout_ns);

/* ---------------------------------------------------------------------------------------------------------
 * Coarse clocks: a recent past value, at most about max(period, 50 us) old while the keeper thread runs. Cost:
 * one load with a real-time keeper; otherwise the larger of the keeper's value and the kernel's coarse clock
 * (a vDSO coarse read more); precise reads until the keeper's first store, and with FASTCLOCK_UPDATER=off or
 * after fc_updater_stop(). Ordering: coarse. No errors. Fork-safe; async-signal-safe: a coarse read 1 ms or
 * more after the process's first starts the keeper, outside a signal handler (see fc_updater_start).
 */
FC_API int64_t fc__coarse_init(int how);

/* 1 while a real-time keeper keeps the coarse clocks' value (each coarse read is then one load), else 0. */
FC_API int fc_coarse_one_load(void);

/* CLOCK_MONOTONIC in ns, coarse. */
static inline int64_t fc_mono_coarse_ns(void)
{
	int64_t v = __atomic_load_n(&fc__pub.coarse_mono, __ATOMIC_RELAXED);
	if (FC__UNLIKELY(v == 0))
		return fc__coarse_init(FC__MONO);
	return v;
}

/* CLOCK_REALTIME in ns since the epoch, coarse (two loads); follows a wall-clock step up to one period late, as
 * the kernel's CLOCK_REALTIME_COARSE lags by one tick. */
static inline int64_t fc_real_coarse_ns(void)
{
	int64_t v = __atomic_load_n(&fc__pub.coarse_mono, __ATOMIC_RELAXED);
	if (FC__UNLIKELY(v == 0))
		return fc__coarse_init(FC__REAL);
	return v + __atomic_load_n(&fc__pub.coarse_real_off, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------------------------------------------------
 * Captures: capture now, convert later. fc_ticks() returns an opaque capture: counter ticks on the counter
 * backend, CLOCK_MONOTONIC ns on the kernel backend and (x86-64) for the captures of a process's first ~50 us.
 * Only fc_ticks_to_mono_ns and fc_ticks_to_real_ns read it: never subtract two captures; subtract their
 * conversions. Cost: counter read (ordered / relaxed, as the reads); a conversion a few loads, exact while the
 * capture's hand is in the ring (the last FC_HANDS - 1 re-anchors), else against the nearest anchor or a fresh
 * kernel sample. A capture across a counter discontinuity or a backend change converts wrongly (counted in
 * fc_status().discontinuities). No errors. Async-signal-safe, fork-safe. In full: API.md, "Captures".
 */
FC_API uint64_t fc__ticks_kernel(void);

/* A capture (opaque), ordered. */
static inline uint64_t fc_ticks(void)
{
	const struct fc_hand *th = __atomic_load_n(&fc__pub.current, __ATOMIC_ACQUIRE);
	if (FC__UNLIKELY(FC__LOAD(th->stale_ticks) == 0))
		return fc__ticks_kernel();
	return fc__counter_ordered();
}

/* A capture (opaque), relaxed. */
static inline uint64_t fc_ticks_relaxed(void)
{
	const struct fc_hand *th = __atomic_load_n(&fc__pub.current, __ATOMIC_ACQUIRE);
	if (FC__UNLIKELY(FC__LOAD(th->stale_ticks) == 0))
		return fc__ticks_kernel();
	return fc__counter_relaxed();
}

/* The CLOCK_MONOTONIC / CLOCK_REALTIME ns of a capture taken by fc_ticks or fc_ticks_relaxed. */
FC_API int64_t fc_ticks_to_mono_ns(uint64_t ticks);
FC_API int64_t fc_ticks_to_real_ns(uint64_t ticks);

/* ---------------------------------------------------------------------------------------------------------
 * Drop-in replacements. Async-signal-safe, fork-safe.
 * fc_clock_gettime: CLOCK_REALTIME and CLOCK_MONOTONIC from the counter (counter read, ordered); their _COARSE
 * variants from the coarse clocks (they may start the keeper thread, as fc_mono_coarse_ns does); every other id
 * from the kernel. Returns 0, or -1 with errno EINVAL for an id the kernel rejects, EFAULT for a NULL ts.
 * fc_gettimeofday: CLOCK_REALTIME in microseconds (counter read, ordered); a NULL tv is allowed (as in the
 * kernel); tz, if given, is filled by the kernel.
 * Declared where <time.h> declares clock_gettime: in strict ISO modes (-std=c11, no _POSIX_C_SOURCE) it hides
 * clockid_t, so define _POSIX_C_SOURCE >= 199309L (or _GNU_SOURCE) before the first #include to have them.
 */
#if defined(CLOCK_MONOTONIC) && defined(CLOCK_REALTIME)
FC_API int fc__clock_gettime_other(clockid_t id, struct timespec *ts); /* every id not served inline; NULL ts */
FC_API int fc__gettimeofday_other(struct timeval *tv, void *tz);

/* ns to (s, ns). Division by a constant: compilers emit a multiply and a shift, no divide instruction.
 * Times before 1970 (possible only for CLOCK_REALTIME set to the past) round towards -infinity, as the
 * kernel's timespec does. */
static inline void fc__ns_split(int64_t ns, int64_t *sec, int64_t *sub, uint32_t unit)
{
	if (FC__UNLIKELY(ns < 0)) {
		uint64_t m = (uint64_t)(-(ns + 1)); /* |ns| - 1: no overflow at INT64_MIN */
		*sec = -(int64_t)(m / 1000000000u) - 1;
		*sub = (int64_t)((999999999u - m % 1000000000u) / unit);
		return;
	}
	*sec = (int64_t)((uint64_t)ns / 1000000000u);
	*sub = (int64_t)(((uint64_t)ns % 1000000000u) / unit);
}

/* The drop-ins read the hand's anchors kept as seconds + a sub-second remainder (fc_hand.h): a timespec costs
 * a compare more than fc_mono_ns, a timeval a constant division more, never a division of the ns count. The
 * slow path and every other id go out of line. */
FC__ALWAYS_INLINE int fc_clock_gettime(clockid_t id, struct timespec *ts)
{
	int64_t s, ns;
	/* One inlined reader for both ids (`real` folds to a constant when id is one); always inlined, as a call
	 * would cost what the division saved (gcc otherwise keeps an out-of-line copy where a TU calls it often). */
	if (FC__LIKELY(ts != NULL) && (id == CLOCK_MONOTONIC || id == CLOCK_REALTIME) &&
	    FC__LIKELY(fc__hand_read_ts(&fc__pub, fc__hand_ticks_ordered, id == CLOCK_REALTIME, &s, &ns))) {
		ts->tv_sec = (time_t)s;
		ts->tv_nsec = (long)ns;
		return 0;
	}
	return fc__clock_gettime_other(id, ts);
}

FC__ALWAYS_INLINE int fc_gettimeofday(struct timeval *tv, void *tz)
{
	int64_t s, us;
	if (FC__UNLIKELY(tz != NULL) || FC__UNLIKELY(tv == NULL) ||
	    FC__UNLIKELY(!fc__hand_read_tv(&fc__pub, fc__hand_ticks_ordered, &s, &us)))
		return fc__gettimeofday_other(tv, tz);
	tv->tv_sec = (time_t)s;
	tv->tv_usec = (suseconds_t)us;
	return 0;
}

#endif /* CLOCK_MONOTONIC && CLOCK_REALTIME */

/* Valkey-style helpers: CLOCK_REALTIME in us / ms, CLOCK_MONOTONIC in us. Counter read, ordered, no errors,
 * async-signal-safe, fork-safe. */
static inline int64_t fc_ustime(void) { return fc_real_ns() / 1000; }
static inline int64_t fc_mstime(void) { return fc_real_ns() / 1000000; }
static inline int64_t fc_mono_us(void) { return fc_mono_ns() / 1000; }

/* ---------------------------------------------------------------------------------------------------------
 * Control and status. fc_init, fc_status, fc_set_period_ns, fc_updater_start and fc_updater_stop are not
 * async-signal-safe; fc_coarse_one_load, fc_abi, fc_version and the *_name functions are (a load, a constant).
 * All of them work in a child after fork().
 */

/* Finish the start-up now: the counter checked and its rate measured (about 1 ms the first time), and the
 * bound sources opened, so a first bounded read answers from them (where the program links the bound: a static
 * program that makes no bounded read has none, and opens nothing). Idempotent. Returns 0. */
FC_API int fc_init(void);

/* The default re-anchor period follows what the process reads: FC_PERIOD_PLAIN_NS while it makes plain reads
 * only (the keeper's cost, and the misses its rewrites give readers, go as 1 / period), FC_PERIOD_FINE_NS for good
 * from its first bounded or coarse read, fc_init or fc_status on (a bound's width grows with a hand's age; a coarse
 * clock is about a period old). FASTCLOCK_PERIOD_US or fc_set_period_ns fixes it instead. */
#define FC_PERIOD_PLAIN_NS 16000000
#define FC_PERIOD_FINE_NS 1000000

/* Re-anchor period in ns: 1 us .. 1 s. Returns -1/EINVAL (and changes nothing) outside that range. An updater
 * thread that follows the clock's period (fc_updater_start(0), or started by a coarse read) takes the new one at
 * its next wake-up, up to 3/4 of the old period later: until then the coarse clocks may be that old. */
FC_API int fc_set_period_ns(int64_t period_ns);

/* The keeper thread: re-anchors every 3/4 of period_ns (0: the clock's period, following fc_set_period_ns), so
 * readers do not, and keeps the coarse clocks at most about max(period_ns, 50 us) old. The library starts it by
 * itself (unless FASTCLOCK_UPDATER=off) at a coarse read, or a reader's re-anchor, 1 ms or more after the
 * process's first, and parks it while nobody reads; fc_updater_start() starts it at once or takes it over (the
 * start-up finished first, as fc_init's; the bound's sources and the default period are left to what is read). A
 * read starts it only where the thread's signal mask blocks no signal that has a handler and was not blocked
 * at the library's load (pthread_create is not async-signal-safe; a handler runs with its signal blocked): a
 * program whose handlers are installed with SA_NODEFER and an empty sa_mask and read clocks calls
 * fc_updater_start() first. Named "fastclock", every signal blocked, SCHED_FIFO priority 1 where permitted
 * (FASTCLOCK_UPDATER_RT=0: never); started again at once in a child after fork(). Returns 0, or
 * -1 with errno EINVAL (bad period), EALREADY (already started by fc_updater_start) or pthread_create's error.
 * fc_updater_stop() joins it and keeps reads from starting it again (coarse reads then return precise values);
 * returns 0, or -1/ESRCH if none runs. */
FC_API int fc_updater_start(int64_t period_ns);
FC_API int fc_updater_stop(void);

enum fc_backend {
	FC_BACKEND_COUNTER = 1, /* hardware counter, re-anchored to the kernel */
	FC_BACKEND_KERNEL = 2,  /* clock_gettime on every read */
};

enum fc_freq_source {
	FC_FREQ_NONE = 0,
	FC_FREQ_PERF = 1,    /* not used (the perf_event mmap page); kept for the ABI */
	FC_FREQ_CPUID = 2,   /* not used alone: CPUID 0x15 / 0x40000010 only cross-check the measurement */
	FC_FREQ_CNTFRQ = 3,  /* CNTFRQ_EL0 */
	FC_FREQ_MEASURED = 4 /* a short bracketed measurement against CLOCK_MONOTONIC */
};

struct fc_status {
	int backend;                /* enum fc_backend */
	char reason[160];           /* why this backend (human readable) */
	char counter[16];           /* "tsc", "cntvct", "none" */
	char clocksource[32];       /* kernel's current clocksource at the last check */
	int freq_source;            /* enum fc_freq_source: where the initial frequency came from */
	uint64_t counter_hz_initial; /* the frequency taken at start-up */
	uint64_t counter_hz;        /* the kernel-relative rate the tracker uses now */
	int64_t period_ns;          /* re-anchor period */
	uint64_t reanchors;         /* hands published */
	uint64_t slow_paths;        /* reader slow-path entries (kernel-backend reads excluded) */
	uint64_t waits;             /* readers that waited for an expired hand to be replaced */
	uint64_t discontinuities;   /* counter/kernel discontinuities detected (suspend, migration, steps) */
	uint64_t real_steps;        /* wall-clock steps followed */
	uint64_t trust_checks;      /* re-checks of the clocksource */
	int64_t last_error_ns;      /* fastclock - kernel CLOCK_MONOTONIC at the last re-anchor (midpoint) */
	int64_t last_bracket_ns;    /* width of the best kernel sample's counter bracket at the last re-anchor */
	int64_t max_abs_error_ns;   /* largest |last_error_ns| seen while tracking (not across discontinuities) */
	int updater_running;        /* 1 while fc_updater_start's thread runs */
	char config_error[160];     /* "" or what was wrong in the environment/configuration */
	int sync_status;            /* enum fc_sync, as bounded reads report it now */
	int64_t ntp_maxerror_ns;    /* adjtimex maxerror at the last read (-1: unavailable) */
	int64_t ntp_esterror_ns;    /* adjtimex esterror */
	int ntp_status;             /* adjtimex status bits (STA_*) */
	int step_notifier;          /* 1 if the updater thread watches a CANCEL_ON_SET timerfd */
	uint64_t step_notifications; /* wall-clock steps reported by the notifier */
	/* The source of fc_real_bounded's UTC part (FASTCLOCK_BOUND_SOURCE; API.md, "Bounded reads"). */
	char bound_source[16];      /* "vmclock", "clockbound", "chrony", "kernel", "none" */
	char bound_why[120];        /* why this source was chosen */
	char bound_reason[120];     /* why the status it gives now */
	int bound_status;           /* enum fc_sync, the source's own (before the tracker's DISRUPTED) */
	int64_t bound_age_ns;       /* CLOCK_MONOTONIC now - the source's as_of (its data's age) */
	int64_t bound_half_ns;      /* the source's half-width vs UTC now */
	int64_t bound_center_ns;    /* its centre: UTC ~ CLOCK_REALTIME + this */
	int leap;                   /* 1: a leap second is announced for the end of the UTC day (insert), 2: delete */
	char bound_error[120];      /* "" or the source's last error (names the path or value) */
	int64_t bound_error_age_ns; /* how long ago it happened (-1: none) */
};

/* Fill *out. Returns 0, or -1/EFAULT for NULL. Takes the writer lock and finishes the start-up (as fc_init):
 * cheap enough for a metrics endpoint, not for a hot loop. */
#if defined(__cplusplus) && defined(__GNUC__)
/* The function and the struct share the name the API fixes; g++ -Wshadow would call that hiding. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#endif
FC_API int fc_status(struct fc_status *out);
#if defined(__cplusplus) && defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

/* Printable name of a backend / frequency source ("counter", "kernel", "perf", ...). */
FC_API const char *fc_backend_name(int backend);
FC_API const char *fc_freq_source_name(int src);

#ifdef __cplusplus
}
#endif

#if defined(__cplusplus) && defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#endif /* FASTCLOCK_H */
