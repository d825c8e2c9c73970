/*
 * fastclock check — run fastclock against the kernel for S seconds; exit 1 on any violation.
 *
 * One thread per CPU (at least 2), each pinned to its own CPU, runs two duties interleaved:
 *   bracket   k1 = clock_gettime(MONOTONIC); f = fc_mono_ns(); k2 = clock_gettime(MONOTONIC) must satisfy
 *             k1 - slack <= f <= k2 + slack, and the same for fc_real_ns against CLOCK_REALTIME (skipped
 *             for a grace window after the kernel's wall clock is seen to step). slack = --slack-ns plus
 *             the documented error bound at that moment (fc_mono_bounded's half-width).
 *             Per thread: fc_mono_ns, fc_mono_ns_relaxed, fc_real_ns (between steps), fc_ticks,
 *             fc_ticks_relaxed and fc_mono_coarse_ns never go back; a coarse value is never ahead of a
 *             precise read taken after it.
 *   causality a token goes round the threads in a ring (release/acquire handoff); the holder reads
 *             fc_mono_ns() and fc_ticks() and must see values >= those the previous holder published.
 *             Passing the token through every thread exercises every pair of neighbouring cores. With one
 *             thread there is no ring: that thread brackets only, and the output says causality was not
 *             checked. A run lasts until one bracketed read was made (and the self-test's perturbation
 *             applied), however short S: the threads' progress decides, not the wall clock; a run that made no
 *             bracketed read (no progress for 10 s) fails: it checked nothing.
 * SIGINT ends the run early: the summary of what was checked is printed with a note (exit 130, or 1 on a
 * violation). Calls the shared helpers (cli.h) and the public <fastclock.h> only.
 * Self-test: FASTCLOCK_CHECK_INJECT=backstep|bracket|causality perturbs one observed value (thread 0's
 * 10th bracket read, or the 3rd token handoff) so the check must fail; the tests prove it can.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <fastclock.h>

#include "cli.h"

#define DEFAULT_DURATION_S 5.0
#define MAX_DURATION_S 604800.0   /* one week: a soak test, not a mistake */
#define DEFAULT_SLACK_NS 1000     /* clock_gettime's own granularity on a loaded VM, on top of the bound */
#define STEP_MARGIN_NS 1000       /* REALTIME - MONOTONIC left its bracketed interval by > 1 us: a step */
#define INJECT_AT_ITER 10
#define INJECT_AT_ROUND 3
#define INJECT_NS 1000000         /* 1 ms: far outside any bound */
#define AGREE_EVERY_NS 10000000   /* thread 0 records the agreement series every 10 ms */
#define MAX_THREADS 256
#define MAX_REPORTED 10

enum { V_MONO_BRACKET, V_REAL_BRACKET, V_MONO_BACK, V_RELAXED_BACK, V_REAL_BACK, V_TICKS_BACK,
       V_TICKS_RELAXED_BACK, V_COARSE_BACK, V_COARSE_AHEAD, V_CAUSALITY, V_CAUSALITY_TICKS, V_N };
static const char *const vnames[V_N] = {"mono_outside_bracket", "real_outside_bracket", "mono_backward",
					"mono_relaxed_backward", "real_backward", "ticks_backward",
					"ticks_relaxed_backward", "coarse_backward", "coarse_ahead_of_precise",
					"causality_mono", "causality_ticks"};

enum { INJ_NONE, INJ_BACKSTEP, INJ_BRACKET, INJ_CAUSALITY };

struct vrec {
	int kind, thread;
	long long a, b; /* observed, limit */
};

struct tstate {
	pthread_t th;
	int idx;
	unsigned long long iters, rounds;
	unsigned long long v[V_N];
	int64_t worst_mono_below, worst_mono_above, worst_real_below, worst_real_above;
	int64_t max_bound;
	unsigned long long steps_seen;
};

static struct {
	double duration_s;
	int nthreads;
	int64_t slack_ns;
	int json;
	int inject, injected;
	int go, stop;
	uint64_t turn;
	int64_t pp_mono;
	uint64_t pp_ticks;
	pthread_mutex_t lock;
	struct vrec rec[MAX_REPORTED];
	int nrec;
	int64_t grace_ns;
	int64_t t0;
	/* agreement series (thread 0 only) */
	struct agree_series agree;
} C;

