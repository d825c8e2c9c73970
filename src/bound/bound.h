/*
 * fastclock — bound sources: where the UTC part of fc_real_bounded comes from. What every source shares.
 *
 * A source is polled by the writer (through its seam: src/bounded.c's stamp, under the writer lock, at most once
 * a second for anything that costs a syscall; chronyd's rounds when it measures, else once a second), never by a
 * reader. Each poll yields one struct fc_bound: "true UTC lies within half_ns + drift_ppb * (mono - as_of_ns) / 1e9
 * of CLOCK_REALTIME + center_ns". The writer folds it into each hand (utc_err_ns, utc_corr_ns, sync_status); readers only add.
 *
 * Sources (one file and one header each, all pure over injected paths, sockets and clock values so tests drive
 * them; each defines its struct fc_bound_driver, select.c's table holds them, as chrony's refclock drivers):
 *   clockbound.c/.h  ClockBound's shared-memory segment (protocol v2), read exactly as ClockBound's client;
 *   chrony.c/.h      chronyd's tracking report over its command socket (unix, or its UDP port on the loopback),
 *                    connected, asked without ever blocking (slew.c/.h: chronyd's slew of the kernel clock);
 *   vmclock.c/.h     /dev/vmclock0 (Linux vmclock-abi.h): its disruption marker and status, an overlay on the
 *                    others; and, when the host publishes the time of the CPU's counter, the first source;
 *   kernel.c/.h      adjtimex maxerror, trusted only when the kernel's state shows a daemon's bound;
 *   select.c/.h      the driver table, FASTCLOCK_BOUND_SOURCE=auto|vmclock|clockbound|chrony|kernel|none, the
 *                    order and the fall-backs, the path overrides;
 *   bound.c          this header: the shared helpers (half-width at a time, the last error, src/file.c's opener
 *                    and judges with a source's last_error as the place a refusal is said).
 * The sources may call libc's async-signal-safe functions and each other only downwards (select.c -> the
 * sources -> bound.c); the core's floor-0 files below them: file.c, fmt.c, str.c, and (select.c) ntp.c
 * (fc__ntp_read, the kernel source's reader). Nothing else of the clock core, which reaches them only through
 * src/bounded.c.
 *
 * Owns (bound.c): struct fc_bound, enum fc_bound_kind, enum fc_leap, struct fc_bound_tick, struct fc_bound_driver
 * (the shape of a source), fc__bound_half_at, fc__bound_error, fc__bound_open_file, fc__bound_judge,
 * fc__bound_still_trusted, fc__bound_writers_error, fc__bound_socket_trusted.
 * May call: file.c, fmt.c.
 */
#ifndef FASTCLOCK_BOUND_H
#define FASTCLOCK_BOUND_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "fastclock.h"
#include "../file.h"
#include "../fmt.h"
#include "../units.h" /* FC_BOUND_NOTHING */

