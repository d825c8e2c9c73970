/*
 * fastclock bench's output formats: text (the default), --json (docs/bench.schema.json's "bench"), --csv (long
 * format) and --markdown (docs/PERFORMANCE.md's tables). They print what bench.c measured (struct result) and
 * measure nothing themselves.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "bench.h"

static const struct bench_cfg *B; /* the run being printed (bench_render) */

static const char *base_name(const struct fcb_clock *c)
{
	return c->base == FCB_BASE_ORDERED ? FCB_CTR_ORDERED : FCB_CTR_RAW;
}

/* ---- figure checks: the same rules as the report's figure_checks (tools/report/fastclock_report.py), on
 * the figures as the JSON prints them (efficiency and CPU share to 1e-4, calls/s to 1), so both agree ---- */
enum { F_EFFICIENCY = 1, F_CPU = 2, F_BELOW_COUNTER = 4, F_RATE = 8, F_UNSTABLE = 16 };
static const char *const flag_names[] = {"efficiency", "cpu", "below-counter", "rate", "unstable"};
#define NFLAGS (int)(sizeof(flag_names) / sizeof(flag_names[0]))

/* Reads the counter (not a coarse clock, time(), the empty loop or a CPU-time clock: those read memory). */
static int reads_counter(const struct fcb_clock *c)
{
	return !strcasestr(c->name, "coarse") && strcmp(c->name, "time") != 0 && strcmp(c->name, "(empty loop)") != 0 &&
	       strcmp(c->group, "reference") != 0 && strcmp(c->timeline, "cputime") != 0 &&
	       strcmp(c->name, "getrusage") != 0;
}

/* Efficiency and rate are judged only where the threads had their CPUs (share >= 0.9): on a busy machine the
 * one-thread window got 30 % of a CPU and the two-thread one 40 %, so rate(2) / (2 x rate(1)) read 1.39 and one
 * thread's calls/s x the cost 0.5; 'efficiency' and 'rate' fired on nearly every clock for what 'cpu' already
 * says (the machine's load, not the clock), and bench printed "40 of 40 clocks have a figure that cannot be
 * right". An unmeasured share (NaN) does not stop the judgement. */
static int had_cpu(double share)
{
	return !(round(share * 1e4) / 1e4 < 0.9);
}

static int figure_flags(const struct result *r)
{
	int f = 0;
	for (int k = 0; k < r->nthreads; k++) {
		f |= had_cpu(r->share[0]) && had_cpu(r->share[k]) && round(r->eff[k] * 1e4) / 1e4 > 1.10 ? F_EFFICIENCY : 0;
		f |= had_cpu(r->share[k]) ? 0 : F_CPU;
	}
	if (reads_counter(r->c) && strcmp(r->c->group, "counter") != 0 && r->x_ctr < 0.95)
		f |= F_BELOW_COUNTER;
	if (r->nthreads > 0 && r->rate[0] > 0 && r->cost_med > 0 && had_cpu(r->share[0])) {
		double x = round(r->rate[0]) * r->cost_med / 1e9; /* B->threads[0] is 1 */
		f |= x > 2 || x < 0.5 ? F_RATE : 0;
	}
	if (r->cost_p25 > 0 && r->cost_p75 / r->cost_p25 > 1.5)
		f |= F_UNSTABLE;
	return f;
}

/* "efficiency cpu" (space-separated; "" when none) */
static const char *flag_text(int f, char *buf, size_t n)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int k = 0; k < NFLAGS; k++)
		if (f & (1 << k))
			used += (size_t)snprintf(buf + used, used < n ? n - used : 0, "%s%s", used ? " " : "", flag_names[k]);
	return buf;
}

/* A nanosecond figure in a text column: 4 significant digits below 10 us (0.3852, 10.01, 2053), whole ns
 * above (16390, 4000000), never an exponent a reader must decode; NAN as `none`. */
static const char *ns_cell(char *buf, size_t n, double v, const char *none)
{
	if (isnan(v))
		snprintf(buf, n, "%s", none);
	else
		snprintf(buf, n, fabs(v) < 1e4 ? "%.4g" : "%.0f", v);
	return buf;
}

/* A share of zero deltas as a percentage that never reads 0.0 % or 100.0 % unless it is exactly that: a coarse
 * clock with 3 non-zero deltas in 262144 printed "100.0%" beside its observed smallest delta. */
static const char *pct_cell(char *buf, size_t n, long part, long whole)
{
	double p = whole ? 100.0 * (double)part / (double)whole : NAN;
	if (isnan(p))
		snprintf(buf, n, "nan");
	else if (part > 0 && p < 0.1)
		snprintf(buf, n, "<0.1%%");
	else if (part < whole && p > 99.9)
		snprintf(buf, n, ">99.9%%");
	else
		snprintf(buf, n, "%.1f%%", p);
	return buf;
}

