/*
 * fc_first_call — first calls and coarse staleness in fresh processes, driven by bench/first_call.sh.
 *
 *   fc_first_call time NAME    the process's first call of NAME (bench/first_calls.h; vdso_* is the vDSO's own
 *                              first clock_gettime), timed with the bare counter so the timing touches neither
 *                              the library nor the vDSO first; prints "NAME <ns>"
 *   fc_first_call stale CLOCK [--ms N]   a coarse-only program: reads CLOCK (fc_mono_coarse_ns,
 *                              fc_real_coarse_ns, or kernel_mono_coarse / kernel_real_coarse, the kernel's own)
 *                              for N ms (default 3000) and prints how old each value was: p50 p99 p99.9 max, us
 *   fc_first_call coarse-cost [N]   what a coarse read that checked its own age would cost (see coarse_cost)
 *   fc_first_call coarse-gap [TICKS]   how old the kernel's coarse clock is when it has just moved (coarse_gap)
 *   fc_first_call keeper-start [N]   how old the coarse clocks get while the updater thread starts: N starts by a
 *                              thread mid-slice (run it on one CPU: taskset -c 0), each followed by 5 ms of coarse
 *                              reads (keeper_start)
 *   fc_first_call keeper-cost [S]   what the keeper the library starts costs: a reader spinning on fc_mono_ns for
 *                              S s (default 2) beside it (the keeper thread's CPU time from its schedstat, its
 *                              wake-ups from its voluntary context switches, the reader's slow paths), then
 *                              the same while the process sleeps 4 s (it parks after about 2 s of that)
 *   fc_first_call wake-late [N] [slice]   not fastclock: what an ordinary (SCHED_OTHER) keeper gets from the
 *                              scheduler beside a coarse-only program's spinning reader (wake_late)
 *   fc_first_call time bounded-syscalls   not a fastclock call: the system calls a bounded first call made
 *                              before it stopped looking for the sources (strace, on a machine with no bound
 *                              source: one vDSO read, adjtimex twice, /dev's vmclock0, chronyd's socket,
 *                              ClockBound's directory), made directly: what a first call that looked for the
 *                              sources would cost at least. A first bounded call in auto mode now reads nothing of
 *                              the bound (src/windup.c); a process's second bound opens them (one adjtimex less)
 *   fc_first_call time bounded-second   a process's second fc_real_bounded(), the first untimed: the bound that
 *                              opens the sources (once per process; also what fc_commit_wait's first call with
 *                              time left costs on top of its first read)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#include "first_calls.h"

#define NS 1000000000LL

static int64_t kns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

/* The paths are the defaults of src/bound (vmclock.c, chrony.c, clockbound.c); their absence is the usual case. */
static void bounded_syscalls(void)
{
	struct timespec ts;
	struct timex tx = {0};
	struct stat st;
	int d;
	fcf_ts(clock_gettime(CLOCK_MONOTONIC, &ts), &ts);
	fcf_sink += adjtimex(&tx);
	d = open("/dev", O_RDONLY | O_PATH | O_DIRECTORY | O_CLOEXEC);
	fcf_sink += openat(d, "vmclock0", O_RDONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	close(d);
	fcf_sink += stat("/var/run/chrony/chronyd.sock", &st);
	fcf_sink += open("/var/run/clockbound", O_RDONLY | O_PATH | O_DIRECTORY | O_CLOEXEC);
	fcf_sink += adjtimex(&tx);
}

static int time_first(const char *name)
{
	static const struct fcf_fn floor = {"bounded-syscalls", bounded_syscalls, FCF_VDSO};
	static const struct fcf_fn second = {"bounded-second", f_real_bounded, FCF_READ};
	const struct fcf_fn *f = !strcmp(name, floor.name) ? &floor : !strcmp(name, second.name) ? &second : fcf_find(name);
	uint64_t c0, c1, c2, c3;
	int64_t k2, k3;
	if (!f) {
		fprintf(stderr, "fc_first_call: unknown function '%s'\n", name);
		return 2;
	}
	if (f == &second)
		f->fn(); /* the first bound (reads nothing), untimed */
	c0 = fc__counter_ordered(); /* inline in <fastclock.h>: the bare counter, no library state */
	f->fn();
	c1 = fc__counter_ordered();
	/* The counter's rate, measured after the call against the kernel over 20 ms. */
	k2 = kns(CLOCK_MONOTONIC), c2 = fc__counter_ordered();
	do
		k3 = kns(CLOCK_MONOTONIC), c3 = fc__counter_ordered();
	while (k3 - k2 < 20000000);
	printf("%s %.0f\n", name, (double)(c1 - c0) * (double)(k3 - k2) / (double)(c3 - c2));
	return 0;
}

/* Staleness histogram: 1 us buckets up to 100 ms, then one overflow bucket (max kept apart). */
#define BUCKETS 100001
static unsigned long hist[BUCKETS + 1];

static int64_t read_kernel_coarse_mono(void) { return kns(CLOCK_MONOTONIC_COARSE); }
static int64_t read_kernel_coarse_real(void) { return kns(CLOCK_REALTIME_COARSE); }

static int stale(const char *clock, long ms)
{
	int64_t (*rd)(void) = NULL;
	clockid_t ref = CLOCK_MONOTONIC;
	int64_t end, max = 0;
	unsigned long n = 0, dropped = 0;
	if (!strcmp(clock, "fc_mono_coarse_ns"))
		rd = fc_mono_coarse_ns;
	else if (!strcmp(clock, "fc_real_coarse_ns"))
		rd = fc_real_coarse_ns, ref = CLOCK_REALTIME;
	else if (!strcmp(clock, "kernel_mono_coarse"))
		rd = read_kernel_coarse_mono;
	else if (!strcmp(clock, "kernel_real_coarse"))
		rd = read_kernel_coarse_real, ref = CLOCK_REALTIME;
	if (!rd) {
		fprintf(stderr, "fc_first_call: unknown coarse clock '%s'\n", clock);
		return 2;
	}
	end = kns(CLOCK_MONOTONIC) + ms * 1000000;
	for (;;) {
		/* The value is at most k2 - v old (read before k2); a read whose bracket is wider than 10 us was
		 * preempted inside it and says nothing about the value's age: dropped (counted). */
		const int64_t k1 = kns(ref), v = rd(), k2 = kns(ref);
		int64_t age = k2 - v;
		if (k2 - k1 > 10000) {
			dropped++;
		} else {
			if (age < 0)
				age = 0;
			if (age > max)
				max = age;
			hist[age / 1000 < BUCKETS ? age / 1000 : BUCKETS]++;
			n++;
		}
		if ((n & 1023) == 0 && kns(CLOCK_MONOTONIC) > end)
			break;
	}
	{
		const double q[3] = {0.5, 0.99, 0.999};
		double at[3] = {0, 0, 0};
		unsigned long acc = 0;
		int k = 0;
		for (int i = 0; i <= BUCKETS && k < 3; i++) {
			acc += hist[i];
			while (k < 3 && acc >= (unsigned long)(q[k] * (double)n)) /* bucket i: [i, i + 1) us */
				at[k++] = i + 1;
		}
		printf("%s reads %lu (dropped %lu) staleness us: p50 <%.0f p99 <%.0f p99.9 <%.0f max %.1f\n", clock, n,
		       dropped, at[0], at[1], at[2], (double)max / 1000);
	}
	return 0;
}

/* What a coarse read that checked its own age would cost: one load (fc_mono_coarse_ns
 * today), one load plus an unordered counter read and a compare (a check against a deadline in ticks), and the
 * kernel's own CLOCK_MONOTONIC_COARSE through the vDSO; each in a loop of N reads, ns per read. */
static volatile int64_t cc_value = 1, cc_deadline = INT64_MAX;
static int coarse_cost(long n)
{
	int64_t s = 0, t0, t1, t2, t3, t4;
	fc_updater_start(0); /* the keeper, so fc_mono_coarse_ns below is its one load (SCHED_FIFO where permitted) */
	t0 = kns(CLOCK_MONOTONIC);
	for (long i = 0; i < n; i++)
		s += __atomic_load_n(&cc_value, __ATOMIC_RELAXED);
	t1 = kns(CLOCK_MONOTONIC);
	for (long i = 0; i < n; i++) {
		int64_t v = __atomic_load_n(&cc_value, __ATOMIC_RELAXED);
		if (__builtin_expect((int64_t)fc__counter_relaxed() > cc_deadline, 0))
			v = 0;
		s += v;
	}
	t2 = kns(CLOCK_MONOTONIC);
	for (long i = 0; i < n; i++)
		s += kns(CLOCK_MONOTONIC_COARSE);
	t3 = kns(CLOCK_MONOTONIC);
	for (long i = 0; i < n; i++)
		s += fc_mono_coarse_ns();
	t4 = kns(CLOCK_MONOTONIC);
	printf("coarse read cost, ns: one load %.2f, load + counter + compare %.2f, kernel CLOCK_MONOTONIC_COARSE %.2f, "
	       "fc_mono_coarse_ns %.2f (%s; %ld reads each; %lld)\n",
	       (double)(t1 - t0) / n, (double)(t2 - t1) / n, (double)(t3 - t2) / n, (double)(t4 - t3) / n,
	       __atomic_load_n(&fc__pub.coarse_mono, __ATOMIC_RELAXED) ? "one load: a SCHED_FIFO keeper"
									: "checked against the kernel's coarse clock",
	       n, (long long)(s & 1));
	return 0;
}

/* How old the kernel's coarse clock is when it has just moved: CLOCK_MONOTONIC and fc_mono_ns() read right
 * after a new CLOCK_MONOTONIC_COARSE value is seen, minus that value, smallest over N ticks. A checked coarse read
 * (a keeper without real-time priority) may return the kernel's coarse value: it is ahead of a precise read made
 * after it only if fastclock's precise clock is behind the kernel's by more than this. */
static int coarse_gap(long ticks)
{
	int64_t prev = kns(CLOCK_MONOTONIC_COARSE), min_k = INT64_MAX, min_fc = INT64_MAX;
	long n = 0;
	fc_init();
	while (n < ticks) {
		const int64_t kc = kns(CLOCK_MONOTONIC_COARSE);
		if (kc != prev) {
			const int64_t f = fc_mono_ns(), k = kns(CLOCK_MONOTONIC);
			prev = kc;
			n++;
			if (k - kc < min_k)
				min_k = k - kc;
			if (f - kc < min_fc)
				min_fc = f - kc;
		}
	}
	printf("kernel coarse clock just after it moved, %ld ticks: CLOCK_MONOTONIC - it >= %lld ns, fc_mono_ns() - it "
	       ">= %lld ns\n", n, (long long)min_k, (long long)min_fc);
	return 0;
}

/* wake-late: a SCHED_OTHER thread that wakes every 750 us at absolute deadlines with the keeper's timer slack
 * (src/updater.c: 3/4 of the 1 ms period, slack period/16), and with "slice" the keeper's EEVDF slice of 100 us,
 * beside a reader that spins on the other side, as a coarse-only program's does. Prints how late each wake-up
 * was (p50 / p99 / p99.9 / max) and how many ran on the CPU the reader was last seen on: what a keeper that may
 * not run real-time gets, without the library in the way. */
static volatile int wl_stop, wl_reader_cpu = -1;
static int64_t *wl_late;
static int *wl_shared;
static long wl_n;

static void *wl_keeper(void *slice)
{
	int64_t next = kns(CLOCK_MONOTONIC);
	prctl(PR_SET_TIMERSLACK, 62500UL, 0, 0, 0);
	if (slice) {
		struct {
			uint32_t size, policy;
			uint64_t flags;
			int32_t nice;
			uint32_t priority;
			uint64_t runtime, deadline, period;
		} attr = {sizeof(attr), 0, 0, 0, 0, 100000, 0, 0};
		attr.nice = getpriority(PRIO_PROCESS, 0);
		(void)syscall(SYS_sched_setattr, 0, &attr, 0);
	}
	for (long i = 0; i < wl_n; i++) {
		struct timespec ts;
		next += 750000;
		ts.tv_sec = (time_t)(next / NS), ts.tv_nsec = (long)(next % NS);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		wl_late[i] = kns(CLOCK_MONOTONIC) - next;
		wl_shared[i] = sched_getcpu() == wl_reader_cpu;
	}
	wl_stop = 1;
	return NULL;
}

static int cmp64(const void *a, const void *b)
{
	const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int wake_late(long n, int slice)
{
	pthread_t t;
	long shared = 0, late_shared = 0, late = 0;
	wl_n = n > 0 ? n : 4000;
	wl_late = calloc((size_t)wl_n, sizeof(*wl_late));
	wl_shared = calloc((size_t)wl_n, sizeof(*wl_shared));
	if (!wl_late || !wl_shared || pthread_create(&t, NULL, wl_keeper, slice ? (void *)1 : NULL) != 0)
		return 2;
	while (!wl_stop) {
		wl_reader_cpu = sched_getcpu();
		for (int i = 0; i < 1000; i++)
			fcf_sink++;
	}
	pthread_join(t, NULL);
	for (long i = 0; i < wl_n; i++) {
		shared += wl_shared[i];
		late += wl_late[i] > 350000;
		late_shared += wl_shared[i] && wl_late[i] > 350000;
	}
	qsort(wl_late, (size_t)wl_n, sizeof(*wl_late), cmp64);
	printf("wake-late%s: %ld wake-ups, %ld on the reader's CPU; late us: p50 %.0f p99 %.0f p99.9 %.0f max %.0f; "
	       "over 350 us (0.25 of the period + 100 us): %ld, on the reader's CPU %ld\n",
	       slice ? " slice" : "", wl_n, shared, wl_late[wl_n / 2] / 1e3, wl_late[wl_n * 99 / 100] / 1e3,
	       wl_late[wl_n * 999 / 1000] / 1e3, wl_late[wl_n - 1] / 1e3, late, late_shared);
	return 0;
}

/* keeper-start: N times, the thread spins 7-11 ms reading fc_mono_ns (so it is somewhere in its slice), starts
 * the updater with fc_updater_start(0), reads fc_mono_coarse_ns for 5 ms, each read bracketed by CLOCK_MONOTONIC
 * (brackets over 10 us dropped: this thread was preempted), and stops it. Prints the largest age of each start's
 * 5 ms (median and max over the N, and how many were over 1.1 ms) and how long fc_updater_start() took (median,
 * max). On one CPU (taskset -c 0) the new thread shares this thread's CPU: when it first runs is the
 * scheduler's to say (src/updater.c, lend_short_slice). */
static int keeper_start(long n)
{
	int64_t *worst = calloc((size_t)(n > 0 ? n : 1), sizeof(*worst)), *took = calloc((size_t)(n > 0 ? n : 1), 8);
	long over = 0;
	if (!worst || !took || n <= 0)
		return 2;
	for (long i = 0; i < n; i++) {
		const int64_t spin_until = kns(CLOCK_MONOTONIC) + 7000000 + (i * 313000) % 4000000;
		int64_t end;
		while (kns(CLOCK_MONOTONIC) < spin_until)
			fcf_sink += fc_mono_ns(); /* a program reading the clock: its hand is current */
		took[i] = kns(CLOCK_MONOTONIC);
		if (fc_updater_start(0) != 0)
			return 1;
		end = kns(CLOCK_MONOTONIC);
		took[i] = end - took[i];
		end += 5000000;
		for (;;) {
			const int64_t a = kns(CLOCK_MONOTONIC), v = fc_mono_coarse_ns(), b = kns(CLOCK_MONOTONIC);
			if (b > end)
				break;
			if (b - a < 10000 && a - v > worst[i])
				worst[i] = a - v;
		}
		fc_updater_stop();
		over += worst[i] > 1100000;
	}
	qsort(worst, (size_t)n, sizeof(*worst), cmp64);
	qsort(took, (size_t)n, sizeof(*took), cmp64);
	printf("keeper-start: %ld starts; the coarse clock's largest age in the 5 ms after each, us: median %.0f max %.0f; "
	       "over 1.1 ms: %ld; fc_updater_start took median %.1f max %.1f us\n",
	       n, worst[n / 2] / 1e3, worst[n - 1] / 1e3, over, took[n / 2] / 1e3, took[n - 1] / 1e3);
	free(worst);
	free(took);
	return 0;
}

/* The thread named `name`: its run time (ns, schedstat) and voluntary context switches; -1: none. */
static long long thread_usage(const char *name, long long *vcsw)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	long long run = -1;
	while (d && (e = readdir(d))) {
		char p[300], b[256];
		FILE *f;
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/proc/self/task/%s/comm", e->d_name);
		if (!(f = fopen(p, "r")))
			continue;
		if (!fgets(b, sizeof(b), f) || strncmp(b, name, strlen(name)) || b[strlen(name)] != '\n') {
			fclose(f);
			continue;
		}
		fclose(f);
		snprintf(p, sizeof(p), "/proc/self/task/%s/schedstat", e->d_name);
		if ((f = fopen(p, "r"))) {
			if (fscanf(f, "%lld", &run) != 1)
				run = -1;
			fclose(f);
		}
		snprintf(p, sizeof(p), "/proc/self/task/%s/status", e->d_name);
		if ((f = fopen(p, "r"))) {
			while (fgets(b, sizeof(b), f))
				if (!strncmp(b, "voluntary_ctxt_switches:", 24))
					*vcsw = atoll(b + 24);
			fclose(f);
		}
	}
	if (d)
		closedir(d);
	return run;
}

static long long keeper_usage(long long *vcsw) { return thread_usage("fastclock", vcsw); }

/* A thread that only wakes as the keeper does (every 3/4 of the period, at absolute deadlines, timer slack a
 * sixteenth of it, in ppoll on an eventfd and a CANCEL_ON_SET timerfd) and does nothing else: what the wake-ups
 * alone cost on this machine, beside the same spinning reader. */
static volatile int bare_stop;
static int64_t bare_period;
static void *bare_main(void *arg)
{
	struct pollfd pfd[2] = {{eventfd(0, EFD_NONBLOCK), POLLIN, 0}, {timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK), POLLIN, 0}};
	const struct itimerspec far = {{0, 0}, {(time_t)1 << 40, 0}};
	int64_t next = kns(CLOCK_MONOTONIC);
	(void)arg;
	prctl(PR_SET_NAME, "fc-bare", 0, 0, 0);
	prctl(PR_SET_TIMERSLACK, (unsigned long)(bare_period / 16), 0, 0, 0);
	timerfd_settime(pfd[1].fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &far, NULL);
	while (!bare_stop) {
		int64_t left;
		next += bare_period * 3 / 4;
		left = next - kns(CLOCK_MONOTONIC);
		if (left > 0) {
			const struct timespec ts = {(time_t)(left / NS), (long)(left % NS)};
			(void)ppoll(pfd, 2, &ts, NULL);
		}
	}
	close(pfd[0].fd);
	close(pfd[1].fd);
	return NULL;
}

