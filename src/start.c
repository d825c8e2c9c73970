/*
 * fastclock — start-up (floor 3 of the clock core, above the writer): the state machine that takes a clock from
 * its first kernel hand to its first counter hand without any call waiting, and the unit of a capture
 * taken meanwhile.
 *
 * States (start_phase): TRUST (the counter's trust check is due FC_START_DEFER_NS after initialisation, or at
 * once for an fc_ticks that cannot take an early capture) -> RATE (the counter is trusted; its rate is
 * measured against the kernel over START_BASELINE_NS, again if CPUID's figure disagrees) -> DONE (the first
 * counter hand is out, or the counter is not trusted: the kernel backend). Each step runs under the writer lock,
 * taken here (fc__start_step): the callers that find the clock starting (a reader's slow path, the keeper, fc_ticks,
 * fc_init) call this file, and it calls the writer (windup.c, below) only to publish the first counter hand
 * (fc__windup_first_hand_locked). Outside this file the start-up's state is asked only through fc__start_done.
 *
 * Early captures: the trust step (a sysfs read and one CPUID, tens of us in a fresh process) decides a capture's unit, counter ticks or kernel ns, and an untrusted counter's ticks must never be
 * converted. So that a process's first fc_ticks need not take it, captures before it are kernel CLOCK_MONOTONIC
 * reads, and conversions tell them from the counter ticks captured after it by their value: where the counter
 * runs at 1 GHz or more since boot (every x86-64 TSC), its value is far above CLOCK_MONOTONIC's ns count.
 *   - start: early_defer only if the counter leads the kernel's ns by FC_EARLY_GAP_NS (x86-64 only: the fences
 *     below are x86's). Else fc_ticks takes the trust step itself.
 *   - an early capture: phase TRUST, kernel read k, then the phase again (after lfence and a full fence: the
 *     counter read inside the kernel read is done before the load). Still TRUST: k was read before the
 *     trust step's store of RATE, so k <= early_end, read after that store.
 *   - the trust step: early_c is the counter before its store (every later counter capture is >= it, the
 *     counter being trusted: synchronised across cores); early_end CLOCK_MONOTONIC after it. It refuses the
 *     counter if early_c does not lead by FC_EARLY_GAP_NS / 2 (a counter slower than 1 GHz).
 *   - a conversion: early_from <= t <= early_end (or the kernel's now until early_end is written) and t <
 *     early_c: kernel ns. A counter that went back below early_c (a reset on resume) voids the window: the
 *     conversion reads the counter and checks. Captures stay ordered: early ones < early_c <= later ones.
 *     Not handled: the thread taking the trust step held off a CPU between reading early_c and its store for
 *     longer than the counter's lead (69 s or more) while other threads take early captures, which could then
 *     exceed early_c.
 *
 * Owns: struct fc_start (c->start), the conversion of captures taken before the first counter hand. May call:
 * state.c, hands.c, sample.c, trust.c, vdso.c, counter/freq.c, windup.c.
 */
#include <sched.h>

#include "section.h"
#include "hands.h"
#include "sample.h"
#include "start.h"
#include "state.h"
#include "str.h"
#include "trust.h"
#include "vdso.h"
#include "units.h"
#include "windup.h"
#include "counter/freq.h"

/* The first counter hand's rate is measured against CLOCK_MONOTONIC over this baseline: two brackets of tens of
 * ns (an ordered counter read and a vDSO read each) give tens of ppm, well inside the tracker's 1000 ppm
 * continuity tolerance,
 * and it refines from there. Meanwhile the kernel's clock serves every read (FreeBSD and Linux boot the
 * same way: a safe clocksource first, the TSC once it is calibrated). */
#define START_BASELINE_NS 1000000
/* A measured rate further than this from the CPU's own figure (CPUID 0x15 / 0x40000010, CNTFRQ_EL0), when
 * it has one, is taken again: a suspend or a long preemption fell between the two samples. 1/64 is far
 * beyond a crystal's tolerance (~100 ppm) and the measurement's noise. */
