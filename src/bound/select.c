/*
 * fastclock — which bound source stands behind fc_real_bounded, and its polling.
 * FASTCLOCK_BOUND_SOURCE=auto|vmclock|clockbound|chrony|kernel|none (auto: a VMClock while it gives the time of
 * the counter, else chronyd if it can be asked, else a ClockBound segment that opens, else the kernel; beside a
 * VMClock the segment comes before chronyd: auto_order), FASTCLOCK_CLOCKBOUND_PATH, FASTCLOCK_CHRONY_SOCKET,
 * FASTCLOCK_VMCLOCK_PATH override the default paths. Called by the writer only (under its lock).
 *
 * Owns: the driver table (one row per enum fc_bound_kind: the source's driver, where its state and path are),
 * the "none" driver, auto mode's order and fall-backs, struct fc_bounder (the chosen source, every source's
 * state, the current bound). The per-source work is the drivers' (their own files); here only the policy.
 * May call: clockbound.c, chrony.c, vmclock.c, kernel.c (their drivers; vmclock.c also as the overlay), bound.c,
 * fmt.c, ntp.c (fc__ntp_read), libc (clock_gettime).
 * Everything here is async-signal-safe: the writer may run inside a signal handler (a bounded read's slow path).
 */
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "../section.h"
#include "fastclock/fc_counter.h"

#include "select.h"
#include "../units.h"

/* adjtimex (the kernel source) is asked at most once a second (a syscall; never on the read path); so is a source
 * that is not open, and chronyd's socket beside a stale segment (fall_back). */
#define POLL_EVERY_NS NS_PER_SEC
/* chronyd's rounds around its next measurement: every 100 ms, ClockBound's daemon's cadence, and every 12.5 ms
 * (an eighth) within one round's uncertainty of it, so that a step chronyd has measured reaches the interval no
 * later than it reaches ClockBound's segment (at 1 s: 0.27 s later in a fleet clockbound-step run); between its
 * measurements one a second (chrony.c, FC_CHRONY_CAP_NS). A round is 2 + up to 6 datagrams each way on the
 * loopback, answered by chronyd in microseconds. */
#define CHRONY_POLL_EVERY_NS (NS_PER_SEC / 10)
/* Auto mode looks for a better source (a ClockBound segment, then chronyd) every 10 s: one open() or stat(). */
#define RESELECT_EVERY_NS (10 * NS_PER_SEC)

/* FASTCLOCK_BOUND_SOURCE=none: nothing opened, nothing promised. */
static void none_poll(void *s, const struct fc_bound_tick *t, struct fc_bound *b)
{
	(void)s, (void)t;
	*b = (struct fc_bound){.status = FC_SYNC_UNKNOWN, .reason = "FASTCLOCK_BOUND_SOURCE=none"};
}
static const struct fc_bound_driver none_driver = {.name = "none", .poll = none_poll};

/* The driver table: per enum fc_bound_kind, the source's driver, where its state is in struct fc_bounder and
 * its path in struct fc_bound_config (0: none), and how often its costly work may run. */
#define NO_PATH 0
static const struct row {
	const struct fc_bound_driver *drv;
	size_t state, path;
	int64_t every_ns;
} table[] = {
	[FC_BOUND_NONE] = {&none_driver, 0, NO_PATH, 0},
	[FC_BOUND_CLOCKBOUND] = {&fc__cb_driver, offsetof(struct fc_bounder, cb),
				 offsetof(struct fc_bound_config, clockbound), 0},
	[FC_BOUND_CHRONY] = {&fc__chrony_driver, offsetof(struct fc_bounder, ch), offsetof(struct fc_bound_config, chrony),
			     CHRONY_POLL_EVERY_NS},
	[FC_BOUND_KERNEL] = {&fc__kernel_driver, offsetof(struct fc_bounder, kern), NO_PATH, POLL_EVERY_NS},
	[FC_BOUND_VMCLOCK] = {&fc__vmc_driver, offsetof(struct fc_bounder, vm), offsetof(struct fc_bound_config, vmclock),
			      0},
};
#define KINDS ((int)(sizeof(table) / sizeof(table[0])))

