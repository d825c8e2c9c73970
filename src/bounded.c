/*
 * fastclock — the UTC bound's side of the writer's seam (floor 5, above the clock core): the bounded reads' slow
 * path, the global clock's bound source and its state, and the seam's ops (state.h's struct fc_bound_ops).
 *
 * The core needs no bound: until a bounded read (fc_real_bounded, fc_mono_bounded, the TrueTime helpers), fc_init
 * or fc_status asks for one, the global clock's hands say FC_SYNC_UNASKED and nothing here runs: no variable of
 * the bound is read, no file or socket opened. The inline bounded readers send an unasked hand here
 * (fc__slow_bounded), which installs the seam (c->bound, one release store) and asks: in auto mode the process's
 * first bound reads nothing and promises nothing (UNKNOWN; the kernel's NTP state alone could not say SYNCHRONIZED
 * before the sources are asked: src/bound/kernel.c, docs/THREATS.md), the next opens the sources (a re-anchor with
 * the chores, which polls them). A static program links this file only through those entry points.
 *
 * Owns: the global clock's struct fc_bounder and its state (opened or not, the environment, the last poll, the
 * NTP read it shares), fc__slow_bounded, fc__bound_install, fc__bound_status.
 * May call: read.c (fc__read_global), windup.c (the writer lock, a re-anchor, the NTP cache), init.c, state.c,
 * config.c (the environment), str.c, bound/ (select.c, bound.c).
 */
#include <errno.h>
#include <string.h>

#include "section.h"
#include "bounded.h"
#include "config.h"
#include "init.h"
#include "read.h"
#include "state.h"
#include "str.h"
#include "units.h"
#include "windup.h"
#include "bound/select.h"

#define REOPEN_FIRST 1 /* the next bound is the process's first */
#define REOPEN_LOOK 2  /* the first has been served (auto mode, nothing read); the next opens the sources */
/* The kernel's maxerror grows by 500 us each second (MAXFREQ, kernel/time/ntp.c): 500 ppm. */
#define NTP_GROWTH_DIV 2000

enum { E_BOUND_SOURCE, E_CLOCKBOUND, E_CHRONY, E_VMCLOCK, E_COUNT };
static const char *const env_names[E_COUNT] = {
	"FASTCLOCK_BOUND_SOURCE", "FASTCLOCK_CLOCKBOUND_PATH", "FASTCLOCK_CHRONY_SOCKET", "FASTCLOCK_VMCLOCK_PATH",
};

/* The global clock's bound (static: nothing allocated); written under its writer lock only. */
static struct {
	struct fc_bounder bd;
	/* (re-)open the source on the next bound: REOPEN_FIRST at start and in a fork child, REOPEN_LOOK after the
	 * first bound served nothing; 0 once open */
	int reopen;
	int env_read;              /* env holds the variables (read once, when the bound is first asked for) */
	const char *env[E_COUNT];  /* FASTCLOCK_BOUND_SOURCE and the path overrides */
	struct fc_bound last;      /* the source's last poll, which re-anchors without chores stamp hands from */
	int polled;                /* there was one */
	int64_t ntp_share_at;      /* the bound being computed's CLOCK_MONOTONIC: a refresh at it is the kernel source's too */
} g = {.reopen = REOPEN_FIRST, .ntp_share_at = INT64_MIN};

static void env_once(void)
{
	if (!g.env_read) {
		fc__env_scan(env_names, E_COUNT, g.env);
		g.env_read = 1;
	}
}

/* The bound's kernel source reading through the clock: the cached state when the writer's refresh read it at the
 * bound's own time (g.ntp_share_at), so the two share one adjtimex; else a read of its own (the clock's source's). */
