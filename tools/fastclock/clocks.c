/* The C clocks of `fastclock bench`: libc, every clock_gettime id, the raw counter, every fastclock read. */
#define _GNU_SOURCE
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>

#include <fastclock.h>

#include "clocks.h"

#ifndef CLOCK_TAI
#define CLOCK_TAI 11
#endif

volatile int64_t fcb_sink;

static inline int64_t ts_ns(const struct timespec *ts) { return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec; }

static inline int64_t cgt(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return ts_ns(&ts);
}

static inline int64_t fcgt(clockid_t id)
{
	struct timespec ts;
	fc_clock_gettime(id, &ts);
	return ts_ns(&ts);
}

static inline int64_t gtod_us(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

static inline int64_t fc_gtod_us(void)
{
	struct timeval tv;
	fc_gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

static inline int64_t rusage_us(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

static inline int64_t bounded_mid(int (*f)(struct fc_interval *))
{
	struct fc_interval iv;
	f(&iv);
	return iv.earliest_ns + (iv.latest_ns - iv.earliest_ns) / 2;
}

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
FCB_DEFINE(fc_gettimeofday, fc_gtod_us())

#define E(NAME, GROUP, TL, CALL, ID, NOMINAL, NPU, SYM)                                                     \
	{NAME, GROUP, TL, CALL, ID, NOMINAL, NPU, fcb_batch_##SYM, fcb_sample_##SYM}

const struct fcb_clock fcb_c_clocks[] = {
	E("time", "libc", "realtime", "time(NULL)", -1, 1e9, 1e9, time),
	E("gettimeofday", "libc", "realtime", "gettimeofday(&tv, NULL)", -1, 1e3, 1e3, gettimeofday),
	E("getrusage", "libc", "cputime", "getrusage(RUSAGE_SELF, &ru), user+system", -1, 1e3, 1e3, getrusage),
	E("clock_gettime.REALTIME", "clock_gettime", "realtime", "clock_gettime(CLOCK_REALTIME, &ts)",
	  CLOCK_REALTIME, 0, 1, cgt_realtime),
	E("clock_gettime.MONOTONIC", "clock_gettime", "monotonic", "clock_gettime(CLOCK_MONOTONIC, &ts)",
	  CLOCK_MONOTONIC, 0, 1, cgt_monotonic),
	E("clock_gettime.MONOTONIC_RAW", "clock_gettime", "monotonic_raw",
	  "clock_gettime(CLOCK_MONOTONIC_RAW, &ts)", CLOCK_MONOTONIC_RAW, 0, 1, cgt_monotonic_raw),
	E("clock_gettime.BOOTTIME", "clock_gettime", "boottime", "clock_gettime(CLOCK_BOOTTIME, &ts)",
	  CLOCK_BOOTTIME, 0, 1, cgt_boottime),
	E("clock_gettime.TAI", "clock_gettime", "tai", "clock_gettime(CLOCK_TAI, &ts)", CLOCK_TAI, 0, 1, cgt_tai),
	E("clock_gettime.REALTIME_COARSE", "clock_gettime", "realtime",
	  "clock_gettime(CLOCK_REALTIME_COARSE, &ts)", CLOCK_REALTIME_COARSE, 0, 1, cgt_realtime_coarse),
	E("clock_gettime.MONOTONIC_COARSE", "clock_gettime", "monotonic",
	  "clock_gettime(CLOCK_MONOTONIC_COARSE, &ts)", CLOCK_MONOTONIC_COARSE, 0, 1, cgt_monotonic_coarse),
	E("clock_gettime.PROCESS_CPUTIME_ID", "clock_gettime", "cputime",
	  "clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)", CLOCK_PROCESS_CPUTIME_ID, 0, 1, cgt_process_cputime),
	E("clock_gettime.THREAD_CPUTIME_ID", "clock_gettime", "cputime",
	  "clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)", CLOCK_THREAD_CPUTIME_ID, 0, 1, cgt_thread_cputime),
	E("fc_ticks", "counter", "counter", "fc_ticks() (ordered raw counter)", -1, 0, 0, fc_ticks),
	E("fc_ticks_relaxed", "counter", "counter", "fc_ticks_relaxed() (raw counter)", -1, 0, 0, fc_ticks_relaxed),
	E("fc_mono_ns", "fastclock", "monotonic", "fc_mono_ns()", -1, 0, 1, fc_mono_ns),
	E("fc_mono_ns_relaxed", "fastclock", "monotonic", "fc_mono_ns_relaxed()", -1, 0, 1, fc_mono_ns_relaxed),
	E("fc_real_ns", "fastclock", "realtime", "fc_real_ns()", -1, 0, 1, fc_real_ns),
	E("fc_real_ns_relaxed", "fastclock", "realtime", "fc_real_ns_relaxed()", -1, 0, 1, fc_real_ns_relaxed),
	E("fc_mono_coarse_ns", "fastclock", "monotonic", "fc_mono_coarse_ns()", -1, 0, 1, fc_mono_coarse_ns),
	E("fc_real_coarse_ns", "fastclock", "realtime", "fc_real_coarse_ns()", -1, 0, 1, fc_real_coarse_ns),
	E("fc_real_bounded", "fastclock", "realtime", "fc_real_bounded(&iv), interval midpoint", -1, 0, 1,
	  fc_real_bounded),
	E("fc_mono_bounded", "fastclock", "monotonic", "fc_mono_bounded(&iv), interval midpoint", -1, 0, 1,
	  fc_mono_bounded),
	E("fc_clock_gettime.MONOTONIC", "fastclock", "monotonic", "fc_clock_gettime(CLOCK_MONOTONIC, &ts)", -1, 0,
	  1, fc_cgt_monotonic),
	E("fc_clock_gettime.REALTIME", "fastclock", "realtime", "fc_clock_gettime(CLOCK_REALTIME, &ts)", -1, 0, 1,
	  fc_cgt_realtime),
	E("fc_gettimeofday", "fastclock", "realtime", "fc_gettimeofday(&tv, NULL)", -1, 1e3, 1e3, fc_gettimeofday),
};
const size_t fcb_n_c_clocks = sizeof(fcb_c_clocks) / sizeof(fcb_c_clocks[0]);