static const char check_help[] =
	"usage: fastclock check [--duration S] [--threads N] [--slack-ns NS] [--json]\n"
	"       fastclock check --bound [--duration S] [--reference-offset-ns N] [--json]\n"
	"\n"
	"Run fastclock against the kernel for S seconds (default 5) on every CPU and exit 1 on any violation:\n"
	"  - bracketed agreement: clock_gettime before <= fastclock <= clock_gettime after, within slack plus\n"
	"    the documented error bound, for CLOCK_MONOTONIC (fc_mono_ns) and CLOCK_REALTIME (fc_real_ns);\n"
	"  - per-thread monotonicity of fc_mono_ns, fc_mono_ns_relaxed, fc_real_ns, fc_ticks,\n"
	"    fc_ticks_relaxed and fc_mono_coarse_ns, and coarse never ahead of precise;\n"
	"  - cross-thread causality: a token passed round all threads (release/acquire) never sees\n"
	"    fc_mono_ns or fc_ticks go back.\n"
	"\n"
	"  --duration S    seconds to run, at most 604800 (default 5)\n"
	"  --threads N     threads 1..256, each pinned to a CPU (default: the CPUs this process may use, at least 2;\n"
	"                  with 1, no cross-thread causality check)\n"
	"  --slack-ns NS   tolerance added to the documented bound (default 1000)\n"
	"  --json          one JSON document on stdout (schema: share/fastclock/bench.schema.json, \"check\")\n"
	"  --bound         check fc_real_bounded instead: print its source, status and half-width, and whether\n"
	"                  its interval held the kernel's CLOCK_REALTIME (and, with --reference-offset-ns N, a\n"
	"                  reference known to be CLOCK_REALTIME + N, as the fleet tests build one) at every read\n"
	"\n"
	"Self-test: FASTCLOCK_CHECK_INJECT=backstep|bracket|causality perturbs one observed value so the check\n"
	"must fail (exit 1). Ctrl-C ends the run early and prints what was checked.\n"
	"Exit codes: 0 no violation (--bound: also where no read promised an interval, said as 'nothing to\n"
	"check'), 1 violation (or no bracketed read made), 2 bad usage, 3 the output could not be written,\n"
	"130 interrupted without a violation.\n";

static void violation(struct tstate *t, int kind, int64_t a, int64_t b)
{
	__atomic_store_n(&t->v[kind], t->v[kind] + 1, __ATOMIC_RELAXED); /* the progress line reads it */
	pthread_mutex_lock(&C.lock);
	if (C.nrec < MAX_REPORTED)
		C.rec[C.nrec++] = (struct vrec){kind, t->idx, (long long)a, (long long)b};
	pthread_mutex_unlock(&C.lock);
}

static void pingpong(struct tstate *t, uint64_t turn)
{
	int64_t seen = __atomic_load_n(&C.pp_mono, __ATOMIC_RELAXED);
	uint64_t seen_t = __atomic_load_n(&C.pp_ticks, __ATOMIC_RELAXED);
	int64_t v = fc_mono_ns(); /* happens-after the previous holder's reads, through C.turn */
	uint64_t tk = fc_ticks();
	if (C.inject == INJ_CAUSALITY && turn == INJECT_AT_ROUND) {
		v = seen - INJECT_NS;
		__atomic_store_n(&C.injected, 1, __ATOMIC_RELAXED); /* check_run polls it */
	}
	if (turn > 0 && v < seen)
		violation(t, V_CAUSALITY, v, seen);
	if (turn > 0 && tk < seen_t)
		violation(t, V_CAUSALITY_TICKS, (int64_t)tk, (int64_t)seen_t);
	__atomic_store_n(&C.pp_mono, v, __ATOMIC_RELAXED);
	__atomic_store_n(&C.pp_ticks, tk, __ATOMIC_RELAXED);
	t->rounds++;
	__atomic_store_n(&C.turn, turn + 1, __ATOMIC_RELEASE);
}

/* One bracketed read v of a clock, taken between kernel reads lo and hi: a violation if it lies more than
 * slack outside [lo, hi] or below the thread's previous read of that clock; records how far outside it was. */
