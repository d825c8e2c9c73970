/*
 * fastclock bench — the project's one measurement engine: cost, ratios, resolution, staleness, consecutive
 * deltas and thread scaling of every clock (docs/PERFORMANCE.md's figures come from it, through bench/run.sh).
 * Owns the method below (the output formats are bench_out.c's); calls the clock table (clocks.h), the shared
 * helpers (cli.h) and the public <fastclock.h> only.
 *
 * Method:
 *   cost        a batch of n calls in a tight loop, results summed into a volatile sink, timed with
 *               clock_gettime(CLOCK_MONOTONIC) around each ~0.1 ms sub-batch; n is calibrated so one batch
 *               lasts about --batch-ms; a round's figure is the mean over its sub-batches that took less than
 *               twice their median (those a descheduling did not hit: time_round). Rounds: each round times one batch of every clock, in an order rotated each round,
 *               so noise that comes and goes over seconds (a neighbour's build, CPU steal) hits every clock
 *               alike; rounds repeat for SHARE_COST of the budget (at least MIN_ROUNDS). Per clock: the median
 *               over rounds with its spread, and two ratios taken WITHIN each round (same noise) and then
 *               medianed: x vDSO = this / clock_gettime(CLOCK_MONOTONIC), x ctr = this / the bare counter read
 *               with the same ordering (FCB_BASE_*). Those references run in every round, selected or not.
 *   deltas      runs of CHUNK consecutive reads stored raw; differences within a run (never across two
 *               runs) give the smallest non-zero delta (observed resolution), the share of zero deltas
 *               (staleness), the percentiles and the backward steps.
 *   latency     single reads, each between two ordered bare counter reads (fcb_ctr_ordered), the two reads'
 *               own cost (median of back-to-back pairs) taken off: p50, p99, p99.9, p99.99 and max per clock,
 *               the reads that re-anchor a stale hand (once a period without the updater) in the tail.
 *   threads     for each thread count T (1 always among them), T threads pinned round robin call the clock's
 *               batch loop; each publishes its count of completed calls. The main thread reads all counts at
 *               the start and at the end of ONE common window: rate(T) = calls in the window / the window, so
 *               the total cannot exceed CPUs / cost however many threads there are. efficiency = rate(T) /
 *               (T x rate(1)); cpu share = the threads' CPU time / their wall time.
 *   pauses      single reads of fastclock after a pause of 0, 10 us ... 1 s, each interleaved with its vDSO
 *               counterpart's and timed alone like the latency phase (measure_spacing): what a server reading
 *               once per request pays; SHARE_SPACING of the budget, before the cost rounds.
 *   agreement   the main thread samples fc_mono_ns and fc_real_ns bracketed by the kernel's clocks every
 *               AGREE_EVERY_NS during the thread windows (and between phases).
 * SIGINT stops the run at the next check; what was measured is printed with an interrupted note (exit 130).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fastclock.h>

#include "cli.h"
#include "bench.h"
#include "clocks.h"

#define DEFAULT_DURATION_S 40.0  /* all clocks in ~20 s on 2 cores, and ~20 s of reads after a pause */
#define MAX_DURATION_S 86400.0   /* one day: longer runs are a mistake, not a measurement */
#define DEFAULT_BATCH_MS 10.0    /* clock reads around a batch (~30 ns) are < 1e-5 of it */
#define MIN_BATCH_NS 100000      /* 0.1 ms: the floor when a short --duration shortens the batches */
#define SUB_BATCH_NS 100000.0  /* 0.1 ms: shorter than a time slice, so most sub-batches run whole */
#define MAX_SUB 100              /* sub-batches per round: --batch-ms 10 is 100 of them */
#define MIN_ROUNDS 7             /* a median of fewer is not worth printing */
#define MAX_ROUNDS 2001
#define CHUNK 4096               /* consecutive reads per delta run */
#define MAX_DELTA_SAMPLES 262144 /* 256 Ki deltas: percentiles to 1e-3 resolution, 2 MiB of buffer */
#define AGREE_EVERY_NS 5000000   /* 5 ms: ~200 points per second of thread windows */
#define MAX_THREADS 256
#define WORKER_BATCH_NS 20000.0  /* a worker publishes its count every ~20 us: the window's edge error */
#define WAIT_POLL_NS 1000000     /* 1 ms: polling for a worker that has not run yet */
#define WAIT_CAP_NS 2000000000   /* 2 s: the longest a window waits for every worker to have run */
#define MAX_CLOCKS 128

/* Shares of the budget: the cost rounds take SHARE_COST of all of it; each clock's own share of the rest
 * goes SHARE_DELTAS to deltas and SHARE_THREADS to the thread windows. */
#define SHARE_COST 0.40
#define SHARE_SPACING 0.5 /* of --duration, before the shares above: reads after a pause (measure_spacing) */
#define SHARE_DELTAS 0.15
#define SHARE_THREADS 0.45

static struct bench_cfg B;

