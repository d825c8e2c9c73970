/*
 * fc_first_check — what each public function's first call does, in a fresh process (issue 26): the files it
 * opens (none per process on the machine: no /proc/<pid>; a fixed handful at most), whether it waits (no
 * sched_yield, no sleep), whether it starts a thread (none), and whether it waited for the counter's rate
 * (no counter hand may be current after one call: publishing one needs the 1 ms rate measurement). Counted by
 * defining the library's libc calls here (the static library's calls bind to them); nothing is timed.
 * Exit 0: holds; 1: does not (printed); 2: usage.
 *
 *   fc_first_check call NAME     the first call of NAME (bench/first_calls.h) is checked
 *   fc_first_check ticks-early   captures taken before the rate is measured convert right, before and after it
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "first_calls.h"
#include "state.h"

/* Files a first call may open: the clocksource (trust step), and the bound source's (a ClockBound segment, a
 * VMClock device; chronyd is a socket): a fixed handful, whatever runs on the machine. */
#define MAX_OPENS 4

static int counting, n_open, n_proc, n_wait, n_thread, n_socket;
static char opened[MAX_OPENS + 4][96];

static int per_process_path(const char *p)
{
	/* /proc/<digits>/...: one file per process on the machine */
	if (strncmp(p, "/proc/", 6) != 0)
		return 0;
	p += 6;
	return *p >= '0' && *p <= '9';
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (counting) {
		if (n_open < (int)(sizeof(opened) / sizeof(opened[0])))
			snprintf(opened[n_open], sizeof(opened[0]), "%s", path);
		n_open++;
		n_proc += per_process_path(path);
	}
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

int socket(int domain, int type, int protocol)
{
	n_socket += counting;
	return (int)syscall(SYS_socket, domain, type, protocol);
}

int sched_yield(void)
{
	n_wait += counting;
	return (int)syscall(SYS_sched_yield);
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
	n_wait += counting;
	return (int)syscall(SYS_nanosleep, req, rem);
}

int clock_nanosleep(clockid_t id, int flags, const struct timespec *req, struct timespec *rem)
{
	n_wait += counting;
	return syscall(SYS_clock_nanosleep, id, flags, req, rem) == 0 ? 0 : errno;
}

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	n_thread += counting;
	*(void **)&real = dlsym(RTLD_NEXT, "pthread_create");
	return real ? real(t, attr, fn, arg) : EAGAIN;
}

static int counter_hand_current(void)
{
	const struct fc_hand *h = __atomic_load_n(&fc__pub.current, __ATOMIC_ACQUIRE);
	return !(FC__LOAD(h->flags) & FC_HAND_KERNEL);
}

static int check_call(const char *name)
{
	const struct fcf_fn *f = fcf_find(name);
	const char *forced = getenv("FASTCLOCK_SOURCE");
	int bad = 0, phase;
	if (!f || f->kind != FCF_READ) {
		fprintf(stderr, "fc_first_check: '%s' is not a read of bench/first_calls.h\n", name);
		return 2;
	}
	counting = 1;
	f->fn();
	counting = 0;
	phase = __atomic_load_n(&fc__global_clock()->start_phase, __ATOMIC_ACQUIRE);
	printf("%s: %d open(s)", name, n_open);
	for (int i = 0; i < n_open && i < (int)(sizeof(opened) / sizeof(opened[0])); i++)
		printf("%s %s", i ? "," : ":", opened[i]);
	printf("; %d socket(s), %d wait(s), %d thread(s); start-up phase %d, %s hand current\n", n_socket, n_wait,
	       n_thread, phase, counter_hand_current() ? "a counter" : "a kernel");
	if (n_proc) {
		fprintf(stderr, "fc_first_check: %s opened %d file(s) under /proc/<pid>: one per process on the machine\n",
			name, n_proc);
		bad = 1;
	}
	if (n_open > MAX_OPENS) {
		fprintf(stderr, "fc_first_check: %s opened %d files (at most %d)\n", name, n_open, MAX_OPENS);
		bad = 1;
	}
	if (n_wait) {
		fprintf(stderr, "fc_first_check: %s waited (%d sched_yield/sleep calls)\n", name, n_wait);
		bad = 1;
	}
	if (n_thread) {
		fprintf(stderr, "fc_first_check: %s started %d thread(s)\n", name, n_thread);
		bad = 1;
	}
	/* A counter hand is published only after the rate's 1 ms baseline: one call that returns with one
	 * current waited for the measurement. */
	if (counter_hand_current()) {
		fprintf(stderr, "fc_first_check: %s returned with a counter hand current: it waited for the rate\n", name);
		bad = 1;
	}
	/* A capture's unit is decided by the trust step, which fc_ticks takes; the rate is still unmeasured. */
	if (!strncmp(name, "fc_ticks", 8) && !(forced && !strcmp(forced, "kernel")) && FC_HAVE_COUNTER &&
	    phase != FC_START_RATE && !(phase == FC_START_DONE && !counter_hand_current())) {
		fprintf(stderr, "fc_first_check: %s left the start-up in phase %d (expected the rate's, %d)\n", name, phase,
			FC_START_RATE);
		bad = 1;
	}
	return bad;
}

