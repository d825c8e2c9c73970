/*
 * fastclock — hands.c: the writer side of the publication protocol (W1..W4), generation wrap.
 * Floor 0. Owns: struct fc_hands (the ring and the boot hand), the writer's interleaving points FC__WP_*.
 * May call: nothing of the library.
 */
#ifndef FASTCLOCK_HANDS_H
#define FASTCLOCK_HANDS_H

#include <stdint.h>

#include "fastclock.h"

#ifdef __cplusplus
extern "C" {
#endif

struct fc_hands {
	struct fc_hand ring[FC_HANDS];
	struct fc_hand boot; /* kernel hand current before the first publish */
};
/* Link the ring, make `boot` a kernel hand and current; generations start at gen_start (tests start them
 * next to the wrap point). */
void fc__hands_init(struct fc_hands *h, struct fc_pub *pub, uint32_t gen_start);
/* What fc__hands_init(&H, pub, 0) makes, as a static initializer of the object H: the ring linked, every ring
 * hand's generation 0, the boot hand a kernel hand (generation 1, stale_ticks 0, floor INT64_MIN); the pub's
 * current is &H.boot and its coarse values 0 (its own initializer). The global clock starts so (state.c), and
 * its first call, finding hands_static set, does not write the ring again: 8 x 3 cache lines of memset and
 * links were most of the 1 us the hands took in a first call started 2 s after the last (docs/PERFORMANCE.md,
 * "Start-up"). Hands.FC__HANDS_STATIC_is_what_fc__hands_init_makes compares the two. */
#define FC__HANDS_STATIC(H)                                                                                    \
	{                                                                                                      \
		.ring = {{.next = &(H).ring[1]}, {.next = &(H).ring[2]}, {.next = &(H).ring[3]},               \
			 {.next = &(H).ring[4]}, {.next = &(H).ring[5]}, {.next = &(H).ring[6]},               \
			 {.next = &(H).ring[7]}, {.next = &(H).ring[0]}},                                      \
		.boot = {.gen = 1, .flags = FC_HAND_KERNEL, .mask = ~(uint64_t)0, .floor_ns = INT64_MIN,       \
			 .next = &(H).ring[0]},                                                                \
	}
#ifndef __cplusplus
_Static_assert(FC_HANDS == 8, "FC__HANDS_STATIC links 8 ring hands");
#endif
/* The writer's interleaving points (FC__WRITER_POINT in hands.c; empty in the library, tests/interleave
 * pauses the writer there). */
#define FC__WP_AFTER_W1 1 /* gen zeroed, no field written */
#define FC__WP_MID_W2 2   /* half the fields written (flags .. frac; not mono_ns onwards) */
#define FC__WP_AFTER_W2 3 /* every field written, gen still 0 */
#define FC__WP_AFTER_W3 4 /* new gen published, the hand not current yet */
/* Publish params as the next hand. The caller holds the writer lock. Returns the published hand. */
struct fc_hand *fc__hands_publish(struct fc_pub *pub, const struct fc_hand *params);
/* Sets h's real_ns, mono_sec/mono_subsec and real_sec/real_subsec from its mono_ns, real_off_ns and frac
 * (floor division, whole ns in [0, 10^9) above frac); fc__hands_publish does it for every hand it publishes
 * (tests that build hands field by field call it). */
void fc__hand_anchors(struct fc_hand *h);

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_HANDS_H */
