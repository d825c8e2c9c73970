/*
 * fc_keeper_check — the keeper a reader's re-anchor starts, and what readers pay without one, each in a fresh
 * process. Judged by counts and by values, never by the wall clock: waits for a state (parked) give up only after
 * a long time (a loaded machine delays the keeper, never makes it park sooner or wake more often).
 * Exit 0: holds; 1: does not (printed); 2: usage or set-up; 77: cannot be checked here (skip).
 *
 *   fc_keeper_check unpark-coarse   a keeper started by reads parks; coarse reads (precise while parked) bring it
 *                                   back: no coarse value is below one returned before it, and the keeper's
 *                                   first value after parking is at least the kernel's clock read before it
 *   fc_keeper_check fork-parks      a child forked while a keeper started by reads runs gets one that parks too
 *   fc_keeper_check idle            after parking: no re-anchor, and the keeper thread's voluntary context
 *                                   switches grow by at most 4 a second slept (PARKED_WAKE_NS) plus a margin
 *   fc_keeper_check bounded-parked  a bounded read past a parked keeper's last hand (a ClockBound segment the source)
 *                                   makes no system call (seccomp) and promises no less than the segment
 *   fc_keeper_check cached-status   (FASTCLOCK_UPDATER=off) a ClockBound segment past its grace: a reader's re-anchor
 *                                   stamps no SYNCHRONIZED from the poll before it
 *   fc_keeper_check turns           a keeper the program started, a reader spinning beside it for 2000 of its turns:
 *                                   no turn on time finds its last hand stale (its schedule), and no reader takes
 *                                   the slow path unless a turn was late (the machine held the keeper back)
 *   fc_keeper_check seccomp         (FASTCLOCK_UPDATER=off, FASTCLOCK_PERIOD_US=1000) reader re-anchors under a
 *                                   seccomp filter that traps every system call but the test's own (and clock_gettime,
 *                                   the vDSO's fallback), within half a second of the chores' last round: one
 *                                   re-anchor per read, none trapped
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fcntl.h>
#include <sys/stat.h>

#include "bound/clockbound.h"
#include "state.h"

#define WAIT_PARK_S 60 /* a keeper parks about 2 s after its last read; a loaded machine only delays it */

