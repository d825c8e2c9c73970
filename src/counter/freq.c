/*
 * fastclock — the CPU's own statement of the counter's frequency: a cross-check for the start-up
 * measurement (windup.c), never a substitute for it.
 *
 *  - x86-64: CPUID leaf 0x15 (TSC/crystal ratio x crystal Hz) or the hypervisor leaf 0x40000010 (TSC kHz,
 *    VMware/KVM convention); arm64: CNTFRQ_EL0. Cheap (a CPUID traps to the hypervisor in a VM: ~1-2 us).
 *  - Not the perf_event mmap page (the kernel's calibrated time_mult): perf_event_open can take
 *    milliseconds in a guest that does not even provide the page: the whole budget of a short program.
 * The start-up measures the rate against CLOCK_MONOTONIC over 1 ms and the tracker refines it at every
 * re-anchor; a measurement far from this figure was disturbed and is taken again.
 * Async-signal-safe (CPUID / a system register read).
 */
#include <stddef.h>

#include "fastclock.h"
#include "freq.h"

#if defined(__x86_64__)
#include <cpuid.h>

static uint64_t freq_from_cpuid(void)
{
	unsigned a, b, c, d;
	if (__get_cpuid_max(0, NULL) >= 0x15) {
		__cpuid_count(0x15, 0, a, b, c, d);
		if (a && b && c)
			return (uint64_t)c * b / a;
	}
	/* The hypervisor leaves exist only under a hypervisor (CPUID 1 ECX[31]); elsewhere 0x40000000 returns
	 * another leaf's data. */
	__cpuid(1, a, b, c, d);
	if (!(c & (1u << 31)))
		return 0;
	__cpuid(0x40000000, a, b, c, d);
	if (a >= 0x40000010) {
		__cpuid(0x40000010, a, b, c, d);
		if (a)
			return (uint64_t)a * 1000;
	}
	return 0;
}

uint64_t fc__counter_freq_hint(int *src)
{
	uint64_t hz = freq_from_cpuid();
	*src = hz ? FC_FREQ_CPUID : FC_FREQ_NONE;
	return hz;
}

#elif defined(__aarch64__)
uint64_t fc__counter_freq_hint(int *src)
{
	uint64_t hz;
	__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(hz));
	*src = hz ? FC_FREQ_CNTFRQ : FC_FREQ_NONE;
	return hz;
}
#else
uint64_t fc__counter_freq_hint(int *src)
{
	*src = FC_FREQ_NONE;
	return 0;
}
#endif
