/*
 * fastclock — the clock object: lazy initialisation, the slow path, the re-anchor (windup), the kernel
 * backend, the drop-in functions and the status API.
 *
 * Flow of one re-anchor: a reader finds its hand stale -> fc_clock_windup() takes the try-lock -> bracketed
 * kernel samples (sample.c) -> tracker (track.c, pure) -> next hand's parameters -> publish (hands.c) ->
 * unlock. No thread is needed: the first reader past the period does it, which is also what makes the
 * library fork-safe. The optional updater thread (updater.c) calls the same function.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "internal.h"

#define NS_PER_SEC 1000000000LL
/* Read the kernel's NTP state at most this often (adjtimex is a real syscall, ~0.3 us). */
#define NTP_EVERY_NS NS_PER_SEC
/* The kernel's maxerror grows by 500 us each second (MAXFREQ, kernel/time/ntp.c): 500 ppm. */
#define NTP_GROWTH_DIV 2000
/* Re-check the kernel's clocksource every 1024 re-anchors: about once a second at the default period; a
 * sysfs read costs a few us under the writer lock, which readers never wait on. */
#define TRUST_EVERY 1024
/* Busy-spins before a waiting reader (hand expired while another thread re-anchors) starts yielding. */
#define WAIT_SPINS 256

/* Bounded string copy (always terminated). */
static void copy_str(char *dst, size_t n, const char *src)
{
	size_t l = strnlen(src, n - 1);
	memcpy(dst, src, l);
	dst[l] = 0;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__)
	__asm__ __volatile__("pause");
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* ---- the real counter and reference clock ------------------------------------------------------- */
static uint64_t real_counter(void *ctx)
{
	(void)ctx;
	return fc__counter_ordered();
}