static const char bench_help[] =
	"usage: fastclock bench [--clocks LIST] [--threads N|LIST] [--duration S] [--batch-ms MS]\n"
	"                       [--json|--csv|--markdown] [--updater] [--list]\n"
	"\n"
	"Measure every clock side by side: cost per call (median over interleaved rounds, with spread, and the\n"
	"per-round ratios to clock_gettime(CLOCK_MONOTONIC) and to the bare counter read), resolution\n"
	"(clock_getres and the smallest non-zero consecutive delta), staleness (share of zero deltas), delta\n"
	"percentiles, backward steps, and throughput with 1..N threads over one common window, with efficiency.\n"
	"\n"
	"  --clocks LIST    comma-separated names or globs (case-insensitive), e.g. 'fc_*,clock_gettime.MONO*'\n"
	"                   (default: all; --list shows the names)\n"
	"  --threads N      thread counts 1..N (above 8: powers of two and N; default: the CPUs this process may\n"
	"                   use); or a list '1,2,4' without repeats. 1 is always measured: efficiency is relative\n"
	"                   to one thread. At most 256 threads.\n"
	"  --duration S     total time budget in seconds, 0 < S <= 86400 (default 40: half of it reads after\n"
	"                   pauses of 0 to 1 s beside the vDSO's, the 1 s row only from 20 s on)\n"
	"  --batch-ms MS    target duration of one timed batch, 0 < MS <= 1000 (default 10); never below 0.1,\n"
	"                   and shortened to that floor if 7 rounds would not fit in the cost share of --duration\n"
	"  --json           one JSON document on stdout (schema: share/fastclock/bench.schema.json)\n"
	"  --csv            long format on stdout: header 'clock,stat,value', one row per statistic\n"
	"  --markdown       the cost table (with ratios) and the thread table as markdown\n"
	"  --updater        start the updater thread (fc_updater_start(0)) before the first round; without it\n"
	"                   a coarse read 1 ms or more after the first starts it, as in any program\n"
	"  --list           list the clock names and what each calls, then exit\n"
	"A progress line goes to stderr when stderr is a terminal. Ctrl-C prints what was measured so far.\n"
	"Exit codes: 0 done, 2 bad usage, 3 the output could not be written, 130 interrupted.\n";

/* ---- clock selection ---- */
static size_t all_clocks(const struct fcb_clock **out)
{
	size_t n = 0;
	for (size_t i = 0; i < fcb_n_c_clocks; i++)
		out[n++] = &fcb_c_clocks[i];
	for (size_t i = 0; i < fcb_n_cxx_clocks; i++)
		out[n++] = &fcb_cxx_clocks[i];
#if FASTCLOCK_CLI_HAVE_ABSL
	for (size_t i = 0; i < fcb_n_absl_clocks; i++)
		out[n++] = &fcb_absl_clocks[i];
#endif
	return n;
}

static const struct fcb_clock *find_clock(const struct fcb_clock **all, size_t nall, const char *name)
{
	for (size_t i = 0; i < nall && *name; i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}

/* Select clocks matching the comma-separated patterns, in table order. Returns the count or -1 (error
 * printed) when a pattern matches nothing. */
static int select_clocks(const char *spec, const struct fcb_clock **all, size_t nall, const struct fcb_clock **out)
{
	char buf[1024], *save = NULL, *tok;
	int use[MAX_CLOCKS] = {0}, n = 0;
	if (strlen(spec) >= sizeof(buf)) {
		cli_error("--clocks list too long");
		return -1;
	}
	memcpy(buf, spec, strlen(spec) + 1);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int hit = 0;
		while (*tok == ' ')
			tok++;
		for (size_t i = 0; i < nall && *tok; i++)
			if (fnmatch(tok, all[i]->name, FNM_CASEFOLD) == 0)
				use[i] = hit = 1;
		if (*tok && !hit) {
			cli_error("unknown clock '%s' (see 'fastclock bench --list')", tok);
			return -1;
		}
	}
	for (size_t i = 0; i < nall; i++)
		if (use[i])
			out[n++] = all[i];
	if (n == 0)
		cli_error("--clocks '%s' selects no clock", spec);
	return n ? n : -1;
}

/* "N" (1..N) or a list "1,2,4" without repeats; 1 is put first when the list lacks it. Returns 0 or -1. */
static int parse_threads(const char *s)
{
	char buf[512], *save = NULL, *tok;
	long v;
	int n = 0, t[MAX_COUNTS];
	if (!strchr(s, ',')) {
		if (cli_parse_long(s, &v) || v < 1 || v > MAX_THREADS)
			return -1;
		for (int k = 1; k <= v && n < MAX_COUNTS; k = v <= 8 ? k + 1 : k * 2)
			t[n++] = k;
		if (t[n - 1] != v)
			t[n++] = (int)v;
	} else {
		if (strlen(s) >= sizeof(buf))
			return -1;
		memcpy(buf, s, strlen(s) + 1);
		int one = 0;
		t[n++] = 1;
		for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (cli_parse_long(tok, &v) || v < 1 || v > MAX_THREADS || n >= MAX_COUNTS || (v == 1 && one++))
				return -1;
			for (int k = 1; k < n; k++)
				if (t[k] == v)
					return -1; /* a repeat would give two columns of one name */
			if (v != 1)
				t[n++] = (int)v;
		}
	}
	memcpy(B.threads, t, sizeof(t));
	B.nthreads = n;
	return 0;
}

/* ---- agreement ---- */
static void agree_sample(void)
{
	struct bracket b;
	/* A first read re-anchors a stale hand (the main thread sleeps between samples), so the bracketed read
	 * below measures a steady-state read, not the slow path's own kernel sampling. */
	fcb_sink = fc_mono_ns();
	bracket_read(&b);
	agree_push(&B.agree, B.t0, &b);
}

/* Phase k of n, e.g. "[3/40] fc_mono_ns: deltas", with the time spent and left of --duration. */
static void progress(size_t i, size_t n, const char *name, const char *phase)
{
	cli_progress(B.t0, B.duration_s, "[%zu/%zu] %s: %s", i + 1, n, name, phase);
}

/* ---- cost ---- */
static double time_batch(const struct fcb_clock *c, long n)
{
	int64_t t1 = cli_ns(CLOCK_MONOTONIC);
	c->batch(n);
	return (double)(cli_ns(CLOCK_MONOTONIC) - t1);
}

