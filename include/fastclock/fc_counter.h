/*
 * fastclock — per-architecture counter hooks (the only code that touches the hardware counter).
 *
 * Each architecture supplies two inline hooks, as the Linux generic vDSO does:
 *   fc__counter_ordered()  the counter read cannot be performed before earlier loads complete, so a read
 *                          that happens-after another thread's read (C11 sense) sees a larger count;
 *   fc__counter_relaxed()  plain read: may be executed early or late relative to surrounding memory
 *                          operations, so it is monotonic within one thread only.
 * FC_COUNTER_NAME says which counter it is; FC_HAVE_COUNTER is 0 on a platform without a user-readable
 * counter, where the library always uses the kernel backend and the hooks return 0.
 */
#ifndef FASTCLOCK_FC_COUNTER_H
#define FASTCLOCK_FC_COUNTER_H

#include <stdint.h>

#if defined(__x86_64__)
#define FC_HAVE_COUNTER 1
#define FC_COUNTER_NAME "tsc"

static inline __attribute__((always_inline)) uint64_t fc__counter_relaxed(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline __attribute__((always_inline)) uint64_t fc__counter_ordered(void)
{
	uint32_t lo, hi;
	/* LFENCE waits until all earlier instructions, loads included, have completed before RDTSC executes
	 * (Intel SDM vol. 2B "RDTSC"; on AMD the kernel enables LFENCE's dispatch serialisation, and Zen
	 * parts have it architecturally). This is the same ordering the vDSO's rdtsc_ordered() uses. The
	 * "memory" clobber keeps the compiler from moving loads across it. */
	__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
}

#elif defined(__aarch64__)
#define FC_HAVE_COUNTER 1
#define FC_COUNTER_NAME "cntvct"

static inline __attribute__((always_inline)) uint64_t fc__counter_relaxed(void)
{
	uint64_t v;
	__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
	return v;
}

static inline __attribute__((always_inline)) uint64_t fc__counter_ordered(void)
{
	uint64_t v;
	/* ISB: the counter read is not speculated ahead of earlier instructions (Arm ARM D11.2.2, "reads of
	 * CNTVCT_EL0 can occur speculatively and out of order relative to other instructions"); arm64's
	 * __arch_get_hw_counter does the same. */
	__asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
}

#else
#define FC_HAVE_COUNTER 0
#define FC_COUNTER_NAME "none"
static inline uint64_t fc__counter_relaxed(void) { return 0; }
static inline uint64_t fc__counter_ordered(void) { return 0; }
#endif

#endif /* FASTCLOCK_FC_COUNTER_H */
