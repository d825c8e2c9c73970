/*
 * fastclock — sample.c: bracketed counter-kernel-counter sampling, over an injected counter and reference clock.
 *
 * The seam that makes the algorithm testable: track.c, hands.c and sample.c never touch the hardware or the
 * kernel themselves; they take a struct fc_source. state.c builds the real one (fc__real_source) from the
 * counter hooks and clock_gettime; tests/sim builds simulated ones.
 * Floor 0. Owns: struct fc_source, struct fc_sample, struct fc_offset, FC_SAMPLE_TRIES, FC_KERNEL_TRIES.
 * May call: nothing of the library (only the source it is given).
 */
#ifndef FASTCLOCK_SAMPLE_H
#define FASTCLOCK_SAMPLE_H

#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fc_ntp; /* ntp.h */

struct fc_source {
	uint64_t (*counter)(void *ctx);                       /* ordered counter read */
	int (*kernel)(void *ctx, clockid_t id, int64_t *ns);  /* reference clock; 0 or -1 */
	int (*ntp)(void *ctx, struct fc_ntp *out);            /* NTP state; NULL: unknown */
	void *ctx;
	uint64_t mask; /* counter width mask (~0 for a 64-bit counter) */
	/* The counter's nominal rate in Hz that the start-up checks its measurement against (start.c), 0: none.
	 * NULL: the CPU's own figure (counter/freq.c) for a 64-bit counter, none for a narrower one. */
	uint64_t (*hz_hint)(void *ctx);
};

/* ---- sample.c: bracketed counter-kernel-counter sampling -------------------------------------------- */
struct fc_sample {
	uint64_t c_mid;  /* counter at the middle of the tightest counter bracket around a CLOCK_MONOTONIC read */
	uint64_t c_half; /* half that bracket's width, ticks */
	int64_t mono;    /* the CLOCK_MONOTONIC value read inside it */
	int64_t off_lo;  /* CLOCK_REALTIME - CLOCK_MONOTONIC lies in [off_lo, off_hi] */
	int64_t off_hi;
	/* CLOCK_BOOTTIME - CLOCK_MONOTONIC lies in [boot_lo, boot_hi] (lo > hi: not read). It grows only by the
	 * time spent suspended (CLOCK_MONOTONIC stops then, CLOCK_BOOTTIME does not): the tracker tells a suspend
	 * from a counter jump with it. */
	int64_t boot_lo;
	int64_t boot_hi;
};

/* Tries per sample. The best of 4 brackets is within a few ns of the narrowest possible on an idle core and
 * survives up to 3 preempted tries; each try costs one counter pair plus one vDSO call. */
#define FC_SAMPLE_TRIES 4
int fc__sample_take(const struct fc_source *src, int tries, struct fc_sample *out);

/* The wall offset CLOCK_REALTIME - CLOCK_MONOTONIC: a realtime read between two monotonic reads m1 <= m2 puts
 * it in [lo, hi] = [r - m2, r - m1]; the narrowest of `brackets` such brackets is kept, with its m1. Each
 * kernel read is tried up to `tries` times (fc__kernel_ns: FC_KERNEL_TRIES). Returns -1, at the end of the
 * bracket, if a read still failed (out then holds the narrowest bracket so far, built from the values the
 * failed reads left: 0 for the first bracket, as fc__kernel_ns returns). The readers that add the offset use
 * its middle, fc__offset_mid. */
struct fc_offset {
	int64_t lo, hi, m1;
};
/* clock_gettime(CLOCK_MONOTONIC / CLOCK_REALTIME) cannot fail on Linux with a valid pointer; a seccomp
 * filter on the syscall fallback could make one call fail now and then. Retry: a read that returned 0
 * would be raised to a floor below values already returned (found by fuzz_track). */
#define FC_KERNEL_TRIES 8
int fc__sample_offset(const struct fc_source *src, int brackets, int tries, struct fc_offset *out);
static inline int64_t fc__offset_mid(const struct fc_offset *o) { return o->hi - (o->hi - o->lo) / 2; }

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_SAMPLE_H */
