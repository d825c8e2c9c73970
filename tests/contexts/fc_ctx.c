/*
 * fc_ctx — the library in every context a program can put it in, each in a fresh process: every public
 * function on every backend, from signal handlers, across fork, at start-up, with and without the updater,
 * one usage pattern at a time. Exit 0: holds; 1: does not (the reason is printed); 77: cannot be tested here.
 *
 *   fc_ctx every-function [--backend counter|kernel] [--demote] [--ms N]
 *                 every public clock agrees with the kernel's matching clock, monotonic ones never go back
 *                 within a thread, coarse ones make progress and publish fresh values (COARSE_*); --demote
 *                 first switches to the kernel backend at run time (a clocksource file the test changes)
 *   fc_ctx signals [--ms N] [--interval-us N]   a timer signal every 20 us (default) whose handler reads every clock while the main thread
 *                 mallocs, calls fc_status and fc_set_period_ns and reads (re-anchors); a watchdog fails a hang
 *   fc_ctx signal-in-writer [--first bounded|mono|ticks|coarse]   a handler runs on the thread that holds the
 *                 writer lock (raised from the library's adjtimex call) and calls every read: none may wait
 *   fc_ctx fork-during-init   another thread is inside the library's initialisation when this one forks: the
 *                 child reads correct time (FASTCLOCK_TEST_INIT_DELAY_US holds the initialisation open)
 *   fc_ctx fork-stop-updater  the updater runs; in the child fc_updater_stop() stops it for good
 *   fc_ctx updater-slow-paths  with the updater running, readers take the slow path (almost) never
 *   fc_ctx pattern NAME [--ms N]  one usage pattern alone for N ms, agreement and staleness checked:
 *                 precise, relaxed, coarse, convert, bounded, real, fork-child
 *   fc_ctx startup [--runs N]  each clock called twice, then 1000 times, in N fresh processes (this program
 *                 re-executed): no step back, across the kernel-hand to counter-hand switch
 *   fc_ctx startup-threads    4 threads read from the first instant across the switch: per-thread
 *                 monotonicity and cross-thread causality
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fastclock.h>

#define NS 1000000000LL
/* Agreement tolerance: generous (this machine is shared and preempts us between three reads); the benchmark
 * and docs/ACCURACY.md carry the real figures. A wrong backend, offset or rate is off by far more. */
#define BOUND_NS 20000
/* Coarse freshness, judged against the updater thread's own progress, not the wall clock: how often the
 * updater gets a CPU is the machine's business (a busy 2-core machine keeps it off one for 10-30 ms now and
 * then, and a read's age then grows with the wall clock), but each value it publishes must be fresh when
 * published. The updater's progress is the sequence of coarse values itself: a new value was published
 * after the last read that still returned the old one began (k1 of that read), so that k1 - the new value is a
 * lower bound of the new value's age at publication. At least COARSE_MIN_FRESH of the publications seen must be
 * at most max(period, 50 us) + 50 us old by that bound, or at least the kernel's coarse clock read after them
 * (a keeper that is not real-time: its reads return the kernel's coarse clock while it waits for a CPU, as
 * fresh as the kernel's own), (the updater itself may be preempted between taking
 * a value and publishing it: rare), the clock must make progress (publications seen), and no read may be
 * older than COARSE_SLACK_NS on top of the period (a coarse clock that stands still is off by the whole run). */
#define COARSE_SLACK_NS 500000000LL
#define COARSE_MIN_FRESH 0.90
#define COARSE_FRESH_NS(period) (((period) > 50000 ? (period) : 50000) + 50000)

/* The period the environment asked for (FASTCLOCK_PERIOD_US; the library's default otherwise). */
static int64_t g_env_period = 1000000;

static int64_t kns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

static int fail(const char *what, long long a, long long b)
{
	fprintf(stderr, "fc_ctx: %s (%lld, %lld)\n", what, a, b);
	return 1;
}

static long arg_long(int argc, char **argv, const char *name, long def)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return atol(argv[i + 1]);
	return def;
}

static const char *arg_str(int argc, char **argv, const char *name)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return argv[i + 1];
	return NULL;
}

static int has_flag(int argc, char **argv, const char *name)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return 1;
	return 0;
}

/* ---- one clock against the kernel ----------------------------------------------------------------------- */
struct clk {
	const char *name;
	int64_t (*fn)(void);
	clockid_t id;   /* the kernel clock it must agree with */
	int monotonic;  /* must never go back within a thread */
	int coarse;     /* may lag by a period */
	int64_t last;
	int64_t worst;  /* worst distance outside the kernel bracket (precise) or staleness (coarse) */
	long n, within; /* coarse: reads, and reads at most one period (+ 50 us of wake-up latency) old */
	/* coarse: the updater's progress as this thread sees it: k1 of the previous read, publications seen,
	 * those fresh when published (COARSE_FRESH_NS), the oldest at publication (lower bound) */
	int64_t prev_k1, prev_v, worst_pub;
	long pubs, fresh_pubs;
};

