/*
 * fastclock — the writer (floor 2 of the clock core): one re-anchor is sample -> tracker -> NTP state ->
 * next hand -> publish, under the clock's try-lock; and the switch to a kernel hand when the counter is no
 * longer trusted.
 *
 * Flow of one re-anchor: a reader finds its hand stale -> fc__windup() takes the try-lock -> bracketed
 * kernel samples (sample.c) -> tracker (track.c, pure) -> next hand's parameters -> publish (hands.c) ->
 * unlock. No thread is needed: the first reader past the period does it. The optional updater thread
 * (updater.c) calls the same function.
 *
 * Owns: the writer lock's protocol, the first counter hand's publication (fc__windup_first_hand_locked: start.c,
 * above this file, calls it with the rate it measured), the periodic trust re-check. Nothing here knows the
 * start-up: while the clock starts its hand is a kernel hand, and the callers that find it starting step it
 * through start.c.
 * May call: state.c, hands.c, track.c, sample.c, trust.c, ntp.c (through the source). The UTC bound only through
 * c->bound (state.h's struct fc_bound_ops, installed by src/bounded.c on the first bounded read).
 */
#include <sched.h>
#include <string.h>

#include "section.h"
#include "config.h"
#include "hands.h"
#include "ntp.h"
#include "sample.h"
#include "state.h"
#include "str.h"
#include "track.h"
#include "trust.h"
#include "units.h"
#include "windup.h"

/* The kernel's NTP state (refreshed at most once a second) is also read at every chore at most this often, for
 * its tick: adjtimex is a system call, about a microsecond on a VM; below 100 us the tick's allowance is a few
 * ns. */
#define NTP_TICK_EVERY_NS 100000
/* The clocksource is re-checked every c->trust_every re-anchors (init.c: 1024, about a second at the default
 * period) and at least this often of the kernel's time: at a 1 s period 1024 re-anchors are 17 minutes, for
 * which a switch to a clocksource the bound does not cover (jiffies) went unseen. */
#define TRUST_EVERY_NS NS_PER_SEC
/* The kernel's maxerror grows by 500 us each second (MAXFREQ, kernel/time/ntp.c): 500 ppm. */
#define NTP_GROWTH_DIV 2000
/* Read the kernel's NTP state at most this often (adjtimex is a real syscall, ~0.3 us). */
#define NTP_EVERY_NS 1000000000LL

/* ---- the clock's cached copy of the kernel's NTP state ---------------------------------------------------- */
void fc__windup_refresh_ntp_locked(struct fc_clock *c, int64_t now)
{
	if (c->have_ntp && now - c->ntp_at < NTP_EVERY_NS)
		return;
	if (c->src.ntp)
		c->src.ntp(c->src.ctx, &c->ntp);
	else
		c->ntp = (struct fc_ntp){.sync = FC_SYNC_UNKNOWN};
	c->ntp_at = now;
	c->have_ntp = 1;
}

static uint64_t mult_from_hz(uint64_t hz)
{
	return (uint64_t)(((unsigned __int128)NS_PER_SEC << 32) / hz);
}

static uint64_t period_ticks(const struct fc_clock *c)
{
	return (uint64_t)(((unsigned __int128)c->period_ns << 32) / c->track.mult_est);
}

/* ---- the writer lock ------------------------------------------------------------------------------------ */
/* Try-lock: acquire pairs with the previous writer's release in unlock, so this writer sees the ring and
 * tracker state as the last one left them. */
/* The writer mark is raised before the compare-and-swap and lowered after the release: a signal that lands
 * between the two (the lock held, the mark not yet set) would otherwise wait for its own thread. A counter,
 * not a flag, so a handler's own attempt nested inside restores it exactly. */
FC__START_TEXT int fc__windup_trylock(struct fc_clock *c)
{
	int expect = 0;
	fc__in_writer++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* the mark is set, for this thread's handlers, before the CAS */
	if (!__atomic_compare_exchange_n(&c->lock, &expect, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		fc__in_writer--;
		return 0;
	}
	fc__lock_mine = 1; /* for the fork handler (init.c), after the lock is ours */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return 1;
}

FC__START_TEXT void fc__windup_unlock(struct fc_clock *c)
{
	fc__lock_mine = 0; /* before the release: a fork child then sees the lock free or frees it itself */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&c->lock, 0, __ATOMIC_RELEASE); /* pairs with fc__windup_trylock's acquire */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);         /* and only then the mark is lowered */
	fc__in_writer--;
}

