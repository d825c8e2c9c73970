/*
 * fastclock — the keeper thread (floor 4, above read.c: a client of the clock).
 *
 * What keeps a process's hands fresh, so that no read pays for the writer. Every 3/4 of the period, at absolute
 * deadlines (timer slack a small part of the period), it re-anchors with the chores (windup.c: the clocksource
 * re-check, the NTP state, the bound source's poll), so readers find a fresh hand and never take the slow path,
 * and stores a fresh value into the coarse clocks, at most about max(period, MIN_WAKE_NS) old.
 *
 * Who starts it: the program (fc_updater_start), or the library (fc__keeper_auto_start, read.c): a coarse read
 * KEEPER_DEFER_NS after the process's first, or a reader's re-anchor KEEPER_DEFER_NS after its first; never a
 * first call. FASTCLOCK_UPDATER=off and fc_updater_stop() leave readers to re-anchor by themselves (one kernel
 * sample each, and the chores at most once a second).
 * Parking: a keeper a reader's re-anchor started, with no coarse read wanting it, asks every PROBE_EVERY_NS
 * whether anyone still reads (probe hands, FC_HAND_PROBE: read.c answers); unanswered for IDLE_NS it parks:
 * the chores and a look for readers PARKED_WAKE_NS apart, no re-anchor. A reader's re-anchor or a coarse read
 * brings it back.
 *
 * The coarse clocks: fc_mono_coarse_ns() is one load of fc__pub.coarse_mono, 0 while this thread does not keep
 * it; a coarse read that finds 0 takes read.c's slow path (fc__coarse_init), a precise value. Two modes, fixed
 * when the thread is created (start_locked): a real-time keeper (SCHED_FIFO, where permitted) keeps coarse_mono,
 * one load per read, about one period old on a machine busy with ordinary work too; any other keeper
 * ("checked") keeps the clock's coarse_kept and leaves coarse_mono 0, so every coarse read returns the larger of
 * the keeper's value and the kernel's coarse clock (never staler than the kernel's while the keeper waits for a
 * CPU). Coarse values only grow (fc__coarse_raise): never back within a thread.
 *
 * The clock never calls into this file; the keeper publishes its state (running, step notifier,
 * notifications) into the clock object. Fork: this file's own fork handler starts a new thread in the child.
 * Step notification: a timerfd armed on CLOCK_REALTIME with TFD_TIMER_CANCEL_ON_SET reports every set of the
 * wall clock (and a resume) at once, and the keeper re-anchors then, not at the end of the period. Tests
 * substitute their own fd (fc__updater_test_step_fd).
 */
#define _GNU_SOURCE /* ppoll */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "section.h"
#include "config.h"
#include "init.h"
#include "start.h"
#include "state.h"
#include "units.h"
#include "updater.h"
#include "windup.h"

/* The thread wakes at most this often: at a 1 us period it would otherwise wake every 750 ns and burn a CPU
 * (readers re-anchor by themselves at such periods anyway). Coarse values are thus at most about
 * max(P, 50 us) old. */
#define MIN_WAKE_NS 50000

static pthread_mutex_t u_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t u_once = PTHREAD_ONCE_INIT;
static pthread_t u_thread;
/* What a coarse read's slow path (fc__coarse_init) reads or writes live in the global clock, on the page every
 * first call writes anyway: here, in .bss, they cost a process's first coarse read two page faults (the zero
 * page read, then the write; ~1-2 us each on the VM of docs/PERFORMANCE.md). */
#define u_running (fc__global_clock()->keeper.running)           /* guarded by u_mu; published as updater_running */
#define u_no_auto (fc__global_clock()->keeper.no_auto)           /* fc_updater_stop() was called: no auto start */
#define u_starting (fc__global_clock()->keeper.starting)         /* a coarse read is starting the thread */
#define u_first_coarse (fc__global_clock()->keeper.first_coarse) /* CLOCK_MONOTONIC of the first coarse read; 0: none */
#define u_checked (fc__global_clock()->keeper.checked)           /* the keeper runs without real-time priority */
static int u_stop;         /* set under u_mu, read relaxed by the thread */
static int64_t u_period_ns;
static int u_test_fd = -1; /* set by tests before fc_updater_start */
static int u_wake_fd = -1; /* eventfd: fc_updater_stop wakes the thread at once */
static dev_t u_anon_dev;   /* ...an anonymous inode: its device and inode (every eventfd's and timerfd's) */
static ino_t u_anon_ino;
static FC_TLS int t_starting; /* ... and it is this thread (a signal handler here cannot wait) */
static uint64_t u_events;  /* waits a descriptor's event ended (relaxed; tests: fc__updater_test_events) */
/* The keeper's turns, for tests (relaxed): late ones (its re-anchor done more than P/8 past its deadline: the
 * machine held it back), and on-time ones that found its own last hand already stale (its schedule's fault) */