static int real_kernel(void *ctx, clockid_t id, int64_t *ns)
{
	struct timespec ts;
	(void)ctx;
	if (clock_gettime(id, &ts) != 0)
		return -1;
	*ns = (int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
	return 0;
}

static const struct fc_source real_source = {real_counter, real_kernel, fc_ntp_read, NULL, ~(uint64_t)0};

/* ---- the global clock ------------------------------------------------------------------------------- */
static struct fc_clock g_clock = {
	.hands = {.boot = {.gen = 1, .flags = FC_HAND_KERNEL, .mask = ~(uint64_t)0}},
};
struct fc_pub fc__pub = {.current = &g_clock.hands.boot};
static int g_state; /* 0: not initialised, 1: initialising, 2: ready */
static __thread int t_in_writer; /* this thread holds a writer lock (a signal handler reading the clock) */
extern int fc__updater_restart_needed;
void fc__updater_after_fork(void);
void fc__updater_restart(void);

struct fc_clock *fc__global_clock(void) { return &g_clock; }

/* ---- helpers ---------------------------------------------------------------------------------------- */
static uint64_t mult_from_hz(uint64_t hz)
{
	return (uint64_t)(((unsigned __int128)NS_PER_SEC << 32) / hz);
}

static uint64_t period_ticks(const struct fc_clock *c)
{
	return (uint64_t)(((unsigned __int128)c->period_ns << 32) / c->track.mult_est);
}

/* clock_gettime(CLOCK_MONOTONIC / CLOCK_REALTIME) cannot fail on Linux with a valid pointer; a seccomp
 * filter on the syscall fallback could make one call fail now and then. Retry: a read that returned 0
 * would be raised to a floor below values already returned (found by fuzz_track). */
#define KERNEL_TRIES 8
static int64_t kernel_ns(const struct fc_clock *c, clockid_t id)
{
	int64_t ns = 0;
	for (int i = 0; i < KERNEL_TRIES; i++)
		if (c->src.kernel(c->src.ctx, id, &ns) == 0)
			break;
	return ns;
}

/* Keep the coarse clocks within one period of the kernel on the kernel backend: at most one store per
 * period, by whichever reader notices first. */
static void coarse_refresh(struct fc_clock *c, int64_t mono, int64_t real)
{
	int64_t old = __atomic_load_n(&c->pub->coarse_mono, __ATOMIC_RELAXED);
	if (mono - old >= c->period_ns) {
		__atomic_store_n(&c->pub->coarse_real_off, real - mono, __ATOMIC_RELAXED);
		__atomic_store_n(&c->pub->coarse_mono, mono, __ATOMIC_RELAXED);
	}
}

/* A kernel-backend read. `h` (a reader's copy of the kernel hand; NULL: no floor) carries floor_ns, the
 * largest value the counter hand it replaced could return: readers still holding that hand may return up to
 * it, so a monotonic read is raised to it until the kernel's clock passes it (at most P + P/8 after the
 * switch; one compare after that). *clamp (if not NULL) gets how far the value was raised above the
 * kernel's. */
static int64_t kernel_read(struct fc_clock *c, int how, const struct fc_hand *h, int64_t *clamp)
{
	int64_t k = kernel_ns(c, (how & FC__REAL) ? CLOCK_REALTIME : CLOCK_MONOTONIC), v = k;
	if (!(how & FC__REAL)) {
		if (h && v < h->floor_ns) {
			/* Just left the counter backend, which may have been a little ahead: hold at the largest value
			 * its last hand could return (at most P + P/8 of standing still, once per demotion). Not the
			 * hand's line at the current counter: the counter is what was just found untrustworthy, and
			 * one that wrapped or jumped back into the old window would lead the line below values
			 * already returned (found by fuzz_track). */
			v = h->floor_ns;
		}
		coarse_refresh(c, v, v + __atomic_load_n(&c->pub->coarse_real_off, __ATOMIC_RELAXED));
	}
	if (clamp)
		*clamp = v - k;
	return v;
}

static void publish_coarse(struct fc_clock *c, const struct fc_hand *h)
{
	__atomic_store_n(&c->pub->coarse_real_off, h->real_off_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&c->pub->coarse_mono, h->mono_ns, __ATOMIC_RELAXED);
}

/* ---- the writer --------------------------------------------------------------------------------------- */
/* Refresh the cached NTP state if it is a second old, and stamp the hand with the kernel's bound vs UTC,
 * grown at 500 ppm over the cache age plus one period (the hand's lifetime). */
static void refresh_ntp(struct fc_clock *c, int64_t now)
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

static void set_ntp_fields(struct fc_clock *c, struct fc_hand *p, int64_t now)
{
	refresh_ntp(c, now);
	p->ntp_err_ns = c->ntp.maxerror_ns ? c->ntp.maxerror_ns + (now - c->ntp_at + c->period_ns) / NTP_GROWTH_DIV : 0;
	p->sync_status = c->track.disrupted ? FC_SYNC_DISRUPTED : c->ntp.sync;
}

void fc_clock_set_kernel_locked(struct fc_clock *c, const char *why)
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
		p.floor_ns = (int64_t)(fc_hand_value_fx(cur, cur->base_ticks + cur->valid_ticks) >> 32) + 1;
	p.flags = FC_HAND_KERNEL;
	p.stale_ticks = 0; /* every read takes the slow path */
	fc_hands_publish(c->pub, &p);
	if (c->backend == FC_BACKEND_COUNTER)
		c->track.discontinuities++;
	c->backend = FC_BACKEND_KERNEL;
	copy_str(c->reason, sizeof(c->reason), why);
	__atomic_fetch_add(&c->reanchors, 1, __ATOMIC_RELAXED);
}