void fc__windup_lock(struct fc_clock *c)
{
	while (!fc__windup_trylock(c))
		sched_yield();
}

/* The kernel's NTP state for clocks without a bound source (the simulations' and tests'): its maxerror grown at
 * 500 ppm to the end of the hand's life, read when poll (the chores), else its cached copy. */
static void bound_from_ntp(struct fc_clock *c, struct fc_hand *p, int64_t now, int64_t life_ns, int poll)
{
	if (poll)
		fc__windup_refresh_ntp_locked(c, now);
	p->utc_err_ns = c->ntp.maxerror_ns ? c->ntp.maxerror_ns + (now - c->ntp_at + life_ns) / NTP_GROWTH_DIV : 0;
	p->utc_corr_ns = 0;
	p->sync_status = c->ntp.sync;
}

/* A hand of a clock whose bound nobody has asked for: its readers take the bounded slow path (src/bounded.c). */
static void bound_unasked(struct fc_hand *p)
{
	p->utc_err_ns = FC_BOUND_NOTHING;
	p->utc_corr_ns = 0;
	p->sync_status = FC_SYNC_UNASKED;
}

/* The hand's bound fields through the seam, or without one. */
static void bound_fields(struct fc_clock *c, struct fc_hand *p, int64_t now, int64_t life_ns, int poll)
{
	const struct fc_bound_ops *ops = __atomic_load_n(&c->bound, __ATOMIC_ACQUIRE); /* bounded.c's release */
	if (ops)
		ops->stamp(c, p, now, life_ns, poll);
	else if (c->bound_lazy)
		bound_unasked(p);
	else
		bound_from_ntp(c, p, now, life_ns, poll);
}

void fc__windup_bound_kernel_locked(struct fc_clock *c, struct fc_hand *p, int64_t now, int64_t life_ns)
{
	const struct fc_bound_ops *ops = __atomic_load_n(&c->bound, __ATOMIC_ACQUIRE);
	if (!ops || !ops->first(c, p))
		bound_fields(c, p, now, life_ns, 1);
}

int fc__windup_bound_cached(struct fc_clock *c, struct fc_hand *p, int64_t now, int64_t life_ns)
{
	const struct fc_bound_ops *ops;
	int ok;
	if (!fc__windup_trylock(c))
		return 0;
	ops = __atomic_load_n(&c->bound, __ATOMIC_ACQUIRE);
	/* nothing polled yet: no counter hand yet (its first stamp reads the NTP state), or no bound asked for on the
	 * global clock; a source's own last poll is ops->cached's to judge */
	ok = ops || (!c->bound_lazy && c->have_ntp);
	if (ok) {
		p->real_ns = fc__kernel_ns(c, CLOCK_REALTIME); /* for a leap second's window (near_midnight) */
		if (ops)
			ok = ops->cached(c, p, now, life_ns);
		else
			bound_from_ntp(c, p, now, life_ns, 0);
	}
	fc__windup_unlock(c);
	return ok;
}

/* Stamp the hand with the bound vs UTC over its lifetime, and the tracker's verdict. Its life is its window
 * (valid_ticks) in the kernel's ns: at most its slope plus its rate allowance over it, and its error at both
 * ends, while (a) holds; and at least P + P/8. More than that on a counter so slow that the window's floor of 8
 * ticks (track.c) is longer: 9 us on a 1 MHz counter at a 1 us period. */
static void stamp_utc_bound(struct fc_clock *c, struct fc_hand *p, int64_t now, int poll)
{
	struct fc_ntp n;
	const __int128 window =
		((__int128)p->valid_ticks * ((__int128)p->mult + p->err_mult) >> 32) + 2 * (__int128)p->mono_err_ns;
	const int64_t longest = 4 * NS_PER_SEC; /* 8 ticks of a 2 Hz counter: a tracker's hand never spans more */
	int64_t life = c->period_ns + c->period_ns / 8;
	if (window > life)
		life = window < longest ? (int64_t)window : longest;
	bound_fields(c, p, now, life, poll);
	/* the tracker's verdict (DISRUPTED while it is, or a kernel leap second inside the hand's window) over the
	 * source's status, or over FC_SYNC_UNASKED (which it leaves as it is otherwise) */
	n = c->ntp;
	n.sync = p->sync_status;
	p->sync_status = fc__track_sync(&c->track, p, &n);
}

