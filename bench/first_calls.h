/*
 * Every public function of <fastclock.h>, each callable as the first fastclock call of a process: shared by
 * bench/fc_first_call.c (how long that first call takes, beside the vDSO's first call) and
 * tests/unit/fc_first_check.c (what it does: files opened, waits, threads).
 */
#ifndef FASTCLOCK_BENCH_FIRST_CALLS_H
#define FASTCLOCK_BENCH_FIRST_CALLS_H

#include <string.h>
#include <time.h>

#include <fastclock.h>

static int64_t fcf_sink; /* keeps every call's result alive */

static void fcf_ts(int rc, const struct timespec *ts) { fcf_sink += rc + ts->tv_nsec; }
static void f_vdso_mono(void) { struct timespec ts; fcf_ts(clock_gettime(CLOCK_MONOTONIC, &ts), &ts); }
static void f_vdso_real(void) { struct timespec ts; fcf_ts(clock_gettime(CLOCK_REALTIME, &ts), &ts); }
static void f_mono(void) { fcf_sink += fc_mono_ns(); }
static void f_real(void) { fcf_sink += fc_real_ns(); }
static void f_mono_relaxed(void) { fcf_sink += fc_mono_ns_relaxed(); }
static void f_real_relaxed(void) { fcf_sink += fc_real_ns_relaxed(); }
static void f_mono_us(void) { fcf_sink += fc_mono_us(); }
static void f_ustime(void) { fcf_sink += fc_ustime(); }
static void f_mono_coarse(void) { fcf_sink += fc_mono_coarse_ns(); }
static void f_real_coarse(void) { fcf_sink += fc_real_coarse_ns(); }
static void f_ticks(void) { fcf_sink += (int64_t)fc_ticks(); }
static void f_ticks_relaxed(void) { fcf_sink += (int64_t)fc_ticks_relaxed(); }
static void f_ticks_mono(void) { fcf_sink += fc_ticks_to_mono_ns(fc_ticks()); }
static void f_ticks_real(void) { fcf_sink += fc_ticks_to_real_ns(fc_ticks()); }
static void f_real_bounded(void) { struct fc_interval iv; fcf_sink += fc_real_bounded(&iv) + iv.latest_ns; }
static void f_mono_bounded(void) { struct fc_interval iv; fcf_sink += fc_mono_bounded(&iv) + iv.latest_ns; }
static void f_real_after(void) { fcf_sink += fc_real_after(0); }
static void f_commit_wait(void) { fcf_sink += fc_commit_wait(0, 0); } /* t in the past: returns at once */
static void f_gettime_mono(void) { struct timespec ts; fcf_ts(fc_clock_gettime(CLOCK_MONOTONIC, &ts), &ts); }
static void f_gettime_real(void) { struct timespec ts; fcf_ts(fc_clock_gettime(CLOCK_REALTIME, &ts), &ts); }
static void f_gettime_coarse(void) { struct timespec ts; fcf_ts(fc_clock_gettime(CLOCK_MONOTONIC_COARSE, &ts), &ts); }
static void f_gettimeofday(void) { struct timeval tv; fcf_sink += fc_gettimeofday(&tv, NULL) + tv.tv_usec; }
static void f_init(void) { fcf_sink += fc_init(); }
static void f_status(void) { struct fc_status st; fcf_sink += fc_status(&st); }

struct fcf_fn {
	const char *name;
	void (*fn)(void);
	int kind; /* FCF_VDSO: the baseline; FCF_READ: a read (never waits); FCF_CONTROL: waits by contract */
};
enum { FCF_VDSO, FCF_READ, FCF_CONTROL };

static const struct fcf_fn fcf_fns[] = {
	{"vdso_clock_gettime_mono", f_vdso_mono, FCF_VDSO},
	{"vdso_clock_gettime_real", f_vdso_real, FCF_VDSO},
	{"fc_mono_ns", f_mono, FCF_READ},
	{"fc_real_ns", f_real, FCF_READ},
	{"fc_mono_ns_relaxed", f_mono_relaxed, FCF_READ},
	{"fc_real_ns_relaxed", f_real_relaxed, FCF_READ},
	{"fc_mono_us", f_mono_us, FCF_READ},
	{"fc_ustime", f_ustime, FCF_READ},
	{"fc_mono_coarse_ns", f_mono_coarse, FCF_READ},
	{"fc_real_coarse_ns", f_real_coarse, FCF_READ},
	{"fc_ticks", f_ticks, FCF_READ},
	{"fc_ticks_relaxed", f_ticks_relaxed, FCF_READ},
	{"fc_ticks_to_mono_ns(fc_ticks())", f_ticks_mono, FCF_READ},
	{"fc_ticks_to_real_ns(fc_ticks())", f_ticks_real, FCF_READ},
	{"fc_real_bounded", f_real_bounded, FCF_READ},
	{"fc_mono_bounded", f_mono_bounded, FCF_READ},
	{"fc_real_after", f_real_after, FCF_READ},
	{"fc_commit_wait(past)", f_commit_wait, FCF_READ},
	{"fc_clock_gettime(MONOTONIC)", f_gettime_mono, FCF_READ},
	{"fc_clock_gettime(REALTIME)", f_gettime_real, FCF_READ},
	{"fc_clock_gettime(MONOTONIC_COARSE)", f_gettime_coarse, FCF_READ},
	{"fc_gettimeofday", f_gettimeofday, FCF_READ},
	{"fc_init", f_init, FCF_CONTROL},
	{"fc_status", f_status, FCF_CONTROL},
};
#define FCF_N (sizeof(fcf_fns) / sizeof(fcf_fns[0]))

static const struct fcf_fn *fcf_find(const char *name)
{
	for (size_t i = 0; i < FCF_N; i++)
		if (!strcmp(fcf_fns[i].name, name))
			return &fcf_fns[i];
	return NULL;
}

#endif
