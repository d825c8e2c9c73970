/*
 * fastclock bench — cost, resolution, staleness, consecutive deltas and thread scaling of every clock.
 *
 * Method (the same as bench/, so the figures agree):
 *   cost        a batch of n calls in a tight loop, results summed into a volatile sink, timed with
 *               clock_gettime(CLOCK_MONOTONIC) around the batch; n is calibrated so one batch lasts
 *               >= BATCH_NS; repeated for the clock's share of the budget; the median per-call cost is
 *               reported with its spread (quartiles, min, max).
 *   deltas      runs of CHUNK consecutive reads stored raw; differences within a run (never across two
 *               runs) give the smallest non-zero delta (observed resolution), the share of zero deltas
 *               (staleness), the percentiles and the backward steps.
 *   threads     1..N threads (pinned round robin) call the clock's batch loop for a time slice; calls per
 *               second and efficiency = rate(T) / (T * rate(1)).
 *   agreement   the main thread samples fc_mono_ns and fc_real_ns bracketed by the kernel's clocks every
 *               AGREE_EVERY_NS while the thread slices run (and between phases): a time series of
 *               fastclock - kernel midpoint with the bracket's half-width.
 * The budget (--duration, default DEFAULT_DURATION_S) is split evenly between the selected clocks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fastclock.h>

#include "cli.h"
#include "clocks.h"

#define DEFAULT_DURATION_S 20.0 /* 31 clocks in ~21 s: leaves margin under the 30 s goal on 2 cores */
#define BATCH_NS 1000000        /* one cost batch: 1 ms (bench/fc_bench --quick), clock reads around it < 0.01 % */
#define MIN_REPS 7              /* a median of fewer is not worth printing */
#define MAX_REPS 2001
#define CHUNK 4096              /* consecutive reads per delta run */
#define MAX_DELTA_SAMPLES 262144 /* 256 Ki deltas: percentiles to 1e-3 resolution, 2 MiB of buffer */
#define AGREE_EVERY_NS 5000000  /* 5 ms: ~200 points per second of thread slices */
#define MAX_THREADS 256
#define HIST_DECADE_STEPS 5     /* histogram bins per decade */
#define HIST_LO_EXP (-1)        /* 0.1 ns */
#define HIST_HI_EXP 10          /* 10 s */
#define HIST_NBINS ((HIST_HI_EXP - HIST_LO_EXP) * HIST_DECADE_STEPS)

/* Shares of a clock's budget. */
#define SHARE_COST 0.40
#define SHARE_DELTAS 0.15
#define SHARE_THREADS 0.45

struct result {
	const struct fcb_clock *c;
	double ns_per_unit;
	/* cost */
	double cost_med, cost_p25, cost_p75, cost_min, cost_max;
	long reps, batch;
	/* resolution */
	double getres_ns; /* NAN: no clock id */
	double observed_ns;
	/* deltas */
	long samples, zero, backward;
	double d_min, d_p25, d_p50, d_p75, d_p99, d_max;
	long hist[HIST_NBINS];
	/* threads */
	int nthreads;
	double rate[64];
	double eff[64];
	double share[64]; /* the threads' mean CPU time / wall time: < 1 when something else took the CPU */
};

static struct {
	double duration_s;
	int threads[64];
	int nthreads;
	int json, csv, updater, list;
	const char *clocks;
	int progress;
	int64_t t0;
	struct agree_series agree;
	double ns_per_tick;
} B;

static const char bench_help[] =
	"usage: fastclock bench [--clocks LIST] [--threads N|LIST] [--duration S] [--json|--csv] [--updater]\n"
	"                       [--list]\n"
	"\n"
	"Measure every clock: cost per call (median of repeated batches, with spread), resolution (clock_getres\n"
	"and the smallest non-zero consecutive delta), staleness (share of zero deltas), delta percentiles\n"
	"(min, 25, 50, 75, 99, max), backward steps, and throughput with 1..N threads with scaling efficiency.\n"
	"\n"
	"  --clocks LIST    comma-separated names or globs (case-insensitive), e.g. 'fc_*,clock_gettime.MONO*'\n"
	"                   (default: all; --list shows the names)\n"
	"  --threads N      thread counts 1..N (default: the CPUs this process may use); or a list '1,2,4'\n"
	"  --duration S     total time budget in seconds, split evenly between the clocks (default 20)\n"
	"  --json           one JSON document on stdout (schema: docs/bench.schema.json)\n"
	"  --csv            long format on stdout: header 'clock,stat,value', one row per statistic\n"
	"  --updater        run fc_updater_start() during the run (keeps the coarse clocks fresh)\n"
	"  --list           list the clock names and what each calls, then exit\n"
	"A progress line goes to stderr when stderr is a terminal.\n";

