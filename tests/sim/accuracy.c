/*
 * fc_accuracy: fastclock against the kernel on this machine, through the public API.
 *
 *   fc_accuracy [SECONDS] [--clock mono|real|both] [--relaxed] [--updater]
 *
 * For SECONDS (default 10) it repeats: before = clock_gettime, fc = fc_mono_ns() (or fc_real_ns()),
 * after = clock_gettime, and records
 *   outside: how far fc lies outside [before, after] (0 when inside): an error fastclock certainly made;
 *   mid:     fc - (before + after) / 2: the error if the kernel's read sat mid-bracket (includes up to half
 *            the bracket of pure measurement noise);
 *   bracket: after - before.
 * Between reads it sleeps now and then (every 4096 reads, 0-2 ms) so that re-anchors, the slow path and
 * stale hands are exercised as a real program would, not only the fast path in a tight loop.
 * Prints histograms (ns, log2 buckets), min, max and percentiles of each, per clock (1-ns bins up to 1 ms,
 * so memory stays at ~50 MB however long it runs). No thresholds: this is
 * a measurement on a shared machine, not a test.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fastclock.h"

static int64_t now(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Values are binned by the ns in [-RANGE, RANGE] (exact there), beyond that clamped into the end bins; min
 * and max are kept exactly. Percentiles are exact unless they fall in an end bin. */
#define RANGE 1000000
struct stat {
	const char *name;
	uint64_t *bin; /* 2 * RANGE + 1 */
	uint64_t n;
	int64_t min, max;
};

static void push(struct stat *s, int64_t x)
{
	if (!s->bin) {
		s->bin = calloc(2 * RANGE + 1, sizeof(*s->bin));
		if (!s->bin) {
			perror("calloc");
			exit(1);
		}
		s->min = INT64_MAX;
		s->max = INT64_MIN;
	}
	if (x < s->min)
		s->min = x;
	if (x > s->max)
		s->max = x;
	s->bin[(x < -RANGE ? -RANGE : x > RANGE ? RANGE : x) + RANGE]++;
	s->n++;
}

static int64_t pct(const struct stat *s, double p)
{
	uint64_t want = (uint64_t)(p / 100.0 * (double)(s->n - 1)), seen = 0;
	for (int64_t i = 0; i <= 2 * RANGE; i++) {
		seen += s->bin[i];
		if (seen > want)
			return i - RANGE;
	}
	return s->max;
}

static void report(const char *clock, struct stat *s, int absval)
{
	if (s->n == 0)
		return;
	printf("%s %-8s n=%" PRIu64 " min=%" PRId64 " p0.01=%" PRId64 " p1=%" PRId64 " p50=%" PRId64 " p99=%" PRId64
	       " p99.99=%" PRId64 " max=%" PRId64 " ns\n",
	       clock, s->name, s->n, s->min, pct(s, 0.01), pct(s, 1), pct(s, 50), pct(s, 99), pct(s, 99.99), s->max);
	/* Histogram of |value| in log2 buckets. */
	{
		uint64_t b[66] = {0}, neg = 0;
		for (int64_t i = 0; i <= 2 * RANGE; i++) {
			int64_t x = i - RANGE;
			if (!s->bin[i])
				continue;
			if (x < 0) {
				neg += s->bin[i];
				x = -x;
			}
			b[x == 0 ? 0 : 64 - __builtin_clzll((unsigned long long)x)] += s->bin[i];
		}
		printf("  |%s| histogram%s:\n", s->name, absval && neg ? " (sign folded)" : "");
		for (int k = 0; k < 66; k++) {
			if (!b[k])
				continue;
			int64_t from = k == 0 ? 0 : (int64_t)1 << (k - 1), to = k == 0 ? 0 : ((int64_t)1 << k) - 1;
			int bar = (int)(50.0 * (double)b[k] / (double)s->n + 0.999);
			printf("    %9" PRId64 "..%-9" PRId64 " %11" PRIu64 " %9.5f%% ", from, to, b[k],
			       100.0 * (double)b[k] / (double)s->n);
			for (int j = 0; j < bar; j++)
				putchar('#');
			putchar('\n');
		}
		if (neg)
			printf("    (%" PRIu64 " of %" PRIu64 " negative)\n", neg, s->n);
	}
}

