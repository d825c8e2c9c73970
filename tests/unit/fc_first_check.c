/*
 * fc_first_check — what each public function's first call does, in a fresh process: the files it
 * opens (none per process on the machine: no /proc/<pid>; a fixed handful at most), whether it waits (no
 * sched_yield, no sleep), whether it starts a thread (none), and whether it waited for the counter's rate
 * (no counter hand may be current after one call: publishing one needs the 1 ms rate measurement). Counted by
 * defining the library's libc calls here (the static library's calls bind to them); nothing is timed.
 * Exit 0: holds; 1: does not (printed); 2: usage.
 *
 *   fc_first_check call NAME     the first call of NAME (bench/first_calls.h) is checked
 *   fc_first_check ticks-early   captures taken before the rate is measured convert right, before and after it
 *   fc_first_check ticks-threads threads capture from the process's start across the trust step (early captures,
 *                                kernel ns, then counter ticks): every capture converts inside its kernel bracket
 *   fc_first_check keeper-policy  the updater thread runs SCHED_FIFO where this process may have a thread do so
 *                                 (probed with a thread of its own), unless FASTCLOCK_UPDATER_RT=0; else SCHED_OTHER;
 *                                 the coarse mode follows: one load (fc__pub.coarse_mono kept) exactly when FIFO
 *   fc_first_check coarse-checked  (with a keeper that is not real-time) threads read the coarse clocks across the
 *                                 keeper's start, a slow keeper, its stop and a new start: every value is at least
 *                                 the kernel's coarse clock read just before it, never decreases, and is never
 *                                 above a precise read made after it
 *   fc_first_check coarse-start-lock  a coarse read by a thread holding a lock the keeper's pthread_create needs
 *                                 returns (it waited for the start: a deadlock), never back after it
 *   fc_first_check bound-cache   (the kernel backend) a bounded read that finds the writer lock taken (another
 *                                thread's refresh, or its own thread's when in a signal handler) is never narrower
 *                                than the source's bound at its time: a ClockBound segment's grows at its drift
 *   fc_first_check chronyd-silent a chronyd that never answers (a socket of the test's that is never read): the
 *                                 first bounded read does not touch it, the reads after it ask it and keep returning
 *                                 (counted by reads, not timed), never SYNCHRONIZED without its reply
 *
 * A bounded read's first call in auto mode (FASTCLOCK_BOUND_SOURCE unset or auto) reads nothing of the bound's:
 * none of the bound sources' system calls below (adjtimex, openat, stat, fstatat, lstat, socket, bind, connect,
 * mkdirat) nor an open other than the trust step's clocksource file. Those are counted only in an unsanitized
 * build (a sanitizer's runtime intercepts them itself); open and socket in every build.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/un.h>
#include <unistd.h>

#include "bound/clockbound.h"
#include "first_calls.h"
#include "start.h"
#include "state.h"
#include "windup.h"

/* Files a first call may open: the clocksource (trust step), and the bound source's (a ClockBound segment, a
 * VMClock device; chronyd is a socket): a fixed handful, whatever runs on the machine. */
#define MAX_OPENS 4

static int counting, n_open, n_proc, n_wait, n_thread, n_socket, n_bound_sys, n_clocksource, n_adjtimex;
static char opened[MAX_OPENS + 4][96];

static int per_process_path(const char *p)
{
	/* /proc/<digits>/...: one file per process on the machine */
	if (strncmp(p, "/proc/", 6) != 0)
		return 0;
	p += 6;
	return *p >= '0' && *p <= '9';
}

/* open's and openat's mode argument: there only with O_CREAT or O_TMPFILE */
#define OPEN_MODE(flags, mode)                                                                                       \
	do {                                                                                                         \
		va_list ap_;                                                                                         \
		va_start(ap_, flags);                                                                                \
		mode = ((flags) & (O_CREAT | O_TMPFILE)) ? va_arg(ap_, mode_t) : 0;                                  \
		va_end(ap_);                                                                                         \
	} while (0)

