/*
 * fastclock — the optional updater thread.
 *
 * Re-anchors once per period so that readers never take the slow path and the coarse clocks are at most one
 * period old. Nothing depends on it: without it the first reader past the period re-anchors.
 * A client of the clock (floor 4): it calls fc_clock_windup() and publishes its state (running, step
 * notifier, notifications) into the clock object, where status and the drop-ins read it; the clock never
 * calls into this file.
 * Fork: threads do not survive fork(); this file's own fork handler marks the thread for restart and hands
 * the clock a slow-path hook, so the child's first slow path (within one period of its first read) starts a
 * new one with the same period; fc_updater_stop() in the child cancels that.
 *
 * Step notification: the thread also waits on a timerfd armed on CLOCK_REALTIME with
 * TFD_TIMER_CANCEL_ON_SET (timerfd_create(2)): when anyone sets the wall clock (settimeofday, clock_settime,
 * a leap second is not a set), the read fails with ECANCELED at once, and the thread re-anchors immediately
 * instead of at the end of the period. Tests substitute their own fd (fc__updater_test_step_fd) to drive
 * that path without ever touching the host's clock.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static pthread_mutex_t u_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t u_once = PTHREAD_ONCE_INIT;
static pthread_t u_thread;
static int u_running;      /* guarded by u_mu; published as clock->updater_running */
static int u_stop;         /* set under u_mu, read relaxed by the thread */
static int64_t u_period_ns;
static int u_restart;      /* fork child: restart on the next slow path (cleared by fc_updater_stop) */
static int u_test_fd = -1;       /* set by tests before fc_updater_start */
static int u_wake_fd = -1;       /* eventfd: fc_updater_stop wakes the thread at once */

void fc__updater_test_step_fd(int fd) { u_test_fd = fd; }
static void restart_in_child(void);

static void set_running(int v)
{
	u_running = v;
	__atomic_store_n(&fc__global_clock()->updater_running, v, __ATOMIC_RELAXED);
}

/* Arm (or re-arm) the timerfd: an absolute expiry far in the future, so it only ever reports a set. */
static int arm_step_fd(int fd)
{
	struct itimerspec its = {{0, 0}, {(time_t)1 << 40, 0}};
	return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL);
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

/* Wait up to timeout_ns (or until fc_updater_stop); returns 1 if the wall clock was set meanwhile. */
static int wait_step(int fd, int64_t timeout_ns)
{
	struct pollfd pfd[2] = {{u_wake_fd, POLLIN, 0}, {fd, POLLIN, 0}};
	uint64_t buf;
	int n = fd >= 0 ? 2 : 1;
	if (u_wake_fd < 0) { /* no eventfd: plain sleep */
		struct timespec ts = {(time_t)(timeout_ns / 1000000000), (long)(timeout_ns % 1000000000)};
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
		return 0;
	}
	/* poll's timeout is in ms; round up so a sub-ms period still sleeps (the hand is not stale yet).
	 * A sub-ms period thus re-anchors every 1 ms from this thread; readers re-anchor in between. */
	if (poll(pfd, (nfds_t)n, (int)((timeout_ns + 999999) / 1000000)) <= 0 || n < 2 || !(pfd[1].revents & POLLIN))
		return 0;
	if (read(fd, &buf, sizeof(buf)) < 0 && errno == ECANCELED) {
		arm_step_fd(fd);
		return 1;
	}
	return fd == u_test_fd; /* a test's eventfd/pipe: any readable event is a simulated step */
}