static const struct fc_bound_driver *drv(int kind) { return table[kind].drv; }
/* kind's state in bd (none's: NULL) and its configured path (NULL: none) */
static void *state(struct fc_bounder *bd, int kind)
{
	return table[kind].state ? (char *)bd + table[kind].state : NULL;
}
static const void *cstate(const struct fc_bounder *bd, int kind)
{
	return table[kind].state ? (const char *)bd + table[kind].state : NULL;
}
static const char *path(const struct fc_bounder *bd, int kind)
{
	return table[kind].path != NO_PATH ? (const char *)&bd->cfg + table[kind].path : NULL;
}
/* A poll's inputs for kind: bd's VMClock marker where the page has been read. */
static struct fc_bound_tick tick(const struct fc_bounder *bd, int kind, int64_t mono, int64_t mono_coarse)
{
	return (struct fc_bound_tick){.mono = mono, .mono_coarse = mono_coarse, .every_ns = table[kind].every_ns,
				      .vm_marker = bd->have_vm && bd->vm.have_snap ? &bd->vm.snap.disruption_marker
										 : NULL};
}

/* The driver's ops on a state of kind (bd's own, or the probe's); an op the driver leaves NULL has nothing to
 * do: nothing to open, to close or to poll, always open, never silent, no measurement known, nothing to name. */
static int src_open(const struct fc_bounder *bd, int kind, void *st, struct fc_bound *b, int64_t now)
{
	return drv(kind)->open ? drv(kind)->open(st, path(bd, kind), b, now) : 0;
}
static void src_close(int kind, void *st)
{
	if (drv(kind)->close)
		drv(kind)->close(st);
}
static int src_is_open(int kind, const void *st)
{
	return drv(kind)->is_open ? drv(kind)->is_open(st) : 1;
}
static void src_poll(const struct fc_bounder *bd, int kind, void *st, int64_t mono, int64_t mono_coarse,
		     struct fc_bound *b)
{
	struct fc_bound_tick t = tick(bd, kind, mono, mono_coarse);
	if (drv(kind)->poll)
		drv(kind)->poll(st, &t, b);
}
static int src_silent(const struct fc_bounder *bd, int kind, const void *st, int64_t mono, int64_t mono_coarse)
{
	struct fc_bound_tick t = tick(bd, kind, mono, mono_coarse);
	return drv(kind)->silent && drv(kind)->silent(st, &t);
}
static int64_t src_measured_at(int kind, const void *st)
{
	return drv(kind)->measured_at ? drv(kind)->measured_at(st) : INT64_MIN;
}
static const char *src_via(int kind, const void *st)
{
	return drv(kind)->via ? drv(kind)->via(st) : NULL;
}

const char *fc__bound_kind_name(int kind)
{
	return kind >= 0 && kind < KINDS ? drv(kind)->name : "?";
}

static int set_path(char *dst, size_t n, const char *v, const char *def, const char *var, char *err, size_t errlen)
{
	if (!v || !*v) {
		fc__bfmt(dst, n, "%s", def);
		return 0;
	}
	if (strlen(v) >= n) {
		fc__bfmt(err, errlen, "%s is %zu bytes long (at most %zu)", var, strlen(v), n - 1);
		fc__bfmt(dst, n, "%s", def);
		return 1;
	}
	fc__bfmt(dst, n, "%s", v);
	return 0;
}

FC__START_TEXT int fc__bound_config_is_auto(const char *mode)
{
	return !mode || !*mode || strcmp(mode, "auto") == 0;
}

int fc__bound_config_parse(const char *mode, const char *cb_path, const char *chrony_path, const char *vm_path,
			  struct fc_bound_config *out, char *err, size_t errlen)
{
	int errors = 0;
	memset(out, 0, sizeof(*out));
	out->mode = -1;
	if (!fc__bound_config_is_auto(mode)) {
		int found = 0;
		for (int k = 0; k < KINDS; k++)
			if (strcmp(mode, drv(k)->name) == 0)
				out->mode = k, found = 1;
		if (!found) {
			fc__bfmt(err, errlen, "FASTCLOCK_BOUND_SOURCE=%.40s: want auto, vmclock, clockbound, chrony, kernel or none",
				 mode);
			errors++;
		}
	}
	errors += set_path(out->clockbound, sizeof(out->clockbound), cb_path, FC_CLOCKBOUND_PATH,
			   "FASTCLOCK_CLOCKBOUND_PATH", err, errlen);
	errors += set_path(out->chrony, sizeof(out->chrony), chrony_path, FC_CHRONY_SOCK, "FASTCLOCK_CHRONY_SOCKET",
			   err, errlen);
	errors += set_path(out->vmclock, sizeof(out->vmclock), vm_path, FC_VMCLOCK_PATH, "FASTCLOCK_VMCLOCK_PATH",
			   err, errlen);
	return errors;
}