static void check_read(struct tstate *t, int kind_bracket, int kind_back, int64_t v, int64_t lo, int64_t hi,
		       int64_t slack, int64_t *worst_below, int64_t *worst_above, int64_t *last)
{
	if (v < lo - slack)
		violation(t, kind_bracket, v - lo, -slack);
	if (v > hi + slack)
		violation(t, kind_bracket, v - hi, slack);
	if (lo - v > *worst_below)
		*worst_below = lo - v;
	if (v - hi > *worst_above)
		*worst_above = v - hi;
	if (v < *last)
		violation(t, kind_back, v, *last);
	*last = v;
}

static void *checker(void *arg)
{
	struct tstate *t = arg;
	int64_t last_mono = INT64_MIN, last_rel = INT64_MIN, last_real = INT64_MIN, last_coarse = INT64_MIN;
	uint64_t last_ticks = 0, last_ticks_rel = 0;
	int64_t off_lo_prev = 0, off_hi_prev = 0, grace_until = INT64_MIN, next_agree = 0;
	int have_off = 0;
	cli_pin_thread(t->idx);
	while (!__atomic_load_n(&C.go, __ATOMIC_ACQUIRE))
		;
	while (!__atomic_load_n(&C.stop, __ATOMIC_RELAXED)) {
		uint64_t turn = __atomic_load_n(&C.turn, __ATOMIC_ACQUIRE);
		struct bracket b;
		int64_t k3, bound, slack, off_lo, off_hi, rel, coarse, after;
		uint64_t tk, tkr;
		struct fc_interval iv;
		if (C.nthreads > 1 && turn % (uint64_t)C.nthreads == (uint64_t)t->idx) {
			pingpong(t, turn);
			continue;
		}
		__atomic_store_n(&t->iters, t->iters + 1, __ATOMIC_RELAXED); /* one writer; the progress line reads it */
		bracket_read(&b);
		k3 = cli_ns(CLOCK_MONOTONIC);
		if (t->idx == 0 && t->iters == INJECT_AT_ITER) {
			if (C.inject == INJ_BACKSTEP) {
				b.f = (last_mono > INT64_MIN ? last_mono : b.f) - INJECT_NS;
				__atomic_store_n(&C.injected, 1, __ATOMIC_RELAXED);
			} else if (C.inject == INJ_BRACKET) {
				b.f += INJECT_NS;
				__atomic_store_n(&C.injected, 1, __ATOMIC_RELAXED);
			}
		}
		fc_mono_bounded(&iv);
		bound = (iv.latest_ns - iv.earliest_ns) / 2;
		if (bound > t->max_bound)
			t->max_bound = bound;
		slack = C.slack_ns + bound;
		/* monotonic against the kernel's bracket */
		check_read(t, V_MONO_BRACKET, V_MONO_BACK, b.f, b.k1, b.k2, slack, &t->worst_mono_below,
			   &t->worst_mono_above, &last_mono);
		/* realtime: the kernel's offset REALTIME - MONOTONIC changes only when the clock is stepped (slews
		 * move both clocks alike). k2 <= r1 <= k3 in time bound it: r1 - k3 <= offset <= r1 - k2. */
		off_lo = b.r1 - k3;
		off_hi = b.r1 - b.k2;
		if (have_off && (off_hi < off_lo_prev - STEP_MARGIN_NS || off_lo > off_hi_prev + STEP_MARGIN_NS)) {
			grace_until = k3 + C.grace_ns;
			t->steps_seen++;
			last_real = INT64_MIN;
		}
		off_lo_prev = off_lo;
		off_hi_prev = off_hi;
		have_off = 1;
		if (b.k2 >= grace_until)
			check_read(t, V_REAL_BRACKET, V_REAL_BACK, b.g, b.r1, b.r2, slack, &t->worst_real_below,
				   &t->worst_real_above, &last_real);
		/* the other readers, each against its own previous value */
		rel = fc_mono_ns_relaxed();
		if (rel < last_rel)
			violation(t, V_RELAXED_BACK, rel, last_rel);
		last_rel = rel;
		tk = fc_ticks();
		if (tk < last_ticks)
			violation(t, V_TICKS_BACK, (int64_t)tk, (int64_t)last_ticks);
		last_ticks = tk;
		tkr = fc_ticks_relaxed();
		if (tkr < last_ticks_rel)
			violation(t, V_TICKS_RELAXED_BACK, (int64_t)tkr, (int64_t)last_ticks_rel);
		last_ticks_rel = tkr;
		coarse = fc_mono_coarse_ns();
		after = fc_mono_ns();
		if (coarse < last_coarse)
			violation(t, V_COARSE_BACK, coarse, last_coarse);
		if (coarse > after)
			violation(t, V_COARSE_AHEAD, coarse, after);
		last_coarse = coarse;
		if (t->idx == 0 && b.k2 >= next_agree) {
			agree_push(&C.agree, C.t0, &b);
			next_agree = b.k2 + AGREE_EVERY_NS;
		}
	}
	return NULL;
}


