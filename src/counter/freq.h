/*
 * fastclock — counter/freq.c: the CPU's own statement of the counter's frequency (CPUID, CNTFRQ_EL0).
 * Floor 0. Owns: fc__counter_freq_hint. May call: nothing of the library.
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
