/*
 * fastclock — config.c: the environment read (secure_getenv's rule) and its values parsed, with clear errors.
 * Floor 0. Owns: struct fc_config, the re-anchor period's default and limits (FC_*_PERIOD_NS), fc__env_scan.
 * May call: str.c; libc (getauxval, environ).
 */
#ifndef FASTCLOCK_CONFIG_H
#define FASTCLOCK_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "fastclock.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The default period and the fine one (include/fastclock.h, FC_PERIOD_*): an error from a change of the kernel's
 * rate lasts at most a period (a chronyd frequency step of D ppm: at most D x 16 ms at the default); the bound's
 * width is the rate allowance times a hand's age (docs/GUIDE.md, "Choosing the period"). */
#define FC_DEFAULT_PERIOD_NS ((int64_t)FC_PERIOD_PLAIN_NS)
#define FC_FINE_PERIOD_NS ((int64_t)FC_PERIOD_FINE_NS)
#define FC_MIN_PERIOD_NS 1000LL
#define FC_MAX_PERIOD_NS 1000000000LL
struct fc_config {
	int backend;       /* 0: auto; FC_BACKEND_* forced */
	int64_t period_ns;
	int period_auto; /* FC_PERIOD_DEFAULT: period_ns is the default, which follows use (FC_FINE_PERIOD_NS) */
};
/* struct fc_clock's period_auto: fixed (by the environment, fc_set_period_ns, or the switch to the fine period);
 * the default; the default, with the fine period asked for by a reader that could not take the writer lock. */
enum { FC_PERIOD_FIXED = 0, FC_PERIOD_DEFAULT = 1, FC_PERIOD_WANT_FINE = 2 };
/* Parse FASTCLOCK_SOURCE / FASTCLOCK_PERIOD_US values (either may be NULL). Returns the number of errors;
 * each is described in err (naming the bad value) and replaced by the default. */
int fc__config_parse(const char *source, const char *period_us, struct fc_config *out, char *err, size_t errlen);
/* FASTCLOCK_UPDATER=auto|off (NULL: auto): *autostart 1 or 0. Returns 1 (and appends to err) if bad. */
int fc__config_parse_updater(const char *v, int *autostart, char *err, size_t errlen);
/* FASTCLOCK_UPDATER_RT=1|0 (unset or empty: 1): may the updater thread ask for SCHED_FIFO (updater.c). */
int fc__config_parse_updater_rt(const char *v, int *rt, char *err, size_t errlen);
/* The values of the variables names[0..n) (each "FASTCLOCK_..."; NULL: unset) into val, as getenv finds them, in
 * one pass over environ; none in a program started with raised privileges (AT_SECURE). Async-signal-safe. */
void fc__env_scan(const char *const *names, int n, const char **val);

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_CONFIG_H */
