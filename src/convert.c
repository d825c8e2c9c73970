/*
 * fastclock — capture now, convert later (floor 4: public entry points): fc_ticks_to_mono_ns and
 * fc_ticks_to_real_ns convert a raw fc_ticks() capture with the hand that was current when it was taken.
 *
 * Owns: the walk back through the ring to the hand that covers a capture.
 * May call: state.c, init.c.
 */
#include "internal.h"

static int64_t ticks_to_ns(uint64_t ticks, int how)
{
	struct fc_clock *c = fc__global_clock();
	fc__ensure_init();
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
