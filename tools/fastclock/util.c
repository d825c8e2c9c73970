/* Shared helpers of the fastclock tool: errors, option parsing, statistics, JSON writer. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static const char *g_cmd;

void cli_set_command(const char *cmd) { g_cmd = cmd; }

static void verror(const char *fmt, va_list ap)
{
	fputs("fastclock: ", stderr);
	if (g_cmd)
		fprintf(stderr, "%s: ", g_cmd);
	/* clang-analyzer reports a va_list parameter as uninitialised: a known false positive. */
	vfprintf(stderr, fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized)
	fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verror(fmt, ap);
	va_end(ap);
}

int cli_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verror(fmt, ap);
	va_end(ap);
	return CLI_EXIT_USAGE;
}

int cli_opt(int argc, char **argv, int *i, const char *name, const char **val)
{
	const char *a = argv[*i];
	size_t n = strlen(name);
	if (strncmp(a, name, n) != 0)
		return 0;
	if (a[n] == '=') {
		*val = a + n + 1;
		return 1;
	}
	if (a[n] != '\0')
		return 0;
	if (*i + 1 >= argc) {
		cli_error("option '%s' needs a value", name);
		return -1;
	}
	*val = argv[++*i];
	return 1;
}

int cli_opt_num(int argc, char **argv, int *i, const char *name, double lo, double hi, const char *unit, double *out)
{
	const char *v;
	int m = cli_opt(argc, argv, i, name, &v);
	if (m <= 0)
		return m;
	if (cli_parse_double(v, out) || !(*out > lo && *out <= hi)) {
		cli_error("bad %s '%s' (%s: > %g and at most %g)", name, v, unit, lo, hi);
		return -1;
	}
	return 1;
}

int cli_parse_double(const char *s, double *out)
{
	char *end;
	double v;
	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

int cli_parse_long(const char *s, long *out)
{
	char *end;
	long v;
	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

/* ---- progress on stderr ---- */
static int progress_on = -1;

int cli_progress_enabled(void)
{
	if (progress_on < 0) {
		const char *e = secure_getenv("FASTCLOCK_PROGRESS"); /* never a caller's, were this tool set-user-ID */
		progress_on = e && *e ? strcmp(e, "0") != 0 : isatty(STDERR_FILENO);
	}
	return progress_on;
}

void cli_progress(int64_t t0_ns, double planned_s, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	double done;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized): a known false positive
	va_end(ap);
	if (!cli_progress_enabled())
		return;
	done = (double)(cli_ns(CLOCK_MONOTONIC) - t0_ns) / 1e9;
	fprintf(stderr, "%s%s  %.0f s of %.0f s, ETA %.0f s", isatty(STDERR_FILENO) ? "\r\033[K" : "", msg, done,
		planned_s, done < planned_s ? planned_s - done : 0.0);
	if (!isatty(STDERR_FILENO))
		fputc('\n', stderr); /* FASTCLOCK_PROGRESS=1 on a pipe or file: one line each */
	fflush(stderr);
}

void cli_progress_done(void)
{
	if (cli_progress_enabled() && isatty(STDERR_FILENO))
		fputs("\r\033[K", stderr);
}

int64_t cli_run_delay_ns(void)
{
	char line[128];
	unsigned long long run, delay;
	if (!cli_read_line("/proc/thread-self/schedstat", line, sizeof(line)) ||
	    sscanf(line, "%llu %llu", &run, &delay) != 2)
		return -1;
	return (int64_t)delay;
}

int cli_ncpus(void)
{
	cpu_set_t set;
	long n;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

void cli_pin_thread(int idx)
{
	cpu_set_t set, one;
	int k = 0, want;
	if (sched_getaffinity(0, sizeof(set), &set) != 0 || CPU_COUNT(&set) == 0)
		return;
	want = idx % CPU_COUNT(&set);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &set))
			continue;
		if (k++ == want) {
			CPU_ZERO(&one);
			CPU_SET(c, &one);
			pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
			return;
		}
	}
}

/* ---- statistics ---- */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void stat_sort(double *v, size_t n) { qsort(v, n, sizeof(*v), cmp_double); }

double stat_percentile_sorted(const double *v, size_t n, double p)
{
	double pos, frac;
	size_t lo;
	if (n == 0)
		return NAN;
	if (n == 1)
		return v[0];
	pos = p / 100.0 * (double)(n - 1);
	lo = (size_t)pos;
	if (lo >= n - 1)
		return v[n - 1];
	frac = pos - (double)lo;
	return v[lo] + (v[lo + 1] - v[lo]) * frac;
}

/* ---- JSON ---- */
void jw_init(struct jw *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first[0] = 1;
	j->pretty = 1;
}

void jw_begin_doc(struct jw *j, const char *command)
{
	char schema[64];
	snprintf(schema, sizeof(schema), "fastclock-%s/1", command);
	jw_init(j, stdout);
	jw_obj(j, NULL);
	jw_str(j, "schema", schema);
	jw_str(j, "command", command);
	jw_str(j, "tool_version", FASTCLOCK_TOOL_VERSION);
}

void jw_created_utc(struct jw *j)
{
	char when[64];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	jw_str(j, "created_utc", when);
}

