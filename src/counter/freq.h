/*
 * fastclock — counter/freq.c: the counter's frequency hints (CPUID, the kernel, the architected register).
 * Floor 0. Calls nothing of the library.
 */
#ifndef FASTCLOCK_COUNTER_FREQ_H
#define FASTCLOCK_COUNTER_FREQ_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Returns the counter frequency in Hz (0 if unknown) and sets *src to an enum fc_freq_source. */
uint64_t fc__counter_freq_hint(int *src);

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_COUNTER_FREQ_H */