/* The options, as given (what was set explicitly, so that options with no meaning in a mode are refused). */
struct check_opts {
	int bound, have_ref, threads_set, slack_set;
	long ref_off;
	const char *inj;
};

/* fastclock check --bound: bracketed bounded reads for C.duration_s (until SIGINT); 0 if every claimed
 * interval held the reference (with --reference-offset-ns; else the kernel's CLOCK_REALTIME), 1 if one did not,
 * 130 if interrupted. */
static int check_bound(const struct check_opts *o)
{
	struct fc_status st;
	uint64_t n = 0, claimed = 0, miss_kernel = 0, miss_ref = 0;
	int64_t end, max_half = 0, next_progress = 0;
	int last = -1, held;
	double wall;
	cli_catch_interrupt();
	fc_init();
	C.t0 = cli_ns(CLOCK_MONOTONIC);
	end = C.t0 + (int64_t)(C.duration_s * 1e9);
	for (int64_t now = C.t0; now < end && !cli_interrupted; now = cli_ns(CLOCK_MONOTONIC)) {
		struct fc_interval iv;
		int64_t r1 = cli_ns(CLOCK_REALTIME), r2;
		fc_real_bounded(&iv);
		r2 = cli_ns(CLOCK_REALTIME);
		n++;
		last = iv.status;
		if (now >= next_progress) {
			cli_progress(C.t0, C.duration_s, "check --bound: %llu reads, %llu outside", (unsigned long long)n,
				     (unsigned long long)miss_kernel + (unsigned long long)miss_ref);
			next_progress = now + 1000000000;
		}
		if (iv.status != FC_SYNC_SYNCHRONIZED && iv.status != FC_SYNC_FREE_RUNNING)
			continue; /* no promise made */
		claimed++;
		if ((iv.latest_ns - iv.earliest_ns) / 2 > max_half)
			max_half = (iv.latest_ns - iv.earliest_ns) / 2;
		/* the read happened in [r1, r2]: the interval must reach into that span, shifted by the offset */
		miss_kernel += iv.earliest_ns > r2 || iv.latest_ns < r1;
		miss_ref += o->have_ref && (iv.earliest_ns > r2 + o->ref_off || iv.latest_ns < r1 + o->ref_off);
	}
	cli_progress_done();
	wall = (double)(cli_ns(CLOCK_MONOTONIC) - C.t0) / 1e9;
	fc_status(&st);
	/* with a reference, it alone decides: an interval that follows chronyd's estimate excludes the kernel's
	 * clock for as long as chronyd says that clock is off (chronyd -x: for ever); without one the kernel's
	 * clock is all there is to judge by */
	held = o->have_ref ? !miss_ref : !miss_kernel;
	if (C.json) {
		struct jw j;
		jw_begin_doc(&j, "check-bound");
		bench_json_host(&j);
		jw_num(&j, "duration_s", C.duration_s);
		jw_num(&j, "wall_s", round(wall * 1000) / 1000);
		jw_str(&j, "source", st.bound_source);
		jw_str(&j, "why", st.bound_why);
		jw_str(&j, "status", last >= 0 ? fc_sync_name(last) : NULL);
		jw_str(&j, "reason", st.bound_reason);
		jw_str(&j, "last_error", st.bound_error[0] ? st.bound_error : NULL);
		jw_int(&j, "reads", (int64_t)n);
		jw_int(&j, "claimed", (int64_t)claimed);
		if (claimed)
			jw_int(&j, "max_half_width_ns", max_half);
		else
			jw_null(&j, "max_half_width_ns"); /* no promise: 0 would read as a zero-width bound */
		jw_int(&j, "kernel_outside", (int64_t)miss_kernel);
		if (o->have_ref) {
			jw_int(&j, "reference_offset_ns", o->ref_off);
			jw_int(&j, "reference_outside", (int64_t)miss_ref);
		}
		jw_bool(&j, "interrupted", cli_interrupted != 0);
		jw_bool(&j, "passed", held);
		jw_end_obj(&j);
	} else {
		printf("bound source   %s (%s)\n", st.bound_source, st.bound_why);
		printf("status         %s: %s\n", last >= 0 ? fc_sync_name(last) : "-", st.bound_reason);
		if (claimed)
			printf("half-width     max %.3f us over %llu reads (%llu with a promise)\n", max_half / 1e3,
			       (unsigned long long)n, (unsigned long long)claimed);
		else
			printf("half-width     none: no read of %llu promised an interval\n", (unsigned long long)n);
		if (st.bound_error[0])
			printf("last error     %s\n", st.bound_error);
		if (claimed)
			printf("kernel         %s (%llu reads outside)\n",
			       !miss_kernel ? "held" : o->have_ref ? "outside, not judged: the reference decides" : "NOT held",
			       (unsigned long long)miss_kernel);
		else /* "held" would read as a bound that was tested and passed */
			printf("kernel         nothing to check: no read promised an interval (the last said %s)\n",
			       last >= 0 ? fc_sync_name(last) : "-");
		if (o->have_ref)
			printf("reference      %s (CLOCK_REALTIME %+lld ns; %llu reads outside)\n",
			       miss_ref ? "NOT held" : "held", (long long)o->ref_off, (unsigned long long)miss_ref);
		if (cli_interrupted)
			printf("INTERRUPTED after %.1f of %.1f s: the figures above cover that time only\n", wall,
			       C.duration_s);
	}
	return held ? cli_interrupted_exit() : CLI_EXIT_FAIL;
}

