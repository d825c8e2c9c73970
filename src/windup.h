/*
 * fastclock — windup.c: the writer (sample -> track -> bound source -> publish), the writer lock, the switch to a
 * kernel hand and back.
 * Floor 2. Owns: the writer lock's protocol, the bound fields' stamping, fc__clock_setup (tests' clocks).
 * May call: state.c; floor 0: hands.c, track.c, sample.c, trust.c, ntp.c, str.c, bound/ (bound.c, select.c).
 * Start-up only through c->start_step (a callback set by start.c, not a call upward).
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
void fc__clock_first_hand_locked(struct fc_clock *c, const struct fc_sample *s0, const struct fc_sample *s,
				 uint64_t hz);
/* Build a clock over `src` (pure: no environment, no trust check) with the counter backend, first hand
 * anchored now. Used by tests. */
int fc__clock_setup(struct fc_clock *c, struct fc_pub *pub, const struct fc_source *src, int64_t period_ns,
		   uint64_t counter_hz, uint32_t gen_start);
/* Re-anchor now if the current hand is still `seen` (NULL: unconditionally). Takes the lock; returns 1 if
 * a hand was published, 0 if another writer held the lock or already replaced `seen`. */
int fc__clock_windup(struct fc_clock *c, const struct fc_hand *seen);
/* The same, with the chores (windup.c: clocksource re-check, NTP state, bound poll) whether due or not: the
 * keeper's re-anchor. */
int fc__clock_windup_chores(struct fc_clock *c, const struct fc_hand *seen);
/* The bound vs UTC at `now` + life_ns from the source's last poll, as a re-anchor without chores stamps its hand: no
 * system call (a read past a hand's window, read.c). 0 if the writer lock was taken or nothing was polled yet. */
int fc__clock_bound_cached(struct fc_clock *c, struct fc_hand *p, int64_t now, int64_t life_ns);
/* The chores alone, without a re-anchor (a keeper with nothing to re-anchor for). 0 if the lock was taken. */
int fc__clock_chores(struct fc_clock *c);
/* Switch to the kernel backend (trust lost) or back, without a backward step. Caller holds the lock. */
void fc__clock_set_kernel_locked(struct fc_clock *c, const char *why);
/* The writer lock, the only way to take it: the try-lock (returns 1 if taken; never waits) and, for callers
 * that must wait for it (status, period changes), the lock. Both mark the thread as the writer (fc__in_writer)
 * before they take it and until fc__clock_unlock, so a signal handler on this thread reading the clock never
 * waits on its own thread: it serves from the current hand or the kernel. */
int fc__clock_trylock(struct fc_clock *c);
void fc__clock_lock(struct fc_clock *c);
void fc__clock_unlock(struct fc_clock *c);
/* Re-anchor period (caller holds the lock). */
void fc__clock_set_period_locked(struct fc_clock *c, int64_t period_ns);
/* Stamp p's bound fields (utc_err_ns over [now, now + life_ns], utc_corr_ns, sync_status) from the bound source
 * (or the kernel's NTP state when the clock has none). Caller holds the lock. */
void fc__clock_bound_fields_locked(struct fc_clock *c, struct fc_hand *p, int64_t now, int64_t life_ns);
/* A process's first bound asked by a bounded read (read.c; also after a fork): in auto mode it reads nothing (no
 * system call, no file, no socket) and promises nothing (UNKNOWN, FC_BOUND_NOTHING), and the next bound opens the
 * sources: 1 with p's bound fields so stamped. Else 0 (take fc__clock_bound_fields_locked). Caller holds the
 * lock. */
int fc__clock_bound_first_locked(struct fc_clock *c, struct fc_hand *p);

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_WINDUP_H */