static void close_source(struct fc_bounder *bd)
{
	src_close(bd->kind, state(bd, bd->kind));
}

/* Open one source (its state, its configured path); 0 if it can be used, else bd->cur's last error says why. */
static int try_source(struct fc_bounder *bd, int kind, int64_t now)
{
	int r = src_open(bd, kind, state(bd, kind), &bd->cur, now);
	bd->have_vm = src_is_open(FC_BOUND_VMCLOCK, &bd->vm); /* the VMClock source opens the overlay's page */
	return r;
}

static int source_open(const struct fc_bounder *bd)
{
	return src_is_open(bd->kind, cstate(bd, bd->kind));
}

/* Auto mode's order, best first, each with the reason fc_status gives when it is the first that opens (pre, then
 * how the source is reached or its path, then post). ClockBound's segment is built from chronyd's tracking
 * report alone (bound = root distance + |correction|, centred on the uncorrected clock), so chronyd asked
 * directly knows everything the segment does and more: its estimate (half the width or less) and its newest
 * measurement (a step seen at chronyd's first sample of it). chronyd comes first, the segment where chronyd
 * cannot be asked, the kernel last. Except beside a VMClock: the segment's daemon watches its disruption marker
 * (ClockBound's VMClock rules: a segment behind the marker is UNKNOWN), which a report of chronyd's knows nothing
 * of; there the segment comes first. The kernel needs nothing opened: the floor, never an upgrade. */
struct step {
	int kind;
	const char *pre, *post;
};
static const struct step chrony_first[] = {
	{FC_BOUND_CHRONY, "auto: chronyd asked directly (", "), narrower than a segment built from it"},
	{FC_BOUND_CLOCKBOUND, "auto: ClockBound segment at ", " (chronyd cannot be asked)"},
	{FC_BOUND_KERNEL, "auto: no ClockBound segment, no chronyd socket; the kernel's maxerror", ""},
};
static const struct step segment_first[] = {
	{FC_BOUND_CLOCKBOUND, "auto: ClockBound segment at ", " (it watches VMClock)"},
	{FC_BOUND_CHRONY, "auto: no ClockBound segment; chronyd (", ")"},
	{FC_BOUND_KERNEL, "auto: no ClockBound segment, no chronyd socket; the kernel's maxerror", ""},
};

static int prefer_chrony(const struct fc_bounder *bd)
{
	return bd->cfg.mode < 0 && !bd->have_vm;
}

static const struct step *auto_order(const struct fc_bounder *bd)
{
	return prefer_chrony(bd) ? chrony_first : segment_first;
}

static void choose(struct fc_bounder *bd, int64_t now)
{
	const struct step *o = auto_order(bd);
	const char *v, *p;
	bd->chosen_at = now;
	if (bd->cfg.mode >= 0) {
		bd->kind = bd->cfg.mode;
		if (try_source(bd, bd->kind, now) != 0) {
			fc__bfmt(bd->why, sizeof(bd->why), "FASTCLOCK_BOUND_SOURCE=%s, not available (see last error)",
				 fc__bound_kind_name(bd->kind));
			return;
		}
		v = src_via(bd->kind, cstate(bd, bd->kind));
		fc__bfmt(bd->why, sizeof(bd->why), "FASTCLOCK_BOUND_SOURCE=%s%s%s%s", fc__bound_kind_name(bd->kind),
			 v ? " (" : "", v ? v : "", v ? ")" : "");
		return;
	}
	while (o->kind != FC_BOUND_KERNEL && try_source(bd, o->kind, now) != 0)
		o++;
	bd->kind = o->kind;
	v = src_via(bd->kind, cstate(bd, bd->kind));
	p = path(bd, bd->kind);
	fc__bfmt(bd->why, sizeof(bd->why), "%s%.60s%s", o->pre, v ? v : p ? p : "", o->post);
}

/* Auto mode on a lesser source: switch to one earlier in the order if it has appeared (opened into its own
 * state, which the current source does not use), without touching the current one otherwise (a chrony socket
 * keeps its outstanding request and its last report). The current source stands while it answers. */