static void windup_locked(struct fc_clock *c)
{
	const struct fc_hand *cur = __atomic_load_n(&c->pub->current, __ATOMIC_RELAXED);
	struct fc_sample s;
	struct fc_hand p;
	uint64_t t_a;

	if (c->trust_every && ++c->since_trust >= c->trust_every) {
		char why[160], cs[32];
		int ok = fc_trust_check(why, sizeof(why), cs, sizeof(cs));
		c->since_trust = 0;
		__atomic_fetch_add(&c->trust_checks, 1, __ATOMIC_RELAXED);
		copy_str(c->clocksource, sizeof(c->clocksource), cs);
		if (!ok && !c->forced && c->backend == FC_BACKEND_COUNTER) {
			fc_clock_set_kernel_locked(c, why);
			return;
		}
	}
	if (c->backend != FC_BACKEND_COUNTER)
		return;
	if (fc_sample_take(&c->src, FC_SAMPLE_TRIES, &s) != 0) {
		fc_clock_set_kernel_locked(c, "the kernel's clock could not be sampled against the counter");
		return;
	}
	/* Anchor at the sample itself, not at a later counter read: nothing between the two is observed, and a
	 * suspend or a long preemption there would be extrapolated as running time (found by fuzz_track). */
	t_a = s.c_mid;
	fc_track_update(&c->track, cur, &s, t_a, &p);
	set_ntp_fields(c, &p, s.mono);
	fc_hands_publish(c->pub, &p);
	publish_coarse(c, &p);
	__atomic_fetch_add(&c->reanchors, 1, __ATOMIC_RELAXED);
}