/* One round's cost per call of a batch of n calls, timed as up to MAX_SUB sub-batches of ~SUB_BATCH_NS:
 * the mean per call over the sub-batches that took less than twice their median. On a loaded machine a
 * 10 ms batch is almost always descheduled for a time slice or more, which multiplies a whole batch's figure
 * (docs/PERFORMANCE.md, "How it is measured"); a sub-batch that was descheduled is > 2x the median and is
 * dropped, while a slow path that comes every so many calls (a re-anchor: a few us in 100 us) stays in the
 * mean, so the figure is still the throughput cost. Two clock reads (~40 ns) per 100 us sub-batch: 4e-4 of it. */
static double time_round(const struct fcb_clock *c, long n)
{
	double v[MAX_SUB], s[MAX_SUB], med, sum = 0;
	long k = (long)(B.batch_ns / SUB_BATCH_NS + 0.5), per, kept = 0;
	k = k < 1 ? 1 : k > MAX_SUB ? MAX_SUB : k;
	per = n / k > 0 ? n / k : 1;
	for (long j = 0; j < k; j++)
		s[j] = v[j] = time_batch(c, per) / (double)per;
	stat_sort(s, (size_t)k);
	med = stat_percentile_sorted(s, (size_t)k, 50);
	for (long j = 0; j < k; j++)
		if (v[j] < 2 * med) {
			sum += v[j];
			kept++;
		}
	return kept ? sum / (double)kept : med;
}

double bench_batch_median(void (*batch)(long n), long n, int reps)
{
	double v[MIN_ROUNDS * 4];
	reps = reps < 1 ? 1 : reps > MIN_ROUNDS * 4 ? MIN_ROUNDS * 4 : reps;
	for (int k = 0; k < reps; k++) {
		int64_t t1 = cli_ns(CLOCK_MONOTONIC);
		batch(n);
		v[k] = (double)(cli_ns(CLOCK_MONOTONIC) - t1) / (double)n;
	}
	stat_sort(v, (size_t)reps);
	return stat_percentile_sorted(v, (size_t)reps, 50);
}

/* Calls per batch so that one batch takes about B.batch_ns: double n until a batch takes >= 1/8 of the
 * target (long enough that the two clock reads around it are noise), then scale; best of 3 at that size. */
static long calibrate(const struct fcb_clock *c)
{
	long n = 16;
	double t, per;
	c->batch(256); /* warm caches, page in, initialise lazily initialised clocks */
	t = time_batch(c, n);
	while (t < B.batch_ns / 8 && n < (1L << 40)) {
		n *= 2;
		t = time_batch(c, n);
	}
	for (int i = 0; i < 2; i++)
		t = fmin(t, time_batch(c, n));
	per = t / (double)n;
	n = (long)(B.batch_ns / (per > 0 ? per : 1e-3));
	return n < 16 ? 16 : n;
}

/* Median over rounds of the per-round ratio v[i][r] / v[ref][r] (or difference). NAN without a reference. */
static double round_median(const double *v, const double *ref, long rounds, int diff, double *tmp)
{
	if (!ref || rounds == 0)
		return NAN;
	for (long r = 0; r < rounds; r++)
		tmp[r] = diff ? v[r] - ref[r] : v[r] / ref[r];
	stat_sort(tmp, (size_t)rounds);
	return stat_percentile_sorted(tmp, (size_t)rounds, 50);
}

/* Cost of res[0..m) in interleaved rounds (see the method above); the references are among them. */
static void measure_costs(struct result *res, int m, double budget_s, int i_vdso, int i_raw, int i_ord)
{
	double *v = malloc((size_t)m * MAX_ROUNDS * sizeof(double)), *tmp = malloc(MAX_ROUNDS * sizeof(double));
	int64_t deadline, start = cli_ns(CLOCK_MONOTONIC);
	long rounds = 0;
	if (!v || !tmp) {
		free(v);
		free(tmp);
		return;
	}
	/* Shorter batches when MIN_ROUNDS of full ones would not fit in the budget. */
	B.batch_ns = fmax(fmin(B.batch_ns, budget_s * 1e9 / (m * MIN_ROUNDS)), MIN_BATCH_NS);
	for (int i = 0; i < m && !cli_interrupted; i++) {
		progress((size_t)i, (size_t)m, res[i].c->name, "calibrating");
		res[i].batch = calibrate(res[i].c);
	}
	deadline = start + (int64_t)(budget_s * 1e9); /* the calibration above is inside the budget */
	while (rounds < MAX_ROUNDS && (rounds < MIN_ROUNDS || cli_ns(CLOCK_MONOTONIC) < deadline)) {
		for (int j = 0; j < m && !cli_interrupted; j++) {
			int i = (int)((j + rounds) % m);
			v[(size_t)i * MAX_ROUNDS + (size_t)rounds] = time_round(res[i].c, res[i].batch);
		}
		if (cli_interrupted)
			break; /* a round is kept only whole */
		rounds++;
		cli_progress(B.t0, B.duration_s, "cost: round %ld (at least %d) of all %d clocks", rounds, MIN_ROUNDS, m);
	}
	for (int i = 0; i < m; i++) {
		struct result *r = &res[i];
		double *x = v + (size_t)i * MAX_ROUNDS;
		const double *ref = i_vdso >= 0 ? v + (size_t)i_vdso * MAX_ROUNDS : NULL;
		int ib = r->c->base == FCB_BASE_ORDERED ? i_ord : i_raw;
		const double *ctr = ib >= 0 ? v + (size_t)ib * MAX_ROUNDS : NULL;
		r->reps = rounds;
		r->x_vdso = round_median(x, ref, rounds, 0, tmp);
		r->x_ctr = round_median(x, ctr, rounds, 0, tmp);
		r->over_ctr = round_median(x, ctr, rounds, 1, tmp);
		r->cost_min = r->cost_max = NAN;
		if (rounds == 0)
			continue;
		memcpy(tmp, x, (size_t)rounds * sizeof(double));
		stat_sort(tmp, (size_t)rounds);
		r->cost_med = stat_percentile_sorted(tmp, (size_t)rounds, 50);
		r->cost_p25 = stat_percentile_sorted(tmp, (size_t)rounds, 25);
		r->cost_p75 = stat_percentile_sorted(tmp, (size_t)rounds, 75);
		r->cost_min = tmp[0];
		r->cost_max = tmp[rounds - 1];
	}
	if (rounds == 0)
		for (int i = 0; i < m; i++)
			res[i].cost_med = res[i].cost_p25 = res[i].cost_p75 = NAN;
	free(v);
	free(tmp);
}