static uint64_t u_turns_late, u_turns_stale;
/* ... and those whose next wait MIN_WAKE_NS lengthened past 3/4 of the period (below 4/3 of it): the schedule then
 * leaves no P/8, a stale hand on time is the floor's, not a defect */
static uint64_t u_turns_floored;
static uint64_t u_turns; /* ... and all of its turns that re-anchored, counted once each is judged */

void fc__updater_test_step_fd(int fd) { u_test_fd = fd; }
uint64_t fc__updater_test_events(void) { return __atomic_load_n(&u_events, __ATOMIC_RELAXED); }
uint64_t fc__updater_test_floored(void) { return __atomic_load_n(&u_turns_floored, __ATOMIC_RELAXED); }
uint64_t fc__updater_test_turns_done(void) { return __atomic_load_n(&u_turns, __ATOMIC_ACQUIRE); }
void fc__updater_test_turns(uint64_t *late, uint64_t *stale)
{
	*late = __atomic_load_n(&u_turns_late, __ATOMIC_RELAXED);
	*stale = __atomic_load_n(&u_turns_stale, __ATOMIC_RELAXED);
}

static void set_running(int v)
{
	__atomic_store_n(&u_running, v, __ATOMIC_RELAXED); /* read unlocked by fc__coarse_init */
	__atomic_store_n(&fc__global_clock()->updater_running, v, __ATOMIC_RELAXED);
}

static int64_t mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

/* Arm (or re-arm) the timerfd: an absolute expiry far in the future, so it only ever reports a set. */
#define STEP_FD_EXPIRY ((time_t)1 << 40)
static int arm_step_fd(int fd)
{
	struct itimerspec its = {{0, 0}, {STEP_FD_EXPIRY, 0}};
	return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL);
}

/* Are the descriptors still the ones made here? A fork child may close every descriptor it did not open (a
 * daemon's close-all without exec, after this file's fork handler started its keeper) and reuse the numbers for
 * its own files: the keeper then polled the program's files (a regular file is always readable: it woke without
 * end, a CPU at 100 %: 187930 re-anchors in 0.2 s against 267), read 8 bytes at a time out of the program's pipe
 * (all of a 40-byte message: the program's own read then found nothing, or blocked), and fc_updater_stop wrote 8
 * bytes into it and drained it. Looked at only when a descriptor shows an event (a wake-up, a step: rare), never
 * on the timed path. The wake-up eventfd is an anonymous inode (fstat tells it from a file, pipe or socket, not
 * from another anonymous one); the timerfd is armed STEP_FD_EXPIRY ahead, which timerfd_gettime shows and no
 * other descriptor answers. */
static int wake_fd_ours(void)
{
	struct stat st;
	return u_wake_fd >= 0 && fstat(u_wake_fd, &st) == 0 && st.st_dev == u_anon_dev && st.st_ino == u_anon_ino;
}

static int step_fd_ours(int fd)
{
	struct itimerspec its;
	return fd == u_test_fd || (fd >= 0 && timerfd_gettime(fd, &its) == 0 && its.it_value.tv_sec > STEP_FD_EXPIRY / 2);
}

