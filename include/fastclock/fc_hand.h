/*
 * fastclock — the timehand layout and the reader side of the publication protocol.
 *
 * This header is internal (names start with fc__ / fc_hand) but must be visible to the inline readers in
 * <fastclock.h>. The writer side lives in src/hands.c; the protocol is modelled in tests/model/timehands.pml and
 * every barrier below names its step there (R1..R5 for readers, W1..W4 for the writer).
 *
 * A hand maps a counter value t to time:
 *
 *     mono(t) = mono_ns + ((t - base_ticks) & mask) * mult + frac) >> 32        (32.32 fixed point)
 *     real(t) = mono(t) + real_off_ns = real_ns + (mono(t) - mono_ns)
 *
 * and keeps the same anchors split into whole seconds and a 32.32 fixed-point remainder (mono_sec and
 * mono_subsec = nsec << 32 | frac; real_sec, real_subsec), as the Linux vDSO's vdso_timestamp and FreeBSD's
 * bintime keep theirs: a timespec's nanoseconds are then (delta * mult + subsec) >> 32, the same multiply-add
 * as the ns value, carried into the seconds about period / 1 s of the time, instead of a division of the
 * whole ns count; a timeval's microseconds are that divided by 1000, folded into one constant division of
 * the 64-bit product (fc__scale_us).
 *
 * Invariants (kept by src/hands.c and src/track.c, proven in tests/):
 *  - A hand is used only for deltas below valid_ticks; a reader past that waits for a newer hand.
 *  - A newer hand is never below an older one where their validity overlaps, and starts at or above the
 *    older hand's largest possible value otherwise: so monotonic time never goes back, within a thread or
 *    across threads whose reads are ordered.
 *  - Uptime (mono) is never stepped backwards; real_off_ns may step, as CLOCK_REALTIME does.
 *  - Readers never write shared memory and never wait for a writer, except a reader whose hand expired
 *    (no re-anchor for valid_ticks) while another thread is re-anchoring.
 */
#ifndef FASTCLOCK_FC_HAND_H
#define FASTCLOCK_FC_HAND_H

#include <stdint.h>

#include "fc_counter.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FC__ALWAYS_INLINE static inline __attribute__((always_inline))
#define FC__LIKELY(x) __builtin_expect(!!(x), 1)
#define FC__UNLIKELY(x) __builtin_expect(!!(x), 0)
/* Relaxed atomic load/store of a plain field: a plain MOV on x86-64 and arm64, but a data race the
 * C11 model (and ThreadSanitizer) accepts, since the writer may be filling the hand a reader copies. */
#define FC__LOAD(f) __atomic_load_n(&(f), __ATOMIC_RELAXED)
#define FC__STORE(f, v) __atomic_store_n(&(f), (v), __ATOMIC_RELAXED)

/* Number of hands in the ring. A reader's hand is recycled only after this many re-anchors, so a reader
 * retries only if it was descheduled for (FC_HANDS - 1) periods between its two generation loads. FreeBSD
 * uses 10 hands at hz = 1000; 8 keeps the ring within 1.5 KiB (8 hands of 3 cache lines). */
#define FC_HANDS 8

#define FC_HAND_KERNEL 1u /* no counter: readers use the kernel's clock (fail closed, or not yet started) */
#define FC_HAND_PROBE 2u  /* a counter hand whose stale point (1) sends every read to the slow path, which notes
			   * that someone reads (src/updater.c) and uses the hand within its window */

