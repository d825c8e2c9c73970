/*
 * fastclock — which bound source stands behind fc_real_bounded, and its polling.
 * FASTCLOCK_BOUND_SOURCE=auto|vmclock|clockbound|chrony|kernel|none (auto: a VMClock while it gives the time of
 * the counter, else chronyd if it can be asked, else a ClockBound segment that opens, else the kernel; beside a
 * VMClock the segment comes before chronyd: prefer_chrony), FASTCLOCK_CLOCKBOUND_PATH, FASTCLOCK_CHRONY_SOCKET, FASTCLOCK_VMCLOCK_PATH override the default
 * paths. Called by the writer only (under its lock).
 *
 * Owns: struct fc_bounder (the chosen source, its state, the current bound).
 * May call: clockbound.c, chrony.c, vmclock.c, kernel.c, bound.c, fmt.c, ntp.c (fc__ntp_read), libc (stat).
 * Everything here is async-signal-safe: the writer may run inside a signal handler (a bounded read's slow path).
 */
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fastclock/fc_counter.h"

#include "bound.h"
#include "../units.h"

/* adjtimex (the kernel source) is asked at most once a second (a syscall; never on the read path). */
#define POLL_EVERY_NS NS_PER_SEC
/* chronyd's rounds around its next measurement: every 100 ms, ClockBound's daemon's cadence, and every 12.5 ms
 * (an eighth) within one round's uncertainty of it, so that a step chronyd has measured reaches the interval no
 * later than it reaches ClockBound's segment (at 1 s: 0.27 s later in a fleet clockbound-step run); between its
 * measurements one a second (chrony.c, FC_CHRONY_CAP_NS). A round is 2 + up to 6 datagrams each way on the
 * loopback, answered by chronyd in microseconds. */
#define CHRONY_POLL_EVERY_NS (NS_PER_SEC / 10)
/* Auto mode looks for a better source (a ClockBound segment, then chronyd) every 10 s: one open() or stat(). */
#define RESELECT_EVERY_NS (10 * NS_PER_SEC)
/* chronyd's report ages like ClockBound's segment: trusted for 5 s, then FREE_RUNNING, UNKNOWN after 1000 s
 * (ClockBound's grace period and void_after). */
#define CHRONY_GRACE_NS (5 * NS_PER_SEC)
#define CHRONY_VOID_NS (1000 * NS_PER_SEC)