static int open_step_fd(void)
{
	int fd;
	if (u_test_fd >= 0)
		return u_test_fd;
	fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (arm_step_fd(fd) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Wait until the absolute CLOCK_MONOTONIC time `deadline` (or fc_updater_stop); returns 1 if the wall clock
 * was set meanwhile. ppoll takes nanoseconds (poll's milliseconds rounded a 750 us wait up past the 1 ms
 * period, so readers re-anchored ~900 times a second). *wake and *fd: the wake-up eventfd is polled
 * (1) or not (0), the step timerfd (or -1); a descriptor that shows an event and is no longer ours (a fork child
 * closed it, and may have reused its number) is no longer polled, read or closed: the program's own. */
static int wait_until(int *fd, int *wake, int64_t deadline)
{
	struct pollfd pfd[2] = {{*wake ? u_wake_fd : -1, POLLIN, 0}, {*fd, POLLIN, 0}};
	uint64_t buf;
	int64_t left = deadline - mono_now();
	struct timespec ts;
	if (left <= 0)
		return 0;
	ts.tv_sec = (time_t)(left / NS_PER_SEC);
	ts.tv_nsec = (long)(left % NS_PER_SEC);
	if (pfd[0].fd < 0 && pfd[1].fd < 0) { /* no descriptor: plain sleep to the deadline */
		struct timespec abs = {(time_t)(deadline / NS_PER_SEC), (long)(deadline % NS_PER_SEC)};
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL);
		return 0;
	}
	if (ppoll(pfd, 2, &ts, NULL) <= 0)
		return 0;
	__atomic_fetch_add(&u_events, 1, __ATOMIC_RELAXED);
	/* fc_updater_stop's wake-up (u_stop is set before it) ends the loop; any other event there is not its:
	 * the eventfd is no longer polled (a stop then waits up to a period for the join) */
	if (pfd[0].revents && !__atomic_load_n(&u_stop, __ATOMIC_RELAXED))
		*wake = 0;
	if (!pfd[1].revents)
		return 0;
	if (!step_fd_ours(*fd)) {
		*fd = -1;
		__atomic_store_n(&fc__global_clock()->keeper.step_notifier, 0, __ATOMIC_RELAXED);
		return 0;
	}
	if (!(pfd[1].revents & POLLIN))
		return 0;
	if (read(*fd, &buf, sizeof(buf)) < 0 && errno == ECANCELED) {
		arm_step_fd(*fd);
		return 1;
	}
	return *fd == u_test_fd; /* a test's eventfd/pipe: any readable event is a simulated step */
}

/* Where the keeper keeps the coarse value: fc__pub.coarse_mono, which the inline readers load (a real-time
 * keeper), or the clock's coarse_kept, which only fc__coarse_init reads, beside the kernel's coarse clock
 * (checked: a keeper without real-time priority). */
static int64_t *coarse_loc(struct fc_clock *c, int checked) { return checked ? &c->coarse_kept : &c->pub->coarse_mono; }

/* A fresh value into the coarse clocks (fc__state_coarse_sample: never waits, so a busy writer lock at a 1 us period
 * cannot hold the keeper back; a wall-clock step is followed within one wake-up on every backend). */
static void refresh_coarse(struct fc_clock *c)
{
	int64_t m, off;
	fc__state_coarse_sample(c, &m, &off);
	fc__coarse_raise(c->pub, coarse_loc(c, __atomic_load_n(&u_checked, __ATOMIC_RELAXED)), m, off);
}

/* The keeper's first store (its mode now known: start_locked), into its mode's location; the other one, still
 * set only in a fork child whose keeper got the other mode than its parent's, is cleared after it. The first
 * value is at least every value the other mode may have returned: the other location's value, and, leaving
 * checked mode, the kernel's coarse clock now (checked reads returned it; it only grows). */
static void coarse_first(struct fc_clock *c, int checked)
{
	int64_t m, off, k, was = __atomic_load_n(coarse_loc(c, !checked), __ATOMIC_RELAXED);
	fc__state_coarse_sample(c, &m, &off);
	if (was > m)
		m = was;
	if (!checked && was != 0 && (k = fc__kernel_coarse(FC__MONO)) > m)
		m = k;
	fc__coarse_first(c->pub, coarse_loc(c, checked), m, off);
	if (was != 0)
		__atomic_store_n(coarse_loc(c, !checked), 0, __ATOMIC_RELAXED);
}

/* Ask the scheduler for a short slice (EEVDF, Linux 6.12+: sched_attr.sched_runtime of a SCHED_OTHER thread is
 * its slice, 0.1 .. 100 ms, no privilege needed; its priority and share of the CPU are unchanged). A woken
 * task whose slice is shorter than the running one's may preempt it, so the keeper's wake-ups wait less
 * behind busy threads (coarse values were up to 10 ms old with both cores busy; what the slice changes is
 * measured in docs/PERFORMANCE.md, "Coarse staleness"). Older kernels ignore the field (or refuse the call):
 * nothing changes there. */
#ifndef SYS_sched_setattr
#define SYS_sched_setattr 314 /* x86-64; the aarch64 headers all define it */
#endif
#ifndef SYS_sched_getattr
#define SYS_sched_getattr 315
#endif
#define KEEPER_SLICE_NS 100000 /* the kernel's minimum */
#define SCHED_FLAG_RESET_ON_FORK_ 0x01
struct sched_attr_v0 { /* SCHED_ATTR_SIZE_VER0 (48 bytes): without the utilization clamps, which stay as they are */
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
};

static void short_slice(void)
{
	struct sched_attr_v0 attr = {sizeof(attr), 0 /* SCHED_OTHER */, 0, 0, 0, KEEPER_SLICE_NS, 0, 0};
	attr.nice = getpriority(PRIO_PROCESS, 0); /* keep the thread's nice value (inherited from its creator) */
	(void)syscall(SYS_sched_setattr, 0, &attr, 0);
}

/* A new thread first runs when the scheduler lets it: created by a thread mid-slice on a CPU it shares (the
 * other busy), an ordinary keeper waits for that thread's next tick (up to 4 ms at HZ 250), the coarse clocks
 * as old meanwhile. A thread inherits its creator's slice, and a woken task with a shorter slice than the
 * running one's preempts it: so the creator takes the keeper's slice across pthread_create, and the new thread
 * runs right after it (measured: docs/JOURNAL.md, "The keeper's start"; fc_first_call keeper-start). Only an
 * ordinary thread (SCHED_OTHER) with a longer slice; its own attributes are put back after (as sched_getattr
 * reported them: a slice that followed the kernel's default is then a custom one of the same length). Returns
 * whether to. */
static int lend_short_slice(struct sched_attr_v0 *saved)
{
	struct sched_attr_v0 attr;
	if (syscall(SYS_sched_getattr, 0, saved, sizeof(*saved), 0) != 0 || saved->policy != 0 /* SCHED_OTHER */ ||
	    saved->runtime <= KEEPER_SLICE_NS)
		return 0;
	saved->size = sizeof(*saved);
	saved->flags &= SCHED_FLAG_RESET_ON_FORK_; /* the only flag to give back: no clamp, no keep-* */
	attr = *saved;
	attr.runtime = KEEPER_SLICE_NS;
	return syscall(SYS_sched_setattr, 0, &attr, 0) == 0;
}

/* Where the process may (root, CAP_SYS_NICE, or RLIMIT_RTPRIO >= 1), the keeper runs SCHED_FIFO at the lowest
 * real-time priority: its wake-ups then preempt every SCHED_OTHER thread, so the coarse clocks stay about one
 * period old however busy the machine is with ordinary work (docs/PERFORMANCE.md, "Coarse staleness": tens
 * of ms without it). It works ~1 us per period (a re-anchor's kernel samples and two stores) and sleeps
 * between; the kernel's real-time throttling (sched_rt_runtime_us) caps it all the same. It is created so
 * (start_locked): a thread that switched itself would first wait for a CPU as an ordinary one (a time slice
 * or more on a busy machine). Elsewhere (EPERM): the short slice above, set by the thread.
 * FASTCLOCK_UPDATER_RT=0 keeps it SCHED_OTHER. */
#define KEEPER_RT_PRIORITY 1
static void keeper_priority(void)
{
	if (sched_getscheduler(0) != SCHED_FIFO)
		short_slice();
}

/* Parking (a keeper a reader's re-anchor started, while no coarse read wants it): a process that reads no time
 * costs no CPU but the parked keeper's look, PARKED_WAKE_NS apart. Whether anyone reads is asked every
 * PROBE_EVERY_NS (probe hands: one slow path of a few ns per read until a read answers, about one wake-up); a
 * probe nobody answers for IDLE_NS parks the keeper, its last hand (a probe hand) left current. Parked, a read past
 * that hand's window gets the kernel's clock (one kernel read, read.c) and says so (probe_seen), and the keeper
 * keeps the hands again from its next look. */
#define PROBE_EVERY_NS (NS_PER_SEC / 2)
#define IDLE_NS (NS_PER_SEC / 2) /* so a process that stopped reading is parked within a second */
#define PARKED_WAKE_NS (NS_PER_SEC / 4)

static int may_park(const struct fc_clock *c)
{
	return __atomic_load_n(&c->updater_running, __ATOMIC_RELAXED) == 3 &&
	       !__atomic_load_n(&c->keeper.coarse_wanted, __ATOMIC_RELAXED);
}

/* Parked, nobody keeps the coarse clocks: 0 sends coarse reads to the slow path (precise values, read.c), which
 * asks for the keeper again (keeper.coarse_wanted). */
static void park(struct fc_clock *c)
{
	__atomic_store_n(&c->pub->coarse_mono, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->coarse_kept, 0, __ATOMIC_RELAXED);
}

/* Keeping them again: the first value under the start's protocol (updater_main: never below a precise value a
 * coarse read returned meanwhile). */
static void unpark(struct fc_clock *c)
{
	t_starting = 1;
	__atomic_store_n(&u_starting, 1, __ATOMIC_SEQ_CST);
	coarse_first(c, __atomic_load_n(&u_checked, __ATOMIC_RELAXED));
	__atomic_store_n(&u_starting, 0, __ATOMIC_RELEASE);
	t_starting = 0;
}

static void *updater_main(void *arg)
{
	struct fc_clock *c = fc__global_clock();
	int fd = open_step_fd(), wake = u_wake_fd >= 0, parked = 0;
	int64_t next = mono_now(), slack_for = 0, run_since, probe_from = 0, own_at = 0;
	uint64_t parked_slow = 0;
	(void)arg;
	prctl(PR_SET_NAME, "fastclock", 0, 0, 0); /* its name in top -H, ps -L, perf sched */
	keeper_priority();
	/* The first value, stored here rather than by the thread that created this one: a new thread first runs
	 * when the scheduler lets it (up to a tick later, 4 ms at HZ 250: lend_short_slice), and a value stored at
	 * its creation would have been that old meanwhile. Until this store coarse reads are precise reads;
	 * u_starting, set from before the value is taken until it is stored (seq_cst: fc__coarse_init's check after
	 * a precise read pairs with it), keeps them from returning a precise value above it. */
	t_starting = 1;
	__atomic_store_n(&u_starting, 1, __ATOMIC_SEQ_CST);
	coarse_first(c, __atomic_load_n(&u_checked, __ATOMIC_RELAXED));
	__atomic_store_n(&u_starting, 0, __ATOMIC_RELEASE);
	t_starting = 0;
	__atomic_store_n(&c->keeper.step_notifier, fd >= 0, __ATOMIC_RELAXED);
	run_since = next;
	while (!__atomic_load_n(&u_stop, __ATOMIC_RELAXED)) {
		const int64_t up = __atomic_load_n(&u_period_ns, __ATOMIC_RELAXED);
		const int64_t p = up ? up : __atomic_load_n(&c->period_ns, __ATOMIC_RELAXED); /* 0: the clock's */
		const struct fc_hand *cur = __atomic_load_n(&c->pub->current, __ATOMIC_ACQUIRE);
		int64_t now;

		if (parked) {
			/* Nobody read for IDLE_NS: the chores alone, and a look whether anyone reads again (a reader's
			 * re-anchor, a coarse read), PARKED_WAKE_NS apart */
			(void)fc__windup_chores(c);
			if (__atomic_load_n(&c->slow_paths, __ATOMIC_RELAXED) == parked_slow &&
			    !__atomic_load_n(&c->keeper.probe_seen, __ATOMIC_RELAXED) && may_park(c)) {
				if (wait_until(&fd, &wake, mono_now() + PARKED_WAKE_NS))
					__atomic_fetch_add(&c->keeper.step_notifications, 1, __ATOMIC_RELAXED);
				continue;
			}
			unpark(c); /* a reader re-anchored, a coarse read or fc_updater_start() wants it */
			parked = 0;
			__atomic_store_n(&c->keeper.parked, 0, __ATOMIC_RELAXED);
			next = run_since = mono_now();
			own_at = 0;
			continue;
		}
		/* Timer slack (default 50 us) would make a wake-up late by more than a short period allows. */
		if (p != slack_for) {
			prctl(PR_SET_TIMERSLACK, (unsigned long)(p / 16 > 0 ? p / 16 : 1), 0, 0, 0);
			slack_for = p;
		}
		/* The coarse clocks first, from the current hand (still in its window at an on-time wake-up): a
		 * re-anchor may take long (a bound source's poll), and coarse reads meanwhile would see the value of
		 * the previous wake-up. Then again from the new hand. */
		refresh_coarse(c);
		now = mono_now();
		if (may_park(c)) {
			/* Is anyone still reading? Every PROBE_EVERY_NS, the hands say "tell me" (FC_HAND_PROBE) until a
			 * read does (read.c), or for IDLE_NS: then nobody reads, and the keeper parks */
			if (!__atomic_load_n(&c->keeper.probing, __ATOMIC_RELAXED) &&
			    now - run_since >= PROBE_EVERY_NS) {
				__atomic_store_n(&c->keeper.probe_seen, 0, __ATOMIC_RELAXED);
				__atomic_store_n(&c->keeper.probing, 1, __ATOMIC_RELAXED);
				probe_from = now;
			} else if (__atomic_load_n(&c->keeper.probing, __ATOMIC_RELAXED) &&
				   __atomic_load_n(&c->keeper.probe_seen, __ATOMIC_RELAXED)) {
				__atomic_store_n(&c->keeper.probing, 0, __ATOMIC_RELAXED);
				run_since = now;
			} else if (__atomic_load_n(&c->keeper.probing, __ATOMIC_RELAXED) &&
				   now - probe_from >= IDLE_NS) {
				/* The current hand, the last re-anchor's, is a probe hand: a read past its window gets
				 * the kernel's clock and sets probe_seen (read.c), which brings the keeper back */
				__atomic_store_n(&c->keeper.probing, 0, __ATOMIC_RELAXED);
				park(c);
				parked = 1;
				__atomic_store_n(&c->keeper.parked, 1, __ATOMIC_RELAXED);
				parked_slow = __atomic_load_n(&c->slow_paths, __ATOMIC_RELAXED);
				continue;
			}
		} else if (__atomic_load_n(&c->keeper.probing, __ATOMIC_RELAXED)) {
			__atomic_store_n(&c->keeper.probing, 0, __ATOMIC_RELAXED);
		}
		if (!fc__start_done(c)) {
			(void)fc__start_step(c, cur, INT64_MAX); /* the start-up's next step, due or not (start.c) */
			refresh_coarse(c);
			own_at = 0;
			now = mono_now();
		} else if (!(FC__LOAD(cur->flags) & FC_HAND_KERNEL)) {
			/* A turn on time never finds its last hand (anchored by own_at) stale: the schedule below
			 * leaves P/8 (tests count both: fc__updater_test_turns) */
			if (own_at && p * 3 / 4 >= MIN_WAKE_NS && now - own_at >= p && now <= next + p / 8)
				__atomic_fetch_add(&u_turns_stale, 1, __ATOMIC_RELAXED);
			fc__windup_with_chores(c, cur);
			refresh_coarse(c);
			own_at = now = mono_now(); /* after the new hand's sample, or another thread's re-anchor */
			if (own_at > next + p / 8)
				__atomic_fetch_add(&u_turns_late, 1, __ATOMIC_RELAXED);
			__atomic_fetch_add(&u_turns, 1, __ATOMIC_RELEASE); /* after its late count */
		} else {
			(void)fc__windup_chores(c); /* the kernel backend: the clocksource re-check */
			own_at = 0;
			now = mono_now();
		}
		/* Next wake-up at 3/4 of the period after the last one, so the hand is replaced before readers
		 * find it stale; after a late wake-up (preempted), from now (own_at: the turn's new hand is at most
		 * that old): no burst to catch up. */
		{
			const int64_t step = p * 3 / 4 > MIN_WAKE_NS ? p * 3 / 4 : MIN_WAKE_NS;
			next += step;
			if (p * 3 / 4 < MIN_WAKE_NS)
				__atomic_fetch_add(&u_turns_floored, 1, __ATOMIC_RELAXED);
			if (next <= now)
				next = now + step;
		}
		if (wait_until(&fd, &wake, next)) {
			__atomic_fetch_add(&c->keeper.step_notifications, 1, __ATOMIC_RELAXED);
			/* re-anchor at once, unless the current hand saw the step (a reader re-anchored after it): a
			 * second re-anchor moments after the first restarts the rate history on that short baseline */
			if (!fc__windup_saw_wall(c))
				next = mono_now();
		}
	}
	__atomic_store_n(&c->keeper.probing, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->keeper.parked, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->keeper.step_notifier, 0, __ATOMIC_RELAXED);
	if (fd >= 0 && fd != u_test_fd && step_fd_ours(fd))
		close(fd);
	return NULL;
}

/* Start the thread (u_mu held). Its mode is known once it exists: real-time (created SCHED_FIFO) keeps
 * fc__pub.coarse_mono, one load per coarse read; otherwise (not permitted, or FASTCLOCK_UPDATER_RT=0) the
 * keeper can be held off a CPU for tens of ms on a busy machine, so it keeps coarse_kept and every coarse read
 * takes the larger of that and the kernel's coarse clock (fc__coarse_init): never staler than the kernel's.
 * The thread stores the first value itself (updater_main: so in its mode's location, and as fresh as its
 * first run); its later stores are raises, which leave 0 alone. Until then coarse reads are precise reads.
 * u_starting is never set across pthread_create (a coarse read waits while it is set, and glibc's
 * pthread_create takes locks, its stack cache's, the loader's, malloc's, that the thread a signal handler's
 * coarse read interrupted may hold: that read would wait for a start waiting for it). */
static int start_locked(int64_t period_ns)
{
	int rc;
	sigset_t all, was_mask;
	struct fc_clock *c = fc__global_clock();
	t_starting = 1;
	__atomic_store_n(&u_period_ns, period_ns, __ATOMIC_RELAXED); /* 0: follow the clock's period */
	__atomic_store_n(&u_stop, 0, __ATOMIC_RELAXED);
	if (!wake_fd_ours()) { /* none yet, or a fork child closed it: a new one (the old number is not ours to close) */
		struct stat st;
		u_wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (u_wake_fd >= 0 && fstat(u_wake_fd, &st) == 0)
			u_anon_dev = st.st_dev, u_anon_ino = st.st_ino;
		else if (u_wake_fd >= 0)
			close(u_wake_fd), u_wake_fd = -1;
	}
	/* The thread starts with every signal blocked (it inherits this mask): a signal sent to the process is then
	 * handled by one of the program's threads, never by the keeper in the middle of its work. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &was_mask);
	rc = EPERM;
	if (c->updater_rt) {
		pthread_attr_t a;
		const struct sched_param sp = {.sched_priority = KEEPER_RT_PRIORITY};
		if (pthread_attr_init(&a) == 0) {
			/* The keeper reads u_checked: set before the thread exists (pthread_create orders it). */
			__atomic_store_n(&u_checked, 0, __ATOMIC_RELAXED);
			if (pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED) == 0 &&
			    pthread_attr_setschedpolicy(&a, SCHED_FIFO) == 0 && pthread_attr_setschedparam(&a, &sp) == 0)
				rc = pthread_create(&u_thread, &a, updater_main, NULL);
			pthread_attr_destroy(&a);
		}
	}
	if (rc != 0) { /* not permitted (EPERM), or FASTCLOCK_UPDATER_RT=0: an ordinary thread, checked */
		struct sched_attr_v0 saved;
		pthread_attr_t a;
		const int pol = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
		/* A real-time creator (SCHED_FIFO/RR: root's, or given it by chrt or rtkit) would have its policy and
		 * priority inherited: a keeper at priority 99 under FASTCLOCK_UPDATER_RT=0. Asked for as SCHED_OTHER
		 * (a lower policy: always permitted); its nice value is still the creator's. */
		const int explicit_other = (pol == SCHED_FIFO || pol == SCHED_RR) && pthread_attr_init(&a) == 0;
		const struct sched_param sp0 = {.sched_priority = 0};
		const int lent = lend_short_slice(&saved);
		__atomic_store_n(&u_checked, 1, __ATOMIC_RELAXED);
		if (explicit_other && (pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED) != 0 ||
				       pthread_attr_setschedpolicy(&a, SCHED_OTHER) != 0 ||
				       pthread_attr_setschedparam(&a, &sp0) != 0))
			rc = EINVAL; /* not started rather than started real-time */
		else
			rc = pthread_create(&u_thread, explicit_other ? &a : NULL, updater_main, NULL);
		if (explicit_other)
			pthread_attr_destroy(&a);
		if (lent)
			(void)syscall(SYS_sched_setattr, 0, &saved, 0);
	}
	pthread_sigmask(SIG_SETMASK, &was_mask, NULL);
	if (rc == 0) {
		set_running(1); /* the thread stores the first value itself (updater_main) */
	} else { /* nobody keeps them (a fork child's locations may hold its parent's values) */
		__atomic_store_n(&c->pub->coarse_mono, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&c->coarse_kept, 0, __ATOMIC_RELAXED);
	}
	t_starting = 0;
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return 0;
}