static void *updater_main(void *arg)
{
	struct fc_clock *c = fc__global_clock();
	int fd = open_step_fd();
	(void)arg;
	__atomic_store_n(&c->step_notifier, fd >= 0, __ATOMIC_RELAXED);
	while (!__atomic_load_n(&u_stop, __ATOMIC_RELAXED)) {
		int64_t p = __atomic_load_n(&u_period_ns, __ATOMIC_RELAXED);
		const struct fc_hand *cur = __atomic_load_n(&c->pub->current, __ATOMIC_ACQUIRE);

		if (c->backend == FC_BACKEND_COUNTER) {
			fc_clock_windup(c, cur);
		} else {
			struct timespec m, r;
			clock_gettime(CLOCK_MONOTONIC, &m);
			clock_gettime(CLOCK_REALTIME, &r);
			int64_t mn = (int64_t)m.tv_sec * 1000000000 + m.tv_nsec;
			int64_t rn = (int64_t)r.tv_sec * 1000000000 + r.tv_nsec;
			__atomic_store_n(&c->pub->coarse_real_off, rn - mn, __ATOMIC_RELAXED);
			__atomic_store_n(&c->pub->coarse_mono, mn, __ATOMIC_RELAXED);
		}
		/* Wake at 3/4 of the period, so the hand is replaced before readers find it stale; at once if
		 * the wall clock is set. */
		if (wait_step(fd, p * 3 / 4))
			__atomic_fetch_add(&c->step_notifications, 1, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&c->step_notifier, 0, __ATOMIC_RELAXED);
	if (fd >= 0 && fd != u_test_fd)
		close(fd);
	return NULL;
}

static int start_locked(int64_t period_ns)
{
	int rc;
	u_period_ns = period_ns;
	__atomic_store_n(&u_stop, 0, __ATOMIC_RELAXED);
	if (u_wake_fd < 0)
		u_wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	rc = pthread_create(&u_thread, NULL, updater_main, NULL);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	set_running(1);
	return 0;
}

/* In the child after fork(): the thread is gone; u_mu may have been held by another thread of the parent. */
static void atfork_child(void)
{
	pthread_mutex_init(&u_mu, NULL);
	if (u_running) {
		set_running(0);
		__atomic_store_n(&u_restart, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&fc__global_clock()->slow_hook, restart_in_child, __ATOMIC_RELEASE);
	}
}

static void register_fork_handler(void) { pthread_atfork(NULL, NULL, atfork_child); }

int fc_updater_start(int64_t period_ns)
{
	int rc;
	if (period_ns < 0 || (period_ns > 0 && (period_ns < 1000 || period_ns > 1000000000))) {
		errno = EINVAL;
		return -1;
	}
	fc_init();
	pthread_once(&u_once, register_fork_handler);
	if (period_ns == 0)
		period_ns = fc__global_clock()->period_ns;
	pthread_mutex_lock(&u_mu);
	if (u_running) {
		pthread_mutex_unlock(&u_mu);
		errno = EALREADY;
		return -1;
	}
	rc = start_locked(period_ns);
	pthread_mutex_unlock(&u_mu);
	return rc;
}

int fc_updater_stop(void)
{
	pthread_mutex_lock(&u_mu);
	if (!u_running) {
		/* In a fork child whose parent ran the thread: stopping means it is not restarted either. */
		int pending = __atomic_exchange_n(&u_restart, 0, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&u_mu);
		if (pending)
			return 0;
		errno = ESRCH;
		return -1;
	}
	__atomic_store_n(&u_stop, 1, __ATOMIC_RELAXED);
	if (u_wake_fd >= 0) {
		uint64_t one = 1, drain;
		if (write(u_wake_fd, &one, sizeof(one)) != sizeof(one))
			(void)0; /* the thread then wakes at its next period */
		pthread_join(u_thread, NULL);
		while (read(u_wake_fd, &drain, sizeof(drain)) > 0)
			;
	} else {
		pthread_join(u_thread, NULL);
	}
	set_running(0);
	pthread_mutex_unlock(&u_mu);
	return 0;
}

/* The clock's slow-path hook in a fork child: start the thread again, once. */
static void restart_in_child(void)
{
	__atomic_store_n(&fc__global_clock()->slow_hook, (void (*)(void))0, __ATOMIC_RELAXED);
	pthread_mutex_lock(&u_mu);
	if (__atomic_exchange_n(&u_restart, 0, __ATOMIC_RELAXED) && !u_running)
		(void)start_locked(u_period_ns);
	pthread_mutex_unlock(&u_mu);
}