/* ---- deltas ---- */
/* ---- the reader that re-anchors ---- */
#define REANCHOR_SAMPLES 40
/* A reader that re-anchors, in a child forked for it (the keeper, which the reads after a pause started, and the
 * run's state stay the parent's): the child stops its keeper (fork starts it again there) so that readers
 * re-anchor, then REANCHOR_SAMPLES times waits 1.5 periods without a read, so the hand is stale, and times the
 * fc_mono_ns that re-anchors it and the one right after (steady state), each between two ordered counter reads.
 * n = 0 where the counter's rate is unknown or the child could not run. */
static void measure_reanchor(const struct fc_status *st)
{
	struct {
		int n;
		double slow[REANCHOR_SAMPLES], fast[REANCHOR_SAMPLES];
	} m = {0};
	int fd[2], status;
	pid_t pid;
	if (isnan(B.ctr_ns_per_tick) || st->period_ns <= 0 || st->period_ns > 100000000 || pipe(fd) != 0)
		return;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(fd[0]);
		(void)fc_updater_stop();
		for (; m.n < REANCHOR_SAMPLES && !cli_interrupted; m.n++) {
			struct timespec d = {0, (long)(st->period_ns * 3 / 2)};
			int64_t t0, t1, t2;
			nanosleep(&d, NULL);
			t0 = fcb_ctr_ordered();
			fcb_sink = fc_mono_ns();
			t1 = fcb_ctr_ordered();
			fcb_sink = fc_mono_ns();
			t2 = fcb_ctr_ordered();
			m.slow[m.n] = fmax(0, (double)(t1 - t0) - B.lat_overhead) * B.ctr_ns_per_tick;
			m.fast[m.n] = fmax(0, (double)(t2 - t1) - B.lat_overhead) * B.ctr_ns_per_tick;
		}
		_exit(write(fd[1], &m, sizeof(m)) == (ssize_t)sizeof(m) ? 0 : 1);
	}
	close(fd[1]);
	if (pid < 0 || read(fd[0], &m, sizeof(m)) != (ssize_t)sizeof(m))
		m.n = 0;
	close(fd[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	if (m.n <= 0 || m.n > REANCHOR_SAMPLES)
		return;
	stat_sort(m.slow, (size_t)m.n);
	stat_sort(m.fast, (size_t)m.n);
	B.reanchor_n = m.n;
	B.reanchor_p50 = stat_percentile_sorted(m.slow, (size_t)m.n, 50);
	B.reanchor_max = m.slow[m.n - 1];
	B.steady_p50 = stat_percentile_sorted(m.fast, (size_t)m.n, 50);
}

/* ---- reads after a pause ---- */
/* The period the reads after a pause had (they come first, in a process of plain reads only): a
 * FASTCLOCK_PERIOD_US the library took fixes it (fc_status, after them: a fixed period does not move), one it
 * refused (named in config_error) leaves the default. */
static void spacing_period(const struct fc_status *st)
{
	const char *e = getenv("FASTCLOCK_PERIOD_US");
	char *out = B.spacing_period;
	const size_t n = sizeof(B.spacing_period);
	if (e && *e && !strstr(st->config_error, "FASTCLOCK_PERIOD_US="))
		snprintf(out, n, "FASTCLOCK_PERIOD_US=%lld", (long long)(st->period_ns / 1000));
	else if (e && *e)
		snprintf(out, n, "the default for plain reads, %d ms (FASTCLOCK_PERIOD_US=%.12s ignored)",
			 FC_PERIOD_PLAIN_NS / 1000000, e);
	else
		snprintf(out, n, "the default for plain reads, %d ms", FC_PERIOD_PLAIN_NS / 1000000);
}

/* The ordered counter's ns per tick against the kernel's CLOCK_MONOTONIC over 20 ms (the library's own rate is
 * fc_status's, which the reads after a pause come before): a part in 10^5 or better, for latencies of ns. */
static double ctr_calibrate(void)
{
	const struct timespec d = {0, 20000000};
	int64_t k0, k1, t0, t1;
	t0 = fcb_ctr_ordered();
	k0 = cli_ns(CLOCK_MONOTONIC);
	nanosleep(&d, NULL);
	t1 = fcb_ctr_ordered();
	k1 = cli_ns(CLOCK_MONOTONIC);
	return t1 > t0 ? (double)(k1 - k0) / (double)(t1 - t0) : NAN;
}

const int64_t bench_spacing_ns[SPACING_ROWS] = {0, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};
const char *const bench_spacing_fc[SPACING_PAIRS] = {"fc_mono_ns", "fc_real_ns", "fc_clock_gettime.MONOTONIC",
						     "fc_gettimeofday"};
const char *const bench_spacing_vdso[SPACING_PAIRS] = {"clock_gettime.MONOTONIC", "clock_gettime.REALTIME",
						       "clock_gettime.MONOTONIC", "gettimeofday"};
/* Reads of each clock per spacing when the budget allows: the 1 s row alone takes 2 x 4 x 1 s. */
static const long spacing_reads[SPACING_ROWS] = {200, 200, 200, 200, 100, 12, 2};
#define SPACING_MAX_READS 200
#define SPACING_WAKE_NS 80000.0 /* what one short nanosleep costs beyond its pause, for the plan only */

static void pause_ns(int64_t ns)
{
	struct timespec d = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
	if (ns > 0 && !cli_interrupted)
		nanosleep(&d, NULL);
}

/* Sorted copy's p50, p90, p99 into out[3] (NAN when n is 0). */
static void p50_90_99(double *v, long n, double *out)
{
	stat_sort(v, (size_t)n);
	for (int k = 0; k < 3; k++)
		out[k] = n ? stat_percentile_sorted(v, (size_t)n, (const double[]){50, 90, 99}[k]) : NAN;
}

/* Single reads after a pause, in the configuration the run has (no updater unless --updater: the library starts
 * and parks its keeper as it would in any program; run before the cost rounds read a coarse clock). For each
 * spacing s, rounds of: for each pair (in an order rotated each round: at 1 s every other fastclock read can
 * find a parked keeper, and a fixed order gave those reads to the same clocks), pause s/2, one fastclock read,
 * pause s/2, its vDSO counterpart's read, each timed alone between two ordered counter reads (the pair's
 * overhead taken off, as the latency phase): so each side's previous read is s (plus the pauses' wake-up)
 * before its next, and the two sides see the same machine. Nothing between the reads reads a clock but the counter (a clock_gettime there would warm the vDSO's
 * data). Timer slack is 1 ns meanwhile, so a 5 us pause is not 55 us. Rows in order of spacing, each given what
 * its full count needs or 0.6 of what is left (the last: all of it), so a short --duration keeps the short
 * spacings whole and drops the long ones (0 reads). */
static void measure_spacing(const struct fcb_clock **all, size_t nall)
{
	static double fv[SPACING_PAIRS][SPACING_MAX_READS], vv[SPACING_PAIRS][SPACING_MAX_READS];
	static double fg[SPACING_PAIRS][SPACING_MAX_READS], vg[SPACING_PAIRS][SPACING_MAX_READS];
	const struct fcb_clock *fc[SPACING_PAIRS], *vd[SPACING_PAIRS];
	double tpn = B.ctr_ns_per_tick, budget = B.spacing_budget_s * 1e9;
	int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	int64_t c0, last_f = 0, last_v = 0;
	for (int p = 0; p < SPACING_PAIRS; p++) {
		fc[p] = find_clock(all, nall, bench_spacing_fc[p]);
		vd[p] = find_clock(all, nall, bench_spacing_vdso[p]);
		if (!fc[p] || !vd[p] || !fc[p]->latency || !vd[p]->latency)
			return;
	}
	if (isnan(tpn) || budget <= 0)
		return;
	for (int r = 0; r < SPACING_ROWS; r++) /* rows an interrupt leaves unread: no figures */
		for (int p = 0; p < SPACING_PAIRS; p++)
			B.spacing[r][p] = (struct spacing_cell){0, {NAN, NAN, NAN}, {NAN, NAN, NAN}, NAN, NAN};
	prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0);
	c0 = fcb_ctr_ordered();
	for (int r = 0; r < SPACING_ROWS && !cli_interrupted; r++) {
		int64_t s = bench_spacing_ns[r], row0;
		double round_ns = 2.0 * SPACING_PAIRS * ((double)s / 2 + (s ? SPACING_WAKE_NS : 0) + 200);
		double left = budget - (double)(fcb_ctr_ordered() - c0) * tpn;
		double full = (double)spacing_reads[r] * round_ns + (double)s / 2;
		double allot = r == SPACING_ROWS - 1 ? left : fmin(full, 0.6 * left);
		long k = 0;
		cli_progress(B.t0, B.duration_s, "reads after a pause: %.0f us apart", (double)s / 1e3);
		pause_ns(s / 2); /* the first read's side too was last read s ago */
		row0 = fcb_ctr_ordered();
		while (k < spacing_reads[r] && !cli_interrupted &&
		       (double)(fcb_ctr_ordered() - row0) * tpn + (double)s / 2 + round_ns <= allot) {
			for (int j = 0; j < SPACING_PAIRS && !cli_interrupted; j++) {
				int p = (int)((j + k) % SPACING_PAIRS); /* rotated: no clock always first after a gap */
				int64_t raw, t;
				pause_ns(s / 2);
				t = fcb_ctr_ordered();
				fc[p]->latency(&raw, 1);
				fv[p][k] = fmax(0, (double)raw - B.lat_overhead) * tpn;
				fg[p][k] = (double)(t - last_f) * tpn;
				last_f = fcb_ctr_ordered();
				pause_ns(s / 2);
				t = fcb_ctr_ordered();
				vd[p]->latency(&raw, 1);
				vv[p][k] = fmax(0, (double)raw - B.lat_overhead) * tpn;
				vg[p][k] = (double)(t - last_v) * tpn;
				last_v = fcb_ctr_ordered();
			}
			if (cli_interrupted)
				break; /* a round a Ctrl-C cut short (its sleeps ended early) is not counted */
			/* a round slower than planned (a busy machine, a long wake-up) plans the next ones */
			round_ns = fmax(round_ns, (double)(fcb_ctr_ordered() - row0) * tpn / (double)(k + 1));
			k++;
		}
		for (int p = 0; p < SPACING_PAIRS; p++) {
			struct spacing_cell *c = &B.spacing[r][p];
			double g[3];
			c->n = k;
			p50_90_99(fv[p], k, c->fc);
			p50_90_99(vv[p], k, c->vd);
			p50_90_99(fg[p], k, g);
			c->fc_gap50 = g[0];
			p50_90_99(vg[p], k, g);
			c->vd_gap50 = g[0];
		}
	}
	prctl(PR_SET_TIMERSLACK, slack > 0 ? slack : 50000, 0, 0, 0);
	B.spacing_measured = 1;
}