/* The long-baseline rate (struct fc_clock, rate_long): a baseline of at least LONG_RATE_MIN_NS keeps two
 * brackets' noise (~40 ns) under 40 ppm; one of at most LONG_RATE_MAX_NS follows an NTP frequency change
 * within a second. A discontinuity restarts it. */
#define LONG_RATE_MIN_NS 1000000LL
#define LONG_RATE_MAX_NS 1000000000LL
static void long_rate_update(struct fc_clock *c, const struct fc_sample *s)
{
	int64_t dm;
	uint64_t dc;
	if (!c->have_long_s || c->track.disrupted) {
		c->long_s = *s;
		c->have_long_s = !c->track.disrupted;
		return;
	}
	dm = s->mono - c->long_s.mono;
	dc = (s->c_mid - c->long_s.c_mid) & c->src.mask;
	if (dm < LONG_RATE_MIN_NS || dc == 0 || dc > (c->src.mask >> 1))
		return;
	__atomic_store_n(&c->rate_long, (uint64_t)(((unsigned __int128)(uint64_t)dm << 32) / dc), __ATOMIC_RELAXED);
	if (dm > LONG_RATE_MAX_NS)
		c->long_s = *s;
}

/* ---- hands ------------------------------------------------------------------------------------------------ */
void fc__windup_set_kernel_locked(struct fc_clock *c, const char *why)
{
	const struct fc_hand *cur = __atomic_load_n(&c->pub->current, __ATOMIC_RELAXED);
	struct fc_hand p = {0};

	/* Nothing the counter hand returned may be passed by a kernel read going back: keep its line, so kernel
	 * reads are raised to what it would return at the current counter (kernel_read), and at most to its
	 * largest possible value, until the kernel's clock catches up (within about one period). */
	p.base_ticks = cur->base_ticks;
	p.mask = cur->mask;
	p.mult = cur->mult;
	p.frac = cur->frac;
	p.mono_ns = cur->mono_ns;
	p.valid_ticks = cur->valid_ticks;
	p.real_off_ns = cur->real_off_ns;
	if (cur->flags & FC_HAND_KERNEL)
		p.floor_ns = cur->floor_ns;
	else
		p.floor_ns = (int64_t)(fc__track_value_fx(cur, cur->base_ticks + cur->valid_ticks) >> 32) + 1;
	p.flags = FC_HAND_KERNEL;
	p.stale_ticks = 0; /* every read takes the slow path */
	fc__hands_publish(c->pub, &p);
	if (c->backend == FC_BACKEND_COUNTER)
		c->track.discontinuities++;
	__atomic_store_n(&c->backend, FC_BACKEND_KERNEL, __ATOMIC_RELAXED);
	fc__copy_str(c->reason, sizeof(c->reason), why);
	__atomic_fetch_add(&c->reanchors, 1, __ATOMIC_RELAXED);
}

/* ---- the first counter hand ---------------------------------------------------------------------------- */
void fc__windup_first_hand_locked(struct fc_clock *c, const struct fc_sample *s0, const struct fc_sample *s,
				  uint64_t hz)
{
	const struct fc_hand *cur = __atomic_load_n(&c->pub->current, __ATOMIC_RELAXED);
	struct fc_hand p;
	c->freq_source = FC_FREQ_MEASURED;
	c->counter_hz_initial = hz;
	fc__track_init(&c->track, c->src.mask, 1, mult_from_hz(hz));
	fc__track_hint_measured(&c->track, s0, s);
	fc__track_set_period(&c->track, period_ticks(c));
	/* From the kernel hand: the tracker starts at the kernel's upper bound, so no kernel read another thread
	 * made before is ahead of the first counter value (track.c, "Leaving the kernel backend"). */
	fc__track_update(&c->track, cur, s, s->c_mid, &p);
	long_rate_update(c, s0);
	long_rate_update(c, s);
	c->have_ntp = 0;
	stamp_utc_bound(c, &p, s->mono, 1);
	c->chores_at = s->mono;
	fc__hands_publish(c->pub, &p);
	__atomic_store_n(&c->backend, FC_BACKEND_COUNTER, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->reanchors, 1, __ATOMIC_RELAXED);
}