/* Parse the options into C and *o. Returns -1 to go on, else the exit code. */
static int check_parse(int argc, char **argv, struct check_opts *o)
{
	C.duration_s = DEFAULT_DURATION_S;
	C.slack_ns = DEFAULT_SLACK_NS;
	C.nthreads = cli_ncpus() < 2 ? 2 : cli_ncpus();
	if (C.nthreads > MAX_THREADS)
		C.nthreads = MAX_THREADS;
	for (int i = 1; i < argc; i++) {
		const char *v;
		int m;
		long n;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(check_help, stdout);
			return CLI_EXIT_OK;
		} else if (!strcmp(argv[i], "--json")) {
			C.json = 1;
		} else if (!strcmp(argv[i], "--bound")) {
			o->bound = 1;
		} else if ((m = cli_opt(argc, argv, &i, "--reference-offset-ns", &v)) != 0) {
			if (m < 0)
				return CLI_EXIT_USAGE;
			if (cli_parse_long(v, &n) || n < -3600000000000L || n > 3600000000000L)
				return cli_usage_error("bad --reference-offset-ns '%s' (-3.6e12..3.6e12)", v);
			o->ref_off = n, o->have_ref = 1;
		} else if ((m = cli_opt_num(argc, argv, &i, "--duration", 0, MAX_DURATION_S, "seconds", &C.duration_s))) {
			if (m < 0)
				return CLI_EXIT_USAGE;
		} else if ((m = cli_opt(argc, argv, &i, "--threads", &v)) != 0) {
			if (m < 0)
				return CLI_EXIT_USAGE;
			if (cli_parse_long(v, &n) || n < 1 || n > MAX_THREADS)
				return cli_usage_error("bad --threads '%s' (1..%d)", v, MAX_THREADS);
			C.nthreads = (int)n, o->threads_set = 1;
		} else if ((m = cli_opt(argc, argv, &i, "--slack-ns", &v)) != 0) {
			if (m < 0)
				return CLI_EXIT_USAGE;
			if (cli_parse_long(v, &n) || n < 0 || n > 1000000000L)
				return cli_usage_error("bad --slack-ns '%s' (0..1000000000)", v);
			C.slack_ns = n, o->slack_set = 1;
		} else if (argv[i][0] == '-') {
			return cli_usage_error("unknown option '%s' (see 'fastclock check --help')", argv[i]);
		} else {
			return cli_usage_error("unexpected argument '%s' (see 'fastclock check --help')", argv[i]);
		}
	}
	/* an option the mode does not use is an error, never silently ignored */
	if (o->bound && (o->threads_set || o->slack_set))
		return cli_usage_error("%s has no meaning with --bound (one thread reads fc_real_bounded)",
				       o->threads_set ? "--threads" : "--slack-ns");
	if (!o->bound && o->have_ref)
		return cli_usage_error("--reference-offset-ns needs --bound");
	o->inj = secure_getenv("FASTCLOCK_CHECK_INJECT"); /* a test seam: never a caller's, were this tool set-user-ID */
	if (o->inj && *o->inj) {
		if (o->bound)
			return cli_usage_error("FASTCLOCK_CHECK_INJECT has no meaning with --bound");
		if (!strcmp(o->inj, "backstep"))
			C.inject = INJ_BACKSTEP;
		else if (!strcmp(o->inj, "bracket"))
			C.inject = INJ_BRACKET;
		else if (!strcmp(o->inj, "causality"))
			C.inject = INJ_CAUSALITY;
		else
			return cli_usage_error("unknown FASTCLOCK_CHECK_INJECT '%s' (backstep, bracket, causality)", o->inj);
		if (C.inject == INJ_CAUSALITY && C.nthreads < 2)
			return cli_usage_error("FASTCLOCK_CHECK_INJECT=causality needs --threads 2 or more (a ring)");
	}
	return -1;
}

