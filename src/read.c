/*
 * fastclock — the read slow path and the kernel backend (floor 4: public entry points).
 *
 * Everything the inline readers of <fastclock.h> do not do themselves: a stale hand (re-anchor through
 * windup.c, or wait for the thread that does), a counter behind its hand's anchor, kernel hands (fail
 * closed: clock_gettime on every read, raised to the floor the last counter hand left), and the bound of
 * each value for bounded reads (fc__read_global; the bounded entry point is src/bounded.c's).
 *
 * Owns: the slow path's rules past a hand's stale point, the kernel backend's read rule.
 * May call: state.c, windup.c, start.c (a capture's unit, the start-up's steps), ntp.c (the NTP state), init.c.
 * Async-signal-safe: clock_gettime, adjtimex and what windup.c calls; errno is preserved.
 */
#include <errno.h>
#include <sched.h>

#include "section.h"
#include "init.h"
#include "ntp.h"
#include "read.h"
#include "start.h"
#include "state.h"
#include "updater.h"
#include "units.h"
#include "windup.h"

/* Busy-spins (fc__cpu_relax: x86 PAUSE, arm64 YIELD) before a waiting reader (its hand expired while another
 * thread re-anchors) starts yielding the CPU. A re-anchor is a few bracketed kernel reads (sample.c) and the
 * tracker, about a microsecond warm (docs/PERFORMANCE.md); 256 PAUSEs are ~2,500 cycles (~1 us at 2.5 GHz) where PAUSE costs ~10 cycles (Intel before
 * Skylake) and ~36,000 (~14 us) where it costs ~140 (Skylake and later, Intel's optimization manual): a reader
 * whose writer is running gets the new hand without a system call. Past that the writer was likely
 * preempted, and yielding lets it run (on one CPU, spinning on only delays it). */
#define WAIT_SPINS 256
/* A reader whose counter is behind its hand's anchor by less than this (cross-core skew, a relaxed read
 * executed early) gets the anchor's value, as the vDSO clamps; further behind, the counter went back (a VM
 * migration) and the reader re-anchors rather than return a frozen clock until the counter catches up. */
#define SKEW_CLAMP_DIV 64 /* valid_ticks / 64: ~18 us at a 1 ms period, ~280 us at 16 ms */

/* A kernel-backend read. `h` (a reader's copy of the kernel hand; NULL: no floor) carries floor_ns, the
 * largest value the counter hand it replaced could return: readers still holding that hand may return up to
 * it, so a monotonic read is raised to it until the kernel's clock passes it (at most P + P/8 after the
 * switch; one compare after that). *clamp (if not NULL) gets how far the value was raised above the
 * kernel's. */
static int64_t kernel_read(struct fc_clock *c, int how, const struct fc_hand *h, int64_t *clamp)
{
	int64_t k = fc__kernel_ns(c, (how & FC__REAL) ? CLOCK_REALTIME : CLOCK_MONOTONIC), v = k;
	if (!(how & FC__REAL)) {
		if (h && v < h->floor_ns) {
			/* Just left the counter backend, which may have been a little ahead: hold at the largest value
			 * its last hand could return (at most P + P/8 of standing still, once per demotion). Not the
			 * hand's line at the current counter: the counter is what was just found untrustworthy, and
			 * one that wrapped or jumped back into the old window would lead the line below values
			 * already returned (found by fuzz_track). */
			v = h->floor_ns;
		}
	}
	if (clamp)
		*clamp = v - k;
	return v;
}

/* A copy of a hand's value at delta d, and its tracking error there (fc_hand.h's one arithmetic). */
static int64_t hand_value(const struct fc_hand *h, uint64_t d, int how)
{
	return fc__hand_at(h->mono_ns, d, h->mult, h->frac) + ((how & FC__REAL) ? h->real_off_ns : 0);
}