int open(const char *path, int flags, ...)
{
	mode_t mode;
	OPEN_MODE(flags, mode);
	if (counting) {
		if (n_open < (int)(sizeof(opened) / sizeof(opened[0])))
			snprintf(opened[n_open], sizeof(opened[0]), "%s", path);
		n_open++;
		n_proc += per_process_path(path);
		n_clocksource += strstr(path, "/clocksource") != NULL; /* the trust step's (trust.c) */
	}
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

int socket(int domain, int type, int protocol)
{
	__atomic_fetch_add(&n_socket, counting, __ATOMIC_RELAXED);
	return (int)syscall(SYS_socket, domain, type, protocol);
}

static long n_yield_all; /* coarse-start-lock: every sched_yield of the library's, counted or not */
int sched_yield(void)
{
	__atomic_fetch_add(&n_yield_all, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&n_wait, counting, __ATOMIC_RELAXED); /* ticks-threads: threads yield at once */
	return (int)syscall(SYS_sched_yield);
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
	__atomic_fetch_add(&n_wait, counting, __ATOMIC_RELAXED);
	return (int)syscall(SYS_nanosleep, req, rem);
}

int clock_nanosleep(clockid_t id, int flags, const struct timespec *req, struct timespec *rem)
{
	__atomic_fetch_add(&n_wait, counting, __ATOMIC_RELAXED);
	return syscall(SYS_clock_nanosleep, id, flags, req, rem) == 0 ? 0 : errno;
}

/* The bound sources' other system calls (src/bound: bound.c, chrony.c, kernel.c through ntp.c), defined here so
 * the library's calls count (see the top). */
#ifndef FCF_SANITIZED_EARLY
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define FCF_SANITIZED_EARLY 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define FCF_SANITIZED_EARLY 1
#endif
#endif
#endif
#ifndef FCF_SANITIZED_EARLY
static void bound_sys(void) { __atomic_fetch_add(&n_bound_sys, counting, __ATOMIC_RELAXED); }
int adjtimex(struct timex *tx)
{
	bound_sys();
	__atomic_fetch_add(&n_adjtimex, counting, __ATOMIC_RELAXED);
	return (int)syscall(SYS_adjtimex, tx);
}
int openat(int dfd, const char *path, int flags, ...)
{
	mode_t mode;
	OPEN_MODE(flags, mode);
	bound_sys();
	return (int)syscall(SYS_openat, dfd, path, flags, mode);
}
int fstatat(int dfd, const char *path, struct stat *st, int flags)
{
	bound_sys();
	return (int)syscall(SYS_newfstatat, dfd, path, st, flags);
}
int stat(const char *path, struct stat *st) { return fstatat(AT_FDCWD, path, st, 0); }
int lstat(const char *path, struct stat *st) { return fstatat(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW); }
int bind(int fd, const struct sockaddr *a, socklen_t n)
{
	bound_sys();
	return (int)syscall(SYS_bind, fd, a, n);
}
int connect(int fd, const struct sockaddr *a, socklen_t n)
{
	bound_sys();
	return (int)syscall(SYS_connect, fd, a, n);
}
int mkdirat(int dfd, const char *path, mode_t mode)
{
	bound_sys();
	return (int)syscall(SYS_mkdirat, dfd, path, mode);
}
#endif

/* A sanitizer's runtime intercepts pthread_create itself: a definition here would bypass it (TSan then faults in
 * the new thread). There the threads are counted in /proc/self/task only (tasks() below), as they are anyway. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define FCF_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define FCF_SANITIZED 1
#endif
#endif
#ifndef FCF_SANITIZED
/* coarse-start-lock: the next pthread_create (the keeper's) needs l_lock first, as glibc's needs its stack cache's,
 * the dynamic loader's TLS lock or a malloc arena's, which the thread it interrupted may hold. */
static pthread_mutex_t l_lock = PTHREAD_MUTEX_INITIALIZER;
static int l_armed, l_in_create, l_spun;
#define L_SPIN_YIELDS 1000 /* a coarse read's wait yields every 64 turns: 64000 turns, never one precise read */
static void l_take(void)
{
	const long y0 = __atomic_load_n(&n_yield_all, __ATOMIC_RELAXED);
	__atomic_store_n(&l_in_create, 1, __ATOMIC_RELEASE);
	while (pthread_mutex_trylock(&l_lock) != 0) {
		if (__atomic_load_n(&n_yield_all, __ATOMIC_RELAXED) - y0 > L_SPIN_YIELDS) {
			__atomic_store_n(&l_spun, 1, __ATOMIC_RELAXED); /* it waits for this start: go on without the lock */
			return;
		}
		syscall(SYS_sched_yield); /* not counted */
	}
	pthread_mutex_unlock(&l_lock);
}

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	__atomic_fetch_add(&n_thread, counting, __ATOMIC_RELAXED);
	if (__atomic_exchange_n(&l_armed, 0, __ATOMIC_ACQ_REL))
		l_take();
	*(void **)&real = dlsym(RTLD_NEXT, "pthread_create");
	return real ? real(t, attr, fn, arg) : EAGAIN;
}
#endif

/* The process's threads, from /proc/self/task (outside counting: its open is the test's). */
static int tasks(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static int counter_hand_current(void)
{
	const struct fc_hand *h = __atomic_load_n(&fc__pub.current, __ATOMIC_ACQUIRE);
	return !(FC__LOAD(h->flags) & FC_HAND_KERNEL);
}

static int64_t kns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Whether this process's captures before the trust step are early ones (kernel ns, src/start.c): on x86-64,
 * when the counter leads CLOCK_MONOTONIC's ns count by FC_EARLY_GAP_NS (read here before the library's first
 * call; the lead only grows). Decided from the machine, not from the library's own flag. */
static int early_expected(void)
{
	const char *forced = getenv("FASTCLOCK_SOURCE");
	const int64_t k = kns(CLOCK_MONOTONIC);
	const uint64_t t = fc__counter_ordered();
#if defined(__x86_64__)
	return !(forced && !strcmp(forced, "kernel")) && k > 0 && t > (uint64_t)k &&
	       t - (uint64_t)k >= (uint64_t)FC_EARLY_GAP_NS;
#else
	(void)forced, (void)k, (void)t;
	return 0;
#endif
}

/* Are the bound's other system calls counted (an unsanitized build)? */
static int counted_sys(void)
{
#ifndef FCF_SANITIZED_EARLY
	return 1;
#else
	return 0;
#endif
}

static int is_bounded(const char *name)
{
	return strstr(name, "bounded") || !strcmp(name, "fc_real_after") || !strncmp(name, "fc_commit_wait", 14);
}

static int bound_auto(void)
{
	const char *m = getenv("FASTCLOCK_BOUND_SOURCE");
	return !m || !*m || !strcmp(m, "auto");
}

