/* The C clocks of `fastclock bench`: the references (the empty loop, the bare counter reads, the system call),
 * libc, every clock_gettime id, every fastclock read. Calls only libc and the public <fastclock.h>. */
#define _GNU_SOURCE
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/time.h>
#include <time.h>

#include <fastclock.h>

#include "clocks.h"

#ifndef CLOCK_TAI
#define CLOCK_TAI 11
#endif

__thread volatile int64_t fcb_sink;

/* The helpers below wrap a call as an application writes it (a constant id, a local timespec summed at
 * once). Always inlined: gcc otherwise keeps one out-of-line copy of a helper used by several rows, and the
 * row then measures a call and a run-time switch on the id that no application pays. */
#define FCB_INLINE static inline __attribute__((always_inline))

FCB_INLINE int64_t ts_ns(const struct timespec *ts) { return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec; }

FCB_INLINE int64_t cgt(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return ts_ns(&ts);
}

FCB_INLINE int64_t fcgt(clockid_t id)
{
	struct timespec ts;
	fc_clock_gettime(id, &ts);
	return ts_ns(&ts);
}

FCB_INLINE int64_t gtod_us(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

FCB_INLINE int64_t fc_gtod_us(void)
{
	struct timeval tv;
	fc_gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

FCB_INLINE int64_t rusage_us(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

FCB_INLINE int64_t sys_cgt(clockid_t id)
{
	struct timespec ts;
	syscall(SYS_clock_gettime, id, &ts);
	return ts_ns(&ts);
}

/* An opaque 1: keeps the empty loop a loop (the compiler cannot fold the sum). */
static inline int64_t opaque_one(void)
{
	int64_t x = 1;
	__asm__ __volatile__("" : "+r"(x));
	return x;
}

#if defined(__x86_64__)
static inline int64_t ctr_raw(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (int64_t)(((uint64_t)hi << 32) | lo);
}
static inline int64_t ctr_rdtscp(void)
{
	uint32_t lo, hi, aux;
	__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux) : : "memory");
	return (int64_t)(((uint64_t)hi << 32) | lo);
}
#elif defined(__aarch64__)
static inline int64_t ctr_raw(void)
{
	uint64_t v;
	__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
	return (int64_t)v;
}
#endif

FCB_INLINE int64_t bounded_mid(int (*f)(struct fc_interval *))
{
	struct fc_interval iv;
	f(&iv);
	return iv.earliest_ns + (iv.latest_ns - iv.earliest_ns) / 2;
}

FCB_DEFINE(empty, opaque_one())
#if defined(__x86_64__) || defined(__aarch64__)
FCB_DEFINE(ctr_raw, ctr_raw())
FCB_DEFINE(ctr_ordered, fcb_ctr_ordered())
#endif
#if defined(__x86_64__)
FCB_DEFINE(ctr_rdtscp, ctr_rdtscp())
#endif
FCB_DEFINE(sys_cgt_monotonic, sys_cgt(CLOCK_MONOTONIC))
FCB_DEFINE(time, time(NULL))
FCB_DEFINE(gettimeofday, gtod_us())
FCB_DEFINE(getrusage, rusage_us())
FCB_DEFINE(cgt_realtime, cgt(CLOCK_REALTIME))
FCB_DEFINE(cgt_monotonic, cgt(CLOCK_MONOTONIC))
FCB_DEFINE(cgt_monotonic_raw, cgt(CLOCK_MONOTONIC_RAW))
FCB_DEFINE(cgt_boottime, cgt(CLOCK_BOOTTIME))
FCB_DEFINE(cgt_tai, cgt(CLOCK_TAI))
FCB_DEFINE(cgt_realtime_coarse, cgt(CLOCK_REALTIME_COARSE))
FCB_DEFINE(cgt_monotonic_coarse, cgt(CLOCK_MONOTONIC_COARSE))
FCB_DEFINE(cgt_process_cputime, cgt(CLOCK_PROCESS_CPUTIME_ID))
FCB_DEFINE(cgt_thread_cputime, cgt(CLOCK_THREAD_CPUTIME_ID))
FCB_DEFINE(fc_ticks, fc_ticks())
FCB_DEFINE(fc_ticks_relaxed, fc_ticks_relaxed())
FCB_DEFINE(fc_mono_ns, fc_mono_ns())
FCB_DEFINE(fc_mono_ns_relaxed, fc_mono_ns_relaxed())
FCB_DEFINE(fc_real_ns, fc_real_ns())
FCB_DEFINE(fc_real_ns_relaxed, fc_real_ns_relaxed())
FCB_DEFINE(fc_mono_coarse_ns, fc_mono_coarse_ns())
FCB_DEFINE(fc_real_coarse_ns, fc_real_coarse_ns())
FCB_DEFINE(fc_real_bounded, bounded_mid(fc_real_bounded))
FCB_DEFINE(fc_mono_bounded, bounded_mid(fc_mono_bounded))
FCB_DEFINE(fc_cgt_monotonic, fcgt(CLOCK_MONOTONIC))
FCB_DEFINE(fc_cgt_realtime, fcgt(CLOCK_REALTIME))
FCB_DEFINE(fc_cgt_monotonic_coarse, fcgt(CLOCK_MONOTONIC_COARSE))
FCB_DEFINE(fc_cgt_realtime_coarse, fcgt(CLOCK_REALTIME_COARSE))
FCB_DEFINE(fc_gettimeofday, fc_gtod_us())

#define E(NAME, GROUP, TL, CALL, ID, NOMINAL, NPU, BASE, SYM)                                              \
	{NAME, GROUP, TL, CALL, ID, NOMINAL, NPU, FCB_BASE_##BASE, fcb_batch_##SYM, fcb_sample_##SYM,           \
	 fcb_latency_##SYM}

const struct fcb_clock fcb_c_clocks[] = {
	E("(empty loop)", "reference", "none", "the batch loop alone (an opaque 1 summed)", -1, 0, 1, RAW, empty),
#if defined(__x86_64__)
	E("rdtsc", "counter", "counter", "rdtsc (bare counter read, unordered)", -1, 0, -1, RAW, ctr_raw),
	E("lfence;rdtsc", "counter", "counter", "lfence; rdtsc (bare ordered counter read)", -1, 0, -1, ORDERED,
	  ctr_ordered),
	E("rdtscp", "counter", "counter", "rdtscp", -1, 0, -1, ORDERED, ctr_rdtscp),
#elif defined(__aarch64__)
	E("cntvct", "counter", "counter", "mrs cntvct_el0 (bare counter read, unordered)", -1, 0, -1, RAW, ctr_raw),
	E("isb;cntvct", "counter", "counter", "isb; mrs cntvct_el0 (bare ordered counter read)", -1, 0, -1, ORDERED,
	  ctr_ordered),
#endif
	E("syscall.clock_gettime.MONOTONIC", "syscall", "monotonic", "syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts)",
	  CLOCK_MONOTONIC, 0, 1, ORDERED, sys_cgt_monotonic),
	E("time", "libc", "realtime", "time(NULL)", -1, 1e9, 1e9, RAW, time),
	E("gettimeofday", "libc", "realtime", "gettimeofday(&tv, NULL)", -1, 1e3, 1e3, ORDERED, gettimeofday),
	E("getrusage", "libc", "cputime", "getrusage(RUSAGE_SELF, &ru), user+system", -1, 1e3, 1e3, ORDERED, getrusage),
	E("clock_gettime.REALTIME", "clock_gettime", "realtime", "clock_gettime(CLOCK_REALTIME, &ts)",
	  CLOCK_REALTIME, 0, 1, ORDERED, cgt_realtime),
	E("clock_gettime.MONOTONIC", "clock_gettime", "monotonic", "clock_gettime(CLOCK_MONOTONIC, &ts)",
	  CLOCK_MONOTONIC, 0, 1, ORDERED, cgt_monotonic),
	E("clock_gettime.MONOTONIC_RAW", "clock_gettime", "monotonic_raw",
	  "clock_gettime(CLOCK_MONOTONIC_RAW, &ts)", CLOCK_MONOTONIC_RAW, 0, 1, ORDERED, cgt_monotonic_raw),
	E("clock_gettime.BOOTTIME", "clock_gettime", "boottime", "clock_gettime(CLOCK_BOOTTIME, &ts)",
	  CLOCK_BOOTTIME, 0, 1, ORDERED, cgt_boottime),
	E("clock_gettime.TAI", "clock_gettime", "tai", "clock_gettime(CLOCK_TAI, &ts)", CLOCK_TAI, 0, 1, ORDERED, cgt_tai),
	E("clock_gettime.REALTIME_COARSE", "clock_gettime", "realtime",
	  "clock_gettime(CLOCK_REALTIME_COARSE, &ts)", CLOCK_REALTIME_COARSE, 0, 1, RAW, cgt_realtime_coarse),
	E("clock_gettime.MONOTONIC_COARSE", "clock_gettime", "monotonic",
	  "clock_gettime(CLOCK_MONOTONIC_COARSE, &ts)", CLOCK_MONOTONIC_COARSE, 0, 1, RAW, cgt_monotonic_coarse),
	E("clock_gettime.PROCESS_CPUTIME_ID", "clock_gettime", "cputime",
	  "clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)", CLOCK_PROCESS_CPUTIME_ID, 0, 1, ORDERED, cgt_process_cputime),
	E("clock_gettime.THREAD_CPUTIME_ID", "clock_gettime", "cputime",
	  "clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)", CLOCK_THREAD_CPUTIME_ID, 0, 1, ORDERED, cgt_thread_cputime),
	E("fc_ticks", "counter", "counter", "fc_ticks() (ordered capture)", -1, 0, 0, ORDERED, fc_ticks),
	E("fc_ticks_relaxed", "counter", "counter", "fc_ticks_relaxed() (capture)", -1, 0, 0, RAW, fc_ticks_relaxed),
	E("fc_mono_ns", "fastclock", "monotonic", "fc_mono_ns()", -1, 0, 1, ORDERED, fc_mono_ns),
	E("fc_mono_ns_relaxed", "fastclock", "monotonic", "fc_mono_ns_relaxed()", -1, 0, 1, RAW, fc_mono_ns_relaxed),
	E("fc_real_ns", "fastclock", "realtime", "fc_real_ns()", -1, 0, 1, ORDERED, fc_real_ns),
	E("fc_real_ns_relaxed", "fastclock", "realtime", "fc_real_ns_relaxed()", -1, 0, 1, RAW, fc_real_ns_relaxed),
	E("fc_mono_coarse_ns", "fastclock", "monotonic", "fc_mono_coarse_ns()", -1, 0, 1, RAW, fc_mono_coarse_ns),
	E("fc_real_coarse_ns", "fastclock", "realtime", "fc_real_coarse_ns()", -1, 0, 1, RAW, fc_real_coarse_ns),
	E("fc_real_bounded", "fastclock", "realtime", "fc_real_bounded(&iv), interval midpoint", -1, 0, 1, ORDERED, fc_real_bounded),
	E("fc_mono_bounded", "fastclock", "monotonic", "fc_mono_bounded(&iv), interval midpoint", -1, 0, 1, ORDERED, fc_mono_bounded),
	E("fc_clock_gettime.MONOTONIC", "fastclock", "monotonic", "fc_clock_gettime(CLOCK_MONOTONIC, &ts)", -1, 0,
	  1, ORDERED, fc_cgt_monotonic),
	E("fc_clock_gettime.REALTIME", "fastclock", "realtime", "fc_clock_gettime(CLOCK_REALTIME, &ts)", -1, 0, 1, ORDERED, fc_cgt_realtime),
	E("fc_gettimeofday", "fastclock", "realtime", "fc_gettimeofday(&tv, NULL)", -1, 1e3, 1e3, ORDERED, fc_gettimeofday),
	E("fc_clock_gettime.MONOTONIC_COARSE", "fastclock", "monotonic", "fc_clock_gettime(CLOCK_MONOTONIC_COARSE, &ts)",
	  -1, 0, 1, RAW, fc_cgt_monotonic_coarse),
	E("fc_clock_gettime.REALTIME_COARSE", "fastclock", "realtime", "fc_clock_gettime(CLOCK_REALTIME_COARSE, &ts)",
	  -1, 0, 1, RAW, fc_cgt_realtime_coarse),
};
const size_t fcb_n_c_clocks = sizeof(fcb_c_clocks) / sizeof(fcb_c_clocks[0]);
