/*
 * fc_bound_probe — the bound's global clock in a fresh process, linked with the library as it is installed
 * (fastclock_static: no test seams), for tests/unit/test_bound_sources.cc. Its environment is the test's (or,
 * run set-user-ID, a hostile caller's). Exit 0 and one line on stdout, or 1 with the reason on stderr.
 *
 *   fc_bound_probe status        waits up to 1 s for the source to answer, then prints
 *                                "source=S status=N half=NS clocksource=C why=W reason=R error=E config=C"
 *   fc_bound_probe opens         files opened (open/openat and their fortified forms, counted by wrapping them
 *                                at link time) by the first fc_real_bounded() and by the bounded reads of the
 *                                next 300 ms: "first=N later=M"
 *   fc_bound_probe mono MS       calls fc_mono_ns() (and nothing else of the library) for MS milliseconds: "reads=N"
 *   fc_bound_probe commit-wait   on a SYNCHRONIZED bound: fc_commit_wait(now + 5 ms, INT64_MAX) returns 0, and
 *                                fc_commit_wait(INT64_MAX, 100 ms) times out having slept (CPU time printed):
 *                                "max_timeout=RC errno=E far=RC errno=E cpu_ns=N wall_ns=N"
 *   fc_bound_probe commit-wait-first   the process's first call: fc_commit_wait(1 s ago, 2 s); its sleeps are
 *                                counted (clock_nanosleep wrapped at link time): "rc=RC sleeps=N status=S"
 *   fc_bound_probe init-first    fc_init(), then the process's first bounded read and fc_real_after(1 s ago):
 *                                "status=S after=A"
 *   fc_bound_probe core-first    the clock core alone for 20 ms (past the first counter hand and the keeper's start),
 *                                then the process's first two bounded reads: "first=S second=S half_us=H source=N"
 *   fc_bound_probe core-first-held   the same, with another thread holding the writer lock (as a preempted keeper
 *                                does) from before the first bounded read until 30 ms later, re-anchoring with
 *                                the chores 5 ms after that read began
 *   fc_bound_probe keeper-create-fails MS   every pthread_create fails with EAGAIN (a container at its pids.max,
 *                                a user at RLIMIT_NPROC: pthread_create wrapped at link time); coarse reads for MS
 *                                milliseconds: "reads=N creates=M elapsed_us=U" (the keeper's start attempts)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fastclock.h>

static int64_t kns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- open counting: the linker sends the library's calls here (-Wl,--wrap=...) ---------------------------- */
static int g_opens;
/* One wrapper per name; dparam/darg: openat's directory fd (AT, AT_ARG), or nothing for open. */
#define WRAP_OPEN(name, dparam, darg)                                                                                \
	int __real_##name(dparam const char *p, int flags, ...);                                                     \
	int __wrap_##name(dparam const char *p, int flags, ...);                                                     \
	int __wrap_##name(dparam const char *p, int flags, ...)                                                      \
	{                                                                                                            \
		va_list ap;                                                                                          \
		int mode;                                                                                            \
		va_start(ap, flags);                                                                                 \
		mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, int) : 0;                                        \
		va_end(ap);                                                                                          \
		__atomic_add_fetch(&g_opens, 1, __ATOMIC_RELAXED);                                                   \
		return __real_##name(darg p, flags, mode);                                                           \
	}
#define AT int d,
#define AT_ARG d,
WRAP_OPEN(open, , )
WRAP_OPEN(open64, , )
WRAP_OPEN(openat, AT, AT_ARG)
WRAP_OPEN(openat64, AT, AT_ARG)
/* the fortified forms (_FORTIFY_SOURCE) take no mode */
int __real___open_2(const char *p, int flags);
int __wrap___open_2(const char *p, int flags);
int __wrap___open_2(const char *p, int flags)
{
	__atomic_add_fetch(&g_opens, 1, __ATOMIC_RELAXED);
	return __real___open_2(p, flags);
}
int __real___open64_2(const char *p, int flags);
int __wrap___open64_2(const char *p, int flags);
int __wrap___open64_2(const char *p, int flags)
{
	__atomic_add_fetch(&g_opens, 1, __ATOMIC_RELAXED);
	return __real___open64_2(p, flags);
}
int __real___openat_2(int d, const char *p, int flags);
int __wrap___openat_2(int d, const char *p, int flags);
int __wrap___openat_2(int d, const char *p, int flags)
{
	__atomic_add_fetch(&g_opens, 1, __ATOMIC_RELAXED);
	return __real___openat_2(d, p, flags);
}
int __real___openat64_2(int d, const char *p, int flags);
int __wrap___openat64_2(int d, const char *p, int flags);
int __wrap___openat64_2(int d, const char *p, int flags)
{
	__atomic_add_fetch(&g_opens, 1, __ATOMIC_RELAXED);
	return __real___openat64_2(d, p, flags);
}

