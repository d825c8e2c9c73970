/*
 * fastclock — the time units and UTC calendar facts the modules share, each defined once. Macros
 * only: any module, at any floor, includes it.
 */
#ifndef FASTCLOCK_UNITS_H
#define FASTCLOCK_UNITS_H

/* long long, so products such as 86400 * NS_PER_SEC are computed in 64 bits. */
#define NS_PER_SEC 1000000000LL

/* A UTC day: 86400 s. A leap second is applied at its end (adjtimex(2), kernel/time/ntp.c). */
#define FC_DAY_NS (86400 * NS_PER_SEC)

/* How close to a UTC midnight a pending leap second (adjtimex STA_INS / STA_DEL, or a bound source's leap
 * flag) counts, on either side: 1 s for a deletion (applied at 23:59:59) or the repeated second of an
 * insertion, plus 1 s of slack for a kernel that applies it a tick or more late (its first tick past the second
 * boundary: 4 ms at HZ = 250, later on an idle NOHZ CPU) or chronyd slewing it. Within it a hand is not
 * SYNCHRONIZED (track.c, fc__track_sync) and the bound vs UTC widens by the leap itself, 1 s (windup.c). */
#define FC_LEAP_WINDOW_NS (2 * NS_PER_SEC)

/* The half-width that promises nothing (wider than any clock; four of them still fit an int64): the bound sources'
 * and the writer's, for a hand whose bound says nothing. */
#define FC_BOUND_NOTHING (INT64_MAX / 4)

#endif /* FASTCLOCK_UNITS_H */
