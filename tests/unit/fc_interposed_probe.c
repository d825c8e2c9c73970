/* fc_interposed_probe: a program with a clock_gettime of its own in libc's place (as libfaketime's, with a true
 * CLOCK_MONOTONIC: DONT_FAKE_MONOTONIC=1), CLOCK_REALTIME and CLOCK_REALTIME_COARSE 1000 s ahead of the kernel's.
 * The library reads the clocks the program's clock_gettime gives (vdso.c checks each clock it would read through
 * the vDSO against it). Exit 0 when fc_real_ns() and fc_real_coarse_ns() are the program's, 1 when the kernel's. */
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fastclock.h"

#define AHEAD_NS 1000000000000LL

int clock_gettime(clockid_t id, struct timespec *ts)
{
	const long rc = syscall(SYS_clock_gettime, id, ts);
	if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE))
		ts->tv_sec += AHEAD_NS / 1000000000;
	return (int)rc;
}

static int64_t kernel_real(void)
{
	struct timespec ts;
	syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(void)
{
	/* the start-up finished: the library has found the vDSO's function, or kept libc's (start.c) */
	(void)fc_init();
	/* the program's clock is 1000 s ahead; a read of the kernel's is within a few seconds of the kernel's */
	const int64_t k = kernel_real();
	const int64_t r = fc_real_ns(), rc = fc_real_coarse_ns();
	const int ok = r - k > AHEAD_NS / 2 && rc - k > AHEAD_NS / 2;
	printf("fc_real_ns - kernel %lld ns, fc_real_coarse_ns - kernel %lld ns: %s\n", (long long)(r - k),
	       (long long)(rc - k), ok ? "the program's clock" : "the kernel's clock");
	return !ok;
}