/* ---- sleep counting (the library's commit wait sleeps with clock_nanosleep) ---------------------------- */
static int g_sleeps;
int __real_clock_nanosleep(clockid_t id, int flags, const struct timespec *req, struct timespec *rem);
int __wrap_clock_nanosleep(clockid_t id, int flags, const struct timespec *req, struct timespec *rem);
int __wrap_clock_nanosleep(clockid_t id, int flags, const struct timespec *req, struct timespec *rem)
{
	__atomic_add_fetch(&g_sleeps, 1, __ATOMIC_RELAXED);
	return __real_clock_nanosleep(id, flags, req, rem);
}

/* ---- thread creation: the keeper's (pthread_create wrapped), made to fail as at a pids limit --------------- */
#include <pthread.h>
static int g_creates, g_create_fails;
int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*f)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*f)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*f)(void *), void *arg)
{
	__atomic_add_fetch(&g_creates, 1, __ATOMIC_RELAXED);
	if (g_create_fails)
		return EAGAIN;
	return __real_pthread_create(t, a, f, arg);
}

/* Coarse reads for ms milliseconds with every thread creation failing: how many times the keeper's start was tried.
 * Counted against the reads and the time they took (the test bounds the attempts by the time: a busy machine makes
 * fewer reads, never more attempts per millisecond). */
static int keeper_create_fails(long ms)
{
	long long reads = 0;
	int64_t t0, end;
	g_create_fails = 1;
	(void)fc_mono_coarse_ns(); /* initialises, and starts the keeper's defer */
	t0 = kns(CLOCK_MONOTONIC);
	end = t0 + ms * 1000000;
	while (fc_mono_coarse_ns() < end)
		reads++;
	printf("reads=%lld creates=%d elapsed_us=%lld\n", reads, __atomic_load_n(&g_creates, __ATOMIC_RELAXED),
	       (long long)((kns(CLOCK_MONOTONIC) - t0) / 1000));
	return 0;
}

/* A process's first call is a commit wait for a time already past: its first bounded read promises nothing (auto
 * mode opens no source then), so with time left the wait asks again at once, before any sleep. */
static int commit_wait_first(void)
{
	struct fc_interval iv;
	int rc = fc_commit_wait(kns(CLOCK_REALTIME) - 1000000000, 2000000000);
	int sleeps = __atomic_load_n(&g_sleeps, __ATOMIC_RELAXED);
	fc_real_bounded(&iv);
	printf("rc=%d sleeps=%d status=%d\n", rc, sleeps, iv.status);
	return 0;
}

/* A program that initialises at start-up (fc_init: the counter checked and its first hand made, which stamps the
 * bound from the sources, opening them) gets a first bounded read that answers from them. */
static int init_first(void)
{
	struct fc_interval iv;
	fc_init();
	fc_real_bounded(&iv);
	printf("status=%d after=%d\n", iv.status, fc_real_after(kns(CLOCK_REALTIME) - 1000000000));
	return 0;
}

/* A program that used the clock core before its first bounded read: nothing of the bound ran meanwhile, so the first
 * bound is the process's first (auto mode: nothing read, UNKNOWN), and the next is the source's. */
static int core_first(void)
{
	struct fc_interval a, b;
	struct fc_status st;
	const int64_t end = kns(CLOCK_MONOTONIC) + 20000000;
	while (fc_mono_ns() < end)
		(void)fc_mono_coarse_ns();
	fc_real_bounded(&a);
	fc_real_bounded(&b);
	fc_status(&st);
	printf("first=%d second=%d half_us=%lld source=%s\n", a.status, b.status,
	       (long long)((b.latest_ns - b.earliest_ns) / 2000), st.bound_source);
	return 0;
}

/* The writer lock, as the keeper holds it while it re-anchors (internal names: this mode alone uses them). */
struct fc_clock;
extern struct fc_clock fc__clock_global;
void fc__windup_lock(struct fc_clock *c);
void fc__windup_unlock(struct fc_clock *c);
void fc__windup_with_chores_locked(struct fc_clock *c);
static int g_held, g_reading;

static void *hold_writer(void *arg)
{
	(void)arg;
	fc__windup_lock(&fc__clock_global);
	__atomic_store_n(&g_held, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&g_reading, __ATOMIC_ACQUIRE))
		usleep(100);
	usleep(5000);                                   /* the first bounded read has asked for the bound meanwhile */
	fc__windup_with_chores_locked(&fc__clock_global); /* the keeper's re-anchor, before that read's turn */
	usleep(25000);
	fc__windup_unlock(&fc__clock_global);
	return NULL;
}

/* The first two bounded reads while another thread's writer holds the lock: the first is still the process's first
 * bound (UNKNOWN), the second the source's: neither gives up because the lock was taken. */
