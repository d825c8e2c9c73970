/*
 * fc_icount — call one clock N times, for instruction counting under callgrind (bench/callgrind.sh).
 *
 *   fc_icount CLOCK N           run the loop (count it with callgrind --toggle-collect=icount_*)
 *   fc_icount --step CLOCK N    count the loop's instructions by single-stepping it with ptrace
 *
 * Each clock has its own out-of-line loop, icount_<clock>, which callgrind collects alone
 * (--toggle-collect=icount_*). The loop adds each result to a sink so the calls cannot be dropped; the
 * loop's own instructions are measured by the "empty" clock. bench/callgrind.sh runs two values of N and
 * divides the difference of the counts by the difference of N, which removes everything done once
 * (initialisation, the first slow path). It prints the fastclock backend and the slow paths taken inside
 * the loop, so a count that includes re-anchors is visible as such.
 *
 * Why --step: valgrind does not give its guest the kernel's vDSO, so under callgrind glibc's clock_gettime
 * is a real system call (about 10 user-space instructions, the kernel's work unseen) and the vDSO's own
 * instructions cannot be counted. --step runs the loop in a traced child and counts PTRACE_SINGLESTEP
 * traps between two SIGSTOPs around it: every user-space instruction, the vDSO's included (a system call
 * counts as one). Single-stepping makes each instruction take microseconds, so run it with a long
 * re-anchor period (FASTCLOCK_PERIOD_US=1000000) and few calls.
 */
#include <fastclock.h>

#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static volatile uint64_t sink;

/* fc_icount_cxx.cc: the C++ clocks */
uint64_t icount_fc_steady_clock(uint64_t n);
uint64_t icount_fc_system_clock(uint64_t n);

#define LOOP(fn, expr)                                                                                 \
	static __attribute__((noinline)) uint64_t icount_##fn(uint64_t n)                              \
	{                                                                                              \
		uint64_t s = 0;                                                                        \
		for (uint64_t i = 0; i < n; i++)                                                       \
			s += (uint64_t)(expr);                                                         \
		return s;                                                                              \
	}

static inline uint64_t opaque_one(void)
{
	uint64_t x = 1;
	__asm__ __volatile__("" : "+r"(x));
	return x;
}