/* Prose for a terminal: words wrapped at TEXT_COLS, continuation lines indented two spaces. */
#define TEXT_COLS 100
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	size_t col = 0;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized): a known false positive
	va_end(ap);
	for (char *w = buf, *save = NULL, *tok; (tok = strtok_r(w, " ", &save)) != NULL; w = NULL) {
		size_t len = strlen(tok);
		if (col && col + 1 + len > TEXT_COLS) {
			fputs("\n  ", stdout);
			col = 2;
		} else if (col) {
			putchar(' ');
			col++;
		}
		fputs(tok, stdout);
		col += len;
	}
	putchar('\n');
}

/* The flags that most clocks carry: a property of the run (a busy machine), said once, not per clock (the
 * report's common_flags). */
static int run_flags(const struct result *res, size_t n)
{
	int count[NFLAGS] = {0}, f = 0;
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < NFLAGS; k++)
			count[k] += (figure_flags(&res[i]) >> k) & 1;
	for (int k = 0; k < NFLAGS; k++)
		f |= n && (size_t)count[k] > n / 2.0 ? 1 << k : 0;
	return f;
}

static const char *const flag_words[] = {
	"efficiency above 1.1", "threads got < 0.9 CPU each (a busy machine)", "cheaper than its counter read",
	"calls/s disagree with the cost 2x",
	"p75/p25 above 1.5"};

static void print_agreement_summary(void)
{
	const struct agree_series *a = &B->agree;
	double out_m = 0, out_r = 0, *am = malloc(a->n * sizeof(double)), *ar = malloc(a->n * sizeof(double));
	if (a->n && am && ar) {
		for (size_t i = 0; i < a->n; i++) {
			out_m = fmax(out_m, fabs(a->mono_err[i]) - a->mono_half[i]);
			out_r = fmax(out_r, fabs(a->real_err[i]) - a->real_half[i]);
			am[i] = fabs(a->mono_err[i]);
			ar[i] = fabs(a->real_err[i]);
		}
		stat_sort(am, a->n);
		stat_sort(ar, a->n);
		say("agreement with the kernel, %zu bracketed samples: median |fastclock - kernel midpoint| mono %.0f "
		    "ns, real %.0f ns; worst outside the kernel's bracket mono %.0f ns, real %.0f ns",
		    a->n, stat_percentile_sorted(am, a->n, 50), stat_percentile_sorted(ar, a->n, 50), out_m, out_r);
	}
	free(am);
	free(ar);
}

/* ---- reads after a pause ---- */
/* "0", "10 us", "1 ms", "1 s" */
static const char *spacing_label(int64_t ns, char *buf, size_t n)
{
	if (ns == 0)
		snprintf(buf, n, "0");
	else if (ns < 1000000)
		snprintf(buf, n, "%g us", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, n, "%g ms", (double)ns / 1e6);
	else
		snprintf(buf, n, "%g s", (double)ns / 1e9);
	return buf;
}

/* fastclock's percentile k (0: p50, 2: p99) over the vDSO's: NAN without both */
static double spacing_x(const struct spacing_cell *c, int k)
{
	return c->n > 0 && c->vd[k] > 0 ? c->fc[k] / c->vd[k] : NAN;
}

/* The verdict's clause: fc_mono_ns's p50 and p99 over the vDSO's, lowest to highest, over the spacings from
 * 10 us to 100 ms that were measured (a server's reads; 0 is the loop, 1 s a process that stopped reading).
 * Returns the characters written. */
static size_t spacing_verdict(char *buf, size_t n)
{
	double lo50 = INFINITY, hi50 = -INFINITY, lo99 = INFINITY, hi99 = -INFINITY;
	int first = -1, last = -1;
	char a[16], b[16];
	if (!B->spacing_measured)
		return 0;
	for (int r = 0; r < SPACING_ROWS; r++) {
		const struct spacing_cell *c = &B->spacing[r][0];
		if (bench_spacing_ns[r] < 10000 || bench_spacing_ns[r] > 100000000 || !isfinite(spacing_x(c, 0)) ||
		    !isfinite(spacing_x(c, 2)))
			continue;
		first = first < 0 ? r : first;
		last = r;
		lo50 = fmin(lo50, spacing_x(c, 0));
		hi50 = fmax(hi50, spacing_x(c, 0));
		lo99 = fmin(lo99, spacing_x(c, 2));
		hi99 = fmax(hi99, spacing_x(c, 2));
	}
	if (first < 0)
		return 0;
	return (size_t)snprintf(buf, n,
				" reads after a pause (%s to %s): fc_mono_ns p50 at %.2f-%.2fx clock_gettime's, "
				"p99 at %.2f-%.2fx;",
				spacing_label(bench_spacing_ns[first], a, sizeof(a)),
				spacing_label(bench_spacing_ns[last], b, sizeof(b)), lo50, hi50, lo99, hi99);
}

