// The default re-anchor period follows what the process reads (src/config.h): FC_DEFAULT_PERIOD_NS while it makes
// plain reads only, FC_FINE_PERIOD_NS for good once it reads a bound or a coarse clock, or calls fc_init or
// fc_status (which ask for the bound); a period fixed by FASTCLOCK_PERIOD_US or fc_set_period_ns never moves.
// Each case runs in a child forked from a process whose library has not started, so each has a first call of its
// own. Judged by the clock's state and by counts, never by time.
#include <gtest/gtest.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "bound_fixtures.h"
#include "config.h"
#include "fastclock.h"
#include "start.h"
#include "state.h"
#include "windup.h"

namespace
{

int64_t period()
{
	return __atomic_load_n(&fc__global_clock()->period_ns, __ATOMIC_RELAXED);
}

void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) != 0)
		;
}

int64_t kernel_mono()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// Every plain read a program makes, spaced 2 ms for 100 ms.
void plain_reads()
{
	for (int i = 0; i < 50; i++) {
		struct timespec ts;
		struct timeval tv;
		(void)fc_mono_ns();
		(void)fc_real_ns();
		(void)fc_clock_gettime(CLOCK_MONOTONIC, &ts);
		(void)fc_clock_gettime(CLOCK_REALTIME, &ts);
		(void)fc_gettimeofday(&tv, nullptr);
		(void)fc_ticks_to_mono_ns(fc_ticks());
		sleep_ms(2);
	}
}

} // namespace

TEST(Period, plain_reads_keep_the_default)
{
	FC_TEST_NEEDS_A_FRESH_LIBRARY();
	ASSERT_GT(FC_DEFAULT_PERIOD_NS, FC_FINE_PERIOD_NS);
	EXPECT_EQ(forked([] {
			  plain_reads();
			  EXPECT_EQ(period(), FC_DEFAULT_PERIOD_NS);
		  }),
		  0);
}

// What the period is for: a process whose readers re-anchor (no keeper) does so at most once a period (the
// hand's stale point is past half of it), however often it reads. At 1 ms the same reads re-anchor at each one.
namespace
{
void reads_2ms_apart(const char *period_us)
{
	fc_clock *c = fc__global_clock();
	setenv("FASTCLOCK_UPDATER", "off", 1);
	if (period_us)
		setenv("FASTCLOCK_PERIOD_US", period_us, 1);
	(void)fc_mono_ns();
	for (int i = 0; i < 1000 && !fc__start_done(c); i++) {
		sleep_ms(1);
		(void)fc_mono_ns();
	}
	if (__atomic_load_n(&c->backend, __ATOMIC_RELAXED) != FC_BACKEND_COUNTER)
		_exit(77); // the kernel backend has no hands
	const uint64_t r0 = __atomic_load_n(&c->reanchors, __ATOMIC_RELAXED);
	const int64_t t0 = kernel_mono();
	const int reads = 100;
	for (int i = 0; i < reads; i++) {
		sleep_ms(2);
		(void)fc_mono_ns();
	}
	const uint64_t r = __atomic_load_n(&c->reanchors, __ATOMIC_RELAXED) - r0;
	const int64_t p = period_us ? atoll(period_us) * 1000 : FC_DEFAULT_PERIOD_NS;
	if (p > 2000000)
		EXPECT_LE(r, (uint64_t)((kernel_mono() - t0) / (p / 2) + 2))
			<< r << " re-anchors in " << reads << " reads";
	else // each read finds its hand stale (2 ms > the period)
		EXPECT_GE(r, (uint64_t)reads - 2) << r << " re-anchors in " << reads << " reads";
}
} // namespace

TEST(Period, plain_readers_re_anchor_at_most_once_a_default_period)
{
	FC_TEST_NEEDS_A_FRESH_LIBRARY();
	int rc = forked([] { reads_2ms_apart(nullptr); });
	if (rc == 77)
		GTEST_SKIP() << "no counter backend here";
	EXPECT_EQ(rc, 0);
	EXPECT_EQ(forked([] { reads_2ms_apart("1000"); }), 0);
}

TEST(Period, a_bounded_read_makes_it_fine)
{
	FC_TEST_NEEDS_A_FRESH_LIBRARY();
	EXPECT_EQ(forked([] {
			  fc_interval iv;
			  plain_reads();
			  ASSERT_EQ(period(), FC_DEFAULT_PERIOD_NS);
			  ASSERT_EQ(fc_real_bounded(&iv), 0);
			  EXPECT_EQ(period(), FC_FINE_PERIOD_NS);
			  plain_reads(); // for good
			  EXPECT_EQ(period(), FC_FINE_PERIOD_NS);
		  }),
		  0);
	EXPECT_EQ(forked([] {
			  fc_interval iv;
			  ASSERT_EQ(fc_mono_bounded(&iv), 0); // the process's first call
			  EXPECT_EQ(period(), FC_FINE_PERIOD_NS);
		  }),
		  0);
}