static void upgrade(struct fc_bounder *bd, int64_t now, int64_t now_coarse)
{
	struct fc_bound scratch = {0}; /* a better source that is still absent is not an error of this one */
	const struct step *o = auto_order(bd);
	int was = bd->kind;
	bd->chosen_at = now;
	for (;; o++) {
		if (o->kind == FC_BOUND_KERNEL)
			return;
		if (o->kind == bd->kind) {
			if (!src_silent(bd, o->kind, cstate(bd, o->kind), now, now_coarse))
				return; /* it answers: nothing better */
			continue;
		}
		if (src_open(bd, o->kind, state(bd, o->kind), &scratch, now) != 0)
			continue;
		if (o->kind == FC_BOUND_CLOCKBOUND) {
			/* only to a segment that vouches for the time now, by the rules it is served under (VMClock's
			 * marker included: a segment behind it is UNKNOWN, and going back to it would flap): not a dead
			 * daemon's (fall_back left it) */
			src_poll(bd, o->kind, state(bd, o->kind), now, now_coarse, &scratch);
			if (scratch.status != FC_SYNC_SYNCHRONIZED || (bd->have_vm && bd->vm.disrupted)) {
				src_close(o->kind, state(bd, o->kind));
				continue;
			}
		}
		break;
	}
	close_source(bd);
	bd->kind = o->kind;
	fc__bfmt(bd->why, sizeof(bd->why), "auto: %s",
		 bd->kind == FC_BOUND_CHRONY ? (bd->ch.via == FC_CHRONY_VIA_UNIX ? "chronyd's unix socket appeared"
										 : "chronyd's command port appeared")
		 : was == FC_BOUND_CHRONY    ? "chronyd silent for 5 s, ClockBound's segment live"
					     : "a ClockBound segment appeared");
	bd->cur = (struct fc_bound){.status = FC_SYNC_UNKNOWN, .reason = "source changed; no report yet"};
}

static void probe_close(struct fc_bounder *bd)
{
	if (bd->probing)
		src_close(FC_BOUND_CHRONY, &bd->probe);
	bd->probing = 0;
}

/* Auto mode on ClockBound. A segment whose daemon died says SYNCHRONIZED for the client's 5 s grace, then
 * FREE_RUNNING (a bound growing at max_drift) until void_after, then UNKNOWN; one never written is UNKNOWN. A
 * chronyd that is alive vouches for more. So while the segment is silent (its daemon stopped updating it: the
 * driver's silent) and below SYNCHRONIZED, chronyd's socket is probed beside it (a second chrony source, its
 * state bd->probe: a request a second, never waiting), and replaces the segment once its report is better:
 * SYNCHRONIZED, or FREE_RUNNING against an UNKNOWN segment. The bound never drops from an honest FREE_RUNNING to
 * UNKNOWN in the switch: the probe's report comes with it. What is never sidestepped: a segment its daemon keeps
 * updating that says Unknown or Disrupted, a marker behind VMClock's, a VMClock disruption not yet over
 * (ClockBound's own client says Unknown there; so do we). upgrade() goes back to the segment once it is
 * SYNCHRONIZED again under the same rules. */
static void fall_back(struct fc_bounder *bd, int64_t mono, int64_t mono_coarse)
{
	const struct fc_bound *b = &bd->cur;
	int better, eager = prefer_chrony(bd);
	if (!eager && (b->status == FC_SYNC_SYNCHRONIZED || b->status == FC_SYNC_DISRUPTED ||
		       !src_silent(bd, FC_BOUND_CLOCKBOUND, &bd->cb, mono, mono_coarse) || (bd->have_vm && bd->vm.disrupted) ||
		       (bd->have_vm && bd->vm.have_snap && bd->cb.snap.disruption_support &&
			bd->cb.snap.disruption_marker != bd->vm.snap.disruption_marker))) {
		probe_close(bd); /* live again, or a verdict of the daemon's (or VMClock's) that chronyd cannot overrule */
		return;
	}
	if (!bd->probing) {
		if (mono - bd->probe_at < POLL_EVERY_NS)
			return;
		bd->probe_at = mono;
		bd->probe_b = (struct fc_bound){.status = FC_SYNC_UNKNOWN};
		if (src_open(bd, FC_BOUND_CHRONY, &bd->probe, &bd->probe_b, mono) != 0)
			return;
		bd->probing = 1;
	}
	src_poll(bd, FC_BOUND_CHRONY, &bd->probe, mono, mono_coarse, &bd->probe_b);
	/* eager (no VMClock): chronyd's own report, whatever it says, once it answers (its UNKNOWN over an untracked
	 * step is truer than the segment's SYNCHRONIZED from the same chronyd's older estimate) */
	better = bd->probe_b.status == FC_SYNC_SYNCHRONIZED ||
		 (bd->probe_b.status == FC_SYNC_FREE_RUNNING && b->status == FC_SYNC_UNKNOWN) ||
		 (eager && !src_silent(bd, FC_BOUND_CHRONY, &bd->probe, mono, mono_coarse));
	if (!better)
		return;
	if (eager && b->status == FC_SYNC_SYNCHRONIZED)
		fc__bfmt(bd->why, sizeof(bd->why), "auto: chronyd answers (%s), narrower than ClockBound's segment",
			 src_via(FC_BOUND_CHRONY, &bd->probe));
	else
		fc__bfmt(bd->why, sizeof(bd->why), "auto: ClockBound segment %s (%.50s): fell back to chronyd (%s)",
			 b->status == FC_SYNC_UNKNOWN ? "unknown" : "free-running", b->reason,
			 src_via(FC_BOUND_CHRONY, &bd->probe));
	close_source(bd);
	bd->ch = bd->probe;
	bd->probing = 0;
	bd->kind = FC_BOUND_CHRONY;
	bd->chosen_at = mono;
	bd->cur = bd->probe_b;
}