static int64_t kns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ns(int64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Reads spaced 20 ms (more than the default period, 16 ms: each re-anchors) until a reader's re-anchor starts the
 * keeper (1 ms after the first: read.c). 1 if it runs as started by reads (updater_running 3). */
static int keeper_by_reads(void)
{
	struct fc_clock *c = fc__global_clock();
	int i;
	(void)fc_mono_ns();
	for (i = 0; i < 50 && __atomic_load_n(&c->updater_running, __ATOMIC_RELAXED) == 0; i++) {
		sleep_ns(20000000);
		(void)fc_mono_ns();
	}
	if (__atomic_load_n(&c->updater_running, __ATOMIC_RELAXED) != 3) {
		fprintf(stderr, "fc_keeper_check: no keeper started by reads (updater_running %d)\n",
			__atomic_load_n(&c->updater_running, __ATOMIC_RELAXED));
		return 0;
	}
	return 1;
}

/* Waits, reading no time, until the keeper parks; 1 if it did within WAIT_PARK_S of the kernel's clock. */
static int wait_parked(void)
{
	struct fc_clock *c = fc__global_clock();
	const int64_t until = kns(CLOCK_MONOTONIC) + (int64_t)WAIT_PARK_S * 1000000000;
	while (!__atomic_load_n(&c->keeper.parked, __ATOMIC_RELAXED)) {
		if (kns(CLOCK_MONOTONIC) > until)
			return 0;
		sleep_ns(50000000);
	}
	return 1;
}

static int unpark_coarse(void)
{
	struct fc_clock *c = fc__global_clock();
	int64_t k, m, off, prev = 0, v, worst = 0, until;
	long reads = 0, back = 0;
	if (!keeper_by_reads())
		return 1;
	if (!wait_parked()) {
		fprintf(stderr, "fc_keeper_check: the keeper did not park\n");
		return 1;
	}
	/* What the keeper's first store after parking is taken from (unpark: coarse_first): at least the kernel's
	 * clock before it, which coarse reads returned while parked (precise reads past the last hand's window) */
	k = kns(CLOCK_MONOTONIC);
	fc__state_coarse_sample(c, &m, &off);
	printf("unpark-coarse: parked; a coarse sample %lld ns after the kernel's clock read before it\n",
	       (long long)(m - k));
	if (m < k) {
		fprintf(stderr, "fc_keeper_check: parked, the keeper's coarse sample is %lld ns below the kernel's clock "
				"read before it\n", (long long)(k - m));
		return 1;
	}
	/* Coarse reads only, across the keeper's return: never back */
	until = 0;
	for (;;) {
		v = fc_mono_coarse_ns();
		reads++;
		if (v < prev) {
			back++;
			if (prev - v > worst)
				worst = prev - v;
		}
		if (v > prev)
			prev = v;
		if (!until && !__atomic_load_n(&c->keeper.parked, __ATOMIC_RELAXED))
			until = reads + 2000000; /* back: as many reads again as its own first values take */
		if (until && reads >= until)
			break;
		if (!until && reads > 400000000L) {
			fprintf(stderr, "fc_keeper_check: a coarse read did not bring the keeper back\n");
			return 1;
		}
	}
	printf("unpark-coarse: %ld coarse reads across the keeper's return, %ld back (worst %lld ns)\n", reads, back,
	       (long long)worst);
	return back != 0;
}

static long keeper_tid(void);

static int fork_parks(void)
{
	pid_t pid;
	int st, i;
	if (!keeper_by_reads())
		return 1;
	/* The parent's keeper past its thread's start (its name is its first call) before the fork: GCC 12's ASan
	 * runtime allocates at a thread's start without holding its allocator across fork(), and a child forked
	 * meanwhile inherits that lock taken, so its own keeper's start waits on it for ever (seen: the child's
	 * keeper in AsanThread::ThreadStart -> calloc). Nothing of the library allocates. */
	for (i = 0; i < 1000 && keeper_tid() == 0; i++)
		sleep_ns(10000000);
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		struct fc_clock *c = fc__global_clock();
		const int by = __atomic_load_n(&c->updater_running, __ATOMIC_RELAXED);
		if (by != 3) {
			fprintf(stderr, "fc_keeper_check: the child's keeper runs as started by %d, not by reads (3): it "
					"never parks\n", by);
			_exit(1);
		}
		if (!wait_parked()) {
			fprintf(stderr, "fc_keeper_check: the child's keeper did not park\n");
			_exit(1);
		}
		printf("fork-parks: the child's keeper parked\n");
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return 2;
	return WEXITSTATUS(st);
}

/* The keeper's thread id (the thread named "fastclock"); 0 if none. */
static long keeper_tid(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	long tid = 0;
	while (d && (e = readdir(d)) != NULL && !tid) {
		char path[300], name[64] = "";
		FILE *f;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		if ((f = fopen(path, "r")) != NULL) {
			if (fgets(name, sizeof(name), f) && !strncmp(name, "fastclock", 9))
				tid = strtol(e->d_name, NULL, 10);
			fclose(f);
		}
	}
	if (d)
		closedir(d);
	return tid;
}

static long voluntary_switches(long tid)
{
	char path[128], buf[256];
	long n = -1;
	FILE *f;
	snprintf(path, sizeof(path), "/proc/self/task/%ld/status", tid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, "voluntary_ctxt_switches:", 24))
			n = strtol(buf + 24, NULL, 10);
	fclose(f);
	return n;
}

#define IDLE_SLEEP_NS 3000000000LL
#define IDLE_WAKES_PER_S 4 /* PARKED_WAKE_NS: a quarter second */
#define IDLE_MARGIN 3