/* ---- clock selection ---- */
static size_t all_clocks(const struct fcb_clock **out, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < fcb_n_c_clocks && n < cap; i++)
		out[n++] = &fcb_c_clocks[i];
	for (size_t i = 0; i < fcb_n_cxx_clocks && n < cap; i++)
		out[n++] = &fcb_cxx_clocks[i];
	return n;
}

/* Select clocks matching the comma-separated patterns, in table order. Returns the count or -1 (error
 * printed) when a pattern matches nothing. */
static int select_clocks(const char *spec, const struct fcb_clock **all, size_t nall, const struct fcb_clock **out)
{
	char buf[1024], *save = NULL, *tok;
	int use[128] = {0}, n = 0;
	if (!spec) {
		for (size_t i = 0; i < nall; i++)
			out[n++] = all[i];
		return n;
	}
	if (strlen(spec) >= sizeof(buf)) {
		cli_error("--clocks list too long");
		return -1;
	}
	memcpy(buf, spec, strlen(spec) + 1);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int hit = 0;
		while (*tok == ' ')
			tok++;
		if (!*tok)
			continue;
		for (size_t i = 0; i < nall; i++)
			if (fnmatch(tok, all[i]->name, FNM_CASEFOLD) == 0)
				use[i] = hit = 1;
		if (!hit) {
			cli_error("unknown clock '%s' (see 'fastclock bench --list')", tok);
			return -1;
		}
	}
	for (size_t i = 0; i < nall; i++)
		if (use[i])
			out[n++] = all[i];
	if (n == 0) {
		cli_error("--clocks '%s' selects no clock", spec);
		return -1;
	}
	return n;
}

static int parse_threads(const char *s)
{
	long v;
	if (!strchr(s, ',')) {
		if (cli_parse_long(s, &v) || v < 1 || v > MAX_THREADS)
			return -1;
		B.nthreads = 0;
		if (v <= 8) {
			for (int t = 1; t <= v; t++)
				B.threads[B.nthreads++] = t;
		} else {
			for (int t = 1; t < v; t *= 2)
				B.threads[B.nthreads++] = t;
			B.threads[B.nthreads++] = (int)v;
		}
		return 0;
	} else {
		char buf[256], *save = NULL, *tok;
		if (strlen(s) >= sizeof(buf))
			return -1;
		memcpy(buf, s, strlen(s) + 1);
		B.nthreads = 0;
		for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (cli_parse_long(tok, &v) || v < 1 || v > MAX_THREADS || B.nthreads >= 64)
				return -1;
			B.threads[B.nthreads++] = (int)v;
		}
		return B.nthreads ? 0 : -1;
	}
}

/* ---- agreement ---- */
static void agree_sample(void)
{
	int64_t k1, f, k2, r1, g, r2;
	/* A first read re-anchors a stale hand (the main thread sleeps between samples), so the bracketed read
	 * below measures a steady-state read, not the slow path's own kernel sampling. */
	fcb_sink = fc_mono_ns();
	k1 = cli_ns(CLOCK_MONOTONIC);
	f = fc_mono_ns();
	k2 = cli_ns(CLOCK_MONOTONIC);
	r1 = cli_ns(CLOCK_REALTIME);
	g = fc_real_ns();
	r2 = cli_ns(CLOCK_REALTIME);
	agree_push(&B.agree, B.t0, k1, f, k2, r1, g, r2);
}

/* ---- progress ---- */
static void progress(size_t i, size_t n, const char *name, const char *phase)
{
	if (!B.progress)
		return;
	fprintf(stderr, "\r\033[K[%zu/%zu] %s: %s", i + 1, n, name, phase);
	fflush(stderr);
}

/* ---- cost ---- */
static double time_batch(const struct fcb_clock *c, long n)
{
	int64_t t1 = cli_ns(CLOCK_MONOTONIC);
	c->batch(n);
	return (double)(cli_ns(CLOCK_MONOTONIC) - t1);
}

