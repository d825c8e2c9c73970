/*
 * fastclock — init.c: lazy initialisation of the global clock; the process's fork handler.
 * Floor 3, beside start.c and above it. Owns: fc__ensure_init, fc_init's work (fc__init_all, which updater.c's
 * fc_updater_start calls too). May call: start.c, state.c, config.c, trust.c (the tests' seams only); nothing of the
 * UTC bound but the seam's forked op (state.h) and fc_init's weak reference to src/bounded.c's fc__bound_install.
 */
#ifndef FASTCLOCK_INIT_H
#define FASTCLOCK_INIT_H



#ifdef __cplusplus
extern "C" {
#endif

/* Initialise the global clock if needed. Returns 1 when it is ready, 0 in a signal handler that interrupted
 * its own thread's initialisation: the caller then serves the kernel's clock directly. */
int fc__ensure_init(void);
/* 1 when this thread's signal mask blocks no signal with a handler that the mask at the library's load did not:
 * not, as far as the mask tells, inside a signal handler, so a thread may be started from here (updater.c). */
int fc__signals_as_at_load(void);
/* fc_init's work: the start-up finished; bound: and the bound installed, its sources opened, and with it the fine
 * period where the period is the default (0: fc_updater_start's, which a program that makes plain reads only may
 * call: the bound, and the period, are left to what the process reads, its first bounded read). */
void fc__init_all(int bound);

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_INIT_H */
