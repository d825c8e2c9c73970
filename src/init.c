/*
 * fastclock — lazy initialisation of the global clock (floor 3 of the clock core) and the process's own
 * fork handler.
 *
 * Initialisation reads the environment once and publishes a kernel hand: it never measures, never reads
 * sysfs, never opens a perf event, so a first call costs about one kernel read. The counter is
 * checked and calibrated by later slow paths (windup.c, "start-up").
 * Async-signal-safe, as everything reachable from a read: getenv (a read of environ), no stdio, no malloc;
 * every variable is read as secure_getenv reads it: not at all in a set-user-ID, set-group-ID or
 * capability-raising program (AT_SECURE), whose environment is its caller's (docs/THREATS.md); the test
 * seams (FASTCLOCK_TEST_*) exist only in the library the tests link (FASTCLOCK_TEST_SEAMS, CMakeLists.txt);
 * the fork handler is registered by a constructor, before any thread can be initialising.
 *
 * Owns: the clock's init_state (g_state: not initialised / initialising / ready), reading the environment,
 * the fork handler.
 * May call: start.c, state.c, config.c, trust.c (test seams). Nothing of the UTC bound: a program that never asks
 * for one reads none of its variables (src/bounded.c reads them when the bound is installed); fc_init installs it
 * only where it is linked (a weak reference: a static program without a bounded read links none of it).
 */
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "section.h"
#include "config.h"
#include "init.h"
#include "start.h"
#include "state.h"
#include "trust.h"
#include "units.h"

/* Re-check the kernel's clocksource every 1024 re-anchors (about once a second at a 1 ms period), and at
 * least once a second of the kernel's time at longer periods (windup.c, TRUST_EVERY_NS); a sysfs read costs a
 * few us under the writer lock, which readers never wait on. */
#define TRUST_EVERY 1024
/* A reader's re-anchor does the chores (windup.c: the clocksource re-check, the NTP state, the bound's poll) only
 * when nobody did them for this long: the keeper does them at each wake-up, parked too (updater.c). */
#define CHORES_MAX_AGE_NS NS_PER_SEC

/* 0: not initialised, 1: initialising, 2: ready. A field of the global clock, not a variable of its own: the
 * first call writes the clock's page anyway, while a variable in .bss would cost that call two page faults of
 * its own (a read of the zero page, then the write: ~1-2 us each on the VM of docs/PERFORMANCE.md). */
#define g_state (fc__global_clock()->init_state)
static FC_TLS int t_initialising; /* this thread runs global_init (a signal handler must not wait for it) */

/* The clock core's variables (src/bounded.c reads the bound's), each a whole name (the test that the installed library has no
 * FASTCLOCK_TEST_ seam, SetUid.the_installed_library_has_no_test_seams, looks for these strings). */
enum { E_SOURCE, E_PERIOD, E_UPDATER, E_UPDATER_RT,
#ifdef FASTCLOCK_TEST_SEAMS
	E_TEST_CLOCKSOURCE, E_TEST_INIT_DELAY,
#endif
	E_COUNT };
static const char *const env_names[E_COUNT] = {
	"FASTCLOCK_SOURCE", "FASTCLOCK_PERIOD_US", "FASTCLOCK_UPDATER", "FASTCLOCK_UPDATER_RT",
#ifdef FASTCLOCK_TEST_SEAMS
	"FASTCLOCK_TEST_CLOCKSOURCE_FILE", "FASTCLOCK_TEST_INIT_DELAY_US",
#endif
};

FC__START_TEXT static void global_init(void)
{
	struct fc_clock *c = fc__global_clock();
	struct fc_config cfg;
	const char *v[E_COUNT];

	fc__env_scan(env_names, E_COUNT, v);
	c->config_error[0] = 0;
	fc__config_parse(v[E_SOURCE], v[E_PERIOD], &cfg, c->config_error,
			sizeof(c->config_error));
	fc__config_parse_updater(v[E_UPDATER], &c->updater_auto, c->config_error, sizeof(c->config_error));
	fc__config_parse_updater_rt(v[E_UPDATER_RT], &c->updater_rt, c->config_error,
				    sizeof(c->config_error));
#ifdef FASTCLOCK_TEST_SEAMS
	/* Test seams, compiled into the tests' library only (fastclock_testing): tests point this at a file of
	 * their own to play a machine whose kernel uses another clocksource (never change the host's)... */
	fc__trust_set_path(v[E_TEST_CLOCKSOURCE], 0); /* a test's file: on any filesystem */
	{
		/* ...and hold the initialisation open so a test can fork while another thread is inside it. */
		const char *d = v[E_TEST_INIT_DELAY];
		if (d && *d) {
			long us = atol(d);
			struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
			if (us > 0 && us <= 10000000)
				nanosleep(&ts, NULL); /* async-signal-safe */
		}
	}
#endif
	c->bound_lazy = 1; /* the bound is installed when asked for (src/bounded.c): its hands say so till then */
	c->forced = cfg.backend != 0;
	c->trust_every = TRUST_EVERY;
	c->chores_max_age_ns = CHORES_MAX_AGE_NS;
	/* atomic: a first coarse read on another thread loads it before it waits for this initialisation (read.c) */
	__atomic_store_n(&c->period_auto, cfg.period_auto, __ATOMIC_RELAXED);
	fc__start_clock(c, &fc__pub, &fc__real_source, cfg.period_ns, cfg.backend);
}

