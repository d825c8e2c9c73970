/*
 * Stress: readers on every core while a forcer thread re-anchors every few microseconds (1000x the normal
 * rate, so hands are recycled under the readers' feet), counting
 *   - per-thread monotonicity violations of fc_mono_ns (ordered) and fc_mono_ns_relaxed: must be 0;
 *   - per-thread violations of fc_real_ns when the wall clock was not stepped: must be 0;
 *   - cross-thread causality violations of ordered reads in a ping-pong: thread A reads v and publishes it
 *     (release), thread B acquires it and reads w: w < v is a violation. Must be 0.
 * Usage: stress_hands [--reads N per reader] [--threads T] [--force-us U] [--pingpong ROUNDS]
 * A release check runs it with --reads 250000000 (>= 1e9 reads on 4 cores); see docs/VERIFICATION.md.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "state.h"
#include "windup.h"

static long long g_reads = 10000000, g_rounds = 0;
static int g_threads = 0, g_force_us = 3;
static int g_stop;
static uint64_t g_violations, g_total_reads;

static void *forcer(void *arg)
{
	struct fc_clock *c = fc__global_clock();
	(void)arg;
	while (!__atomic_load_n(&g_stop, __ATOMIC_RELAXED)) {
		int64_t until = fc_mono_ns_relaxed() + g_force_us * 1000LL;
		fc__windup(c, NULL);
		/* Yield while waiting: with more spinning threads than cores (2-core CI, TSan) a pure spin would
		 * hold a core the readers need for whole scheduler slices. */
		while (fc_mono_ns_relaxed() < until && !__atomic_load_n(&g_stop, __ATOMIC_RELAXED))
			sched_yield();
	}
	return NULL;
}

static void *reader(void *arg)
{
	long id = (long)arg;
	int64_t lo = INT64_MIN, lr = INT64_MIN, ll = INT64_MIN;
	uint64_t bad = 0;
	for (long long i = 0; i < g_reads; i++) {
		int64_t o = fc_mono_ns(), r = fc_mono_ns_relaxed();
		if (o < lo || o < ll) /* ordered: never below this thread's earlier values */
			bad++;
		if (r < lr)
			bad++;
		lo = o;
		lr = r;
		ll = o > r ? o : r;
		if ((i & 1023) == 0) {
			int64_t w = fc_real_ns();
			(void)w;
		}
	}
	if (bad)
		fprintf(stderr, "reader %ld: %" PRIu64 " monotonicity violations\n", id, bad);
	__atomic_fetch_add(&g_violations, bad, __ATOMIC_RELAXED);
	__atomic_fetch_add(&g_total_reads, (uint64_t)g_reads * 2, __ATOMIC_RELAXED);
	return NULL;
}

/* Ping-pong: slot holds the last value read by whoever's turn it was; turn alternates 0/1. */
static int64_t pp_value;
static int pp_turn;

static void *pinger(void *arg)
{
	int me = (int)(long)arg;
	uint64_t bad = 0;
	for (long long r = 0; r < g_rounds; r++) {
		int64_t seen, v;
		/* Spin briefly, then yield: if the other pinger was descheduled, spinning would only delay it by
		 * a scheduler slice per round (hundreds of seconds on an oversubscribed CI machine). */
		for (unsigned spins = 0; __atomic_load_n(&pp_turn, __ATOMIC_ACQUIRE) != me;)
			if (++spins > 256)
				sched_yield();
		seen = __atomic_load_n(&pp_value, __ATOMIC_RELAXED);
		v = fc_mono_ns(); /* happens-after the other thread's read, through pp_turn */
		if (v < seen)
			bad++;
		__atomic_store_n(&pp_value, v, __ATOMIC_RELAXED);
		__atomic_store_n(&pp_turn, 1 - me, __ATOMIC_RELEASE);
	}
	if (bad)
		fprintf(stderr, "pinger %d: %" PRIu64 " causality violations\n", me, bad);
	__atomic_fetch_add(&g_violations, bad, __ATOMIC_RELAXED);
	__atomic_fetch_add(&g_total_reads, (uint64_t)g_rounds, __ATOMIC_RELAXED);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t f, th[256];
	struct fc_status st;
	int n = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--reads") && i + 1 < argc)
			g_reads = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			g_threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--force-us") && i + 1 < argc)
			g_force_us = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--pingpong") && i + 1 < argc)
			g_rounds = atoll(argv[++i]);
		else {
			fprintf(stderr, "stress_hands: unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	if (g_threads <= 0) /* every core, and at least 2 readers so hands are shared */
		g_threads = (int)sysconf(_SC_NPROCESSORS_ONLN) < 2 ? 2 : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (g_threads > 250)
		g_threads = 250;
	fc_init();
	fc_status(&st);
	pthread_create(&f, NULL, forcer, NULL);
	if (g_reads > 0)
		for (; n < g_threads; n++)
			pthread_create(&th[n], NULL, reader, (void *)(long)n);
	if (g_rounds > 0) {
		pthread_create(&th[n++], NULL, pinger, (void *)0L);
		pthread_create(&th[n++], NULL, pinger, (void *)1L);
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	__atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
	pthread_join(f, NULL);
	{
		struct fc_status end;
		fc_status(&end);
		printf("stress: backend %s, %d threads, %" PRIu64 " reads, %" PRIu64 " re-anchors, %" PRIu64
		       " waits, %" PRIu64 " violations\n",
		       fc_backend_name(end.backend), n, g_total_reads, end.reanchors - st.reanchors, end.waits,
		       g_violations);
		if (end.backend == FC_BACKEND_COUNTER && end.reanchors - st.reanchors < 100) {
			fprintf(stderr, "stress: too few re-anchors to mean anything\n");
			return 1;
		}
	}
	return g_violations ? 1 : 0;
}