/* The chores: the clocksource re-check (every c->trust_every of them, and at least every TRUST_EVERY_NS), the
 * kernel's NTP state (adjtimex: its tick decides the tracker's allowance, and clocks without a bound source take
 * their bound from it) and the bound source's poll. What a re-anchor does besides its one kernel sample, done off
 * the read path: by the keeper (updater.c) at each of its wake-ups, by fc_init and fc_status, and by a reader's
 * re-anchor only where nobody did them for CHORES_MAX_AGE_NS (no keeper), or at every re-anchor on a clock with
 * chores_max_age_ns 0 (the simulations' and tests' clocks). 0: the counter is no longer trusted (the kernel
 * hand is published). */
static int chores_locked(struct fc_clock *c, int64_t now)
{
	if (c->trust_every && c->trust_at == 0)
		c->trust_at = now;
	if (c->trust_every && (++c->since_trust >= c->trust_every || now - c->trust_at >= TRUST_EVERY_NS)) {
		char why[160], cs[32];
		int ok = fc__trust_check(why, sizeof(why), cs, sizeof(cs));
		c->since_trust = 0;
		c->trust_at = now;
		__atomic_fetch_add(&c->trust_checks, 1, __ATOMIC_RELAXED);
		fc__copy_str(c->clocksource, sizeof(c->clocksource), cs);
		if (!ok && !c->forced && c->backend == FC_BACKEND_COUNTER) {
			fc__windup_set_kernel_locked(c, why);
			return 0;
		}
	}
	/* The NTP state at every chore, at most every NTP_TICK_EVERY_NS (adjtimex, modes 0: a read). */
	if (c->have_ntp && now - c->ntp_at >= NTP_TICK_EVERY_NS)
		c->have_ntp = 0;
	fc__windup_refresh_ntp_locked(c, now);
	__atomic_store_n(&c->chores_at, now, __ATOMIC_RELAXED);
	return 1;
}

static int chores_due(const struct fc_clock *c, int64_t now)
{
	return c->chores_max_age_ns == 0 || now - c->chores_at >= c->chores_max_age_ns;
}

static void fine_period_locked(struct fc_clock *c)
{
	if (__atomic_load_n(&c->period_auto, __ATOMIC_RELAXED) != FC_PERIOD_FIXED)
		fc__windup_set_period_locked(c, FC_FINE_PERIOD_NS);
}

/* The fine period, asked for by a reader that could not take the lock (bounded.c, read.c): set by the next writer
 * that re-anchors or does the chores (the keeper's turns, on either backend). */
static void fine_if_wanted_locked(struct fc_clock *c)
{
	if (FC__UNLIKELY(__atomic_load_n(&c->period_auto, __ATOMIC_RELAXED) == FC_PERIOD_WANT_FINE))
		fine_period_locked(c);
}

static void windup_locked(struct fc_clock *c, int chores)
{
	const struct fc_hand *cur = __atomic_load_n(&c->pub->current, __ATOMIC_RELAXED);
	struct fc_sample s;
	struct fc_hand p, kview;

	fine_if_wanted_locked(c);
	if (c->backend != FC_BACKEND_COUNTER) {
		if (chores) /* the clocksource re-check (a kernel hand's way back is fc_status's, status.c) */
			(void)chores_locked(c, fc__kernel_ns(c, CLOCK_MONOTONIC_COARSE));
		return;
	}
	/* The one kernel sample: the only system call (none, through the vDSO) a reader's re-anchor makes */
	if (fc__sample_take(&c->src, FC_SAMPLE_TRIES, &s) != 0) {
		fc__windup_set_kernel_locked(c, "the kernel's clock could not be sampled against the counter");
		return;
	}
	chores = chores || chores_due(c, s.mono);
	if (chores && !chores_locked(c, s.mono))
		return;
	/* The tick, when the chores read it: the tracker narrows its allowance only while reads cover its whole rate
	 * window (track.c, kernel_swing), so a re-anchor without one errs wide */
	if (chores)
		fc__track_note_ntp(&c->track, &c->ntp, c->ntp_at);
	/* Past a probe hand's window readers were served the kernel's clock, raised to the hand's largest value
	 * (read.c): the next hand starts as one that leaves the kernel backend, at or above both */
	if ((cur->flags & FC_HAND_PROBE) && ((s.c_mid - cur->base_ticks) & cur->mask) >= cur->valid_ticks) {
		kview = *cur;
		kview.flags = FC_HAND_KERNEL;
		kview.floor_ns = (int64_t)(fc__track_value_fx(cur, cur->base_ticks + cur->valid_ticks) >> 32) + 1;
		cur = &kview;
	}
	/* Anchor at the sample itself, not at a later counter read: nothing between the two is observed, and a
	 * suspend or a long preemption there would be extrapolated as running time (found by fuzz_track). */
	fc__track_update(&c->track, cur, &s, s.c_mid, &p);
	long_rate_update(c, &s);
	stamp_utc_bound(c, &p, s.mono, chores);
	/* the keeper asks whether anyone reads (updater.c) */
	if (__atomic_load_n(&c->keeper.probing, __ATOMIC_RELAXED)) {
		p.flags |= FC_HAND_PROBE;
		p.stale_ticks = 1;
	}
	fc__hands_publish(c->pub, &p);
	__atomic_fetch_add(&c->reanchors, 1, __ATOMIC_RELAXED);
}