static int idle(void)
{
	struct fc_clock *c = fc__global_clock();
	long tid, s0, s1, allowed;
	uint64_t r0, r1;
	int64_t t0, t1;
	if (!keeper_by_reads())
		return 1;
	if (!wait_parked()) {
		fprintf(stderr, "fc_keeper_check: the keeper did not park\n");
		return 1;
	}
	if ((tid = keeper_tid()) == 0)
		return 2;
	r0 = __atomic_load_n(&c->reanchors, __ATOMIC_RELAXED);
	s0 = voluntary_switches(tid);
	t0 = kns(CLOCK_MONOTONIC);
	sleep_ns(IDLE_SLEEP_NS);
	t1 = kns(CLOCK_MONOTONIC);
	s1 = voluntary_switches(tid);
	r1 = __atomic_load_n(&c->reanchors, __ATOMIC_RELAXED);
	/* a wake-up every quarter second at most: one switch each, and the margin for the two ends */
	allowed = (long)((t1 - t0) * IDLE_WAKES_PER_S / 1000000000) + IDLE_MARGIN;
	printf("idle: %.2f s asleep: the parked keeper switched %ld times (at most %ld), %llu re-anchors\n",
	       (double)(t1 - t0) / 1e9, s1 - s0, allowed, (unsigned long long)(r1 - r0));
	if (s0 < 0 || s1 < 0 || s1 - s0 > allowed || r1 != r0 ||
	    !__atomic_load_n(&c->keeper.parked, __ATOMIC_RELAXED)) {
		fprintf(stderr, "fc_keeper_check: the parked keeper woke more than %d times a second, or re-anchored\n",
			IDLE_WAKES_PER_S);
		return 1;
	}
	return 0;
}

/* seccomp: every system call but the test's own traps (SIGSYS, counted; the call then fails with ENOSYS). */
static volatile sig_atomic_t trapped, trapped_nr;
static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	trapped++;
	trapped_nr = si->si_syscall;
}

#define SECCOMP_READS 200
#define SECCOMP_GAP_NS 3000000 /* 3 ms: past the stale point of the test's period (1 ms), so each read re-anchors */
/* The chores come due for a reader CHORES_MAX_AGE_NS (init.c: 1 s) after they were last done: the reads stop well
 * before, by the kernel's clock, so that none is due (a preemption of this long between the check and the read
 * would be needed for one) */
#define SECCOMP_WINDOW_NS 500000000

#if defined(__x86_64__)
#define ARCH_NR AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH_NR AUDIT_ARCH_AARCH64
#endif
/* A sanitizer's runtime makes system calls of its own and defers signals (SIGSYS then kills the process): no filter
 * there. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define FCK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define FCK_SANITIZED 1
#endif
#endif
/* Installs the filter: every system call but the test's own (its sleeps and its report, the signal's return) and
 * clock_gettime (where the vDSO falls back to it) traps. 0, or 77 where it cannot be installed. */
static int trap_syscalls(void)
{
#ifdef FCK_SANITIZED
	(void)on_sigsys;
	printf("seccomp: a sanitizer's runtime makes its own system calls here (skip)\n");
	return 77;
#elif defined(ARCH_NR)
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH_NR, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_gettime, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_nanosleep, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
#ifdef SYS_nanosleep
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_nanosleep, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
#endif
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigreturn, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
	};
	struct sock_fprog prog = {(unsigned short)(sizeof(f) / sizeof(f[0])), f};
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) != 0)
		return 77;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		printf("seccomp: no seccomp filter here (%s): skip\n", strerror(errno));
		return 77;
	}
	return 0;
#else
	printf("seccomp: no filter for this architecture here (skip)\n");
	return 77;
#endif
}