static void jw_indent(struct jw *j)
{
	if (!j->pretty)
		return;
	fputc('\n', j->f);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

static void jw_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

static void jw_member(struct jw *j, const char *key)
{
	if (j->depth > 0) {
		if (!j->first[j->depth])
			fputc(',', j->f);
		jw_indent(j);
	}
	j->first[j->depth] = 0;
	if (key) {
		jw_string(j->f, key);
		fputs(j->pretty ? ": " : ":", j->f);
	}
}

static void jw_open(struct jw *j, const char *key, char c)
{
	jw_member(j, key);
	fputc(c, j->f);
	if (j->depth < 31)
		j->depth++;
	j->first[j->depth] = 1;
}

static void jw_close(struct jw *j, char c)
{
	int empty = j->first[j->depth];
	if (j->depth > 0)
		j->depth--;
	if (!empty)
		jw_indent(j);
	fputc(c, j->f);
	if (j->depth == 0)
		fputc('\n', j->f);
}

void jw_obj(struct jw *j, const char *key) { jw_open(j, key, '{'); }
void jw_arr(struct jw *j, const char *key) { jw_open(j, key, '['); }
void jw_end_obj(struct jw *j) { jw_close(j, '}'); }
void jw_end_arr(struct jw *j) { jw_close(j, ']'); }

void jw_str(struct jw *j, const char *key, const char *v)
{
	jw_member(j, key);
	if (v)
		jw_string(j->f, v);
	else
		fputs("null", j->f);
}

void jw_num(struct jw *j, const char *key, double v)
{
	jw_member(j, key);
	if (!isfinite(v))
		fputs("null", j->f);
	else if (v == floor(v) && fabs(v) < 9e15)
		fprintf(j->f, "%.0f", v);
	else
		fprintf(j->f, "%.10g", v);
}

void jw_int(struct jw *j, const char *key, int64_t v)
{
	jw_member(j, key);
	fprintf(j->f, "%lld", (long long)v);
}

void jw_bool(struct jw *j, const char *key, int v)
{
	jw_member(j, key);
	fputs(v ? "true" : "false", j->f);
}

void jw_null(struct jw *j, const char *key)
{
	jw_member(j, key);
	fputs("null", j->f);
}

int cli_read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");
	size_t len;
	if (!f)
		return -1;
	if (!fgets(buf, (int)n, f)) {
		fclose(f);
		buf[0] = '\0';
		return -1;
	}
	fclose(f);
	len = strlen(buf);
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		buf[--len] = '\0';
	return 0;
}

/* ---- agreement series ---- */
void agree_push(struct agree_series *a, int64_t t0, const struct bracket *b)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 1024;
		double **cols[] = {&a->t_s, &a->mono_err, &a->mono_half, &a->real_err, &a->real_half};
		for (size_t i = 0; i < 5; i++) {
			double *p = realloc(*cols[i], cap * sizeof(double));
			if (!p)
				return;
			*cols[i] = p;
		}
		a->cap = cap;
	}
	a->t_s[a->n] = (double)(b->k1 - t0) / 1e9;
	a->mono_err[a->n] = bracket_err(b->f, b->k1, b->k2);
	a->mono_half[a->n] = (double)(b->k2 - b->k1) / 2;
	a->real_err[a->n] = bracket_err(b->g, b->r1, b->r2);
	a->real_half[a->n] = (double)(b->r2 - b->r1) / 2;
	a->n++;
}

void agree_free(struct agree_series *a)
{
	free(a->t_s);
	free(a->mono_err);
	free(a->mono_half);
	free(a->real_err);
	free(a->real_half);
	*a = (struct agree_series){0};
}

/* ---- output and interruption ---- */
int cli_finish_output(int rc)
{
	int err = ferror(stdout), e = 0;
	if (fflush(stdout) != 0) {
		err = 1;
		e = errno;
	}
	if (fclose(stdout) != 0 && !e) {
		err = 1;
		e = errno;
	}
	if (!err)
		return rc;
	/* A write that failed earlier and then succeeded on the flush still lost output: say so. */
	cli_error("cannot write to standard output: %s", e ? strerror(e) : "a write failed, the output is incomplete");
	return CLI_EXIT_OUTPUT;
}

volatile sig_atomic_t cli_interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	cli_interrupted = 1;
}

void cli_catch_interrupt(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint; /* no SA_RESTART: a sleep returns early, the loops see the flag */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
}

int cli_interrupted_exit(void)
{
	if (!cli_interrupted)
		return CLI_EXIT_OK;
	cli_error("interrupted: printed what was measured until then");
	return CLI_EXIT_INTERRUPTED;
}

void cli_csv_row(const char *clock, const char *stat, int t, double v)
{
	char tn[16] = "";
	if (t >= 0)
		snprintf(tn, sizeof(tn), "%d", t);
	if (isfinite(v))
		printf("%s,%s%s,%.10g\n", clock, stat, tn, v);
	else
		printf("%s,%s%s,\n", clock, stat, tn);
}

void cli_cpu_model(char *buf, size_t n)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");
	buf[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		if (colon && (!strncmp(line, "model name", 10) || !strncmp(line, "Model name", 10))) {
			snprintf(buf, n, "%s", colon + 2);
			buf[strcspn(buf, "\n")] = '\0';
			break;
		}
	}
	fclose(f);
}