/* The text table: one row per spacing; fc_mono_ns's percentiles and the vDSO's, then each drop-in's ratios. */
static void print_spacing_text(void)
{
	if (!B->spacing_measured)
		return;
	printf("\nreads after a pause: each read timed alone, beside the vDSO's (ns; x50, x99: p50/p50, p99/p99)\n");
	printf("%-7s %4s %6s %6s %6s %6s %6s %5s %5s %11s %11s %11s\n", "pause", "n", "mono50", "mono90", "mono99",
	       "vdso50", "vdso99", "x50", "x99", "real x50/99", "cgt x50/99", "gtod x50/99");
	for (int r = 0; r < SPACING_ROWS; r++) {
		const struct spacing_cell *c = B->spacing[r];
		char lab[16], v[5][24], x[3][24], x0[2][16];
		ns_cell(v[0], sizeof(v[0]), c[0].fc[0], "-");
		ns_cell(v[1], sizeof(v[1]), c[0].fc[1], "-");
		ns_cell(v[2], sizeof(v[2]), c[0].fc[2], "-");
		ns_cell(v[3], sizeof(v[3]), c[0].vd[0], "-");
		ns_cell(v[4], sizeof(v[4]), c[0].vd[2], "-");
		for (int p = 1; p < SPACING_PAIRS && p < 4; p++)
			snprintf(x[p - 1], sizeof(x[p - 1]), c[p].n ? "%.2f/%.2f" : "-", spacing_x(&c[p], 0),
				 spacing_x(&c[p], 2));
		snprintf(x0[0], sizeof(x0[0]), c[0].n ? "%.2f" : "-", spacing_x(&c[0], 0));
		snprintf(x0[1], sizeof(x0[1]), c[0].n ? "%.2f" : "-", spacing_x(&c[0], 2));
		printf("%-7s %4ld %6s %6s %6s %6s %6s %5s %5s %11s %11s %11s\n",
		       spacing_label(bench_spacing_ns[r], lab, sizeof(lab)), c[0].n, v[0], v[1], v[2], v[3], v[4],
		       x0[0], x0[1], x[0], x[1], x[2]);
	}
	say("pause: the time since the same side's previous read (each pause is half of it; medians measured: "
	    "%.0f us at 10 us, %.0f ms at 10 ms); mono: fc_mono_ns, vdso: clock_gettime(MONOTONIC); real: fc_real_ns / "
	    "clock_gettime(REALTIME); cgt: fc_clock_gettime / clock_gettime, MONOTONIC; gtod: fc_gettimeofday / "
	    "gettimeofday; n: reads of each (0: no time left in --duration); measured first, the process having made "
	    "plain reads only: period %s",
	    B->spacing[1][0].fc_gap50 / 1e3, B->spacing[4][0].fc_gap50 / 1e6, B->spacing_period);
}

static void print_spacing_markdown(void)
{
	if (!B->spacing_measured)
		return;
	printf("\nReads after a pause (one read timed alone, interleaved with the vDSO's; ns; x: fastclock / vDSO; "
	       "measured first, the process having made plain reads only: period %s):\n\n",
	       B->spacing_period);
	printf(
	       "| pause | reads | `fc_mono_ns` p50 / p90 / p99 | `clock_gettime` p50 / p90 / p99 | x p50 | x p99 "
	       "| `fc_real_ns` x p50, p99 | `fc_clock_gettime` x p50, p99 | `fc_gettimeofday` x p50, p99 |\n"
	       "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (int r = 0; r < SPACING_ROWS; r++) {
		const struct spacing_cell *c = B->spacing[r];
		char lab[16];
		printf("| %s | %ld | %.0f / %.0f / %.0f | %.0f / %.0f / %.0f | %.2f | %.2f |",
		       spacing_label(bench_spacing_ns[r], lab, sizeof(lab)), c[0].n, c[0].fc[0], c[0].fc[1], c[0].fc[2],
		       c[0].vd[0], c[0].vd[1], c[0].vd[2], spacing_x(&c[0], 0), spacing_x(&c[0], 2));
		for (int p = 1; p < SPACING_PAIRS; p++)
			printf(" %.2f, %.2f |", spacing_x(&c[p], 0), spacing_x(&c[p], 2));
		printf("\n");
	}
}