static long calibrate(const struct fcb_clock *c)
{
	long n = 16;
	c->batch(256); /* warm caches, page in, initialise lazily initialised clocks */
	while (n < (1L << 26)) {
		double t = time_batch(c, n);
		if (t >= BATCH_NS)
			break;
		if (t < BATCH_NS / 16.0)
			n *= 8;
		else
			n *= 2;
	}
	return n;
}

/* Cost of every selected clock, interleaved: round k times one batch of each clock, starting at a rotating
 * offset, so a burst of load from elsewhere or a CPU frequency change hits every clock alike and the
 * figures agree with bench/fc_bench, which measures the same way. Each clock's median is over its rounds. */
static void measure_costs(struct result *res, int n, double budget_s)
{
	double *v = malloc((size_t)n * MAX_REPS * sizeof(double));
	int64_t deadline;
	long reps = 0;
	if (!v)
		return;
	for (int i = 0; i < n; i++) {
		progress((size_t)i, (size_t)n, res[i].c->name, "calibrating");
		res[i].batch = calibrate(res[i].c);
	}
	deadline = cli_ns(CLOCK_MONOTONIC) + (int64_t)(budget_s * 1e9);
	while (reps < MAX_REPS && (reps < MIN_REPS || cli_ns(CLOCK_MONOTONIC) < deadline)) {
		for (int j = 0; j < n; j++) {
			int i = (int)((j + reps) % n);
			v[(size_t)i * MAX_REPS + (size_t)reps] = time_batch(res[i].c, res[i].batch) / (double)res[i].batch;
		}
		reps++;
		progress((size_t)(reps % n), (size_t)n, "all clocks", "cost rounds");
	}
	for (int i = 0; i < n; i++) {
		struct result *r = &res[i];
		double *x = v + (size_t)i * MAX_REPS;
		stat_sort(x, (size_t)reps);
		r->reps = reps;
		r->cost_med = stat_percentile_sorted(x, (size_t)reps, 50);
		r->cost_p25 = stat_percentile_sorted(x, (size_t)reps, 25);
		r->cost_p75 = stat_percentile_sorted(x, (size_t)reps, 75);
		r->cost_min = x[0];
		r->cost_max = x[reps - 1];
	}
	free(v);
}

/* ---- deltas ---- */
static void measure_deltas(struct result *r, double budget_s)
{
	const struct fcb_clock *c = r->c;
	int64_t *raw = malloc(CHUNK * sizeof(int64_t));
	double *d = malloc(MAX_DELTA_SAMPLES * sizeof(double));
	int64_t deadline = cli_ns(CLOCK_MONOTONIC) + (int64_t)(budget_s * 1e9);
	long n = 0, zero = 0, back = 0;
	double minpos = INFINITY;
	if (!raw || !d) {
		free(raw);
		free(d);
		return;
	}
	memset(r->hist, 0, sizeof(r->hist));
	do {
		long want = MAX_DELTA_SAMPLES - n < CHUNK - 1 ? MAX_DELTA_SAMPLES - n + 1 : CHUNK;
		c->sample(raw, want);
		for (long i = 1; i < want; i++) {
			double x = (double)(raw[i] - raw[i - 1]) * r->ns_per_unit;
			d[n++] = x;
			if (x == 0) {
				zero++;
			} else if (x < 0) {
				back++;
			} else {
				int b = (int)floor((log10(x) - HIST_LO_EXP) * HIST_DECADE_STEPS);
				if (x < minpos)
					minpos = x;
				if (b < 0)
					b = 0;
				if (b >= HIST_NBINS)
					b = HIST_NBINS - 1;
				r->hist[b]++;
			}
		}
	} while (n < MAX_DELTA_SAMPLES && cli_ns(CLOCK_MONOTONIC) < deadline);
	stat_sort(d, (size_t)n);
	r->samples = n;
	r->zero = zero;
	r->backward = back;
	r->observed_ns = isfinite(minpos) ? minpos : NAN;
	r->d_min = d[0];
	r->d_p25 = stat_percentile_sorted(d, (size_t)n, 25);
	r->d_p50 = stat_percentile_sorted(d, (size_t)n, 50);
	r->d_p75 = stat_percentile_sorted(d, (size_t)n, 75);
	r->d_p99 = stat_percentile_sorted(d, (size_t)n, 99);
	r->d_max = d[n - 1];
	free(raw);
	free(d);
}