// Coarse reads, from the process's first call on: a first call that is a coarse read initialises the clock and asks
// for the fine period there and then (a real-time keeper it starts serves every later coarse read inline: none would
// come back to ask).
TEST(Period, coarse_reads_make_it_fine)
{
	FC_TEST_NEEDS_A_FRESH_LIBRARY();
	for (int reads : {1, 3})
		for (int real = 0; real < 2; real++)
			EXPECT_EQ(forked([real, reads] {
					  for (int i = 0; i < reads; i++) {
						  (void)(real ? fc_real_coarse_ns() : fc_mono_coarse_ns());
						  sleep_ms(1);
					  }
					  EXPECT_EQ(period(), FC_FINE_PERIOD_NS);
				  }),
				  0)
				<< reads << " x " << (real ? "fc_real_coarse_ns" : "fc_mono_coarse_ns");
}

// A reader that cannot take the writer lock (here: this thread holds it, as a signal handler on a thread inside the
// writer would) asks the next writer for the fine period: the bounded reads after it may all be inline (their
// hands are stamped), and a real-time keeper's coarse reads are, so none of them would ask again.
TEST(Period, a_reader_that_cannot_lock_leaves_the_fine_period_to_the_next_writer)
{
	FC_TEST_NEEDS_A_FRESH_LIBRARY();
	// 0: a bounded read, then a re-anchor; 1: a coarse read, then a re-anchor; 2: a bounded read on the kernel
	// backend, then the chores alone (a kernel backend's keeper, a parked one)
	for (int mode = 0; mode < 3; mode++)
		EXPECT_EQ(forked([mode] {
				  fc_clock *c = fc__global_clock();
				  fc_interval iv;
				  setenv("FASTCLOCK_UPDATER", "off", 1);
				  if (mode == 2)
					  setenv("FASTCLOCK_SOURCE", "kernel", 1);
				  (void)fc_mono_ns();
				  ASSERT_EQ(period(), FC_DEFAULT_PERIOD_NS);
				  fc__windup_lock(c);
				  if (mode == 1)
					  (void)fc_mono_coarse_ns();
				  else
					  ASSERT_EQ(fc_real_bounded(&iv), 0);
				  fc__windup_unlock(c);
				  EXPECT_EQ(period(), FC_DEFAULT_PERIOD_NS); // not yet: nobody could set it
				  if (mode == 2)
					  (void)fc__windup_chores(c); // the next writer
				  else
					  (void)fc__windup_with_chores(c, nullptr);
				  EXPECT_EQ(period(), FC_FINE_PERIOD_NS);
			  }),
			  0)
			<< "mode " << mode;
}

// A program that starts the keeper itself (as include/fastclock.h advises one whose handlers use SA_NODEFER) and
// makes plain reads only keeps the default: the keeper's cost goes as 1 / period.
TEST(Period, fc_updater_start_leaves_the_period_to_what_is_read)
{
	FC_TEST_NEEDS_A_FRESH_LIBRARY();
	EXPECT_EQ(forked([] {
			  fc_interval iv;
			  ASSERT_EQ(fc_updater_start(0), 0);
			  plain_reads();
			  EXPECT_EQ(period(), FC_DEFAULT_PERIOD_NS);
			  ASSERT_EQ(fc_real_bounded(&iv), 0); // then what it reads decides
			  EXPECT_EQ(period(), FC_FINE_PERIOD_NS);
			  (void)fc_updater_stop();
		  }),
		  0);
}

TEST(Period, fc_init_and_fc_status_ask_for_the_bound_and_its_period)
{
	FC_TEST_NEEDS_A_FRESH_LIBRARY();
	EXPECT_EQ(forked([] {
			  ASSERT_EQ(fc_init(), 0);
			  EXPECT_EQ(period(), FC_FINE_PERIOD_NS);
		  }),
		  0);
	EXPECT_EQ(forked([] {
			  struct fc_status st;
			  (void)fc_mono_ns();
			  ASSERT_EQ(fc_status(&st), 0);
			  EXPECT_EQ(st.period_ns, FC_FINE_PERIOD_NS);
		  }),
		  0);
}

TEST(Period, a_fixed_period_never_moves)
{
	FC_TEST_NEEDS_A_FRESH_LIBRARY();
	EXPECT_EQ(forked([] {
			  fc_interval iv;
			  setenv("FASTCLOCK_PERIOD_US", "16000", 1);
			  ASSERT_EQ(fc_real_bounded(&iv), 0);
			  (void)fc_mono_coarse_ns();
			  sleep_ms(2);
			  (void)fc_mono_coarse_ns();
			  EXPECT_EQ(period(), 16000000);
		  }),
		  0);
	EXPECT_EQ(forked([] {
			  fc_interval iv;
			  ASSERT_EQ(fc_set_period_ns(4000000), 0);
			  ASSERT_EQ(fc_real_bounded(&iv), 0);
			  (void)fc_init();
			  (void)fc_real_coarse_ns();
			  sleep_ms(2);
			  (void)fc_real_coarse_ns();
			  EXPECT_EQ(period(), 4000000);
		  }),
		  0);
	// a bad value is the default, which follows use
	EXPECT_EQ(forked([] {
			  fc_interval iv;
			  setenv("FASTCLOCK_PERIOD_US", "0", 1);
			  (void)fc_mono_ns();
			  EXPECT_EQ(period(), FC_DEFAULT_PERIOD_NS);
			  ASSERT_EQ(fc_real_bounded(&iv), 0);
			  EXPECT_EQ(period(), FC_FINE_PERIOD_NS);
		  }),
		  0);
}