/* Sort d (n > 0 values) and store its p[k]-th percentiles (0: the smallest, 100: the largest) in *out[k]. */
static void percentiles(double *d, long n, const double *p, double *const *out, int k)
{
	stat_sort(d, (size_t)n);
	for (int i = 0; i < k; i++)
		*out[i] = stat_percentile_sorted(d, (size_t)n, p[i]);
}

/* ---- single-read latency ---- */
/* The ticks two back-to-back ordered counter reads take (median of CHUNK pairs): what every latency sample
 * includes besides the read itself. */
static double latency_overhead(void)
{
	double *d = malloc(CHUNK * sizeof(double)), o;
	if (!d)
		return 0;
	for (long i = 0; i < CHUNK; i++) {
		int64_t t0 = fcb_ctr_ordered();
		d[i] = (double)(fcb_ctr_ordered() - t0);
	}
	stat_sort(d, CHUNK);
	o = stat_percentile_sorted(d, CHUNK, 50);
	free(d);
	return o;
}

/* Single reads, each between two ordered counter reads, for budget_s (at least one CHUNK, at most
 * MAX_DELTA_SAMPLES): the tail (p99.9, p99.99, max) holds the reads that took the slow path (the reader that
 * re-anchors a stale hand, once a period without the updater) and those the machine interrupted. */