static int seccomp_reanchors(void)
{
	struct fc_clock *c = fc__global_clock();
	uint64_t r0, r1;
	int64_t t0, t1, ref;
	long reads = 0;
	int i, n, nr, rc;
	const char *u = getenv("FASTCLOCK_UPDATER");
	char line[200];

	if (!u || strcmp(u, "off") != 0) {
		fprintf(stderr, "fc_keeper_check: seccomp needs FASTCLOCK_UPDATER=off\n");
		return 2;
	}
	/* started: the first calls done, the counter hand current (its rate measured: 1 ms), a bound read once */
	(void)fc_real_ns();
	for (i = 0; i < 2000 && __atomic_load_n(&c->start.phase, __ATOMIC_ACQUIRE) != FC_START_DONE; i++) {
		sleep_ns(1000000);
		(void)fc_mono_ns();
	}
	ref = kns(CLOCK_MONOTONIC); /* at or after the chores' last round (the first counter hand's) */
	if (__atomic_load_n(&c->backend, __ATOMIC_RELAXED) != FC_BACKEND_COUNTER ||
	    __atomic_load_n(&c->start.phase, __ATOMIC_RELAXED) != FC_START_DONE) {
		printf("seccomp: the counter backend is not in use here: nothing to check (skip)\n");
		return 77;
	}
	if ((rc = trap_syscalls()) != 0)
		return rc;
	r0 = __atomic_load_n(&c->reanchors, __ATOMIC_RELAXED);
	t1 = t0 = kns(CLOCK_MONOTONIC);
	for (i = 0; i < SECCOMP_READS && (t1 = kns(CLOCK_MONOTONIC)) - ref < SECCOMP_WINDOW_NS; i++) {
		sleep_ns(SECCOMP_GAP_NS);
		if ((t1 = kns(CLOCK_MONOTONIC)) - ref >= SECCOMP_WINDOW_NS)
			break;
		(void)fc_mono_ns();
		reads++;
	}
	r1 = __atomic_load_n(&c->reanchors, __ATOMIC_RELAXED);
	nr = trapped_nr;
	n = snprintf(line, sizeof(line), "seccomp: %ld reads 3 ms apart in %lld ms: %llu re-anchors, %d system calls "
		     "trapped (last nr %d)\n", reads, (long long)((t1 - t0) / 1000000), (unsigned long long)(r1 - r0),
		     (int)trapped, nr);
	if (write(1, line, (size_t)n) < 0)
		return 2;
	/* every read found its hand stale (3 ms > its period) and nobody else re-anchors: one re-anchor each */
	if (reads == 0 || r1 - r0 != (uint64_t)reads || trapped != 0) {
		n = snprintf(line, sizeof(line), "fc_keeper_check: reader re-anchors made system calls (or did not "
			     "re-anchor)\n");
		if (write(2, line, (size_t)n) < 0)
			return 1;
		return 1;
	}
	return 0;
}

/* bounded-parked: a ClockBound segment of 1 ms growing at 100 ppm (SYNCHRONIZED) is the bound's source; a keeper
 * started by reads parks (it polls the segment with its chores, 4 times a second). A bounded read past the last
 * hand's window then pays what a reader's re-anchor pays, one kernel read: no system call (trapped by seccomp), and
 * its bound still the segment's, grown since (never narrower than the source's at its time). */