static void json_spacing(struct jw *j)
{
	if (!B->spacing_measured)
		return;
	jw_obj(j, "after_pause");
	jw_str(j, "method",
	       "for each pause, rounds of: for each pair (order rotated each round), sleep half the pause, one "
	       "fastclock read, sleep half the pause, its vDSO counterpart's read; each read timed alone "
	       "between two ordered counter reads, their own cost taken off; timer slack 1 ns; first, in a "
	       "process that had made plain reads only (no fc_init, fc_status, bounded or coarse read), no "
	       "updater unless --updater");
	jw_str(j, "period", B->spacing_period);
	jw_num(j, "budget_s", round(B->spacing_budget_s * 1000) / 1000);
	jw_arr(j, "rows");
	for (int r = 0; r < SPACING_ROWS; r++) {
		jw_obj(j, NULL);
		jw_int(j, "pause_ns", bench_spacing_ns[r]);
		jw_arr(j, "pairs");
		for (int p = 0; p < SPACING_PAIRS; p++) {
			const struct spacing_cell *c = &B->spacing[r][p];
			jw_obj(j, NULL);
			jw_str(j, "clock", bench_spacing_fc[p]);
			jw_str(j, "vdso", bench_spacing_vdso[p]);
			jw_int(j, "samples", c->n);
			jw_num(j, "p50_ns", round(c->fc[0] * 10) / 10);
			jw_num(j, "p90_ns", round(c->fc[1] * 10) / 10);
			jw_num(j, "p99_ns", round(c->fc[2] * 10) / 10);
			jw_num(j, "vdso_p50_ns", round(c->vd[0] * 10) / 10);
			jw_num(j, "vdso_p90_ns", round(c->vd[1] * 10) / 10);
			jw_num(j, "vdso_p99_ns", round(c->vd[2] * 10) / 10);
			jw_num(j, "x_vdso_p50", round(spacing_x(c, 0) * 1e4) / 1e4);
			jw_num(j, "x_vdso_p99", round(spacing_x(c, 2) * 1e4) / 1e4);
			jw_num(j, "gap_p50_ns", round(c->fc_gap50));
			jw_num(j, "vdso_gap_p50_ns", round(c->vd_gap50));
			jw_end_obj(j);
		}
		jw_end_arr(j);
		jw_end_obj(j);
	}
	jw_end_arr(j);
	jw_end_obj(j);
}

/* The verdict, first: fastclock's headline ratio, then what the figure checks found (flags most clocks carry
 * said once as the run's; the count is of the clocks flagged for something else). */
static void print_verdict(const struct result *res, size_t n, int common)
{
	const struct result *fc = NULL, *vd = NULL;
	char buf[1024];
	size_t used = 0;
	int own = 0;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(res[i].c->name, "fc_mono_ns"))
			fc = &res[i];
		if (!strcmp(res[i].c->name, FCB_VDSO_REF))
			vd = &res[i];
		own += (figure_flags(&res[i]) & ~common) != 0;
	}
	used += (size_t)snprintf(buf, sizeof(buf), "Verdict:%s", cli_interrupted ? " INTERRUPTED;" : "");
	if (fc && vd && isfinite(fc->x_vdso))
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, " fc_mono_ns costs %.2fx the vDSO's "
					 "clock_gettime(MONOTONIC) (%.3g vs %.3g ns);", fc->x_vdso, fc->cost_med, vd->cost_med);
	else if (fc)
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, " fc_mono_ns costs %.3g ns;", fc->cost_med);
	used += spacing_verdict(buf + used, sizeof(buf) - used);
	if (common) {
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, " this run:");
		for (int k = 0, first = 1; k < NFLAGS; k++)
			if (common & (1 << k)) {
				used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s %s", first ? "" : ";",
							 flag_words[k]);
				first = 0;
			}
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, ": re-run on a quiet machine before trusting "
					 "the thread figures;");
	}
	if (own)
		snprintf(buf + used, sizeof(buf) - used, " %d of %zu clocks with a figure that cannot be right (marked !, "
			 "listed below the tables)", own, n);
	else
		snprintf(buf + used, sizeof(buf) - used, " no clock's figure %s", common ? "suspect besides that" :
			 "suspect");
	say("%s", buf);
}

