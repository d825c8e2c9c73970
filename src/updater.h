/*
 * fastclock — updater.c: the keeper thread (fc_updater_start/stop, and its start by the library itself).
 * Floor 4, above read.c. Owns: the keeper's thread, its start, parking and fork handler.
 * May call: state.c, windup.c, start.c (the start-up's steps), init.c, config.c.
 */
#ifndef FASTCLOCK_UPDATER_H
#define FASTCLOCK_UPDATER_H

#include "state.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Start the keeper, never waiting (read.c: a coarse read, a reader's re-anchor); `by` is what updater_running says
 * then (2: a coarse read, 3: a reader's re-anchor). 1 started, 0 running already or busy, -1 the start failed. */
int fc__keeper_auto_start(struct fc_clock *c, int by);
/* This thread is starting the keeper (a signal handler there must not wait for it). */
int fc__keeper_starting_here(void);

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_UPDATER_H */