static int check_call(const char *name)
{
	const struct fcf_fn *f = fcf_find(name);
	const char *forced = getenv("FASTCLOCK_SOURCE");
	const int early = early_expected();
	int bad = 0, phase;
	int64_t after;
	if (!f || f->kind != FCF_READ) {
		fprintf(stderr, "fc_first_check: '%s' is not a read of bench/first_calls.h\n", name);
		return 2;
	}
	const int tasks_before = tasks();
	counting = 1;
	f->fn();
	counting = 0;
	after = kns(CLOCK_MONOTONIC);
	if (tasks() > tasks_before && n_thread == 0)
		n_thread = tasks() - tasks_before; /* a thread the wrapper did not see (a sanitized build) */
	phase = __atomic_load_n(&fc__global_clock()->start.phase, __ATOMIC_ACQUIRE);
	printf("%s: %d open(s)", name, n_open);
	for (int i = 0; i < n_open && i < (int)(sizeof(opened) / sizeof(opened[0])); i++)
		printf("%s %s", i ? "," : ":", opened[i]);
	printf("; %d socket(s), %d other bound system call(s), %d wait(s), %d thread(s); start-up phase %d, %s hand "
	       "current\n", n_socket, n_bound_sys, n_wait, n_thread, phase, counter_hand_current() ? "a counter" : "a kernel");
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
	/* A bounded read's first call in auto mode reads nothing of the bound's: no source opened, asked or looked
	 * for, no adjtimex (src/bounded.c first_locked). The trust step's clocksource file may be
	 * opened by a first call that ran past its due time. */
	if (is_bounded(name) && bound_auto() && (n_bound_sys || n_socket || n_open != n_clocksource)) {
		fprintf(stderr, "fc_first_check: %s's first call made %d of the bound's system calls, %d socket(s), %d "
			"open(s) besides the clocksource's: it should read nothing of the bound\n", name, n_bound_sys, n_socket,
			n_open - n_clocksource);
		bad = 1;
	}
	/* The second bounded read opens the sources and reads the kernel's NTP state once: the clock's refresh and
	 * the kernel source share one adjtimex (src/bounded.c ntp_shared). Unless it published the first counter
	 * hand (a slow machine: that re-anchor reads the state again, for its tick). */
	if (is_bounded(name) && bound_auto() && counted_sys() && !counter_hand_current()) {
		struct fc_interval iv;
		int adj;
		n_adjtimex = 0;
		counting = 1;
		fc_real_bounded(&iv);
		counting = 0;
		adj = n_adjtimex;
		if (!counter_hand_current() && adj != 1) {
			fprintf(stderr, "fc_first_check: the second bounded read made %d adjtimex calls (one, shared, expected)\n",
				adj);
			bad = 1;
		}
	}
	/* A counter hand is published only after the rate's 1 ms baseline: one call that returns with one
	 * current waited for the measurement. */
	if (counter_hand_current()) {
		fprintf(stderr, "fc_first_check: %s returned with a counter hand current: it waited for the rate\n", name);
		bad = 1;
	}
	/* Early captures (kernel ns before the trust step): the first fc_ticks takes no trust step, so opens
	 * nothing and leaves the start-up where it was. */
	/* Unless the call itself ran past the step's due time (FC_START_DEFER_NS after the library's start:
	 * preempted on a busy machine), when taking it is right. */
	if (!strncmp(name, "fc_ticks", 8) && early && (phase != FC_START_TRUST || n_open) &&
	    after < fc__global_clock()->start.early_from + FC_START_DEFER_NS) {
		fprintf(stderr, "fc_first_check: %s took the trust step (phase %d, %d open(s)): its capture should be an "
			"early one (kernel ns)\n", name, phase, n_open);
		bad = 1;
	}
	/* Otherwise a capture's unit is decided by the trust step, which fc_ticks takes; the rate is still
	 * unmeasured. */
	if (!strncmp(name, "fc_ticks", 8) && !early && !(forced && !strcmp(forced, "kernel")) && FC_HAVE_COUNTER &&
	    phase != FC_START_RATE && !(phase == FC_START_DONE && !counter_hand_current())) {
		fprintf(stderr, "fc_first_check: %s left the start-up in phase %d (expected the rate's, %d)\n", name, phase,
			FC_START_RATE);
		bad = 1;
	}
	return bad;
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
	const int early = early_expected();
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
			phase_after_first = __atomic_load_n(&fc__global_clock()->start.phase, __ATOMIC_ACQUIRE);
		now_m[i] = fc_ticks_to_mono_ns(t[i]);
		now_r[i] = fc_ticks_to_real_ns(t[i]) - (kns(CLOCK_REALTIME) - kns(CLOCK_MONOTONIC));
	}
	/* fc_ticks is ordered: across the unit's change too (early captures are below every counter capture). */
	for (int i = 1; i < EARLY; i++)
		if (t[i] < t[i - 1] && !bad) {
			fprintf(stderr, "fc_first_check: capture %d (%llu) is below capture %d (%llu)\n", i,
				(unsigned long long)t[i], i - 1, (unsigned long long)t[i - 1]);
			bad = 1;
		}
	/* Early captures: the first is kernel ns (inside its own kernel bracket), the last counter ticks (the
	 * trust step is due 50 us after start), so both units are converted below. */
	if (early && ((int64_t)t[0] < k1[0] || (int64_t)t[0] > k2[0] ||
		      t[EARLY - 1] < (uint64_t)k2[EARLY - 1] + (uint64_t)(FC_EARLY_GAP_NS / 2))) {
		fprintf(stderr, "fc_first_check: early captures expected: the first (%llu) kernel ns in [%lld, %lld], the "
			"last (%llu) counter ticks\n", (unsigned long long)t[0], (long long)k1[0], (long long)k2[0],
			(unsigned long long)t[EARLY - 1]);
		bad = 1;
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
	printf("ticks-early: early captures %s; phase %d after the first fc_ticks; %d captures before the rate, "
	       "worst %lld ns outside their kernel brackets (converted at once and after the rate)\n",
	       early ? "expected" : "not expected", phase_after_first, EARLY, (long long)worst);
	return bad;
}

