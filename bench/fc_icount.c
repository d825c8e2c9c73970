/*
 * fc_icount — call one clock N times, for instruction counting under callgrind (bench/callgrind.sh).
 *
 *   fc_icount CLOCK N
 *
 * Each clock has its own out-of-line loop, icount_<clock>, which callgrind collects alone
 * (--toggle-collect=icount_*). The loop adds each result to a sink so the calls cannot be dropped; the
 * loop's own instructions are measured by the "empty" clock. bench/callgrind.sh runs two values of N and
 * divides the difference of the counts by the difference of N, which removes everything done once
 * (initialisation, the first slow path). It prints the fastclock backend and the slow paths taken inside
 * the loop, so a count that includes re-anchors is visible as such.
 */
#include <fastclock.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile uint64_t sink;

#define LOOP(fn, expr)                                                                                 \
	static __attribute__((noinline)) uint64_t icount_##fn(uint64_t n)                              \
	{                                                                                              \
		uint64_t s = 0;                                                                        \
		for (uint64_t i = 0; i < n; i++)                                                       \
			s += (uint64_t)(expr);                                                         \
		return s;                                                                              \
	}

static inline uint64_t opaque_one(void)
{
	uint64_t x = 1;
	__asm__ __volatile__("" : "+r"(x));
	return x;
}

static inline uint64_t vdso_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t fc_ts_ns(clockid_t id)
{
	struct timespec ts;
	fc_clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

LOOP(empty, opaque_one())
LOOP(fc_mono_ns, fc_mono_ns())
LOOP(fc_mono_ns_relaxed, fc_mono_ns_relaxed())
LOOP(fc_real_ns, fc_real_ns())
LOOP(fc_real_ns_relaxed, fc_real_ns_relaxed())
LOOP(fc_mono_coarse_ns, fc_mono_coarse_ns())
LOOP(fc_real_coarse_ns, fc_real_coarse_ns())
LOOP(fc_ticks, fc_ticks())
LOOP(fc_clock_gettime_mono, fc_ts_ns(CLOCK_MONOTONIC))
LOOP(clock_gettime_mono, vdso_ns(CLOCK_MONOTONIC))
LOOP(clock_gettime_real, vdso_ns(CLOCK_REALTIME))
LOOP(clock_gettime_mono_coarse, vdso_ns(CLOCK_MONOTONIC_COARSE))

static const struct {
	const char *name;
	uint64_t (*loop)(uint64_t);
} clocks[] = {
	{"empty", icount_empty},
	{"fc_mono_ns", icount_fc_mono_ns},
	{"fc_mono_ns_relaxed", icount_fc_mono_ns_relaxed},
	{"fc_real_ns", icount_fc_real_ns},
	{"fc_real_ns_relaxed", icount_fc_real_ns_relaxed},
	{"fc_mono_coarse_ns", icount_fc_mono_coarse_ns},
	{"fc_real_coarse_ns", icount_fc_real_coarse_ns},
	{"fc_ticks", icount_fc_ticks},
	{"fc_clock_gettime_mono", icount_fc_clock_gettime_mono},
	{"clock_gettime_mono", icount_clock_gettime_mono},
	{"clock_gettime_real", icount_clock_gettime_real},
	{"clock_gettime_mono_coarse", icount_clock_gettime_mono_coarse},
};

int main(int argc, char **argv)
{
	size_t nclocks = sizeof clocks / sizeof clocks[0];
	char *end = NULL;
	unsigned long long n = argc == 3 ? strtoull(argv[2], &end, 10) : 0;
	if (argc != 3 || !end || *end || n == 0) {
		fprintf(stderr, "usage: fc_icount CLOCK N\nclocks:");
		for (size_t i = 0; i < nclocks; i++)
			fprintf(stderr, " %s", clocks[i].name);
		fprintf(stderr, "\n");
		return 2;
	}
	for (size_t i = 0; i < nclocks; i++) {
		if (strcmp(argv[1], clocks[i].name) != 0)
			continue;
		struct fc_status a, b;
		fc_init();
		(void)fc_mono_ns(); /* the first reads initialise; keep that out of the loop */
		(void)fc_mono_coarse_ns();
		fc_status(&a);
		sink = clocks[i].loop(n);
		fc_status(&b);
		printf("clock=%s n=%llu backend=%s slow_paths=%" PRIu64 " reanchors=%" PRIu64 "\n", clocks[i].name, n,
		       fc_backend_name(b.backend), b.slow_paths - a.slow_paths, b.reanchors - a.reanchors);
		return 0;
	}
	fprintf(stderr, "fc_icount: unknown clock '%s'\n", argv[1]);
	return 2;
}