struct fc_hand {
	/* --- first cache line: everything fc_mono_ns and fc_real_ns touch --- */
	uint32_t gen;         /* 0 while the writer fills the hand; otherwise changes on every reuse */
	uint32_t flags;       /* FC_HAND_* */
	uint64_t stale_ticks; /* a delta at or past this takes the slow path (re-anchor); 0 in kernel hands */
	uint64_t base_ticks;  /* counter value at the anchor */
	uint64_t mult;        /* ns per tick, 32.32 fixed point */
	uint64_t frac;        /* fraction of a ns of the anchor value, units of 2^-32 ns (< 2^32) */
	int64_t mono_ns;      /* CLOCK_MONOTONIC at base_ticks, whole ns */
	int64_t real_ns;      /* CLOCK_REALTIME at base_ticks: mono_ns + real_off_ns (one add less per read) */
	int64_t real_sec;     /* floor(real_ns / 10^9): the drop-ins' anchor, kept apart as the vDSO keeps it */
	/* --- second cache line: the rest of the drop-ins' anchors, bounded reads --- */
	uint64_t real_subsec; /* real_ns - real_sec * 10^9 (in [0, 10^9)) with frac below it: 32.32 fixed point */
	int64_t mono_sec;     /* floor(mono_ns / 10^9) */
	uint64_t mono_subsec; /* mono_ns - mono_sec * 10^9, and frac, in 32.32 fixed point */
	int64_t mono_err_ns;  /* tracking error bound (vs the kernel) at the anchor, ns */
	uint64_t err_mult;    /* growth of the bound per tick, 32.32 fixed point ns */
	int64_t utc_err_ns;   /* the bound source's half-width vs UTC over this hand's life (src/bound: any source,
			       * not only NTP; the name is in the ABI fingerprint, cmake/abi-layout.txt) */
	int64_t utc_corr_ns;  /* the bound's centre: UTC ~ CLOCK_REALTIME + this (bounded reads only; fc_real_ns
			       * stays on the kernel's CLOCK_REALTIME) */
	int32_t sync_status;  /* FC_SYNC_* for bounded reads */
	uint32_t pad_;
	/* --- third cache line: slow path and bookkeeping --- */
	uint64_t valid_ticks; /* deltas below this may use the hand even if stale; >= stale_ticks */
	int64_t real_off_ns;  /* CLOCK_REALTIME - CLOCK_MONOTONIC while this hand is current */
	uint64_t mask;        /* counter width: deltas are taken modulo mask + 1 (the slow path; the inline
			       * readers of the 64-bit hardware counters skip it, see fc__hand_ticks_ordered) */
	int64_t floor_ns;     /* kernel hands: monotonic values are clamped to at least this */
	struct fc_hand *next; /* ring link, written once at init */
} __attribute__((aligned(64)));

/* What readers load first: one cache line, written by the writer at each re-anchor. */
struct fc_pub {
	struct fc_hand *current; /* the newest complete hand */
	int64_t coarse_mono;     /* a recent monotonic value (one load for fc_mono_coarse_ns) */
	int64_t coarse_real_off; /* real_off_ns of the newest hand */
} __attribute__((aligned(64)));

/* (delta * mult + frac) >> 32 (low 64 bits of the result), exact in 128 bits. Where the compiler has a 128-bit
 * type: a 64x64->128 multiply, an add and a shift. __extension__ keeps -Wpedantic quiet about __int128 in
 * every C and C++ standard. */
#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 fc__u128;
FC__ALWAYS_INLINE uint64_t fc__scale(uint64_t delta, uint64_t mult, uint64_t frac)
{
	return (uint64_t)(((fc__u128)delta * mult + frac) >> 32);
}
#endif

/* The same in 32x32->64 products, for targets without a 128-bit type (32-bit targets, which have no user
 * counter: FC_HAVE_COUNTER is 0 there and only the slow path runs). With a = a1:a0 and b = b1:b0 in 32-bit
 * halves, a*b + f = p11<<64 + (p01 + p10)<<32 + p00 + f; bits 32..95 are the result. */
FC__ALWAYS_INLINE uint64_t fc__scale_portable(uint64_t delta, uint64_t mult, uint64_t frac)
{
	const uint64_t lo = 0xffffffffu;
	uint64_t a0 = delta & lo, a1 = delta >> 32, b0 = mult & lo, b1 = mult >> 32;
	uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	uint64_t carry = ((p00 & lo) + (frac & lo)) >> 32;                               /* into bit 32 */
	uint64_t mid = (p00 >> 32) + (frac >> 32) + (p01 & lo) + (p10 & lo) + carry; /* < 5 * 2^32 */
	return (mid & lo) | ((p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32)) << 32);
}

#if !defined(__SIZEOF_INT128__)
FC__ALWAYS_INLINE uint64_t fc__scale(uint64_t delta, uint64_t mult, uint64_t frac)
{
	return fc__scale_portable(delta, mult, frac);
}
#endif