static void measure_latency(struct result *r, double budget_s)
{
	int64_t *raw = malloc(CHUNK * sizeof(int64_t));
	double *d = malloc(MAX_DELTA_SAMPLES * sizeof(double));
	int64_t deadline = cli_ns(CLOCK_MONOTONIC) + (int64_t)(budget_s * 1e9);
	long n = 0;
	if (!raw || !d || !r->c->latency || isnan(B.ctr_ns_per_tick)) {
		free(raw);
		free(d);
		return;
	}
	do {
		long want = MAX_DELTA_SAMPLES - n < CHUNK ? MAX_DELTA_SAMPLES - n : CHUNK;
		r->c->latency(raw, want);
		for (long i = 0; i < want; i++)
			d[n++] = fmax(0, (double)raw[i] - B.lat_overhead) * B.ctr_ns_per_tick;
	} while (n < MAX_DELTA_SAMPLES && !cli_interrupted && cli_ns(CLOCK_MONOTONIC) < deadline);
	r->lat_samples = n;
	percentiles(d, n, (const double[]){50, 99, 99.9, 99.99, 100},
		    (double *const[]){&r->lat_p50, &r->lat_p99, &r->lat_p999, &r->lat_p9999, &r->lat_max}, 5);
	free(raw);
	free(d);
}

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
				minpos = fmin(minpos, x);
				r->hist[b < 0 ? 0 : b >= HIST_NBINS ? HIST_NBINS - 1 : b]++;
			}
		}
	} while (n < MAX_DELTA_SAMPLES && !cli_interrupted && cli_ns(CLOCK_MONOTONIC) < deadline);
	r->samples = n;
	r->zero = zero;
	r->backward = back;
	r->observed_ns = isfinite(minpos) ? minpos : NAN;
	percentiles(d, n, (const double[]){0, 25, 50, 75, 99, 100},
		    (double *const[]){&r->d_min, &r->d_p25, &r->d_p50, &r->d_p75, &r->d_p99, &r->d_max}, 6);
	free(raw);
	free(d);
}

/* ---- threads ---- */
struct worker {
	uint64_t calls; /* completed calls, published after each batch: read by the main thread */
	pthread_t th;
	const struct fcb_clock *c;
	long batch;
	int idx;
	int *go, *stop, *ready;
	int64_t cpu_ns;
} __attribute__((aligned(64))); /* one cache line each: a worker's count shares no line with another's */

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t calls = 0;
	int64_t c1, c2;
	cli_pin_thread(w->idx);
	__atomic_fetch_add(w->ready, 1, __ATOMIC_RELAXED);
	while (!__atomic_load_n(w->go, __ATOMIC_ACQUIRE))
		;
	c1 = cli_ns(CLOCK_THREAD_CPUTIME_ID);
	do {
		w->c->batch(w->batch);
		calls += (uint64_t)w->batch;
		/* relaxed: the main thread needs a count, not an order with anything else */
		__atomic_store_n(&w->calls, calls, __ATOMIC_RELAXED);
	} while (!__atomic_load_n(w->stop, __ATOMIC_RELAXED));
	c2 = cli_ns(CLOCK_THREAD_CPUTIME_ID);
	w->cpu_ns = c2 - c1;
	return NULL;
}

/* Snapshot every worker's count into c; returns their sum. */
static uint64_t snap_calls(const struct worker *w, int n, uint64_t *c)
{
	uint64_t s = 0;
	for (int i = 0; i < n; i++)
		s += c[i] = __atomic_load_n(&w[i].calls, __ATOMIC_RELAXED);
	return s;
}

/* Sleep until `end`, taking an agreement sample every AGREE_EVERY_NS; returns early on SIGINT. */
static void sleep_sampling(int64_t end)
{
	for (;;) {
		int64_t left = end - cli_ns(CLOCK_MONOTONIC);
		struct timespec ts = {0, 0};
		if (left <= 0 || cli_interrupted)
			return;
		ts.tv_nsec = (long)(left > AGREE_EVERY_NS ? AGREE_EVERY_NS : left);
		nanosleep(&ts, NULL);
		agree_sample();
	}
}

/* Sleep (sampling) until every worker's count has passed its value in `since`, or until `cap`: on a loaded
 * machine a thread may not run at all for a whole slice, and a window it took no part in measures nothing. */
