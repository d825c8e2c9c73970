/*
 * fuzz_track: the tracker and the clock's slow path over a simulated machine driven by the fuzz input.
 * Scenario: one counter (any width from 32 to 64 bits, wrapping; 100 MHz..4.4 GHz) and one kernel clock.
 * Between events time passes with the kernel running at the counter's rate within the kernel's NTP slew
 * (+-500 ppm, changed at will); the events are what the tracker must survive: a suspend (the kernel jumps,
 * the counter stops), a counter jump alone (migration, a counter reset), CLOCK_REALTIME steps either way,
 * the kernel's clock failing (demotion to the kernel backend), re-anchors forced at arbitrary points,
 * generations starting anywhere (wrap), and time passing inside the sampling code. The clock starts as the
 * library's does (start.c: a kernel hand, then the slow path's steps measure the rate over 1 ms, checked against
 * the counter's nominal rate), so every event can also strike during the start-up.
 * Envelope (the tracker's assumptions; see the findings in docs/JOURNAL.md): a discontinuity (suspend
 * or counter jump) comes at least DISC_SPACING re-anchors after the previous one; one that would come
 * sooner is turned into time passing. The counter never goes back (a jump is less than half its range).
 * Checked after every step: the monotonic value a reader gets (inline fc__hand_read_ns() over the current
 * hand, falling back to fc__read_slow_ns() as fc_mono_ns() does) never decreases; no crash, no sanitizer
 * report (built with -fsanitize=fuzzer,address,undefined); no reader spins forever (a read that makes a
 * million counter reads aborts). FUZZ_TRACE=1 prints every step of a reproducer.
 * Input: 12 header bytes (counter Hz, period, first generation, counter width, start), then steps of
 * 1 opcode byte and up to 8 argument bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "hands.h"
#include "read.h"
#include "sample.h"
#include "start.h"
#include "state.h"
#include "track.h"
#include "windup.h"

struct sim {
	uint64_t counter; /* unmasked */
	uint64_t mask;
	int64_t mono;
	int64_t real_off;
	unsigned step_ns;   /* true ns that pass at each counter or kernel read (the sampling code's own time) */
	int fail_kernel;    /* kernel reads fail while > 0 */
	unsigned long reads;
	uint64_t hz;
	int64_t slew_ppm;          /* kernel ns per true ns: 1 + slew_ppm / 1e6 */
	uint64_t tick_rem;         /* dt_ns * hz not yet a whole tick (units of 1e-9 tick) */
	int64_t slew_rem;          /* slew not yet a whole ns (units of 1e-6 ns) */
	uint64_t disc_at_reanchor; /* re-anchor count at the last discontinuity */
	int had_disc;
};

/* true time passes: the counter at its rate, the kernel within its NTP slew */
static void sim_pass(struct sim *s, uint64_t dt_ns)
{
	/* at most a quarter of the counter's range between two events: a counter that runs past half its range
	 * unobserved cannot be told from one that went back (readers must see it at least that often) */
	uint64_t max_dt = (uint64_t)((unsigned __int128)(s->mask >> 2) * 1000000000u / s->hz);
	if (dt_ns > max_dt)
		dt_ns = max_dt;
	/* Exact rates: the remainders carry over, so a sampling step of a few ns runs the counter and the kernel
	 * at the same rates as a pass of milliseconds. (Truncating each step made the counter run up to 1/8
	 * slower, relative to the kernel, inside sampling than between events: a 12 % rate change outside the
	 * envelope, which the tracker rightly cannot follow without a discontinuity; findings F2 came from it.) */
	unsigned __int128 ticks = (unsigned __int128)dt_ns * s->hz + s->tick_rem;
	s->counter += (uint64_t)(ticks / 1000000000u);
	s->tick_rem = (uint64_t)(ticks % 1000000000u);
	if (s->mono < INT64_MAX / 2) {
		__int128 slew = (__int128)dt_ns * s->slew_ppm + s->slew_rem;
		s->mono += (int64_t)dt_ns + (int64_t)(slew / 1000000);
		s->slew_rem = (int64_t)(slew % 1000000);
	}
}

