/*
 * tests/interleave — deterministic interleavings of the timehands reader (fc__hand_read, R1..R5 in
 * include/fastclock/fc_hand.h) and writer (fc_hands_publish, W1..W4 in src/hands.c).
 *
 * Built with -include test_point.h, so every FC__TEST_POINT calls fc_test_point() below. In the reader's
 * thread a test point runs the test's scripted action: whole re-anchors, or writer steps one at a time. The
 * writer runs in a second thread that stops at a named writer test point until it is told to go on, so a
 * writer can be paused between its own steps while the reader runs. One thread runs at a time: each
 * interleaving happens the same way on every run, and each test fails every time when the step that guards
 * against its interleaving is missing (tests/mutation/run.sh removes them one at a time).
 * Each test names the interleaving the model (tests/model/timehands.pml) shows to be dangerous.
 * Calls: fc__hand_read, fc_hands_init, fc_hands_publish, pthreads. Usage: interleave <test name>.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define TP_COUNTER 20 /* the counter hook: between the stale_ticks load and the other field loads */
#define MAX_PASSES 8  /* a reader that goes round more often than this waits on the writer: a failure */
#define T0 100000u    /* counter value of the reads: above every test hand's anchor, below its stale_ticks */

static struct fc_hands g_hands;
static struct fc_pub g_pub;
static uint64_t g_now = T0;
static int g_hits[32];
static void (*g_action)(int point, int hit);
static __thread int t_writer;
static const char *g_test;

static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "FAIL %s: ", g_test);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

/* ---- hands: hand k is a counter hand anchored at tick 1000 k, at 1 ns per tick, 1 ms ahead of hand k-1 ---- */
static struct fc_hand hand(unsigned k)
{
	struct fc_hand h = {0};
	h.base_ticks = 1000u * k;
	h.mask = ~(uint64_t)0;
	h.mult = (uint64_t)1 << 32;
	h.mono_ns = 1000000000 + 1000000 * (int64_t)k;
	h.stale_ticks = 1000000;
	h.valid_ticks = 1125000;
	return h;
}

static int64_t line(unsigned k, uint64_t t) { return hand(k).mono_ns + (int64_t)(t - hand(k).base_ticks); }

/* The hand a writer publishes when the counter is found untrustworthy: every read must take the slow path. */
static struct fc_hand kernel_hand(void)
{
	struct fc_hand h = {0};
	h.flags = FC_HAND_KERNEL;
	h.mask = ~(uint64_t)0;
	return h;
}

static void publish(struct fc_hand h) { fc_hands_publish(&g_pub, &h); }

/* ---- the paused writer --------------------------------------------------------------------------------- */
static pthread_mutex_t w_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t w_cv = PTHREAD_COND_INITIALIZER;
static pthread_t w_thread;
static struct fc_hand w_params;
static int w_stop;  /* writer test point to stop at; 0: run to the end */
static int w_state; /* 0 none, 1 running, 2 paused at w_stop, 3 done */

static void *writer_main(void *arg)
{
	(void)arg;
	t_writer = 1;
	fc_hands_publish(&g_pub, &w_params);
	pthread_mutex_lock(&w_mu);
	w_state = 3;
	pthread_cond_broadcast(&w_cv);
	pthread_mutex_unlock(&w_mu);
	return NULL;
}

static void writer_point(int n)
{
	pthread_mutex_lock(&w_mu);
	if (n == w_stop) {
		w_state = 2;
		pthread_cond_broadcast(&w_cv);
		while (w_state == 2)
			pthread_cond_wait(&w_cv, &w_mu);
	}
	pthread_mutex_unlock(&w_mu);
}

static void writer_wait_locked(void)
{
	while (w_state == 1)
		pthread_cond_wait(&w_cv, &w_mu);
}

/* Start publishing h in the writer thread; return once it is paused at `stop` (or done). */
static void writer_start(struct fc_hand h, int stop)
{
	pthread_mutex_lock(&w_mu);
	w_params = h;
	w_stop = stop;
	w_state = 1;
	pthread_mutex_unlock(&w_mu);
	if (pthread_create(&w_thread, NULL, writer_main, NULL) != 0)
		fail("pthread_create");
	pthread_mutex_lock(&w_mu);
	writer_wait_locked();
	pthread_mutex_unlock(&w_mu);
}

/* Let the paused writer go on to `stop` (0: to the end, and join it). */
static void writer_resume(int stop)
{
	pthread_mutex_lock(&w_mu);
	if (w_state == 2) {
		w_stop = stop;
		w_state = 1;
		pthread_cond_broadcast(&w_cv);
		writer_wait_locked();
	}
	int done = w_state == 3;
	pthread_mutex_unlock(&w_mu);
	if (done && stop == 0) {
		pthread_join(w_thread, NULL);
		w_state = 0;
	}
}