#ifdef __cplusplus
extern "C" {
#endif

enum fc_bound_kind {
	FC_BOUND_NONE = 0,
	FC_BOUND_CLOCKBOUND = 1,
	FC_BOUND_CHRONY = 2,
	FC_BOUND_KERNEL = 3,
	FC_BOUND_VMCLOCK = 4,
};

enum fc_leap { FC_LEAP_NONE = 0, FC_LEAP_INSERT = 1, FC_LEAP_DELETE = 2 };

#define FC_BOUND_TEXT 120

/* One poll's answer. */
struct fc_bound {
	int64_t center_ns;  /* true UTC ~ CLOCK_REALTIME + center_ns (chrony's current correction; else 0) */
	int64_t half_ns;    /* half-width at as_of_ns; FC_BOUND_NOTHING when nothing is promised */
	int64_t as_of_ns;   /* CLOCK_MONOTONIC at which half_ns held */
	int64_t drift_ppb;  /* growth of half_ns per second after as_of_ns, ns/s = ppb */
	int status;         /* enum fc_sync */
	int leap;           /* enum fc_leap: a leap second is announced for the end of this UTC day */
	/* CLOCK_MONOTONIC after which this poll's status no longer holds by the source's own rules (ClockBound's
	 * grace, void_after), whatever the half-width: a hand stamped from this poll without polling again
	 * (windup.c) promises nothing past it. 0: no such time. */
	int64_t holds_until_ns;
	char reason[FC_BOUND_TEXT];     /* why this status (human readable) */
	char last_error[FC_BOUND_TEXT]; /* "" or the last failure of this source, naming the value or path */
	int64_t last_error_at;          /* CLOCK_MONOTONIC of last_error (0: none) */
};

/* half-width at mono (>= as_of), saturating: never wraps for an absurd age or rate. */
int64_t fc__bound_half_at(const struct fc_bound *b, int64_t mono);

/* Record an error: formats last_error and stamps it with `now`. */
void fc__bound_error(struct fc_bound *b, int64_t now, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A source's files and sockets are opened and judged by src/file.c (shared with the clocksource's, trust.c);
 * these are its functions with a struct fc_bound's last_error (and its time, now) as the place a refusal is said.
 * See file.h for each rule. */
struct stat;
int fc__bound_open_file(const char *path, int kinds, struct stat *st, struct fc_bound *b, int64_t now);
int fc__bound_judge(int fd, const struct stat *st, unsigned owner, unsigned or_owner, const char *path,
		    struct fc_bound *b, int64_t now, const char *else_who);
int fc__bound_still_trusted(int fd, unsigned owner, const char *path, struct fc_bound *b, int64_t now);
void fc__bound_writers_error(const struct stat *st, const char *path, struct fc_bound *b, int64_t now,
			     const char *else_who);
int fc__bound_socket_trusted(int dfd, const char *base, const char *path, struct fc_bound *b, int64_t now);

/* ---- the driver: what select.c asks of every source (its table, one row per enum fc_bound_kind) ----------- */

/* One poll's inputs. */
struct fc_bound_tick {
	int64_t mono;              /* CLOCK_MONOTONIC */
	int64_t mono_coarse;       /* CLOCK_MONOTONIC_COARSE (ClockBound's time base) */
	int64_t every_ns;          /* the source's costly work (a syscall, a round of requests) at most this often */
	const uint64_t *vm_marker; /* VMClock's disruption marker when a VMClock is readable, else NULL */
};

/* A source, as chrony's RCL_Driver {init, fini, poll}: each op takes the source's own state (`state`: its struct,
 * embedded in select.h's struct fc_bounder: static storage, nothing allocated). Every op but name may be NULL:
 * nothing to do (nothing to open, close or poll), always open, never silent, no measurement known, nothing to
 * name. */
struct fc_bound_driver {
	const char *name; /* FASTCLOCK_BOUND_SOURCE's word for it; fc_status's bound_source */
	/* the closed state (nothing open: close and poll are harmless) */
	void (*init)(void *state);
	/* Open it at path (its file, its socket; NULL for a source without one): 0, or -1 with b->last_error
	 * naming the path and what was wrong. */
	int (*open)(void *state, const char *path, struct fc_bound *b, int64_t now);
	void (*close)(void *state);
	int (*is_open)(const void *state);
	/* Update *b (never blocking; a costly read at most every t->every_ns). */
	void (*poll)(void *state, const struct fc_bound_tick *t, struct fc_bound *b);
	/* Has its daemon stopped vouching (nothing new for its grace)? */
	int (*silent)(const void *state, const struct fc_bound_tick *t);
	/* CLOCK_MONOTONIC of the newest measurement behind its bound (INT64_MIN: none known). */
	int64_t (*measured_at)(const void *state);
	/* How it is reached, named in fc_status's why ("unix socket"), or NULL. */
	const char *(*via)(const void *state);
};

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_BOUND_H */