#define START_HINT_TOL_DIV 64
/* Measurements taken before the measured rate is kept although it disagrees with that figure: a suspend or a
 * preemption long enough to move a 1 ms measurement by 1/64 seldom strikes three in a row, while a figure that
 * disagrees three times is itself wrong (a hypervisor whose CPUID leaf does not match the TSC rate it gives);
 * the tracker refines the rate at every re-anchor after that. Each retry keeps the kernel backend 1 ms longer
 * (START_BASELINE_NS). A counter that did not move (hz 0) is measured again without limit. */
#define START_RETRIES 3

#if defined(__x86_64__)
#define EARLY_ARCH 1
/* Orders a kernel read before the loads and stores after it: RDTSC (inside the vDSO) may run after later
 * instructions; LFENCE after it waits for it (Intel SDM, RDTSC), and the full fence orders the stores. */
static void early_fence(void)
{
	__asm__ __volatile__("lfence" ::: "memory");
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}
#else
#define EARLY_ARCH 0
static void early_fence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
#endif

FC__START_TEXT void fc__start_clock(struct fc_clock *c, struct fc_pub *pub, const struct fc_source *src,
				    int64_t period_ns, int want)
{
	struct fc_hand p = {0};
	c->pub = pub;
	c->src = *src;
	c->period_ns = period_ns;
	c->lock = 0;
	c->backend = FC_BACKEND_KERNEL;
	/* The global clock's hands start linked (FC__HANDS_STATIC): a process's first call does not write them again.
	 * Cleared before the first publish, so a fork child of a parent that was past this point (init.c
	 * atfork_child) initialises them. */
	if (!c->hands_static)
		fc__hands_init(&c->hands, pub, 0);
	c->hands_static = 0;
	p.flags = FC_HAND_KERNEL;
	p.mask = ~(uint64_t)0;
	p.floor_ns = INT64_MIN;
	fc__hands_publish(pub, &p);
	c->start.early_defer = 0;
	if (!FC_HAVE_COUNTER) {
		FC__STR_SET(c->reason, "no user-readable counter on this architecture");
	} else if (want == FC_BACKEND_KERNEL) {
		FC__STR_SET(c->reason, "forced by FASTCLOCK_SOURCE=kernel");
	} else {
		FC__STR_SET(c->reason,
			    "starting: the kernel's clock serves reads until the counter is checked and its rate measured");
		const int64_t k0 = fc__kernel_ns(c, CLOCK_MONOTONIC);
		const uint64_t c0 = c->src.counter(c->src.ctx);
		c->start.early_from = k0;
		c->start.early_c = 0;
		__atomic_store_n(&c->start.early_end, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&c->start.early_void, 0, __ATOMIC_RELAXED);
		c->start.early_defer = EARLY_ARCH && c->src.mask == ~(uint64_t)0 && k0 > 0 && c0 > (uint64_t)k0 &&
				       c0 - (uint64_t)k0 >= (uint64_t)FC_EARLY_GAP_NS;
		__atomic_store_n(&c->start.due, k0 + FC_START_DEFER_NS, __ATOMIC_RELAXED);
		__atomic_store_n(&c->start.phase, FC_START_TRUST, __ATOMIC_RELEASE);
	}
}

static void start_done(struct fc_clock *c) { __atomic_store_n(&c->start.phase, FC_START_DONE, __ATOMIC_RELEASE); }