/* In the child after fork(): only the forking thread exists. A writer lock held by another thread would
 * never be released; an initialisation another thread was running will never finish: start it again (the
 * child's first read initialises from scratch). Re-anchoring is lazy, so nothing else needs fixing. A lock this
 * thread holds (a signal handler's fork() inside the writer) stays, with the writer mark: the interrupted writer
 * goes on in the child and unlocks. Freeing it and zeroing the mark let the handler's reads in the child run a
 * second writer inside the first, and the first's unlock then left the mark at -1: the child never re-anchored
 * again (0 re-anchors in 300 ms at a 20 us period). */
static void atfork_child(void)
{
	if (!fc__lock_mine)
		__atomic_store_n(&fc__global_clock()->lock, 0, __ATOMIC_RELAXED);
	{
		struct fc_clock *c = fc__global_clock();
		const struct fc_bound_ops *ops = __atomic_load_n(&c->bound, __ATOMIC_ACQUIRE);
		if (ops)
			ops->forked(c); /* the chronyd socket is the parent's: replies would go there */
	}
	if (__atomic_load_n(&g_state, __ATOMIC_RELAXED) == 1)
		__atomic_store_n(&g_state, 0, __ATOMIC_RELAXED);
}

/* When the library is loaded, before main and before any thread of the program exists:
 * - the fork handler is registered, so a fork at any moment, during another thread's initialisation included,
 *   runs it;
 * - the library's read-only data is read once, as running this function reads its text: the first call's
 *   first load from it (the variables' names) was the page fault that made most of the library's own share of
 *   a first call (1 minor fault, ~1.5 us of 2.4 us in a fresh process on the VM of docs/PERFORMANCE.md, "Start-up:
 *   every function's first call"); the kernel maps the pages around a faulting one with it (fault-around), so
 *   one read maps them all. Nothing is parsed here: the environment is read at the first call, after main
 *   may have set it. */
static sigset_t g_load_mask; /* the loading thread's signal mask, before main: no handler's */

/* Outside a signal handler, as far as the signal mask tells: a handler runs with its own signal blocked (unless
 * SA_NODEFER), so a signal blocked now but not at load, that has a handler, is taken for the handler's we may be
 * in. One blocked with no handler (a server's SIGINT/SIGTERM for sigwait or signalfd) says nothing. What may
 * start a thread asks this first: pthread_create is not async-signal-safe (it allocates under locks a handler may
 * have interrupted). One system call, and one more for each signal blocked since the load. */
int fc__signals_as_at_load(void)
{
	sigset_t now;
	if (pthread_sigmask(SIG_BLOCK, NULL, &now) != 0)
		return 0;
	for (int s = 1; s < NSIG; s++) {
		struct sigaction sa;
		if (sigismember(&now, s) != 1 || sigismember(&g_load_mask, s) == 1)
			continue;
		if (sigaction(s, NULL, &sa) != 0 ||
		    ((sa.sa_flags & SA_SIGINFO) ? sa.sa_sigaction != NULL
						: sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN))
			return 0;
	}
	return 1;
}

__attribute__((constructor)) static void on_load(void)
{
	pthread_sigmask(SIG_BLOCK, NULL, &g_load_mask);
	pthread_atfork(NULL, NULL, atfork_child);
	(void)*(const volatile char *)env_names[0];
}

FC__START_TEXT int fc__ensure_init(void)
{
	int expect = 0;
	if (FC__LIKELY(__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) == 2))
		return 1;
	if (t_initialising) /* a signal handler interrupted this thread's own initialisation */
		return 0;
	if (__atomic_compare_exchange_n(&g_state, &expect, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
		t_initialising = 1;
		global_init();
		t_initialising = 0;
		__atomic_store_n(&g_state, 2, __ATOMIC_RELEASE); /* pairs with the acquire loads above */
		return 1;
	}
	/* Another thread initialises (~1 us). State 0 again: we are a fork child of a process whose other thread
	 * was initialising (atfork_child reset it): initialise ourselves. */
	while ((expect = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE)) != 2) {
		if (expect == 0)
			return fc__ensure_init();
		sched_yield();
	}
	return 1;
}

/* src/bounded.c's, where the program links it (weak: a static program that makes no bounded read does not) */
extern void fc__bound_install(struct fc_clock *c, int poll) __attribute__((weak));

void fc__init_all(int bound)
{
	if (fc__ensure_init()) {
		/* the bound first, so the first counter hand stamps it from the sources (opened: documented with the
		 * first call's costs, include/fastclock.h) */
		if (bound && fc__bound_install)
			fc__bound_install(fc__global_clock(), 0);
		fc__start_finish(fc__global_clock()); /* the counter checked and calibrated (~1 ms) */
		if (bound && fc__bound_install)
			fc__bound_install(fc__global_clock(), 1); /* a start-up already finished: the poll, for the next hands */
	}
}

int fc_init(void)
{
	fc__init_all(1);
	return 0;
}
