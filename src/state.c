/*
 * fastclock — the clock object's state (floor 1 of the clock core): the global clock and the published
 * hands it owns, the per-thread writer mark, and reads of the kernel's clocks through a clock's source.
 *
 * Owns: fc__clock_global, fc__pub (what the inline readers load), fc__in_writer, fc__lock_mine, the real fc_source.
 * May call: libc (clock_gettime), and sample.c's wall-offset bracket (floor 0). Everything else in the clock core is
 * built on this file.
 */
#include <string.h>
#include <time.h>

#include "section.h"
#include "config.h"
#include "ntp.h"
#include "sample.h"
#include "state.h"
#include "units.h"


/* ---- the real counter and reference clock ------------------------------------------------------- */
FC__START_TEXT static uint64_t real_counter(void *ctx)
{
	(void)ctx;
	return fc__counter_ordered();
}

/* The kernel's clock: the vDSO's function once the start-up has found it (start.c), else libc's. */
FC__START_TEXT static int kernel_gettime(clockid_t id, struct timespec *ts)
{
	const fc_kernel_gettime_fn f = __atomic_load_n(&fc__clock_global.kernel_gettime, __ATOMIC_RELAXED);
	return f ? f(id, ts) : clock_gettime(id, ts);
}

FC__START_TEXT static int real_kernel(void *ctx, clockid_t id, int64_t *ns)
{
	struct timespec ts;
	(void)ctx;
	if (kernel_gettime(id, &ts) != 0)
		return -1;
	*ns = (int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
	return 0;
}

const struct fc_source fc__real_source = {real_counter, real_kernel, fc__ntp_read, NULL, ~(uint64_t)0, NULL};

/* ---- the global clock ------------------------------------------------------------------------------- */
/* fc__pub and the clock share one page (a section of their own, page-aligned, the two together under a page;
 * checked by the test OnePage.the_global_clock_and_its_hands_lie_in_one_page): a read after a long pause pays a
 * TLB and a cache miss for each page it touches, and the slow path reads both. */
#if defined(__has_attribute)
#if __has_attribute(no_reorder)
/* GCC would emit them in another order than written: in order, fc__pub first, which starts the page */
#define FC__IN_ORDER __attribute__((no_reorder))
#define FC__PAGE_START __attribute__((aligned(4096)))
#endif
#endif
#ifndef FC__IN_ORDER
/* No no_reorder (clang, which emits the clock first): the section is made page-aligned by a directive, which a
 * module's top-level asm puts before every object, so both lie in its first page in either order. */
__asm__(".section .data.fastclock_clock,\"aw\",%progbits\n\t.balign 4096\n\t.previous");
#define FC__IN_ORDER
#define FC__PAGE_START
#endif
#define FC__CLOCK_PAGE FC__IN_ORDER __attribute__((section(".data.fastclock_clock")))
_Static_assert(sizeof(struct fc_pub) + sizeof(struct fc_clock) + 128 <= 4096, "fc__pub and the clock fit a page");
/* Until initialisation, current is the boot hand: a kernel hand with stale_ticks 0, so every read takes the
 * slow path, which initialises. */
FC__CLOCK_PAGE FC__PAGE_START struct fc_pub fc__pub = {.current = &fc__clock_global.hands.boot};
FC__CLOCK_PAGE struct fc_clock fc__clock_global = {
	.hands = FC__HANDS_STATIC(fc__clock_global.hands),
	.hands_static = 1,
	/* till the initialisation reads the environment: a coarse read then initialises, and asks for the fine
	 * period, as the first call (read.c, coarse_fine_period) */
	.period_auto = FC_PERIOD_DEFAULT,
};
FC_TLS int fc__in_writer;
FC_TLS int fc__lock_mine;


/* FC_KERNEL_TRIES (sample.h): why a kernel read is retried. */
FC__START_TEXT int64_t fc__kernel_ns(const struct fc_clock *c, clockid_t id)
{
	int64_t ns = 0;
	for (int i = 0; i < FC_KERNEL_TRIES; i++)
		if (c->src.kernel(c->src.ctx, id, &ns) == 0)
			break;
	return ns;
}

int64_t fc__kernel_coarse(int how)
{
	struct timespec ts;
	if (kernel_gettime((how & FC__REAL) ? CLOCK_REALTIME_COARSE : CLOCK_MONOTONIC_COARSE, &ts) != 0)
		return INT64_MIN;
	return (int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

void fc__copy_str(char *dst, size_t n, const char *src)
{
	size_t l = strnlen(src, n - 1);
	memcpy(dst, src, l);
	dst[l] = 0;
}

/* ---- the coarse clocks' store ------------------------------------------------------------------------- */
/* Relaxed: coarse values order nothing; a coarse read is one load, and read-read coherence on this one
 * location is what keeps a thread's coarse reads monotonic. 0 means "not maintained": only a keeper's first
 * store leaves it (fc__coarse_first), so a late raise can never bring back a location fc_updater_stop()
 * has cleared. loc: &pub->coarse_mono (a real-time keeper) or the clock's coarse_kept (updater.c). */
void fc__coarse_raise(struct fc_pub *pub, int64_t *loc, int64_t mono, int64_t real_off)
{
	int64_t old = __atomic_load_n(loc, __ATOMIC_RELAXED);
	__atomic_store_n(&pub->coarse_real_off, real_off, __ATOMIC_RELAXED);
	while (old != 0 && mono > old &&
	       !__atomic_compare_exchange_n(loc, &old, mono, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

void fc__coarse_first(struct fc_pub *pub, int64_t *loc, int64_t mono, int64_t real_off)
{
	int64_t old = 0;
	__atomic_store_n(&pub->coarse_real_off, real_off, __ATOMIC_RELAXED);
	if (!__atomic_compare_exchange_n(loc, &old, mono, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		fc__coarse_raise(pub, loc, mono, real_off);
}

/* A value for the coarse clocks now, without ever waiting: the current hand's value at the counter, clamped to
 * its validity window (never above what any later precise read returns: later hands dominate it), or on a
 * kernel hand the kernel's clock raised to the hand's floor. *real_off gets the matching wall offset. */
void fc__state_coarse_sample(const struct fc_clock *c, int64_t *mono, int64_t *real_off)
{
	struct fc_hand h;
	uint64_t t;
	(void)fc__hand_snapshot(c->pub, c->src.counter, c->src.ctx, &h, &t);
	if (h.flags & FC_HAND_KERNEL) {
		struct fc_offset o;
		(void)fc__sample_offset(&c->src, 1, FC_KERNEL_TRIES, &o); /* a failed read counts as 0 */
		*mono = o.m1 < h.floor_ns ? h.floor_ns : o.m1;
		*real_off = fc__offset_mid(&o);
		return;
	}
	if ((h.flags & FC_HAND_PROBE) && ((t - h.base_ticks) & h.mask) <= (h.mask >> 1) &&
	    ((t - h.base_ticks) & h.mask) >= h.valid_ticks) {
		/* Past a probe hand's window (a parked keeper's last hand) reads returned the kernel's clock raised to
		 * the hand's largest value (read.c), coarse reads too (precise while parked): the keeper's first value
		 * after parking is taken as they were, never below them (the window's end was up to the whole time
		 * parked behind). The next hand starts above the kernel's clock (windup.c), so no later precise read
		 * is below it. */
		struct fc_offset o;
		const int64_t end = fc__hand_at(h.mono_ns, h.valid_ticks, h.mult, h.frac);
		(void)fc__sample_offset(&c->src, 1, FC_KERNEL_TRIES, &o); /* a failed read counts as 0 */
		*mono = o.m1 < end ? end : o.m1;
		*real_off = fc__offset_mid(&o);
		return;
	}
	*mono = fc__hand_at(h.mono_ns, fc__hand_window_delta(&h, t), h.mult, h.frac);
	*real_off = h.real_off_ns;
}