static int windup(struct fc_clock *c, const struct fc_hand *seen, int chores)
{
	/* Never wait: a reader that loses just uses its hand. */
	if (!fc__windup_trylock(c))
		return 0;
	if (seen && __atomic_load_n(&c->pub->current, __ATOMIC_RELAXED) != seen) {
		fc__windup_unlock(c);
		return 0;
	}
	windup_locked(c, chores);
	fc__windup_unlock(c);
	return 1;
}

int fc__windup(struct fc_clock *c, const struct fc_hand *seen) { return windup(c, seen, 0); }

int fc__windup_with_chores(struct fc_clock *c, const struct fc_hand *seen) { return windup(c, seen, 1); }

void fc__windup_with_chores_locked(struct fc_clock *c)
{
	windup_locked(c, 1);
}

int fc__windup_saw_wall(struct fc_clock *c)
{
	struct fc_hand h;
	uint64_t t, d;
	int64_t k0, k1, v, err;
	if (c->src.kernel(c->src.ctx, CLOCK_REALTIME, &k0) != 0)
		return 0;
	(void)fc__hand_snapshot(c->pub, c->src.counter, c->src.ctx, &h, &t);
	if (c->src.kernel(c->src.ctx, CLOCK_REALTIME, &k1) != 0 || (h.flags & FC_HAND_KERNEL))
		return 0;
	d = (t - h.base_ticks) & h.mask;
	if (d >= h.valid_ticks)
		return 0;
	v = fc__hand_at(h.mono_ns, d, h.mult, h.frac) + h.real_off_ns;
	err = fc__hand_at(h.mono_err_ns, d, h.err_mult, 0);
	/* every kernel value of the bracket within the bound: a step the hand missed by more than its bound fails */
	return v - err <= k0 && k1 <= v + err;
}

int fc__windup_chores(struct fc_clock *c)
{
	if (!fc__windup_trylock(c))
		return 0;
	{
		const int64_t now = fc__kernel_ns(c, CLOCK_MONOTONIC);
		struct fc_hand p = {0};
		const struct fc_bound_ops *ops = __atomic_load_n(&c->bound, __ATOMIC_ACQUIRE);
		fine_if_wanted_locked(c);
		if (chores_locked(c, now) && ops && c->backend == FC_BACKEND_COUNTER)
			ops->stamp(c, &p, now, 0, 1); /* the poll, for the next hands' stamps */
	}
	fc__windup_unlock(c);
	return 1;
}

void fc__windup_fine_period(struct fc_clock *c, int wait)
{
	int expect = FC_PERIOD_DEFAULT;
	if (!__atomic_load_n(&c->period_auto, __ATOMIC_RELAXED))
		return;
	if (wait && !fc__in_writer) {
		fc__windup_lock(c);
	} else if (!fc__windup_trylock(c)) {
		/* the next writer sets it: lock-free, async-signal-safe */
		(void)__atomic_compare_exchange_n(&c->period_auto, &expect, FC_PERIOD_WANT_FINE, 0, __ATOMIC_RELAXED,
						  __ATOMIC_RELAXED);
		return;
	}
	fine_period_locked(c);
	fc__windup_unlock(c);
}

void fc__windup_set_period_locked(struct fc_clock *c, int64_t period_ns)
{
	__atomic_store_n(&c->period_ns, period_ns, __ATOMIC_RELAXED); /* the updater reads it unlocked */
	if (c->backend == FC_BACKEND_COUNTER)
		fc__track_set_period(&c->track, period_ticks(c));
	/* fixed from now on; last, so a fork child of a thread stopped before here sets the period again */
	__atomic_store_n(&c->period_auto, FC_PERIOD_FIXED, __ATOMIC_RELAXED);
}