/* Samples tried per poll while the host keeps rewriting VMClock between the snapshot and the sample. */
#define VM_SAMPLE_TRIES 3

static uint64_t hw_counter(void *ctx)
{
	(void)ctx;
	return fc__counter_ordered(); /* ordered: after the CLOCK_REALTIME read before it, before the one after */
}

static int64_t realtime_ns(void *ctx)
{
	struct timespec ts;
	(void)ctx;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

void fc__bounder_init(struct fc_bounder *bd, const struct fc_bound_config *cfg, int64_t now)
{
	int (*ntp)(void *, struct fc_ntp *) = bd->ntp;
	void *ntp_ctx = bd->ntp_ctx, *clk_ctx = bd->clk_ctx;
	uint64_t (*counter)(void *) = bd->counter;
	int64_t (*realtime)(void *) = bd->realtime;
	int vm_counter = counter ? bd->vm_counter : FC_VMC_OUR_COUNTER;
	memset(bd, 0, sizeof(*bd));
	bd->counter = counter ? counter : hw_counter;
	bd->realtime = realtime ? realtime : realtime_ns;
	bd->clk_ctx = clk_ctx;
	bd->vm_counter = vm_counter;
	bd->ntp = ntp ? ntp : fc__ntp_read;
	bd->ntp_ctx = ntp_ctx;
	bd->cfg = *cfg;
	for (int k = 0; k < KINDS; k++)
		if (drv(k)->init)
			drv(k)->init(state(bd, k)); /* every source closed */
	bd->kern.read = bd->ntp;
	bd->kern.ctx = bd->ntp_ctx;
	bd->cur.status = FC_SYNC_UNKNOWN;
	fc__bfmt(bd->cur.reason, sizeof(bd->cur.reason), "no report from the bound source yet");
	/* FASTCLOCK_BOUND_SOURCE=none opens nothing at all */
	if (cfg->mode != FC_BOUND_NONE)
		bd->have_vm = fc__vmc_open(&bd->vm, cfg->vmclock, &(struct fc_bound){0}, now) == 0; /* absent: no error */
	choose(bd, now);
}

void fc__bounder_close(struct fc_bounder *bd)
{
	close_source(bd);
	probe_close(bd);
	if (bd->have_vm)
		fc__vmc_close(&bd->vm);
	bd->have_vm = 0;
	bd->kind = FC_BOUND_NONE;
}

/* VMClock as the time source, when the mode allows it and this poll's snapshot gives the time of the counter:
 * one sample (CLOCK_REALTIME, the counter, CLOCK_REALTIME). Sets bd->use_vm; explicit mode without it: UNKNOWN
 * with the reason. */
static int vm_time(struct fc_bounder *bd, int64_t mono, int polled)
{
	bd->use_vm = 0;
	for (int k = 0; polled && (bd->cfg.mode < 0 || bd->cfg.mode == FC_BOUND_VMCLOCK); k++) {
		int64_t r0 = bd->realtime(bd->clk_ctx);
		uint64_t ctr = bd->counter(bd->clk_ctx);
		int64_t r1 = bd->realtime(bd->clk_ctx);
		/* an ordered counter read: its fence (lfence, isb) lets the seq_count load below start only once the
		 * sample's counter read has completed */
		(void)bd->counter(bd->clk_ctx);
		if (fc__vmc_unchanged(&bd->vm)) {
			bd->use_vm = fc__vmc_bound(&bd->vm, bd->vm_counter, mono, r0, ctr, r1, &bd->vm_b);
			break;
		}
		/* the host rewrote the page since the snapshot (a migration moves the marker: DISRUPTED): snapshot
		 * again and sample again */
		if (k == VM_SAMPLE_TRIES - 1 || fc__vmc_poll(&bd->vm, &bd->cur, mono) != 0) {
			fc__bfmt(bd->vm.why, sizeof(bd->vm.why), "VMClock rewritten during each of %d samples", k + 1);
			break;
		}
	}
	if (bd->use_vm) {
		memcpy(bd->vm_b.last_error, bd->cur.last_error, sizeof(bd->vm_b.last_error));
		bd->vm_b.last_error_at = bd->cur.last_error_at;
	} else if (bd->kind == FC_BOUND_VMCLOCK) {
		/* nothing promised (the last error stays) */
		bd->cur.status = FC_SYNC_UNKNOWN;
		bd->cur.center_ns = 0;
		bd->cur.half_ns = INT64_MAX / 4;
		bd->cur.drift_ppb = 0;
		bd->cur.leap = FC_LEAP_NONE;
		fc__bfmt(bd->cur.reason, sizeof(bd->cur.reason), "%.110s",
			 !bd->have_vm ? "no VMClock (see last error)"
			 : polled || (!bd->vm.map && bd->vm.fd < 0) ? bd->vm.why /* closed: why (judged again, refused) */
								      : "no consistent VMClock read");
	}
	return bd->use_vm;
}

const struct fc_bound *fc__bounder_current(const struct fc_bounder *bd)
{
	return bd->use_vm ? &bd->vm_b : &bd->cur;
}

const char *fc__bounder_name(const struct fc_bounder *bd)
{
	return fc__bound_kind_name(bd->use_vm ? FC_BOUND_VMCLOCK : bd->kind);
}

const char *fc__bounder_why(const struct fc_bounder *bd)
{
	return bd->use_vm && bd->cfg.mode < 0 ? "auto: a VMClock gives the time of the counter" : bd->why;
}

/* CLOCK_MONOTONIC of the newest measurement behind the bound served (INT64_MIN: none known), which ends a
 * VMClock disruption once it is after it: VMClock's own sample while its host says SYNCHRONIZED; else the
 * source's (its driver's measured_at: the segment's as_of, chronyd's selected source's newest sample, a write of
 * the kernel's maxerror seen). */
static int64_t measured_at(const struct fc_bounder *bd)
{
	if (bd->use_vm)
		return bd->vm.snap.clock_status == FC_VMC_SYNCHRONIZED ? bd->vm_b.as_of_ns : INT64_MIN;
	return src_measured_at(bd->kind, cstate(bd, bd->kind));
}

const struct fc_bound *fc__bounder_poll(struct fc_bounder *bd, int64_t mono, int64_t mono_coarse)
{
	struct fc_bound *b = &bd->cur, *out;
	int polled = 0;
	b->holds_until_ns = 0; /* set by the source that has such a time (clockbound.c) */
	bd->vm_b.holds_until_ns = 0;
	if (bd->cfg.mode < 0 && bd->kind != FC_BOUND_CLOCKBOUND && mono - bd->chosen_at >= RESELECT_EVERY_NS) {
		upgrade(bd, mono, mono_coarse);
	} else if (!source_open(bd) && mono - bd->chosen_at >= POLL_EVERY_NS) {
		/* the source is not open (absent at start, or never opened): try again, once a second */
		int was = bd->kind;
		struct fc_bound keep = *b;
		close_source(bd);
		choose(bd, mono);
		memcpy(keep.last_error, b->last_error, sizeof(keep.last_error)); /* choose's error, if any */
		keep.last_error_at = b->last_error_at;
		if (bd->kind != was) {
			keep.status = FC_SYNC_UNKNOWN;
			fc__bfmt(keep.reason, sizeof(keep.reason), "source changed; no report yet");
		}
		*b = keep;
	}
	if (bd->have_vm)
		polled = fc__vmc_poll(&bd->vm, b, mono) == 0;
	src_poll(bd, bd->kind, state(bd, bd->kind), mono, mono_coarse, b); /* FASTCLOCK_BOUND_SOURCE=vmclock: vm_time */
	if (bd->kind == FC_BOUND_CLOCKBOUND && bd->cfg.mode < 0)
		fall_back(bd, mono, mono_coarse);
	out = vm_time(bd, mono, polled) ? &bd->vm_b : b;
	if (bd->have_vm) {
		fc__vmc_settle(&bd->vm, measured_at(bd));
		fc__vmc_apply(&bd->vm, out);
	}
	return out;
}
