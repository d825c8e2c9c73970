/*
 * A consumer translation unit for the header compile matrix (compile_matrix.sh): it instantiates every inline
 * function of the public headers, compiled as C and as C++ in every standard the matrix names, strict and GNU,
 * with -Wall -Wextra -Wpedantic -Werror (and -Wold-style-cast for C++). The drop-ins exist where <time.h>
 * declares clockid_t (not in strict ISO C without _POSIX_C_SOURCE, like clock_gettime itself).
 */
#ifdef __cplusplus
#include <fastclock.hpp>
#else
#include <fastclock.h>
#endif

int64_t fc_consumer_use_everything(void);
int64_t fc_consumer_use_everything(void)
{
	struct fc_interval iv;
	struct fc_status st;
	int64_t sum = fc_mono_ns() + fc_mono_ns_relaxed() + fc_real_ns() + fc_real_ns_relaxed();
	sum += fc_mono_coarse_ns() + fc_real_coarse_ns() + fc_ustime() + fc_mstime() + fc_mono_us();
	sum += fc_real_bounded(&iv) + fc_mono_bounded(&iv) + iv.earliest_ns;
	sum += fc_ticks_to_mono_ns(fc_ticks()) + fc_ticks_to_real_ns(fc_ticks_relaxed());
	sum += fc_init() + fc_set_period_ns(1000000) + fc_updater_start(0) + fc_updater_stop() + fc_status(&st);
	sum += fc_abi() + (fc_version()[0] == FASTCLOCK_VERSION_MAJOR + '0') + FASTCLOCK_VERSION + FASTCLOCK_ABI;
	sum += (fc_sync_name(0)[0] + fc_backend_name(1)[0] + fc_freq_source_name(0)[0]) + FC_HAVE_COUNTER;
#if defined(CLOCK_MONOTONIC)
	{
		struct timespec ts;
		struct timeval tv;
		sum += fc_clock_gettime(CLOCK_MONOTONIC, &ts) + fc_gettimeofday(&tv, NULL) + ts.tv_nsec + tv.tv_usec;
	}
#endif
#ifdef __cplusplus
	sum += fastclock::steady_clock::now().time_since_epoch().count();
	sum += fastclock::system_clock::to_time_t(fastclock::system_clock::now());
	sum += fastclock::coarse_steady_clock::now().time_since_epoch().count();
#endif
	return sum;
}