static int ntp_shared(void *ctx, struct fc_ntp *out)
{
	const struct fc_clock *c = ctx;
	/* read at ntp_at, after the caller took its time (fc__windup_refresh_ntp_locked's now): as of that time it is
	 * what a read of the source's own, also taken after it, would show, or less grown */
	if (c->have_ntp && c->ntp_at == g.ntp_share_at) {
		*out = c->ntp;
		return out->sync;
	}
	return c->src.ntp ? c->src.ntp(c->src.ctx, out) : fc__ntp_read(NULL, out);
}

/* A pending leap second: within FC_LEAP_WINDOW_NS (units.h) of a UTC midnight the interval widens by the leap
 * itself (1 s), as the kernel (or chronyd's slew) may insert or delete it anywhere in that window. */
static int near_midnight(int64_t real_from, int64_t real_to)
{
	int64_t next = (real_from / FC_DAY_NS + 1) * FC_DAY_NS, prev = next - FC_DAY_NS;
	return real_from < prev + FC_LEAP_WINDOW_NS || real_to > next - FC_LEAP_WINDOW_NS;
}

/* A stamp that promises nothing: UNKNOWN, or UNASKED (the bounded readers' slow path asks). */
static void promise_nothing(struct fc_hand *p, int status)
{
	p->utc_err_ns = FC_BOUND_NOTHING;
	p->utc_corr_ns = 0;
	p->sync_status = status;
}

/* Auto mode, and no bounded read has been served nor fc_init or fc_status asked: the process's first bound is due. */
static int first_due(void)
{
	env_once();
	return g.reopen == REOPEN_FIRST && fc__bound_config_is_auto(g.env[E_BOUND_SOURCE]);
}

static int first_locked(struct fc_clock *c, struct fc_hand *p)
{
	(void)c;
	if (!first_due())
		return 0;
	/* What it could read cheaply, the kernel's NTP state (one adjtimex), could not say SYNCHRONIZED before the
	 * sources are looked for: it leaves out chronyd's correction still being slewed (src/bound/kernel.c,
	 * docs/THREATS.md), and the source auto would choose (VMClock, chronyd, a segment) may say otherwise. So it
	 * reads nothing: the next bound opens the sources, as this one did before. */
	g.reopen = REOPEN_LOOK;
	promise_nothing(p, FC_SYNC_UNKNOWN);
	return 1;
}

static void poll_locked(struct fc_clock *c, struct fc_hand *p, int64_t now, int64_t life_ns)
{
	const struct fc_bound *b;
	int64_t coarse = 0, real = 0;
	/* once a second: fc_status reports the kernel's state beside the source */
	fc__windup_refresh_ntp_locked(c, now);
	if (g.reopen) { /* first use, or a fork child: parse the environment, open */
		struct fc_bound_config cfg;
		char err[sizeof(c->config_error)] = "";
		env_once();
		if (fc__bound_config_parse(g.env[E_BOUND_SOURCE], g.env[E_CLOCKBOUND], g.env[E_CHRONY], g.env[E_VMCLOCK],
					  &cfg, err, sizeof(err)) && !strstr(c->config_error, err))
			fc__str_cat(c->config_error, sizeof(c->config_error), c->config_error[0] ? "; " : "", err, NULL);
		fc__bounder_close(&g.bd);
		/* the kernel source reads through the clock: the refresh above and its read are one adjtimex */
		g.bd.ntp = ntp_shared;
		g.bd.ntp_ctx = c;
		fc__bounder_init(&g.bd, &cfg, now);
		g.reopen = 0;
	}
	c->src.kernel(c->src.ctx, CLOCK_MONOTONIC_COARSE, &coarse);
	c->src.kernel(c->src.ctx, CLOCK_REALTIME, &real);
	g.ntp_share_at = now;
	b = fc__bounder_poll(&g.bd, now, coarse);
	g.ntp_share_at = INT64_MIN;
	g.last = *b; /* what a re-anchor without chores stamps its hand from */
	g.polled = 1;
	/* the half-width at the end of the hand's life: it only grows, so it holds for every read of the hand */
	p->utc_err_ns = fc__bound_half_at(b, now + life_ns);
	if (b->leap != FC_LEAP_NONE && near_midnight(real, real + life_ns))
		p->utc_err_ns += NS_PER_SEC;
	p->utc_corr_ns = b->center_ns;
	p->sync_status = b->status;
}