static void print_text(struct result *res, size_t n, double wall_s, const struct fc_status *st)
{
	int common = run_flags(res, n), last_t = B->nthreads ? B->threads[B->nthreads - 1] : 1;
	char hdr_last[16];
	print_verdict(res, n, common);
	if (cli_interrupted)
		say("INTERRUPTED after %.1f s: the figures below are what was measured until then (nan: not measured)",
		    wall_s);
	{
		char waited[96] = "", ctr[96];
		if (B->waited_ns > 100000000)
			snprintf(waited, sizeof(waited), ", %.1f s of it waiting for threads that got no CPU",
				 (double)B->waited_ns / 1e9);
		if (st->backend == FC_BACKEND_COUNTER)
			snprintf(ctr, sizeof(ctr), "counter %s at %.6f GHz", st->counter, (double)st->counter_hz / 1e9);
		else
			snprintf(ctr, sizeof(ctr), "fc_ticks returns CLOCK_MONOTONIC ns");
		say("fastclock bench: %zu clocks, %.1f s (--duration %.1f%s); fastclock backend %s (%s); %s", n, wall_s,
		    B->duration_s, waited, fc_backend_name(st->backend), st->reason, ctr);
	}
	/* Two tables of at most TEXT_COLS columns: cost, then resolution, deltas and threads. --json, --csv and
	 * --markdown have every figure (each thread count's rate, the delta and latency percentiles). */
	printf("\n%-34s %8s %15s %6s %5s %7s %8s %8s !\n", "clock", "ns/call", "[p25..p75]", "x vDSO", "x ctr",
	       "getres", "lat99.99", "lat max");
	for (size_t i = 0; i < n; i++) {
		struct result *r = &res[i];
		char rng[48], lo[16], hi[16], gr[16], l4[24], lm[24];
		snprintf(lo, sizeof(lo), r->cost_p25 < 1e4 ? "%.3g" : "%.0f", r->cost_p25);
		snprintf(hi, sizeof(hi), r->cost_p75 < 1e4 ? "%.3g" : "%.0f", r->cost_p75);
		snprintf(rng, sizeof(rng), "[%s..%s]", lo, hi);
		printf("%-34s %8.2f %15s %6.2f %5.2f %7s %8s %8s%s\n", r->c->name, r->cost_med, rng, r->x_vdso, r->x_ctr,
		       ns_cell(gr, sizeof(gr), r->getres_ns, "-"), ns_cell(l4, sizeof(l4), r->lat_p9999, "nan"),
		       ns_cell(lm, sizeof(lm), r->lat_max, "nan"), figure_flags(r) & ~common ? " !" : "");
	}
	say("ns/call: median over %ld interleaved rounds [p25..p75]; x vDSO, x ctr: per-round ratios to %s and to "
	    "the bare counter read; getres: clock_getres, ns; lat99.99, lat max: one read alone, ns (the slow path "
	    "of a re-anchor and interruptions are in this tail)", n ? res[0].reps : 0L, FCB_VDSO_REF);
	snprintf(hdr_last, sizeof(hdr_last), "M/s@%d", last_t);
	printf("\n%-34s %8s %6s %7s %7s %4s %8s %8s %5s %4s\n", "clock", "observed", "stale", "d50", "d99", "back",
	       "M/s@1", hdr_last, "eff", "cpu");
	for (size_t i = 0; i < n; i++) {
		struct result *r = &res[i];
		char ob[16], zp[16], d50[24], d99[24];
		int last = r->nthreads - 1;
		printf("%-34s %8s %6s %7s %7s %4ld %8.2f %8.2f %4.0f%% %3.0f%%\n", r->c->name,
		       ns_cell(ob, sizeof(ob), r->observed_ns, "-"), pct_cell(zp, sizeof(zp), r->zero, r->samples),
		       ns_cell(d50, sizeof(d50), r->d_p50, "nan"), ns_cell(d99, sizeof(d99), r->d_p99, "nan"), r->backward,
		       r->nthreads > 0 ? r->rate[0] / 1e6 : NAN, last == B->nthreads - 1 && last >= 0 ? r->rate[last] / 1e6 : NAN,
		       last >= 0 ? 100 * r->eff[last] : NAN, last >= 0 ? 100 * r->share[last] : NAN);
	}
	say("observed: the smallest non-zero delta, ns; stale: share of zero deltas; d50, d99: consecutive deltas, "
	    "ns; back: backward steps; M/s@T: million calls per second of T threads over one common window; eff: "
	    "rate(T) / (T x rate(1)) and cpu: the threads' CPU time / wall time (< 100%%: other load), at T = %d",
	    last_t);
	{
		int any = 0;
		for (size_t i = 0; i < n; i++) {
			char fl[80];
			int f = figure_flags(&res[i]) & ~common;
			if (!f)
				continue;
			if (!any)
				printf("\n");
			any = 1;
			say("! %s: %s", res[i].c->name, flag_text(f, fl, sizeof(fl)));
		}
		if (any)
			say("(!: figures that cannot be right: efficiency above 1.1 and rate: one thread's calls/s x cost off "
			    "2x, where the threads had their CPUs; cpu: threads got < 0.9 CPU; below-counter: cheaper than "
			    "its counter read; unstable: p75/p25 above 1.5)");
	}
	print_spacing_text();
	printf("\n");
	print_agreement_summary();
	if (B->reanchor_n)
		say("the reader that re-anchors (no keeper): fc_mono_ns after 1.5 periods without a read took %.0f ns "
		    "(median of %d; max %.0f), the read after it %.0f ns", B->reanchor_p50, B->reanchor_n, B->reanchor_max, B->steady_p50);
}