/* Threads capturing from the process's first call on, across the trust step and the rate: a capture whose unit
 * is misread (an early capture taken after the step, counter ticks read as ns) converts seconds away. */
#define T_THREADS 3
#define T_CAPS 20000
struct tcap {
	int64_t k1[T_CAPS], k2[T_CAPS];
	uint64_t t[T_CAPS];
};
static struct tcap tcaps[T_THREADS];
static int tgo;
static void *tcapture(void *arg)
{
	struct tcap *c = arg;
	while (!__atomic_load_n(&tgo, __ATOMIC_ACQUIRE))
		;
	for (int i = 0; i < T_CAPS; i++) {
		c->k1[i] = kns(CLOCK_MONOTONIC);
		c->t[i] = (i & 1) ? fc_ticks_relaxed() : fc_ticks();
		c->k2[i] = kns(CLOCK_MONOTONIC);
	}
	return NULL;
}
static int ticks_threads(void)
{
	pthread_t th[T_THREADS];
	int64_t worst = 0;
	int bad = 0, early = early_expected(), n_early = 0;
	for (int i = 0; i < T_THREADS; i++)
		if (pthread_create(&th[i], NULL, tcapture, &tcaps[i]) != 0) {
			fprintf(stderr, "fc_first_check: pthread_create failed\n");
			return 2;
		}
	__atomic_store_n(&tgo, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < T_THREADS; i++)
		pthread_join(th[i], NULL);
	fc_init();
	for (int i = 0; i < T_THREADS; i++)
		for (int j = 0; j < T_CAPS; j++) {
			const int64_t v = fc_ticks_to_mono_ns(tcaps[i].t[j]), k1 = tcaps[i].k1[j], k2 = tcaps[i].k2[j];
			const int64_t out = v < k1 ? k1 - v : v > k2 ? v - k2 : 0;
			n_early += (int64_t)tcaps[i].t[j] >= k1 && (int64_t)tcaps[i].t[j] <= k2;
			if (out > worst)
				worst = out;
			if (out > EARLY_BOUND_NS && !bad) {
				fprintf(stderr, "fc_first_check: thread %d capture %d (%llu) converted %lld ns outside its bracket\n",
					i, j, (unsigned long long)tcaps[i].t[j], (long long)out);
				bad = 1;
			}
		}
	printf("ticks-threads: early captures %s; %d threads x %d captures, %d of them kernel ns; worst %lld ns outside "
	       "their kernel brackets\n",
	       early ? "expected" : "not expected", T_THREADS, T_CAPS, n_early, (long long)worst);
	if (early && n_early == 0) {
		fprintf(stderr, "fc_first_check: no capture was an early one (kernel ns)\n");
		bad = 1;
	}
	return bad;
}

/* May a thread of this process run SCHED_FIFO (root, CAP_SYS_NICE, RLIMIT_RTPRIO >= 1)? Asked of a thread of
 * the test's own, not taken from the library. */
static void *fifo_probe(void *arg)
{
	const struct sched_param sp = {.sched_priority = 1};
	*(int *)arg = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0;
	return NULL;
}

/* The calling thread's scheduling attributes (SCHED_ATTR_SIZE_VER0). */
struct k_attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
};
static int k_getattr(struct k_attr *a)
{
	memset(a, 0, sizeof(*a));
	return (int)syscall(SYS_sched_getattr, 0, a, sizeof(*a), 0);
}

/* The keeper (the thread named "fastclock"): every signal a thread can block is blocked there, so a signal sent
 * to the process runs its handler on one of the program's threads. 1 if so; its SigBlk line into blk. */
static int keeper_blocks_signals(const char *tid, char *blk, size_t n)
{
	char path[300], buf[256];
	int named = 0, all = 0;
	FILE *f;
	snprintf(path, sizeof(path), "/proc/self/task/%s/status", tid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(buf, sizeof(buf), f)) {
		if (!strncmp(buf, "Name:", 5))
			named = strstr(buf, "fastclock") != NULL;
		if (!strncmp(buf, "SigBlk:", 7)) {
			unsigned long long m = strtoull(buf + 7, NULL, 16);
			snprintf(blk, n, "%.40s", buf + 7);
			/* 1-31 (bit sig-1) except SIGKILL and SIGSTOP, which nothing blocks; and SIGRTMAX (64) */
			all = (m & 0x7ffbfeffULL) == 0x7ffbfeffULL && (m >> 63) == 1;
		}
	}
	fclose(f);
	return named ? all : -1;
}