/* ---- threads ---- */
struct worker {
	pthread_t th;
	const struct fcb_clock *c;
	long batch;
	int idx;
	int *go, *stop;
	double rate, share;
};

/* Each worker times its own run (wall and CPU time): the aggregate rate is the sum of the per-thread
 * rates, as bench/fc_bench computes it (threads start and stop a few us apart). */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	long long calls = 0;
	int64_t t1, c1, t2, c2;
	cli_pin_thread(w->idx);
	while (!__atomic_load_n(w->go, __ATOMIC_ACQUIRE))
		;
	t1 = cli_ns(CLOCK_MONOTONIC);
	c1 = cli_ns(CLOCK_THREAD_CPUTIME_ID);
	do {
		w->c->batch(w->batch);
		calls += w->batch;
	} while (!__atomic_load_n(w->stop, __ATOMIC_RELAXED));
	t2 = cli_ns(CLOCK_MONOTONIC);
	c2 = cli_ns(CLOCK_THREAD_CPUTIME_ID);
	w->rate = t2 > t1 ? (double)calls * 1e9 / (double)(t2 - t1) : NAN;
	w->share = t2 > t1 ? (double)(c2 - c1) / (double)(t2 - t1) : NAN;
	return NULL;
}

static void measure_threads(struct result *r, double budget_s)
{
	struct worker w[MAX_THREADS];
	/* Small batches so a stop request is seen within ~10 us. */
	long batch = r->batch / 10 > 1 ? r->batch / 10 : 1;
	double slice = budget_s / B.nthreads;
	r->nthreads = B.nthreads;
	for (int k = 0; k < B.nthreads; k++) {
		int nt = B.threads[k], go = 0, stop = 0, started = 0;
		double rate = 0, share = 0;
		int64_t t1, end;
		for (int i = 0; i < nt; i++) {
			w[i] = (struct worker){.c = r->c, .batch = batch, .idx = i, .go = &go, .stop = &stop};
			if (pthread_create(&w[i].th, NULL, worker_main, &w[i]) != 0)
				break;
			started++;
		}
		t1 = cli_ns(CLOCK_MONOTONIC);
		__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
		end = t1 + (int64_t)(slice * 1e9);
		for (;;) {
			int64_t now = cli_ns(CLOCK_MONOTONIC), left = end - now;
			struct timespec ts;
			if (left <= 0)
				break;
			if (left > AGREE_EVERY_NS)
				left = AGREE_EVERY_NS;
			ts.tv_sec = 0;
			ts.tv_nsec = (long)left;
			nanosleep(&ts, NULL);
			agree_sample();
		}
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
		for (int i = 0; i < started; i++) {
			pthread_join(w[i].th, NULL);
			rate += w[i].rate;
			share += w[i].share;
		}
		r->rate[k] = started == nt ? rate : NAN;
		r->share[k] = started ? share / started : NAN;
	}
	for (int k = 0; k < B.nthreads; k++)
		r->eff[k] = r->rate[k] / (B.threads[k] * (r->rate[0] * 1.0 / B.threads[0]));
}

