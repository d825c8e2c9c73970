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
