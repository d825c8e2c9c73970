/*
 * fastclock — the time of day and monotonic time at the cost of a counter read.
 *
 * Clocks (every value is nanoseconds in an int64_t):
 *   mono  CLOCK_MONOTONIC's timeline (follows its NTP slews and time-namespace offset; never goes back)
 *   real  CLOCK_REALTIME's timeline, ns since the Unix epoch (follows the kernel's steps and leap seconds)
 *
 * Cost classes, as named in the table of README.md:
 *   counter read  one hardware counter read (TSC / CNTVCT_EL0), a 128-bit multiply, no lock, no shared
 *                 write, no division; about 1 ns more than the bare counter read.
 *   one load      a single load of a value the updater thread last stored.
 *   kernel        clock_gettime (vDSO or syscall): used when the counter cannot be trusted.
 * Once per re-anchor period (default 1 ms) the first reader that finds its timehand stale takes the slow
 * path: it samples the kernel's clocks (~0.5 us) and publishes a new hand. Nothing else ever blocks.
 *
 * Start-up: no read ever waits for a calibration or starts a thread on its first call. The kernel's clock
 * serves reads at first, while the next slow paths check that the counter may be trusted and measure its rate
 * over 1 ms; then the counter takes over, never below a value already returned. What each first call of a
 * process costs (docs/PERFORMANCE.md, "Start-up: every function's first call", has the figures; "here": medians
 * of fresh processes on its 2-core VM, where the vDSO's own first clock_gettime took 6 us back to back and
 * 9 us started alone, 2 s apart):
 *   precise, relaxed, drop-ins, helpers: one kernel read (and the library's initialisation: one pass over the
 *             environment); no system call, no file, no page fault but the vDSO's own: 6.5-9 us back to back and
 *             10-13 us alone here, 1.0-1.6x the vDSO's first call both ways (two runs);
 *   coarse: one precise read, the same cost (coarse reads are precise reads until the updater thread has stored
 *             its first value, which it does when it first runs; the first coarse read 1 ms or more after the
 *             process's first starts that thread, once);
 *   fc_ticks, fc_ticks_relaxed: one kernel read on x86-64 (a capture before the counter's trust check is
 *             CLOCK_MONOTONIC ns, an "early capture", told from the counter ticks captured after it by its value:
 *             the TSC's count is far above the kernel's ns count, by ~69 s at least or the capture is not early);
 *             elsewhere, or where the counter does not lead so, also the trust check if still due (a sysfs read
 *             and one CPUID, which decides a capture's unit: 30-50 us here); never the rate's 1 ms. 8 us
 *             here, as the precise reads;
 *   fc_ticks_to_*_ns of an early capture: nothing more (it is ns); of a counter capture taken before the first
 *             counter hand: one bracketed kernel sample;
 *   bounded (fc_real_bounded, fc_mono_bounded, fc_real_after/before, fc_commit_wait with no time left): one
 *             kernel read, as the precise reads: in auto mode a process's first bound reads nothing of the bound
 *             and promises nothing (status UNKNOWN, "no source read yet": the kernel's NTP state alone could not
 *             say SYNCHRONIZED before chronyd, a ClockBound segment and VMClock are asked), and its next bound opens
 *             the sources (a fixed handful of files, chronyd's socket; its reply never waited for). No system
 *             call: 6.5-10 us back to back and 11-14 us alone here, 1.1-1.8x the vDSO's first call (two
 *             runs; it was 40-48 us, 7 system calls). That next bound costs ~37 us here, once.
 *             fc_commit_wait with time left asks again at once, so its first call also opens the sources; a
 *             source named by FASTCLOCK_BOUND_SOURCE is opened by the first call, as asked;
 *   fc_init() and fc_status(): finish the start-up at once (~1 ms: the rate's measurement) and open the bound
 *             sources (fc_init's first counter hand stamps the bound from them): a program whose first bounded read
 *             must answer from the sources calls fc_init() when it starts.
 *
 * Ordering:
 *   ordered   (fc_mono_ns, fc_real_ns, fc_ticks): like clock_gettime, if one read happens-before another
 *             (C11 sense, across threads) the second is >= the first (realtime: unless the kernel's wall
 *             clock was stepped back in between).
 *   relaxed   (*_relaxed): the counter read is not ordered against surrounding memory operations; values
 *             never decrease within one thread, but a value may be smaller than one another thread read
 *             before synchronising with this one. Cheapest; use for durations measured in one thread.
 *   coarse    (*_coarse_ns): a recent past value, at most about max(period, 50 us) old, kept by the updater
 *             thread. Where the process may (root, CAP_SYS_NICE, RLIMIT_RTPRIO >= 1) that thread is created
 *             SCHED_FIFO at priority 1, so this holds on a machine busy with ordinary (SCHED_OTHER) work too, and a
 *             coarse read is one load: p99.9 0.73-0.76 ms and worst 0.73-0.87 ms (8 runs of 2 s) with both cores
 *             of docs/PERFORMANCE.md's VM busy, where the kernel's coarse clock's worst was 6.35-6.37 ms. Elsewhere,
 *             or with FASTCLOCK_UPDATER_RT=0, it holds while that thread gets a CPU, and a coarse read returns the
 *             larger of its value and the kernel's CLOCK_*_COARSE (a vDSO read more): never staler than the
 *             kernel's coarse clock read before it, however busy the machine (worst 1.85-6.35 ms there, the
 *             kernel's 6.35-6.37 ms; docs/PERFORMANCE.md, "Coarse staleness"). Never decreases within a thread, and
 *             never ahead of a precise read made after it (a precise read made before it may be older: mixing
 *             the two can look like time going back); for a value taken from the kernel's coarse clock, as long
 *             as fastclock is behind the kernel by less than the age of that clock's value (measured: <= 22 ns
 *             behind, against an age of >= 2.3 ms there), which is also the condition for the first precise value
 *             after an fc_updater_stop() to be no lower than such a value.
 *             A coarse read 1 ms or more after the process's first starts the updater thread (a thread named
 *             "fastclock", every signal blocked; see fc_updater_start); until that thread's first store, made
 *             when it first runs, coarse reads are precise reads; with
 *             FASTCLOCK_UPDATER=off, or after fc_updater_stop(), coarse reads return precise values instead
 *             (never stale, at the cost of a precise read).
 *
 * Async-signal-safety and fork: every read (precise, relaxed, bounded, fc_ticks, conversions, drop-ins) may be
 * called from a signal handler, including one that interrupts the library on the same thread, and in a child
 * after fork() at any moment (another thread initialising included): the slow path and the initialisation
 * use only async-signal-safe calls and never wait for their own thread, and errno is preserved. One
 * exception: a coarse read may start the updater thread (the first one 1 ms or more after the process's first
 * coarse read; pthread_create is not async-signal-safe): a program that reads coarse clocks in a handler calls
 * fc_updater_start() first, or sets FASTCLOCK_UPDATER=off. fc_status, fc_set_period_ns and the updater's
 * control functions are not async-signal-safe.
 *
 * Fail closed: when the kernel does not itself use the counter (clocksource not tsc/arch_sys_counter), or
 * the CPU reports no invariant TSC, every clock is served by clock_gettime and fc_status() says why.
 * Environment: FASTCLOCK_SOURCE=auto|counter|kernel, FASTCLOCK_PERIOD_US=1..1000000 (re-anchor period),
 * FASTCLOCK_UPDATER=auto|off (may a coarse read start the updater thread), FASTCLOCK_UPDATER_RT=1|0 (may that
 * thread ask for SCHED_FIFO where permitted; default 1), FASTCLOCK_BOUND_SOURCE and
 * the bound sources' paths (see fc_real_bounded). Invalid values are reported in fc_status().config_error
 * and the default is used.
 *
 * Thread safety: every function may be called from any thread at any time, including after fork().
 * Errors: functions returning int return 0, or -1 with errno set, as their libc counterparts.
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
 * any change to them, or to what an exported fc__ entry point does, bumps it (docs/ABI.md; the check:
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
 * Precise clocks (cost: counter read).
 */