/* Start the checker threads, let them run --duration (showing progress), stop and join them. Returns the
 * count started; fewer than C.nthreads means a thread could not start (the run is void). */
static int check_run(struct tstate *ts)
{
	int started = 0;
	int64_t end;
	unsigned long long last_progress = ~0ull;
	int64_t progress_at = 0;
	for (int i = 0; i < C.nthreads; i++) {
		memset(&ts[i], 0, sizeof(ts[i]));
		ts[i].idx = i;
		if (pthread_create(&ts[i].th, NULL, checker, &ts[i]) != 0) {
			cli_error("cannot start thread %d: %s", i, strerror(errno));
			break;
		}
		started++;
	}
	C.t0 = cli_ns(CLOCK_MONOTONIC);
	end = C.t0 + (int64_t)(C.duration_s * 1e9);
	if (started == C.nthreads)
		__atomic_store_n(&C.go, 1, __ATOMIC_RELEASE);
	for (int64_t now = C.t0; started == C.nthreads && !cli_interrupted; now = cli_ns(CLOCK_MONOTONIC)) {
		int64_t left = end - now;
		/* a progress line a second; past the duration (the self-test's wait, below) a look every 10 ms */
		struct timespec d = {0, left > 1000000000 ? 999999999 : left > 0 ? (long)left : 10000000};
		unsigned long long reads = 0, bad = 0, progress;
		for (int i = 0; i < started; i++) {
			reads += __atomic_load_n(&ts[i].iters, __ATOMIC_RELAXED);
			for (int k = 0; k < V_N; k++)
				bad += __atomic_load_n(&ts[i].v[k], __ATOMIC_RELAXED);
		}
		/* What a run must have done is counted in the threads' own progress, which a busy machine may delay
		 * past the duration: one bracketed read at least (else nothing was checked), and the self-test's
		 * perturbation, due at thread 0's INJECT_AT_ITER-th bracketed read or the INJECT_AT_ROUND-th token
		 * handoff. The run goes on until they are done, as long as the threads make progress (10 s without a
		 * read or a handoff: hung, and the run fails for what was not done). */
		progress = reads + __atomic_load_n(&C.turn, __ATOMIC_RELAXED);
		if (progress != last_progress)
			last_progress = progress, progress_at = now;
		if (left <= 0 && ((reads > 0 && (!C.inject || __atomic_load_n(&C.injected, __ATOMIC_RELAXED))) ||
				  now - progress_at > 10 * (int64_t)1000000000))
			break;
		cli_progress(C.t0, C.duration_s, "check: %llu bracketed reads, %llu violations", reads, bad);
		nanosleep(&d, NULL);
	}
	cli_progress_done();
	__atomic_store_n(&C.stop, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&C.go, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < started; i++)
		pthread_join(ts[i].th, NULL);
	return started;
}