static void wait_every_worker(const struct worker *w, int n, const uint64_t *since, int64_t cap)
{
	int64_t t = cli_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < n && !cli_interrupted; i++)
		while (__atomic_load_n(&w[i].calls, __ATOMIC_RELAXED) <= since[i] && cli_ns(CLOCK_MONOTONIC) < cap &&
		       !cli_interrupted)
			sleep_sampling(cli_ns(CLOCK_MONOTONIC) + WAIT_POLL_NS);
	B.waited_ns += cli_ns(CLOCK_MONOTONIC) - t; /* beyond --duration: the machine gave a worker no CPU */
}

static void measure_threads(struct result *r, double budget_s)
{
	static struct worker w[MAX_THREADS];
	/* ~WORKER_BATCH_NS of calls per batch: a stop is seen that soon, and the window's edges are that sharp */
	long batch = isfinite(r->cost_med) && r->cost_med > 0 ? (long)(WORKER_BATCH_NS / r->cost_med) : 100;
	double slice = budget_s / B.nthreads;
	r->nthreads = 0;
	for (int k = 0; k < B.nthreads && !cli_interrupted; k++) {
		int nt = B.threads[k], go = 0, stop = 0, ready = 0, started = 0;
		int64_t t_go, t_stop, t1, t2;
		uint64_t s1, s2, c[MAX_THREADS] = {0};
		double cpu = 0;
		for (int i = 0; i < nt; i++) {
			w[i] = (struct worker){.c = r->c, .batch = batch > 0 ? batch : 1, .idx = i, .go = &go, .stop = &stop,
					       .ready = &ready};
			if (pthread_create(&w[i].th, NULL, worker_main, &w[i]) != 0)
				break;
			started++;
		}
		t_go = cli_ns(CLOCK_MONOTONIC);
		while (__atomic_load_n(&ready, __ATOMIC_RELAXED) < started)
			sched_yield();
		B.waited_ns += cli_ns(CLOCK_MONOTONIC) - t_go; /* the workers' start: as long as the CPUs make it */
		t_go = cli_ns(CLOCK_MONOTONIC);
		__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
		/* The window opens once every worker has run (a tenth of the slice, longer if one has not) and closes
		 * 0.9 of the slice later, or once every worker has completed a batch inside it. */
		sleep_sampling(t_go + (int64_t)(slice * 1e8));
		wait_every_worker(w, started, c, t_go + WAIT_CAP_NS);
		t1 = cli_ns(CLOCK_MONOTONIC);
		s1 = snap_calls(w, started, c);
		sleep_sampling(t1 + (int64_t)(slice * 0.9e9));
		wait_every_worker(w, started, c, t1 + WAIT_CAP_NS);
		s2 = snap_calls(w, started, c);
		t2 = cli_ns(CLOCK_MONOTONIC);
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
		t_stop = cli_ns(CLOCK_MONOTONIC);
		for (int i = 0; i < started; i++) {
			pthread_join(w[i].th, NULL);
			cpu += (double)w[i].cpu_ns;
		}
		B.waited_ns += cli_ns(CLOCK_MONOTONIC) - t_stop; /* their end: as long as they take to get a CPU */
		if (cli_interrupted)
			break; /* a window cut short is not a measurement */
		r->rate[k] = started == nt && t2 > t1 && s2 > s1 ? (double)(s2 - s1) * 1e9 / (double)(t2 - t1) : NAN;
		r->share[k] = started ? cpu / started / (double)(t_stop - t_go) : NAN;
		r->eff[k] = r->rate[k] / (nt * r->rate[0]); /* B.threads[0] is 1 */
		r->nthreads = k + 1;
	}
}