/* ---- output ---- */
static void print_text(struct result *res, size_t n, double wall_s, const struct fc_status *st)
{
	printf("fastclock bench: %zu clocks, %.1f s; fastclock backend %s (%s)", n, wall_s, fc_backend_name(st->backend),
	       st->reason);
	if (st->backend == FC_BACKEND_COUNTER)
		printf(", counter %s at %.6f GHz\n", st->counter, (double)st->counter_hz / 1e9);
	else
		printf("; fc_ticks returns CLOCK_MONOTONIC ns\n");
	printf("cost: median ns/call of %s batches [p25..p75]; res: clock_getres / smallest delta; stale: zero "
	       "deltas; back: backward steps\n",
	       "repeated");
	printf("%-36s %9s %17s %9s %9s %6s %9s %9s %5s", "clock", "ns/call", "[p25..p75]", "getres", "observed",
	       "stale", "d50", "d99", "back");
	for (int k = 0; k < B.nthreads; k++)
		printf(" %8s%-3d", "Mops/s@", B.threads[k]);
	if (B.nthreads > 1)
		printf(" %6s", "eff");
	printf(" %5s\n", "cpu");
	for (size_t i = 0; i < n; i++) {
		struct result *r = &res[i];
		char rng[32], gr[16], ob[16];
		snprintf(rng, sizeof(rng), "[%.1f..%.1f]", r->cost_p25, r->cost_p75);
		if (isnan(r->getres_ns))
			snprintf(gr, sizeof(gr), "-");
		else
			snprintf(gr, sizeof(gr), "%.4g", r->getres_ns);
		if (isnan(r->observed_ns))
			snprintf(ob, sizeof(ob), "-");
		else
			snprintf(ob, sizeof(ob), "%.4g", r->observed_ns);
		printf("%-36s %9.2f %17s %9s %9s %5.1f%% %9.4g %9.4g %5ld", r->c->name, r->cost_med, rng, gr, ob,
		       r->samples ? 100.0 * (double)r->zero / (double)r->samples : 0.0, r->d_p50, r->d_p99, r->backward);
		for (int k = 0; k < r->nthreads; k++)
			printf(" %11.2f", r->rate[k] / 1e6);
		if (r->nthreads > 1)
			printf(" %5.0f%%", 100 * r->eff[r->nthreads - 1]);
		printf(" %4.0f%%\n", 100 * r->share[r->nthreads - 1]);
	}
	if (B.agree.n) {
		double out_m = 0, out_r = 0, *am = malloc(B.agree.n * sizeof(double)), *ar = malloc(B.agree.n * sizeof(double));
		for (size_t i = 0; i < B.agree.n; i++) {
			double om = fabs(B.agree.mono_err[i]) - B.agree.mono_half[i];
			double orr = fabs(B.agree.real_err[i]) - B.agree.real_half[i];
			out_m = om > out_m ? om : out_m;
			out_r = orr > out_r ? orr : out_r;
			if (am && ar) {
				am[i] = fabs(B.agree.mono_err[i]);
				ar[i] = fabs(B.agree.real_err[i]);
			}
		}
		if (am && ar) {
			stat_sort(am, B.agree.n);
			stat_sort(ar, B.agree.n);
			printf("agreement with the kernel, %zu bracketed samples: median |fastclock - kernel midpoint| mono %.0f "
			       "ns, real %.0f ns; worst outside the kernel's bracket mono %.0f ns, real %.0f ns\n",
			       B.agree.n, stat_percentile_sorted(am, B.agree.n, 50), stat_percentile_sorted(ar, B.agree.n, 50),
			       out_m, out_r);
		}
		free(am);
		free(ar);
	}
	printf("Mops/s@T: calls per second summed over T threads; eff: rate(T) / (T x rate(1)) at the largest T; cpu: "
	       "the threads' CPU time / wall time there (< 100%%: other load)\n");
}

static void print_csv(struct result *res, size_t n)
{
	printf("clock,stat,value\n");
#define ROW(NAME, V)                                                                                        \
	do {                                                                                               \
		double v_ = (V);                                                                           \
		if (isfinite(v_))                                                                          \
			printf("%s,%s,%.10g\n", r->c->name, NAME, v_);                                    \
		else                                                                                       \
			printf("%s,%s,\n", r->c->name, NAME);                                              \
	} while (0)
	for (size_t i = 0; i < n; i++) {
		struct result *r = &res[i];
		ROW("cost_ns", r->cost_med);
		ROW("cost_p25_ns", r->cost_p25);
		ROW("cost_p75_ns", r->cost_p75);
		ROW("cost_min_ns", r->cost_min);
		ROW("cost_max_ns", r->cost_max);
		ROW("cost_reps", (double)r->reps);
		ROW("cost_batch", (double)r->batch);
		ROW("getres_ns", r->getres_ns);
		ROW("nominal_resolution_ns", r->c->nominal_res_ns > 0 ? r->c->nominal_res_ns : NAN);
		ROW("observed_resolution_ns", r->observed_ns);
		ROW("delta_samples", (double)r->samples);
		ROW("staleness", r->samples ? (double)r->zero / (double)r->samples : NAN);
		ROW("backward_steps", (double)r->backward);
		ROW("delta_min_ns", r->d_min);
		ROW("delta_p25_ns", r->d_p25);
		ROW("delta_p50_ns", r->d_p50);
		ROW("delta_p75_ns", r->d_p75);
		ROW("delta_p99_ns", r->d_p99);
		ROW("delta_max_ns", r->d_max);
		for (int k = 0; k < r->nthreads; k++) {
			char s[48];
			snprintf(s, sizeof(s), "calls_per_s_t%d", B.threads[k]);
			ROW(s, r->rate[k]);
			snprintf(s, sizeof(s), "efficiency_t%d", B.threads[k]);
			ROW(s, r->eff[k]);
			snprintf(s, sizeof(s), "cpu_share_t%d", B.threads[k]);
			ROW(s, r->share[k]);
		}
	}
#undef ROW
}