/* ---- the reader's side --------------------------------------------------------------------------------- */
void fc_test_point(int n)
{
	if (t_writer) {
		writer_point(n);
		return;
	}
	if (n >= FC__TP_W1 && n != TP_COUNTER) /* whole re-anchors made by the reader's own actions */
		return;
	int h = ++g_hits[n];
	if (n == FC__TP_R1 && h > MAX_PASSES)
		fail("the reader went round %d times: it waits on the writer", h);
	if (g_action)
		g_action(n, h);
}

static uint64_t counter(void)
{
	fc_test_point(TP_COUNTER);
	return g_now;
}

static int read_at(uint64_t t, int64_t *mono)
{
	g_now = t;
	memset(g_hits, 0, sizeof(g_hits));
	return fc__hand_read(&g_pub, counter, mono, NULL, NULL);
}

static void setup(uint32_t gen_start)
{
	fc_hands_init(&g_hands, &g_pub, gen_start);
	g_action = NULL;
	publish(hand(1)); /* ring[0]: the hand the reader starts with */
}

/* ---- the interleavings ------------------------------------------------------------------------------- */

/* R4 (generation re-check). Between the reader's stale_ticks load and its other field loads, FC_HANDS
 * re-anchors recycle its hand; the last turns it into a kernel hand. The pointer is back on the reader's hand
 * (R5 passes), so only the changed generation shows that the fields come from two hands: without R4 the
 * reader serves a counter value computed from the kernel hand's empty line (model: torn_read). */
static void act_recycle_in_field_loads(int point, int hit)
{
	if (point == TP_COUNTER && hit == 1) {
		for (unsigned k = 2; k <= FC_HANDS; k++)
			publish(hand(k));
		publish(kernel_hand());
	}
}

static void torn_read_across_a_recycle_is_retried(void)
{
	int64_t m = 0;
	setup(1);
	const struct fc_hand *mine = g_pub.current;
	g_action = act_recycle_in_field_loads;
	int ok = read_at(T0, &m);
	if (g_pub.current != mine)
		fail("scenario: the reader's hand should be current again after %d re-anchors", FC_HANDS);
	if (ok)
		fail("returned %lld from a hand rewritten during the read (expected the slow path: a kernel hand)",
		     (long long)m);
}

/* W1 (the gen = 0 mark). FC_HANDS - 1 re-anchors after the reader loaded its generation, the writer
 * rewrites the reader's hand; its fields are written while the reader loads them (W2), and the writer finishes
 * (W3, W4: the hand is current again) while the reader is between R4 and R5. Only the mark makes R4 fail:
 * without it the old generation is still there at R4, R5 finds the hand current, and the reader returns a
 * mix of two hands (model: NO_MARK, torn_read). */
static void act_writer_in_field_loads(int point, int hit)
{
	if (point == FC__TP_R2 && hit == 1) {
		for (unsigned k = 2; k <= FC_HANDS; k++)
			publish(hand(k));
		writer_start(kernel_hand(), FC__TP_W1);
	} else if (point == TP_COUNTER && hit == 1) {
		writer_resume(FC__TP_W2);
	} else if (point == FC__TP_R4 && hit == 1) {
		writer_resume(0);
	}
}

static void writer_rewriting_the_readers_hand_is_never_mixed_into_a_read(void)
{
	int64_t m = 0;
	setup(1);
	g_action = act_writer_in_field_loads;
	int ok = read_at(T0, &m);
	writer_resume(0);
	if (ok)
		fail("returned %lld while its hand was being rewritten into a kernel hand (expected the slow path)",
		     (long long)m);
}

/* R5 (still current; finding F1). The reader is descheduled after R1 while FC_HANDS - 1 re-anchors run and
 * the next one recycles its hand up to W3 (new generation, not yet current). Without R5 it returns the
 * unpublished hand's value, and its next read, from the hand still current, is lower: time goes back. */
static void act_recycle_after_R1(int point, int hit)
{
	if (point == FC__TP_R1 && hit == 1) {
		for (unsigned k = 2; k <= FC_HANDS; k++)
			publish(hand(k));
		writer_start(hand(FC_HANDS + 1), FC__TP_W3);
	}
}

static void reader_descheduled_across_a_recycle_never_goes_back(void)
{
	int64_t m1 = 0, m2 = 0;
	setup(1);
	g_action = act_recycle_after_R1;
	int ok1 = read_at(T0, &m1);
	g_action = NULL;
	int ok2 = read_at(T0 + 1, &m2);
	writer_resume(0);
	if (!ok1 || !ok2)
		fail("a read took the slow path (%d, %d)", ok1, ok2);
	if (m2 < m1)
		fail("time went back by %lld ns: %lld, then %lld", (long long)(m1 - m2), (long long)m1, (long long)m2);
	if (m1 != line(FC_HANDS, T0))
		fail("returned %lld, not the current hand's %lld", (long long)m1, (long long)line(FC_HANDS, T0));
}

