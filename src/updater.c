/*
 * fastclock — the optional updater thread.
 *
 * Re-anchors once per period so that readers never take the slow path and the coarse clocks are at most one
 * period old. Nothing depends on it: without it the first reader past the period re-anchors.
 * Fork: threads do not survive fork(); the child handler marks the thread for restart and the child's first
 * slow path (within one period of its first read) starts a new one with the same period.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "internal.h"

struct fc_clock *fc__global_clock(void);

static pthread_mutex_t u_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_t u_thread;
static int u_running;      /* guarded by u_mu; read relaxed by fc__updater_is_running */
static int u_stop;         /* set under u_mu, read relaxed by the thread */
static int64_t u_period_ns;
int fc__updater_restart_needed;

int fc__updater_is_running(void) { return __atomic_load_n(&u_running, __ATOMIC_RELAXED); }

static void *updater_main(void *arg)
{
	struct fc_clock *c = fc__global_clock();
	(void)arg;
	while (!__atomic_load_n(&u_stop, __ATOMIC_RELAXED)) {
		int64_t p = __atomic_load_n(&u_period_ns, __ATOMIC_RELAXED);
		/* Wake at 3/4 of the period, so the hand is replaced before readers find it stale. */
		struct timespec ts = {(time_t)(p * 3 / 4 / 1000000000), (long)(p * 3 / 4 % 1000000000)};
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
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	}
	return NULL;
}

static int start_locked(int64_t period_ns)
{
	int rc;
	u_period_ns = period_ns;
	__atomic_store_n(&u_stop, 0, __ATOMIC_RELAXED);
	rc = pthread_create(&u_thread, NULL, updater_main, NULL);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	__atomic_store_n(&u_running, 1, __ATOMIC_RELAXED);
	return 0;
}

int fc_updater_start(int64_t period_ns)
{
	int rc;
	if (period_ns < 0 || (period_ns > 0 && (period_ns < 1000 || period_ns > 1000000000))) {
		errno = EINVAL;
		return -1;
	}
	fc_init();
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
		pthread_mutex_unlock(&u_mu);
		errno = ESRCH;
		return -1;
	}
	__atomic_store_n(&u_stop, 1, __ATOMIC_RELAXED);
	pthread_join(u_thread, NULL);
	__atomic_store_n(&u_running, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&u_mu);
	return 0;
}

void fc__updater_after_fork(void)
{
	/* In the child: the thread is gone; u_mu may have been held by another thread of the parent. */
	pthread_mutex_init(&u_mu, NULL);
	if (u_running) {
		__atomic_store_n(&u_running, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&fc__updater_restart_needed, 1, __ATOMIC_RELAXED);
	}
}

void fc__updater_restart(void)
{
	pthread_mutex_lock(&u_mu);
	if (__atomic_exchange_n(&fc__updater_restart_needed, 0, __ATOMIC_RELAXED) && !u_running)
		(void)start_locked(u_period_ns);
	pthread_mutex_unlock(&u_mu);
}
