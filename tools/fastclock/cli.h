/*
 * fastclock command-line tool: shared declarations.
 *
 * The tool is built only on the library's public API (<fastclock.h>, <fastclock.hpp>); it never includes a
 * header from src/. Each command lives in its own file (info.c, bench.c, check.c, report.c); this header
 * holds what they share: argument errors (exit code 2), a small JSON writer, statistics and clock helpers.
 *
 * Exit codes (docs/cli.md): 0 success; 1 the command ran and found a problem (check: a violation; report:
 * the renderer failed); 2 bad usage (unknown command, option or clock, bad value, unreadable or invalid input);
 * 3 the output could not be written (standard output closed, full, or a broken pipe); 130 interrupted by SIGINT
 * (what was measured is printed).
 */
#ifndef FASTCLOCK_CLI_H
#define FASTCLOCK_CLI_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <fastclock.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2
#define CLI_EXIT_OUTPUT 3
#define CLI_EXIT_INTERRUPTED 130 /* 128 + SIGINT, as a shell reports a process killed by it */

#ifndef FASTCLOCK_TOOL_VERSION
#define FASTCLOCK_TOOL_VERSION "0.1.0"
#endif

/* ---- commands ---- */
int cmd_info(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv); /* report.c: the report script's --compare */
int cmd_monitor(int argc, char **argv);

/* ---- errors: one line on stderr, "fastclock: <cmd>: <message>" ---- */
void cli_set_command(const char *cmd);
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print the one-line error and return CLI_EXIT_USAGE (for `return cli_usage_error(...)`). */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Option matching for "--name value" and "--name=value". Returns 1 and sets *val when argv[*i] is the
 * option (advancing *i past a separate value); returns -1 (after printing an error) when the value is
 * missing; 0 when argv[*i] is another option. */
int cli_opt(int argc, char **argv, int *i, const char *name, const char **val);

/* cli_opt for a number in (lo, hi]: 1 and *out set, 0 another option, -1 after printing "bad NAME 'v' (unit:
 * > lo and at most hi)". */
int cli_opt_num(int argc, char **argv, int *i, const char *name, double lo, double hi, const char *unit, double *out);

/* Strict number parsers: the whole string must be a number in range. Return 0, or -1. */
int cli_parse_double(const char *s, double *out);
int cli_parse_long(const char *s, long *out);

/* ---- output and interruption ---- */
/* Flush and close standard output; on any write error so far print one line naming it and return
 * CLI_EXIT_OUTPUT, else rc. main() calls it once, after the command. */
int cli_finish_output(int rc);
/* Set by SIGINT once cli_catch_interrupt() has installed the handler; long loops poll it. */
extern volatile sig_atomic_t cli_interrupted;
void cli_catch_interrupt(void);
/* CLI_EXIT_INTERRUPTED after a note on stderr if SIGINT came, else CLI_EXIT_OK. */
int cli_interrupted_exit(void);
/* One CSV row "clock,stat,value" (stat followed by t when t >= 0; an empty value for NaN). */
void cli_csv_row(const char *clock, const char *stat, int t, double v);
/* The CPU's model name from /proc/cpuinfo ("" when absent). */
void cli_cpu_model(char *buf, size_t n);

/* ---- time ---- */
static inline int64_t cli_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
int cli_ncpus(void);
/* The calling thread's time runnable but waiting for a CPU, ns (/proc/thread-self/schedstat); -1: unknown. */
int64_t cli_run_delay_ns(void);
/* A progress line on stderr ("what  12 s of 60 s, ETA 48 s"), redrawn in place on a terminal; off when stderr
 * is not one, unless FASTCLOCK_PROGRESS=1 (then one line per call; FASTCLOCK_PROGRESS=0 turns it off). */
int cli_progress_enabled(void);
void cli_progress(int64_t t0_ns, double planned_s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void cli_progress_done(void); /* erase the line */
/* Pin the calling thread to the idx-th CPU of the process's affinity mask (round robin). Best effort. */
void cli_pin_thread(int idx);

/* ---- statistics ---- */
/* Sort v (n values) in place and return the p-th percentile (0..100), linear interpolation. n > 0. */
double stat_percentile_sorted(const double *v, size_t n, double p);
void stat_sort(double *v, size_t n);

/* ---- JSON writer (streaming, no allocation) ---- */
struct jw {
	FILE *f;
	int depth;
	int first[32]; /* 1 until the first member of the open container is written */
	int pretty;
};
void jw_init(struct jw *j, FILE *f);
/* jw_init on stdout, open the top object and write the members every document starts with: schema
 * "fastclock-<command>/1", command, tool_version */
void jw_begin_doc(struct jw *j, const char *command);
void jw_created_utc(struct jw *j); /* "created_utc": now, UTC, "YYYY-MM-DDTHH:MM:SSZ" */
void jw_obj(struct jw *j, const char *key);   /* open an object (key NULL inside an array / at top) */
void jw_arr(struct jw *j, const char *key);   /* open an array */
void jw_end_obj(struct jw *j);
void jw_end_arr(struct jw *j);
void jw_str(struct jw *j, const char *key, const char *v); /* NULL v writes null */
void jw_num(struct jw *j, const char *key, double v);      /* non-finite writes null */
void jw_int(struct jw *j, const char *key, int64_t v);
void jw_bool(struct jw *j, const char *key, int v);
void jw_null(struct jw *j, const char *key);

/* ---- fastclock against the kernel: the agreement series bench and check both record ---- */
struct agree_series {
	size_t n, cap;
	double *t_s, *mono_err, *mono_half, *real_err, *real_half;
};
/* One bracketed read of each: k1 <= f = fc_mono_ns() <= k2 on CLOCK_MONOTONIC, then r1 <= g = fc_real_ns() <= r2
 * on CLOCK_REALTIME. */
struct bracket {
	int64_t k1, f, k2, r1, g, r2;
};
static inline void bracket_read(struct bracket *b)
{
	b->k1 = cli_ns(CLOCK_MONOTONIC);
	b->f = fc_mono_ns();
	b->k2 = cli_ns(CLOCK_MONOTONIC);
	b->r1 = cli_ns(CLOCK_REALTIME);
	b->g = fc_real_ns();
	b->r2 = cli_ns(CLOCK_REALTIME);
}
/* v minus the midpoint of [lo, hi], taken in integers first: CLOCK_REALTIME's ~1.8e18 ns as a double is a
 * multiple of 256 ns, so (double)v - ((double)lo + (double)hi) / 2 read 0 or 256 ns (monitor did). */
static inline double bracket_err(int64_t v, int64_t lo, int64_t hi)
{
	return (double)(v - lo) - (double)(hi - lo) / 2;
}
/* Append one bracketed sample; t_s counts from t0. Errors are against the bracket's midpoint. Dropped if out
 * of memory. */
void agree_push(struct agree_series *a, int64_t t0, const struct bracket *b);
void agree_free(struct agree_series *a);
/* The engine's batch timing for a quick probe (info): the median ns per call of reps batches of n calls,
 * each timed with clock_gettime(CLOCK_MONOTONIC) around it (bench.c). reps: 1..28. */
double bench_batch_median(void (*batch)(long n), long n, int reps);
/* The JSON members both documents share (bench.c) */
void bench_json_host(struct jw *j);
void bench_json_agreement(struct jw *j, const struct agree_series *a);

/* ---- small file helpers ---- */
/* Read the first line of a file (newline stripped) into buf. Returns 0, or -1 if unreadable. */
int cli_read_line(const char *path, char *buf, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_CLI_H */
