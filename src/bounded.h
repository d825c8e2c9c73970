/*
 * fastclock — bounded.c: the UTC bound's side of the writer's seam (state.h's struct fc_bound_ops), the bounded
 * reads' slow path (fc__slow_bounded, declared in include/fastclock.h).
 * Floor 5 (above the clock core). Owns: the global clock's bound source and its state.
 * May call: read.c, windup.c, init.c, state.c, config.c, str.c, bound/ (select.c, bound.c). Nothing of the core calls
 * it but through c->bound, and init.c and status.c through weak references (a static program links it only
 * through the bounded entry points).
 */
#ifndef FASTCLOCK_BOUNDED_H
#define FASTCLOCK_BOUNDED_H

#include "fastclock.h"
#include "state.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The bound asked for by name (fc_init, fc_status): install the seam (idempotent) and have the next stamp open the
 * sources, with no first bound that reads nothing (waits for another thread's writer); poll: and, when the current
 * hand was stamped before it, a re-anchor with the chores, which polls the source for the next hands. */
void fc__bound_install(struct fc_clock *c, int poll);
/* fc_status's bound fields and sync_status, the bound installed and its sources opened (status.c). */
void fc__bound_status(struct fc_clock *c, struct fc_status *out);

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_BOUNDED_H */