const char *fc__bound_kind_name(int kind)
{
	switch (kind) {
	case FC_BOUND_NONE: return "none";
	case FC_BOUND_CLOCKBOUND: return "clockbound";
	case FC_BOUND_CHRONY: return "chrony";
	case FC_BOUND_KERNEL: return "kernel";
	case FC_BOUND_VMCLOCK: return "vmclock";
	default: return "?";
	}
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

int fc__bound_config_parse(const char *mode, const char *cb_path, const char *chrony_path, const char *vm_path,
			  struct fc_bound_config *out, char *err, size_t errlen)
{
	static const char *const names[] = {"none", "clockbound", "chrony", "kernel", "vmclock"};
	int errors = 0;
	memset(out, 0, sizeof(*out));
	out->mode = -1;
	if (mode && *mode && strcmp(mode, "auto") != 0) {
		int found = 0;
		for (int k = 0; k < 5; k++)
			if (strcmp(mode, names[k]) == 0)
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

static void close_sources(struct fc_bounder *bd)
{
	if (bd->kind == FC_BOUND_CLOCKBOUND)
		fc__cb_close(&bd->cb);
	if (bd->kind == FC_BOUND_CHRONY)
		fc__chrony_close(&bd->ch);
}

/* Try one source; 0 if it can be used. */
static int try_source(struct fc_bounder *bd, int kind, int64_t now)
{
	switch (kind) {
	case FC_BOUND_CLOCKBOUND:
		return fc__cb_open(&bd->cb, bd->cfg.clockbound, &bd->cur, now);
	case FC_BOUND_VMCLOCK:
		if (!bd->have_vm)
			bd->have_vm = fc__vmc_open(&bd->vm, bd->cfg.vmclock, &bd->cur, now) == 0;
		return bd->have_vm ? 0 : -1;
	case FC_BOUND_CHRONY:
		if (!fc__chrony_present(bd->cfg.chrony)) {
			fc__bound_error(&bd->cur, now, "no chronyd socket at %.70s", bd->cfg.chrony);
			bd->ch.fd = -1;
			bd->ch.dirfd = -1;
			return -1;
		}
		return fc__chrony_open(&bd->ch, bd->cfg.chrony, &bd->cur, now);
	default:
		return 0;
	}
}

static int source_open(const struct fc_bounder *bd)
{
	return bd->kind == FC_BOUND_CLOCKBOUND ? bd->cb.fd >= 0
	       : bd->kind == FC_BOUND_CHRONY   ? bd->ch.fd >= 0
	       : bd->kind == FC_BOUND_VMCLOCK  ? bd->have_vm
					       : 1;
}

/* Auto mode's order. ClockBound's segment is built from chronyd's tracking report alone (bound = root distance +
 * |correction|, centred on the uncorrected clock), so chronyd asked directly knows everything the segment does
 * and more: its estimate (half the width or less) and its newest measurement (a step seen at chronyd's first
 * sample of it). chronyd comes first, the segment where chronyd cannot be asked, the kernel last. Except beside a
 * VMClock: the segment's daemon watches its disruption marker (ClockBound's VMClock rules: a segment behind the
 * marker is UNKNOWN), which a report of chronyd's knows nothing of; there the segment comes first. */
static int prefer_chrony(const struct fc_bounder *bd)
{
	return bd->cfg.mode < 0 && !bd->have_vm;
}

/* chronyd has said nothing for ClockBound's grace (or never): the chrony source ages, a live segment may not */
static int chrony_silent(const struct fc_chrony *ch, int64_t mono)
{
	return ch->last_reply == 0 || mono - ch->last_reply >= CHRONY_GRACE_NS;
}

static void choose(struct fc_bounder *bd, int64_t now)
{
	bd->chosen_at = now;
	if (bd->cfg.mode >= 0) {
		bd->kind = bd->cfg.mode;
		if (try_source(bd, bd->kind, now) != 0)
			fc__bfmt(bd->why, sizeof(bd->why), "FASTCLOCK_BOUND_SOURCE=%s, not available (see last error)",
				 fc__bound_kind_name(bd->kind));
		else
			fc__bfmt(bd->why, sizeof(bd->why), "FASTCLOCK_BOUND_SOURCE=%s%s%s%s", fc__bound_kind_name(bd->kind),
				 bd->kind == FC_BOUND_CHRONY ? " (" : "", bd->kind == FC_BOUND_CHRONY ? bd->ch.via_name : "",
				 bd->kind == FC_BOUND_CHRONY ? ")" : "");
		return;
	}
	if (prefer_chrony(bd) && try_source(bd, FC_BOUND_CHRONY, now) == 0) {
		bd->kind = FC_BOUND_CHRONY;
		fc__bfmt(bd->why, sizeof(bd->why), "auto: chronyd asked directly (%s), narrower than a segment built from it",
			 bd->ch.via_name);
	} else if (try_source(bd, FC_BOUND_CLOCKBOUND, now) == 0) {
		bd->kind = FC_BOUND_CLOCKBOUND;
		fc__bfmt(bd->why, sizeof(bd->why), "auto: ClockBound segment at %.60s (%s)", bd->cfg.clockbound,
			 prefer_chrony(bd) ? "chronyd cannot be asked" : "it watches VMClock");
	} else if (!prefer_chrony(bd) && try_source(bd, FC_BOUND_CHRONY, now) == 0) {
		bd->kind = FC_BOUND_CHRONY;
		fc__bfmt(bd->why, sizeof(bd->why), "auto: no ClockBound segment; chronyd (%s)", bd->ch.via_name);
	} else {
		bd->kind = FC_BOUND_KERNEL;
		fc__bfmt(bd->why, sizeof(bd->why), "auto: no ClockBound segment, no chronyd socket; the kernel's maxerror");
	}
}

/* Auto mode on a lesser source: switch to a better one if it has appeared, without touching the current one
 * otherwise (a chrony socket keeps its outstanding request and its last report). */
static void upgrade(struct fc_bounder *bd, int64_t now, int64_t now_coarse)
{
	struct fc_bound scratch = {0}; /* a better source that is still absent is not an error of this one */
	struct fc_cb cb;
	struct fc_chrony ch;
	uint64_t marker = bd->vm.snap.disruption_marker;
	int to = FC_BOUND_NONE, was;
	bd->chosen_at = now;
	if (prefer_chrony(bd) && bd->kind == FC_BOUND_KERNEL && fc__chrony_present(bd->cfg.chrony) &&
	    fc__chrony_open(&ch, bd->cfg.chrony, &scratch, now) == 0) {
		to = FC_BOUND_CHRONY;
	} else if (prefer_chrony(bd) && bd->kind == FC_BOUND_CHRONY && !chrony_silent(&bd->ch, now)) {
		return; /* chronyd answers: nothing better */
	} else if (fc__cb_open(&cb, bd->cfg.clockbound, &scratch, now) == 0) {
		/* only to a segment that vouches for the time now, by the rules it is served under (VMClock's marker
		 * included: a segment behind it is UNKNOWN, and going back to it would flap): not a dead daemon's
		 * (fall_back left it) */
		if (fc__cb_poll(&cb, now_coarse, bd->have_vm && bd->vm.have_snap ? &marker : NULL, &scratch) ==
			    FC_SYNC_SYNCHRONIZED &&
		    !(bd->have_vm && bd->vm.disrupted))
			to = FC_BOUND_CLOCKBOUND;
		else
			fc__cb_close(&cb);
	}
	if (to == FC_BOUND_NONE && bd->kind == FC_BOUND_KERNEL && fc__chrony_present(bd->cfg.chrony) &&
	    fc__chrony_open(&ch, bd->cfg.chrony, &scratch, now) == 0)
		to = FC_BOUND_CHRONY;
	if (to == FC_BOUND_NONE)
		return;
	close_sources(bd);
	if (to == FC_BOUND_CLOCKBOUND)
		bd->cb = cb;
	else
		bd->ch = ch;
	was = bd->kind;
	bd->kind = to;
	fc__bfmt(bd->why, sizeof(bd->why), "auto: %s", to == FC_BOUND_CLOCKBOUND
	         ? (was == FC_BOUND_CHRONY ? "chronyd silent for 5 s, ClockBound's segment live" : "a ClockBound segment appeared")
	         : ch.via == FC_CHRONY_VIA_UNIX ? "chronyd's unix socket appeared" : "chronyd's command port appeared");
	bd->cur = (struct fc_bound){.status = FC_SYNC_UNKNOWN, .reason = "source changed; no report yet"};
}

/* Poll chronyd (a round every 100 ms around its next measurement, else once a second; the reply collected
 * without blocking) and age its report
 * as ClockBound's client ages a segment. */
static void chrony_poll(struct fc_chrony *ch, const char *path, int64_t mono, struct fc_bound *b)
{
	fc__chrony_poll(ch, mono, CHRONY_POLL_EVERY_NS, b);
	if (ch->last_reply == 0) {
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason), "no tracking report from chronyd (%s) at %.60s yet", ch->via_name, path);
	} else if (b->status == FC_SYNC_SYNCHRONIZED && mono - b->as_of_ns >= CHRONY_VOID_NS) {
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason), "no report from chronyd for %lld s",
			 (long long)((mono - b->as_of_ns) / NS_PER_SEC));
	} else if (b->status == FC_SYNC_SYNCHRONIZED && mono - b->as_of_ns >= CHRONY_GRACE_NS) {
		b->status = FC_SYNC_FREE_RUNNING;
		fc__bfmt(b->reason, sizeof(b->reason), "no report from chronyd for %lld ms",
			 (long long)((mono - b->as_of_ns) / 1000000));
	} else if (ch->last_reply && mono - b->as_of_ns < CHRONY_GRACE_NS && b->status == FC_SYNC_FREE_RUNNING) {
		fc__chrony_report(ch, b->as_of_ns, b); /* fresh again */
	}
}

