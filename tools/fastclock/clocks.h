/*
 * The clocks `fastclock bench` measures: one table entry per way of asking for the time.
 *
 * Each entry's read is compiled into two specialised loops (FCB_DEFINE), so the call under test is inlined
 * exactly as an application would inline it, with no function pointer between the loop and the clock:
 *   batch(n)        n reads whose values are summed and stored into a volatile sink (the cost loop);
 *   sample(buf, n)  n consecutive reads stored raw (the deltas: resolution, staleness, backward steps);
 *   latency(buf, n) n single reads, each between two ordered counter reads (fcb_ctr_ordered), the ticks
 *                   between them stored (the single-read tail latency, the reader that re-anchors included).
 * Values are in the clock's own unit; ns_per_unit converts them (0 for fc_ticks, -1 for the bare counter
 * reads: the tool fills in 1e9 / counter_hz at run time, or skips the deltas of a counter of unknown rate).
 * Each clock names the bare counter read it is compared with in the "x ctr" ratio (base): the ordered read
 * (lfence;rdtsc, isb;mrs) for reads that are ordered like it, the plain read for relaxed, coarse and other reads.
 */
#ifndef FASTCLOCK_TOOL_CLOCKS_H
#define FASTCLOCK_TOOL_CLOCKS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every batch stores its sum here: per thread, so the scaling workers share no written line (and do not race). */
extern __thread volatile int64_t fcb_sink;

enum { FCB_BASE_RAW, FCB_BASE_ORDERED };
/* The reference clocks every cost run includes (measured even when --clocks leaves them out): the ratios'
 * denominators. FCB_CTR_* are empty strings where the architecture has no counter read of its own. */
#define FCB_VDSO_REF "clock_gettime.MONOTONIC"
#if defined(__x86_64__)
#define FCB_CTR_RAW "rdtsc"
#define FCB_CTR_ORDERED "lfence;rdtsc"
#elif defined(__aarch64__)
#define FCB_CTR_RAW "cntvct"
#define FCB_CTR_ORDERED "isb;cntvct"
#else
#define FCB_CTR_RAW ""
#define FCB_CTR_ORDERED ""
#endif

/* The ordered bare counter read (lfence;rdtsc, isb;mrs cntvct_el0) that brackets a single read; elsewhere the
 * kernel's CLOCK_MONOTONIC in ns. fcb_ctr_is_ns says which. */
#if defined(__x86_64__)
static inline int64_t fcb_ctr_ordered(void)
{
	uint32_t lo, hi; /* lfence waits for every earlier instruction to complete before rdtsc reads the counter */
	__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return (int64_t)(((uint64_t)hi << 32) | lo);
}
#define fcb_ctr_is_ns 0
#elif defined(__aarch64__)
static inline int64_t fcb_ctr_ordered(void)
{
	uint64_t v; /* isb: the counter is read after every earlier instruction has completed */
	__asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return (int64_t)v;
}
#define fcb_ctr_is_ns 0
#else
#include <time.h>
static inline int64_t fcb_ctr_ordered(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
#define fcb_ctr_is_ns 1
#endif

struct fcb_clock {
	const char *name;     /* what --clocks matches (globs, case-insensitive) */
	const char *group;    /* libc, clock_gettime, counter, std::chrono, fastclock */
	const char *timeline; /* realtime, monotonic, monotonic_raw, boottime, tai, cputime, counter */
	const char *call;     /* the expression measured, for the documentation and --list */
	int clockid;          /* for clock_getres, or -1 */
	double nominal_res_ns; /* resolution of the interface's unit (time(): 1 s), 0 if the unit is ns */
	double ns_per_unit;   /* 0: fc_ticks units, -1: hardware counter ticks; both converted at run time */
	int base;             /* FCB_BASE_RAW or FCB_BASE_ORDERED: the counter read of its "x ctr" ratio */
	void (*batch)(long n);
	void (*sample)(int64_t *buf, long n);
	void (*latency)(int64_t *buf, long n);
};

#define FCB_DEFINE(ID, EXPR)                                                                               \
	static inline __attribute__((always_inline)) int64_t fcb_read_##ID(void) { return (int64_t)(EXPR); } \
	static __attribute__((noinline)) void fcb_batch_##ID(long n)                                       \
	{                                                                                                  \
		uint64_t acc = 0; /* unsigned: the sum wraps, defined behaviour */                         \
		for (long i = 0; i < n; i++)                                                               \
			acc += (uint64_t)fcb_read_##ID();                                                  \
		fcb_sink = (int64_t)acc;                                                                   \
	}                                                                                                  \
	static __attribute__((noinline, unused)) void fcb_sample_##ID(int64_t *buf, long n)                 \
	{                                                                                                  \
		for (long i = 0; i < n; i++)                                                               \
			buf[i] = fcb_read_##ID();                                                          \
	}                                                                                                  \
	static __attribute__((noinline, unused)) void fcb_latency_##ID(int64_t *buf, long n)                \
	{                                                                                                  \
		for (long i = 0; i < n; i++) {                                                             \
			int64_t t0 = fcb_ctr_ordered(), v = fcb_read_##ID();                               \
			__asm__ __volatile__("" : : "r"(v) : "memory"); /* the read happens, in between */ \
			buf[i] = fcb_ctr_ordered() - t0;                                                   \
		}                                                                                          \
	}

/* Tables: C clocks (clocks.c), C++ std::chrono / fastclock.hpp clocks (clocks_chrono.cc), and Abseil's
 * clocks (clocks_absl.cc, linked only when CMake finds Abseil; FASTCLOCK_CLI_HAVE_ABSL says so). */
extern const struct fcb_clock fcb_c_clocks[];
extern const size_t fcb_n_c_clocks;
extern const struct fcb_clock fcb_cxx_clocks[];
extern const size_t fcb_n_cxx_clocks;
extern const struct fcb_clock fcb_absl_clocks[];
extern const size_t fcb_n_absl_clocks;

#ifdef __cplusplus
}
#endif

#endif