int fc_clock_windup(struct fc_clock *c, const struct fc_hand *seen)
{
	int expect = 0;
	/* Try-lock: acquire pairs with the previous writer's release below, so this writer sees the ring and
	 * tracker state as the last one left them. Never wait: a reader that loses just uses its hand. */
	if (!__atomic_compare_exchange_n(&c->lock, &expect, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 0;
	if (seen && __atomic_load_n(&c->pub->current, __ATOMIC_RELAXED) != seen) {
		__atomic_store_n(&c->lock, 0, __ATOMIC_RELEASE);
		return 0;
	}
	t_in_writer = 1;
	windup_locked(c);
	t_in_writer = 0;
	__atomic_store_n(&c->lock, 0, __ATOMIC_RELEASE);
	return 1;
}

int fc_clock_setup(struct fc_clock *c, struct fc_pub *pub, const struct fc_source *src, int64_t period_ns,
		   uint64_t counter_hz, uint32_t gen_start)
{
	struct fc_sample s;
	struct fc_hand p;
	uint64_t t_a;

	c->pub = pub;
	c->src = *src;
	c->period_ns = period_ns;
	c->backend = FC_BACKEND_COUNTER;
	c->lock = 0;
	fc_hands_init(&c->hands, pub, gen_start);
	if (counter_hz == 0) {
		/* No hint: measure for 200 us against CLOCK_MONOTONIC (bracket noise ~40 ns -> ~200 ppm,
		 * inside the tracker's 1000 ppm continuity tolerance; it refines from there). */
		struct fc_sample s2;
		int64_t start;
		if (fc_sample_take(src, FC_SAMPLE_TRIES, &s) != 0)
			return -1;
		start = s.mono;
		do {
			if (fc_sample_take(src, FC_SAMPLE_TRIES, &s2) != 0)
				return -1;
		} while (s2.mono - start < 200000);
		counter_hz = (uint64_t)((unsigned __int128)((s2.c_mid - s.c_mid) & src->mask) * NS_PER_SEC /
					(uint64_t)(s2.mono - s.mono));
		c->freq_source = FC_FREQ_MEASURED;
	}
	if (counter_hz == 0)
		return -1;
	c->counter_hz_initial = counter_hz;
	fc_track_init(&c->track, src->mask, 1, mult_from_hz(counter_hz));
	fc_track_set_period(&c->track, period_ticks(c));
	if (fc_sample_take(src, FC_SAMPLE_TRIES, &s) != 0)
		return -1;
	t_a = s.c_mid; /* as in windup_locked */
	fc_track_update(&c->track, NULL, &s, t_a, &p);
	c->have_ntp = 0;
	set_ntp_fields(c, &p, s.mono);
	fc_hands_publish(pub, &p);
	publish_coarse(c, &p);
	c->reanchors = 1;
	return 0;
}

/* ---- the slow path ------------------------------------------------------------------------------------ */
/* A reader whose counter is behind its hand's anchor by less than this (cross-core skew, a relaxed read
 * executed early) gets the anchor's value, as the vDSO clamps; further behind, the counter went back (a VM
 * migration) and the reader re-anchors rather than return a frozen clock until the counter catches up. */
#define SKEW_CLAMP_DIV 64 /* valid_ticks / 64: ~18 us at the default period */

static int64_t hand_value(int64_t mono, uint64_t mult, uint64_t frac, int64_t off, uint64_t d, int how)
{
	int64_t v = mono + (int64_t)fc__scale(d, mult, frac);
	return (how & FC__REAL) ? v + off : v;
}

/* The kernel's NTP state for a bounded read on the kernel backend: the cached one, refreshed once a second
 * by whoever gets the writer lock. */
static void kernel_bound(struct fc_clock *c, int how, int64_t clamp, struct fc__bound *b)
{
	int expect = 0;
	struct fc_ntp n = {0};
	if (__atomic_compare_exchange_n(&c->lock, &expect, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		refresh_ntp(c, kernel_ns(c, CLOCK_MONOTONIC));
		n = c->ntp;
		__atomic_store_n(&c->lock, 0, __ATOMIC_RELEASE);
	} else if (c->src.ntp) {
		c->src.ntp(c->src.ctx, &n);
	}
	b->track_err_ns = (how & FC__REAL) ? 0 : clamp;
	b->ntp_err_ns = n.maxerror_ns;
	b->sync_status = n.sync;
}

int64_t fc_clock_read(struct fc_clock *c, int how, struct fc__bound *b)
{
	unsigned spins = 0;
	int counted = 0;

	for (;;) {
		/* The reader protocol of fc_hand.h (R1..R5), spelled out because this path also needs the
		 * validity window, the bound and the kernel-hand fields. */
		const struct fc_hand *th = __atomic_load_n(&c->pub->current, __ATOMIC_ACQUIRE); /* R1 */
		uint32_t gen = __atomic_load_n(&th->gen, __ATOMIC_ACQUIRE);                    /* R2 */
		struct fc_hand h;
		uint64_t t, d;

		h.flags = FC__LOAD(th->flags);
		h.stale_ticks = FC__LOAD(th->stale_ticks);
		h.valid_ticks = FC__LOAD(th->valid_ticks);
		h.base_ticks = FC__LOAD(th->base_ticks);
		h.mask = FC__LOAD(th->mask);
		h.mult = FC__LOAD(th->mult);
		h.frac = FC__LOAD(th->frac);
		h.mono_ns = FC__LOAD(th->mono_ns);
		h.real_off_ns = FC__LOAD(th->real_off_ns);
		h.floor_ns = FC__LOAD(th->floor_ns);
		h.mono_err_ns = FC__LOAD(th->mono_err_ns);
		h.err_mult = FC__LOAD(th->err_mult);
		h.ntp_err_ns = FC__LOAD(th->ntp_err_ns);
		h.sync_status = FC__LOAD(th->sync_status);

		if (h.flags & FC_HAND_KERNEL) {
			int64_t v, clamp;
			__atomic_thread_fence(__ATOMIC_ACQUIRE); /* R3 */
			if (gen == 0 || gen != __atomic_load_n(&th->gen, __ATOMIC_RELAXED) || /* R4 */
			    th != __atomic_load_n(&c->pub->current, __ATOMIC_RELAXED))       /* R5 */
				continue;
			v = kernel_read(c, how, &h, &clamp);
			if (b)
				kernel_bound(c, how, clamp, b);
			return v;
		}
		t = c->src.counter(c->src.ctx);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);                               /* R3 */
		if (gen == 0 || gen != __atomic_load_n(&th->gen, __ATOMIC_RELAXED) || /* R4 */
		    th != __atomic_load_n(&c->pub->current, __ATOMIC_RELAXED))       /* R5 */
			continue;
		if (b) {
			b->ntp_err_ns = h.ntp_err_ns;
			b->sync_status = h.sync_status;
		}
		d = (t - h.base_ticks) & h.mask;
		if (d < h.stale_ticks) { /* another thread re-anchored meanwhile */
			if (b)
				b->track_err_ns = h.mono_err_ns + (int64_t)fc__scale(d, h.err_mult, 0);
			return hand_value(h.mono_ns, h.mult, h.frac, h.real_off_ns, d, how);
		}
		if (!counted) {
			__atomic_fetch_add(&c->slow_paths, 1, __ATOMIC_RELAXED);
			counted = 1;
		}
		if (t_in_writer) { /* a signal handler interrupted this thread's own re-anchor */
			int64_t clamp;
			int64_t v = kernel_read(c, how, NULL, &clamp);
			if (b)
				b->track_err_ns = 0;
			return v;
		}
		if (d > (h.mask >> 1)) {
			/* Behind the anchor. A little (skew): clamp. More: the counter went back; re-anchor, or
			 * clamp while another thread does. The bound adds the clamp's distance. */
			uint64_t behind = h.mask - d + 1;
			if (behind >= h.valid_ticks / SKEW_CLAMP_DIV && fc_clock_windup(c, th))
				continue;
			if (b)
				b->track_err_ns = h.mono_err_ns + (int64_t)fc__scale(behind, h.mult, 0) + 1;
			return hand_value(h.mono_ns, h.mult, h.frac, h.real_off_ns, 0, how);
		}
		if (fc_clock_windup(c, th))
			continue;
		if (d < h.valid_ticks) { /* another thread is re-anchoring; this hand is still good */
			if (b)
				b->track_err_ns = h.mono_err_ns + (int64_t)fc__scale(d, h.err_mult, 0);
			return hand_value(h.mono_ns, h.mult, h.frac, h.real_off_ns, d, how);
		}
		if (__atomic_load_n(&c->pub->current, __ATOMIC_RELAXED) != th)
			continue;
		/* Expired while another thread re-anchors: wait for its hand (about 0.5 us). */
		if (spins++ == 0)
			__atomic_fetch_add(&c->waits, 1, __ATOMIC_RELAXED);
		if (spins < WAIT_SPINS)
			cpu_relax();
		else
			sched_yield();
	}
}

int64_t fc_clock_slow(struct fc_clock *c, int how) { return fc_clock_read(c, how, NULL); }

/* ---- configuration and initialisation ---------------------------------------------------------------- */
static void global_init(void)
{
	struct fc_clock *c = &g_clock;
	struct fc_config cfg;
	int want, trusted;

	c->pub = &fc__pub;
	c->src = real_source;
	fc_config_parse(getenv("FASTCLOCK_SOURCE"), getenv("FASTCLOCK_PERIOD_US"), &cfg, c->config_error,
			sizeof(c->config_error));
	c->period_ns = cfg.period_ns;
	want = cfg.backend;
	trusted = fc_trust_check(c->reason, sizeof(c->reason), c->clocksource, sizeof(c->clocksource));
	c->forced = want != 0;
	c->trust_every = TRUST_EVERY;
	if (!FC_HAVE_COUNTER) {
		snprintf(c->reason, sizeof(c->reason), "no user-readable counter on this architecture");
		want = FC_BACKEND_KERNEL;
	} else if (want == FC_BACKEND_COUNTER && !trusted) {
		char why[sizeof(c->reason)];
		static const char pre[] = "forced by FASTCLOCK_SOURCE=counter although ";
		memcpy(why, pre, sizeof(pre));
		copy_str(why + sizeof(pre) - 1, sizeof(why) - sizeof(pre) + 1, c->reason);
		memcpy(c->reason, why, sizeof(why));
	} else if (want == FC_BACKEND_KERNEL) {
		snprintf(c->reason, sizeof(c->reason), "forced by FASTCLOCK_SOURCE=kernel");
	} else if (want == 0) {
		want = trusted ? FC_BACKEND_COUNTER : FC_BACKEND_KERNEL;
	}
	if (want == FC_BACKEND_COUNTER) {
		int fsrc = FC_FREQ_NONE;
		uint64_t hz = fc_counter_freq_hint(&fsrc);
		c->freq_source = fsrc;
		if (fc_clock_setup(c, &fc__pub, &real_source, c->period_ns, hz, 0) != 0) {
			snprintf(c->reason, sizeof(c->reason), "the counter could not be calibrated");
			want = FC_BACKEND_KERNEL;
		}
	}
	if (want == FC_BACKEND_KERNEL) {
		struct fc_hand p = {0};
		fc_hands_init(&c->hands, &fc__pub, 0);
		p.flags = FC_HAND_KERNEL;
		p.mask = ~(uint64_t)0;
		p.floor_ns = INT64_MIN;
		fc_hands_publish(&fc__pub, &p);
		c->backend = FC_BACKEND_KERNEL;
		coarse_refresh(c, kernel_ns(c, CLOCK_MONOTONIC), kernel_ns(c, CLOCK_REALTIME));
	}
}

static void atfork_child(void)
{
	/* Only the forking thread exists in the child: a writer lock held by another thread would never be
	 * released. Nothing else needs fixing: re-anchoring is lazy. */
	__atomic_store_n(&g_clock.lock, 0, __ATOMIC_RELAXED);
	t_in_writer = 0;
	fc__updater_after_fork();
}

static void ensure_init(void)
{
	int expect = 0;
	if (FC__LIKELY(__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) == 2))
		return;
	if (__atomic_compare_exchange_n(&g_state, &expect, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
		global_init();
		pthread_atfork(NULL, NULL, atfork_child);
		__atomic_store_n(&g_state, 2, __ATOMIC_RELEASE);
		return;
	}
	while (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) != 2) /* another thread initialises (< 1 ms) */
		sched_yield();
}

int fc_init(void)
{
	ensure_init();
	return 0;
}

int64_t fc__slow_ns(int how)
{
	ensure_init();
	if (FC__UNLIKELY(__atomic_load_n(&fc__updater_restart_needed, __ATOMIC_RELAXED)))
		fc__updater_restart();
	return fc_clock_slow(&g_clock, how);
}

int64_t fc__coarse_init(int how)
{
	/* First use of a coarse clock (or CLOCK_MONOTONIC really is 0, in a time namespace): a precise read
	 * initialises the library and stores the coarse value. */
	return fc__slow_ns(how);
}

uint64_t fc__ticks_kernel(void)
{
	ensure_init();
	if (g_clock.backend == FC_BACKEND_COUNTER)
		return fc__counter_ordered();
	return (uint64_t)kernel_ns(&g_clock, CLOCK_MONOTONIC);
}

int fc__slow_bounded(struct fc_interval *out, int how)
{
	struct fc__bound b;
	int64_t v, ntp_err;

	if (out == NULL) {
		errno = EFAULT;
		return -1;
	}
	ensure_init();
	if (FC__UNLIKELY(__atomic_load_n(&fc__updater_restart_needed, __ATOMIC_RELAXED)))
		fc__updater_restart();
	/* The slow path reports the bound of the very hand (or kernel read) that produced the value. */
	v = fc_clock_read(&g_clock, how, &b);
	ntp_err = (how & FC__REAL) ? b.ntp_err_ns : 0;
	out->earliest_ns = v - b.track_err_ns - ntp_err;
	out->latest_ns = v + b.track_err_ns + ntp_err;
	out->status = b.sync_status;
	return 0;
}

const char *fc_sync_name(int status)
{
	switch (status) {
	case FC_SYNC_SYNCHRONIZED:
		return "synchronized";
	case FC_SYNC_FREE_RUNNING:
		return "free-running";
	case FC_SYNC_DISRUPTED:
		return "disrupted";
	default:
		return "unknown";
	}
}

/* ---- capture now, convert later ----------------------------------------------------------------------- */
static int64_t ticks_to_ns(uint64_t ticks, int how)
{
	struct fc_clock *c = &g_clock;
	ensure_init();
	for (;;) {
		const struct fc_hand *cur = __atomic_load_n(&c->pub->current, __ATOMIC_ACQUIRE);
		const struct fc_hand *th = cur;
		uint32_t gen;
		uint64_t base, mask, mult, frac;
		int64_t mono, off;
		__int128 v;

		if (FC__LOAD(cur->flags) & FC_HAND_KERNEL)
			return (int64_t)ticks + ((how & FC__REAL) ? FC__LOAD(cur->real_off_ns) : 0);
		/* Walk back from the current hand to the newest one anchored at or before the capture: the hand
		 * that converted it when it was taken. Stop at the oldest counter hand. */
		for (unsigned k = 0; k < FC_HANDS - 1; k++) {
			uint64_t b = FC__LOAD(th->base_ticks), m = FC__LOAD(th->mask);
			const struct fc_hand *prev;
			if (((ticks - b) & m) <= (m >> 1))
				break;
			prev = (th == &c->hands.ring[0]) ? &c->hands.ring[FC_HANDS - 1] : th - 1;
			if (prev == cur->next || __atomic_load_n(&prev->gen, __ATOMIC_ACQUIRE) == 0 ||
			    (FC__LOAD(prev->flags) & FC_HAND_KERNEL))
				break; /* the next to be recycled, being written, or not a counter hand */
			th = prev;
		}
		gen = __atomic_load_n(&th->gen, __ATOMIC_ACQUIRE);
		base = FC__LOAD(th->base_ticks);
		mask = FC__LOAD(th->mask);
		mult = FC__LOAD(th->mult);
		frac = FC__LOAD(th->frac);
		mono = FC__LOAD(th->mono_ns);
		off = FC__LOAD(th->real_off_ns);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (gen == 0 || gen != __atomic_load_n(&th->gen, __ATOMIC_RELAXED))
			continue;
		{
			uint64_t d = (ticks - base) & mask;
			__int128 sd = d > (mask >> 1) ? -(__int128)((mask - d) + 1) : (__int128)d;
			v = (__int128)mono * ((__int128)1 << 32) + (__int128)frac + sd * (__int128)mult;
		}
		return (int64_t)(v >> 32) + ((how & FC__REAL) ? off : 0);
	}
}

int64_t fc_ticks_to_mono_ns(uint64_t ticks) { return ticks_to_ns(ticks, FC__MONO); }
int64_t fc_ticks_to_real_ns(uint64_t ticks) { return ticks_to_ns(ticks, FC__REAL); }

/* ---- drop-in replacements ------------------------------------------------------------------------------ */
int fc__updater_is_running(void);
int fc__updater_step_notifier(void);
uint64_t fc__updater_step_count(void);

/* What the inline fc_clock_gettime does not serve itself: NULL, the coarse clocks, every other id. */
int fc__clock_gettime_other(clockid_t id, struct timespec *ts)
{
	int64_t ns, s, sub;
	if (ts == NULL) {
		errno = EFAULT;
		return -1;
	}
	switch (id) {
	case CLOCK_MONOTONIC:
		ns = fc_mono_ns();
		break;
	case CLOCK_REALTIME:
		ns = fc_real_ns();
		break;
	case CLOCK_MONOTONIC_COARSE:
		if (!fc__updater_is_running())
			return clock_gettime(id, ts);
		ns = fc_mono_coarse_ns();
		break;
	case CLOCK_REALTIME_COARSE:
		if (!fc__updater_is_running())
			return clock_gettime(id, ts);
		ns = fc_real_coarse_ns();
		break;
	default:
		return clock_gettime(id, ts);
	}
	fc__ns_split(ns, &s, &sub, 1);
	ts->tv_sec = (time_t)s;
	ts->tv_nsec = (long)sub;
	return 0;
}

/* fc_gettimeofday with a timezone argument: obsolete; the kernel fills it (zeros on most systems). */
int fc__gettimeofday_tz(struct timeval *tv, void *tz)
{
	struct timeval ignored;
	int64_t s, us;
	if (gettimeofday(&ignored, (struct timezone *)tz) != 0)
		return -1;
	if (tv) {
		fc__ns_split(fc_real_ns(), &s, &us, 1000);
		tv->tv_sec = (time_t)s;
		tv->tv_usec = (suseconds_t)us;
	}
	return 0;
}

/* ---- control and status ------------------------------------------------------------------------------- */
int fc_set_period_ns(int64_t period_ns)
{
	struct fc_clock *c = &g_clock;
	int expect = 0;
	if (period_ns < FC_MIN_PERIOD_NS || period_ns > FC_MAX_PERIOD_NS) {
		errno = EINVAL;
		return -1;
	}
	ensure_init();
	while (!__atomic_compare_exchange_n(&c->lock, &expect, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		expect = 0;
		sched_yield();
	}
	c->period_ns = period_ns;
	if (c->backend == FC_BACKEND_COUNTER)
		fc_track_set_period(&c->track, period_ticks(c));
	__atomic_store_n(&c->lock, 0, __ATOMIC_RELEASE);
	return 0;
}

const char *fc_backend_name(int backend)
{
	switch (backend) {
	case FC_BACKEND_COUNTER:
		return "counter";
	case FC_BACKEND_KERNEL:
		return "kernel";
	default:
		return "unknown";
	}
}

const char *fc_freq_source_name(int src)
{
	static const char *const names[] = {"none", "perf", "cpuid", "cntfrq", "measured"};
	return (src >= 0 && src <= FC_FREQ_MEASURED) ? names[src] : "unknown";
}

int fc_status(struct fc_status *out)
{
	struct fc_clock *c = &g_clock;
	int expect = 0;
	if (out == NULL) {
		errno = EFAULT;
		return -1;
	}
	ensure_init();
	memset(out, 0, sizeof(*out));
	/* Take the writer lock for a consistent copy of the tracker (a reader never waits on it). */
	while (!__atomic_compare_exchange_n(&c->lock, &expect, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		expect = 0;
		sched_yield();
	}
	out->backend = c->backend;
	copy_str(out->reason, sizeof(out->reason), c->reason);
	copy_str(out->counter, sizeof(out->counter), FC_COUNTER_NAME);
	copy_str(out->clocksource, sizeof(out->clocksource), c->clocksource);
	copy_str(out->config_error, sizeof(out->config_error), c->config_error);
	out->freq_source = c->freq_source;
	out->counter_hz_initial = c->counter_hz_initial;
	if (c->backend == FC_BACKEND_COUNTER && c->track.mult_est)
		out->counter_hz = (uint64_t)(((unsigned __int128)NS_PER_SEC << 32) / c->track.mult_est);
	out->period_ns = c->period_ns;
	out->discontinuities = c->track.discontinuities;
	out->real_steps = c->track.real_steps;
	out->last_error_ns = c->track.last_err_ns;
	out->max_abs_error_ns = c->track.max_abs_err_ns;
	if (c->track.nhist)
		out->last_bracket_ns = (int64_t)(((unsigned __int128)c->track.hist[c->track.nhist - 1].c_half *
						  2 * c->track.mult_est) >> 32);
	__atomic_store_n(&c->lock, 0, __ATOMIC_RELEASE);
	out->reanchors = __atomic_load_n(&c->reanchors, __ATOMIC_RELAXED);
	out->slow_paths = __atomic_load_n(&c->slow_paths, __ATOMIC_RELAXED);
	out->waits = __atomic_load_n(&c->waits, __ATOMIC_RELAXED);
	out->trust_checks = __atomic_load_n(&c->trust_checks, __ATOMIC_RELAXED);
	out->updater_running = fc__updater_is_running();
	{
		struct fc_interval iv;
		fc_real_bounded(&iv);
		out->sync_status = iv.status;
	}
	out->ntp_maxerror_ns = c->have_ntp && c->ntp.sync != FC_SYNC_UNKNOWN ? c->ntp.maxerror_ns : -1;
	out->ntp_esterror_ns = c->ntp.esterror_ns;
	out->ntp_status = c->ntp.status;
	out->step_notifier = fc__updater_step_notifier();
	out->step_notifications = fc__updater_step_count();
	return 0;
}