static void json_fastclock(struct jw *j, const struct fc_status *st)
{
	jw_obj(j, "fastclock");
	jw_str(j, "backend", fc_backend_name(st->backend));
	jw_str(j, "reason", st->reason);
	jw_str(j, "counter", st->counter);
	jw_str(j, "clocksource", st->clocksource);
	jw_str(j, "freq_source", fc_freq_source_name(st->freq_source));
	jw_int(j, "counter_hz_initial", (int64_t)st->counter_hz_initial);
	jw_int(j, "counter_hz", (int64_t)st->counter_hz);
	jw_int(j, "period_ns", st->period_ns);
	jw_int(j, "reanchors", (int64_t)st->reanchors);
	jw_int(j, "slow_paths", (int64_t)st->slow_paths);
	jw_int(j, "discontinuities", (int64_t)st->discontinuities);
	jw_int(j, "max_abs_error_ns", st->max_abs_error_ns);
	jw_str(j, "sync_status", fc_sync_name(st->sync_status));
	jw_str(j, "config_error", st->config_error);
	jw_end_obj(j);
}


void bench_json_host(struct jw *j)
{
	struct utsname u;
	char line[512], model[256] = "", hn[256] = "", cs[64] = "", avail[256] = "";
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			char *colon = strchr(line, ':');
			if (colon && !strncmp(line, "model name", 10)) {
				snprintf(model, sizeof(model), "%s", colon + 2);
				model[strcspn(model, "\n")] = 0;
				break;
			}
		}
		fclose(f);
	}
	gethostname(hn, sizeof(hn) - 1);
	cli_read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", cs, sizeof(cs));
	cli_read_line("/sys/devices/system/clocksource/clocksource0/available_clocksource", avail, sizeof(avail));
	jw_obj(j, "host");
	jw_str(j, "hostname", hn);
	if (uname(&u) == 0) {
		jw_str(j, "kernel", u.release);
		jw_str(j, "machine", u.machine);
	} else {
		jw_null(j, "kernel");
		jw_null(j, "machine");
	}
	jw_str(j, "cpu_model", model);
	jw_int(j, "ncpus", cli_ncpus());
	jw_str(j, "clocksource", cs);
	jw_str(j, "available_clocksources", avail);
	jw_end_obj(j);
}

void bench_json_agreement(struct jw *j, const struct agree_series *a)
{
	const double *cols[] = {a->t_s, a->mono_err, a->mono_half, a->real_err, a->real_half};
	const size_t n = a->n;
	const char *names[] = {"t_s", "mono_err_ns", "mono_half_ns", "real_err_ns", "real_half_ns"};
	jw_obj(j, "agreement");
	jw_int(j, "samples", (int64_t)n);
	for (int c = 0; c < 5; c++) {
		int save = j->pretty;
		jw_arr(j, names[c]);
		j->pretty = 0;
		for (size_t i = 0; i < n; i++)
			jw_num(j, NULL, c == 0 ? round(cols[c][i] * 1e6) / 1e6 : round(cols[c][i] * 10) / 10);
		jw_end_arr(j);
		j->pretty = save;
	}
	jw_end_obj(j);
}