/* Readers never wait for a writer (model: waited_on_stopped_writer): with the writer paused after each of
 * W1, W2 and W3, a read returns the current hand's value in one pass, and after the writer finishes the new
 * hand's. Generations start next to the wrap, so the writer also skips generation 0 here. Guards W4's place
 * (last), the ring (the writer never rewrites the current hand) and W3 (a generation is published). */
static void readers_never_wait_on_a_paused_writer(void)
{
	static const int stops[] = {FC__TP_W1, FC__TP_W2, FC__TP_W3};
	int64_t m = 0;
	unsigned k = 1;
	setup(UINT32_MAX - 2);
	for (unsigned round = 0; round < 2 * FC_HANDS; round++) {
		int stop = stops[round % 3];
		writer_start(hand(k + 1), stop);
		if (!read_at(T0, &m) || m != line(k, T0))
			fail("round %u, writer paused at test point %d: read %lld, expected hand %u's %lld", round, stop,
			     (long long)m, k, (long long)line(k, T0));
		if (g_hits[FC__TP_R1] != 1)
			fail("round %u, writer paused at test point %d: the reader went round %d times", round, stop,
			     g_hits[FC__TP_R1]);
		writer_resume(0);
		k++;
		if (!read_at(T0, &m) || m != line(k, T0))
			fail("round %u, after the writer finished: read %lld, expected hand %u's %lld", round, (long long)m,
			     k, (long long)line(k, T0));
	}
}

/* One whole re-anchor at each point of a read: the read returns the old or the new hand's exact value, and
 * the next read is not lower. */
static int g_at;
static void act_one_reanchor(int point, int hit)
{
	if (point == g_at && hit == 1)
		publish(hand(2));
}

static void one_reanchor_at_each_reader_point_returns_a_published_value(void)
{
	static const int points[] = {FC__TP_R1, FC__TP_R2, TP_COUNTER, FC__TP_R3, FC__TP_R4};
	for (unsigned i = 0; i < sizeof(points) / sizeof(points[0]); i++) {
		int64_t m1 = 0, m2 = 0;
		setup(1);
		g_at = points[i];
		g_action = act_one_reanchor;
		int ok = read_at(T0, &m1);
		g_action = NULL;
		if (!ok || (m1 != line(1, T0) && m1 != line(2, T0)))
			fail("re-anchor at test point %d: read %lld, neither hand's value", g_at, (long long)m1);
		if (!read_at(T0 + 1, &m2) || m2 < m1)
			fail("re-anchor at test point %d: %lld, then %lld", g_at, (long long)m1, (long long)m2);
	}
}

/* The counter-wrap mask. A 32-bit counter that wrapped since the anchor: the inline reader takes the delta
 * modulo the counter's width and serves the read itself. Without the mask the delta is near 2^64, every read
 * until the next re-anchor goes to the slow path (a period of reads 20x slower after each wrap). */
static void narrow_counter_wrap_is_served_by_the_inline_reader(void)
{
	struct fc_hand h = hand(1);
	int64_t m = 0;
	fc_hands_init(&g_hands, &g_pub, 1);
	g_action = NULL;
	h.mask = 0xffffffffu;
	h.base_ticks = 0xffffffffu - 99; /* 100 ticks before the wrap */
	publish(h);
	if (!read_at(400, &m))
		fail("a read 500 ticks after the anchor, across the counter's wrap, took the slow path");
	if (m != h.mono_ns + 500)
		fail("read %lld across the wrap, expected %lld", (long long)m, (long long)(h.mono_ns + 500));
}

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{"torn_read_across_a_recycle_is_retried", torn_read_across_a_recycle_is_retried},
	{"writer_rewriting_the_readers_hand_is_never_mixed_into_a_read",
	 writer_rewriting_the_readers_hand_is_never_mixed_into_a_read},
	{"reader_descheduled_across_a_recycle_never_goes_back", reader_descheduled_across_a_recycle_never_goes_back},
	{"readers_never_wait_on_a_paused_writer", readers_never_wait_on_a_paused_writer},
	{"one_reanchor_at_each_reader_point_returns_a_published_value",
	 one_reanchor_at_each_reader_point_returns_a_published_value},
	{"narrow_counter_wrap_is_served_by_the_inline_reader", narrow_counter_wrap_is_served_by_the_inline_reader},
};

int main(int argc, char **argv)
{
	alarm(20); /* a writer or reader stuck by a broken protocol ends the test (SIGALRM: failure) */
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (argc > 1 && strcmp(argv[1], tests[i].name) != 0)
			continue;
		g_test = tests[i].name;
		tests[i].fn();
		printf("ok %s\n", tests[i].name);
		if (argc > 1)
			return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "unknown test '%s'\n", argv[1]);
		return 2;
	}
	return 0;
}
