/*
 * fuzz_track: the tracker and the clock's slow path over a simulated machine driven by the fuzz input.
 * Scenario: one counter (any width from 24 to 64 bits, wrapping) and one kernel clock whose relation is
 * whatever the input says: counter and CLOCK_MONOTONIC advance by arbitrary independent amounts (rate
 * changes, suspend, counter jumps, a frozen counter or kernel), CLOCK_REALTIME steps either way, the
 * kernel's clock fails (demotion to the kernel backend), re-anchors are forced at arbitrary points.
 * Checked after every step: the monotonic value a reader gets (inline fc__hand_read() over the current
 * hand, falling back to fc_clock_slow() as fc_mono_ns() does) never decreases; no crash, no sanitizer
 * report (built with -fsanitize=fuzzer,address,undefined); no reader spins forever (a read that makes a
 * million counter reads aborts).
 * Input: 12 header bytes (counter Hz, period, first generation, counter width), then steps of 1 opcode byte
 * and up to 8 argument bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct sim {
	uint64_t counter; /* unmasked */
	uint64_t mask;
	int64_t mono;
	int64_t real_off;
	unsigned tick_step; /* counter ticks per counter read (time passing inside the sampling code) */
	unsigned ns_step;   /* kernel ns per kernel read */
	int fail_kernel;    /* kernel reads fail while > 0 */
	unsigned long reads;
};

static struct sim g_sim;

static uint64_t sim_counter(void *ctx)
{
	struct sim *s = ctx;
	if (++s->reads > 1000000) {
		fprintf(stderr, "fuzz_track: a read made a million counter reads (livelock)\n");
		abort();
	}
	s->counter += s->tick_step;
	return s->counter & s->mask;
}

static uint64_t sim_counter_noctx(void) { return sim_counter(&g_sim); }

static int sim_kernel(void *ctx, clockid_t id, int64_t *ns)
{
	struct sim *s = ctx;
	if (s->fail_kernel > 0) {
		s->fail_kernel--;
		return -1;
	}
	if (s->mono < INT64_MAX / 2) /* about 146 years of uptime */
		s->mono += s->ns_step;
	*ns = id == CLOCK_REALTIME ? s->mono + s->real_off : s->mono;
	return 0;
}

static uint64_t take(const uint8_t **p, size_t *n, int bytes)
{
	uint64_t v = 0;
	for (int i = 0; i < bytes; i++) {
		v = (v << 8) | (*n ? **p : 0);
		if (*n) {
			(*p)++;
			(*n)--;
		}
	}
	return v;
}

static struct fc_clock g_c;
static struct fc_pub g_pub;

static int64_t read_mono(void)
{
	int64_t m;
	g_sim.reads = 0;
	if (fc__hand_read(&g_pub, sim_counter_noctx, &m, NULL, NULL))
		return m;
	return fc_clock_slow(&g_c, FC__MONO);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data;
	size_t n = size;
	struct fc_source src;
	uint64_t hz;
	int64_t period_ns, last = INT64_MIN, v;
	uint32_t gen_start;
	unsigned width, step = 0;

	memset(&g_sim, 0, sizeof(g_sim));
	memset(&g_c, 0, sizeof(g_c));
	memset(&g_pub, 0, sizeof(g_pub));
	/* 100 MHz .. ~4.4 GHz: every real counter; with the per-read steps below a sample takes far less than a
	 * period, as on real machines (a sample is ~0.5 us, the shortest period 1 us at >= 100 ticks) */
	hz = 100000000ull + take(&p, &n, 4);
	period_ns = FC_MIN_PERIOD_NS * (1 + (int64_t)(take(&p, &n, 2) % 1000)); /* 1 us .. 1 ms */
	gen_start = (uint32_t)take(&p, &n, 4);                                 /* generations wrap anywhere */
	width = 24 + (unsigned)(take(&p, &n, 1) % 41);                          /* 24..64-bit counter */
	g_sim.mask = width == 64 ? ~(uint64_t)0 : (((uint64_t)1 << width) - 1);
	g_sim.counter = take(&p, &n, 1) << (width - 8); /* start anywhere in the counter's range */
	g_sim.mono = 1000000000;
	g_sim.tick_step = 1;
	g_sim.ns_step = 1;

	src.counter = sim_counter;
	src.kernel = sim_kernel;
	src.ntp = NULL;
	src.ctx = &g_sim;
	src.mask = g_sim.mask;
	if (fc_clock_setup(&g_c, &g_pub, &src, period_ns, hz, gen_start) != 0)
		return 0;

	while (n > 0 && step++ < 4096) {
		unsigned op = (unsigned)take(&p, &n, 1);
		switch (op % 8) {
		case 0: /* time passes: counter and kernel advance by independent amounts (any rate) */
			g_sim.counter += take(&p, &n, 3);
			g_sim.mono += (int64_t)take(&p, &n, 3);
			break;
		case 1: /* a long pause: suspend/resume, a stopped VM, a migration (the counter may jump alone) */
			g_sim.counter += take(&p, &n, 4) << (op >> 4);
			g_sim.mono += (int64_t)(take(&p, &n, 4) << (op >> 5));
			break;
		case 2: /* the wall clock is stepped (settimeofday, leap second): either way */
			g_sim.real_off += (int64_t)(int32_t)take(&p, &n, 4) * 1000;
			break;
		case 3: /* a forced re-anchor (the updater thread, or a reader that found its hand stale) */
			g_sim.reads = 0;
			fc_clock_windup(&g_c, NULL);
			break;
		case 4: /* the kernel's clock fails for the next few reads: the counter is given up */
			g_sim.fail_kernel = (int)(op >> 3) % 8;
			break;
		case 5: /* time passes inside sampling: 0..3 ticks per counter read, 0..7 ns per kernel read */
			g_sim.tick_step = (op >> 3) & 3;
			g_sim.ns_step = (op >> 5) & 7;
			break;
		case 6: /* the other readers */
			g_sim.reads = 0;
			(void)fc_clock_slow(&g_c, FC__REAL);
			g_sim.reads = 0;
			(void)fc_clock_slow(&g_c, FC__MONO | FC__RELAXED);
			break;
		default: /* just read */
			break;
		}
		v = read_mono();
		if (v < last) {
			fprintf(stderr, "fuzz_track: monotonic time went back by %lld ns at step %u (op %u)\n",
				(long long)(last - v), step, op % 8);
			abort();
		}
		last = v;
	}
	return 0;
}