/* What the keeper costs while a reader spins beside it, and while the process sleeps; then what a thread that
 * only wakes up as often costs, beside a reader spinning on clock_gettime (the keeper stopped). */
static int keeper_cost(double spin_s)
{
	struct fc_status s0, s1;
	long long v0 = 0, v1 = 0, r0, r1;
	int64_t t0 = kns(CLOCK_MONOTONIC), t;
	const struct timespec gap = {0, 2000000};
	for (int i = 0; i < 20; i++) { /* reads after pauses: the library starts its keeper */
		nanosleep(&gap, NULL);
		(void)fc_mono_ns();
	}
	r0 = keeper_usage(&v0);
	if (r0 < 0) {
		fprintf(stderr, "keeper-cost: no thread named fastclock (FASTCLOCK_UPDATER=off?)\n");
		return 1;
	}
	fc_status(&s0);
	t0 = kns(CLOCK_MONOTONIC);
	do
		(void)fc_mono_ns();
	while ((t = kns(CLOCK_MONOTONIC)) - t0 < (int64_t)(spin_s * NS));
	r1 = keeper_usage(&v1);
	fc_status(&s1);
	printf("reading: keeper %.3f %% of a CPU, %.0f wake-ups/s, reader slow paths %.2f/s, period %lld us\n",
	       100.0 * (double)(r1 - r0) / (double)(t - t0), (double)(v1 - v0) * NS / (double)(t - t0),
	       (double)(s1.slow_paths - s0.slow_paths) * NS / (double)(t - t0), (long long)(s1.period_ns / 1000));
	for (int k = 0; k < 2; k++) {
		const struct timespec two = {2, 0};
		r0 = keeper_usage(&v0);
		t0 = kns(CLOCK_MONOTONIC);
		nanosleep(&two, NULL);
		t = kns(CLOCK_MONOTONIC);
		r1 = keeper_usage(&v1);
		printf("asleep, seconds %d-%d: keeper %.4f %% of a CPU, %.1f wake-ups/s\n", 2 * k, 2 * k + 2,
		       100.0 * (double)(r1 - r0) / (double)(t - t0), (double)(v1 - v0) * NS / (double)(t - t0));
	}
	{
		pthread_t bt;
		const struct timespec settle = {0, 100000000};
		bare_period = s1.period_ns;
		fc_updater_stop();
		if (pthread_create(&bt, NULL, bare_main, NULL) != 0)
			return 1;
		nanosleep(&settle, NULL);
		r0 = thread_usage("fc-bare", &v0);
		t0 = kns(CLOCK_MONOTONIC);
		while ((t = kns(CLOCK_MONOTONIC)) - t0 < (int64_t)(spin_s * NS))
			;
		r1 = thread_usage("fc-bare", &v1);
		bare_stop = 1;
		pthread_join(bt, NULL);
		printf("wake-ups alone: %.3f %% of a CPU, %.0f wake-ups/s (a thread that only wakes as the keeper does, "
		       "beside a reader spinning on clock_gettime)\n", 100.0 * (double)(r1 - r0) / (double)(t - t0),
		       (double)(v1 - v0) * NS / (double)(t - t0));
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "keeper-cost"))
		return keeper_cost(argc >= 3 ? atof(argv[2]) : 2.0);
	if (argc >= 2 && !strcmp(argv[1], "wake-late"))
		return wake_late(argc >= 3 ? atol(argv[2]) : 4000, argc >= 4 && !strcmp(argv[3], "slice"));
	if (argc >= 2 && !strcmp(argv[1], "keeper-start"))
		return keeper_start(argc >= 3 ? atol(argv[2]) : 40);
	if (argc >= 2 && !strcmp(argv[1], "coarse-cost"))
		return coarse_cost(argc >= 3 ? atol(argv[2]) : 100000000);
	if (argc >= 2 && !strcmp(argv[1], "coarse-gap"))
		return coarse_gap(argc >= 3 ? atol(argv[2]) : 1000);
	if (argc == 3 && !strcmp(argv[1], "time"))
		return time_first(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "stale"))
		return stale(argv[2], argc >= 5 && !strcmp(argv[3], "--ms") ? atol(argv[4]) : 3000);
	if (argc == 2 && !strcmp(argv[1], "list")) {
		for (size_t i = 0; i < FCF_N; i++)
			printf("%s\n", fcf_fns[i].name);
		return 0;
	}
	fprintf(stderr,
		"usage: fc_first_call time NAME | stale CLOCK [--ms N] | coarse-cost [N] | coarse-gap [TICKS] | "
		"keeper-start [N] | keeper-cost [S] | wake-late [N] [slice] | list\n");
	return 2;
}