static void print_json(struct result *res, size_t n, double wall_s, const struct fc_status *st)
{
	struct jw j;
	char when[64];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	jw_begin_doc(&j, "bench");
	jw_str(&j, "created_utc", when);
	bench_json_host(&j);
	json_fastclock(&j, st);
	jw_obj(&j, "config");
	jw_num(&j, "duration_s", B.duration_s);
	jw_arr(&j, "threads");
	for (int k = 0; k < B.nthreads; k++)
		jw_int(&j, NULL, B.threads[k]);
	jw_end_arr(&j);
	jw_bool(&j, "updater", B.updater);
	jw_int(&j, "batch_target_ns", BATCH_NS);
	jw_str(&j, "method", "cost: median over repeated batches of n calls summed into a volatile sink, each batch "
			     "timed with clock_gettime(CLOCK_MONOTONIC)");
	jw_end_obj(&j);
	jw_num(&j, "wall_s", round(wall_s * 1000) / 1000);
	jw_arr(&j, "clocks");
	for (size_t i = 0; i < n; i++) {
		struct result *r = &res[i];
		double edges[HIST_NBINS + 1];
		jw_obj(&j, NULL);
		jw_str(&j, "name", r->c->name);
		jw_str(&j, "group", r->c->group);
		jw_str(&j, "timeline", r->c->timeline);
		jw_str(&j, "call", r->c->call);
		jw_obj(&j, "cost");
		jw_num(&j, "median_ns", r->cost_med);
		jw_num(&j, "p25_ns", r->cost_p25);
		jw_num(&j, "p75_ns", r->cost_p75);
		jw_num(&j, "min_ns", r->cost_min);
		jw_num(&j, "max_ns", r->cost_max);
		jw_num(&j, "spread_pct", r->cost_med > 0 ? 100 * (r->cost_p75 - r->cost_p25) / r->cost_med : NAN);
		jw_int(&j, "reps", r->reps);
		jw_int(&j, "batch", r->batch);
		jw_end_obj(&j);
		jw_obj(&j, "resolution");
		jw_num(&j, "getres_ns", r->getres_ns);
		jw_num(&j, "nominal_ns", r->c->nominal_res_ns > 0 ? r->c->nominal_res_ns : NAN);
		jw_num(&j, "observed_ns", r->observed_ns);
		jw_end_obj(&j);
		jw_obj(&j, "deltas");
		jw_int(&j, "samples", r->samples);
		jw_num(&j, "zero_share", r->samples ? (double)r->zero / (double)r->samples : NAN);
		jw_int(&j, "backward_steps", r->backward);
		jw_num(&j, "min_ns", r->d_min);
		jw_num(&j, "p25_ns", r->d_p25);
		jw_num(&j, "p50_ns", r->d_p50);
		jw_num(&j, "p75_ns", r->d_p75);
		jw_num(&j, "p99_ns", r->d_p99);
		jw_num(&j, "max_ns", r->d_max);
		jw_obj(&j, "histogram");
		for (int b = 0; b <= HIST_NBINS; b++)
			edges[b] = pow(10.0, HIST_LO_EXP + (double)b / HIST_DECADE_STEPS);
		{
			int save = j.pretty;
			jw_arr(&j, "edges_ns");
			j.pretty = 0;
			for (int b = 0; b <= HIST_NBINS; b++)
				jw_num(&j, NULL, edges[b] < 1 ? round(edges[b] * 1e4) / 1e4 : round(edges[b] * 100) / 100);
			jw_end_arr(&j);
			j.pretty = save;
			jw_arr(&j, "counts");
			j.pretty = 0;
			for (int b = 0; b < HIST_NBINS; b++)
				jw_int(&j, NULL, r->hist[b]);
			jw_end_arr(&j);
			j.pretty = save;
		}
		jw_int(&j, "zero", r->zero);
		jw_int(&j, "negative", r->backward);
		jw_end_obj(&j);
		jw_end_obj(&j);
		jw_arr(&j, "threads");
		for (int k = 0; k < r->nthreads; k++) {
			jw_obj(&j, NULL);
			jw_int(&j, "threads", B.threads[k]);
			jw_num(&j, "calls_per_s", round(r->rate[k]));
			jw_num(&j, "efficiency", round(r->eff[k] * 1e4) / 1e4);
			jw_num(&j, "cpu_share", round(r->share[k] * 1e4) / 1e4);
			jw_end_obj(&j);
		}
		jw_end_arr(&j);
		jw_end_obj(&j);
	}
	jw_end_arr(&j);
	bench_json_agreement(&j, &B.agree);
	jw_end_obj(&j);
}

