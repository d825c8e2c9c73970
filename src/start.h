/*
 * fastclock — start.c: start-up, from the first kernel hand to the first counter hand, no call waiting.
 * Floor 3. Owns: the start-up's state machine and its state (state.h's struct fc_start, c->start), a capture's unit
 * (FC_CAPTURE_*), the conversion of captures taken before the first counter hand.
 * May call: windup.c, state.c; floor 0: hands.c, sample.c, trust.c, vdso.c, str.c, counter/freq.c.
 */
#ifndef FASTCLOCK_START_H
#define FASTCLOCK_START_H

#include "state.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Start a clock over `src` without waiting: its first hand is a kernel hand; unless `want` is
 * FC_BACKEND_KERNEL, the next slow paths check the counter (trust.c; skipped when `want` forces the
 * counter or trust_every is 0), measure its rate over START_BASELINE and publish the first counter hand.
 * The only way a clock starts, the simulations' and tests' too (their hands' first generation: fc__hands_init
 * before, with c->hands_static set). */
void fc__start_clock(struct fc_clock *c, struct fc_pub *pub, const struct fc_source *src, int64_t period_ns, int want);
/* The start-up is over: the first counter hand is out, or the clock stays on the kernel backend. The one test of
 * the start-up's state outside this file (acquire: what the phase's release store published is visible). */
static inline int fc__start_done(const struct fc_clock *c)
{
	return __atomic_load_n(&c->start.phase, __ATOMIC_ACQUIRE) == FC_START_DONE;
}
/* While the clock starts: its next step, if due at `now` (kernel CLOCK_MONOTONIC; INT64_MAX: due or not), under
 * the writer lock taken here, if the current hand is still `seen` (NULL: whichever). 1 if the lock was taken (the
 * step taken, or the start-up found done), 0 if done, not due, another writer held the lock or `seen` was
 * replaced. Never waits. Its callers: a reader's slow path on a kernel hand (read.c), the keeper (updater.c). */
int fc__start_step(struct fc_clock *c, const struct fc_hand *seen, int64_t now);
/* Finish the start-up now (waits up to START_BASELINE): fc_init and fc_status. */
void fc__start_finish(struct fc_clock *c);
/* The unit of a capture (fc_ticks) taken now, which must not change after it is taken: counter ticks once the
 * counter is trusted (from the start-up's trust step on, before its rate is measured), kernel CLOCK_MONOTONIC
 * ns on the kernel backend. Takes the trust step if it is still due (a few us); never waits for the rate. */
enum { FC_CAPTURE_KERNEL = 0, FC_CAPTURE_COUNTER = 1 };
/* The first calls of a short-lived program stay on the cheap path (a kernel read, ~1 us): the trust check
 * (a sysfs read, CPUID) is due this long after initialisation. */
#define FC_START_DEFER_NS 50000
int fc__start_capture_unit(struct fc_clock *c);
/* Early captures (x86-64): before the trust step, when the counter's value exceeds CLOCK_MONOTONIC's ns count
 * by at least FC_EARLY_GAP_NS at start, a capture is a kernel CLOCK_MONOTONIC read (the trust step is not taken
 * by fc_ticks before it is due, as for any read). 1 with *t: an early capture was taken; 0: capture in the
 * unit fc__start_capture_unit gives. */
#define FC_EARLY_GAP_NS (1LL << 36) /* ~69 s: the counter's lead over the kernel's ns count (see start.c) */
int fc__start_capture_early(struct fc_clock *c, uint64_t *t);
/* 1: `t` is an early capture (kernel ns), by its value; 0: counter ticks, or the clock's usual unit. */
int fc__start_capture_is_early(struct fc_clock *c, uint64_t t);

/* A capture taken during the start-up (convert.c; `how`: FC__REAL for the wall clock): FC_START_CONV_KERNEL: it is
 * kernel CLOCK_MONOTONIC ns (an early capture); FC_START_CONV_DONE with *v: counter ticks taken before the first
 * counter hand, converted between the trust step's sample and a fresh one; 0: convert it with the hands, loaded
 * after this call (the first counter hand is current before the phase leaves RATE). */
enum { FC_START_CONV_KERNEL = 1, FC_START_CONV_DONE = 2 };
int fc__start_convert(struct fc_clock *c, uint64_t ticks, int how, int64_t *v);

#ifdef __cplusplus
}
#endif

#endif