/* One step of the start-up, under the lock. */
static void start_step(struct fc_clock *c)
{
	struct fc_sample s;
	uint64_t hz, hint;
	int hint_src = FC_FREQ_NONE;

	if (__atomic_load_n(&c->start.phase, __ATOMIC_RELAXED) == FC_START_TRUST) {
		char why[sizeof(c->reason)], cs[sizeof(c->clocksource)];
		int ok = 1;
		why[0] = 0;
		/* The global clock's kernel reads through the vDSO's function from now on (vdso.c: found and checked
		 * here, a few us, rather than on the first call or at every program's load). */
		if (c == fc__global_clock() && !__atomic_load_n(&c->kernel_gettime, __ATOMIC_RELAXED))
			__atomic_store_n(&c->kernel_gettime, fc__vdso_clock_gettime(), __ATOMIC_RELAXED);
		if (c->trust_every) {
			ok = fc__trust_check(why, sizeof(why), cs, sizeof(cs));
			__atomic_fetch_add(&c->trust_checks, 1, __ATOMIC_RELAXED);
			fc__copy_str(c->clocksource, sizeof(c->clocksource), cs);
		}
		c->reason[0] = 0;
		if (!ok && !c->forced) {
			fc__copy_str(c->reason, sizeof(c->reason), why);
			start_done(c);
			return;
		}
		if (!ok)
			fc__str_cat(c->reason, sizeof(c->reason), "forced by FASTCLOCK_SOURCE=counter although ", why,
				    (const char *)0);
		else
			fc__copy_str(c->reason, sizeof(c->reason), why[0] ? why : "counter trusted by the caller");
		if (fc__sample_take(&c->src, FC_SAMPLE_TRIES, &c->start.rate_first) != 0) {
			c->reason[0] = 0;
			fc__str_cat(c->reason, sizeof(c->reason), "the kernel's clock could not be sampled against the counter",
				    (const char *)0);
			start_done(c);
			return;
		}
		c->start.anchor = c->start.rate_first; /* never rewritten: conversions of start-up captures */
		__atomic_store_n(&c->start.due, c->start.rate_first.mono + START_BASELINE_NS, __ATOMIC_RELAXED);
		if (c->start.early_defer) {
			const uint64_t cd = c->src.counter(c->src.ctx);
			if (cd < (uint64_t)c->start.rate_first.mono + (uint64_t)(FC_EARLY_GAP_NS / 2)) {
				/* early captures (kernel ns) could not be told from counter ticks: fail closed */
				c->reason[0] = 0;
				fc__str_cat(c->reason, sizeof(c->reason),
					    "the counter's value does not lead CLOCK_MONOTONIC's ns count: captures taken before "
					    "its trust check could not be told from its ticks",
					    (const char *)0);
				start_done(c);
				return;
			}
			c->start.early_c = cd;
		}
		/* seq_cst (release and more): pairs with fc__start_capture_unit's and convert.c's acquire, which then
		 * read start_anchor and early_c, and with fc__start_capture_early's fenced re-load of the phase */
		__atomic_store_n(&c->start.phase, FC_START_RATE, __ATOMIC_SEQ_CST);
		if (c->start.early_defer) {
			early_fence(); /* the store before the kernel read */
			__atomic_store_n(&c->start.early_end, fc__kernel_ns(c, CLOCK_MONOTONIC), __ATOMIC_RELAXED);
		}
		return;
	}
	if (fc__sample_take(&c->src, FC_SAMPLE_TRIES, &s) != 0 || s.mono - c->start.rate_first.mono < START_BASELINE_NS)
		return;
	hz = (uint64_t)((unsigned __int128)((s.c_mid - c->start.rate_first.c_mid) & c->src.mask) * NS_PER_SEC /
			(uint64_t)(s.mono - c->start.rate_first.mono));
	if (c->src.hz_hint)
		hint = c->src.hz_hint(c->src.ctx);
	else
		hint = c->src.mask == ~(uint64_t)0 ? fc__counter_freq_hint(&hint_src) : 0;
	if (hz == 0 || (hint && (hz > hint + hint / START_HINT_TOL_DIV || hz < hint - hint / START_HINT_TOL_DIV) &&
			++c->start.retries < START_RETRIES)) {
		/* Disturbed (or a counter that did not move): measure again from this sample. */
		c->start.rate_first = s;
		__atomic_store_n(&c->start.due, s.mono + START_BASELINE_NS, __ATOMIC_RELAXED);
		return;
	}
	c->start.retries = 0;
	fc__windup_first_hand_locked(c, &c->start.rate_first, &s, hz);
	start_done(c);
}

