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
 *     real(t) = mono(t) + real_off_ns
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
 * uses 10 hands at hz = 1000; 8 keeps the ring within 1 KiB. */
#define FC_HANDS 8

#define FC_HAND_KERNEL 1u /* no counter: readers use the kernel's clock (fail closed, or not yet started) */

struct fc_hand {
	/* --- first cache line: everything the read path touches --- */
	uint32_t gen;         /* 0 while the writer fills the hand; otherwise changes on every reuse */
	uint32_t flags;       /* FC_HAND_* */
	uint64_t stale_ticks; /* a delta at or past this takes the slow path (re-anchor); 0 in kernel hands */
	uint64_t base_ticks;  /* counter value at the anchor */
	uint64_t mask;        /* counter width: deltas are taken modulo mask + 1 */
	uint64_t mult;        /* ns per tick, 32.32 fixed point */
	uint64_t frac;        /* fraction of a ns of the anchor value, units of 2^-32 ns (< 2^32) */
	int64_t mono_ns;      /* CLOCK_MONOTONIC at base_ticks, whole ns */
	int64_t real_off_ns;  /* CLOCK_REALTIME - CLOCK_MONOTONIC while this hand is current */
	/* --- second cache line: slow path, bounds, bookkeeping --- */
	uint64_t valid_ticks; /* deltas below this may use the hand even if stale; >= stale_ticks */
	int64_t mono_err_ns;  /* tracking error bound (vs the kernel) at the anchor, ns */
	uint64_t err_mult;    /* growth of the bound per tick, 32.32 fixed point ns */
	int64_t ntp_err_ns;   /* the bound source's half-width vs UTC over this hand's life (src/bound) */
	int32_t sync_status;  /* FC_SYNC_* for bounded reads */
	uint32_t pad_;
	int64_t floor_ns;     /* kernel hands: monotonic values are clamped to at least this */
	struct fc_hand *next; /* ring link, written once at init */
	int64_t utc_corr_ns;  /* the bound's centre: UTC ~ CLOCK_REALTIME + this (bounded reads only; fc_real_ns
			       * stays on the kernel's CLOCK_REALTIME) */
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

/* Interleaving points for deterministic tests (tests/interleave): a test defines FC__TEST_POINT(n) before
 * including this header and the reader calls it between its steps, where the test runs writer steps. Empty
 * otherwise: the read path an application compiles is unchanged. */
#ifndef FC__TEST_POINT
#define FC__TEST_POINT(n) ((void)0)
#endif
#define FC__TP_AFTER_R1 1 /* pointer loaded, generation not yet */
#define FC__TP_AFTER_R2 2 /* generation loaded, fields not yet */
#define FC__TP_FIELDS 3   /* base and mask loaded (delta computed), rate and anchor value not yet */
#define FC__TP_AFTER_R3 4 /* every field loaded, fence passed, generation not re-checked yet */
#define FC__TP_R4_R5 5    /* generation re-checked, current pointer not re-checked yet */

/* Error-bound fields, copied under the same protocol by bounded reads (fc_real_bounded). */
struct fc__bound {
	int64_t track_err_ns; /* |fastclock - kernel| bound at this read */
	int64_t ntp_err_ns;   /* the bound source's half-width vs UTC */
	int64_t utc_corr_ns;  /* its centre, relative to CLOCK_REALTIME */
	int32_t sync_status;  /* enum fc_sync */
};

/*
 * The reader protocol. Copies what it needs from the current hand, reads the counter, and retries if the
 * hand was recycled meanwhile. Returns 1 with *mono and *real_off set, or 0 when the slow path must run
 * (kernel hand, or a delta past stale_ticks: the hand needs re-anchoring, or the counter went backwards).
 * `counter` is a constant at every call site, so it is inlined: the real clocks pass the hardware hook,
 * the simulation tests pass a simulated counter, and both run this same code. `b` is NULL (a constant, so
 * the bound code vanishes) except in bounded reads.
 */
FC__ALWAYS_INLINE int fc__hand_read(const struct fc_pub *pub, uint64_t (*counter)(void), int64_t *mono,
				    int64_t *real_off, struct fc__bound *b)
{
	const struct fc_hand *th;
	uint32_t gen;
	uint64_t delta, stale;
	int64_t m, r;

	do {
		/* R1: acquire pairs with W4 (publish): the hand's fields and gen written before it became
		 * current are visible. */
		th = __atomic_load_n(&pub->current, __ATOMIC_ACQUIRE);
		FC__TEST_POINT(FC__TP_AFTER_R1);
		/* R2: acquire pairs with W3: if we see the generation the writer published, we see the
		 * fields it wrote before it. */
		gen = __atomic_load_n(&th->gen, __ATOMIC_ACQUIRE);
		FC__TEST_POINT(FC__TP_AFTER_R2);
		stale = FC__LOAD(th->stale_ticks);
		if (FC__UNLIKELY(stale == 0))
			return 0;
		delta = (counter() - FC__LOAD(th->base_ticks)) & FC__LOAD(th->mask);
		if (FC__UNLIKELY(delta >= stale))
			return 0;
		FC__TEST_POINT(FC__TP_FIELDS);
		m = FC__LOAD(th->mono_ns) + (int64_t)fc__scale(delta, FC__LOAD(th->mult), FC__LOAD(th->frac));
		r = real_off ? FC__LOAD(th->real_off_ns) : 0; /* real_off is a constant at every call site */
		if (b) {
			b->track_err_ns = FC__LOAD(th->mono_err_ns) + (int64_t)fc__scale(delta, FC__LOAD(th->err_mult), 0);
			b->ntp_err_ns = FC__LOAD(th->ntp_err_ns);
			b->utc_corr_ns = FC__LOAD(th->utc_corr_ns);
			b->sync_status = FC__LOAD(th->sync_status);
		}
		/* R3: acquire fence pairs with W1: if any field load above saw a store made after the writer
		 * zeroed gen, the gen load below sees 0 or the new generation, and we retry. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		FC__TEST_POINT(FC__TP_AFTER_R3);
		/* R4: validate. gen 0: being written; changed: recycled while we read. */
		/* R5: still current. A reader descheduled after R1 for N-1 updates can copy its hand after
		 * the writer recycled it (W3 done) but before that update's W4 is visible: it would return
		 * the newest hand's value, and its next R1 would load the older hand before it, whose line
		 * can be lower: time would go back (spin finds it without R5: tests/model, NO_R5, finding
		 * F1 in docs/VERIFICATION.md). One L1 load, ordered after the field loads by R3. */
	} while (FC__UNLIKELY(gen == 0 || gen != __atomic_load_n(&th->gen, __ATOMIC_RELAXED) ||
			      (FC__TEST_POINT(FC__TP_R4_R5), th != __atomic_load_n(&pub->current, __ATOMIC_RELAXED))));
	*mono = m;
	if (real_off)
		*real_off = r;
	return 1;
}

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_FC_HAND_H */
