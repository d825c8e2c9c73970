/*
 * What the measurement engine (bench.c) hands its renderers (bench_out.c): the per-clock results, the run's
 * configuration and the histogram's layout. Private to `fastclock bench`.
 */
#ifndef FASTCLOCK_CLI_BENCH_H
#define FASTCLOCK_CLI_BENCH_H

#include <fastclock.h>

#include "cli.h"
#include "clocks.h"

#define MAX_COUNTS 64            /* thread counts in one run */
#define HIST_DECADE_STEPS 5      /* histogram bins per decade */
#define HIST_LO_EXP (-1)         /* 0.1 ns */
#define HIST_HI_EXP 10           /* 10 s */
#define HIST_NBINS ((HIST_HI_EXP - HIST_LO_EXP) * HIST_DECADE_STEPS)

struct result {
	const struct fcb_clock *c;
	double ns_per_unit;
	/* cost */
	double cost_med, cost_p25, cost_p75, cost_min, cost_max, x_vdso, x_ctr, over_ctr;
	long reps, batch;
	/* resolution */
	double getres_ns; /* NAN: no clock id */
	double observed_ns;
	/* deltas */
	long samples, zero, backward;
	double d_min, d_p25, d_p50, d_p75, d_p99, d_max;
	/* single-read latency (ns, the bracketing counter reads' own cost taken off): NAN when not measured */
	long lat_samples;
	double lat_p50, lat_p99, lat_p999, lat_p9999, lat_max;
	long hist[HIST_NBINS];
	/* threads: the first nthreads of B.threads were measured */
	int nthreads;
	double rate[MAX_COUNTS], eff[MAX_COUNTS], share[MAX_COUNTS];
};

enum { OUT_TEXT, OUT_JSON, OUT_CSV, OUT_MARKDOWN };

/* Reads after a pause: SPACING_PAIRS fastclock reads, each beside its vDSO counterpart, at SPACING_ROWS
 * spacings (bench.c's measure_spacing). Percentiles are p50, p90, p99 in ns (NAN: no sample). */
#define SPACING_ROWS 7
#define SPACING_PAIRS 4
extern const int64_t bench_spacing_ns[SPACING_ROWS];
extern const char *const bench_spacing_fc[SPACING_PAIRS], *const bench_spacing_vdso[SPACING_PAIRS];
struct spacing_cell {
	long n;                    /* reads of each side timed */
	double fc[3], vd[3];       /* p50, p90, p99 of fastclock's read and of the vDSO's */
	double fc_gap50, vd_gap50; /* median time since that side's previous read, ns */
};

/* The run's configuration (the options) and its agreement series. */
struct bench_cfg {
	double duration_s, batch_ns;
	int threads[MAX_COUNTS];
	int nthreads;
	int out, updater, list;
	const char *clocks;
	int64_t t0;
	struct agree_series agree;
	double ns_per_tick;
	int64_t waited_ns; /* time spent waiting for a CPU: workers to start, run and stop; this thread runnable */
	double ctr_ns_per_tick;  /* fcb_ctr_ordered's unit in ns (NAN: a counter of unknown rate) */
	double lat_overhead;     /* ticks between two back-to-back fcb_ctr_ordered reads (median) */
	/* the reader that re-anchors: fc_mono_ns after 1.5 periods without a read and with no updater running */
	int reanchor_n;
	double reanchor_p50, reanchor_max, steady_p50; /* ns; steady: the read right after it */
	/* reads after a pause (spacing_measured 0: not measured: the counter's rate is unknown, or interrupted) */
	int spacing_measured;
	double spacing_budget_s;
	char spacing_period[96]; /* the period they had, as the library took FASTCLOCK_PERIOD_US (bench.c) */
	struct spacing_cell spacing[SPACING_ROWS][SPACING_PAIRS];
};

/* Print the run in the format cfg->out names (text, JSON, CSV, Markdown) on standard output. */
void bench_render(const struct bench_cfg *cfg, struct result *res, size_t n, double wall_s,
		  const struct fc_status *st);

#endif