static void print_markdown(struct result *res, size_t n, const struct fc_status *st)
{
	struct utsname u;
	char cpu[256] = "?", cs[64] = "?";
	cli_cpu_model(cpu, sizeof(cpu));
	cli_read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", cs, sizeof(cs));
	printf("%s, %d CPUs, clocksource `%s`, Linux %s; fastclock backend `%s`; %ld rounds x %.3g ms batches\n\n",
	       cpu, cli_ncpus(), cs, uname(&u) == 0 ? u.release : "?", fc_backend_name(st->backend),
	       n ? res[0].reps : 0L, B->batch_ns / 1e6);
	printf("| clock | median ns/call | p25 – p75 | x vDSO MONOTONIC | x counter | counter |\n");
	printf("|---|---:|---:|---:|---:|---|\n");
	for (size_t i = 0; i < n; i++) {
		const struct result *r = &res[i];
		printf("| `%s` | %.2f | %.2f – %.2f | %.2f | %.2f | `%s` |\n", r->c->name, r->cost_med, r->cost_p25,
		       r->cost_p75, r->x_vdso, r->x_ctr, base_name(r->c));
	}
	printf("\n| clock |");
	for (int k = 0; k < B->nthreads; k++)
		printf(" %d thr: Mcalls/s, eff, cpu |", B->threads[k]);
	printf("\n|---|");
	for (int k = 0; k < B->nthreads; k++)
		printf("---:|");
	printf("\n");
	for (size_t i = 0; i < n; i++) {
		const struct result *r = &res[i];
		printf("| `%s` |", r->c->name);
		for (int k = 0; k < B->nthreads; k++)
			if (k < r->nthreads)
				printf(" %.1f, %.2f, %.2f |", r->rate[k] / 1e6, r->eff[k], r->share[k]);
			else
				printf(" - |");
		printf("\n");
	}
	printf("\n| clock | single read p50 ns | p99 | p99.9 | p99.99 | max |\n|---|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < n; i++) {
		const struct result *r = &res[i];
		printf("| `%s` | %.1f | %.1f | %.1f | %.1f | %.0f |\n", r->c->name, r->lat_p50, r->lat_p99, r->lat_p999,
		       r->lat_p9999, r->lat_max);
	}
	{
		/* The text output's check, said once: the tables carry no check column, and a busy machine's thread
		 * figures (cpu 0.10) were pasted as if they were the library's. A flag most clocks carry is the run's
		 * (as in the text's verdict): said as such, not as every clock's figure that cannot be right. */
		int count[NFLAGS] = {0}, flagged = 0, common = run_flags(res, n);
		for (size_t i = 0; i < n; i++) {
			int f = figure_flags(&res[i]) & ~common;
			flagged += f != 0;
			for (int k = 0; k < NFLAGS; k++)
				count[k] += (f >> k) & 1;
		}
		if (common) {
			printf("\nCheck: this run (most clocks):");
			for (int k = 0, first = 1; k < NFLAGS; k++)
				if (common & (1 << k)) {
					printf("%s %s", first ? "" : ";", flag_words[k]);
					first = 0;
				}
			printf(": re-run on a quiet machine before quoting these tables.\n");
		}
		if (flagged) {
			printf("\nCheck: %d of %zu clocks have a figure that cannot be right (", flagged, n);
			for (int k = 0, first = 1; k < NFLAGS; k++)
				if (count[k]) {
					printf("%s%s %d", first ? "" : ", ", flag_names[k], count[k]);
					first = 0;
				}
			printf("; `fastclock bench` prints them per clock)%s.\n",
			       common ? "" : ": re-run on a quiet machine before quoting these tables");
		}
	}
	print_spacing_markdown();
	if (B->reanchor_n)
		printf("\nThe reader that re-anchors (`fc_mono_ns` after 1.5 periods without a read, no updater): %.0f ns "
		       "(median of %d, max %.0f); the read after it %.0f ns.\n", B->reanchor_p50, B->reanchor_n,
		       B->reanchor_max, B->steady_p50);
}

static int selected(const struct result *res, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(res[i].c->name, name))
			return 1;
	return 0;
}

