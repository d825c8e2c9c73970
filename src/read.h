/*
 * fastclock — read.c: the slow path, the kernel backend, the bounded slow path.
 * Floor 4 (entry points). Owns: fc__read_slow_ns, fc__read_slow. May call: init.c, start.c, windup.c, state.c,
 * ntp.c.
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
 * the kernel's value; and the kernel's NTP error and sync status. fc__slow_bounded is this on the global
 * clock. */
int64_t fc__read_slow(struct fc_clock *c, int how, struct fc__bound *b);

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_READ_H */