/* fc__scale(delta, mult, f) / 1000, exactly: floor(floor(y / 2^32) / 1000) = floor(y / (1000 * 2^32)) for
 * y = delta * mult + f. While y fits 64 bits (a scaled delta below ~4 s: every fast-path read) that is one
 * division of y by a constant, which compilers turn into a shift and a multiply, with no shift of the 128-bit
 * product first: about 3 cycles less than dividing the ns value. */
FC__ALWAYS_INLINE uint64_t fc__scale_us(uint64_t delta, uint64_t mult, uint64_t f)
{
#if defined(__SIZEOF_INT128__)
	const fc__u128 y = (fc__u128)delta * mult + f;
	if (FC__LIKELY((uint64_t)(y >> 64) == 0))
		return (uint64_t)y / (1000ull << 32);
	return (uint64_t)(y >> 32) / 1000u;
#else
	return fc__scale_portable(delta, mult, f) / 1000u;
#endif
}

/* Interleaving points for deterministic tests (tests/interleave): a test defines FC__TEST_POINT(n) before
 * including this header and the reader calls it between its steps, where the test runs writer steps. Empty
 * otherwise: the read path an application compiles is unchanged. Each sits at a step boundary of the protocol
 * below, in the primitive that ends the step, so every reader stops at the same points. */
#ifndef FC__TEST_POINT
#define FC__TEST_POINT(n) ((void)0)
#endif
#define FC__TP_AFTER_R1 1 /* pointer loaded, generation not yet (fc__hand_current) */
#define FC__TP_AFTER_R2 2 /* generation loaded, fields not yet (fc__hand_begin) */
#define FC__TP_FIELDS 3   /* the counter's line copied (base, mask; inline: the delta computed), the rate and the
			   * anchor value not yet (fc__hand_delta, fc__hand_copy) */
#define FC__TP_AFTER_R3 4 /* every field loaded, fence passed, generation not re-checked yet (fc__hand_changed) */
#define FC__TP_R4_R5 5    /* generation re-checked, current pointer not re-checked yet (fc__hand_moved) */

/*
 * The reader protocol: the only copy. Every reader of a hand, inline or slow, is
 *
 *	do {
 *		th = fc__hand_current(pub);                   R1
 *		gen = fc__hand_begin(th);                     R2
 *		copy th's fields with FC__LOAD, read the counter
 *	} while (FC__UNLIKELY(fc__hand_retry(pub, th, gen)));    R3, R4, R5
 *
 * as the Linux vDSO's vdso_read_begin / vdso_read_retry and Concurrency Kit's ck_sequence_read_begin /
 * ck_sequence_read_retry are, and FreeBSD's getthmember() loop; the steps are those of the model
 * (tests/model/timehands.pml, which names these functions at each: tests/model/check_steps.py). Only the copy
 * differs from reader to reader, and the arithmetic runs after the loop, on the validated copy: the inline
 * forms (fc__hand_read_ns .. fc__hand_read_tv, below) copy only the fields they need; the slow readers
 * (src/read.c, src/state.c) take fc__hand_snapshot's copy of all of them. A reader that validates a hand it
 * found in the ring rather than the current one (src/convert.c) uses fc__hand_begin and fc__hand_changed
 * (R2..R4): R5 is about the current pointer.
 */

/* The current hand: the first step of every read of it. */
FC__ALWAYS_INLINE const struct fc_hand *fc__hand_current(const struct fc_pub *pub)
{
	/* R1: acquire pairs with W4 (publish): the hand's fields and gen written before it became current are
	 * visible. */
	const struct fc_hand *th = __atomic_load_n(&pub->current, __ATOMIC_ACQUIRE);
	FC__TEST_POINT(FC__TP_AFTER_R1);
	return th;
}

/* th's generation, before any field is copied: what fc__hand_changed / fc__hand_retry compare with. */
FC__ALWAYS_INLINE uint32_t fc__hand_begin(const struct fc_hand *th)
{
	/* R2: acquire pairs with W3: if we see the generation the writer published, we see the fields it wrote
	 * before it. */
	const uint32_t gen = __atomic_load_n(&th->gen, __ATOMIC_ACQUIRE);
	FC__TEST_POINT(FC__TP_AFTER_R2);
	return gen;
}