/* The threads' counts and worst cases, summed. */
struct check_sum {
	unsigned long long tot[V_N], total, iters, rounds, steps;
	int64_t wmb, wma, wrb, wra, maxb;
};

static void check_add(struct check_sum *s, const struct tstate *ts, int n)
{
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < n; i++) {
		const struct tstate *t = &ts[i];
		for (int k = 0; k < V_N; k++) {
			s->tot[k] += t->v[k];
			s->total += t->v[k];
		}
		s->iters += t->iters;
		s->rounds += t->rounds;
		s->steps += t->steps_seen;
		s->wmb = t->worst_mono_below > s->wmb ? t->worst_mono_below : s->wmb;
		s->wma = t->worst_mono_above > s->wma ? t->worst_mono_above : s->wma;
		s->wrb = t->worst_real_below > s->wrb ? t->worst_real_below : s->wrb;
		s->wra = t->worst_real_above > s->wra ? t->worst_real_above : s->wra;
		s->maxb = t->max_bound > s->maxb ? t->max_bound : s->maxb;
	}
}

static void check_print_json(const struct check_sum *s, const struct fc_status *st0, const struct fc_status *st,
			     double wall, int passed, const char *inj)
{
	struct jw j;
	jw_begin_doc(&j, "check");
	jw_created_utc(&j); /* when: the report's pictures and page say it */
	bench_json_host(&j);
	jw_obj(&j, "fastclock");
	jw_str(&j, "backend", fc_backend_name(st->backend));
	jw_str(&j, "reason", st->reason);
	jw_int(&j, "period_ns", st->period_ns);
	jw_int(&j, "reanchors", (int64_t)(st->reanchors - st0->reanchors));
	jw_int(&j, "discontinuities", (int64_t)(st->discontinuities - st0->discontinuities));
	jw_end_obj(&j);
	jw_num(&j, "duration_s", C.duration_s);
	jw_num(&j, "wall_s", round(wall * 1000) / 1000);
	jw_int(&j, "threads", C.nthreads);
	jw_int(&j, "slack_ns", C.slack_ns);
	jw_int(&j, "max_documented_bound_ns", s->maxb);
	jw_str(&j, "inject", C.inject ? inj : NULL);
	jw_int(&j, "bracketed_reads", (int64_t)s->iters);
	jw_int(&j, "pingpong_rounds", (int64_t)s->rounds);
	jw_int(&j, "kernel_steps_seen", (int64_t)s->steps);
	jw_obj(&j, "worst_outside_bracket_ns");
	jw_int(&j, "mono_below", s->wmb);
	jw_int(&j, "mono_above", s->wma);
	jw_int(&j, "real_below", s->wrb);
	jw_int(&j, "real_above", s->wra);
	jw_end_obj(&j);
	jw_obj(&j, "violations");
	for (int k = 0; k < V_N; k++)
		jw_int(&j, vnames[k], (int64_t)s->tot[k]);
	jw_int(&j, "total", (int64_t)s->total);
	jw_end_obj(&j);
	jw_arr(&j, "first_violations");
	for (int i = 0; i < C.nrec; i++) {
		jw_obj(&j, NULL);
		jw_str(&j, "kind", vnames[C.rec[i].kind]);
		jw_int(&j, "thread", C.rec[i].thread);
		jw_int(&j, "observed", C.rec[i].a);
		jw_int(&j, "limit", C.rec[i].b);
		jw_end_obj(&j);
	}
	jw_end_arr(&j);
	bench_json_agreement(&j, &C.agree);
	jw_bool(&j, "interrupted", cli_interrupted != 0);
	jw_bool(&j, "passed", passed);
	jw_end_obj(&j);
}