/* CLOCK_MONOTONIC, ordered. */
static inline int64_t fc_mono_ns(void)
{
	int64_t m;
	if (FC__LIKELY(fc__hand_read(&fc__pub, fc__counter_ordered, FC__HR_NS, &m, NULL, NULL)))
		return m;
	return fc__slow_ns(FC__MONO);
}

/* CLOCK_MONOTONIC, relaxed (monotonic within one thread only). */
static inline int64_t fc_mono_ns_relaxed(void)
{
	int64_t m;
	if (FC__LIKELY(fc__hand_read(&fc__pub, fc__counter_relaxed, FC__HR_NS, &m, NULL, NULL)))
		return m;
	return fc__slow_ns(FC__MONO | FC__RELAXED);
}

/* CLOCK_REALTIME, ordered. */
static inline int64_t fc_real_ns(void)
{
	int64_t r;
	if (FC__LIKELY(fc__hand_read(&fc__pub, fc__counter_ordered, FC__HR_REAL, &r, NULL, NULL)))
		return r;
	return fc__slow_ns(FC__REAL);
}

/* CLOCK_REALTIME, relaxed. */
static inline int64_t fc_real_ns_relaxed(void)
{
	int64_t r;
	if (FC__LIKELY(fc__hand_read(&fc__pub, fc__counter_relaxed, FC__HR_REAL, &r, NULL, NULL)))
		return r;
	return fc__slow_ns(FC__REAL | FC__RELAXED);
}