static int64_t kns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Captures taken from the first call on, before the rate is measured, converted at once (against the start-up's
 * samples) and again once the first counter hand is out (fc_init finishes the start-up): each within the kernel
 * readings around its capture. A capture in the wrong unit (counter ticks read as ns) is off by seconds. */
#define EARLY 16
#define EARLY_BOUND_NS 20000 /* generous (a shared machine); the printed figure is the measurement */
static int ticks_early(void)
{
	uint64_t t[EARLY];
	int64_t k1[EARLY], k2[EARLY], now_m[EARLY], now_r[EARLY], worst = 0;
	int bad = 0, phase_after_first = -1;
	for (int i = 0; i < EARLY; i++) {
		/* 50 us apart (the rate's baseline is 1 ms): a conversion with a wrong rate is off in proportion to
		 * the capture's distance from the start-up's first sample, tens of us here (a halved rate: ~200 us) */
		const int64_t until = kns(CLOCK_MONOTONIC) + (i ? 50000 : 0);
		while (kns(CLOCK_MONOTONIC) < until)
			;
		k1[i] = kns(CLOCK_MONOTONIC);
		t[i] = fc_ticks();
		k2[i] = kns(CLOCK_MONOTONIC);
		if (i == 0)
			phase_after_first = __atomic_load_n(&fc__global_clock()->start_phase, __ATOMIC_ACQUIRE);
		now_m[i] = fc_ticks_to_mono_ns(t[i]);
		now_r[i] = fc_ticks_to_real_ns(t[i]) - (kns(CLOCK_REALTIME) - kns(CLOCK_MONOTONIC));
	}
	fc_init(); /* the first counter hand */
	for (int i = 0; i < EARLY; i++) {
		const int64_t later = fc_ticks_to_mono_ns(t[i]);
		const int64_t v[3] = {now_m[i], now_r[i], later};
		for (int j = 0; j < 3; j++) {
			const int64_t out = v[j] < k1[i] ? k1[i] - v[j] : v[j] > k2[i] ? v[j] - k2[i] : 0;
			if (out > worst)
				worst = out;
			if (out > EARLY_BOUND_NS && !bad) {
				fprintf(stderr, "fc_first_check: capture %d converted %s is %lld ns outside its kernel bracket\n",
					i, j == 0 ? "at once (mono)" : j == 1 ? "at once (real)" : "after the rate", (long long)out);
				bad = 1;
			}
		}
	}
	printf("ticks-early: phase %d after the first fc_ticks; %d captures before the rate, worst %lld ns outside "
	       "their kernel brackets (converted at once and after the rate)\n",
	       phase_after_first, EARLY, (long long)worst);
	return bad;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "call"))
		return check_call(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "ticks-early"))
		return ticks_early();
	fprintf(stderr, "usage: fc_first_check call NAME | ticks-early\n");
	return 2;
}
