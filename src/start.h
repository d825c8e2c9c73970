/*
 * fastclock — start.c: start-up, from the first kernel hand to the first counter hand, no call waiting.
 * Floor 3. Owns: the start-up's state machine (c->start_step), a capture's unit (FC_CAPTURE_*).
 * May call: windup.c, state.c; floor 0: hands.c, sample.c, trust.c, str.c, counter/freq.c.
 */
#ifndef FASTCLOCK_START_H
#define FASTCLOCK_START_H

#include "state.h"

/* Start a clock over `src` without waiting: its first hand is a kernel hand; unless `want` is
 * FC_BACKEND_KERNEL, the next slow paths check the counter (trust.c; skipped when `want` forces the
 * counter or trust_every is 0), measure its rate over START_BASELINE and publish the first counter hand. */
void fc__clock_start(struct fc_clock *c, struct fc_pub *pub, const struct fc_source *src, int64_t period_ns,
		    int want);
/* Finish the start-up now (waits up to START_BASELINE): fc_init and fc_status. */
void fc__clock_start_finish(struct fc_clock *c);
/* The unit of a capture (fc_ticks) taken now, which must not change after it is taken: counter ticks once the
 * counter is trusted (from the start-up's trust step on, before its rate is measured), kernel CLOCK_MONOTONIC
 * ns on the kernel backend. Takes the trust step if it is still due (a few us); never waits for the rate. */
enum { FC_CAPTURE_KERNEL = 0, FC_CAPTURE_COUNTER = 1 };
/* The first calls of a short-lived program stay on the cheap path (a kernel read, ~1 us): the trust check
 * (a sysfs read, CPUID) is due this long after initialisation. */
#define FC_START_DEFER_NS 50000
int fc__clock_capture_unit(struct fc_clock *c);
/* Early captures (x86-64): before the trust step, when the counter's value exceeds CLOCK_MONOTONIC's ns count
 * by at least FC_EARLY_GAP_NS at start, a capture is a kernel CLOCK_MONOTONIC read (the trust step is not taken
 * by fc_ticks before it is due, as for any read). 1 with *t: an early capture was taken; 0: capture in the
 * unit fc__clock_capture_unit gives. */
#define FC_EARLY_GAP_NS (1LL << 36) /* ~69 s: the counter's lead over the kernel's ns count (see start.c) */
int fc__clock_capture_early(struct fc_clock *c, uint64_t *t);
/* 1: `t` is an early capture (kernel ns), by its value; 0: counter ticks, or the clock's usual unit. */
int fc__clock_capture_is_early(struct fc_clock *c, uint64_t t);

#endif