/* The seam's stamp. Without poll, from the source's last poll: its half-width grows at its drift rate from when
 * it held (fc__bound_half_at), so at the end of the hand's life it is the bound the same poll would have given
 * then; the poll is at most the chores' cadence old (windup.c). */
static void from_last(struct fc_hand *p, int64_t now, int64_t life_ns)
{
	const struct fc_bound *b = &g.last;
	if (b->holds_until_ns && now + life_ns > b->holds_until_ns) {
		/* the poll's status ends within this hand's life by the source's own rules (ClockBound's grace): what
		 * the next poll says is not known here, so nothing is promised until then (fail closed) */
		promise_nothing(p, FC_SYNC_UNKNOWN);
		return;
	}
	p->utc_err_ns = fc__bound_half_at(b, now + life_ns);
	if (b->leap != FC_LEAP_NONE && near_midnight(p->real_ns, p->real_ns + life_ns))
		p->utc_err_ns += NS_PER_SEC;
	p->utc_corr_ns = b->center_ns;
	p->sync_status = b->status;
}

static void stamp_locked(struct fc_clock *c, struct fc_hand *p, int64_t now, int64_t life_ns, int poll)
{
	if (first_due()) {
		/* a re-anchor (the keeper's) between the seam's installation and the first bounded read's turn at the
		 * lock: that read is still the process's first bound, so the hand stays unasked and nothing is opened */
		promise_nothing(p, FC_SYNC_UNASKED);
		return;
	}
	if (poll || g.reopen || !g.polled)
		poll_locked(c, p, now, life_ns);
	else
		from_last(p, now, life_ns);
}

/* The seam's cached: the last poll's bound, where there is one (a read past a hand's window, read.c). */
static int cached_locked(struct fc_clock *c, struct fc_hand *p, int64_t now, int64_t life_ns)
{
	(void)c;
	if (g.reopen || !g.polled)
		return 0;
	from_last(p, now, life_ns);
	return 1;
}

static void forked(struct fc_clock *c)
{
	(void)c;
	g.reopen = REOPEN_FIRST;
}

static const struct fc_bound_ops ops = {stamp_locked, cached_locked, first_locked, forked};

static int unasked(const struct fc_clock *c)
{
	const struct fc_hand *h = __atomic_load_n(&c->pub->current, __ATOMIC_ACQUIRE);
	return h && __atomic_load_n(&h->sync_status, __ATOMIC_RELAXED) == FC_SYNC_UNASKED;
}

/* The writer lock, waited for while another thread holds it; never by a signal handler on a thread inside the
 * writer (fc__in_writer), which would wait for itself: it only tries. */
static int lock_unless_mine(struct fc_clock *c)
{
	if (fc__in_writer)
		return fc__windup_trylock(c);
	fc__windup_lock(c);
	return 1;
}

/* The seam, and the period a bound needs: its width grows with a hand's age, so a process that asks for a bound
 * gets the fine period where the period is the default (config.h). A signal handler inside the writer asks the
 * next writer for it: the next bounded read may never come here (its hands are no longer unasked). */
static void install_seam(struct fc_clock *c)
{
	if (!__atomic_load_n(&c->bound, __ATOMIC_ACQUIRE))
		__atomic_store_n(&c->bound, &ops, __ATOMIC_RELEASE); /* the writer's acquire loads (windup.c) */
	fc__windup_fine_period(c, 1);
}

