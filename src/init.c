/*
 * fastclock — lazy initialisation of the global clock (floor 3 of the clock core) and the process's own
 * fork handler.
 *
 * Initialisation reads the environment once and publishes a kernel hand: it never measures, never reads
 * sysfs, never opens a perf event, so a first call costs about one kernel read (issue 14). The counter is
 * checked and calibrated by later slow paths (windup.c, "start-up").
 * Async-signal-safe, as everything reachable from a read: getenv (a read of environ), no stdio, no malloc;
 * every variable is read as secure_getenv reads it: not at all in a set-user-ID, set-group-ID or
 * capability-raising program (AT_SECURE), whose environment is its caller's (docs/THREATS.md); the test
 * seams (FASTCLOCK_TEST_*) exist only in the library the tests link (FASTCLOCK_TEST_SEAMS, CMakeLists.txt);
 * the fork handler is registered by a constructor, before any thread can be initialising.
 *
 * Owns: the clock's init_state (g_state: not initialised / initialising / ready), reading the environment,
 * the fork handler.
 * May call: start.c, state.c, config.c, trust.c (test seams). The bound source (src/bound) is only named here:
 * the writer opens it on first use (windup.c), so the first call stays one kernel read.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <time.h>

#include "config.h"
#include "init.h"
#include "start.h"
#include "state.h"
#include "trust.h"
#include "bound/select.h"

/* Re-check the kernel's clocksource every 1024 re-anchors: about once a second at the default period; a
 * sysfs read costs a few us under the writer lock, which readers never wait on. */
#define TRUST_EVERY 1024

/* 0: not initialised, 1: initialising, 2: ready. A field of the global clock, not a variable of its own: the
 * first call writes the clock's page anyway, while a variable in .bss would cost that call two page faults of
 * its own (a read of the zero page, then the write: ~1-2 us each on the VM of docs/PERFORMANCE.md). */
#define g_state (fc__global_clock()->init_state)
static struct fc_bounder g_bounder; /* the global clock's bound source (static: no allocation) */
static FC_TLS int t_initialising; /* this thread runs global_init (a signal handler must not wait for it) */

/* secure_getenv's rule (glibc's and musl's AT_SECURE): a program the kernel started with raised privileges
 * (set-user-ID, set-group-ID, file capabilities) sees no FASTCLOCK_* variable, so its caller cannot point it at
 * a file of the caller's, stall it, or make it read a file the caller cannot. getauxval reads the auxiliary
 * vector libc keeps: async-signal-safe, as getenv. */
extern char **environ;
/* noinline: each variable's name stays one string in the library, as getenv's argument was. Inlined, clang
 * unrolls the scan into byte compares and the names vanish from the binary, and the test that the installed
 * library has no FASTCLOCK_TEST_ seam (SetUid.the_installed_library_has_no_test_seams) could no longer see them. */
__attribute__((noinline)) static const char *env(const char *name)
{
	/* getenv's scan of environ, done here: getenv and strncmp may lie on libc text pages the process has not
	 * touched yet, a page fault each (4-8 us of a 12 us first call on the VM of docs/PERFORMANCE.md). */
	if (getauxval(AT_SECURE))
		return NULL;
	for (char **e = environ; e && *e; e++) {
		const char *p = *e, *n = name;
		while (*n && *p == *n)
			p++, n++;
		if (!*n && *p == '=')
			return p + 1;
	}
	return NULL;
}

static void global_init(void)
{
	struct fc_clock *c = fc__global_clock();
	struct fc_config cfg;

	c->config_error[0] = 0;
	fc__config_parse(env("FASTCLOCK_SOURCE"), env("FASTCLOCK_PERIOD_US"), &cfg, c->config_error,
			sizeof(c->config_error));
	fc__config_parse_updater(env("FASTCLOCK_UPDATER"), &c->updater_auto, c->config_error, sizeof(c->config_error));
	fc__config_parse_updater_rt(env("FASTCLOCK_UPDATER_RT"), &c->updater_rt, c->config_error,
				    sizeof(c->config_error));
#ifdef FASTCLOCK_TEST_SEAMS
	/* Test seams, compiled into the tests' library only (fastclock_testing): tests point this at a file of
	 * their own to play a machine whose kernel uses another clocksource (never change the host's)... */
	fc__trust_set_path(env("FASTCLOCK_TEST_CLOCKSOURCE_FILE"));
	{
		/* ...and hold the initialisation open so a test can fork while another thread is inside it. */
		const char *d = env("FASTCLOCK_TEST_INIT_DELAY_US");
		if (d && *d) {
			long us = atol(d);
			struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
			if (us > 0 && us <= 10000000)
				nanosleep(&ts, NULL); /* async-signal-safe */
		}
	}
#endif
	/* The bound source's settings, parsed and opened by the writer on first use (fc__clock_bound_fields_locked). */
	c->bound_env.source = env("FASTCLOCK_BOUND_SOURCE");
	c->bound_env.clockbound_path = env("FASTCLOCK_CLOCKBOUND_PATH");
	c->bound_env.chrony_socket = env("FASTCLOCK_CHRONY_SOCKET");
	c->bound_env.vmclock_path = env("FASTCLOCK_VMCLOCK_PATH");
	c->bounder = &g_bounder;
	c->bounder_reopen = FC_REOPEN_FIRST;
	c->forced = cfg.backend != 0;
	c->trust_every = TRUST_EVERY;
	fc__clock_start(c, &fc__pub, &fc__real_source, cfg.period_ns, cfg.backend);
}

/* In the child after fork(): only the forking thread exists. A writer lock held by another thread would
 * never be released; an initialisation another thread was running will never finish: start it again (the
 * child's first read initialises from scratch). Re-anchoring is lazy, so nothing else needs fixing. */
static void atfork_child(void)
{
	__atomic_store_n(&fc__global_clock()->lock, 0, __ATOMIC_RELAXED);
	fc__in_writer = 0;
	fc__global_clock()->bounder_reopen = FC_REOPEN_FIRST; /* the chronyd socket is the parent's: replies would go there */
	if (__atomic_load_n(&g_state, __ATOMIC_RELAXED) == 1)
		__atomic_store_n(&g_state, 0, __ATOMIC_RELAXED);
}

/* Registered when the library is loaded, before main and before any thread of the program exists: a fork
 * at any moment, during another thread's initialisation included, runs the handler (issue 15). */
__attribute__((constructor)) static void register_fork_handler(void) { pthread_atfork(NULL, NULL, atfork_child); }

int fc__ensure_init(void)
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

int fc_init(void)
{
	if (fc__ensure_init())
		fc__clock_start_finish(fc__global_clock()); /* the counter checked and calibrated (~1 ms) */
	return 0;
}