/* Nonzero when the fields copied since fc__hand_begin(th) returned gen may be torn: retry. */
FC__ALWAYS_INLINE int fc__hand_changed(const struct fc_hand *th, uint32_t gen)
{
	/* R3: acquire fence pairs with W1: if any field load since R2 saw a store made after the writer zeroed
	 * gen, the gen load below sees 0 or the new generation, and we retry. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	FC__TEST_POINT(FC__TP_AFTER_R3);
	/* R4: validate. gen 0: being written; changed: recycled while we read. */
	return gen == 0 || gen != __atomic_load_n(&th->gen, __ATOMIC_RELAXED);
}

/* Nonzero when the current hand th is no longer current (R5, after fc__hand_changed's R3 and R4). Why: a
 * reader descheduled after R1 for N-1 updates can copy its hand after the writer recycled it (W3 done) but
 * before that update's W4 is visible: it would return the newest hand's value, and its next R1 would load the
 * older hand before it, whose line can be lower: time would go back (spin finds it without R5: tests/model,
 * NO_R5, finding F1 in docs/VERIFICATION.md). */
FC__ALWAYS_INLINE int fc__hand_moved(const struct fc_pub *pub, const struct fc_hand *th)
{
	FC__TEST_POINT(FC__TP_R4_R5);
	/* R5: still current: one L1 load, ordered after the field loads by R3. */
	return th != __atomic_load_n(&pub->current, __ATOMIC_RELAXED);
}

/* Nonzero when the copy of the current hand th, begun with gen, must be taken again: it may be torn
 * (fc__hand_changed: R3, R4), or th is no longer current (fc__hand_moved: R5). A macro, not a function: clang
 * (14) keeps an inline function's result as a value and tests it again (4 instructions more per read); gcc
 * and clang both branch straight from this expression, as from the one it replaced. */
#define fc__hand_retry(pub, th, gen) (fc__hand_changed((th), (gen)) || fc__hand_moved((pub), (th)))

/* The value of a line at delta ticks past its anchor: anchor + ((delta * mult + frac) >> 32). The hand
 * arithmetic, written once: the inline readers (anchor mono_ns or real_ns, and the bound's mono_err_ns at
 * err_mult), the slow path (src/read.c) and the coarse sample (src/state.c) all call it. Added unsigned: the
 * same instruction, but a sum past INT64_MAX (only a fuzzer's hand gets there) wraps as defined instead of
 * being undefined behaviour. */
FC__ALWAYS_INLINE int64_t fc__hand_at(int64_t anchor, uint64_t delta, uint64_t mult, uint64_t frac)
{
	return (int64_t)((uint64_t)anchor + fc__scale(delta, mult, frac));
}

/* The distance of counter value t from h's anchor, modulo the counter's width, held inside the hand's window:
 * 0 behind the anchor (cross-core skew: the anchor's value, as the vDSO clamps), at most valid_ticks past it.
 * For a copy of a hand (src/state.c's coarse sample) or the writer's own (src/track.c's fc__track_value_fx). */
static inline uint64_t fc__hand_window_delta(const struct fc_hand *h, uint64_t t)
{
	const uint64_t d = (t - h->base_ticks) & h->mask;
	if (d > (h->mask >> 1))
		return 0;
	return d > h->valid_ticks ? h->valid_ticks : d;
}

/* Carries a timespec's nanoseconds (unit 10^9) or a timeval's microseconds (unit 10^6) into its seconds. The
 * anchor's remainder is below one second and the fast path's scaled delta below stale_ticks, one period (at
 * most 1 s, FC_MAX_PERIOD_NS in src/config.h), so the sum stays below about 2 s: a read pays one compare, and
 * about period / 1 s of reads carry once. The division is by a constant (a multiply), in the rare branch only,
 * and keeps any hand correct (the fuzzers build hands with any fields). */
FC__ALWAYS_INLINE void fc__carry(int64_t *sec, int64_t *sub, uint32_t unit)
{
	uint64_t n = (uint64_t)*sub;
	if (FC__UNLIKELY(n >= unit)) {
		*sec += (int64_t)(n / unit);
		*sub = (int64_t)(n % unit);
	}
}