static int keeper_policy(void)
{
	const char *rt = getenv("FASTCLOCK_UPDATER_RT");
	int may = 0, n = 0, n_fifo = 0, n_named = 0;
	struct k_attr before, after;
	pthread_t th;
	DIR *d;
	struct dirent *e;
	if (pthread_create(&th, NULL, fifo_probe, &may) != 0 || pthread_join(th, NULL) != 0)
		return 2;
	/* A slice of this thread's own (EEVDF, Linux 6.12+), which the keeper's start lends and gives back */
	if (k_getattr(&before) == 0 && before.policy == SCHED_OTHER && before.runtime != 0) {
		before.size = sizeof(before);
		before.runtime = 3000000;
		if (syscall(SYS_sched_setattr, 0, &before, 0) != 0 || k_getattr(&before) != 0)
			before.runtime = 0;
	} else {
		before.runtime = 0; /* the kernel does not say: not checked */
	}
	if (fc_updater_start(0) != 0) {
		perror("fc_first_check: fc_updater_start");
		return 1;
	}
	if (before.runtime != 0 && (k_getattr(&after) != 0 || after.policy != before.policy ||
				    after.nice != before.nice || after.runtime != before.runtime)) {
		fprintf(stderr, "fc_first_check: starting the keeper left this thread's policy %u nice %d slice %llu ns, "
				"was %u %d %llu\n", after.policy, after.nice, (unsigned long long)after.runtime, before.policy,
			before.nice, (unsigned long long)before.runtime);
		return 1;
	}
	/* Judged by the keeper's progress, not by time: it names itself and sets its policy at its first run,
	 * before its first store; coarse reads are precise reads until then (never alike), its kept value after
	 * (alike between its stores). So once two reads are alike and the value has moved twice since, it has. */
	for (int64_t c0 = fc_mono_coarse_ns(), c1; (c1 = fc_mono_coarse_ns()) != c0;)
		c0 = c1;
	for (int moved = 0; moved < 2;) {
		const int64_t v = fc_mono_coarse_ns();
		while (fc_mono_coarse_ns() == v)
			sched_yield();
		moved++;
	}
	d = opendir("/proc/self/task");
	while (d && (e = readdir(d)) != NULL) {
		char path[300], buf[1024], *p;
		FILE *f;
		if (e->d_name[0] == '.' || atoi(e->d_name) == getpid())
			continue;
		{
			char blk[64] = "";
			const int b = keeper_blocks_signals(e->d_name, blk, sizeof(blk));
			n_named += b >= 0;
			if (b == 0) {
				fprintf(stderr, "fc_first_check: the keeper's blocked signals are %s", blk);
				return 1;
			}
		}
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) != NULL) {
			/* fields after ")": 3 state ... 41 policy */
			int field = 2;
			for (char *q = p + 1; *q; q++)
				if (*q == ' ' && ++field == 41) {
					n_fifo += atoi(q + 1) == SCHED_FIFO;
					break;
				}
			n++;
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	{
		/* The keeper is the only thread the library starts; a sanitizer's runtime may run one of its own
		 * (SCHED_OTHER). So: one SCHED_FIFO thread when the keeper should be one, none otherwise. */
		const int want = may && !(rt && !strcmp(rt, "0")) ? 1 : 0;
		/* The coarse mode follows the policy: the inline readers' one load (fc__pub.coarse_mono, nonzero while
		 * kept) for a real-time keeper; checked reads (it stays 0) otherwise. */
		const int one_load = __atomic_load_n(&fc__pub.coarse_mono, __ATOMIC_RELAXED) != 0;
		printf("keeper-policy: %d other thread(s), %d of them SCHED_FIFO, expected %d (this process %s SCHED_FIFO; "
		       "FASTCLOCK_UPDATER_RT=%s); coarse reads %s; %d named fastclock, every signal blocked there; "
		       "this thread's slice %s\n",
		       n, n_fifo, want, may ? "may run" : "may not run", rt ? rt : "unset",
		       one_load ? "one load" : "checked against the kernel's coarse clock", n_named,
		       before.runtime ? "as it was (3 ms)" : "not reported by this kernel");
		if (n_named != 1) {
			fprintf(stderr, "fc_first_check: %d threads named fastclock, expected 1 (the keeper)\n", n_named);
			return 1;
		}
		if (n < 1 || n_fifo != want) {
			fprintf(stderr, "fc_first_check: %d SCHED_FIFO thread(s) beside the main one, expected %d (the keeper)\n",
				n_fifo, want);
			return 1;
		}
		if (one_load != want) {
			fprintf(stderr, "fc_first_check: coarse reads are %s with a %s keeper\n",
				one_load ? "one load" : "checked", want ? "SCHED_FIFO" : "SCHED_OTHER");
			return 1;
		}
	}
	return 0;
}

/* coarse-checked: C_THREADS threads read fc_mono_coarse_ns and fc_real_coarse_ns, each bracketed by the kernel's
 * coarse clock read before it and fastclock's precise clock read after it, while the main thread moves the
 * keeper through its states: not started (coarse reads are precise reads; one of them starts the keeper), taken
 * over with a period of C_SLOW_NS (its value is then far staler than the kernel's coarse clock: only the
 * kernel's keeps the reads fresh), stopped (precise reads again), started again. Each state lasts until every
 * thread has seen the kernel's coarse clock move C_TICKS times in it: progress, not time, so a busy machine
 * only makes the test longer. Value comparisons only: they hold however late any thread runs. */
#define C_THREADS 3
#define C_TICKS 8
#define C_SLOW_NS 500000000LL /* the keeper's period in the slow state: 0.5 s, ~100 kernel ticks */
static int c_phase, c_bad;
static long c_ticks[C_THREADS], c_kernel_won;