int main(int argc, char **argv)
{
	double secs = 10;
	int relaxed = 0, updater = 0, which = 3; /* 1 mono, 2 real */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--relaxed"))
			relaxed = 1;
		else if (!strcmp(argv[i], "--updater"))
			updater = 1;
		else if (!strcmp(argv[i], "--clock") && i + 1 < argc) {
			i++;
			which = !strcmp(argv[i], "mono") ? 1 : !strcmp(argv[i], "real") ? 2 : 3;
		} else if (atof(argv[i]) > 0)
			secs = atof(argv[i]);
		else {
			fprintf(stderr, "usage: %s [SECONDS] [--clock mono|real|both] [--relaxed] [--updater]\n", argv[0]);
			return 2;
		}
	}
	fc_init();
	if (updater && fc_updater_start(0) != 0)
		perror("fc_updater_start");
	struct fc_status st;
	fc_status(&st);
	printf("fastclock accuracy: %.0f s, backend %s (%s), clocksource %s, counter %" PRIu64 " Hz, period %" PRId64
	       " ns, %s reads%s\n",
	       secs, fc_backend_name(st.backend), st.reason, st.clocksource, st.counter_hz, st.period_ns,
	       relaxed ? "relaxed" : "ordered", updater ? ", updater running" : "");

	struct stat out[2] = {{"outside", 0, 0, 0, 0}, {"outside", 0, 0, 0, 0}};
	struct stat mid[2] = {{"mid", 0, 0, 0, 0}, {"mid", 0, 0, 0, 0}};
	struct stat br[2] = {{"bracket", 0, 0, 0, 0}, {"bracket", 0, 0, 0, 0}};
	const int64_t end = now(CLOCK_MONOTONIC) + (int64_t)(secs * 1e9);
	unsigned long long n = 0, rng = 88172645463325252ull;
	while (now(CLOCK_MONOTONIC) < end) {
		for (int c = 0; c < 2; c++) {
			if (!(which & (1 << c)))
				continue;
			clockid_t id = c ? CLOCK_REALTIME : CLOCK_MONOTONIC;
			int64_t b = now(id), f, a;
			if (c)
				f = relaxed ? fc_real_ns_relaxed() : fc_real_ns();
			else
				f = relaxed ? fc_mono_ns_relaxed() : fc_mono_ns();
			a = now(id);
			push(&out[c], f < b ? f - b : f > a ? f - a : 0);
			push(&mid[c], f - b - (a - b) / 2);
			push(&br[c], a - b);
		}
		if ((++n & 4095) == 0) { /* let hands go stale now and then */
			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			struct timespec ts = {0, (long)(rng % 2000000)};
			nanosleep(&ts, NULL);
		}
	}
	for (int c = 0; c < 2; c++) {
		if (!(which & (1 << c)))
			continue;
		const char *name = c ? "real" : "mono";
		report(name, &out[c], 1);
		report(name, &mid[c], 1);
		report(name, &br[c], 0);
		free(out[c].bin);
		free(mid[c].bin);
		free(br[c].bin);
	}
	fc_status(&st);
	printf("status: %" PRIu64 " re-anchors, %" PRIu64 " slow paths, %" PRIu64 " discontinuities, last error %" PRId64
	       " ns, max |error| at re-anchors %" PRId64 " ns, last bracket %" PRId64 " ns\n",
	       st.reanchors, st.slow_paths, st.discontinuities, st.last_error_ns, st.max_abs_error_ns, st.last_bracket_ns);
	if (updater)
		fc_updater_stop();
	return 0;
}
