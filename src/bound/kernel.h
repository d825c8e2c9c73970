/*
 * fastclock — the kernel's NTP state (adjtimex maxerror) as a bound source (kernel.c): the rules, the source's
 * state and its driver.
 *
 * Owns: fc__kernel_eval, struct fc_kernel, fc__kernel_driver.
 * May call: bound.c, fmt.c (and the reader it is given: select.c hands it fc__ntp_read, ntp.c).
 */
#ifndef FASTCLOCK_BOUND_KERNEL_H
#define FASTCLOCK_BOUND_KERNEL_H

#include "../ntp.h"
#include "bound.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel's NTP state to a bound, from the state alone (pure; the rules in kernel.c and docs/THREATS.md):
 * SYNCHRONIZED only for 0 < esterror <= maxerror < 16 s with STA_UNSYNC and STA_CLOCKERR clear. */
int fc__kernel_eval(const struct fc_ntp *n, int64_t now, struct fc_bound *b);

/* The kernel source's state: its reader and what the last reads showed. */
struct fc_kernel {
	int (*read)(void *ctx, struct fc_ntp *out); /* the kernel's NTP state (select.c: fc__ntp_read, or a test's) */
	void *ctx;
	int64_t at;    /* when adjtimex was last read */
	int64_t max;   /* the maxerror it showed (ns; -1: none yet) */
	int64_t wrote; /* CLOCK_MONOTONIC before which the last write seen (maxerror went down) happened after: the
			* read before it (INT64_MIN: none seen) */
};
/* The driver (select.c's table): state struct fc_kernel (init: nothing read yet; the reader is the caller's to
 * set), no path; poll reads adjtimex at most every t->every_ns; measured at the last write seen. */
extern const struct fc_bound_driver fc__kernel_driver;

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_BOUND_KERNEL_H */