static void probe_close(struct fc_bounder *bd)
{
	if (bd->probing)
		fc__chrony_close(&bd->probe);
	bd->probing = 0;
}

/* Has the segment's daemon stopped vouching: never written (as_of 0), or not updated for the client's grace?
 * A segment its daemon keeps updating that says Unknown (a disruption it handles, its chronyd unsynchronised)
 * is its daemon's verdict, not a dead daemon. */
static int segment_stale(const struct fc_cb *cb, int64_t mono_coarse)
{
	int64_t as_of = fc__cb_as_of(cb);
	if (as_of == INT64_MIN)
		return 0; /* no snapshot, or malformed: UNKNOWN stays */
	return as_of == 0 || mono_coarse - as_of >= CHRONY_GRACE_NS;
}

/* Auto mode on ClockBound. A segment whose daemon died says SYNCHRONIZED for the client's 5 s grace, then
 * FREE_RUNNING (a bound growing at max_drift) until void_after, then UNKNOWN; one never written is UNKNOWN. A
 * chronyd that is alive vouches for more. So while the segment is stale (segment_stale) and below
 * SYNCHRONIZED, chronyd's socket is probed beside it (a request a second, never waiting), and replaces the
 * segment once its report is better: SYNCHRONIZED, or FREE_RUNNING against an UNKNOWN segment. The bound never
 * drops from an honest FREE_RUNNING to UNKNOWN in the switch: the probe's report comes with it. What is never
 * sidestepped: a segment its daemon keeps updating that says Unknown or Disrupted, a marker behind VMClock's,
 * a VMClock disruption not yet over (ClockBound's own client says Unknown there; so do we). upgrade() goes back
 * to the segment once it is SYNCHRONIZED again under the same rules. */
