/*
 * fastclock fleet tests — the real engines, run hermetically: chronyd (-x: a virtual correction, this machine's
 * clock untouched) fed by an NTP SHM refclock at an offset known by construction, and ClockBound's daemon.
 * Each engine runs in the test's own IPC (the SHM key) and mount (/run) namespaces, started and stopped by pid.
 *
 * Owns: the SHM feeder, the daemons' configs and processes, the test-written ClockBound segment.
 * May call: libc, the bound sources (src/bound) for their segment layout.
 */
#ifndef FASTCLOCK_TESTS_ENGINES_H
#define FASTCLOCK_TESTS_ENGINES_H

#include <stdint.h>
#include <sys/types.h>

/* A refclock's time: CLOCK_REALTIME + offset_ns, sampled with uniform noise of +-noise_ns, into SHM unit `unit`. */
struct feeder {
	volatile int64_t offset_ns;
	volatile int64_t noise_ns;
	volatile int stop;
	volatile int paused; /* no samples: chronyd's reference goes silent */
	int unit;            /* the NTP SHM unit (key 0x4e545030 + unit) */
	void *shm;
	uint64_t samples;
	unsigned long thread; /* pthread_t */
};
int64_t now_ns(int clock);
/* Private IPC and mount namespaces, a private /run (tmp/run bound over it). 0, or -1 with a message. */
int engines_unshare(const char *tmp);
/* A network namespace of its own with its loopback up (chronyd's command port 323 free there). 0 or -1. */
int engines_unshare_net(void);
/* chronyd's command port (cmdport) in chronyd_start's config: 0 (none) unless a scenario sets it. */
extern int chronyd_cmdport;
/* Start writing SHM samples (unit f->unit) every 250 ms (chronyd's dpoll -2) on a thread. */
int feeder_start(struct feeder *f);
void feeder_stop(struct feeder *f);
/* The refclock of every scenario but one: SHM unit 0, a filtered sample every 2 s of 8 taken at 4 Hz. */
#define ENGINES_REFCLOCK "refclock SHM 0 poll 1 dpoll -2 filter 8 precision 1e-6\n"
/* chronyd -x with its config (the refclock lines given), socket, pid, drift files under dir; its pid or -1. */
const char *chronyd_path(void);
pid_t chronyd_start(const char *dir, const char *sock, const char *refclocks);
/* clock-bound-d (binary at path) as -d -m 1; returns its pid or -1. */
pid_t clockbound_start(const char *bin);
/* SIGTERM then wait (SIGKILL after 3 s). */
void engine_stop(pid_t pid);

#endif