static inline uint64_t vdso_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline __attribute__((always_inline)) uint64_t fc_ts_ns(clockid_t id)
{
	struct timespec ts;
	fc_clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

LOOP(empty, opaque_one())
LOOP(fc_mono_ns, fc_mono_ns())
LOOP(fc_mono_ns_relaxed, fc_mono_ns_relaxed())
LOOP(fc_real_ns, fc_real_ns())
LOOP(fc_real_ns_relaxed, fc_real_ns_relaxed())
LOOP(fc_mono_coarse_ns, fc_mono_coarse_ns())
LOOP(fc_real_coarse_ns, fc_real_coarse_ns())
LOOP(fc_ticks, fc_ticks())
LOOP(fc_clock_gettime_mono, fc_ts_ns(CLOCK_MONOTONIC))
static inline __attribute__((always_inline)) uint64_t fc_tv_us(void)
{
	struct timeval tv;
	fc_gettimeofday(&tv, NULL);
	return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

static inline uint64_t tv_us(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

static inline __attribute__((always_inline)) uint64_t fc_bounded(int real)
{
	struct fc_interval iv;
	if (real)
		fc_real_bounded(&iv);
	else
		fc_mono_bounded(&iv);
	return (uint64_t)iv.earliest_ns + (uint64_t)iv.latest_ns;
}

LOOP(fc_real_bounded, fc_bounded(1))
LOOP(fc_mono_bounded, fc_bounded(0))
LOOP(fc_clock_gettime_real, fc_ts_ns(CLOCK_REALTIME))
LOOP(fc_gettimeofday, fc_tv_us())
LOOP(gettimeofday, tv_us())
LOOP(clock_gettime_mono, vdso_ns(CLOCK_MONOTONIC))
LOOP(clock_gettime_real, vdso_ns(CLOCK_REALTIME))
LOOP(clock_gettime_mono_coarse, vdso_ns(CLOCK_MONOTONIC_COARSE))

static const struct {
	const char *name;
	uint64_t (*loop)(uint64_t);
} clocks[] = {
	{"empty", icount_empty},
	{"fc_mono_ns", icount_fc_mono_ns},
	{"fc_mono_ns_relaxed", icount_fc_mono_ns_relaxed},
	{"fc_real_ns", icount_fc_real_ns},
	{"fc_real_ns_relaxed", icount_fc_real_ns_relaxed},
	{"fc_real_bounded", icount_fc_real_bounded},
	{"fc_mono_bounded", icount_fc_mono_bounded},
	{"fc_mono_coarse_ns", icount_fc_mono_coarse_ns},
	{"fc_real_coarse_ns", icount_fc_real_coarse_ns},
	{"fc_ticks", icount_fc_ticks},
	{"fc_clock_gettime_mono", icount_fc_clock_gettime_mono},
	{"fc_clock_gettime_real", icount_fc_clock_gettime_real},
	{"fc_gettimeofday", icount_fc_gettimeofday},
	{"fastclock::steady_clock", icount_fc_steady_clock},
	{"fastclock::system_clock", icount_fc_system_clock},
	{"gettimeofday", icount_gettimeofday},
	{"clock_gettime_mono", icount_clock_gettime_mono},
	{"clock_gettime_real", icount_clock_gettime_real},
	{"clock_gettime_mono_coarse", icount_clock_gettime_mono_coarse},
};

static int run_loop(size_t i, uint64_t n)
{
	struct fc_status a, b;
	fc_init();
	(void)fc_mono_ns(); /* the first reads initialise; keep that out of the loop */
	(void)fc_mono_coarse_ns();
	fc_status(&a);
	sink = clocks[i].loop(n);
	fc_status(&b);
	printf("clock=%s n=%" PRIu64 " backend=%s slow_paths=%" PRIu64 " reanchors=%" PRIu64 "\n", clocks[i].name, n,
	       fc_backend_name(b.backend), b.slow_paths - a.slow_paths, b.reanchors - a.reanchors);
	fflush(stdout);
	return 0;
}

/* The child stops itself before and after the loop; the parent single-steps everything in between. */
static int step_loop(size_t i, uint64_t n)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		struct fc_status a, b;
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
			_exit(3);
		fc_init();
		(void)fc_mono_ns();
		(void)fc_mono_coarse_ns();
		fc_status(&a);
		raise(SIGSTOP);
		sink = clocks[i].loop(n);
		raise(SIGSTOP);
		fc_status(&b);
		printf("clock=%s n=%" PRIu64 " backend=%s slow_paths=%" PRIu64 " reanchors=%" PRIu64, clocks[i].name, n,
		       fc_backend_name(b.backend), b.slow_paths - a.slow_paths, b.reanchors - a.reanchors);
		fflush(stdout);
		_exit(0);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGSTOP) {
		fprintf(stderr, "fc_icount: the traced child did not stop (ptrace not permitted?)\n");
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return 1;
	}
	uint64_t steps = 0;
	for (;;) {
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) != 0) {
			perror("ptrace(PTRACE_SINGLESTEP)");
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return 1;
		}
		if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
			fprintf(stderr, "fc_icount: the traced child ended while stepping\n");
			return 1;
		}
		if (WSTOPSIG(st) == SIGSTOP)
			break;
		if (WSTOPSIG(st) != SIGTRAP) {
			fprintf(stderr, "fc_icount: unexpected signal %d while stepping\n", WSTOPSIG(st));
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return 1;
		}
		steps++;
	}
	ptrace(PTRACE_DETACH, pid, NULL, NULL); /* the SIGSTOP is suppressed; the child prints and exits */
	waitpid(pid, &st, 0);
	printf(" steps=%" PRIu64 "\n", steps);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	size_t nclocks = sizeof clocks / sizeof clocks[0];
	int step = argc > 1 && strcmp(argv[1], "--step") == 0;
	char *end = NULL;
	unsigned long long n = argc == 3 + step ? strtoull(argv[2 + step], &end, 10) : 0;
	if (argc != 3 + step || !end || *end || n == 0) {
		fprintf(stderr, "usage: fc_icount [--step] CLOCK N\nclocks:");
		for (size_t i = 0; i < nclocks; i++)
			fprintf(stderr, " %s", clocks[i].name);
		fprintf(stderr, "\n");
		return 2;
	}
	for (size_t i = 0; i < nclocks; i++)
		if (strcmp(argv[1 + step], clocks[i].name) == 0)
			return step ? step_loop(i, n) : run_loop(i, n);
	fprintf(stderr, "fc_icount: unknown clock '%s'\n", argv[1 + step]);
	return 2;
}
