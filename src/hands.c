/*
 * fastclock — the writer side of the timehands publication protocol.
 *
 * One writer at a time (the caller holds the clock's try-lock). The writer never touches the current hand:
 * it fills the next one in the ring and then makes it current, so readers of the current hand never wait.
 * A reader retries only if the writer recycles the very hand it is reading, which takes FC_HANDS - 1 more
 * re-anchors. The steps are named W1..W4 here, R1..R5 in include/fastclock/fc_hand.h (the one reader
 * protocol, fc__hand_current .. fc__hand_moved, which every reader runs), and the same names label the Promela
 * model in tests/model/timehands.pml.
 */
#include <stdint.h>
#include <string.h>

#include "section.h"
#include "hands.h"

/* Interleaving points for deterministic tests (tests/interleave compiles this file with its own
 * FC__WRITER_POINT and pauses the writer there while readers run). Empty in the library. */
#ifndef FC__WRITER_POINT
#define FC__WRITER_POINT(n) ((void)0)
#endif

FC__START_TEXT void fc__hands_init(struct fc_hands *h, struct fc_pub *pub, uint32_t gen_start)
{
	/* Readers that arrive before the first publish (or threads started before initialisation) load the
	 * boot hand through pub->current, so its fields are written with relaxed atomic stores, never with a
	 * memset: they are the values it was statically initialised with. Ring hands are unreachable until
	 * published. */
	memset(h->ring, 0, sizeof(h->ring));
	for (unsigned i = 0; i < FC_HANDS; i++) {
		h->ring[i].next = &h->ring[(i + 1) % FC_HANDS];
		/* Unpublished hands keep a generation too, so the first reuse of each already wraps when the
		 * tests start next to UINT32_MAX. gen_start 0 is bumped to 1 by the first publish. */
		h->ring[i].gen = gen_start;
	}
	__atomic_store_n(&h->boot.gen, 1, __ATOMIC_RELAXED);
	FC__STORE(h->boot.flags, FC_HAND_KERNEL);
	FC__STORE(h->boot.stale_ticks, 0); /* every read takes the slow path, which initialises the clock */
	FC__STORE(h->boot.mask, ~(uint64_t)0);
	FC__STORE(h->boot.floor_ns, INT64_MIN);
	h->boot.next = &h->ring[0];
	__atomic_store_n(&pub->coarse_mono, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&pub->coarse_real_off, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&pub->current, &h->boot, __ATOMIC_RELEASE);
}

/* (sec, nsec) with sec * 10^9 + nsec = ns and 0 <= nsec < 10^9: floor division, as the kernel's timespec. ns is
 * the sum of two int64 values, exact in 128 bits. A constant divisor: a multiply, on the writer's path only. */
static void split_anchor(__int128 ns, int64_t *sec, uint32_t *nsec)
{
	__int128 q = ns / 1000000000, r = ns % 1000000000;
	if (r < 0)
		q--, r += 1000000000;
	*sec = (int64_t)q;
	*nsec = (uint32_t)r;
}

void fc__hand_anchors(struct fc_hand *h)
{
	uint32_t nsec;
	/* real_ns wraps as the sum mono + real_off of the ns reads would (only a fuzzer's hand gets there); the
	 * seconds and nanoseconds hold the exact sum. frac < 2^32 and nsec < 2^30: the remainders fit 64 bits. */
	h->real_ns = (int64_t)((uint64_t)h->mono_ns + (uint64_t)h->real_off_ns);
	split_anchor(h->mono_ns, &h->mono_sec, &nsec);
	h->mono_subsec = ((uint64_t)nsec << 32) + h->frac;
	split_anchor((__int128)h->mono_ns + h->real_off_ns, &h->real_sec, &nsec);
	h->real_subsec = ((uint64_t)nsec << 32) + h->frac;
}

FC__START_TEXT struct fc_hand *fc__hands_publish(struct fc_pub *pub, const struct fc_hand *p)
{
	struct fc_hand a; /* the drop-ins' anchors, derived from mono_ns and real_off_ns */
	/* Only the lock holder stores pub->current, so a relaxed load sees our own last store. */
	struct fc_hand *cur = __atomic_load_n(&pub->current, __ATOMIC_RELAXED);
	struct fc_hand *th = cur->next;
	uint32_t gen = th->gen + 1;

	if (gen == 0) /* 0 means "being written": skip it on wrap */
		gen = 1;
	/* The drop-ins' anchors: derived here from mono_ns and real_off_ns, so no caller can make them disagree. */
	a.mono_ns = p->mono_ns;
	a.real_off_ns = p->real_off_ns;
	a.frac = p->frac;
	fc__hand_anchors(&a);

	/* W1: mark the hand as being written. The release fence orders this store before every field store
	 * below: a reader that loads any new field value (R3's acquire fence) then sees gen == 0 or the new
	 * generation at R4, and retries. (FreeBSD: th_generation = 0; atomic_thread_fence_rel().) */
	__atomic_store_n(&th->gen, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	FC__WRITER_POINT(FC__WP_AFTER_W1);

	/* W2: write the fields. Relaxed stores: readers may copy them concurrently (and will retry). */
	FC__STORE(th->flags, p->flags);
	FC__STORE(th->stale_ticks, p->stale_ticks);
	FC__STORE(th->base_ticks, p->base_ticks);
	FC__STORE(th->mask, p->mask);
	FC__STORE(th->mult, p->mult);
	FC__STORE(th->frac, p->frac);
	FC__WRITER_POINT(FC__WP_MID_W2);
	FC__STORE(th->mono_ns, p->mono_ns);
	FC__STORE(th->real_off_ns, p->real_off_ns);
	FC__STORE(th->real_ns, a.real_ns);
	FC__STORE(th->mono_sec, a.mono_sec);
	FC__STORE(th->mono_subsec, a.mono_subsec);
	FC__STORE(th->real_sec, a.real_sec);
	FC__STORE(th->real_subsec, a.real_subsec);
	FC__STORE(th->valid_ticks, p->valid_ticks);
	FC__STORE(th->mono_err_ns, p->mono_err_ns);
	FC__STORE(th->err_mult, p->err_mult);
	FC__STORE(th->utc_err_ns, p->utc_err_ns);
	FC__STORE(th->sync_status, p->sync_status);
	FC__STORE(th->utc_corr_ns, p->utc_corr_ns);
	FC__STORE(th->floor_ns, p->floor_ns);

	FC__WRITER_POINT(FC__WP_AFTER_W2);
	/* W3: publish the generation with release: pairs with R2, so a reader that sees this generation sees
	 * every field above. */
	__atomic_store_n(&th->gen, gen, __ATOMIC_RELEASE);
	FC__WRITER_POINT(FC__WP_AFTER_W3);

	/* W4: make it current with release: pairs with R1, so a reader that loads this pointer sees the
	 * complete hand (fields and generation). */
	__atomic_store_n(&pub->current, th, __ATOMIC_RELEASE);
	return th;
}