static void fall_back(struct fc_bounder *bd, int64_t mono, int64_t mono_coarse)
{
	const struct fc_bound *b = &bd->cur;
	int better, eager = prefer_chrony(bd);
	if (!eager && (b->status == FC_SYNC_SYNCHRONIZED || b->status == FC_SYNC_DISRUPTED || !segment_stale(&bd->cb, mono_coarse) ||
	    (bd->have_vm && bd->vm.disrupted) ||
	    (bd->have_vm && bd->vm.have_snap && bd->cb.snap.disruption_support &&
	     bd->cb.snap.disruption_marker != bd->vm.snap.disruption_marker))) {
		probe_close(bd); /* live again, or a verdict of the daemon's (or VMClock's) that chronyd cannot overrule */
		return;
	}
	if (!bd->probing) {
		if (mono - bd->probe_at < POLL_EVERY_NS)
			return;
		bd->probe_at = mono;
		if (!fc__chrony_present(bd->cfg.chrony))
			return;
		bd->probe_b = (struct fc_bound){.status = FC_SYNC_UNKNOWN};
		if (fc__chrony_open(&bd->probe, bd->cfg.chrony, &bd->probe_b, mono) != 0)
			return;
		bd->probing = 1;
	}
	chrony_poll(&bd->probe, bd->cfg.chrony, mono, &bd->probe_b);
	/* eager (no VMClock): chronyd's own report, whatever it says, once it answers (its UNKNOWN over an untracked
	 * step is truer than the segment's SYNCHRONIZED from the same chronyd's older estimate) */
	better = bd->probe_b.status == FC_SYNC_SYNCHRONIZED ||
		 (bd->probe_b.status == FC_SYNC_FREE_RUNNING && b->status == FC_SYNC_UNKNOWN) ||
		 (eager && !chrony_silent(&bd->probe, mono));
	if (!better)
		return;
	if (eager && b->status == FC_SYNC_SYNCHRONIZED)
		fc__bfmt(bd->why, sizeof(bd->why), "auto: chronyd answers (%s), narrower than ClockBound's segment",
			 bd->probe.via_name);
	else
		fc__bfmt(bd->why, sizeof(bd->why), "auto: ClockBound segment %s (%.50s): fell back to chronyd (%s)",
			 b->status == FC_SYNC_UNKNOWN ? "unknown" : "free-running", b->reason, bd->probe.via_name);
	fc__cb_close(&bd->cb);
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
	bd->kernel_at = INT64_MIN / 2;
	bd->kernel_max = -1;
	bd->kernel_wrote = INT64_MIN;
	bd->cfg = *cfg;
	bd->ch.fd = -1;
	bd->ch.dirfd = -1;
	bd->cb.fd = -1;
	bd->vm.fd = -1;
	bd->cur.status = FC_SYNC_UNKNOWN;
	fc__bfmt(bd->cur.reason, sizeof(bd->cur.reason), "no report from the bound source yet");
	/* FASTCLOCK_BOUND_SOURCE=none opens nothing at all */
	if (cfg->mode != FC_BOUND_NONE)
		bd->have_vm = fc__vmc_open(&bd->vm, cfg->vmclock, &(struct fc_bound){0}, now) == 0; /* absent: no error */
	choose(bd, now);
}