int cmd_bench(int argc, char **argv)
{
	const struct fcb_clock *all[128], *sel[128];
	size_t nall = all_clocks(all, 128);
	struct result *res;
	struct fc_status st;
	int n;
	double per_clock;
	int64_t tstart;

	memset(&B, 0, sizeof(B));
	B.duration_s = DEFAULT_DURATION_S;
	{
		int ncpu = cli_ncpus();
		char s[16];
		snprintf(s, sizeof(s), "%d", ncpu > MAX_THREADS ? MAX_THREADS : ncpu);
		parse_threads(s);
	}
	for (int i = 1; i < argc; i++) {
		const char *v;
		int m;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(bench_help, stdout);
			return CLI_EXIT_OK;
		} else if (!strcmp(argv[i], "--json")) {
			B.json = 1;
		} else if (!strcmp(argv[i], "--csv")) {
			B.csv = 1;
		} else if (!strcmp(argv[i], "--updater")) {
			B.updater = 1;
		} else if (!strcmp(argv[i], "--list")) {
			B.list = 1;
		} else if ((m = cli_opt(argc, argv, &i, "--clocks", &v)) != 0) {
			if (m < 0)
				return CLI_EXIT_USAGE;
			B.clocks = v;
		} else if ((m = cli_opt(argc, argv, &i, "--threads", &v)) != 0) {
			if (m < 0)
				return CLI_EXIT_USAGE;
			if (parse_threads(v))
				return cli_usage_error("bad --threads '%s' (a count 1..%d or a list like 1,2,4)", v,
						       MAX_THREADS);
		} else if ((m = cli_opt(argc, argv, &i, "--duration", &v)) != 0) {
			if (m < 0)
				return CLI_EXIT_USAGE;
			if (cli_parse_double(v, &B.duration_s) || B.duration_s <= 0 || B.duration_s > 86400)
				return cli_usage_error("bad --duration '%s' (seconds, > 0)", v);
		} else if (argv[i][0] == '-') {
			return cli_usage_error("unknown option '%s' (see 'fastclock bench --help')", argv[i]);
		} else {
			return cli_usage_error("unexpected argument '%s' (see 'fastclock bench --help')", argv[i]);
		}
	}
	if (B.json && B.csv)
		return cli_usage_error("--json and --csv are exclusive");
	n = select_clocks(B.clocks, all, nall, sel);
	if (n < 0)
		return CLI_EXIT_USAGE;
	if (B.list) {
		for (int i = 0; i < n; i++)
			printf("%-36s %-14s %-14s %s\n", sel[i]->name, sel[i]->group, sel[i]->timeline, sel[i]->call);
		return CLI_EXIT_OK;
	}
	B.progress = isatty(STDERR_FILENO);
	fc_init();
	if (B.updater && fc_updater_start(0) != 0)
		cli_error("warning: fc_updater_start failed: %s", strerror(errno));
	fc_status(&st);
	B.ns_per_tick = st.backend == FC_BACKEND_COUNTER && st.counter_hz ? 1e9 / (double)st.counter_hz : 1.0;
	res = n > 0 ? calloc((size_t)n, sizeof(*res)) : NULL;
	if (!res)
		return CLI_EXIT_FAIL;
	tstart = B.t0 = cli_ns(CLOCK_MONOTONIC);
	per_clock = B.duration_s / n;
	for (int i = 0; i < n; i++) {
		struct result *r = &res[i];
		struct timespec rs;
		r->c = sel[i];
		r->ns_per_unit = sel[i]->ns_per_unit > 0 ? sel[i]->ns_per_unit : B.ns_per_tick;
		r->getres_ns = NAN;
		if (sel[i]->clockid >= 0 && clock_getres(sel[i]->clockid, &rs) == 0)
			r->getres_ns = (double)rs.tv_sec * 1e9 + (double)rs.tv_nsec;
	}
	agree_sample();
	measure_costs(res, n, B.duration_s * SHARE_COST);
	for (int i = 0; i < n; i++) {
		struct result *r = &res[i];
		progress((size_t)i, (size_t)n, sel[i]->name, "deltas");
		agree_sample();
		measure_deltas(r, per_clock * SHARE_DELTAS);
		progress((size_t)i, (size_t)n, sel[i]->name, "threads");
		agree_sample();
		measure_threads(r, per_clock * SHARE_THREADS);
	}
	agree_sample();
	if (B.progress)
		fputs("\r\033[K", stderr);
	fc_status(&st);
	{
		double wall = (double)(cli_ns(CLOCK_MONOTONIC) - tstart) / 1e9;
		if (B.json)
			print_json(res, (size_t)n, wall, &st);
		else if (B.csv)
			print_csv(res, (size_t)n);
		else
			print_text(res, (size_t)n, wall, &st);
	}
	if (B.updater)
		fc_updater_stop();
	free(res);
	agree_free(&B.agree);
	return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}