static int core_first_held(void)
{
	struct fc_interval a, b;
	struct fc_status st;
	pthread_t t;
	const int64_t end = kns(CLOCK_MONOTONIC) + 20000000;
	while (fc_mono_ns() < end)
		(void)fc_mono_coarse_ns();
	if (pthread_create(&t, NULL, hold_writer, NULL) != 0)
		return 1;
	while (!__atomic_load_n(&g_held, __ATOMIC_ACQUIRE))
		usleep(100);
	__atomic_store_n(&g_reading, 1, __ATOMIC_RELEASE);
	fc_real_bounded(&a);
	fc_real_bounded(&b);
	pthread_join(t, NULL);
	fc_status(&st);
	printf("first=%d second=%d half_us=%lld source=%s\n", a.status, b.status,
	       (long long)((b.latest_ns - b.earliest_ns) / 2000), st.bound_source);
	return 0;
}

static int opens(void)
{
	struct fc_interval iv;
	int first, later;
	int64_t end;
	/* the start-up finished first, without the bound (its trust step reads sysfs: not the bound's files, and due
	 * a millisecond after the first call, which on a busy machine the first bounded read itself can outlast) */
	if (fc_updater_start(0) != 0)
		return 2;
	g_opens = 0;
	fc_real_bounded(&iv);
	first = __atomic_load_n(&g_opens, __ATOMIC_RELAXED);
	end = kns(CLOCK_MONOTONIC) + 300000000;
	while (kns(CLOCK_MONOTONIC) < end) {
		fc_real_bounded(&iv);
		usleep(1000);
	}
	later = __atomic_load_n(&g_opens, __ATOMIC_RELAXED) - first;
	printf("first=%d later=%d\n", first, later);
	return 0;
}

/* The source's first answer: the writer opens it at its first bound; wait (1 s at most) until it has one. */
static void settle(struct fc_interval *iv)
{
	struct fc_status st;
	for (int i = 0; i < 500; i++) {
		fc_real_bounded(iv);
		fc_status(&st);
		if (iv->status == FC_SYNC_SYNCHRONIZED || (st.bound_reason[0] && !strstr(st.bound_reason, "no report")))
			if (i > 5)
				return;
		usleep(2000);
	}
}

static int status(void)
{
	struct fc_interval iv;
	struct fc_status st;
	fc_init();
	settle(&iv);
	fc_status(&st);
	printf("source=%s status=%d half=%lld clocksource=%s why=%s reason=%s error=%s config=%s\n", st.bound_source,
	       iv.status, (long long)((iv.latest_ns - iv.earliest_ns) / 2), st.clocksource, st.bound_why, st.bound_reason,
	       st.bound_error, st.config_error);
	return 0;
}

static int commit_wait(void)
{
	struct fc_interval iv;
	int64_t c0, w0, t;
	int r1, e1, r2, e2;
	fc_init();
	settle(&iv);
	if (iv.status != FC_SYNC_SYNCHRONIZED) {
		fprintf(stderr, "fc_bound_probe: the bound is not SYNCHRONIZED (%d)\n", iv.status);
		return 1;
	}
	t = kns(CLOCK_REALTIME) + 5000000;
	errno = 0;
	r1 = fc_commit_wait(t, INT64_MAX);
	e1 = errno;
	c0 = kns(CLOCK_PROCESS_CPUTIME_ID), w0 = kns(CLOCK_MONOTONIC);
	errno = 0;
	r2 = fc_commit_wait(INT64_MAX, 100000000);
	e2 = errno;
	printf("max_timeout=%d errno=%d far=%d errno=%d cpu_ns=%lld wall_ns=%lld\n", r1, e1, r2, e2,
	       (long long)(kns(CLOCK_PROCESS_CPUTIME_ID) - c0), (long long)(kns(CLOCK_MONOTONIC) - w0));
	return 0;
}

static int mono(long ms)
{
	long long reads = 0;
	int64_t end = kns(CLOCK_MONOTONIC) + ms * 1000000;
	while (fc_mono_ns() < end)
		reads++;
	printf("reads=%lld\n", reads);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: fc_bound_probe status|opens|mono MS|commit-wait|commit-wait-first|init-first|core-first|core-first-held\n");
		return 1;
	}
	if (strcmp(argv[1], "status") == 0)
		return status();
	if (strcmp(argv[1], "opens") == 0)
		return opens();
	if (strcmp(argv[1], "mono") == 0 && argc > 2)
		return mono(atol(argv[2]));
	if (strcmp(argv[1], "commit-wait-first") == 0)
		return commit_wait_first();
	if (strcmp(argv[1], "init-first") == 0)
		return init_first();
	if (strcmp(argv[1], "core-first") == 0)
		return core_first();
	if (strcmp(argv[1], "core-first-held") == 0)
		return core_first_held();
	if (strcmp(argv[1], "commit-wait") == 0)
		return commit_wait();
	if (strcmp(argv[1], "keeper-create-fails") == 0 && argc > 2)
		return keeper_create_fails(atol(argv[2]));
	fprintf(stderr, "fc_bound_probe: unknown mode %s\n", argv[1]);
	return 1;
}