/* In the child after fork(): the thread is gone; u_mu may have been held by another thread of the parent.
 * Start it again at once, so the child's coarse clocks keep advancing. */
static void atfork_child(void)
{
	struct fc_clock *c = fc__global_clock();
	pthread_mutex_init(&u_mu, NULL);
	/* A start under way in another thread of the parent is not in the child: nobody would end it. */
	t_starting = 0;
	__atomic_store_n(&u_starting, 0, __ATOMIC_RELAXED);
	/* the child's keeper starts unparked, not asking (a probe of the parent's keeper has no deadline here) */
	__atomic_store_n(&c->keeper.parked, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->keeper.probing, 0, __ATOMIC_RELAXED);
	if (u_running) {
		/* who started it (1 the program, 2 a coarse read, 3 a reader's re-anchor) stays: a keeper reads
		 * started parks while nobody reads in the child too, and fc_updater_start() there takes it over */
		const int by = __atomic_load_n(&c->updater_running, __ATOMIC_RELAXED);
		set_running(0);
		if (start_locked(u_period_ns) == 0 && by > 1)
			__atomic_store_n(&c->updater_running, by, __ATOMIC_RELAXED);
	} else { /* forked between that start's first store and its set_running: nobody keeps the values */
		__atomic_store_n(&c->pub->coarse_mono, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&c->coarse_kept, 0, __ATOMIC_RELAXED);
	}
}

