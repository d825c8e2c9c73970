/*
 * fastclock monitor — one JSON line per interval, for hours: fastclock's agreement with the kernel (drift), the
 * UTC bound (status, source, half-width), the counter rate the tracker uses and what happened since the last
 * line (re-anchors, discontinuities, wall-clock steps). Each line is flushed when written, so a pipe or a file
 * followed with `tail -f` sees it at once. Calls the shared helpers (cli.h) and the public <fastclock.h> only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fastclock.h>

#include "cli.h"

#define DEFAULT_INTERVAL_S 10.0
#define MAX_INTERVAL_S 86400.0
#define BRACKETS 5 /* the narrowest of this many bracketed reads is kept (the others were preempted) */

static const char monitor_help[] =
	"usage: fastclock monitor [--interval S] [--count N]\n"
	"\n"
	"Print one JSON line every S seconds (default 10) until Ctrl-C, or N lines: fastclock against the kernel\n"
	"(mono_err_ns, real_err_ns: fastclock minus the kernel's bracket midpoint, with the bracket's half-width),\n"
	"the UTC bound (status, source, half-width), the counter rate the tracker uses (and its drift: the change in\n"
	"ppm since the second line; null before, while the rate is the start-up estimate over milliseconds), and\n"
	"the re-anchors, discontinuities and wall-clock steps since the last line.\n"
	"Schema: share/fastclock/bench.schema.json under the install prefix, command \"monitor\".\n"
	"\n"
	"  --interval S   seconds between lines (0 < S <= 86400; default 10)\n"
	"  --count N      stop after N lines (default: run until interrupted)\n"
	"\n"
	"Exit codes: 0 (--count lines written), 2 bad usage, 3 the output could not be written, 130 interrupted.\n";

/* The narrowest of BRACKETS bracketed reads of each clock. */
static void best_bracket(struct bracket *best)
{
	bracket_read(best);
	for (int i = 1; i < BRACKETS; i++) {
		struct bracket b;
		bracket_read(&b);
		if (b.k2 - b.k1 < best->k2 - best->k1)
			best->k1 = b.k1, best->f = b.f, best->k2 = b.k2;
		if (b.r2 - b.r1 < best->r2 - best->r1)
			best->r1 = b.r1, best->g = b.g, best->r2 = b.r2;
	}
}

/* One line: the sample, and the counts since *prev (then *prev = now). Drift is the tracker's rate against
 * *hz0, the rate at the second line: the first line's rate is the start-up estimate, measured over the few
 * milliseconds since fc_init (its baseline: FC_TRACK_HIST periods), and its difference from the rate measured
 * over a whole interval (-8 ppm, say) is that estimate's error, not drift. So rate_change_ppm is null on the
 * first two lines. */
static void monitor_line(long seq, int64_t t0, struct fc_status *prev, uint64_t *hz0)
{
	struct fc_status st;
	struct fc_interval iv;
	struct bracket b;
	struct jw j;
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	best_bracket(&b);
	fc_real_bounded(&iv);
	fc_status(&st);
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	jw_init(&j, stdout);
	j.pretty = 0;
	jw_obj(&j, NULL);
	jw_str(&j, "schema", "fastclock-monitor/1");
	jw_str(&j, "command", "monitor");
	jw_int(&j, "seq", seq);
	jw_str(&j, "utc", when);
	jw_num(&j, "t_s", round((double)(b.k1 - t0) / 1e6) / 1000);
	jw_num(&j, "mono_err_ns", bracket_err(b.f, b.k1, b.k2));
	jw_num(&j, "mono_half_ns", (double)(b.k2 - b.k1) / 2);
	jw_num(&j, "real_err_ns", bracket_err(b.g, b.r1, b.r2));
	jw_num(&j, "real_half_ns", (double)(b.r2 - b.r1) / 2);
	jw_str(&j, "backend", fc_backend_name(st.backend));
	jw_int(&j, "counter_hz", (int64_t)st.counter_hz);
	if (seq == 2)
		*hz0 = st.counter_hz;
	jw_num(&j, "rate_change_ppm",
	       seq > 2 && *hz0 && st.counter_hz ? ((double)st.counter_hz / (double)*hz0 - 1) * 1e6 : NAN);
	jw_obj(&j, "bound");
	jw_str(&j, "status", fc_sync_name(iv.status));
	jw_str(&j, "source", st.bound_source);
	jw_int(&j, "half_ns", (iv.latest_ns - iv.earliest_ns) / 2);
	jw_end_obj(&j);
	jw_int(&j, "reanchors", (int64_t)(st.reanchors - prev->reanchors));
	jw_int(&j, "discontinuities", (int64_t)(st.discontinuities - prev->discontinuities));
	jw_int(&j, "real_steps", (int64_t)(st.real_steps - prev->real_steps));
	jw_end_obj(&j); /* the top object's end writes the newline */
	fflush(stdout);
	*prev = st;
}

int cmd_monitor(int argc, char **argv)
{
	double interval_s = DEFAULT_INTERVAL_S, count = 0;
	struct fc_status prev;
	uint64_t hz0 = 0;
	int64_t t0, next;
	for (int i = 1; i < argc; i++) {
		int m;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(monitor_help, stdout);
			return CLI_EXIT_OK;
		} else if ((m = cli_opt_num(argc, argv, &i, "--interval", 0, MAX_INTERVAL_S, "seconds", &interval_s)) ||
			   (m = cli_opt_num(argc, argv, &i, "--count", 0, 1e12, "lines", &count))) {
			if (m < 0)
				return CLI_EXIT_USAGE;
			if (count != floor(count))
				return cli_usage_error("bad --count '%s' (a whole number of lines)", argv[i]);
		} else if (argv[i][0] == '-') {
			return cli_usage_error("unknown option '%s' (see 'fastclock monitor --help')", argv[i]);
		} else {
			return cli_usage_error("unexpected argument '%s' (see 'fastclock monitor --help')", argv[i]);
		}
	}
	cli_catch_interrupt();
	fc_init();
	fc_status(&prev);
	t0 = cli_ns(CLOCK_MONOTONIC);
	next = t0;
	for (long seq = 1; !cli_interrupted && (count == 0 || seq <= (long)count); seq++) {
		monitor_line(seq, t0, &prev, &hz0);
		if (ferror(stdout))
			break; /* cli_finish_output says why (exit 3) */
		next += (int64_t)(interval_s * 1e9);
		if (count != 0 && seq == (long)count)
			break;
		for (int64_t now = cli_ns(CLOCK_MONOTONIC); now < next && !cli_interrupted; now = cli_ns(CLOCK_MONOTONIC)) {
			struct timespec d = {(time_t)((next - now) / 1000000000), (long)((next - now) % 1000000000)};
			nanosleep(&d, NULL); /* SIGINT ends it early (EINTR), the loop then stops */
		}
	}
	return cli_interrupted_exit();
}