static void print_csv(struct result *res, size_t n)
{
	printf("clock,stat,value\n");
	for (size_t i = 0; i < n; i++) {
		const struct result *r = &res[i];
		const struct {
			const char *name;
			double v;
		} rows[] = {
			{"cost_ns", r->cost_med},
			{"cost_p25_ns", r->cost_p25},
			{"cost_p75_ns", r->cost_p75},
			{"cost_min_ns", r->cost_min},
			{"cost_max_ns", r->cost_max},
			{"cost_reps", (double)r->reps},
			{"cost_batch", (double)r->batch},
			{"x_vdso", r->x_vdso},
			{"x_counter", r->x_ctr},
			{"over_counter_ns", r->over_ctr},
			{"getres_ns", r->getres_ns},
			{"nominal_resolution_ns", r->c->nominal_res_ns > 0 ? r->c->nominal_res_ns : NAN},
			{"observed_resolution_ns", r->observed_ns},
			{"delta_samples", (double)r->samples},
			{"staleness", r->samples ? (double)r->zero / (double)r->samples : NAN},
			{"backward_steps", (double)r->backward},
			{"delta_min_ns", r->d_min},
			{"delta_p25_ns", r->d_p25},
			{"delta_p50_ns", r->d_p50},
			{"delta_p75_ns", r->d_p75},
			{"delta_p99_ns", r->d_p99},
			{"delta_max_ns", r->d_max},
			{"latency_samples", (double)r->lat_samples},
			{"latency_p50_ns", r->lat_p50},
			{"latency_p99_ns", r->lat_p99},
			{"latency_p99_9_ns", r->lat_p999},
			{"latency_p99_99_ns", r->lat_p9999},
			{"latency_max_ns", r->lat_max},
		};
		for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++)
			cli_csv_row(r->c->name, rows[k].name, -1, rows[k].v);
		for (int k = 0; k < r->nthreads; k++) {
			cli_csv_row(r->c->name, "calls_per_s_t", B->threads[k], r->rate[k]);
			cli_csv_row(r->c->name, "efficiency_t", B->threads[k], r->eff[k]);
			cli_csv_row(r->c->name, "cpu_share_t", B->threads[k], r->share[k]);
		}
	}
	/* reads after a pause: on the fastclock read's name when --clocks selects it (every row names a selected
	 * clock), one row per figure and pause (in ns, the suffix) */
	for (int p = 0; p < SPACING_PAIRS && B->spacing_measured; p++)
		for (int r = 0; r < SPACING_ROWS && selected(res, n, bench_spacing_fc[p]); r++) {
			const struct spacing_cell *c = &B->spacing[r][p];
			const struct {
				const char *name;
				double v;
			} rows[] = {
				{"pause_samples_", (double)c->n},
				{"pause_p50_ns_", c->fc[0]},
				{"pause_p90_ns_", c->fc[1]},
				{"pause_p99_ns_", c->fc[2]},
				{"pause_vdso_p50_ns_", c->vd[0]},
				{"pause_vdso_p90_ns_", c->vd[1]},
				{"pause_vdso_p99_ns_", c->vd[2]},
				{"pause_x_vdso_p50_", spacing_x(c, 0)},
				{"pause_x_vdso_p99_", spacing_x(c, 2)},
			};
			for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++)
				cli_csv_row(bench_spacing_fc[p], rows[k].name, (int)bench_spacing_ns[r], rows[k].v);
		}
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
	char model[256] = "", hn[256] = "", cs[64] = "", avail[256] = "";
	cli_cpu_model(model, sizeof(model));
	gethostname(hn, sizeof(hn) - 1);
	cli_read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", cs, sizeof(cs));
	cli_read_line("/sys/devices/system/clocksource/clocksource0/available_clocksource", avail, sizeof(avail));
	jw_obj(j, "host");
	jw_str(j, "hostname", hn);
	jw_str(j, "kernel", uname(&u) == 0 ? u.release : NULL);
	jw_str(j, "machine", uname(&u) == 0 ? u.machine : NULL);
	jw_str(j, "cpu_model", model);
	jw_int(j, "ncpus", cli_ncpus());
	jw_str(j, "clocksource", cs);
	jw_str(j, "available_clocksources", avail);
	jw_end_obj(j);
}

/* An array of n numbers on one line, each rounded to 1/scale. */
static void jw_flat(struct jw *j, const char *key, const double *v, size_t n, double scale)
{
	int save = j->pretty;
	jw_arr(j, key);
	j->pretty = 0;
	for (size_t i = 0; i < n; i++)
		jw_num(j, NULL, round(v[i] * scale) / scale);
	jw_end_arr(j);
	j->pretty = save;
}

void bench_json_agreement(struct jw *j, const struct agree_series *a)
{
	jw_obj(j, "agreement");
	jw_int(j, "samples", (int64_t)a->n);
	jw_flat(j, "t_s", a->t_s, a->n, 1e6);
	jw_flat(j, "mono_err_ns", a->mono_err, a->n, 10);
	jw_flat(j, "mono_half_ns", a->mono_half, a->n, 10);
	jw_flat(j, "real_err_ns", a->real_err, a->n, 10);
	jw_flat(j, "real_half_ns", a->real_half, a->n, 10);
	jw_end_obj(j);
}