/*
 * The inline read forms: fc__hand_read_ns (fc_mono_ns, fc_real_ns), fc__hand_read_bounded (the bounded reads;
 * fc_real_bounded through fc__hand_read_real_bounded, which also checks the kernel's coarse wall clock),
 * fc__hand_read_ts (fc_clock_gettime), fc__hand_read_tv (fc_gettimeofday). Each is the protocol's loop copying the few
 * fields it needs and the counter's distance from the anchor; the arithmetic runs once, after the copy is
 * validated (FreeBSD's bintime_off, the vDSO's do_hres). Each returns 1, or 0 when the slow path must run
 * (fc__hand_delta). `real` picks CLOCK_REALTIME's anchor over CLOCK_MONOTONIC's.
 *
 * `ticks` is the counter's distance from th's anchor, a constant at every call site and so inlined:
 * fc__hand_ticks_ordered / fc__hand_ticks_relaxed below for the library's 64-bit hardware counters, whose hands have
 * mask ~0, so they skip the mask (one AND less on the critical path; a wrap makes the delta huge, past
 * stale_ticks, and the slow path takes it modulo the mask). The simulations' narrower counters pass a hook
 * that masks (fc__hand_ticks_masked): they run these same loops.
 */
typedef uint64_t (*fc__hand_ticks_fn)(const struct fc_hand *th);

FC__ALWAYS_INLINE uint64_t fc__hand_ticks_ordered(const struct fc_hand *th)
{
	return fc__counter_ordered() - FC__LOAD(th->base_ticks);
}

FC__ALWAYS_INLINE uint64_t fc__hand_ticks_relaxed(const struct fc_hand *th)
{
	return fc__counter_relaxed() - FC__LOAD(th->base_ticks);
}

/* For a counter narrower than 64 bits: counter value t's distance from th's anchor modulo the mask + 1. */
FC__ALWAYS_INLINE uint64_t fc__hand_ticks_masked(const struct fc_hand *th, uint64_t t)
{
	return (t - FC__LOAD(th->base_ticks)) & FC__LOAD(th->mask);
}

/* The counter's distance from th's anchor into *delta. 0 when the slow path must run: a kernel hand
 * (stale_ticks 0; the counter is not read), or a delta at or past stale_ticks (the hand needs re-anchoring,
 * or the counter went backwards). Part of the caller's copy: it runs between R2 and R3. */
FC__ALWAYS_INLINE int fc__hand_delta(const struct fc_hand *th, fc__hand_ticks_fn ticks, uint64_t *delta)
{
	const uint64_t stale = FC__LOAD(th->stale_ticks);
	if (FC__UNLIKELY(stale == 0))
		return 0;
	*delta = ticks(th);
	if (FC__UNLIKELY(*delta >= stale))
		return 0;
	FC__TEST_POINT(FC__TP_FIELDS);
	return 1;
}

/* CLOCK_MONOTONIC or (real) CLOCK_REALTIME in ns into *ns. */
FC__ALWAYS_INLINE int fc__hand_read_ns(const struct fc_pub *pub, fc__hand_ticks_fn ticks, int real, int64_t *ns)
{
	const struct fc_hand *th;
	uint32_t gen;
	uint64_t delta, mult, frac;
	int64_t anchor;
	do {
		th = fc__hand_current(pub);
		gen = fc__hand_begin(th);
		if (FC__UNLIKELY(!fc__hand_delta(th, ticks, &delta)))
			return 0;
		mult = FC__LOAD(th->mult);
		frac = FC__LOAD(th->frac);
		anchor = real ? FC__LOAD(th->real_ns) : FC__LOAD(th->mono_ns);
	} while (FC__UNLIKELY(fc__hand_retry(pub, th, gen)));
	*ns = fc__hand_at(anchor, delta, mult, frac);
	return 1;
}

/* Error-bound fields of a bounded read (fc_real_bounded, fc_mono_bounded). */
struct fc__bound {
	int64_t track_err_ns; /* |fastclock - kernel| bound at this read */
	int64_t utc_err_ns;   /* the bound source's half-width vs UTC (any source; named as in struct fc_hand) */
	int64_t utc_corr_ns;  /* its centre, relative to CLOCK_REALTIME */
	int32_t sync_status;  /* enum fc_sync */
};