/* ---- output ---- */
/* Parse the options into B. Returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv)
{
	int ncpu = cli_ncpus();
	char s[16];
	double batch_ms = DEFAULT_BATCH_MS;
	B.duration_s = DEFAULT_DURATION_S;
	snprintf(s, sizeof(s), "%d", ncpu > MAX_THREADS ? MAX_THREADS : ncpu);
	parse_threads(s);
	for (int i = 1; i < argc; i++) {
		const char *v;
		int m;
		static const char *const formats[] = {"--json", "--csv", "--markdown"};
		int fmt = 0;
		for (int f = 0; f < 3; f++)
			if (!strcmp(argv[i], formats[f]))
				fmt = f + 1;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(bench_help, stdout);
			return CLI_EXIT_OK;
		} else if (fmt) {
			if (B.out && B.out != fmt)
				return cli_usage_error("--json, --csv and --markdown are exclusive");
			B.out = fmt;
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
				return cli_usage_error("bad --threads '%s' (a count 1..%d, or a list like 1,2,4 of such counts "
						       "without repeats)", v, MAX_THREADS);
		} else if ((m = cli_opt_num(argc, argv, &i, "--duration", 0, MAX_DURATION_S, "seconds", &B.duration_s)) ||
			   (m = cli_opt_num(argc, argv, &i, "--batch-ms", 0, 1000, "milliseconds", &batch_ms))) {
			if (m < 0)
				return CLI_EXIT_USAGE;
		} else if (argv[i][0] == '-') {
			return cli_usage_error("unknown option '%s' (see 'fastclock bench --help')", argv[i]);
		} else {
			return cli_usage_error("unexpected argument '%s' (see 'fastclock bench --help')", argv[i]);
		}
	}
	B.batch_ns = batch_ms * 1e6;
	return -1;
}

int cmd_bench(int argc, char **argv)
{
	const struct fcb_clock *all[MAX_CLOCKS], *sel[MAX_CLOCKS];
	size_t nall = all_clocks(all);
	const char *refs[3] = {FCB_VDSO_REF, FCB_CTR_RAW, FCB_CTR_ORDERED};
	int iref[3] = {-1, -1, -1}, n, m, rc;
	struct result *res;
	struct fc_status st;
	double per_clock;
	int64_t delay0;

	memset(&B, 0, sizeof(B));
	if ((rc = parse_args(argc, argv)) >= 0)
		return rc;
	n = select_clocks(B.clocks ? B.clocks : "*", all, nall, sel);
	if (n <= 0)
		return CLI_EXIT_USAGE;
	if (B.list) {
		for (int i = 0; i < n; i++)
			printf("%-36s %-14s %-14s %s\n", sel[i]->name, sel[i]->group, sel[i]->timeline, sel[i]->call);
		return CLI_EXIT_OK;
	}
	/* The references of the ratios run in the cost rounds even when not selected (then not reported). */
	m = n;
	for (int k = 0; k < 3; k++) {
		const struct fcb_clock *c = find_clock(all, nall, refs[k]);
		for (int i = 0; i < m && c; i++)
			if (sel[i] == c)
				iref[k] = i;
		if (c && iref[k] < 0) {
			iref[k] = m;
			sel[m++] = c;
		}
	}
	cli_catch_interrupt();
	if (B.updater && fc_updater_start(0) != 0)
		cli_error("warning: fc_updater_start failed: %s", strerror(errno));
	B.lat_overhead = latency_overhead();
	B.t0 = cli_ns(CLOCK_MONOTONIC);
	delay0 = cli_run_delay_ns();
	/* The reads after a pause first, while the process is one that makes plain reads only: its period is the
	 * default's (fc_init, fc_status and the cost rounds' bounded and coarse reads would make it the fine one,
	 * src/config.h). The counter's rate for them is measured here, not asked of fc_status. */
	B.ctr_ns_per_tick = fcb_ctr_is_ns ? 1.0 : ctr_calibrate();
	/* past the start-up (the rate: 1 ms), as a server's reads are */
	for (int64_t end = cli_ns(CLOCK_MONOTONIC) + 5000000; cli_ns(CLOCK_MONOTONIC) < end;)
		fcb_sink = fc_mono_ns() + fc_real_ns();
	B.spacing_budget_s = B.duration_s * SHARE_SPACING;
	measure_spacing(all, nall);
	fc_init();
	fc_status(&st);
	spacing_period(&st);
	B.ns_per_tick = st.backend == FC_BACKEND_COUNTER && st.counter_hz ? 1e9 / (double)st.counter_hz : 1.0;
	B.ctr_ns_per_tick = fcb_ctr_is_ns ? 1.0 : st.counter_hz ? 1e9 / (double)st.counter_hz : NAN;
	res = calloc((size_t)m, sizeof(*res));
	if (!res) {
		cli_error("out of memory");
		return CLI_EXIT_FAIL;
	}
	for (int i = 0; i < m; i++) {
		struct result *r = &res[i];
		struct timespec rs;
		r->c = sel[i];
		r->ns_per_unit = sel[i]->ns_per_unit > 0 ? sel[i]->ns_per_unit
				 : sel[i]->ns_per_unit == 0 ? B.ns_per_tick
				 : st.counter_hz ? 1e9 / (double)st.counter_hz
						 : NAN; /* hardware ticks at an unknown rate: no deltas */
		r->getres_ns = sel[i]->clockid >= 0 && clock_getres(sel[i]->clockid, &rs) == 0
				       ? (double)rs.tv_sec * 1e9 + (double)rs.tv_nsec
				       : NAN;
		r->observed_ns = r->d_min = r->d_p25 = r->d_p50 = r->d_p75 = r->d_p99 = r->d_max = NAN;
		r->lat_p50 = r->lat_p99 = r->lat_p999 = r->lat_p9999 = r->lat_max = NAN;
	}
	measure_reanchor(&st);
	agree_sample();
	measure_costs(res, m, B.duration_s * (1 - SHARE_SPACING) * SHARE_COST, iref[0], iref[1], iref[2]);
	for (int i = 0; i < n && !cli_interrupted; i++) {
		/* each clock gets an equal share of what is left of --duration, so a phase that ran over (the cost
		 * rounds' minimum, a window waiting for a worker that had no CPU) shortens those after it */
		double left = B.duration_s - (double)(cli_ns(CLOCK_MONOTONIC) - B.t0) / 1e9;
		per_clock = left > 0 ? left / (n - i) : 0;
		progress((size_t)i, (size_t)n, sel[i]->name, "deltas");
		agree_sample();
		if (!isnan(res[i].ns_per_unit))
			measure_deltas(&res[i], per_clock * SHARE_DELTAS / 2 / (SHARE_DELTAS + SHARE_THREADS));
		progress((size_t)i, (size_t)n, sel[i]->name, "single-read latency");
		measure_latency(&res[i], per_clock * SHARE_DELTAS / 2 / (SHARE_DELTAS + SHARE_THREADS));
		progress((size_t)i, (size_t)n, sel[i]->name, "threads");
		agree_sample();
		measure_threads(&res[i], per_clock * SHARE_THREADS / (SHARE_DELTAS + SHARE_THREADS));
	}
	agree_sample();
	cli_progress_done();
	if (delay0 >= 0 && cli_run_delay_ns() > delay0) /* this thread runnable but not running: a busy machine */
		B.waited_ns += cli_run_delay_ns() - delay0;
	fc_status(&st);
	{
		double wall = (double)(cli_ns(CLOCK_MONOTONIC) - B.t0) / 1e9;
		bench_render(&B, res, (size_t)n, wall, &st);
	}
	if (B.updater)
		fc_updater_stop();
	free(res);
	agree_free(&B.agree);
	return cli_interrupted_exit();
}
