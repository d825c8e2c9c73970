/*
 * fastclock — the bound source behind fc_real_bounded (select.c): the configuration, the chosen source and its
 * polling. struct fc_bounder embeds every source's state (static storage: nothing allocated).
 *
 * Owns: struct fc_bound_config, struct fc_bounder, fc__bound_config_parse, fc__bounder_*, fc__bound_kind_name.
 * May call: the sources (clockbound.c, chrony.c, vmclock.c, kernel.c) through their drivers, bound.c, fmt.c,
 * ntp.c (fc__ntp_read).
 */
#ifndef FASTCLOCK_BOUND_SELECT_H
#define FASTCLOCK_BOUND_SELECT_H

#include "chrony.h"
#include "clockbound.h"
#include "kernel.h"
#include "vmclock.h"

#ifdef __cplusplus
extern "C" {
#endif

struct fc_bound_config {
	int mode; /* -1: auto, else enum fc_bound_kind (FC_BOUND_VMCLOCK: VMClock's time only) */
	char clockbound[256], chrony[108], vmclock[256];
};
/* Parse FASTCLOCK_BOUND_SOURCE and the path overrides FASTCLOCK_CLOCKBOUND_PATH, FASTCLOCK_CHRONY_SOCKET,
 * FASTCLOCK_VMCLOCK_PATH (each may be NULL: the default). Returns the number of errors, described in err. */
int fc__bound_config_parse(const char *mode, const char *cb_path, const char *chrony_path, const char *vm_path,
			  struct fc_bound_config *out, char *err, size_t errlen);

/* FASTCLOCK_BOUND_SOURCE's value means auto: unset, empty or "auto". */
int fc__bound_config_is_auto(const char *mode);

/* The chosen source and every source's state (each source's own struct: the driver table in select.c reaches
 * it by kind). */
struct fc_bounder {
	struct fc_bound_config cfg;
	int kind;             /* enum fc_bound_kind in use: select.c's table row */
	char why[FC_BOUND_TEXT]; /* why this source */
	struct fc_cb cb;        /* FC_BOUND_CLOCKBOUND's state */
	struct fc_chrony ch;    /* FC_BOUND_CHRONY's */
	struct fc_vmc vm;       /* VMClock's page: the overlay on every source, and FC_BOUND_VMCLOCK's state */
	int have_vm;            /* vm is open */
	struct fc_kernel kern;  /* FC_BOUND_KERNEL's */
	int64_t chosen_at;      /* when the source was chosen (auto re-tries the better ones every 10 s) */
	struct fc_bound cur;    /* the current bound */
	/* Auto mode on a ClockBound segment that vouches for nothing better than FREE_RUNNING (its daemon died,
	 * or never wrote it): chronyd's socket is probed beside it, and replaces it once chronyd's report is
	 * better (select.c fall_back). */
	struct fc_chrony probe;
	struct fc_bound probe_b;  /* the probe's own report */
	int probing;              /* probe is open */
	int64_t probe_at;         /* when the probe was last opened or tried */
	/* the kernel's NTP state: injected (tests), else fc__ntp_read; the kernel source reads through it */
	int (*ntp)(void *ctx, struct fc_ntp *out);
	void *ntp_ctx;
	/* VMClock as the time source (auto and FASTCLOCK_BOUND_SOURCE=vmclock): used while its snapshot gives
	 * the time of the counter; auto mode goes on polling the source chosen above, and serves it otherwise */
	int use_vm;             /* the last poll served vm_b */
	struct fc_bound vm_b;   /* its bound */
	int vm_counter;         /* VMClock's number for the counter read below (FC_VMC_OUR_COUNTER) */
	/* the sample's reads: injected (tests), else the hardware counter and clock_gettime(CLOCK_REALTIME) */
	uint64_t (*counter)(void *ctx);
	int64_t (*realtime)(void *ctx);
	void *clk_ctx;
};
/* Choose a source per cfg (auto: chronyd if it can be asked, else a ClockBound segment that opens, else the
 * kernel; beside a VMClock the segment before chronyd; a VMClock that gives the time of the counter before them
 * all, while it does: select.c prefer_chrony). now: CLOCK_MONOTONIC. */
void fc__bounder_init(struct fc_bounder *bd, const struct fc_bound_config *cfg, int64_t now);
void fc__bounder_close(struct fc_bounder *bd);
/* Poll the source if due (ClockBound: every call, a memory read; chrony: a round every 100 ms around chronyd's
 * next measurement, else once a second, replies collected without blocking; kernel: adjtimex once a second).
 * mono: CLOCK_MONOTONIC, mono_coarse: CLOCK_MONOTONIC_COARSE (ClockBound's time base). Returns &bd->cur. */
const struct fc_bound *fc__bounder_poll(struct fc_bounder *bd, int64_t mono, int64_t mono_coarse);
/* The source's name (its driver's: FASTCLOCK_BOUND_SOURCE's word), "?" for no enum fc_bound_kind. */
const char *fc__bound_kind_name(int kind);
/* What the last poll served: the bound, the source's name and why it is the one. */
const struct fc_bound *fc__bounder_current(const struct fc_bounder *bd);
const char *fc__bounder_name(const struct fc_bounder *bd);
const char *fc__bounder_why(const struct fc_bounder *bd);

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_BOUND_SELECT_H */