static void check_print_text(const struct check_sum *s, const struct fc_status *st0, const struct fc_status *st,
			     double wall, int passed, const char *inj)
{
	int ncpu = cli_ncpus();
	char pin[96];
	if (C.nthreads <= ncpu)
		snprintf(pin, sizeof(pin), "%d threads pinned one per CPU", C.nthreads);
	else
		snprintf(pin, sizeof(pin), "%d threads on %d CPUs (pinned round robin, up to %d per CPU)", C.nthreads,
			 ncpu, (C.nthreads + ncpu - 1) / ncpu);
	printf("fastclock check: %.1f s, %s; backend %s (%s)%s%s\n", wall, pin, fc_backend_name(st->backend),
	       st->reason, C.inject ? "; SELF-TEST inject=" : "", C.inject ? inj : "");
	printf("  bracketed reads      %llu (mono and real each), slack %lld ns + documented bound (max %lld ns)\n",
	       s->iters, (long long)C.slack_ns, (long long)s->maxb);
	printf("  worst outside        mono %lld ns below / %lld ns above the kernel's bracket; real %lld / %lld ns\n",
	       (long long)s->wmb, (long long)s->wma, (long long)s->wrb, (long long)s->wra);
	if (C.nthreads > 1)
		printf("  token handoffs       %llu round the %d threads (causality)\n", s->rounds, C.nthreads);
	else
		printf("  token handoffs       none: causality is not checked with one thread\n");
	printf("  re-anchors           %llu, discontinuities %llu, kernel wall-clock steps seen %llu\n",
	       (unsigned long long)(st->reanchors - st0->reanchors),
	       (unsigned long long)(st->discontinuities - st0->discontinuities), s->steps);
	printf("  violations           %llu\n", s->total);
	for (int k = 0; k < V_N; k++)
		if (s->tot[k])
			printf("    %-24s %llu\n", vnames[k], s->tot[k]);
	for (int i = 0; i < C.nrec; i++)
		printf("    first: %s on thread %d: observed %lld, limit %lld\n", vnames[C.rec[i].kind], C.rec[i].thread,
		       C.rec[i].a, C.rec[i].b);
	if (cli_interrupted)
		printf("INTERRUPTED after %.1f of %.1f s: the figures above cover that time only\n", wall, C.duration_s);
	printf("%s\n", passed ? "PASS" : "FAIL");
}

/* fastclock check: parse, run the threads, sum, judge, print. */
int cmd_check(int argc, char **argv)
{
	static struct tstate ts[MAX_THREADS];
	struct check_opts o = {0};
	struct check_sum s;
	struct fc_status st0, st;
	int started, passed, rc;
	double wall;

	memset(&C, 0, sizeof(C));
	pthread_mutex_init(&C.lock, NULL);
	if ((rc = check_parse(argc, argv, &o)) >= 0)
		return rc;
	if (o.bound)
		return check_bound(&o);
	cli_catch_interrupt();
	fc_init();
	fc_status(&st0);
	/* After a kernel step fastclock follows within one period (the notifier makes it sooner): skip the
	 * realtime bracket for two periods plus 1 ms of scheduling slack. */
	C.grace_ns = 2 * st0.period_ns + 1000000;
	started = check_run(ts);
	if (started < C.nthreads)
		return CLI_EXIT_FAIL;
	wall = (double)(cli_ns(CLOCK_MONOTONIC) - C.t0) / 1e9;
	fc_status(&st);
	check_add(&s, ts, started);
	if (C.inject && !C.injected)
		cli_error("self-test: FASTCLOCK_CHECK_INJECT=%s was not applied (run longer); failing", o.inj);
	if (s.iters == 0)
		cli_error("no bracketed read was made in %.3f s: nothing was checked; failing", wall);
	passed = s.total == 0 && !(C.inject && !C.injected) && s.iters > 0;
	if (C.json)
		check_print_json(&s, &st0, &st, wall, passed, o.inj);
	else
		check_print_text(&s, &st0, &st, wall, passed, o.inj);
	agree_free(&C.agree);
	return passed ? cli_interrupted_exit() : CLI_EXIT_FAIL;
}
