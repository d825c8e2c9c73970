/*
 * fastclock — ntp.c: the kernel's NTP state (adjtimex, modes = 0) and its classification.
 * Floor 0. Owns: struct fc_ntp, FC_NTP_TICK_NOMINAL_US. May call: nothing of the library (libc adjtimex).
 */
#ifndef FASTCLOCK_NTP_H
#define FASTCLOCK_NTP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fc_ntp {
	int sync;            /* enum fc_sync (never DISRUPTED: that is the tracker's verdict) */
	int status;          /* STA_* bits */
	int64_t maxerror_ns; /* kernel's bound on its error vs UTC */
	int64_t esterror_ns;
	long tick_us; /* adjtimex tick: us per USER_HZ tick (FC_NTP_TICK_NOMINAL_US untouched); 0: unknown */
	int64_t offset_ns; /* |the kernel PLL's offset still to slew| (fc__ntp_offset_ns); 0 from classify */
};
/* USER_HZ is 100 on x86-64 and arm64 (the architectures with a counter backend): the kernel's nominal tick is
 * 1000000 / USER_HZ us, and ADJ_TICK moves it by 100 ppm a unit within +-10 % (adjtimex(2)). */
#define FC_NTP_TICK_NOMINAL_US 10000L
/* Classify an adjtimex() result (rc: its return value or -1). Pure. Returns out->sync. */
int fc__ntp_classify(int rc, int status, long maxerror_us, long esterror_us, struct fc_ntp *out);
int fc__ntp_read(void *ctx, struct fc_ntp *out); /* adjtimex(modes = 0), classified */
/* adjtimex's offset (the correction the kernel PLL has still to slew in: ns with STA_NANO, else us) as |ns|,
 * at most 16 s. Pure. */
int64_t fc__ntp_offset_ns(long offset, int status);

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_NTP_H */