/* ---------------------------------------------------------------------------------------------------------
 * Bounded reads (cost: counter read; within a few % of fc_real_ns). TrueTime-style: the true time lies in
 * [earliest_ns, latest_ns]. The half-width adds
 *   (a) fastclock's own tracking error against the kernel's clock: the distance to the bracketed kernel
 *       sample at the last re-anchor plus half its bracket, plus half the bracket of the REALTIME-MONOTONIC
 *       offset (~26 ns; in fc_mono_bounded too), grown since at the rate's measured uncertainty plus 5000
 *       ppm: what the kernel may change its rate by, unseen, before the next re-anchor (docs/ACCURACY.md;
 *       median ~2.2 us at the default 1 ms period, ~60 ns at 1 us, ~2.3 ms at 1 s);
 *   (b) for fc_real_bounded only, the error of CLOCK_REALTIME against UTC, from a bound source polled by the
 *       writer at re-anchors (on the counter backend never per read, so at most once a period: at longer periods
 *       the cadences below stretch to the period, and a source's news, chronyd's first reply included, reaches
 *       bounds up to a period later; src/bound, docs/ACCURACY.md "Bound sources"), chosen by
 *       FASTCLOCK_BOUND_SOURCE=auto|vmclock|clockbound|chrony|kernel|none (auto: a VMClock that gives the time
 *       of the counter; then chronyd wherever it can be asked, before ClockBound's segment, which is built from
 *       chronyd's report alone, twice as wide and blind to its newest measurement; the segment first beside a
 *       VMClock, whose disruption marker its daemon watches; the segment where chronyd cannot be asked or falls
 *       silent while the segment lives; the kernel last; fc_status().bound_why says which and why):
 *       - vmclock: a VMClock (/dev/vmclock0, FASTCLOCK_VMCLOCK_PATH) whose host publishes the time of this
 *         CPU's counter (counter_id, UTC or TAI with its offset, maximum errors flagged valid, SYNCHRONIZED or
 *         FREERUNNING), sampled at each re-anchor between two CLOCK_REALTIME reads: its maximum error plus
 *         half the bracket, grown at its period error + the rate seen between CLOCK_REALTIME and its time +
 *         5000 ppm (the contract below); auto mode serves it while the snapshot gives that time, and the
 *         next source otherwise;
 *       - clockbound: AWS ClockBound's segment (FASTCLOCK_CLOCKBOUND_PATH, default /var/run/clockbound/shm0),
 *         read with its client's rules: bound + max_drift x age, its status, its disruption marker; in auto
 *         mode a segment below SYNCHRONIZED (its daemon died, or never wrote it) has chronyd probed beside it,
 *         which replaces it once its report is better, until the segment is SYNCHRONIZED again;
 *       - chrony: chronyd's tracking and its selected source's newest measurement over its unix command
 *         socket (FASTCLOCK_CHRONY_SOCKET, default /var/run/chrony/chronyd.sock) where this process may use
 *         it (root, chronyd's user), else its command port 127.0.0.1:323 or [::1]:323 (its monitoring
 *         commands are open to every local process); either socket connected, so that only chronyd's
 *         datagrams arrive; fc_status().bound_reason names the one in use. Asked
 *         without blocking every 100 ms (every 12.5 ms within one round's uncertainty of the instant) from
 *         shortly before chronyd's next measurement (its selected source's poll after its data last changed)
 *         until it is seen, else once a second: the interval covers the clock as it is and as chronyd's
 *         correction would make it, plus chronyd's root distance, and reaches a newer measurement of the
 *         selected source; a measurement that disagrees with chronyd's estimate by more than root distance +
 *         its own error (a reference step chronyd has not tracked yet) makes it UNKNOWN from that reply until
 *         they agree again; sources chronyd does not select never count;
 *       - kernel: adjtimex maxerror, grown at 500 ppm, SYNCHRONIZED only when the kernel's state shows a
 *         daemon's bound: 0 < esterror <= maxerror < 16 s, STA_UNSYNC clear (chronyd's and ntpd's; timesyncd
 *         writes 0s, OpenNTPD maxerror 0, busybox nothing: UNKNOWN with the reason); never process names;
 *       and a VMClock (/dev/vmclock0, FASTCLOCK_VMCLOCK_PATH) whose disruption marker moves makes it DISRUPTED
 *       until the source has a measurement taken after the move.
 *       A pending leap second widens it by 1 s within 2 s of a UTC midnight. The centre may differ from
 *       fc_real_ns (which stays on the kernel's CLOCK_REALTIME) by the source's correction.
 * Who can move (b) (docs/THREATS.md). Trusted: root and CAP_SYS_TIME (they set the clock), the hypervisor for
 * VMClock, a time daemon's user for its own source. Never trusted: other users and a set-user-ID program's caller.
 * So a source file is used only if root or its directory's owner owns it and no one else may write it (a regular
 * file, in a directory no other user could have made; VMClock's device owned by root, and opened only if sysfs
 * says it is the vmclock driver's: no other device's open is ever run), opened without blocking or
 * following a final symbolic link, and read with pread (a regular file), never mapped (a truncation is a refusal,
 * not SIGBUS); chronyd's unix socket likewise (root's or its directory owner's, not a link, in such a directory,
 * checked at each connect); the kernel's state is judged by
 * what only a privileged writer can set; a program started with raised privileges (AT_SECURE) reads no FASTCLOCK_*
 * variable and the installed library has no test seams; data out of range is refused or saturated. What cannot be
 * shown gives UNKNOWN with the reason in fc_status().bound_reason / bound_error, never SYNCHRONIZED; bad input
 * never crashes or hangs a reader, and no read opens more than a fixed handful of files (first call included;
 * in auto mode a process's first bounded read opens none: it reads nothing of the bound and says UNKNOWN).
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
 *     kernel applying it a tick (or a NOHZ second) late. settimeofday / clock_settime reach readers at the next
 *     re-anchor, or as soon as the updater thread's step notifier wakes it: not covered before;
 *   - suspend: a suspend shorter than the hand's window (P + P/8) with the counter running is not covered
 *     between the resume and the next re-anchor (the reads see the counter alone); the re-anchor tells it by
 *     CLOCK_BOOTTIME - CLOCK_MONOTONIC, status is DISRUPTED and the clock holds (slope down to 0) until the
 *     kernel has caught up, within a period or two. A suspend past the window, or with the counter stopped,
 *     is covered;
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

static inline int fc_real_bounded(struct fc_interval *out)
{
	int64_t m;
	struct fc__bound b;
	if (FC__UNLIKELY(out == NULL) ||
	    FC__UNLIKELY(!fc__hand_read(&fc__pub, fc__counter_ordered, FC__HR_REAL, &m, NULL, &b)) ||
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
	    FC__UNLIKELY(!fc__hand_read(&fc__pub, fc__counter_ordered, FC__HR_NS, &m, NULL, &b)) ||
	    FC__UNLIKELY(b.sync_status < 0)) /* no bound asked for yet: the slow path asks */
		return fc__slow_bounded(out, FC__MONO);
	out->earliest_ns = m - b.track_err_ns;
	out->latest_ns = m + b.track_err_ns;
	out->status = b.sync_status;
	return 0;
}