#define BP_DRIFT_PPB 100000u
static int bounded_parked(const char *dir)
{
	char path[64], line[300];
	struct fc_cb_segment seg = {.magic = {FC_CB_MAGIC0, FC_CB_MAGIC1}, .segsize = FC_CB_SIZE,
				    .version = FC_CB_VERSION, .generation = 2, .bound_nsec = 1000000,
				    .max_drift_ppb = BP_DRIFT_PPB, .clock_status = FC_CB_SYNCHRONIZED};
	struct fc_interval iv;
	const int64_t as_of = kns(CLOCK_MONOTONIC_COARSE);
	int64_t half, need, t;
	int fd, n, bad = 0;
	snprintf(path, sizeof(path), "%s/shm0", dir);
	seg.as_of_sec = as_of / 1000000000LL, seg.as_of_nsec = as_of % 1000000000LL;
	seg.void_after_sec = seg.as_of_sec + 1000, seg.void_after_nsec = seg.as_of_nsec;
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, &seg, sizeof(seg)) != (ssize_t)sizeof(seg))
		return 2;
	close(fd);
	setenv("FASTCLOCK_BOUND_SOURCE", "clockbound", 1);
	setenv("FASTCLOCK_CLOCKBOUND_PATH", path, 1);
	fc_real_bounded(&iv);
	fc_real_bounded(&iv); /* the first bounded read reads nothing of the bound's; this one opens the segment */
	if (!keeper_by_reads() || !wait_parked()) {
		fprintf(stderr, "fc_keeper_check: no keeper started by reads that parked\n");
		return 1;
	}
	if ((n = trap_syscalls()) != 0)
		return n;
	t = kns(CLOCK_MONOTONIC);
	fc_real_bounded(&iv);
	half = (iv.latest_ns - iv.earliest_ns) / 2;
	need = 1000000 + (t - as_of) / (1000000000LL / BP_DRIFT_PPB);
	n = snprintf(line, sizeof(line), "bounded-parked: a bounded read past the parked keeper's last hand: %s, half "
		     "%lld ns (the segment's then >= %lld), %d system calls trapped (last nr %d)\n",
		     fc_sync_name(iv.status), (long long)half, (long long)need, (int)trapped, (int)trapped_nr);
	if (write(1, line, (size_t)n) < 0)
		bad = 1;
	if (trapped != 0) {
		n = snprintf(line, sizeof(line), "fc_keeper_check: the bounded read made system calls\n");
		bad = write(2, line, (size_t)n) || 1;
	}
	/* a promise narrower than the source's is never made (UNKNOWN, no promise, only where the keeper held the
	 * writer lock at that moment: the read does not wait for it) */
	if ((iv.status == FC_SYNC_SYNCHRONIZED || iv.status == FC_SYNC_FREE_RUNNING) && half < need) {
		n = snprintf(line, sizeof(line), "fc_keeper_check: the bounded read promised less than the segment\n");
		bad = write(2, line, (size_t)n) || 1;
	}
	return bad;
}

/* cached-status (FASTCLOCK_UPDATER=off): a ClockBound segment SYNCHRONIZED as of 4.6 s ago, never updated again (its
 * daemon stopped): ClockBound's client trusts it for 5 s after as_of, then says FREE_RUNNING. The start polls it
 * (SYNCHRONIZED); a reader's re-anchor after as_of + 5 s, before the chores are due again, must not stamp its hand
 * SYNCHRONIZED from that poll. Skipped where the start itself came after as_of + 5 s (a loaded machine). */
