/*
 * fastclock — lazy initialisation of the global clock (floor 3 of the clock core) and the process's own
 * fork handler.
 *
 * Owns: g_state (not initialised / initialising / ready), reading the environment once, the choice of
 * backend at start-up (trust.c's verdict, FASTCLOCK_SOURCE), the first hand.
 * May call: state.c, windup.c, config.c, trust.c, counter/freq.c, hands.c, bound/select.c.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bound/bound.h"
#include "internal.h"

/* Re-check the kernel's clocksource every 1024 re-anchors: about once a second at the default period; a
 * sysfs read costs a few us under the writer lock, which readers never wait on. */
#define TRUST_EVERY 1024

static int g_state; /* 0: not initialised, 1: initialising, 2: ready */
static struct fc_bounder g_bounder; /* the global clock's bound source (static: no allocation) */

static void global_init(void)
{
	struct fc_clock *c = fc__global_clock();
	struct fc_config cfg;
	int want, trusted;

	c->pub = &fc__pub;
	c->src = fc__real_source;
	fc_config_parse(getenv("FASTCLOCK_SOURCE"), getenv("FASTCLOCK_PERIOD_US"), &cfg, c->config_error,
			sizeof(c->config_error));
	c->period_ns = cfg.period_ns;
	{
		struct fc_bound_config bc;
		size_t used = strlen(c->config_error);
		if (used && used + 2 < sizeof(c->config_error)) { /* after FASTCLOCK_SOURCE's error */
			memcpy(c->config_error + used, "; ", 3);
			used += 2;
		}
		fc_bound_config_parse(getenv("FASTCLOCK_BOUND_SOURCE"), getenv("FASTCLOCK_CLOCKBOUND_PATH"),
				      getenv("FASTCLOCK_CHRONY_SOCKET"), getenv("FASTCLOCK_VMCLOCK_PATH"), &bc,
				      c->config_error + used, sizeof(c->config_error) - used);
		fc_bounder_init(&g_bounder, &bc, fc__kernel_ns(c, CLOCK_MONOTONIC));
		c->bounder = &g_bounder;
	}
	want = cfg.backend;
	trusted = fc_trust_check(c->reason, sizeof(c->reason), c->clocksource, sizeof(c->clocksource));
	c->forced = want != 0;
	c->trust_every = TRUST_EVERY;
	if (!FC_HAVE_COUNTER) {
		snprintf(c->reason, sizeof(c->reason), "no user-readable counter on this architecture");
		want = FC_BACKEND_KERNEL;
	} else if (want == FC_BACKEND_COUNTER && !trusted) {
		char why[sizeof(c->reason)];
		static const char pre[] = "forced by FASTCLOCK_SOURCE=counter although ";
		memcpy(why, pre, sizeof(pre));
		fc__copy_str(why + sizeof(pre) - 1, sizeof(why) - sizeof(pre) + 1, c->reason);
		memcpy(c->reason, why, sizeof(why));
	} else if (want == FC_BACKEND_KERNEL) {
		snprintf(c->reason, sizeof(c->reason), "forced by FASTCLOCK_SOURCE=kernel");
	} else if (want == 0) {
		want = trusted ? FC_BACKEND_COUNTER : FC_BACKEND_KERNEL;
	}
	if (want == FC_BACKEND_COUNTER) {
		int fsrc = FC_FREQ_NONE;
		uint64_t hz = fc_counter_freq_hint(&fsrc);
		c->freq_source = fsrc;
		if (fc_clock_setup(c, &fc__pub, &fc__real_source, c->period_ns, hz, 0) != 0) {
			snprintf(c->reason, sizeof(c->reason), "the counter could not be calibrated");
			want = FC_BACKEND_KERNEL;
		}
	}
	if (want == FC_BACKEND_KERNEL) {
		struct fc_hand p = {0};
		fc_hands_init(&c->hands, &fc__pub, 0);
		p.flags = FC_HAND_KERNEL;
		p.mask = ~(uint64_t)0;
		p.floor_ns = INT64_MIN;
		fc_hands_publish(&fc__pub, &p);
		c->backend = FC_BACKEND_KERNEL;
		fc__coarse_refresh(c, fc__kernel_ns(c, CLOCK_MONOTONIC), fc__kernel_ns(c, CLOCK_REALTIME));
	}
}

static void atfork_child(void)
{
	/* Only the forking thread exists in the child: a writer lock held by another thread would never be
	 * released. Nothing else needs fixing: re-anchoring is lazy. */
	__atomic_store_n(&fc__global_clock()->lock, 0, __ATOMIC_RELAXED);
	fc__global_clock()->bounder_reopen = 1; /* the chronyd socket is the parent's: replies would go there */
	fc__in_writer = 0;
}

void fc__ensure_init(void)
{
	int expect = 0;
	if (FC__LIKELY(__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) == 2))
		return;
	if (__atomic_compare_exchange_n(&g_state, &expect, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
		global_init();
		pthread_atfork(NULL, NULL, atfork_child);
		__atomic_store_n(&g_state, 2, __ATOMIC_RELEASE);
		return;
	}
	while (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) != 2) /* another thread initialises (< 1 ms) */
		sched_yield();
}

int fc_init(void)
{
	fc__ensure_init();
	return 0;
}
