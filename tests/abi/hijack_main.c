/*
 * A program that defines names the library uses internally (hijack_*.c) must still run the library's own
 * code: every public entry point is exercised, and none may have reached the program's definitions, which
 * count their calls in fc_abi_hijacked. Exit 0, or 1 naming what went wrong.
 */
#define _GNU_SOURCE
#include <fastclock.h>
#include <stdio.h>
#include <string.h>

volatile int fc_abi_hijacked;

int main(void)
{
	struct fc_status st;
	struct fc_interval iv;
	struct timespec ts;
	struct timeval tv;
	int64_t last = 0, end;
	if (fc_init() != 0 || fc_set_period_ns(100000) != 0) {
		fprintf(stderr, "hijack: fc_init/fc_set_period_ns failed\n");
		return 1;
	}
	end = fc_mono_ns() + 3000000; /* 3 ms: several re-anchors (slow path, writer, sampling, tracking) */
	while ((last = fc_mono_ns()) < end) {
		(void)fc_real_ns();
		(void)fc_mono_ns_relaxed();
		(void)fc_real_bounded(&iv);
		(void)fc_mono_bounded(&iv);
	}
	(void)fc_ticks_to_mono_ns(fc_ticks());
	(void)fc_ticks_to_real_ns(fc_ticks());
	(void)fc_clock_gettime(CLOCK_BOOTTIME, &ts);
	(void)fc_clock_gettime(CLOCK_REALTIME, &ts);
	(void)fc_gettimeofday(&tv, NULL);
	if (fc_updater_start(200000) == 0) {
		while (fc_mono_ns() < last + 2000000)
			(void)fc_mono_coarse_ns();
		(void)fc_updater_stop();
	}
	if (fc_status(&st) != 0) {
		fprintf(stderr, "hijack: fc_status failed\n");
		return 1;
	}
	if (fc_abi_hijacked || strstr(st.reason, "hijack") || strstr(st.config_error, "hijack")) {
		fprintf(stderr, "hijack: the library called the program's own definitions of its internal names "
				"%d times (backend %s: %s)\n", fc_abi_hijacked, fc_backend_name(st.backend), st.reason);
		return 1;
	}
	printf("hijack: ok, library code only (backend %s, %s, version %s)\n", fc_backend_name(st.backend), st.reason,
	       fc_version());
	return 0;
}