static int64_t kclock(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void c_fail(const char *what, long long a, long long b)
{
	if (__atomic_exchange_n(&c_bad, 1, __ATOMIC_RELAXED) == 0)
		fprintf(stderr, "fc_first_check: %s (%lld, %lld) in state %d\n", what, a, b,
			__atomic_load_n(&c_phase, __ATOMIC_RELAXED));
}

static void *coarse_reader(void *arg)
{
	const long i = (long)(intptr_t)arg;
	int64_t last = INT64_MIN, last_k = kclock(CLOCK_MONOTONIC_COARSE);
	int phase = -1;
	long won = 0;
	while (__atomic_load_n(&c_phase, __ATOMIC_ACQUIRE) < 4 && !__atomic_load_n(&c_bad, __ATOMIC_RELAXED)) {
		const int ph = __atomic_load_n(&c_phase, __ATOMIC_ACQUIRE);
		const int64_t k = kclock(CLOCK_MONOTONIC_COARSE), v = fc_mono_coarse_ns(), p = fc_mono_ns();
		const int64_t kr = kclock(CLOCK_REALTIME_COARSE), r = fc_real_coarse_ns(), pr = fc_real_ns();
		if (v < k)
			c_fail("fc_mono_coarse_ns below CLOCK_MONOTONIC_COARSE read before it", (long long)v, (long long)k);
		if (v < last)
			c_fail("fc_mono_coarse_ns went back", (long long)v, (long long)last);
		if (v > p)
			c_fail("fc_mono_coarse_ns above fc_mono_ns read after it", (long long)v, (long long)p);
		/* (The wall clock is never set on a test machine: a step back between kr and r would break this.) */
		if (r < kr)
			c_fail("fc_real_coarse_ns below CLOCK_REALTIME_COARSE read before it", (long long)r, (long long)kr);
		if (r > pr)
			c_fail("fc_real_coarse_ns above fc_real_ns read after it", (long long)r, (long long)pr);
		last = v;
		won += v == k;
		if (ph != phase) { /* ticks are counted per state */
			phase = ph;
			last_k = k;
		} else if (k != last_k) {
			last_k = k;
			__atomic_fetch_add(&c_ticks[i], 1, __ATOMIC_RELAXED);
		}
	}
	__atomic_fetch_add(&c_kernel_won, won, __ATOMIC_RELAXED);
	return NULL;
}

/* Wait until every reader has seen C_TICKS kernel ticks in the current state, then go to the next. */
static void c_next(int next)
{
	for (int t = 0; t < C_THREADS && !__atomic_load_n(&c_bad, __ATOMIC_RELAXED);)
		if (__atomic_load_n(&c_ticks[t], __ATOMIC_RELAXED) >= C_TICKS)
			t++;
		else
			usleep(1000);
	for (int t = 0; t < C_THREADS; t++)
		__atomic_store_n(&c_ticks[t], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c_phase, next, __ATOMIC_RELEASE);
}

static int coarse_checked(void)
{
	pthread_t th[C_THREADS];
	int kept_public = 0;
	struct fc_status st;
	for (long i = 0; i < C_THREADS; i++)
		if (pthread_create(&th[i], NULL, coarse_reader, (void *)(intptr_t)i) != 0)
			return 2;
	c_next(1); /* state 0: the readers' coarse reads, precise at first, start the keeper */
	fc_status(&st);
	if (!st.updater_running) {
		fprintf(stderr, "fc_first_check: no coarse read started the keeper\n");
		c_bad = 1;
	}
	if (fc_updater_start(C_SLOW_NS) != 0) /* take it over, slow */
		perror("fc_first_check: fc_updater_start");
	kept_public |= __atomic_load_n(&fc__pub.coarse_mono, __ATOMIC_RELAXED) != 0;
	c_next(2); /* state 1: a keeper 0.5 s apart */
	kept_public |= __atomic_load_n(&fc__pub.coarse_mono, __ATOMIC_RELAXED) != 0;
	fc_updater_stop();
	c_next(3); /* state 2: no keeper, precise reads */
	if (fc_updater_start(0) != 0)
		perror("fc_first_check: fc_updater_start");
	c_next(4); /* state 3: a keeper at the clock's period */
	kept_public |= __atomic_load_n(&fc__pub.coarse_mono, __ATOMIC_RELAXED) != 0;
	for (int i = 0; i < C_THREADS; i++)
		pthread_join(th[i], NULL);
	fc_updater_stop();
	printf("coarse-checked: %d threads, %d kernel ticks per thread in each of 4 states; %ld reads returned the kernel's "
	       "coarse clock\n", C_THREADS, C_TICKS, c_kernel_won);
	if (kept_public) {
		fprintf(stderr, "fc_first_check: a keeper kept fc__pub.coarse_mono (one load): not checked (is it "
				"SCHED_FIFO? run with FASTCLOCK_UPDATER_RT=0)\n");
		return 1;
	}
	return c_bad;
}

#ifndef FCF_SANITIZED
/* coarse-start-lock: a thread holding a lock that pthread_create needs (l_lock, standing for glibc's) reads a
 * coarse clock, in a signal handler or not, while another thread starts the keeper: its read must return without
 * waiting for that start (which waits for the lock), and its next coarse read after the start must not be below
 * it. Judged by counts: the yields of the read's wait loop while the start waits for the lock. */
static int l_holding, l_started;
static int64_t l_v1, l_v2;
static void *l_reader(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&l_lock);
	__atomic_store_n(&l_holding, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&l_in_create, __ATOMIC_ACQUIRE))
		syscall(SYS_sched_yield);
	l_v1 = fc_mono_coarse_ns();
	pthread_mutex_unlock(&l_lock);
	while (!__atomic_load_n(&l_started, __ATOMIC_ACQUIRE))
		syscall(SYS_sched_yield);
	l_v2 = fc_mono_coarse_ns();
	return NULL;
}

