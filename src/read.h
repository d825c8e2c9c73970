/*
 * fastclock — read.c: the slow path, the kernel backend, the bound of a value (fc__read_global).
 * Floor 4 (entry points). Owns: fc__read_slow_ns, fc__read_slow, fc__read_global. May call: init.c, start.c,
 * windup.c, state.c, ntp.c.
 */
#ifndef FASTCLOCK_READ_H
#define FASTCLOCK_READ_H

#include <stdint.h>

#include "fastclock.h"
#include "state.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The slow path: everything the inline readers do not. how = FC__MONO/FC__REAL | FC__RELAXED. */
int64_t fc__read_slow_ns(struct fc_clock *c, int how);
/* The same, also filling *b (if not NULL) with the bound of the value returned: the hand's tracking bound at
 * that read (plus a clamp's distance), or on the kernel backend the distance a monotonic read was raised above
 * the kernel's value; and the kernel's NTP error and sync status. */
int64_t fc__read_slow(struct fc_clock *c, int how, struct fc__bound *b);
/* fc__read_slow on the global clock, initialising it, errno preserved (a signal handler during its own thread's
 * initialisation: the kernel's clock, unbounded). src/bounded.c's fc__slow_bounded reads through it. */
int64_t fc__read_global(int how, struct fc__bound *b);

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_READ_H */