static void register_fork_handler(void) { pthread_atfork(NULL, NULL, atfork_child); }

int fc_updater_start(int64_t period_ns)
{
	int rc = 0;
	if (period_ns < 0 || (period_ns > 0 && (period_ns < FC_MIN_PERIOD_NS || period_ns > FC_MAX_PERIOD_NS))) {
		errno = EINVAL;
		return -1;
	}
	fc__init_all(0); /* fc_init's start-up; the bound and the period left to what the process reads */
	pthread_once(&u_once, register_fork_handler);
	pthread_mutex_lock(&u_mu); /* period_ns 0: follow the clock's period, fc_set_period_ns() included */
	__atomic_store_n(&u_no_auto, 0, __ATOMIC_RELAXED);
	if (u_running) {
		/* Running already: started by the program (EALREADY), or by a coarse read (take it over). */
		if (__atomic_load_n(&fc__global_clock()->updater_running, __ATOMIC_RELAXED) >= 2) {
			__atomic_store_n(&u_period_ns, period_ns, __ATOMIC_RELAXED);
			set_running(1);
		} else {
			errno = EALREADY;
			rc = -1;
		}
	} else {
		rc = start_locked(period_ns);
	}
	pthread_mutex_unlock(&u_mu);
	return rc;
}

int fc_updater_stop(void)
{
	struct fc_clock *c = fc__global_clock();
	pthread_mutex_lock(&u_mu);
	__atomic_store_n(&u_no_auto, 1, __ATOMIC_RELAXED);
	if (!u_running) {
		pthread_mutex_unlock(&u_mu);
		errno = ESRCH;
		return -1;
	}
	__atomic_store_n(&u_stop, 1, __ATOMIC_RELAXED);
	if (wake_fd_ours()) {
		uint64_t one = 1, drain;
		struct pollfd p = {u_wake_fd, POLLIN, 0};
		if (write(u_wake_fd, &one, sizeof(one)) != sizeof(one))
			(void)0; /* the thread then wakes at its next period */
		pthread_join(u_thread, NULL);
		/* only while readable: an anonymous inode another part of the program opened under the number may block */
		while (poll(&p, 1, 0) == 1 && (p.revents & POLLIN) && read(u_wake_fd, &drain, sizeof(drain)) > 0)
			;
	} else { /* none, or not ours any more (a fork child closed it): the thread sees u_stop within a period */
		pthread_join(u_thread, NULL);
	}
	set_running(0);
	/* Nobody keeps the coarse clocks fresh now: 0 sends coarse reads to fc__coarse_init, which serves
	 * precise values (never below a coarse value returned before: those were values of the past). */
	__atomic_store_n(&c->pub->coarse_mono, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->coarse_kept, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&u_mu);
	return 0;
}

/* The keeper's start by the library itself (read.c: a coarse read, or a reader's re-anchor), never waiting: a
 * try-lock (a signal handler never waits for fc_updater_start/stop). `by`: what updater_running then says (2: a
 * coarse read started it, 3: a reader's re-anchor; a later fc_updater_start() takes either over). 1 if it was
 * started, 0 if it runs already or the lock was taken, -1 if the start failed or may not be made here (maybe
 * in a signal handler: fc__signals_as_at_load). */
int fc__keeper_auto_start(struct fc_clock *c, int by)
{
	int rc = 0;
	if (t_starting || !fc__signals_as_at_load())
		return -1; /* maybe a signal handler: tried again a second later (read.c) */
	if (pthread_mutex_trylock(&u_mu) != 0)
		return 0;
	pthread_once(&u_once, register_fork_handler);
	if (!u_running)
		rc = start_locked(0) == 0 ? 1 : -1;
	if (rc == 1)
		__atomic_store_n(&c->updater_running, by, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&u_mu);
	return rc;
}

int fc__keeper_starting_here(void) { return t_starting; }