FC_API const char *fc_sync_name(int status);

/* ---------------------------------------------------------------------------------------------------------
 * TrueTime helpers (Spanner's TT.after / TT.before / commit wait; cost: one bounded read).
 * fc_real_after(t): 1 if UTC t (ns since the epoch) has certainly passed: t < earliest of fc_real_bounded.
 * fc_real_before(t): 1 if t has certainly not arrived yet: t > latest. Both answer 0 when the bound makes no
 * promise (status UNKNOWN or DISRUPTED; so does a process's first bounded read in auto mode), so "not after"
 * never means "before": ask the one you need.
 * fc_commit_wait(t, timeout_ns): Spanner's commit wait. A transaction stamped s = latest of a bounded read
 * becomes visible only after fc_commit_wait(s) returns 0, so every later transaction, on any machine whose
 * bound holds, gets a larger timestamp (external consistency). Sleeps (CLOCK_MONOTONIC, never spinning) until
 * fc_real_after(t); costs the interval's width on average. With time left, a bound that makes no promise is
 * asked again at once before the first sleep (a process's first bounded read promises nothing: the second
 * opens the sources). Returns 0, or -1 with errno ETIMEDOUT when t is not
 * certainly past within timeout_ns (including a bound that makes no promise all that time), EINVAL for
 * timeout_ns < 0.
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
 * Coarse clocks (cost: one load, and a branch taken while no real-time updater thread keeps the value: with a
 * keeper that is not real-time, every read, which returns the larger of its value and the kernel's coarse clock
 * (the vDSO's coarse read + ~2-4 ns); the reads of the process's first millisecond of coarse reads, one of which
 * then starts it, or every read with FASTCLOCK_UPDATER=off / after fc_updater_stop(): those return a precise
 * value). The value is 0 exactly when no real-time keeper keeps it.
 */