void fc__bound_install(struct fc_clock *c, int poll)
{
	install_seam(c);
	/* asked for by name (fc_init, fc_status): no first bound that reads nothing, the next stamp opens the sources */
	if (lock_unless_mine(c)) {
		if (g.reopen == REOPEN_FIRST)
			g.reopen = REOPEN_LOOK;
		fc__windup_unlock(c);
	}
	/* hands stamped before it: a re-anchor with the chores polls the source and stamps the next one */
	if (poll && unasked(c))
		(void)fc__windup_with_chores(c, NULL);
}

/* The bounded reads' slow path: the inline readers' out == NULL, a hand they may not use, or an unasked hand. */
FC__START_TEXT int fc__slow_bounded(struct fc_interval *out, int how)
{
	struct fc_clock *c = fc__global_clock();
	struct fc__bound b;
	int64_t v, utc_err;

	if (out == NULL) {
		errno = EFAULT;
		return -1;
	}
	if (fc__ensure_init())
		install_seam(c);
	/* The slow path reports the bound of the very hand (or kernel read) that produced the value. */
	v = fc__read_global(how, &b);
	if (b.sync_status == FC_SYNC_UNASKED) {
		/* A hand stamped before the bound was asked for. Under the writer lock (another thread's writer waited
		 * for: this happens once a process, and its stamp is what this read reports): the process's first bound
		 * (auto mode) reads nothing, UNKNOWN; else, unless another writer stamped the current hand meanwhile, a
		 * re-anchor with the chores opens and polls the source; the value is then read again from the hand. A
		 * signal handler on a thread inside the writer never waits: its read promises nothing. */
		const int saved = errno;
		struct fc_hand p = {0};
		if (lock_unless_mine(c)) {
			const int first = ops.first(c, &p);
			if (!first && unasked(c))
				fc__windup_with_chores_locked(c);
			fc__windup_unlock(c);
			if (!first)
				v = fc__read_global(how, &b);
		}
		errno = saved;
		if (b.sync_status == FC_SYNC_UNASKED) {
			b.utc_err_ns = FC_BOUND_NOTHING;
			b.utc_corr_ns = 0;
			b.sync_status = FC_SYNC_UNKNOWN;
		}
	}
	utc_err = (how & FC__REAL) ? b.utc_err_ns : 0;
	if (how & FC__REAL)
		v += b.utc_corr_ns;
	out->earliest_ns = v - b.track_err_ns - utc_err;
	out->latest_ns = v + b.track_err_ns + utc_err;
	out->status = b.sync_status;
	return 0;
}

void fc__bound_status(struct fc_clock *c, struct fc_status *out)
{
	const struct fc_bound *cur;
	struct fc_interval iv;
	int64_t now;
	out->bound_error_age_ns = -1;
	fc__bound_install(c, 1);
	fc__windup_lock(c);
	now = fc__kernel_ns(c, CLOCK_MONOTONIC);
	/* A process whose first bounded read read nothing (auto mode), or that has had no bound yet (the kernel
	 * backend): its sources are opened now, as its next bound would. */
	if (g.reopen) {
		struct fc_hand p = {0};
		poll_locked(c, &p, now, 0);
	}
	cur = fc__bounder_current(&g.bd);
	fc__copy_str(out->bound_source, sizeof(out->bound_source), fc__bounder_name(&g.bd));
	fc__copy_str(out->bound_why, sizeof(out->bound_why), fc__bounder_why(&g.bd));
	fc__copy_str(out->bound_reason, sizeof(out->bound_reason), cur->reason);
	fc__copy_str(out->bound_error, sizeof(out->bound_error), cur->last_error);
	out->bound_status = cur->status;
	out->bound_age_ns = cur->as_of_ns ? now - cur->as_of_ns : -1;
	out->bound_half_ns = fc__bound_half_at(cur, now);
	out->bound_center_ns = cur->center_ns;
	out->leap = cur->leap;
	if (cur->last_error[0])
		out->bound_error_age_ns = now - cur->last_error_at;
	fc__windup_unlock(c);
	fc_real_bounded(&iv);
	out->sync_status = iv.status;
}