static int64_t hand_err(const struct fc_hand *h, uint64_t d)
{
	return fc__hand_at(h->mono_err_ns, d, h->err_mult, 0);
}

/* How long a kernel-backend bound holds for readers that find the writer lock taken: 1 ms, not the period (a 1 us
 * period would leave them nothing, a 1 s one widen every bound by the source's growth over 1 s); the kernel's
 * maxerror grows 500 ppm, so the holder's own bound is 0.5 us wider for it. */
#define KERNEL_BOUND_LIFE_NS 1000000

/* The kernel's NTP state for a bounded read on the kernel backend: the cached one, refreshed once a second
 * by whoever gets the writer lock. */
static void kernel_bound(struct fc_clock *c, int how, int64_t clamp, struct fc__bound *b)
{
	struct fc_ntp n = {0};
	struct fc_hand p = {0};
	b->track_err_ns = (how & FC__REAL) ? 0 : clamp;
	/* windup.c's try-lock, which marks this thread as the writer: a signal handler landing in the refresh
	 * below reads without waiting for it. */
	if (fc__windup_trylock(c)) {
		/* The bound as a hand's (windup.c): its half-width at the end of a life (KERNEL_BOUND_LIFE_NS), so
		 * that readers that find the lock taken may use it until then */
		const int64_t now = fc__kernel_ns(c, CLOCK_MONOTONIC), life = KERNEL_BOUND_LIFE_NS;
		/* through the bound's seam (a process's first bounded read in auto mode reads nothing, the next opens
		 * the sources: src/bounded.c); refreshes the NTP state */
		fc__windup_bound_kernel_locked(c, &p, now, life);
		/* for readers that find the lock taken: three relaxed stores, then (release) until when they hold; a
		 * reader may pair fields of two refreshes, each a bound of its own until at least that time */
		__atomic_store_n(&c->kernel_utc_err_ns, p.utc_err_ns, __ATOMIC_RELAXED);
		__atomic_store_n(&c->kernel_utc_corr_ns, p.utc_corr_ns, __ATOMIC_RELAXED);
		__atomic_store_n(&c->kernel_sync_status, p.sync_status, __ATOMIC_RELAXED);
		__atomic_store_n(&c->kernel_bound_until, now + life, __ATOMIC_RELEASE);
		fc__windup_unlock(c);
	} else if (c->bound_lazy) {
		/* The last refresh's bound, while it holds (another thread's refresh under way, or this thread's in a
		 * signal handler): it was the bound at its end of life, and the source's bound only grows after it, so
		 * past it (refreshes are as rare as bounded reads) it promises nothing */
		const int64_t until = __atomic_load_n(&c->kernel_bound_until, __ATOMIC_ACQUIRE);
		p.utc_err_ns = __atomic_load_n(&c->kernel_utc_err_ns, __ATOMIC_RELAXED);
		p.utc_corr_ns = __atomic_load_n(&c->kernel_utc_corr_ns, __ATOMIC_RELAXED);
		p.sync_status = __atomic_load_n(&c->kernel_sync_status, __ATOMIC_RELAXED);
		if (fc__kernel_ns(c, CLOCK_MONOTONIC) > until) {
			p.utc_err_ns = FC_BOUND_NOTHING;
			p.utc_corr_ns = 0;
			p.sync_status = FC_SYNC_UNKNOWN;
		}
	} else if (c->src.ntp) {
		c->src.ntp(c->src.ctx, &n);
		p.utc_err_ns = n.maxerror_ns;
		p.sync_status = n.sync;
	}
	b->utc_err_ns = p.utc_err_ns;
	b->utc_corr_ns = p.utc_corr_ns;
	b->sync_status = p.sync_status;
}

