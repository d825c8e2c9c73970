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
int fc__clock_capture_unit(struct fc_clock *c);

#endif