/* fc__hand_read_ns's value, and its bound into *b: the hand's error fields, the tracking error grown over delta. */
FC__ALWAYS_INLINE int fc__hand_read_bounded(const struct fc_pub *pub, fc__hand_ticks_fn ticks, int real, int64_t *ns,
					    struct fc__bound *b)
{
	const struct fc_hand *th;
	uint32_t gen;
	uint64_t delta, mult, frac, err_mult;
	int64_t anchor, err;
	do {
		th = fc__hand_current(pub);
		gen = fc__hand_begin(th);
		if (FC__UNLIKELY(!fc__hand_delta(th, ticks, &delta)))
			return 0;
		mult = FC__LOAD(th->mult);
		frac = FC__LOAD(th->frac);
		anchor = real ? FC__LOAD(th->real_ns) : FC__LOAD(th->mono_ns);
		err = FC__LOAD(th->mono_err_ns);
		err_mult = FC__LOAD(th->err_mult);
		b->utc_err_ns = FC__LOAD(th->utc_err_ns);
		b->utc_corr_ns = FC__LOAD(th->utc_corr_ns);
		b->sync_status = FC__LOAD(th->sync_status);
	} while (FC__UNLIKELY(fc__hand_retry(pub, th, gen)));
	*ns = fc__hand_at(anchor, delta, mult, frac);
	b->track_err_ns = fc__hand_at(err, delta, err_mult, 0);
	return 1;
}

/* The kernel's CLOCK_REALTIME as of its last tick (CLOCK_REALTIME_COARSE), in ns: a constant at every call site
 * (fastclock.h's, or a simulation's), so inlined. */
typedef int64_t (*fc__wall_fn)(void);

/* w <= v + err, exactly for any operands (no wrap): the sum may leave int64 for a corrupt or fuzzed hand, and a
 * wrapped sum would pass a wall value past it. A negative error (no hand the tracker publishes has one) is
 * never within: fail closed. The common case, a coarse value below the hand's, is one compare. */
FC__ALWAYS_INLINE int fc__wall_within(int64_t w, int64_t v, int64_t err)
{
	return err >= 0 && (w <= v || (uint64_t)w - (uint64_t)v <= (uint64_t)err);
}

/* fc__hand_read_bounded for CLOCK_REALTIME, then 0 (the slow path, which re-anchors) when the kernel's wall clock
 * is past what the hand knows. A hand sees a wall step only when re-anchored: a settimeofday, or a resume whose
 * counter stood still while CLOCK_REALTIME moved on, would be followed up to a period late, every read meanwhile
 * off by the step. The kernel's coarse clock is never ahead of its precise one, which is within the tracking
 * bound of the hand's value: so a coarse value above value + bound is a forward step the hand has not seen.
 * Read after the counter: a preemption between the two can only send the read to the slow path for nothing,
 * never pass a stale hand. A forward step of less than a tick (the coarse clock's lag) may go unseen, and so
 * may any step back. Costs the coarse read (the vDSO's: no counter read, no system call) and a compare. */
FC__ALWAYS_INLINE int fc__hand_read_real_bounded(const struct fc_pub *pub, fc__hand_ticks_fn ticks, fc__wall_fn wall,
						 int64_t *ns, struct fc__bound *b)
{
	if (FC__UNLIKELY(!fc__hand_read_bounded(pub, ticks, 1, ns, b)))
		return 0;
	if (FC__UNLIKELY(!fc__wall_within(wall(), *ns, b->track_err_ns)))
		return 0; /* not FC__LIKELY's value: a long, which -Wconversion flags returned as int */
	return 1;
}

/* CLOCK_MONOTONIC or (real) CLOCK_REALTIME as a timespec's seconds and nanoseconds (in [0, 10^9)), from the
 * anchor's whole seconds and 32.32 remainder: the same multiply-add as the ns value, no division. */