void fc__bounder_close(struct fc_bounder *bd)
{
	close_sources(bd);
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
			 !bd->have_vm ? "no VMClock (see last error)" : polled ? bd->vm.why : "no consistent VMClock read");
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
 * VMClock disruption once it is after it: VMClock's own sample while its host says SYNCHRONIZED; the segment's
 * as_of; chronyd's selected source's newest sample (its age is whole seconds at the reply, at the latest the
 * request's send time: one more second is taken off); a write of the kernel's maxerror seen (after the read
 * before it). */
static int64_t measured_at(const struct fc_bounder *bd)
{
	if (bd->use_vm)
		return bd->vm.snap.clock_status == FC_VMC_SYNCHRONIZED ? bd->vm_b.as_of_ns : INT64_MIN;
	switch (bd->kind) {
	case FC_BOUND_CLOCKBOUND:
		return fc__cb_as_of(&bd->cb);
	case FC_BOUND_CHRONY:
		return bd->ch.have_src && bd->ch.last_reply
			       ? bd->ch.tracking_at - ((int64_t)bd->ch.src.since_sample + 1) * NS_PER_SEC
			       : INT64_MIN;
	case FC_BOUND_KERNEL:
		return bd->kernel_wrote;
	default:
		return INT64_MIN;
	}
}

const struct fc_bound *fc__bounder_poll(struct fc_bounder *bd, int64_t mono, int64_t mono_coarse)
{
	struct fc_bound *b = &bd->cur, *out;
	int polled = 0;
	if (bd->cfg.mode < 0 && bd->kind != FC_BOUND_CLOCKBOUND && mono - bd->chosen_at >= RESELECT_EVERY_NS) {
		upgrade(bd, mono, mono_coarse);
	} else if (!source_open(bd) && mono - bd->chosen_at >= POLL_EVERY_NS) {
		/* the source is not open (absent at start, or never opened): try again, once a second */
		int was = bd->kind;
		struct fc_bound keep = *b;
		close_sources(bd);
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
	switch (bd->kind) {
	case FC_BOUND_CLOCKBOUND: {
		uint64_t marker = bd->vm.snap.disruption_marker;
		fc__cb_poll(&bd->cb, mono_coarse, bd->have_vm && bd->vm.have_snap ? &marker : NULL, b);
		if (bd->cfg.mode < 0)
			fall_back(bd, mono, mono_coarse);
		break;
	}
	case FC_BOUND_CHRONY:
		chrony_poll(&bd->ch, bd->cfg.chrony, mono, b);
		break;
	case FC_BOUND_KERNEL:
		if (mono - bd->kernel_at >= POLL_EVERY_NS) {
			struct fc_ntp n = {0};
			bd->ntp(bd->ntp_ctx, &n);
			fc__kernel_eval(&n, mono, b);
			/* the kernel only grows maxerror: lower than at the last read, a daemon wrote it since then */
			if (bd->kernel_max >= 0 && n.sync != FC_SYNC_UNKNOWN && n.maxerror_ns < bd->kernel_max)
				bd->kernel_wrote = bd->kernel_at;
			bd->kernel_max = n.sync != FC_SYNC_UNKNOWN ? n.maxerror_ns : -1;
			bd->kernel_at = mono;
		}
		break;
	case FC_BOUND_VMCLOCK:
		break; /* vm_time */
	default:
		*b = (struct fc_bound){.status = FC_SYNC_UNKNOWN, .reason = "FASTCLOCK_BOUND_SOURCE=none"};
		bd->use_vm = 0;
		return b;
	}
	out = vm_time(bd, mono, polled) ? &bd->vm_b : b;
	if (bd->have_vm) {
		fc__vmc_settle(&bd->vm, measured_at(bd));
		fc__vmc_apply(&bd->vm, out);
	}
	return out;
}