static int64_t v_ticks_mono(void) { return fc_ticks_to_mono_ns(fc_ticks()); }
static int64_t v_ticks_real(void) { return fc_ticks_to_real_ns(fc_ticks()); }
static int64_t v_ticks_mono_relaxed(void) { return fc_ticks_to_mono_ns(fc_ticks_relaxed()); }
static int64_t v_bounded_mono(void)
{
	struct fc_interval iv;
	if (fc_mono_bounded(&iv) != 0)
		return INT64_MIN;
	return iv.earliest_ns + (iv.latest_ns - iv.earliest_ns) / 2;
}
static int64_t v_bounded_real(void)
{
	struct fc_interval iv;
	if (fc_real_bounded(&iv) != 0)
		return INT64_MIN;
	return iv.earliest_ns + (iv.latest_ns - iv.earliest_ns) / 2;
}
static int64_t v_gettime_mono(void)
{
	struct timespec ts;
	if (fc_clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return INT64_MIN;
	return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}
static int64_t v_gettime_real(void)
{
	struct timespec ts;
	if (fc_clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return INT64_MIN;
	return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}
static int64_t v_gettime_mono_coarse(void)
{
	struct timespec ts;
	if (fc_clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0)
		return INT64_MIN;
	return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}
static int64_t v_gettimeofday(void)
{
	struct timeval tv;
	if (fc_gettimeofday(&tv, NULL) != 0)
		return INT64_MIN;
	return (int64_t)tv.tv_sec * NS + (int64_t)tv.tv_usec * 1000 + 500; /* the middle of its microsecond */
}
static int64_t v_ustime(void) { return fc_ustime() * 1000 + 500; }
static int64_t v_mono_us(void) { return fc_mono_us() * 1000 + 500; }

#define CLK(n, f, id, mono, coarse) {n, f, id, mono, coarse, INT64_MIN, 0, 0, 0, 0, 0, 0, 0, 0}
static struct clk all_clocks[] = {
	CLK("fc_mono_ns", fc_mono_ns, CLOCK_MONOTONIC, 1, 0),
	CLK("fc_mono_ns_relaxed", fc_mono_ns_relaxed, CLOCK_MONOTONIC, 1, 0),
	CLK("fc_real_ns", fc_real_ns, CLOCK_REALTIME, 0, 0),
	CLK("fc_real_ns_relaxed", fc_real_ns_relaxed, CLOCK_REALTIME, 0, 0),
	CLK("fc_mono_bounded (middle)", v_bounded_mono, CLOCK_MONOTONIC, 0, 0),
	CLK("fc_real_bounded (middle)", v_bounded_real, CLOCK_REALTIME, 0, 0),
	CLK("fc_ticks_to_mono_ns(fc_ticks())", v_ticks_mono, CLOCK_MONOTONIC, 1, 0),
	CLK("fc_ticks_to_mono_ns(fc_ticks_relaxed())", v_ticks_mono_relaxed, CLOCK_MONOTONIC, 0, 0),
	CLK("fc_ticks_to_real_ns(fc_ticks())", v_ticks_real, CLOCK_REALTIME, 0, 0),
	CLK("fc_clock_gettime(MONOTONIC)", v_gettime_mono, CLOCK_MONOTONIC, 1, 0),
	CLK("fc_clock_gettime(REALTIME)", v_gettime_real, CLOCK_REALTIME, 0, 0),
	CLK("fc_gettimeofday", v_gettimeofday, CLOCK_REALTIME, 0, 0),
	CLK("fc_ustime", v_ustime, CLOCK_REALTIME, 0, 0),
	CLK("fc_mono_us", v_mono_us, CLOCK_MONOTONIC, 1, 0),
	CLK("fc_mono_coarse_ns", fc_mono_coarse_ns, CLOCK_MONOTONIC, 1, 1),
	CLK("fc_real_coarse_ns", fc_real_coarse_ns, CLOCK_REALTIME, 0, 1),
	CLK("fc_clock_gettime(MONOTONIC_COARSE)", v_gettime_mono_coarse, CLOCK_MONOTONIC, 1, 1),
};
#define NCLOCKS (sizeof(all_clocks) / sizeof(all_clocks[0]))

/* One bracketed read of clock k: kernel, clock, kernel. The microsecond clocks may be up to 1 us + 500 ns
 * off by rounding. */
static int check_one(struct clk *k, int64_t period_ns)
{
	int64_t k1 = kns(k->id), v = k->fn(), k2 = kns(k->id);
	const int64_t round = strstr(k->name, "us") || strstr(k->name, "gettimeofday") ? 1000 : 0;
	if (v == INT64_MIN) {
		fprintf(stderr, "fc_ctx: %s failed: %s\n", k->name, strerror(errno));
		return 1;
	}
	if (k->monotonic && v < k->last) {
		fprintf(stderr, "fc_ctx: %s went back by %lld ns\n", k->name, (long long)(k->last - v));
		return 1;
	}
	k->last = v;
	if (k->coarse) {
		/* The kernel's coarse clock after the read: a value at or above it is as fresh as the kernel's own
		 * (a checked read, with a keeper that is not real-time, returns it while the keeper waits for a CPU). */
		const int64_t kc = kns(k->id == CLOCK_REALTIME ? CLOCK_REALTIME_COARSE : CLOCK_MONOTONIC_COARSE);
		int64_t stale = k1 - v;
		if (v > k2 + BOUND_NS) {
			fprintf(stderr, "fc_ctx: %s ahead of the kernel by %lld ns\n", k->name, (long long)(v - k2));
			return 1;
		}
		if (stale > k->worst)
			k->worst = stale;
		k->n++;
		k->within += stale <= period_ns + 50000;
		if (k->n > 1 && v != k->prev_v) { /* the updater published since the previous read began */
			int64_t age = k->prev_k1 - v;
			k->pubs++;
			k->fresh_pubs += age <= COARSE_FRESH_NS(period_ns) || v >= kc;
			if (age > k->worst_pub)
				k->worst_pub = age;
		}
		k->prev_k1 = k1;
		k->prev_v = v;
		if (stale > period_ns + COARSE_SLACK_NS) {
			fprintf(stderr, "fc_ctx: %s is %lld us old (period %lld us)\n", k->name, (long long)stale / 1000,
				(long long)period_ns / 1000);
			return 1;
		}
		return 0;
	}
	{
		int64_t out = v < k1 - round ? k1 - round - v : v > k2 + round ? v - k2 - round : 0;
		if (out > k->worst)
			k->worst = out;
		if (out > BOUND_NS) {
			fprintf(stderr, "fc_ctx: %s is %lld ns outside the kernel's bracket [%lld, %lld] (value %lld)\n",
				k->name, (long long)out, (long long)k1, (long long)k2, (long long)v);
			return 1;
		}
	}
	return 0;
}

/* Every clock, round robin, for ms milliseconds. */
static int run_clocks(struct clk *ks, size_t n, long ms, int64_t period_ns)
{
	const int64_t end = kns(CLOCK_MONOTONIC) + ms * 1000000LL;
	long rounds = 0;
	while (kns(CLOCK_MONOTONIC) < end) {
		for (size_t i = 0; i < n; i++)
			if (check_one(&ks[i], period_ns))
				return 1;
		rounds++;
	}
	for (size_t i = 0; i < n; i++) {
		const struct clk *k = &ks[i];
		if (!k->coarse || k->n <= 1000)
			continue;
		if (k->pubs == 0) {
			fprintf(stderr, "fc_ctx: %s stood still: one value over %ld reads (%lld us old at the end)\n", k->name,
				k->n, (long long)k->worst / 1000);
			return 1;
		}
		if ((double)k->fresh_pubs < COARSE_MIN_FRESH * (double)k->pubs) {
			fprintf(stderr, "fc_ctx: %s: only %.1f %% of %ld published values at most %lld us old when "
				"published (the oldest %lld us)\n", k->name, 100.0 * (double)k->fresh_pubs / (double)k->pubs,
				k->pubs, (long long)COARSE_FRESH_NS(period_ns) / 1000, (long long)k->worst_pub / 1000);
			return 1;
		}
	}
	for (size_t i = 0; i < n; i++) {
		printf("  %-42s worst %s %lld ns", ks[i].name, ks[i].coarse ? "staleness" : "outside bracket",
		       (long long)ks[i].worst);
		if (ks[i].coarse && ks[i].n)
			printf(" (%.4f %% of %ld reads within one period + 50 us; %.2f %% of %ld publications fresh, the "
			       "oldest %lld ns)", 100.0 * (double)ks[i].within / (double)ks[i].n, ks[i].n,
			       ks[i].pubs ? 100.0 * (double)ks[i].fresh_pubs / (double)ks[i].pubs : 0.0, ks[i].pubs,
			       (long long)ks[i].worst_pub);
		printf("\n");
	}
	printf("  %ld rounds\n", rounds);
	return 0;
}

/* ---- a clocksource file the test controls (never the host's) ------------------------------------------- */
/* The clocksource file in a directory of the test's own: the library opens it as a bound source's file
 * (src/trust.c, fc__bound_open_file), which refuses a user's file in a directory of root's that others may write
 * (/tmp) */
static char cs_dir[] = "/tmp/fc_ctx_cs_XXXXXX";
static char cs_file[sizeof(cs_dir) + 16];

static void cs_dir_remove(void) { rmdir(cs_dir); }


static void write_cs(const char *name)
{
	int fd = open(cs_file, O_WRONLY | O_TRUNC | O_CREAT, 0644);
	if (fd < 0 || write(fd, name, strlen(name)) < 0 || write(fd, "\n", 1) < 0) {
		perror("fc_ctx: clocksource file");
		exit(1);
	}
	close(fd);
}

static void setup_cs(const char *name)
{
	if (!mkdtemp(cs_dir)) {
		perror("fc_ctx: mkdtemp");
		exit(1);
	}
	snprintf(cs_file, sizeof(cs_file), "%s/clocksource", cs_dir);
	atexit(cs_dir_remove);
	write_cs(name);
	setenv("FASTCLOCK_TEST_CLOCKSOURCE_FILE", cs_file, 1);
}

static const char *host_cs(void)
{
#if defined(__aarch64__)
	return "arch_sys_counter";
#else
	return "tsc";
#endif
}

static int mode_every_function(int argc, char **argv)
{
	const char *want = arg_str(argc, argv, "--backend");
	long ms = arg_long(argc, argv, "--ms", 300);
	struct fc_status st;
	int demote = has_flag(argc, argv, "--demote");
	if (demote)
		setup_cs(host_cs());
	if (fc_init() != 0 || fc_status(&st) != 0)
		return fail("fc_init/fc_status", errno, 0);
	if (demote) {
		uint64_t checks0, anchors0, progress;
		int64_t still_since, written_at;
		if (st.backend != FC_BACKEND_COUNTER) {
			unlink(cs_file);
			printf("skip: counter backend not in use here (%s)\n", st.reason);
			return 77;
		}
		write_cs("hpet");
		/* Judged by the library's own progress and its own deadlines, not by how fast the machine runs: the
		 * trust re-check is one of the chores (src/windup.c), run every TRUST_EVERY (src/init.c: 1024) chores and
		 * at least every TRUST_EVERY_NS (1 s) of the kernel's time; the keeper does the chores, and a reader's
		 * re-anchor does them where nobody has for a second. One check under way while the file was written may
		 * have read the old name, so the demotion must be seen by the time two more have run (the third
		 * counted), and checks that stopped running show as 4 x 1024 re-anchors over more than 3 s of the
		 * kernel's time (two of the check's deadlines and the chores'). A library that makes no progress at all
		 * (no re-anchor, no check) for 30 s is hung. */
		fc_status(&st);
		checks0 = st.trust_checks;
		anchors0 = st.reanchors;
		written_at = kns(CLOCK_MONOTONIC);
		progress = st.reanchors + st.trust_checks;
		still_since = kns(CLOCK_MONOTONIC);
		while (st.backend != FC_BACKEND_KERNEL) {
			fc_mono_ns();
			fc_status(&st);
			if (st.backend == FC_BACKEND_KERNEL)
				break;
			if (st.trust_checks >= checks0 + 3 ||
			    (st.reanchors >= anchors0 + 4 * 1024 && kns(CLOCK_MONOTONIC) - written_at > 3 * NS)) {
				unlink(cs_file);
				return fail("run-time demotion not followed: trust checks and re-anchors since the clocksource "
					    "changed", (long long)(st.trust_checks - checks0), (long long)(st.reanchors - anchors0));
			}
			if (st.reanchors + st.trust_checks != progress) {
				progress = st.reanchors + st.trust_checks;
				still_since = kns(CLOCK_MONOTONIC);
			} else if (kns(CLOCK_MONOTONIC) - still_since > 30 * NS) {
				unlink(cs_file);
				return fail("no re-anchor and no trust check for 30 s while waiting for the demotion",
					    (long long)st.trust_checks, (long long)checks0);
			}
		}
		unlink(cs_file);
		printf("demoted after %lld trust checks: %s\n", (long long)st.trust_checks, st.reason);
	}
	if (want && strcmp(fc_backend_name(st.backend), want) != 0) {
		fprintf(stderr, "fc_ctx: backend %s (%s), expected %s\n", fc_backend_name(st.backend), st.reason, want);
		return 1;
	}
	printf("every-function: backend %s (%s), period %lld ns\n", fc_backend_name(st.backend), st.reason,
	       (long long)st.period_ns);
	/* The first coarse read starts the updater; give it a moment to be scheduled before judging staleness. */
	fc_mono_coarse_ns();
	return run_clocks(all_clocks, NCLOCKS, ms, st.period_ns);
}

/* ---- signals ------------------------------------------------------------------------------------------- */
static volatile sig_atomic_t sig_fail;
static int sig_count; /* handlers run (atomic: the watchdog thread reads it) */
static int64_t sig_last_mono, sig_last_coarse, sig_last_ticks;
static char sig_msg[128];
static int64_t sig_vals[5]; /* k1, m, t, k2 of the failing handler call (printed by the main thread) */

static void sig_note(const char *m)
{
	if (!sig_fail) {
		size_t n = strlen(m);
		memcpy(sig_msg, m, n < sizeof(sig_msg) - 1 ? n : sizeof(sig_msg) - 1);
		sig_fail = 1;
	}
}

static void on_tick(int sig)
{
	const int saved = errno;
	int64_t k1 = kns(CLOCK_MONOTONIC), m = fc_mono_ns(), mr = fc_mono_ns_relaxed(), c = fc_mono_coarse_ns();
	int64_t t = fc_ticks_to_mono_ns(fc_ticks()), k2 = kns(CLOCK_MONOTONIC);
	int64_t r1 = kns(CLOCK_REALTIME), r = fc_real_ns(), r2 = kns(CLOCK_REALTIME);
	struct fc_interval iv;
	struct timespec ts;
	(void)sig;
	(void)mr;
	if (m < sig_last_mono)
		sig_note("fc_mono_ns went back inside the signal handler");
	if (t < sig_last_ticks && !sig_fail) {
		sig_vals[0] = k1, sig_vals[1] = sig_last_ticks, sig_vals[2] = t, sig_vals[3] = k2;
		sig_note("fc_ticks_to_mono_ns(fc_ticks()) went back inside the signal handler");
	}
	if (c < sig_last_coarse)
		sig_note("fc_mono_coarse_ns went back inside the signal handler");
	if ((m < k1 - BOUND_NS || m > k2 + BOUND_NS || t < k1 - BOUND_NS || t > k2 + BOUND_NS) && !sig_fail) {
		sig_vals[0] = k1, sig_vals[1] = m, sig_vals[2] = t, sig_vals[3] = k2;
		sig_note("a monotonic read in the handler is outside the kernel's bracket");
	}
	if (r < r1 - BOUND_NS || r > r2 + BOUND_NS)
		sig_note("fc_real_ns in the handler is outside the kernel's bracket");
	if (fc_real_bounded(&iv) != 0 || fc_clock_gettime(CLOCK_REALTIME, &ts) != 0)
		sig_note("a bounded read or fc_clock_gettime failed in the handler");
	sig_last_mono = m;
	sig_last_ticks = t;
	sig_last_coarse = c;
	__atomic_store_n(&sig_count, __atomic_load_n(&sig_count, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
	errno = saved;
}

static int progress; /* main-loop iterations (atomic: the watchdog thread reads it) */
static const char *volatile w_where; /* signal-in-writer: the function its handler is in (printed on a hang) */
static timer_t sig_timer;
static long sig_interval_ns, sig_interval_asked_ns; /* the watchdog's; read by the main thread after joining it */
static int sig_stop; /* the main loop is done: the watchdog returns */

/* Every 100 ms: a main loop that made no progress while handlers kept running is starved, not hung (each
 * handler, signal delivery included, costs more than the interval on this machine: ~30 us under ASan on a
 * 2-core VM, ~6 us without): the interval doubles, up to 10 ms, so the test goes on at the fastest rate the
 * machine sustains. Neither progressing for 5 s is a hang: a handler waiting for a lock the interrupted code
 * holds returns no more. */
static void *watchdog(void *arg)
{
	int last = -1, still = 0;
	long last_sig = -1;
	(void)arg;
	for (;;) {
		struct timespec tick = {0, 100000000};
		nanosleep(&tick, NULL);
		int now = __atomic_load_n(&progress, __ATOMIC_RELAXED), sigs = __atomic_load_n(&sig_count, __ATOMIC_RELAXED);
		if (__atomic_load_n(&sig_stop, __ATOMIC_ACQUIRE))
			return NULL;
		if (now != last) {
			last = now, last_sig = sigs, still = 0;
			continue;
		}
		if (sigs != last_sig && sig_interval_ns < 10000000) {
			struct itimerspec its;
			last_sig = sigs;
			sig_interval_ns *= 2;
			its.it_interval.tv_sec = its.it_value.tv_sec = 0;
			its.it_interval.tv_nsec = its.it_value.tv_nsec = sig_interval_ns;
			timer_settime(sig_timer, 0, &its, NULL);
			continue;
		}
		if (++still >= 50) {
			fprintf(stderr, "fc_ctx: no progress for 5 s: hung (signals handled: %d%s%s)\n", sigs,
				w_where ? "; a handler inside the writer is in " : "", w_where ? w_where : "");
			_exit(1);
		}
	}
	return NULL;
}

static int mode_signals(int argc, char **argv)
{
	long ms = arg_long(argc, argv, "--ms", 1000);
	long interval_ns = arg_long(argc, argv, "--interval-us", 20) * 1000;
	struct sigaction sa;
	struct sigevent sev;
	struct itimerspec its = {{0, interval_ns}, {0, interval_ns}};
	pthread_t wd;
	int64_t end, last = INT64_MIN;
	long iters = 0;

	/* A coarse read may start the updater thread (not async-signal-safe): start it here, as the header says
	 * a program that reads coarse clocks in handlers does. */
	fc_updater_start(0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_tick;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGRTMIN, &sa, NULL);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGRTMIN;
	sev._sigev_un._tid = gettid();
	if (timer_create(CLOCK_MONOTONIC, &sev, &sig_timer) != 0)
		return fail("timer_create", errno, 0);
	sig_interval_ns = sig_interval_asked_ns = interval_ns;
	pthread_create(&wd, NULL, watchdog, NULL);
	timer_settime(sig_timer, 0, &its, NULL);
	end = kns(CLOCK_MONOTONIC) + ms * 1000000LL;
	while (kns(CLOCK_MONOTONIC) < end && !sig_fail) {
		struct fc_status st;
		char *p = malloc(64 + (size_t)(iters % 512));
		int64_t v;
		if (!p)
			return fail("malloc", 0, 0);
		memset(p, (int)iters, 64);
		v = fc_mono_ns();
		if (v < last)
			return fail("fc_mono_ns went back in the main thread", v, last);
		last = v;
		if (iters % 64 == 0)
			fc_status(&st);
		if (iters % 256 == 0)
			fc_set_period_ns(iters % 512 ? 1000 : g_env_period);
		free(p);
		iters++;
		__atomic_store_n(&progress, __atomic_load_n(&progress, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
	}
	timer_delete(sig_timer);
	__atomic_store_n(&sig_stop, 1, __ATOMIC_RELEASE);
	pthread_join(wd, NULL);
	if (sig_fail) {
		fprintf(stderr, "fc_ctx: %s (values - k1: %lld, %lld, %lld ns)\n",
			sig_msg, (long long)(sig_vals[1] - sig_vals[0]), (long long)(sig_vals[2] - sig_vals[0]),
			(long long)(sig_vals[3] - sig_vals[0]));
		return 1;
	}
	printf("signals: %d handler reads, %ld main-loop iterations, no hang, no corruption", sig_count, iters);
	if (sig_interval_ns != sig_interval_asked_ns)
		printf(" (a signal every %ld us: the %ld us asked starved the main loop here)", sig_interval_ns / 1000,
		       sig_interval_asked_ns / 1000);
	printf("\n");
	return sig_count > 0 ? 0 : fail("no signal was handled", 0, 0);
}

/* ---- a signal handler while its thread holds the writer lock -------------------------------------------- */
/* The library reads the kernel's NTP state (adjtimex, modes 0) only in its writer, under the writer lock. This
 * program defines adjtimex itself (the static library's call binds to it) and, once armed, raises a signal
 * from inside it: the handler then runs, deterministically, on the thread that holds the writer lock, and
 * calls every read function. A reader that waits for the writer lock there waits for its own thread for
 * ever: the watchdog, judging by progress (no handler or main-loop step for 5 s), fails it and names the
 * function. */
#include <sys/syscall.h>
#include <sys/timex.h>

static int w_armed;        /* the mode below raises the signal from adjtimex */
static int w_in_handler;   /* no nested raise from the handler's own reads */
static int w_raised;       /* handlers run inside the writer */

int adjtimex(struct timex *tx)
{
	long rc = syscall(SYS_adjtimex, tx);
	if (__atomic_load_n(&w_armed, __ATOMIC_RELAXED) && !w_in_handler)
		raise(SIGUSR1);
	return (int)rc;
}

static void on_in_writer(int sig)
{
	const int saved = errno;
	(void)sig;
	w_in_handler = 1;
	for (size_t i = 0; i < NCLOCKS; i++) {
		const struct clk *k = &all_clocks[i];
		int64_t k1, v, k2;
		w_where = k->name;
		k1 = kns(k->id), v = k->fn(), k2 = kns(k->id);
		if (!k->coarse && (v < k1 - BOUND_NS || v > k2 + BOUND_NS))
			sig_note(k->name); /* outside the kernel's bracket, in a handler inside the writer */
		__atomic_store_n(&progress, __atomic_load_n(&progress, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
	}
	w_where = "fc_real_after";
	if (fc_real_after(kns(CLOCK_REALTIME) + 10 * NS))
		sig_note("fc_real_after: 10 s in the future has passed");
	w_where = NULL;
	__atomic_store_n(&w_raised, __atomic_load_n(&w_raised, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
	w_in_handler = 0;
	errno = saved;
}

/* fc_ctx signal-in-writer [--first bounded|mono|ticks|coarse] [--ms N]: the process's first fastclock call is
 * --first, then bounded and precise reads for N ms (re-anchors): the bound source opened (by the second bounded
 * read: a first one reads nothing of the bound, so calls no adjtimex) and the start-up stepped, each with the
 * writer lock held. */
static int mode_signal_in_writer(int argc, char **argv)
{
	const char *first = arg_str(argc, argv, "--first");
	long ms = arg_long(argc, argv, "--ms", 300);
	struct sigaction sa;
	struct fc_interval iv;
	pthread_t wd;
	int64_t end;

	/* No coarse read may start the updater thread in a handler (not async-signal-safe; the header's rule):
	 * here the coarse clocks are precise reads, which must not wait either. */
	setenv("FASTCLOCK_UPDATER", "off", 1);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_in_writer;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sig_interval_ns = 10000000; /* no timer here: the watchdog never changes one */
	pthread_create(&wd, NULL, watchdog, NULL);
	__atomic_store_n(&w_armed, 1, __ATOMIC_RELAXED);
	if (!first || !strcmp(first, "bounded"))
		fc_real_bounded(&iv);
	else if (!strcmp(first, "mono"))
		fc_mono_ns();
	else if (!strcmp(first, "ticks"))
		fc_ticks_to_mono_ns(fc_ticks());
	else if (!strcmp(first, "coarse"))
		fc_mono_coarse_ns();
	else
		return fail("signal-in-writer: unknown --first", 0, 0);
	end = kns(CLOCK_MONOTONIC) + ms * 1000000LL;
	while (kns(CLOCK_MONOTONIC) < end && !sig_fail) {
		fc_real_bounded(&iv);
		fc_mono_bounded(&iv);
		fc_mono_ns();
		__atomic_store_n(&progress, __atomic_load_n(&progress, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&w_armed, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&sig_stop, 1, __ATOMIC_RELEASE);
	pthread_join(wd, NULL);
	if (sig_fail)
		return fail(sig_msg, 0, 0);
	printf("signal-in-writer (first call %s): %d handlers ran inside the writer, every read returned\n",
	       first ? first : "bounded", w_raised);
	return w_raised > 0 ? 0 : fail("adjtimex was never called: the handler never ran inside the writer", 0, 0);
}

/* ---- fork ---------------------------------------------------------------------------------------------- */
static int child_status(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) < 0)
		return 1;
	if (WIFSIGNALED(st)) {
		fprintf(stderr, "fc_ctx: child killed by signal %d\n", WTERMSIG(st));
		return 1;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

static void *init_thread(void *arg)
{
	(void)arg;
	fc_mono_ns(); /* initialises, held open by FASTCLOCK_TEST_INIT_DELAY_US */
	return NULL;
}

static int mode_fork_during_init(void)
{
	pthread_t th;
	pid_t pid;
	struct timespec d = {0, 50000000};
	if (!getenv("FASTCLOCK_TEST_INIT_DELAY_US"))
		setenv("FASTCLOCK_TEST_INIT_DELAY_US", "300000", 1);
	pthread_create(&th, NULL, init_thread, NULL);
	nanosleep(&d, NULL); /* the other thread is now inside the initialisation */
	pid = fork();
	if (pid == 0) {
		int64_t k1, v, k2;
		alarm(10); /* a hang in the child ends as SIGALRM, a failure */
		unsetenv("FASTCLOCK_TEST_INIT_DELAY_US");
		k1 = kns(CLOCK_MONOTONIC);
		v = fc_mono_ns();
		k2 = kns(CLOCK_MONOTONIC);
		if (v < k1 - BOUND_NS || v > k2 + BOUND_NS)
			_exit(fail("the child's first read is wrong", v - k1, k2 - k1));
		for (int i = 0; i < 100000; i++)
			if (fc_mono_ns() < v)
				_exit(fail("the child's clock went back", 0, 0));
		printf("fork-during-init: the child's first read took %lld us and is correct\n",
		       (long long)(k2 - k1) / 1000);
		fflush(stdout);
		_exit(0);
	}
	pthread_join(th, NULL);
	return child_status(pid);
}

static int mode_fork_stop_updater(void)
{
	pid_t pid;
	struct fc_status ps;
	if (fc_updater_start(0) != 0)
		return fail("fc_updater_start", errno, 0);
	/* Fork once the keeper thread runs its loop (it sets step_notifier there), not while it is still being
	 * started: under ASan (gcc 12's libasan, which takes no allocator lock across fork) a fork while the new
	 * thread was inside the sanitizer's allocator left that lock held in the child, whose own keeper's
	 * pthread_create then waited for it for good (2 of 5 runs before this wait, SIGALRM). Progress, not time:
	 * at most 2000 polls, then the fork goes ahead (a keeper without a timerfd never sets it). */
	for (int i = 0; i < 2000 && (fc_status(&ps), !ps.step_notifier); i++)
		usleep(1000);
	pid = fork();
	if (pid == 0) {
		struct fc_status st;
		struct timespec d = {0, 20000000};
		alarm(10);
		if (fc_updater_stop() != 0)
			_exit(fail("fc_updater_stop in the child", errno, 0));
		for (int i = 0; i < 5; i++) { /* slow paths in the child must not start it again */
			fc_mono_ns();
			fc_mono_coarse_ns();
			nanosleep(&d, NULL);
		}
		fc_status(&st);
		if (st.updater_running)
			_exit(fail("the updater runs again in the child after fc_updater_stop", 0, 0));
		errno = 0;
		if (fc_updater_stop() != -1 || errno != ESRCH)
			_exit(fail("a second fc_updater_stop in the child is not -1/ESRCH", errno, 0));
		_exit(0);
	}
	if (child_status(pid))
		return 1;
	return fc_updater_stop() != 0 ? fail("fc_updater_stop in the parent", errno, 0) : 0;
}

/* ---- the updater keeps readers off the slow path -------------------------------------------------------- */
/* The updater's waits for a CPU, from the scheduler's own accounting: /proc/self/task/TID/schedstat's second
 * field (ns spent runnable but not running) of every thread but this one (fc_updater_start's: nothing else runs
 * in this mode). The kernel adds a wait when the thread gets the CPU, whole, so a single wait longer than x
 * shows as a step longer than x between two reads of the sum. */
#define MAX_OTHERS 8
static int other_fd[MAX_OTHERS], n_others;

static void open_others(void)
{
	const long self = syscall(SYS_gettid);
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL && n_others < MAX_OTHERS) {
		char path[64];
		long tid = strtol(e->d_name, NULL, 10);
		if (tid <= 0 || tid == self)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%ld/schedstat", tid);
		if ((other_fd[n_others] = open(path, O_RDONLY | O_CLOEXEC)) >= 0)
			n_others++;
	}
	if (d)
		closedir(d);
}

/* The others' summed waits for a CPU (ns); -1: not readable here (no schedstat). */
static int64_t others_waited(void)
{
	int64_t sum = 0;
	if (n_others == 0)
		return -1;
	for (int i = 0; i < n_others; i++) {
		char buf[96];
		unsigned long long run, wait;
		ssize_t n = pread(other_fd[i], buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			return -1;
		buf[n] = 0;
		if (sscanf(buf, "%llu %llu", &run, &wait) != 2)
			return -1;
		sum += (int64_t)wait;
	}
	return sum;
}

/* One measurement of ms milliseconds: the share of periods in which a reader entered the slow path while the
 * updater ran, and (*longest) the updater's longest single wait for a CPU meanwhile (-1: not known). */
static double slow_path_share(long ms, int64_t *longest)
{
	struct fc_status a, b;
	int64_t t0, t1, w = others_waited(), w2;
	double periods, share;
	*longest = w < 0 ? -1 : 0;
	fc_status(&a);
	t0 = kns(CLOCK_MONOTONIC);
	while (kns(CLOCK_MONOTONIC) - t0 < ms * 1000000LL) {
		for (int i = 0; i < 1000; i++)
			fc_mono_ns();
		if (w >= 0 && (w2 = others_waited()) >= 0) { /* every ~20 us of reads: one wait per step, mostly */
			if (w2 - w > *longest)
				*longest = w2 - w;
			w = w2;
		}
	}
	t1 = kns(CLOCK_MONOTONIC);
	fc_status(&b);
	periods = (double)(t1 - t0) / (double)a.period_ns;
	share = (double)(b.slow_paths - a.slow_paths) / periods;
	printf("updater-slow-paths: period %lld us, %llu slow paths in %.0f periods (%.1f %%), %llu re-anchors; the "
	       "updater's longest wait for a CPU %lld us\n", (long long)a.period_ns / 1000,
	       (unsigned long long)(b.slow_paths - a.slow_paths), periods, 100 * share,
	       (unsigned long long)(b.reanchors - a.reanchors), (long long)(*longest < 0 ? -1 : *longest / 1000));
	return share;
}

static int mode_updater_slow_paths(int argc, char **argv)
{
	long ms = arg_long(argc, argv, "--ms", 1000);
	double share = 1e9;
	int64_t longest = -1, period;
	struct fc_status st;
	if (fc_updater_start(0) != 0)
		return fail("fc_updater_start", errno, 0);
	fc_status(&st);
	period = st.period_ns;
	open_others();
	/* Without absolute deadlines the thread woke past the period and readers re-anchored ~90 % of periods, in
	 * every measurement; with them, 0-3 % here. Slow paths are counted per read, so one preemption of the
	 * updater thread by a busy machine (CI shares 2 cores among parallel tests) lets every read of that stretch
	 * in: a single 3 ms gap at 1 ms made 550 % here. So a measurement above the limit judges the updater only
	 * if it never waited for a CPU as long as a quarter period at once (it wakes a quarter period before its
	 * hand goes stale: a wait that long is the machine's doing, not the updater's); otherwise it is measured
	 * again, up to 10 times, and a run with no measurement to judge is skipped, saying so. A late-waking
	 * updater fails wherever it gets its CPU when it asks. Where the waits cannot be read (no schedstat), the
	 * best of five is judged. */
	for (int round = 0; round < 10; round++) {
		share = slow_path_share(round ? ms / 2 : ms, &longest);
		if (share <= 0.25)
			break;
		if (longest >= 0 && longest < period / 4)
			break; /* the updater had its CPU: judged */
		if (longest < 0 && round == 4)
			break;
	}
	fc_updater_stop();
	if (share > 0.25 && longest >= period / 4) {
		printf("skip: the updater waited for a CPU up to %lld us at once in each of 10 measurements (period "
		       "%lld us): the machine, not the updater, decided the slow paths\n", (long long)longest / 1000,
		       (long long)period / 1000);
		return 77;
	}
	return share > 0.25 ? fail("readers took the slow path although the updater runs", (long long)(100 * share), 25) : 0;
}

/* ---- one usage pattern alone ---------------------------------------------------------------------------- */
static int mode_pattern(int argc, char **argv)
{
	const char *name = argc > 2 ? argv[2] : "";
	long ms = arg_long(argc, argv, "--ms", 2000);
	struct clk *sel[8];
	size_t n = 0;
	struct clk ks[8];
	const int64_t period = g_env_period;

	for (size_t i = 0; i < NCLOCKS; i++) {
		const char *cn = all_clocks[i].name;
		int take = (!strcmp(name, "precise") && !strcmp(cn, "fc_mono_ns")) ||
			   (!strcmp(name, "relaxed") && !strcmp(cn, "fc_mono_ns_relaxed")) ||
			   (!strcmp(name, "real") && !strcmp(cn, "fc_real_ns")) ||
			   (!strcmp(name, "coarse") && (!strcmp(cn, "fc_mono_coarse_ns") || !strcmp(cn, "fc_real_coarse_ns"))) ||
			   (!strcmp(name, "convert") && (strstr(cn, "fc_ticks_to") != NULL)) ||
			   (!strcmp(name, "bounded") && strstr(cn, "bounded") != NULL) ||
			   (!strcmp(name, "fork-child") && (!strcmp(cn, "fc_mono_ns") || !strcmp(cn, "fc_real_ns") ||
							    !strcmp(cn, "fc_mono_coarse_ns")));
		if (take && n < 8)
			sel[n++] = &all_clocks[i];
	}
	if (n == 0) {
		fprintf(stderr, "fc_ctx: unknown pattern '%s'\n", name);
		return 2;
	}
	for (size_t i = 0; i < n; i++)
		ks[i] = *sel[i];
	if (!strcmp(name, "fork-child")) {
		pid_t pid;
		fc_mono_ns();
		fc_mono_coarse_ns();
		pid = fork();
		if (pid == 0) {
			alarm(30);
			printf("pattern fork-child (in the child):\n");
			_exit(run_clocks(ks, n, ms, period));
		}
		return child_status(pid);
	}
	/* Nothing else: no fc_init, no status, no other clock, so nothing re-anchors on the pattern's behalf. */
	printf("pattern %s alone for %ld ms:\n", name, ms);
	return run_clocks(ks, n, ms, period);
}

/* ---- start-up ----------------------------------------------------------------------------------------- */
static int startup_once(int first)
{
	static int64_t (*const fns[])(void) = {fc_mono_ns, fc_mono_ns_relaxed, fc_mono_coarse_ns, v_ticks_mono,
					       v_bounded_mono, v_gettime_mono, v_mono_us};
	static const char *const names[] = {"fc_mono_ns", "fc_mono_ns_relaxed", "fc_mono_coarse_ns",
					    "fc_ticks_to_mono_ns", "fc_mono_bounded", "fc_clock_gettime(MONOTONIC)",
					    "fc_mono_us"};
	/* Interleaved from the very first call, clock `first` first: twice each, then 1000 rounds of all. Each
	 * clock alone must never go back. */
	int64_t last[7];
	for (int i = 0; i < 7; i++)
		last[i] = INT64_MIN;
	for (int r = 0; r < 1002; r++)
		for (int j = 0; j < 7; j++)
			for (int rep = 0, i = (j + first) % 7; rep < (r < 1 ? 2 : 1); rep++) {
				int64_t v = fns[i]();
				if (v < last[i]) {
					fprintf(stderr, "fc_ctx: %s went back by %lld ns at call %d after start\n", names[i],
						(long long)(last[i] - v), r);
					return 1;
				}
				last[i] = v;
			}
	return 0;
}

static int mode_startup(int argc, char **argv, const char *self)
{
	long runs = arg_long(argc, argv, "--runs", 100);
	if (has_flag(argc, argv, "--once"))
		return startup_once((int)arg_long(argc, argv, "--first", 0));
	for (long i = 0; i < runs; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			char first[8];
			snprintf(first, sizeof(first), "%ld", i % 7);
			execl(self, self, "startup", "--once", "--first", first, (char *)NULL);
			_exit(3);
		}
		if (child_status(pid))
			return fail("a fresh process saw a clock go back (run)", i, runs);
	}
	printf("startup: %ld fresh processes (each clock first in turn), every clock monotonic from its first call\n",
	       runs);
	return 0;
}

static int64_t shared_latest; /* the largest fc_mono_ns value published by any thread */
static int go;
static void *startup_reader(void *arg)
{
	int64_t last = INT64_MIN;
	long *bad = arg;
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		;
	for (int i = 0; i < 200000; i++) {
		/* Causality: the latest value another thread published happened-before this read. */
		int64_t seen = __atomic_load_n(&shared_latest, __ATOMIC_ACQUIRE), v = fc_mono_ns();
		if (v < last || v < seen)
			(*bad)++;
		last = v;
		for (int64_t cur = __atomic_load_n(&shared_latest, __ATOMIC_RELAXED);
		     v > cur && !__atomic_compare_exchange_n(&shared_latest, &cur, v, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED);)
			;
	}
	return NULL;
}

static int mode_startup_threads(void)
{
	pthread_t th[4];
	long bad[4] = {0};
	struct fc_status st;
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, startup_reader, &bad[i]);
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE); /* no fastclock call before this: the readers start on the kernel hand, cross the switch */
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	fc_status(&st);
	printf("startup-threads: violations %ld %ld %ld %ld; backend %s after %llu re-anchors\n", bad[0], bad[1],
	       bad[2], bad[3], fc_backend_name(st.backend), (unsigned long long)st.reanchors);
	return bad[0] + bad[1] + bad[2] + bad[3] ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	const char *p = getenv("FASTCLOCK_PERIOD_US");
	if (p && atoll(p) > 0)
		g_env_period = atoll(p) * 1000;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "every-function"))
		return mode_every_function(argc, argv);
	if (!strcmp(mode, "signals"))
		return mode_signals(argc, argv);
	if (!strcmp(mode, "signal-in-writer"))
		return mode_signal_in_writer(argc, argv);
	if (!strcmp(mode, "fork-during-init"))
		return mode_fork_during_init();
	if (!strcmp(mode, "fork-stop-updater"))
		return mode_fork_stop_updater();
	if (!strcmp(mode, "updater-slow-paths"))
		return mode_updater_slow_paths(argc, argv);
	if (!strcmp(mode, "pattern"))
		return mode_pattern(argc, argv);
	if (!strcmp(mode, "startup"))
		return mode_startup(argc, argv, argv[0]);
	if (!strcmp(mode, "startup-threads"))
		return mode_startup_threads();
	fprintf(stderr, "fc_ctx: unknown mode '%s'\n", mode);
	return 2;
}