static int cached_status(const char *dir)
{
	char path[64];
	struct fc_cb_segment seg = {.magic = {FC_CB_MAGIC0, FC_CB_MAGIC1}, .segsize = FC_CB_SIZE,
				    .version = FC_CB_VERSION, .generation = 2, .bound_nsec = 1000000,
				    .max_drift_ppb = BP_DRIFT_PPB, .clock_status = FC_CB_SYNCHRONIZED};
	struct fc_clock *c = fc__global_clock();
	struct fc_interval iv;
	const int64_t as_of = kns(CLOCK_MONOTONIC_COARSE) - 4600000000LL, grace_end = as_of + 5000000000LL;
	int64_t polled;
	int fd, i;
	snprintf(path, sizeof(path), "%s/shm0", dir);
	seg.as_of_sec = as_of / 1000000000LL, seg.as_of_nsec = as_of % 1000000000LL;
	seg.void_after_sec = seg.as_of_sec + 1000, seg.void_after_nsec = seg.as_of_nsec;
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, &seg, sizeof(seg)) != (ssize_t)sizeof(seg))
		return 2;
	close(fd);
	setenv("FASTCLOCK_BOUND_SOURCE", "clockbound", 1);
	setenv("FASTCLOCK_CLOCKBOUND_PATH", path, 1);
	fc_real_bounded(&iv);
	for (i = 0; i < 2000 && __atomic_load_n(&c->start.phase, __ATOMIC_ACQUIRE) != FC_START_DONE; i++) {
		sleep_ns(1000000);
		fc_real_bounded(&iv);
	}
	polled = __atomic_load_n(&c->chores_at, __ATOMIC_RELAXED);
	if (iv.status != FC_SYNC_SYNCHRONIZED || polled >= grace_end - 10000000 ||
	    __atomic_load_n(&c->backend, __ATOMIC_RELAXED) != FC_BACKEND_COUNTER) {
		printf("cached-status: started %s, %lld ms before the grace's end: nothing to check (skip)\n",
		       fc_sync_name(iv.status), (long long)(grace_end - polled) / 1000000);
		return 77;
	}
	while (kns(CLOCK_MONOTONIC) <= grace_end + 20000000)
		sleep_ns(5000000);
	if (kns(CLOCK_MONOTONIC) - polled >= c->chores_max_age_ns - 100000000) {
		printf("cached-status: the chores came due meanwhile (a loaded machine): skip\n");
		return 77;
	}
	fc_real_bounded(&iv); /* its hand is stale (5 ms > the period): a re-anchor without the chores */
	printf("cached-status: %lld ms past the segment's grace (%lld ms after its last poll): %s\n",
	       (long long)(kns(CLOCK_MONOTONIC) - grace_end) / 1000000, (long long)(kns(CLOCK_MONOTONIC) - polled) / 1000000,
	       fc_sync_name(iv.status));
	if (iv.status == FC_SYNC_SYNCHRONIZED) {
		fprintf(stderr, "fc_keeper_check: SYNCHRONIZED past ClockBound's grace (its poll would say FREE_RUNNING)\n");
		return 1;
	}
	return 0;
}

void fc__updater_test_turns(uint64_t *late, uint64_t *stale); /* src/updater.c */
uint64_t fc__updater_test_floored(void);
uint64_t fc__updater_test_turns_done(void);

/* The keeper keeps readers off the slow path: judged by its own count of its turns, never by the wall clock (a late
 * turn excuses the slow paths; only a turn on time that found its hand stale, or a slow path with no late turn,
 * is the code's). */
