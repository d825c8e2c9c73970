/*
 * fastclock — where the counter's frequency comes from at start-up, without spinning.
 *
 * In order of preference:
 *  1. the kernel's own TSC-to-ns parameters, published in the perf_event mmap page of a dummy software
 *     event (time_mult/time_shift; cap_user_time says they are valid). This is the kernel's calibrated
 *     value, available unprivileged (perf_event_paranoid <= 2 allows self-monitoring).
 *  2. CPUID leaf 0x15 (TSC/crystal ratio x crystal Hz) or the hypervisor leaf 0x40000010 (TSC kHz,
 *     VMware/KVM convention); on arm64, CNTFRQ_EL0.
 *  3. nothing (0): clock.c measures for ~100 us against CLOCK_MONOTONIC.
 * The tracker refines the rate at every re-anchor, so the hint only has to be close (1000 ppm).
 */
#include <string.h>
#include <unistd.h>

#include "../internal.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>

static uint64_t freq_from_perf(void)
{
	struct perf_event_attr attr;
	struct perf_event_mmap_page *pg;
	uint64_t hz = 0;
	long pgsz = sysconf(_SC_PAGESIZE);
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return 0;
	pg = mmap(NULL, (size_t)pgsz, PROT_READ, MAP_SHARED, fd, 0);
	if (pg != MAP_FAILED) {
		/* ns = cyc * time_mult >> time_shift (perf_event.h), so Hz = 1e9 * 2^shift / mult. Read once;
		 * the kernel only changes them when the clocksource changes. */
		if (pg->cap_user_time && pg->time_mult)
			hz = (uint64_t)(((unsigned __int128)1000000000u << pg->time_shift) / pg->time_mult);
		munmap(pg, (size_t)pgsz);
	}
	close(fd);
	return hz;
}

static uint64_t freq_from_cpuid(void)
{
	unsigned a, b, c, d;
	if (__get_cpuid_max(0, NULL) >= 0x15) {
		__cpuid_count(0x15, 0, a, b, c, d);
		if (a && b && c)
			return (uint64_t)c * b / a;
	}
	__cpuid(0x40000000, a, b, c, d);
	if (a >= 0x40000010) {
		__cpuid(0x40000010, a, b, c, d);
		if (a)
			return (uint64_t)a * 1000;
	}
	return 0;
}

uint64_t fc_counter_freq_hint(int *src)
{
	uint64_t hz = freq_from_perf();
	if (hz) {
		*src = FC_FREQ_PERF;
		return hz;
	}
	hz = freq_from_cpuid();
	*src = hz ? FC_FREQ_CPUID : FC_FREQ_NONE;
	return hz;
}

#elif defined(__aarch64__)
uint64_t fc_counter_freq_hint(int *src)
{
	uint64_t hz;
	__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(hz));
	*src = hz ? FC_FREQ_CNTFRQ : FC_FREQ_NONE;
	return hz;
}
#else
uint64_t fc_counter_freq_hint(int *src)
{
	*src = FC_FREQ_NONE;
	return 0;
}
#endif