/* A reader past its hand's window that may not re-anchor (again), or need not (a parked keeper's probe hand):
 * CLOCK_MONOTONIC raised to the hand's largest value, so nothing this hand returned is passed going back (the
 * next hand starts at or above it too, track.c); CLOCK_REALTIME as the kernel serves it. The tracking bound is
 * the distance raised. The hand's UTC bound was stamped for the end of its window, and the source's only grows
 * after it (a reader preempted after its own re-anchor, at any period: the source's growth over the preemption):
 * the bound now, from the source's last poll as a re-anchor without chores takes it (no system call: the read
 * pays one kernel read, as a reader's re-anchor pays one sample); where the writer lock is taken or nothing was
 * polled, as a kernel-backend read takes it (or no promise where this thread holds the writer lock). The
 * tracker's DISRUPTED stays. */
FC__START_TEXT static int64_t kernel_past_hand(struct fc_clock *c, const struct fc_hand *h, int how,
					       struct fc__bound *b)
{
	const int64_t end = hand_value(h, h->valid_ticks, FC__MONO);
	int64_t v, raised;
	if (b) { /* before the value's read, which is the call's last: the bound holds for KERNEL_BOUND_LIFE_NS after */
		struct fc_hand p = {0};
		if (fc__windup_bound_cached(c, &p, fc__kernel_ns(c, CLOCK_MONOTONIC), KERNEL_BOUND_LIFE_NS)) {
			b->utc_err_ns = p.utc_err_ns;
			b->utc_corr_ns = p.utc_corr_ns;
			b->sync_status = p.sync_status;
		} else {
			kernel_bound(c, how, 0, b);
		}
		if (h->sync_status == FC_SYNC_DISRUPTED)
			b->sync_status = FC_SYNC_DISRUPTED;
	}
	v = fc__kernel_ns(c, CLOCK_MONOTONIC);
	raised = v < end ? end - v : 0;
	if (b)
		b->track_err_ns = raised + 1;
	if (how & FC__REAL)
		return fc__kernel_ns(c, CLOCK_REALTIME);
	return v + raised;
}

/* A bounded CLOCK_REALTIME read of counter hand h at distance d: 1 when the kernel's wall clock as of its last tick
 * is past the hand's value and tracking bound, a forward step the hand was anchored before (fc_hand.h's
 * fc__hand_read_real_bounded, the inline read's same check, which sent it here). Read after the counter; when it is
 * past, judged again at a counter read after it: that wall value is never ahead of the kernel's clock there, so a
 * preemption between the first counter read and the wall's never makes a right hand look passed (a process's
 * first bounded read re-anchored for one, ran the chores and opened the sources). Past the window at the second
 * read: 1 (the caller re-anchors). */
static int wall_moved(const struct fc_clock *c, const struct fc_hand *h, uint64_t d, int how)
{
	int64_t w;
	if (c->src.kernel(c->src.ctx, CLOCK_REALTIME_COARSE, &w) != 0)
		return 0;
	if (fc__wall_within(w, hand_value(h, d, how), hand_err(h, d)))
		return 0;
	d = (c->src.counter(c->src.ctx) - h->base_ticks) & h->mask;
	if (d > (h->mask >> 1) || d >= h->valid_ticks)
		return 1;
	const int64_t v = hand_value(h, d, how), err = hand_err(h, d);
	return !fc__wall_within(w, v, err);
}

/* The first coarse read of a process does not start the keeper: creating a thread costs tens of us, and a
 * short-lived program never needs it. Coarse reads are precise reads until one comes KEEPER_DEFER_NS
 * after the first; that one starts it (once). 1 ms: at most a millisecond of precise reads (~20 ns each)
 * instead of one load, for a program that keeps reading. */
#define KEEPER_DEFER_NS 1000000
/* A start that failed (pthread_create: EAGAIN in a container at its pids.max or a user at RLIMIT_NPROC, EPERM
 * under a seccomp filter) is tried again a second later, not at the next coarse read: every coarse read tried it
 * (two failed thread creations each in real-time mode: 101494 in 200 ms, 3.2 us a coarse read). Coarse reads are
 * precise reads meanwhile. */