FC_API int64_t fc__coarse_init(int how);

static inline int64_t fc_mono_coarse_ns(void)
{
	int64_t v = __atomic_load_n(&fc__pub.coarse_mono, __ATOMIC_RELAXED);
	if (FC__UNLIKELY(v == 0))
		return fc__coarse_init(FC__MONO);
	return v;
}

/* Two loads (the monotonic value and the current wall-clock offset); may lag a wall-clock step by one
 * re-anchor period, as the kernel's CLOCK_REALTIME_COARSE lags by one tick (a checked read: a step forward is
 * seen at the kernel's next tick, a step back at the keeper's next wake-up). */
static inline int64_t fc_real_coarse_ns(void)
{
	int64_t v = __atomic_load_n(&fc__pub.coarse_mono, __ATOMIC_RELAXED);
	if (FC__UNLIKELY(v == 0))
		return fc__coarse_init(FC__REAL);
	return v + __atomic_load_n(&fc__pub.coarse_real_off, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------------------------------------------------
 * Capture now, convert later (PPS-style). fc_ticks() costs a counter read and nothing else; keep the raw
 * value and convert it when convenient. A capture converts exactly (to the value a read would have returned
 * when it was taken) while its hand is still in the ring, i.e. for the last FC_HANDS - 1 re-anchors: 6 periods
 * or more without the updater thread, about 4.5 with it (it re-anchors every 3/4 of one). One exception: a
 * capture taken while another thread re-anchored, between that re-anchor's kernel sample and its new hand's
 * publication (~0.5 us, longer if that thread was preempted there), converts with the new hand, which continues
 * the old one at or above it (8 of 2 M captures here at the default period with the updater: up to 8 ns). A capture
 * newer than the current hand's period (a program that only captures and converts) re-anchors first, as a
 * read would; one in no hand's window converts with the nearest anchor, or against a fresh kernel sample
 * when no re-anchor can run (error ~1e-7 x the distance). On the kernel backend fc_ticks() returns
 * CLOCK_MONOTONIC nanoseconds: mono conversion is the capture itself, real adds the kernel's current
 * REALTIME - MONOTONIC offset. A capture taken on one backend and converted after a run-time demotion to the
 * other converts wrongly: the demotion is counted in fc_status().discontinuities. Start-up never makes a capture
 * convert wrongly, and no fc_ticks() waits for it: on x86-64, captures taken before the counter's trust check
 * (due 50 us after the first call) are CLOCK_MONOTONIC ns ("early captures": the first fc_ticks() costs one
 * kernel read), and conversions tell them from the counter ticks taken after it by value (the counter's count
 * leads the kernel's ns count by ~69 s or more, or captures are not early); captures stay ordered across the
 * change (early ones are below every counter capture). A counter that goes back below its value at the trust
 * check (a reset on resume) makes early captures convert as counter ticks, as any capture across a counter
 * discontinuity converts wrongly. Elsewhere the first fc_ticks() takes the trust check (a sysfs read and one
 * CPUID). It never waits for the rate: a counter capture taken before the first counter hand converts between
 * the trust check's kernel sample and a fresh one (error about two brackets' width, tens of ns).
 */
FC_API uint64_t fc__ticks_kernel(void);

/* Raw counter, ordered. */
static inline uint64_t fc_ticks(void)
{
	const struct fc_hand *th = __atomic_load_n(&fc__pub.current, __ATOMIC_ACQUIRE);
	if (FC__UNLIKELY(FC__LOAD(th->stale_ticks) == 0))
		return fc__ticks_kernel();
	return fc__counter_ordered();
}

/* Raw counter, relaxed. */
static inline uint64_t fc_ticks_relaxed(void)
{
	const struct fc_hand *th = __atomic_load_n(&fc__pub.current, __ATOMIC_ACQUIRE);
	if (FC__UNLIKELY(FC__LOAD(th->stale_ticks) == 0))
		return fc__ticks_kernel();
	return fc__counter_relaxed();
}

FC_API int64_t fc_ticks_to_mono_ns(uint64_t ticks);
FC_API int64_t fc_ticks_to_real_ns(uint64_t ticks);

/* ---------------------------------------------------------------------------------------------------------
 * Drop-in replacements.
 * fc_clock_gettime: CLOCK_REALTIME and CLOCK_MONOTONIC from the counter; their _COARSE variants from
 * fastclock's coarse clocks (at most about max(period, 50 us) old, where the kernel's are up to a tick old; they start
 * the updater thread as fc_mono_coarse_ns does); every other id goes to the kernel. Returns -1
 * with errno EINVAL for an id the kernel rejects (checked first, as the kernel does), EFAULT for a NULL ts.
 * fc_gettimeofday: CLOCK_REALTIME in microseconds; a NULL tv is allowed (as in the kernel); tz, if given,
 * is filled by the kernel.
 * Declared where <time.h> declares clock_gettime's types: in strict ISO modes (-std=c99/c11/c17, no
 * _POSIX_C_SOURCE) it hides clockid_t and CLOCK_*, and clock_gettime itself, so these drop-ins are left out
 * too; define _POSIX_C_SOURCE >= 199309L (or _GNU_SOURCE) before the first #include to have them.
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
	/* One inlined reader for both ids (`how` folds to a constant when id is one); always inlined, as a call
	 * would cost what the division saved (gcc otherwise keeps an out-of-line copy where a TU calls it often). */
	const unsigned how = id == CLOCK_REALTIME ? FC__HR_TS_REAL : FC__HR_TS_MONO;
	if (FC__LIKELY(ts != NULL) && (id == CLOCK_MONOTONIC || id == CLOCK_REALTIME) &&
	    FC__LIKELY(fc__hand_read(&fc__pub, fc__counter_ordered, how, &s, &ns, NULL))) {
		fc__carry(&s, &ns, 1000000000u);
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
	    FC__UNLIKELY(!fc__hand_read(&fc__pub, fc__counter_ordered, FC__HR_TV_REAL, &s, &us, NULL)))
		return fc__gettimeofday_other(tv, tz);
	fc__carry(&s, &us, 1000000u);
	tv->tv_sec = (time_t)s;
	tv->tv_usec = (suseconds_t)us;
	return 0;
}

#endif /* CLOCK_MONOTONIC && CLOCK_REALTIME */

/* Valkey-style helpers: CLOCK_REALTIME in us / ms, CLOCK_MONOTONIC in us (counter read). */
static inline int64_t fc_ustime(void) { return fc_real_ns() / 1000; }
static inline int64_t fc_mstime(void) { return fc_real_ns() / 1000000; }
static inline int64_t fc_mono_us(void) { return fc_mono_ns() / 1000; }

/* ---------------------------------------------------------------------------------------------------------
 * Control and status.
 */

/* Initialise now, counter checked and calibrated, instead of on first use (idempotent; about 1 ms the first
 * time: the rate is measured over 1 ms). Returns 0. */
FC_API int fc_init(void);

/* Re-anchor period in ns: 1 us .. 1 s. Returns -1/EINVAL (and changes nothing) outside that range. An updater
 * thread that follows the clock's period (fc_updater_start(0), or started by a coarse read) takes the new one at
 * its next wake-up, up to 3/4 of the old period later: until then the coarse clocks may be that old. */
FC_API int fc_set_period_ns(int64_t period_ns);

/* Background thread that re-anchors every 3/4 of period_ns (0: the clock's period, following
 * fc_set_period_ns), at least 50 us apart, at absolute deadlines, and keeps the coarse clocks at most about
 * max(period_ns, 50 us) old. Readers then never take the slow path where period_ns is at most the clock's period
 * and at least 67 us (at shorter periods they re-anchor between its wake-ups, as they do without it). A coarse read
 * 1 ms or more after the process's first starts it by itself (unless FASTCLOCK_UPDATER=off); fc_updater_start()
 * then takes it over and sets its period (used from its next wake-up). In a child after fork() it is started again
 * at once. The thread is named "fastclock", runs with every signal blocked (a signal sent to the process is
 * handled by the program's threads), and stores the coarse clocks' first value at its own first run (until then
 * coarse reads are precise reads); the thread that starts it lends it its EEVDF slice across pthread_create so
 * it runs soon, and gets its own back. Returns 0, or -1 with errno (EINVAL:
 * bad period; EALREADY: already started by fc_updater_start; or pthread_create's error).
 * fc_updater_stop() joins it and keeps coarse reads from starting it again (they then return precise
 * values); returns 0, or -1/ESRCH if none runs. */
FC_API int fc_updater_start(int64_t period_ns);
FC_API int fc_updater_stop(void);

enum fc_backend {
	FC_BACKEND_COUNTER = 1, /* hardware counter, re-anchored to the kernel */
	FC_BACKEND_KERNEL = 2,  /* clock_gettime on every read */
};

enum fc_freq_source {
	FC_FREQ_NONE = 0,
	FC_FREQ_PERF = 1,    /* no longer used (the perf_event mmap page: 21 ms to open in a VM); kept for the ABI */
	FC_FREQ_CPUID = 2,   /* no longer used alone: CPUID 0x15 / 0x40000010 only cross-check the measurement */
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
	/* The source of fc_real_bounded's UTC part (FASTCLOCK_BOUND_SOURCE; docs/ACCURACY.md "Bound sources"). */
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

/* Fill *out. Returns 0, or -1/EFAULT for NULL. Cheap enough for a metrics endpoint, not for a hot loop. */
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