/* The step under the writer lock if the current hand is still `seen` (NULL: whichever), due or not: 1 if the lock
 * was taken (the step taken, or the start-up found done meanwhile), 0 if another writer held it or `seen` was
 * replaced. Never waits. */
static int step_try(struct fc_clock *c, const struct fc_hand *seen)
{
	if (!fc__windup_trylock(c))
		return 0;
	if (seen && __atomic_load_n(&c->pub->current, __ATOMIC_RELAXED) != seen) {
		fc__windup_unlock(c);
		return 0;
	}
	if (__atomic_load_n(&c->start.phase, __ATOMIC_RELAXED) != FC_START_DONE)
		start_step(c);
	fc__windup_unlock(c);
	return 1;
}

FC__START_TEXT int fc__start_step(struct fc_clock *c, const struct fc_hand *seen, int64_t now)
{
	if (fc__start_done(c) || now < __atomic_load_n(&c->start.due, __ATOMIC_RELAXED))
		return 0;
	return step_try(c, seen);
}

void fc__start_finish(struct fc_clock *c)
{
	unsigned spins = 0;
	while (__atomic_load_n(&c->start.phase, __ATOMIC_ACQUIRE) != FC_START_DONE) {
		if (fc__in_writer) /* a signal handler on the thread that holds the lock: cannot finish here */
			return;
		if (__atomic_load_n(&c->start.phase, __ATOMIC_RELAXED) == FC_START_TRUST ||
		    fc__kernel_ns(c, CLOCK_MONOTONIC) >= __atomic_load_n(&c->start.due, __ATOMIC_RELAXED))
			(void)step_try(c, NULL);
		if (++spins % 64 == 0)
			sched_yield();
		else
			fc__cpu_relax();
	}
}

FC__START_TEXT int fc__start_capture_unit(struct fc_clock *c)
{
	unsigned spins = 0;
	int phase;
	/* Undecided until the trust step: take it now (a sysfs read and CPUID, a few us; never the rate's 1 ms).
	 * Another thread in the writer: it takes microseconds (the trust step, a re-anchor), wait for it. */
	while ((phase = __atomic_load_n(&c->start.phase, __ATOMIC_ACQUIRE)) == FC_START_TRUST) {
		if (fc__in_writer) /* a signal handler on the thread inside the writer: it cannot decide here */
			return FC_CAPTURE_KERNEL;
		if (step_try(c, NULL))
			continue;
		if (++spins % 64 == 0)
			sched_yield();
		else
			fc__cpu_relax();
	}
	if (phase == FC_START_RATE) {
		/* The counter is trusted, its rate not measured yet: captures are counter ticks from now on. The
		 * rate's next step, when due, is taken here as a read would take it (never waiting for it). */
		if (!fc__in_writer)
			(void)fc__start_step(c, NULL, fc__kernel_ns(c, CLOCK_MONOTONIC));
		return FC_CAPTURE_COUNTER;
	}
	/* Started: the current hand says (loaded after the phase: the first counter hand is published before the
	 * phase is DONE). */
	return (FC__LOAD(__atomic_load_n(&c->pub->current, __ATOMIC_ACQUIRE)->flags) & FC_HAND_KERNEL)
		       ? FC_CAPTURE_KERNEL
		       : FC_CAPTURE_COUNTER;
}

FC__START_TEXT int fc__start_capture_early(struct fc_clock *c, uint64_t *t)
{
	int64_t k;
	if (!c->start.early_defer || __atomic_load_n(&c->start.phase, __ATOMIC_ACQUIRE) != FC_START_TRUST)
		return 0;
	k = fc__kernel_ns(c, CLOCK_MONOTONIC);
	early_fence(); /* the kernel read (its counter read) is done before the phase is loaded again */
	if (__atomic_load_n(&c->start.phase, __ATOMIC_SEQ_CST) != FC_START_TRUST)
		return 0; /* the trust step was taken meanwhile: k may be after early_end; capture in its unit */
	*t = (uint64_t)k;
	/* Due (as for any read: FC_START_DEFER_NS after start): take the step, never waiting for another writer. */
	if (!fc__in_writer)
		(void)fc__start_step(c, NULL, k);
	return 1;
}