#define KEEPER_RETRY_NS 1000000000

static int keeper_due(const struct fc_clock *c, int64_t *first_at)
{
	int64_t first = __atomic_load_n(first_at, __ATOMIC_RELAXED), now = fc__kernel_ns(c, CLOCK_MONOTONIC);
	if (first == 0) {
		__atomic_compare_exchange_n(first_at, &first, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		return 0;
	}
	return now - first >= KEEPER_DEFER_NS;
}

/* A reader re-anchored (the global clock): no keeper keeps its hands. The first such re-anchor KEEPER_DEFER_NS
 * after the process's first starts one (a creation costs tens of us: never on a first call, nor in a short-lived
 * program); it parks while nobody reads (updater.c). A parked keeper sees the re-anchor by itself. */
static void reader_reanchored(struct fc_clock *c)
{
	if (c != fc__global_clock() || !c->updater_auto || __atomic_load_n(&c->keeper.no_auto, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&c->keeper.running, __ATOMIC_RELAXED) || fc__keeper_starting_here() || fc__in_writer)
		return;
	if (keeper_due(c, &c->keeper.first_reanchor) && fc__keeper_auto_start(c, 3) < 0)
		__atomic_store_n(&c->keeper.first_reanchor,
				 fc__kernel_ns(c, CLOCK_MONOTONIC) + KEEPER_RETRY_NS - KEEPER_DEFER_NS,
				 __ATOMIC_RELAXED);
}

FC__START_TEXT int64_t fc__read_slow(struct fc_clock *c, int how, struct fc__bound *b)
{
	unsigned spins = 0;
	int counted = 0, wound = 0;

	for (;;) {
		/* The reader protocol (fc_hand.h): every field of the current hand, and the counter unless it is a
		 * kernel hand, under one validation; this path also needs the validity window, the bound and the
		 * kernel-hand fields. */
		struct fc_hand h;
		uint64_t t, d;
		const struct fc_hand *th = fc__hand_snapshot(c->pub, c->src.counter, c->src.ctx, &h, &t);

		if (h.flags & FC_HAND_KERNEL) {
			int64_t v, clamp;
			v = kernel_read(c, how, &h, &clamp);
			if (b)
				kernel_bound(c, how, clamp, b);
			/* Starting: the next step (trust check, rate samples) when due; one reader takes it */
			if (FC__UNLIKELY(!fc__start_done(c)) && !fc__in_writer)
				(void)fc__start_step(c, th, (how & FC__REAL) ? fc__kernel_ns(c, CLOCK_MONOTONIC) : v);
			return v;
		}
		if (b) {
			b->utc_err_ns = h.utc_err_ns;
			b->utc_corr_ns = h.utc_corr_ns;
			b->sync_status = h.sync_status;
		}
		d = (t - h.base_ticks) & h.mask;
		if (b && (how & FC__REAL) && d <= (h.mask >> 1) && d < h.valid_ticks && wall_moved(c, &h, d, how)) {
			/* The kernel's wall clock stepped forward past this hand (a resume with the counter stopped, a
			 * settimeofday): a bounded read never answers from it. Re-anchor; where this thread may not (the
			 * writer lock is taken, or held by this thread under a signal handler), or did already (a step
			 * right after its own re-anchor's sample: checked again, never looped), the kernel's clock. */
			if (!wound && !fc__in_writer && fc__windup(c, th)) {
				wound = 1;
				continue;
			}
			return kernel_past_hand(c, &h, how, b);
		}
		if ((h.flags & FC_HAND_PROBE) && d <= (h.mask >> 1)) {
			/* The keeper asks whether anyone still reads (updater.c): say so once; use the hand within its
			 * window. Past it the keeper is parked (or late): it re-anchors when it sees this read, and
			 * this read pays one kernel read, raised to the hand's largest value (the keeper's next hand
			 * starts above the kernel's, windup.c). With no keeper any more, re-anchor as ever. */
			if (!__atomic_load_n(&c->keeper.probe_seen, __ATOMIC_RELAXED))
				__atomic_store_n(&c->keeper.probe_seen, 1, __ATOMIC_RELAXED);
			if (d < h.valid_ticks) {
				if (b)
					b->track_err_ns = hand_err(&h, d);
				return hand_value(&h, d, how);
			}
			if (__atomic_load_n(&c->keeper.running, __ATOMIC_RELAXED) && !wound)
				return kernel_past_hand(c, &h, how, b);
		}
		if (d < h.stale_ticks) { /* another thread re-anchored meanwhile */
			if (b)
				b->track_err_ns = hand_err(&h, d);
			return hand_value(&h, d, how);
		}
		if (!counted) {
			__atomic_fetch_add(&c->slow_paths, 1, __ATOMIC_RELAXED);
			counted = 1;
		}
		if (fc__in_writer && d <= (h.mask >> 1)) {
			/* A signal handler interrupted this thread while it holds the writer lock (a re-anchor,
			 * fc_status, fc_set_period_ns): it cannot re-anchor nor wait. Within the hand's window, use it;
			 * past it, the kernel's clock raised to the hand's largest value. */
			if (d < h.valid_ticks) {
				if (b)
					b->track_err_ns = hand_err(&h, d);
				return hand_value(&h, d, how);
			}
			return kernel_past_hand(c, &h, how, b);
		}
		if (d > (h.mask >> 1)) {
			/* Behind the anchor. A little (skew): clamp. More: the counter went back; re-anchor, or
			 * clamp while another thread does. The bound adds the clamp's distance. */
			uint64_t behind = h.mask - d + 1;
			if (behind >= h.valid_ticks / SKEW_CLAMP_DIV && fc__windup(c, th))
				continue;
			if (b)
				b->track_err_ns = fc__hand_at(h.mono_err_ns, behind, h.mult, 0) + 1;
			return hand_value(&h, 0, how);
		}
		if (wound && d >= h.valid_ticks) {
			/* This reader re-anchored already and the new hand expired meanwhile: the re-anchor took longer
			 * than the period (a 1 us period on a slow or sanitised machine, a slow kernel read).
			 * Re-anchoring again could go on for ever: the kernel's clock, raised to the hand's largest
			 * value. */
			return kernel_past_hand(c, &h, how, b);
		}
		if (fc__windup(c, th)) {
			wound = 1;
			reader_reanchored(c);
			continue;
		}
		if (d < h.valid_ticks) { /* another thread is re-anchoring; this hand is still good */
			if (b)
				b->track_err_ns = hand_err(&h, d);
			return hand_value(&h, d, how);
		}
		if (__atomic_load_n(&c->pub->current, __ATOMIC_RELAXED) != th)
			continue;
		/* Expired while another thread re-anchors: wait for its hand (about 0.5 us). */
		if (spins++ == 0)
			__atomic_fetch_add(&c->waits, 1, __ATOMIC_RELAXED);
		if (spins < WAIT_SPINS)
			fc__cpu_relax();
		else
			sched_yield();
	}
}

int64_t fc__read_slow_ns(struct fc_clock *c, int how) { return fc__read_slow(c, how, NULL); }

/* ---- the global clock's entry points (called by the inline readers) ------------------------------------ */
/* A read from a signal handler must leave errno as it found it (the handler's caller may be between a
 * failing call and its errno check); the slow path's system calls may set it. errno is reached through libc's
 * __errno_location, a call into a page of libc's text that a read after a long pause finds cold (a TLB and a
 * cache miss: docs/PERFORMANCE.md, "Reads after a pause"); its address, fixed for a thread's life, is kept in
 * this thread's own static TLS, which the thread's stack and libc's own calls keep warm. Async-signal-safe: an
 * initial-exec variable, and __errno_location computes an address. */
static FC_TLS int *t_errno;

FC__START_TEXT static inline int *errno_at(void)
{
	int *e = t_errno;
	if (FC__UNLIKELY(e == NULL))
		t_errno = e = &errno;
	return e;
}

FC__START_TEXT static int64_t global_read(int how, struct fc__bound *b)
{
	struct fc_clock *c = fc__global_clock();
	int *const err = errno_at();
	const int saved = *err;
	int64_t v;
	if (FC__LIKELY(fc__ensure_init())) {
		v = fc__read_slow(c, how, b);
	} else { /* a signal handler during its own thread's initialisation: the kernel's clock, unbounded */
		v = fc__kernel_ns(c, (how & FC__REAL) ? CLOCK_REALTIME : CLOCK_MONOTONIC);
		if (b)
			*b = (struct fc__bound){.sync_status = FC_SYNC_UNKNOWN};
	}
	*err = saved;
	return v;
}

FC__START_TEXT int64_t fc__slow_ns(int how) { return global_read(how, NULL); }

FC__START_TEXT int64_t fc__read_global(int how, struct fc__bound *b) { return global_read(how, b); }

FC__START_TEXT uint64_t fc__ticks_kernel(void)
{
	struct fc_clock *c = fc__global_clock();
	int *const err = errno_at();
	const int saved = *err;
	uint64_t t;
	/* A capture's unit (counter ticks or kernel ns) must not change after it is taken: decided by the
	 * start-up's trust step, never by its rate measurement (a counter capture needs no rate; its conversion
	 * does, convert.c). */
	const int ready = fc__ensure_init();
	/* before the trust step: kernel ns, told from counter ticks by value (start.c, "early captures") */
	if (ready && fc__start_capture_early(c, &t))
		;
	else if (ready && fc__start_capture_unit(c) == FC_CAPTURE_COUNTER)
		t = fc__counter_ordered();
	else /* no clock (initialisation failed), or the kernel backend: kernel ns */
		t = (uint64_t)fc__kernel_ns(c, CLOCK_MONOTONIC);
	*err = saved;
	return t;
}

/* ---- the coarse clocks' slow path ---------------------------------------------------------------------- */
/* A checked coarse read: the larger of the keeper's value v (0: none) and the kernel's coarse clock. Both are
 * values of the past that only grow, so the larger only grows too (within a thread), and is never staler than
 * the kernel's coarse clock however long the keeper waits for a CPU. */
static int64_t coarse_checked(const struct fc_clock *c, int64_t v, int how)
{
	const int64_t k = fc__kernel_coarse(how);
	if (how & FC__REAL)
		v += __atomic_load_n(&c->pub->coarse_real_off, __ATOMIC_RELAXED);
	return k > v ? k : v;
}

/* No keeper keeps the coarse clocks (yet): start it when due, else a precise value. Out of line, so that the
 * checked read's path below saves no registers. */
static __attribute__((noinline)) int64_t coarse_unkept(struct fc_clock *c, int how)
{
	int64_t v;
	unsigned spins = 0;
	if (fc__ensure_init() && c->updater_auto && !__atomic_load_n(&c->keeper.no_auto, __ATOMIC_RELAXED)) {
		if (__atomic_load_n(&c->keeper.running, __ATOMIC_RELAXED))
			/* a parked keeper keeps them again */
			__atomic_store_n(&c->keeper.coarse_wanted, 1, __ATOMIC_RELAXED);
		else if (!fc__keeper_starting_here() && keeper_due(c, &c->keeper.first_coarse) &&
			 fc__keeper_auto_start(c, 2) < 0) /* due again KEEPER_RETRY_NS from now (keeper_due) */
			__atomic_store_n(&c->keeper.first_coarse,
					 fc__kernel_ns(c, CLOCK_MONOTONIC) + KEEPER_RETRY_NS - KEEPER_DEFER_NS,
					 __ATOMIC_RELAXED);
	}
	for (;;) {
		int64_t p;
		if ((v = __atomic_load_n(&c->pub->coarse_mono, __ATOMIC_RELAXED)) != 0)
			return (how & FC__REAL) ? v + __atomic_load_n(&c->pub->coarse_real_off, __ATOMIC_RELAXED) : v;
		if ((v = __atomic_load_n(&c->coarse_kept, __ATOMIC_RELAXED)) != 0)
			return coarse_checked(c, v, how);
		/* Another thread is starting the keeper: its first store comes within a sample and a store (the
		 * thread exists already, start_locked; it takes no lock meanwhile). A precise value returned meanwhile
		 * could be above that store: the next read would go back. (On the starting thread itself, a signal
		 * handler: never wait.) After 16 yields, sleep: a SCHED_FIFO reader on the starter's CPU would yield
		 * only to its own priority, and the starter (an ordinary thread) would run only when real-time
		 * throttling let it, up to 0.95 s of every second (sched_rt_runtime_us). */
		if (!fc__keeper_starting_here() && __atomic_load_n(&c->keeper.starting, __ATOMIC_ACQUIRE)) {
			if (++spins % 64 == 0) {
				if (spins <= 16 * 64) {
					sched_yield();
				} else {
					const struct timespec ts = {0, 10000}; /* 10 us; async-signal-safe */
					nanosleep(&ts, NULL);
				}
			}
			continue;
		}
		/* No keeper: a precise value. Checked below only where a coarse read may start the keeper (the first
		 * millisecond of coarse reads): with FASTCLOCK_UPDATER=off or after fc_updater_stop() every coarse read
		 * stays one precise read, and a program that then calls fc_updater_start() while other threads read
		 * coarse clocks has a read in flight across it return a precise value that the keeper's first value may be
		 * below by the length of that read, once. */
		p = (how & FC__REAL) ? fc_real_ns() : fc_mono_ns();
		if (fc__keeper_starting_here() || !c->updater_auto ||
		    __atomic_load_n(&c->keeper.no_auto, __ATOMIC_RELAXED))
			return p;
		/* A keeper may be starting now (a coarse read starts it): if its start began after this read, its
		 * first value was taken after p, so p is never above it; if before, p is dropped and the loop takes
		 * the keeper's value. Orders: the counter read again waits for p's to complete (lfence / isb before
		 * it), the fence puts p before c->keeper.starting's load in the order of start_locked's seq_cst
		 * store. */
		(void)fc__counter_ordered();
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&c->keeper.starting, __ATOMIC_RELAXED) &&
		    !__atomic_load_n(&c->pub->coarse_mono, __ATOMIC_RELAXED) &&
		    !__atomic_load_n(&c->coarse_kept, __ATOMIC_RELAXED))
			return p;
	}
}

/* A coarse clock is about a period old: a process that reads one gets the fine period where the period is the
 * default (config.h). Tried, never waited for (a signal handler may be here): else the next writer sets it (a
 * real-time keeper's coarse reads never come here again). Only once the clock is initialised: before, the lock
 * and the period are the initialisation's (init.c), which another thread may be writing. */
static void coarse_fine_period(struct fc_clock *c)
{
	if (FC__UNLIKELY(__atomic_load_n(&c->period_auto, __ATOMIC_RELAXED)) && fc__ensure_init())
		fc__windup_fine_period(c, 0);
}

/* The coarse clocks' slow path: fc__pub.coarse_mono is 0 (no real-time keeper). */
FC__START_TEXT int64_t fc__coarse_init(int how)
{
	struct fc_clock *c = fc__global_clock();
	const int64_t v = __atomic_load_n(&c->coarse_kept, __ATOMIC_RELAXED);
	coarse_fine_period(c);
	if (FC__LIKELY(v != 0)) /* a keeper without real-time priority: checked against the kernel's */
		return coarse_checked(c, v, how);
	return coarse_unkept(c, how);
}