static int coarse_start_lock(void)
{
	pthread_t th;
	int bad = 0;
	(void)fc_mono_ns(); /* initialised: the reader's read is a coarse read's, nothing else */
	if (pthread_create(&th, NULL, l_reader, NULL) != 0)
		return 2;
	while (!__atomic_load_n(&l_holding, __ATOMIC_ACQUIRE))
		syscall(SYS_sched_yield);
	__atomic_store_n(&l_armed, 1, __ATOMIC_RELEASE);
	if (fc_updater_start(0) != 0) {
		perror("fc_first_check: fc_updater_start");
		bad = 1;
	}
	__atomic_store_n(&l_started, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	printf("coarse-start-lock: the coarse read during the keeper's pthread_create %s; %lld then %lld\n",
	       l_spun ? "waited for it (deadlock, broken by the test)" : "returned", (long long)l_v1, (long long)l_v2);
	if (l_spun) {
		fprintf(stderr, "fc_first_check: a coarse read waited for the keeper's pthread_create\n");
		bad = 1;
	}
	if (l_v2 < l_v1) {
		fprintf(stderr, "fc_first_check: the coarse clock went back across the keeper's start\n");
		bad = 1;
	}
	fc_updater_stop();
	return bad;
}
#else
static int coarse_start_lock(void) { return 77; } /* pthread_create is the sanitizer's */
#endif

/* A chronyd that never answers: a unix datagram socket of the test's at FASTCLOCK_CHRONY_SOCKET, never read (its
 * queue holds what the library sends). The first bounded read must not touch it; the reads after it open it, ask
 * and go on returning, UNKNOWN (no reply: no promise). Judged by counts: requests found queued, reads made. */
#define SILENT_READS_MAX 2000000 /* reads to wait for the first request (it comes with the second bound) */
#define SILENT_READS_AFTER 20000 /* reads after it, each returning without a reply */
static int chronyd_silent(void)
{
	char dir[] = "/tmp/fc_first_check.XXXXXX", path[sizeof(((struct sockaddr_un *)0)->sun_path)], none[160];
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct fc_interval iv;
	struct fc_status st;
	uint8_t buf[1024];
	int fake, bad = 0, queued_after_first, requests = 0, synced = 0;
	long reads = 0;
	if (!mkdtemp(dir) || snprintf(path, sizeof(path), "%s/chronyd.sock", dir) >= (int)sizeof(path))
		return 2;
	memcpy(a.sun_path, path, strlen(path) + 1);
	fake = (int)syscall(SYS_socket, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fake < 0 || syscall(SYS_bind, fake, (struct sockaddr *)&a, sizeof(a)) != 0) {
		perror("fc_first_check: the fake chronyd's socket");
		return 2;
	}
	snprintf(none, sizeof(none), "%s/none", dir);
	setenv("FASTCLOCK_CHRONY_SOCKET", path, 1);
	setenv("FASTCLOCK_CLOCKBOUND_PATH", none, 1); /* the machine's own sources stay out of it */
	setenv("FASTCLOCK_VMCLOCK_PATH", none, 1);
	unsetenv("FASTCLOCK_BOUND_SOURCE");
	counting = 1;
	fc_real_bounded(&iv);
	counting = 0;
	queued_after_first = recv(fake, buf, sizeof(buf), MSG_DONTWAIT) > 0;
	printf("chronyd-silent: first read %s, %d socket(s), %d open(s), %d other bound system call(s), %s\n",
	       fc_sync_name(iv.status), n_socket, n_open - n_clocksource, n_bound_sys,
	       queued_after_first ? "a request queued" : "nothing asked");
	if (queued_after_first || n_socket || n_open != n_clocksource || n_bound_sys || iv.status == FC_SYNC_SYNCHRONIZED) {
		fprintf(stderr, "fc_first_check: the first bounded read touched the bound sources or promised (%s)\n",
			fc_sync_name(iv.status));
		bad = 1;
	}
	/* the reads after it: chronyd asked (a request queued), each read returning though no reply ever comes */
	for (; reads < SILENT_READS_MAX && !requests; reads++) {
		fc_real_bounded(&iv);
		synced += iv.status == FC_SYNC_SYNCHRONIZED;
		if ((reads & 63) == 0)
			while (recv(fake, buf, sizeof(buf), MSG_DONTWAIT) > 0)
				requests++;
	}
	for (long i = 0; i < SILENT_READS_AFTER; i++, reads++) {
		fc_real_bounded(&iv);
		synced += iv.status == FC_SYNC_SYNCHRONIZED;
	}
	while (recv(fake, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		requests++;
	fc_status(&st);
	printf("chronyd-silent: %ld reads after the first, %d request(s) to the fake chronyd, %d SYNCHRONIZED; source %s: "
	       "%s\n", reads, requests, synced, st.bound_source, st.bound_reason);
	if (!requests || strcmp(st.bound_source, "chrony") != 0) {
		fprintf(stderr, "fc_first_check: chronyd was never asked (%d requests, source %s: %s)\n", requests,
			st.bound_source, st.bound_error);
		bad = 1;
	}
	if (synced) {
		fprintf(stderr, "fc_first_check: %d reads SYNCHRONIZED with no reply from chronyd\n", synced);
		bad = 1;
	}
	close(fake);
	snprintf((char *)buf, sizeof(buf), "rm -rf '%s'", dir);
	if (system((char *)buf) != 0)
		fprintf(stderr, "fc_first_check: could not remove %s\n", dir);
	return bad;
}

/* bound-cache: a ClockBound segment of 1 ms growing at 100 ppm (SYNCHRONIZED), the kernel backend (its bounded reads
 * refresh the bound under the writer lock, and a read that finds it taken uses what the last refresh left). One
 * read, then a read by a thread while this one holds the lock at least B_GAP_NS later: the segment's bound has grown
 * by 100 ppm of the time between them; a promise narrower than that is one the source never made. Values only. */
#define B_GAP_NS 200000000LL
#define B_DRIFT_PPB 100000u
static struct fc_interval b_iv;
static void *b_reader(void *arg)
{
	(void)arg;
	fc_real_bounded(&b_iv);
	return NULL;
}

static int bound_cache(void)
{
	char dir[] = "/tmp/fc_first_check.XXXXXX", path[64], cmd[96];
	struct fc_cb_segment s = {.magic = {FC_CB_MAGIC0, FC_CB_MAGIC1}, .segsize = FC_CB_SIZE, .version = FC_CB_VERSION,
				  .generation = 2, .bound_nsec = 1000000, .max_drift_ppb = B_DRIFT_PPB,
				  .clock_status = FC_CB_SYNCHRONIZED};
	struct fc_interval a, c;
	pthread_t th;
	int64_t t0, tb, te, need, wb, wc, fd, bad = 0;
	const int64_t as_of = kns(CLOCK_MONOTONIC_COARSE);
	if (!mkdtemp(dir) || chmod(dir, 0755) != 0)
		return 2;
	snprintf(path, sizeof(path), "%s/shm0", dir);
	s.as_of_sec = as_of / 1000000000LL, s.as_of_nsec = as_of % 1000000000LL;
	s.void_after_sec = s.as_of_sec + 1000, s.void_after_nsec = s.as_of_nsec;
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write((int)fd, &s, sizeof(s)) != (ssize_t)sizeof(s))
		return 2;
	close((int)fd);
	setenv("FASTCLOCK_SOURCE", "kernel", 1);
	setenv("FASTCLOCK_BOUND_SOURCE", "clockbound", 1);
	setenv("FASTCLOCK_CLOCKBOUND_PATH", path, 1);
	fc_real_bounded(&a);
	t0 = kns(CLOCK_MONOTONIC);
	while (kns(CLOCK_MONOTONIC) < t0 + B_GAP_NS)
		usleep(10000);
	fc__windup_lock(fc__global_clock()); /* as another thread's refresh holds it */
	tb = kns(CLOCK_MONOTONIC);
	if (pthread_create(&th, NULL, b_reader, NULL) != 0 || pthread_join(th, NULL) != 0)
		return 2;
	te = kns(CLOCK_MONOTONIC);
	fc__windup_unlock(fc__global_clock());
	fc_real_bounded(&c);
	/* the segment's bound at the read's start is at least a's half-width grown by the drift since a */
	need = (a.latest_ns - a.earliest_ns) / 2 + (tb - t0) / (1000000000LL / B_DRIFT_PPB);
	wb = (b_iv.latest_ns - b_iv.earliest_ns) / 2;
	wc = (c.latest_ns - c.earliest_ns) / 2;
	printf("bound-cache: first %s half %lld ns; %lld ms later with the lock taken %s half %lld ns (the source's "
	       "bound then >= %lld); after it %s half %lld ns\n",
	       fc_sync_name(a.status), (long long)(a.latest_ns - a.earliest_ns) / 2, (long long)(tb - t0) / 1000000,
	       fc_sync_name(b_iv.status), (long long)wb, (long long)need, fc_sync_name(c.status), (long long)wc);
	if (a.status != FC_SYNC_SYNCHRONIZED || c.status != FC_SYNC_SYNCHRONIZED || wc < need) {
		fprintf(stderr, "fc_first_check: the segment was not taken as SYNCHRONIZED, growing (set-up)\n");
		bad = 1;
	}
	if ((b_iv.status == FC_SYNC_SYNCHRONIZED || b_iv.status == FC_SYNC_FREE_RUNNING) && wb < need) {
		fprintf(stderr, "fc_first_check: a bounded read with the writer lock taken promised %lld ns, narrower than "
				"the source's %lld ns (a refresh %lld ms old)\n",
			(long long)wb, (long long)need, (long long)(te - t0) / 1000000);
		bad = 1;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "fc_first_check: could not remove %s\n", dir);
	return (int)bad;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "call"))
		return check_call(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "ticks-early"))
		return ticks_early();
	if (argc == 2 && !strcmp(argv[1], "ticks-threads"))
		return ticks_threads();
	if (argc == 2 && !strcmp(argv[1], "keeper-policy"))
		return keeper_policy();
	if (argc == 2 && !strcmp(argv[1], "coarse-checked"))
		return coarse_checked();
	if (argc == 2 && !strcmp(argv[1], "chronyd-silent"))
		return chronyd_silent();
	if (argc == 2 && !strcmp(argv[1], "coarse-start-lock"))
		return coarse_start_lock();
	if (argc == 2 && !strcmp(argv[1], "bound-cache"))
		return bound_cache();
	fprintf(stderr, "usage: fc_first_check call NAME | ticks-early | ticks-threads | keeper-policy | coarse-checked | "
		"chronyd-silent | coarse-start-lock | bound-cache\n");
	return 2;
}