static int turns(void)
{
	struct fc_clock *c = fc__global_clock();
	uint64_t late0, stale0, late1, stale1, r0, slow0, slow1, notes0, notes1, floored0, done;
	int64_t t0, t1;
	fc_init();
	if (fc_updater_start(0) != 0) {
		fprintf(stderr, "fc_keeper_check: fc_updater_start failed\n");
		return 2;
	}
	r0 = __atomic_load_n(&c->reanchors, __ATOMIC_RELAXED);
	t0 = kns(CLOCK_MONOTONIC);
	while (__atomic_load_n(&c->reanchors, __ATOMIC_RELAXED) < r0 + 8 && kns(CLOCK_MONOTONIC) - t0 < 30000000000LL)
		sleep_ns(1000000);
	if (c->backend != FC_BACKEND_COUNTER) {
		printf("skip: the kernel backend (%s): no hands to keep\n", c->reason);
		return 77;
	}
	fc__updater_test_turns(&late0, &stale0);
	floored0 = fc__updater_test_floored();
	slow0 = __atomic_load_n(&c->slow_paths, __ATOMIC_RELAXED);
	notes0 = __atomic_load_n(&c->keeper.step_notifications, __ATOMIC_RELAXED);
	r0 = __atomic_load_n(&c->reanchors, __ATOMIC_RELAXED);
	t0 = kns(CLOCK_MONOTONIC);
	do {
		for (int i = 0; i < 1000; i++)
			(void)fc_mono_ns();
	} while (__atomic_load_n(&c->reanchors, __ATOMIC_RELAXED) < r0 + 2000 && kns(CLOCK_MONOTONIC) - t0 < 60000000000LL);
	t1 = kns(CLOCK_MONOTONIC);
	/* The slow paths first; then the keeper's next turn ends (the one under way or due: a late turn is counted
	 * at its end, and a machine busy only now may hold it back past this point) before its counts are read */
	slow1 = __atomic_load_n(&c->slow_paths, __ATOMIC_RELAXED);
	notes1 = __atomic_load_n(&c->keeper.step_notifications, __ATOMIC_RELAXED);
	done = fc__updater_test_turns_done();
	while (__atomic_load_n(&c->keeper.running, __ATOMIC_RELAXED) && fc__updater_test_turns_done() <= done &&
	       kns(CLOCK_MONOTONIC) - t1 < 10000000000LL)
		sleep_ns(100000);
	if (fc__updater_test_turns_done() <= done) { /* held off 10 s, or parked (a 1 s period) */
		printf("skip: the keeper took no turn in 10 s after the reads\n");
		fc_updater_stop();
		return 77;
	}
	fc__updater_test_turns(&late1, &stale1);
	printf("turns: %llu re-anchors in %.2f s, %llu late turns, %llu on-time turns finding their hand stale, %llu "
	       "reader slow paths (%.2f/s), %llu step notifications\n",
	       (unsigned long long)(__atomic_load_n(&c->reanchors, __ATOMIC_RELAXED) - r0), (double)(t1 - t0) / 1e9,
	       (unsigned long long)(late1 - late0), (unsigned long long)(stale1 - stale0),
	       (unsigned long long)(slow1 - slow0), (double)(slow1 - slow0) * 1e9 / (double)(t1 - t0),
	       (unsigned long long)(notes1 - notes0));
	fc_updater_stop();
	if (fc__updater_test_floored() != floored0) {
		/* a period short enough that the keeper's least wait (MIN_WAKE_NS) outlasts 3/4 of it: readers find
		 * hands stale by design, whatever the schedule's correctness (FASTCLOCK_PERIOD_US below ~67) */
		printf("skip: the keeper's waits were floored at its least wait: no P/8 left to judge\n");
		return 77;
	}
	if (stale1 != stale0) {
		fprintf(stderr, "fc_keeper_check: the keeper's schedule let its own hand go stale in %llu turns on time\n",
			(unsigned long long)(stale1 - stale0));
		return 1;
	}
	if (slow1 != slow0 && late1 == late0 && notes1 == notes0) {
		fprintf(stderr, "fc_keeper_check: %llu reader slow paths while no turn of the keeper was late\n",
			(unsigned long long)(slow1 - slow0));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "unpark-coarse"))
		return unpark_coarse();
	if (argc == 2 && !strcmp(argv[1], "fork-parks"))
		return fork_parks();
	if (argc == 2 && !strcmp(argv[1], "idle"))
		return idle();
	if (argc == 2 && !strcmp(argv[1], "turns"))
		return turns();
	if (argc == 2 && !strcmp(argv[1], "seccomp"))
		return seccomp_reanchors();
	if (argc == 2 && (!strcmp(argv[1], "bounded-parked") || !strcmp(argv[1], "cached-status"))) {
		/* run in a child: the filter stays with it, and the parent removes the segment's directory */
		char dir[] = "/tmp/fc_keeper_check.XXXXXX", cmd[96];
		pid_t pid;
		int st, rc = 2;
		if (!mkdtemp(dir) || chmod(dir, 0755) != 0)
			return 2;
		if ((pid = fork()) == 0)
			_exit(!strcmp(argv[1], "bounded-parked") ? bounded_parked(dir) : cached_status(dir));
		if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st))
			rc = WEXITSTATUS(st);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "fc_keeper_check: could not remove %s\n", dir);
		return rc;
	}
	fprintf(stderr, "usage: fc_keeper_check unpark-coarse | fork-parks | idle | seccomp | bounded-parked | cached-status\n");
	return 2;
}
