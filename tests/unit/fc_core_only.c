/*
 * fc_core_only — a program that uses the clock core and never a bounded read: the precise, relaxed and coarse
 * clocks, the drop-ins, captures and their conversion, a period change; for 30 ms of the kernel's time (past the
 * start-up's first counter hand and the keeper's start, whose chores run), then exits.
 * core_only.sh links it statically and dynamically and checks that no code of the UTC bound is linked (nm) or run
 * (strace: no file, socket or directory of the bound's, no exit handler's system call). Exit 0, or 1.
 */
#include <stdio.h>
#include <time.h>

#include <fastclock.h>

static int64_t kns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(void)
{
	struct timespec ts;
	struct timeval tv;
	unsigned long long sum = 0; /* wraps: only its last bit is printed, to keep the reads */
	long long reads = 0;
	const int64_t end = kns(CLOCK_MONOTONIC) + 30000000;
	if (fc_set_period_ns(500000) != 0)
		return 1;
	while (kns(CLOCK_MONOTONIC) < end) {
		const uint64_t t = fc_ticks();
		sum += (uint64_t)fc_mono_ns() + (uint64_t)fc_real_ns() + (uint64_t)fc_mono_ns_relaxed() +
		       (uint64_t)fc_mono_coarse_ns() + (uint64_t)fc_real_coarse_ns();
		fc_clock_gettime(CLOCK_REALTIME, &ts);
		fc_gettimeofday(&tv, NULL);
		sum += (uint64_t)fc_ticks_to_mono_ns(t) + (uint64_t)ts.tv_nsec + (uint64_t)tv.tv_usec;
		reads++;
	}
	printf("reads=%lld sum=%llu\n", reads, sum & 1);
	return reads > 0 ? 0 : 1;
}