FC__START_TEXT int fc__start_capture_is_early(struct fc_clock *c, uint64_t t)
{
	int64_t end;
	if (!c->start.early_defer)
		return 0;
	if (__atomic_load_n(&c->start.phase, __ATOMIC_ACQUIRE) == FC_START_TRUST)
		return 1; /* no counter capture yet: every capture is kernel ns */
	/* early_c: published by the phase's store, acquired */
	if (t < (uint64_t)c->start.early_from || t >= c->start.early_c)
		return 0;
	end = __atomic_load_n(&c->start.early_end, __ATOMIC_RELAXED);
	if (end == 0) /* the trust step is between its store and its read: every early capture is <= now */
		end = fc__kernel_ns(c, CLOCK_MONOTONIC);
	if (t > (uint64_t)end || __atomic_load_n(&c->start.early_void, __ATOMIC_RELAXED))
		return 0;
	if (c->src.counter(c->src.ctx) < c->start.early_c) {
		/* The counter went back (a reset on resume): a counter capture may now be small. Values no longer
		 * tell; counter captures are the ones still being taken. */
		__atomic_store_n(&c->start.early_void, 1, __ATOMIC_RELAXED);
		return 0;
	}
	return 1;
}

/* A counter capture taken while the start-up measures the rate (the counter trusted, no counter hand yet):
 * interpolated between the trust step's sample (start.anchor, before every such capture) and a fresh one,
 * with the rate of those two. The capture lies between them, so the error is about the two brackets' width,
 * however short the baseline; no wait for the 1 ms measurement. One division: this runs only
 * for captures of a process's first millisecond, converted before the first counter hand. */
static int64_t convert_starting(const struct fc_clock *c, uint64_t ticks, int how)
{
	const struct fc_sample *a = &c->start.anchor; /* written once before start.phase became RATE (acquired) */
	struct fc_sample s;
	uint64_t dc, d;
	int64_t dm, v;
	__int128 sd;
	if (fc__sample_take(&c->src, FC_SAMPLE_TRIES, &s) != 0)
		return fc__kernel_ns(c, (how & FC__REAL) ? CLOCK_REALTIME : CLOCK_MONOTONIC);
	dc = (s.c_mid - a->c_mid) & c->src.mask;
	dm = s.mono - a->mono;
	d = (ticks - a->c_mid) & c->src.mask;
	sd = d > (c->src.mask >> 1) ? -(__int128)((c->src.mask - d) + 1) : (__int128)d;
	if (dc == 0 || dc > (c->src.mask >> 1) || dm <= 0)
		v = s.mono; /* the counter did not move between the two (or went back): the capture is now */
	else
		v = a->mono + (int64_t)(sd * dm / (__int128)dc);
	return v + ((how & FC__REAL) ? s.off_lo + (s.off_hi - s.off_lo) / 2 : 0);
}

int fc__start_convert(struct fc_clock *c, uint64_t ticks, int how, int64_t *v)
{
	/* The phase first: the first counter hand is current before the phase leaves RATE. */
	const int starting = __atomic_load_n(&c->start.phase, __ATOMIC_ACQUIRE) == FC_START_RATE;
	if (fc__start_capture_is_early(c, ticks))
		return FC_START_CONV_KERNEL;
	if (starting && (FC__LOAD(__atomic_load_n(&c->pub->current, __ATOMIC_ACQUIRE)->flags) & FC_HAND_KERNEL)) {
		*v = convert_starting(c, ticks, how);
		return FC_START_CONV_DONE;
	}
	return 0;
}
