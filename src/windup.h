/*
 * fastclock — windup.c: the writer (sample -> track -> the bound's seam -> publish), the writer lock, the switch to
 * a kernel hand and back, the clock's cached NTP state.
 * Floor 2. Owns: the writer lock's protocol, the bound fields' stamping through c->bound (state.h's struct
 * fc_bound_ops), the first counter hand's publication.
 * May call: state.c; floor 0: hands.c, track.c, sample.c, trust.c, ntp.c, str.c, config.h (the fine period).
 * Nothing of the bound (src/bound, src/bounded.c): it is reached through c->bound only.
 * Nothing of the start-up (start.c, above: it calls fc__windup_first_hand_locked).
 */
#ifndef FASTCLOCK_WINDUP_H
#define FASTCLOCK_WINDUP_H

#include <stdint.h>

#include "fastclock.h"
#include "sample.h"
#include "state.h"

#ifdef __cplusplus
extern "C" {
#endif

/* (Start-up, above the writer: start.h.) The start-up's last step: the first counter hand, from the rate hz
 * measured between samples s0 and s (caller holds the lock). */
void fc__windup_first_hand_locked(struct fc_clock *c, const struct fc_sample *s0, const struct fc_sample *s,
				  uint64_t hz);
/* Re-anchor now if the current hand is still `seen` (NULL: unconditionally). Takes the lock; returns 1 if
 * a hand was published, 0 if another writer held the lock or already replaced `seen`. */
int fc__windup(struct fc_clock *c, const struct fc_hand *seen);
/* The same, with the chores (windup.c: clocksource re-check, NTP state, bound poll) whether due or not: the
 * keeper's re-anchor. */
int fc__windup_with_chores(struct fc_clock *c, const struct fc_hand *seen);
/* The same, for a caller that holds the lock. */
void fc__windup_with_chores_locked(struct fc_clock *c);
/* The bound vs UTC at `now` + life_ns from the source's last poll, as a re-anchor without chores stamps its hand: no
 * system call (a read past a hand's window, read.c). 0 if the writer lock was taken or nothing was polled yet. */
int fc__windup_bound_cached(struct fc_clock *c, struct fc_hand *p, int64_t now, int64_t life_ns);
/* 1 if the current hand is a counter hand inside its window whose CLOCK_REALTIME is within its tracking bound of
 * the kernel's, read before and after its counter: it was anchored after the wall clock's last step, and the
 * keeper's step notification needs no re-anchor (a reader re-anchored since: fc_real_bounded sees a forward step
 * in the kernel's coarse clock). A step between the two kernel reads wakes the keeper again. No lock. */
int fc__windup_saw_wall(struct fc_clock *c);
/* The chores alone, without a re-anchor (a keeper with nothing to re-anchor for). 0 if the lock was taken. */
int fc__windup_chores(struct fc_clock *c);
/* Switch to the kernel backend (trust lost) or back, without a backward step. Caller holds the lock. */
void fc__windup_set_kernel_locked(struct fc_clock *c, const char *why);
/* The writer lock, the only way to take it: the try-lock (returns 1 if taken; never waits) and, for callers
 * that must wait for it (status, period changes), the lock. Both mark the thread as the writer (fc__in_writer)
 * before they take it and until fc__windup_unlock, so a signal handler on this thread reading the clock never
 * waits on its own thread: it serves from the current hand or the kernel. */
int fc__windup_trylock(struct fc_clock *c);
void fc__windup_lock(struct fc_clock *c);
void fc__windup_unlock(struct fc_clock *c);
/* Re-anchor period (caller holds the lock). */
void fc__windup_set_period_locked(struct fc_clock *c, int64_t period_ns);
/* The process reads a bound or a coarse clock: where the period is still the default (c->period_auto), it becomes
 * FC_FINE_PERIOD_NS for good (config.h), under the writer lock: waited for where `wait` and this thread is not
 * inside the writer, else tried. A reader that cannot take it asks the next writer to (the keeper's next
 * re-anchor or chores, at most a period on): lock-free, async-signal-safe. Caller does not hold the lock. */
void fc__windup_fine_period(struct fc_clock *c, int wait);
/* A bounded read's bound on the kernel backend (read.c): through the bound's seam (c->bound: its first bound, else
 * a poll), "unasked" without one on the global clock, else the kernel's NTP state. Caller holds the lock. */
void fc__windup_bound_kernel_locked(struct fc_clock *c, struct fc_hand *p, int64_t now, int64_t life_ns);
/* Refresh the clock's cached NTP state if it is a second old (caller holds the writer lock). */
void fc__windup_refresh_ntp_locked(struct fc_clock *c, int64_t now);

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_WINDUP_H */