static void json_clock(struct jw *j, const struct result *r)
{
	double edges[HIST_NBINS + 1], counts[HIST_NBINS];
	jw_obj(j, NULL);
	jw_str(j, "name", r->c->name);
	jw_str(j, "group", r->c->group);
	jw_str(j, "timeline", r->c->timeline);
	jw_str(j, "call", r->c->call);
	jw_obj(j, "cost");
	jw_num(j, "median_ns", r->cost_med);
	jw_num(j, "p25_ns", r->cost_p25);
	jw_num(j, "p75_ns", r->cost_p75);
	jw_num(j, "min_ns", r->cost_min);
	jw_num(j, "max_ns", r->cost_max);
	jw_num(j, "spread_pct", r->cost_med > 0 ? 100 * (r->cost_p75 - r->cost_p25) / r->cost_med : NAN);
	jw_int(j, "reps", r->reps);
	jw_int(j, "batch", r->batch);
	jw_num(j, "x_vdso", r->x_vdso);
	jw_num(j, "x_counter", r->x_ctr);
	jw_str(j, "counter_base", *base_name(r->c) ? base_name(r->c) : NULL);
	jw_num(j, "over_counter_ns", r->over_ctr);
	jw_end_obj(j);
	jw_obj(j, "resolution");
	jw_num(j, "getres_ns", r->getres_ns);
	jw_num(j, "nominal_ns", r->c->nominal_res_ns > 0 ? r->c->nominal_res_ns : NAN);
	jw_num(j, "observed_ns", r->observed_ns);
	jw_end_obj(j);
	jw_obj(j, "deltas");
	jw_int(j, "samples", r->samples);
	jw_num(j, "zero_share", r->samples ? (double)r->zero / (double)r->samples : NAN);
	jw_int(j, "backward_steps", r->backward);
	jw_num(j, "min_ns", r->d_min);
	jw_num(j, "p25_ns", r->d_p25);
	jw_num(j, "p50_ns", r->d_p50);
	jw_num(j, "p75_ns", r->d_p75);
	jw_num(j, "p99_ns", r->d_p99);
	jw_num(j, "max_ns", r->d_max);
	jw_obj(j, "histogram");
	for (int b = 0; b <= HIST_NBINS; b++) {
		edges[b] = pow(10.0, HIST_LO_EXP + (double)b / HIST_DECADE_STEPS);
		edges[b] = edges[b] < 1 ? round(edges[b] * 1e4) / 1e4 : round(edges[b] * 100) / 100;
		if (b < HIST_NBINS)
			counts[b] = (double)r->hist[b];
	}
	jw_flat(j, "edges_ns", edges, (size_t)HIST_NBINS + 1, 1e4);
	jw_flat(j, "counts", counts, (size_t)HIST_NBINS, 1);
	jw_int(j, "zero", r->zero);
	jw_int(j, "negative", r->backward);
	jw_end_obj(j);
	jw_end_obj(j);
	{
		int f = figure_flags(r);
		jw_arr(j, "flags");
		for (int k = 0; k < NFLAGS; k++)
			if (f & (1 << k))
				jw_str(j, NULL, flag_names[k]);
		jw_end_arr(j);
	}
	jw_obj(j, "latency");
	jw_int(j, "samples", r->lat_samples);
	jw_num(j, "p50_ns", r->lat_p50);
	jw_num(j, "p99_ns", r->lat_p99);
	jw_num(j, "p99_9_ns", r->lat_p999);
	jw_num(j, "p99_99_ns", r->lat_p9999);
	jw_num(j, "max_ns", r->lat_max);
	jw_end_obj(j);
	jw_arr(j, "threads");
	for (int k = 0; k < r->nthreads; k++) {
		jw_obj(j, NULL);
		jw_int(j, "threads", B->threads[k]);
		jw_num(j, "calls_per_s", round(r->rate[k]));
		jw_num(j, "efficiency", round(r->eff[k] * 1e4) / 1e4);
		jw_num(j, "cpu_share", round(r->share[k] * 1e4) / 1e4);
		jw_end_obj(j);
	}
	jw_end_arr(j);
	jw_end_obj(j);
}

static void print_json(struct result *res, size_t n, double wall_s, const struct fc_status *st)
{
	struct jw j;
	jw_begin_doc(&j, "bench");
	jw_created_utc(&j);
	bench_json_host(&j);
	json_fastclock(&j, st);
	jw_obj(&j, "config");
	jw_num(&j, "duration_s", B->duration_s);
	jw_arr(&j, "threads");
	for (int k = 0; k < B->nthreads; k++)
		jw_int(&j, NULL, B->threads[k]);
	jw_end_arr(&j);
	jw_bool(&j, "updater", B->updater);
	jw_int(&j, "batch_target_ns", (int64_t)B->batch_ns);
	jw_str(&j, "method", "cost: median over interleaved rounds of one batch of n calls per clock, summed into a "
			     "volatile sink, timed with clock_gettime(CLOCK_MONOTONIC) as 0.1 ms sub-batches, those over 2x "
			     "their median (descheduled) dropped; ratios taken within each round");
	jw_end_obj(&j);
	jw_num(&j, "wall_s", round(wall_s * 1000) / 1000);
	jw_num(&j, "waited_for_cpu_s", round((double)B->waited_ns / 1e6) / 1000);
	jw_bool(&j, "interrupted", cli_interrupted != 0);
	jw_arr(&j, "clocks");
	for (size_t i = 0; i < n; i++)
		json_clock(&j, &res[i]);
	jw_end_arr(&j);
	jw_obj(&j, "reanchor_read");
	jw_int(&j, "samples", B->reanchor_n);
	jw_num(&j, "p50_ns", B->reanchor_n ? B->reanchor_p50 : NAN);
	jw_num(&j, "max_ns", B->reanchor_n ? B->reanchor_max : NAN);
	jw_num(&j, "next_read_p50_ns", B->reanchor_n ? B->steady_p50 : NAN);
	jw_end_obj(&j);
	json_spacing(&j);
	bench_json_agreement(&j, &B->agree);
	jw_end_obj(&j);
}

void bench_render(const struct bench_cfg *cfg, struct result *res, size_t n, double wall_s,
		  const struct fc_status *st)
{
	B = cfg;
	if (cfg->out == OUT_JSON)
		print_json(res, n, wall_s, st);
	else if (cfg->out == OUT_CSV)
		print_csv(res, n);
	else if (cfg->out == OUT_MARKDOWN)
		print_markdown(res, n, st);
	else
		print_text(res, n, wall_s, st);
}