FC__ALWAYS_INLINE int fc__hand_read_ts(const struct fc_pub *pub, fc__hand_ticks_fn ticks, int real, int64_t *sec,
				       int64_t *nsec)
{
	const struct fc_hand *th;
	uint32_t gen;
	uint64_t delta, mult, subsec;
	int64_t s;
	do {
		th = fc__hand_current(pub);
		gen = fc__hand_begin(th);
		if (FC__UNLIKELY(!fc__hand_delta(th, ticks, &delta)))
			return 0;
		mult = FC__LOAD(th->mult);
		s = real ? FC__LOAD(th->real_sec) : FC__LOAD(th->mono_sec);
		subsec = real ? FC__LOAD(th->real_subsec) : FC__LOAD(th->mono_subsec);
	} while (FC__UNLIKELY(fc__hand_retry(pub, th, gen)));
	*sec = s;
	*nsec = (int64_t)fc__scale(delta, mult, subsec);
	fc__carry(sec, nsec, 1000000000u);
	return 1;
}

/* CLOCK_REALTIME as a timeval's seconds and microseconds (in [0, 10^6)): fc__hand_read_ts's sum divided by 1000,
 * folded into one constant division (fc__scale_us). */
FC__ALWAYS_INLINE int fc__hand_read_tv(const struct fc_pub *pub, fc__hand_ticks_fn ticks, int64_t *sec, int64_t *usec)
{
	const struct fc_hand *th;
	uint32_t gen;
	uint64_t delta, mult, subsec;
	int64_t s;
	do {
		th = fc__hand_current(pub);
		gen = fc__hand_begin(th);
		if (FC__UNLIKELY(!fc__hand_delta(th, ticks, &delta)))
			return 0;
		mult = FC__LOAD(th->mult);
		s = FC__LOAD(th->real_sec);
		subsec = FC__LOAD(th->real_subsec);
	} while (FC__UNLIKELY(fc__hand_retry(pub, th, gen)));
	*sec = s;
	*usec = (int64_t)fc__scale_us(delta, mult, subsec);
	fc__carry(sec, usec, 1000000u);
	return 1;
}

/* The slow readers' copy (src/read.c, src/state.c, src/convert.c): every field a reader uses, relaxed, in the
 * order of the counter's line first (flags, stale, valid, base, mask, rate), then the values. Runs between R2
 * and R3. */
static inline void fc__hand_copy(const struct fc_hand *th, struct fc_hand *h)
{
	h->flags = FC__LOAD(th->flags);
	h->stale_ticks = FC__LOAD(th->stale_ticks);
	h->valid_ticks = FC__LOAD(th->valid_ticks);
	h->base_ticks = FC__LOAD(th->base_ticks);
	h->mask = FC__LOAD(th->mask);
	h->mult = FC__LOAD(th->mult);
	h->frac = FC__LOAD(th->frac);
	FC__TEST_POINT(FC__TP_FIELDS);
	h->mono_ns = FC__LOAD(th->mono_ns);
	h->real_off_ns = FC__LOAD(th->real_off_ns);
	h->floor_ns = FC__LOAD(th->floor_ns);
	h->mono_err_ns = FC__LOAD(th->mono_err_ns);
	h->err_mult = FC__LOAD(th->err_mult);
	h->utc_err_ns = FC__LOAD(th->utc_err_ns);
	h->sync_status = FC__LOAD(th->sync_status);
	h->utc_corr_ns = FC__LOAD(th->utc_corr_ns);
}

/* The slow readers' snapshot: the current hand copied into *h (fc__hand_copy) and, unless it is a kernel hand
 * (no counter: the kernel's clock is read after validation), the counter into *ticks, under the protocol.
 * Returns the hand copied (what a re-anchor must replace). */
static inline const struct fc_hand *fc__hand_snapshot(const struct fc_pub *pub, uint64_t (*counter)(void *),
						      void *ctx, struct fc_hand *h, uint64_t *ticks)
{
	const struct fc_hand *th;
	uint32_t gen;
	do {
		th = fc__hand_current(pub);
		gen = fc__hand_begin(th);
		fc__hand_copy(th, h);
		*ticks = (h->flags & FC_HAND_KERNEL) ? 0 : counter(ctx);
	} while (FC__UNLIKELY(fc__hand_retry(pub, th, gen)));
	return th;
}

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_FC_HAND_H */