static struct sim g_sim;

static uint64_t sim_counter(void *ctx)
{
	struct sim *s = ctx;
	if (++s->reads > 1000000) {
		fprintf(stderr, "fuzz_track: a read made a million counter reads (livelock)\n");
		abort();
	}
	sim_pass(s, s->step_ns);
	return s->counter & s->mask;
}

static uint64_t sim_ticks(const struct fc_hand *th) { return fc__hand_ticks_masked(th, sim_counter(&g_sim)); }

static int sim_kernel(void *ctx, clockid_t id, int64_t *ns)
{
	struct sim *s = ctx;
	if (s->fail_kernel > 0) {
		s->fail_kernel--;
		return -1;
	}
	sim_pass(s, s->step_ns);
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

/* Re-anchors between two discontinuities: the tracker's rate history (FC_TRACK_HIST samples) refills. With
 * discontinuities in consecutive periods the tracker can adopt a wrong rate and then let time go back at the
 * next one (finding F3 in docs/JOURNAL.md); FUZZ_DISC_SPACING=1 shows it. */
#define DISC_SPACING_DEFAULT (FC_TRACK_HIST + 2)
static uint64_t DISC_SPACING = DISC_SPACING_DEFAULT;

static struct fc_clock g_c;
static int g_trace = -1; /* FUZZ_TRACE=1: print every step (to study a reproducer) */
static struct fc_pub g_pub;

static int64_t read_mono(void)
{
	int64_t m;
	g_sim.reads = 0;
	if (fc__hand_read_ns(&g_pub, sim_ticks, FC__MONO, &m))
		return m;
	return fc__read_slow_ns(&g_c, FC__MONO);
}

/* The counter's nominal rate, as CPUID would give it (the start-up checks its measurement against it). */
static uint64_t sim_hz_hint(void *ctx) { return ((struct sim *)ctx)->hz; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data;
	size_t n = size;
	struct fc_source src;
	uint64_t hz;
	int64_t period_ns, last = INT64_MIN, v;
	uint32_t gen_start;
	unsigned width, step = 0;

	if (g_trace < 0) {
		g_trace = getenv("FUZZ_TRACE") != NULL;
		if (getenv("FUZZ_DISC_SPACING"))
			DISC_SPACING = strtoull(getenv("FUZZ_DISC_SPACING"), NULL, 10);
	}
	memset(&g_sim, 0, sizeof(g_sim));
	memset(&g_c, 0, sizeof(g_c));
	memset(&g_pub, 0, sizeof(g_pub));
	/* 100 MHz .. ~4.4 GHz: every real counter; with the per-read steps below a sample takes far less than a
	 * period, as on real machines (a sample is ~0.5 us, the shortest period 1 us at >= 100 ticks) */
	hz = 100000000ull + take(&p, &n, 4);
	period_ns = FC_MIN_PERIOD_NS * (1 + (int64_t)(take(&p, &n, 2) % 1000)); /* 1 us .. 1 ms */
	gen_start = (uint32_t)take(&p, &n, 4);                                 /* generations wrap anywhere */
	width = 32 + (unsigned)(take(&p, &n, 1) % 33);                          /* 32..64-bit counter */
	g_sim.mask = width == 64 ? ~(uint64_t)0 : (((uint64_t)1 << width) - 1);
	g_sim.counter = take(&p, &n, 1) << (width - 8); /* start anywhere in the counter's range */
	g_sim.mono = 1000000000;
	g_sim.hz = hz;
	g_sim.step_ns = 10;

	src.counter = sim_counter;
	src.kernel = sim_kernel;
	src.ntp = NULL;
	src.ctx = &g_sim;
	src.mask = g_sim.mask;
	src.hz_hint = sim_hz_hint;
	fc__hands_init(&g_c.hands, &g_pub, gen_start);
	g_c.hands_static = 1; /* fc__start_clock keeps these hands */
	fc__start_clock(&g_c, &g_pub, &src, period_ns, 0);

	while (n > 0 && step++ < 4096) {
		unsigned op = (unsigned)take(&p, &n, 1);
		if (g_trace)
			fprintf(stderr, "op byte %u, counter %llu mono %lld\n", op, (unsigned long long)g_sim.counter, (long long)g_sim.mono);
		int disc_ok = !g_sim.had_disc || g_c.reanchors >= g_sim.disc_at_reanchor + DISC_SPACING;
		switch (op % 10) {
		case 0: /* time passes, up to 16 ms */
			sim_pass(&g_sim, take(&p, &n, 3));
			break;
		case 1: /* suspend/resume: the counter stops, the kernel's monotonic clock jumps (up to ~70 min) */
			if (!disc_ok) {
				sim_pass(&g_sim, take(&p, &n, 4) >> 16);
				break;
			}
			g_sim.mono += (int64_t)(take(&p, &n, 4) << (op >> 6));
			g_sim.had_disc = 1;
			g_sim.disc_at_reanchor = g_c.reanchors;
			break;
		case 2: /* the wall clock is stepped (settimeofday, leap second): either way */
			g_sim.real_off += (int64_t)(int32_t)take(&p, &n, 4) * 1000;
			break;
		case 3: /* a forced re-anchor (the updater thread, or a reader that found its hand stale) */
			g_sim.reads = 0;
			fc__windup(&g_c, NULL);
			break;
		case 4: /* the kernel's clock fails for the next few reads: the counter is given up */
			g_sim.fail_kernel = (int)(op >> 4) % 8;
			break;
		case 5: /* time spent inside sampling: 0..45 ns per counter or kernel read */
			g_sim.step_ns = (op >> 4) * 3;
			break;
		case 6: /* the other readers */
			g_sim.reads = 0;
			(void)fc__read_slow_ns(&g_c, FC__REAL);
			g_sim.reads = 0;
			(void)fc__read_slow_ns(&g_c, FC__MONO | FC__RELAXED);
			break;
		case 7: /* the counter jumps forward alone (VM migration): any distance up to half its range */
			if (!disc_ok) {
				sim_pass(&g_sim, take(&p, &n, 4) >> 16);
				break;
			}
			/* forward, by less than half the counter's range: a larger jump is a counter that went back,
			 * which no reader of a counter can tell from time standing still (outside the contract) */
			g_sim.counter += (take(&p, &n, 4) << (op >> 5)) & (g_sim.mask >> 1);
			g_sim.had_disc = 1;
			g_sim.disc_at_reanchor = g_c.reanchors;
			break;
		case 8: /* the kernel's NTP slew changes: -500..+500 ppm */
			g_sim.slew_ppm = (int64_t)(take(&p, &n, 2) % 1001) - 500;
			break;
		default: /* just read */
			break;
		}
		v = read_mono();
		if (g_trace) {
			const struct fc_hand *h = g_pub.current;
			fprintf(stderr,
				"step %u op %u: counter %llu kernel %lld -> %lld | hand base %llu mono %lld mult %llu "
				"stale %llu valid %llu err %lld+%llu/tick%s | reanchors %llu discontinuities %llu\n",
				step, op % 10, (unsigned long long)(g_sim.counter & g_sim.mask), (long long)g_sim.mono,
				(long long)v, (unsigned long long)h->base_ticks, (long long)h->mono_ns,
				(unsigned long long)h->mult, (unsigned long long)h->stale_ticks,
				(unsigned long long)h->valid_ticks, (long long)h->mono_err_ns, (unsigned long long)h->err_mult,
				(h->flags & FC_HAND_KERNEL) ? " kernel" : "",
				(unsigned long long)g_c.reanchors, (unsigned long long)g_c.track.discontinuities);
		}
		if (v < last) {
			fprintf(stderr, "fuzz_track: monotonic time went back by %lld ns at step %u (op %u)\n",
				(long long)(last - v), step, op % 10);
			abort();
		}
		last = v;
	}
	return 0;
}
