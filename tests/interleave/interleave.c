/*
 * Deterministic interleavings of the timehands protocol.
 *
 * The reader (the one reader protocol of fc_hand.h, run by the inline fc__hand_read_ns and by the slow path's
 * fc__read_slow in src/read.c: both are driven here) and the writer (fc__hands_publish in src/hands.c) are
 * compiled here with their interleaving points turned into calls of this file (FC__TEST_POINT /
 * FC__WRITER_POINT; empty in the library). A reader thread and a writer thread pass a baton at scripted points,
 * so each interleaving the model (tests/model/timehands.pml) shows to be dangerous runs exactly, every time: a
 * test fails deterministically when the step that guards against it is missing (tests/mutation/run.sh removes
 * them one by one).
 *
 * The hands: every hand k is a line of its own, value(t) = mono_k + (t - base_k) * mult_k, with parameters
 * that differ from hand to hand, so a value computed from fields of two hands (a torn read) equals no hand's
 * value; later hands lie above earlier ones (as the tracker's dominance rule makes them), so a reader that
 * returns a newer hand and then an older one goes back.
 *
 *   interleave [TEST]   runs every test (or one); exit 0 when all hold, 1 otherwise.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* hooks.h (force-included by the build into this file and into its own copy of the library's sources) defines
 * FC__TEST_POINT(n) / FC__WRITER_POINT(n) as calls of fc_test_point / fc_test_writer_point below. */
#include "hands.h"
#include "read.h"
#include "sample.h"
#include "state.h"
#include "windup.h"
#include "start.h"

/* ---- the simulated machine: a counter the test sets by hand, a kernel clock on the same line ------------- */
static uint64_t g_ticks = 1000000;
static uint64_t sim_counter(void) { return __atomic_load_n(&g_ticks, __ATOMIC_RELAXED); }
/* the inline readers' hook: a narrow counter's distance from the anchor, masked */
static uint64_t sim_ticks(const struct fc_hand *th) { return fc__hand_ticks_masked(th, sim_counter()); }
static uint64_t sim_counter_ctx(void *ctx)
{
	(void)ctx;
	return sim_counter();
}
static int64_t g_kernel_lag; /* the kernel's read lands this many ns before the end of the bracket */
static int sim_kernel(void *ctx, clockid_t id, int64_t *ns)
{
	(void)ctx;
	/* The counter runs at 1 GHz on the kernel's line: mono = ticks; real = mono + 1e18. */
	*ns = (int64_t)sim_counter() - g_kernel_lag + (id == CLOCK_REALTIME ? 1000000000000000000LL : 0);
	return 0;
}

static struct fc_clock C;
static struct fc_pub PUB_STORE; /* static: struct fc_pub is 64-byte aligned, more than malloc promises */
static struct fc_pub *PUB = &PUB_STORE;

/* ---- the baton: exactly one of the two threads runs at a time ----------------------------------------- */
enum { READER = 0, WRITER = 1 };
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int turn = READER;
static int writer_done;

static void hand_to(int other, int self)
{
	pthread_mutex_lock(&mu);
	turn = other;
	pthread_cond_broadcast(&cv);
	while (turn != self && !(self == READER && writer_done))
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

static void wait_turn(int self)
{
	pthread_mutex_lock(&mu);
	while (turn != self)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

/* ---- the script ---------------------------------------------------------------------------------------- */
#define MAX_STOPS 4
struct script {
	/* Reader: stop at these points (each at its first hit since the read began), handing over to the writer. */
	int reader_stops[MAX_STOPS];
	int nreader_stops;
	/* Writer: publish this many hands; during the one numbered stop_in (1-based), hand over to the reader at
	 * writer point stop_at (0: no stop). */
	int publishes;
	int stop_in, stop_at;
};
static struct script S;
static int reading;            /* the reader thread is inside a scripted read */
static int reader_next_stop;   /* index into S.reader_stops */
static int publishing;         /* which publish the writer is in (1-based) */
static long retries;           /* TP_AFTER_R1 hits in the current read (1 = no retry) */
#define MAX_RETRIES 100000

void fc_test_point(int n)
{
	if (n == FC__TP_AFTER_R1 && ++retries > MAX_RETRIES) {
		fprintf(stderr, "interleave: a read retried %d times with nothing changing: livelock\n", MAX_RETRIES);
		exit(1);
	}
	if (!reading)
		return;
	if (reader_next_stop < S.nreader_stops && S.reader_stops[reader_next_stop] == n) {
		reader_next_stop++;
		hand_to(WRITER, READER);
	}
}

void fc_test_writer_point(int n)
{
	if (publishing && publishing == S.stop_in && n == S.stop_at)
		hand_to(READER, WRITER);
}

/* Hand k: a line of its own. base_k = k * 1000 ticks; the value at the anchor is 1000 * k ns plus k * k ns,
 * so consecutive hands step forward by a few ns more each time; the rate differs by k ppm-ish. Later hands are
 * above earlier ones at every t of interest (t within 10^6 ticks of the anchors). */
static struct fc_hand hand_k(int k)
{
	struct fc_hand p = {0};
	p.base_ticks = (uint64_t)k * 1000;
	p.mask = ~(uint64_t)0;
	p.mult = ((uint64_t)1 << 32) + (uint64_t)k * 4096; /* ~1 ns per tick, + k ppm */
	p.frac = (uint64_t)k << 20;
	p.mono_ns = (int64_t)k * 1000 + (int64_t)k * k * 1000;
	p.real_off_ns = (int64_t)k * 7;
	p.stale_ticks = 1ull << 40;
	p.valid_ticks = 1ull << 41;
	p.floor_ns = INT64_MIN;
	return p;
}

static int64_t value_of(const struct fc_hand *p, uint64_t t)
{
	return p->mono_ns + (int64_t)fc__scale(t - p->base_ticks, p->mult, p->frac);
}

static int g_next_k;   /* parameters of the next hand published */
static int published[64]; /* k of each hand in publish order */
static int npublished;

static void publish_next(void)
{
	struct fc_hand p = hand_k(++g_next_k);
	published[npublished++] = g_next_k;
	fc__hands_publish(PUB, &p);
}

/* The k of the hand pub->current points to now (the writer is paused or done). */
static int current_k(void)
{
	const struct fc_hand *cur = __atomic_load_n(&PUB->current, __ATOMIC_RELAXED);
	for (int k = 1; k <= g_next_k; k++) {
		struct fc_hand p = hand_k(k);
		if (cur->base_ticks == p.base_ticks && cur->mono_ns == p.mono_ns)
			return k;
	}
	return -1;
}

static void *writer_main(void *arg)
{
	(void)arg;
	wait_turn(WRITER);
	for (int i = 1; i <= S.publishes; i++) {
		publishing = i;
		publish_next();
	}
	publishing = 0;
	pthread_mutex_lock(&mu);
	writer_done = 1;
	turn = READER;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	return NULL;
}

/* ---- the readers under test ------------------------------------------------------------------------------ */
static int use_slow_path; /* 0: the inline fc__hand_read_ns; 1: fc__read_slow (src/read.c) */

static int64_t read_mono(void)
{
	int64_t m = 0;
	retries = 0;
	if (use_slow_path)
		return fc__read_slow(&C, FC__MONO, NULL);
	if (!fc__hand_read_ns(PUB, sim_ticks, FC__MONO, &m)) {
		fprintf(stderr, "interleave: the inline reader took the slow path unexpectedly\n");
		exit(1);
	}
	return m;
}

/* A fresh world: the ring initialised, `initial` hands published, the counter at t. */
static void reset(int initial, uint64_t t)
{
	memset(&C, 0, sizeof(C));
	memset(PUB, 0, sizeof(*PUB));
	C.pub = PUB;
	C.src = (struct fc_source){sim_counter_ctx, sim_kernel, NULL, NULL, ~(uint64_t)0, NULL};
	C.backend = FC_BACKEND_COUNTER;
	C.period_ns = 1000000;
	fc__hands_init(&C.hands, PUB, 0);
	g_next_k = 0;
	npublished = 0;
	for (int i = 0; i < initial; i++)
		publish_next();
	__atomic_store_n(&g_ticks, t, __ATOMIC_RELAXED);
	turn = READER;
	writer_done = 0;
	publishing = 0;
	reading = 0;
	reader_next_stop = 0;
	g_kernel_lag = 0;
}

/* Run the script with `reads` reads on the reader thread (the scripted stops apply to the first); values out. */
static void run(const struct script *sc, int reads, int64_t *vals, int *k_during)
{
	pthread_t w;
	S = *sc;
	pthread_create(&w, NULL, writer_main, NULL);
	for (int i = 0; i < reads; i++) {
		reading = i == 0;
		vals[i] = read_mono();
		reading = 0;
		if (k_during)
			k_during[i] = current_k();
	}
	while (!__atomic_load_n(&writer_done, __ATOMIC_ACQUIRE))
		hand_to(WRITER, READER); /* let the writer finish (its stop may come after the reads) */
	pthread_join(w, NULL);
}

static int failures;
static const char *g_only;
#define CHECK(cond, ...)                                                                                     \
	do {                                                                                                 \
		if (!(cond)) {                                                                               \
			fprintf(stderr, "FAIL %s (%s reader): ", name, use_slow_path ? "slow-path" : "inline"); \
			fprintf(stderr, __VA_ARGS__);                                                        \
			fprintf(stderr, "\n");                                                               \
			failures++;                                                                          \
			return;                                                                              \
		}                                                                                            \
	} while (0)

static int wanted(const char *name) { return g_only == NULL || strcmp(g_only, name) == 0; }

/* The value a read at counter t may return: the line of a hand that was current at some instant of the read.
 * Hands k_lo..k_hi were. */
static int is_hand_value(int64_t v, uint64_t t, int k_lo, int k_hi)
{
	for (int k = k_lo; k <= k_hi; k++) {
		struct fc_hand p = hand_k(k);
		if (v == value_of(&p, t))
			return 1;
	}
	return 0;
}

/* R5 (model finding F1): a reader descheduled after R1 while the writer recycles its hand copies it between
 * W3 and W4 of that update: it would return the newest hand's value, and its next read, loading the pointer
 * that still names the hand before, would return less. */
static void t_r5_recycled_between_w3_and_w4(void)
{
	const char *name = "r5_reader_copies_its_recycled_hand_between_w3_and_w4";
	struct script sc = {{FC__TP_AFTER_R1}, 1, FC_HANDS, FC_HANDS, FC__WP_AFTER_W3};
	int64_t v[2];
	if (!wanted(name))
		return;
	reset(1, 5000000);
	run(&sc, 2, v, NULL);
	CHECK(v[1] >= v[0], "time went back by %lld ns: the first read returned the hand the writer had not yet made "
			    "current", (long long)(v[0] - v[1]));
}

/* R4 (generation re-check): the writer recycles the reader's hand completely while the reader is between its
 * field loads (base and mask loaded, rate and anchor value not): without R4 the reader mixes two hands, and
 * R5 does not help (the recycled hand is current again). */
static void t_r4_recycled_during_field_copy(void)
{
	const char *name = "r4_hand_recycled_while_the_reader_copies_its_fields";
	struct script sc = {{FC__TP_FIELDS}, 1, FC_HANDS, 0, 0};
	int64_t v[1];
	const uint64_t t = 5000000;
	if (!wanted(name))
		return;
	reset(1, t);
	run(&sc, 1, v, NULL);
	CHECK(is_hand_value(v[0], t, 1, FC_HANDS + 1), "value %lld is no hand's value at t: a torn read", (long long)v[0]);
}

/* gen == 0 (R4's first half) and W1: the writer is in the middle of W2 on the hand the reader holds when the
 * reader loads the generation; it finishes W2..W4 (the hand becomes current) between the reader's R4 and R5.
 * Without W1's zero, or without the reader's gen == 0 test, nothing catches the torn copy. */
static void t_gen0_hand_being_written(void)
{
	const char *name = "w1_gen0_hand_being_written_when_the_reader_loads_gen";
	struct script sc = {{FC__TP_AFTER_R1, FC__TP_R4_R5}, 2, FC_HANDS, FC_HANDS, FC__WP_MID_W2};
	int64_t v[1];
	const uint64_t t = 5000000;
	if (!wanted(name))
		return;
	reset(1, t);
	run(&sc, 1, v, NULL);
	CHECK(is_hand_value(v[0], t, 1, FC_HANDS + 1), "value %lld is no hand's value at t: a torn read", (long long)v[0]);
}

/* W3: a hand whose generation is never published stays "being written" for ever; W4: a hand never made
 * current is never read. A publish followed by a read must return the new hand's value, promptly. */
static void t_publish_then_read(void)
{
	const char *name = "w3_w4_a_published_hand_is_read";
	struct script sc = {{0}, 0, 1, 0, 0};
	int64_t v[1];
	const uint64_t t = 5000000;
	struct fc_hand p;
	if (!wanted(name))
		return;
	reset(1, t);
	sc.nreader_stops = 1;
	sc.reader_stops[0] = FC__TP_AFTER_R1; /* the writer publishes hand 2 after the reader loaded the pointer */
	run(&sc, 1, v, NULL);
	{
		int64_t again = read_mono(); /* after the publish */
		p = hand_k(2);
		CHECK(again == value_of(&p, t), "after the publish a read returned %lld, the new hand gives %lld",
		      (long long)again, (long long)value_of(&p, t));
		CHECK(is_hand_value(v[0], t, 1, 2), "value %lld is no hand's value", (long long)v[0]);
	}
}

/* The writer paused between each of its steps while readers run: every read returns a whole hand's value and
 * reads never go back, at every writer point of every update of a full ring cycle and more. */
static void t_writer_paused_at_every_step(void)
{
	const char *name = "readers_while_the_writer_pauses_at_every_step";
	if (!wanted(name))
		return;
	for (int stop_in = 1; stop_in <= FC_HANDS + 2; stop_in++)
		for (int at = FC__WP_AFTER_W1; at <= FC__WP_AFTER_W3; at++)
			for (int rs = FC__TP_AFTER_R1; rs <= FC__TP_R4_R5; rs++) {
				struct script sc = {{rs}, 1, FC_HANDS + 2, stop_in, at};
				int64_t v[3];
				const uint64_t t = 5000000;
				reset(1, t);
				run(&sc, 3, v, NULL);
				for (int i = 0; i < 3; i++)
					CHECK(is_hand_value(v[i], t, 1, FC_HANDS + 3),
					      "update %d paused at writer point %d, reader stopped at %d: read %d returned %lld, "
					      "no hand's value", stop_in, at, rs, i, (long long)v[i]);
				for (int i = 1; i < 3; i++)
					CHECK(v[i] >= v[i - 1], "update %d paused at writer point %d, reader stopped at %d: "
						"read %d went back by %lld ns", stop_in, at, rs, i, (long long)(v[i - 1] - v[i]));
			}
}

/* The start-up switch from the kernel hand to the first counter hand: a kernel read made just
 * before the switch, at the same counter value, is never above the first counter value. The simulated kernel
 * reads its clock at the start of the sample's bracket (the counter advances 200 ticks across each kernel
 * read), the worst case for a hand anchored at the bracket's middle. */
static uint64_t g_step; /* ticks the counter advances at each read of it (0: frozen) */
static uint64_t stepping_counter(void *ctx)
{
	(void)ctx;
	return __atomic_fetch_add(&g_ticks, g_step, __ATOMIC_RELAXED) + g_step;
}
static int early_kernel(void *ctx, clockid_t id, int64_t *ns)
{
	(void)ctx;
	/* The kernel's clock is read right after the bracket's first counter read. */
	*ns = (int64_t)__atomic_load_n(&g_ticks, __ATOMIC_RELAXED) + (id == CLOCK_REALTIME ? 1000000000000000000LL : 0);
	__atomic_fetch_add(&g_ticks, 2 * g_step, __ATOMIC_RELAXED);
	return 0;
}

static void t_startup_switch(void)
{
	const char *name = "startup_first_counter_value_not_below_an_earlier_kernel_read";
	const struct fc_source src = {stepping_counter, early_kernel, NULL, NULL, ~(uint64_t)0, NULL};
	int64_t k, v, last = INT64_MIN;
	if (!wanted(name))
		return;
	memset(&C, 0, sizeof(C));
	memset(PUB, 0, sizeof(*PUB));
	g_ticks = 10000000;
	g_step = 100;
	fc__start_clock(&C, PUB, &src, 1000000, 0);
	/* trust_every 0: no trust check (the simulated machine has no clocksource file). */
	for (int i = 0; i < 200000 && __atomic_load_n(&C.start.phase, __ATOMIC_RELAXED) != FC_START_DONE; i++) {
		retries = 0;
		k = fc__read_slow(&C, FC__MONO, NULL);
		CHECK(k >= last, "start-up: time went back by %lld ns on the kernel hand", (long long)(last - k));
		last = k;
	}
	CHECK(__atomic_load_n(&C.start.phase, __ATOMIC_RELAXED) == FC_START_DONE, "start-up never finished");
	g_step = 0; /* time frozen: a kernel read and a counter read at the same instant */
	k = (int64_t)g_ticks;
	v = fc__read_slow(&C, FC__MONO, NULL);
	CHECK(v >= last && v >= k, "the first counter value %lld is below a kernel read made before it (%lld, last %lld)",
	      (long long)v, (long long)k, (long long)last);
}

/* The staleness test sends a read to the slow path; the counter-wrap mask keeps a read across the counter's
 * wrap on its hand (inline), and the slow path computes the same value. */
static void t_slow_path_stale_check(void)
{
	const char *name = "stale_hand_goes_to_the_slow_path";
	struct fc_hand p = hand_k(1);
	int64_t m;
	if (!wanted(name))
		return;
	reset(0, 0);
	if (use_slow_path) { /* across a 32-bit counter's wrap, the slow path too */
		p.mask = 0xffffffffu;
		p.base_ticks = 0xfffffff0u;
		fc__hands_publish(PUB, &p);
		__atomic_store_n(&g_ticks, 0x10u, __ATOMIC_RELAXED);
		m = fc__read_slow(&C, FC__MONO, NULL);
		CHECK(m == p.mono_ns + (int64_t)fc__scale(32, p.mult, p.frac),
		      "a slow-path read across the counter's wrap returned %lld, not the anchor + 32 ticks", (long long)m);
		return;
	}
	p.stale_ticks = 1000;
	fc__hands_publish(PUB, &p);
	__atomic_store_n(&g_ticks, p.base_ticks + 999, __ATOMIC_RELAXED);
	CHECK(fc__hand_read_ns(PUB, sim_ticks, FC__MONO, &m) == 1, "a read within the period took the slow path");
	__atomic_store_n(&g_ticks, p.base_ticks + 1000, __ATOMIC_RELAXED);
	CHECK(fc__hand_read_ns(PUB, sim_ticks, FC__MONO, &m) == 0, "a read at the stale point did not take the slow path");
	/* A counter that wrapped past the mask: the delta is taken modulo mask + 1 (a 32-bit counter here). */
	p.mask = 0xffffffffu;
	p.base_ticks = 0xfffffff0u;
	fc__hands_publish(PUB, &p);
	__atomic_store_n(&g_ticks, 0x10u, __ATOMIC_RELAXED); /* 32 ticks after the anchor, across the wrap */
	CHECK(fc__hand_read_ns(PUB, sim_ticks, FC__MONO, &m) == 1 && m == p.mono_ns + (int64_t)fc__scale(32, p.mult, p.frac),
	      "a read across the counter's wrap returned %lld, not the anchor + 32 ticks", (long long)m);
}

/* Demotion to the kernel backend (trust lost): readers may hold the last counter hand, which can be ahead of
 * the kernel by its error; a kernel read after the switch is raised to that hand's largest value (the
 * kernel-fallback floor) until the kernel passes it, so nothing goes back. */
static void t_demotion_floor(void)
{
	const char *name = "demotion_kernel_read_not_below_the_last_counter_hand";
	struct fc_hand p = hand_k(1);
	int64_t v1, v2;
	const uint64_t t = 5000000;
	if (!wanted(name) || !use_slow_path)
		return;
	reset(0, t);
	/* A counter hand 2 us ahead of the simulated kernel (mono = ticks) at t. */
	p.base_ticks = t - 1000;
	p.mono_ns = (int64_t)(t - 1000) + 2000;
	p.mult = (uint64_t)1 << 32;
	p.frac = 0;
	p.stale_ticks = 1000000;
	p.valid_ticks = 1125000;
	fc__hands_publish(PUB, &p);
	v1 = fc__read_slow(&C, FC__MONO, NULL);
	fc__windup_set_kernel_locked(&C, "test: trust lost");
	v2 = fc__read_slow(&C, FC__MONO, NULL); /* same counter, same kernel time */
	CHECK(v2 >= v1, "after the demotion a kernel read went back by %lld ns below the counter hand's value",
	      (long long)(v1 - v2));
	__atomic_store_n(&g_ticks, t + 2000000, __ATOMIC_RELAXED); /* past the old hand's window: the kernel's own */
	v2 = fc__read_slow(&C, FC__MONO, NULL);
	CHECK(v2 == (int64_t)(t + 2000000), "once the kernel passed the floor, reads are the kernel's (%lld, not %lld)",
	      (long long)v2, (long long)(t + 2000000));
}

int main(int argc, char **argv)
{
	g_only = argc > 1 ? argv[1] : NULL;
	for (use_slow_path = 0; use_slow_path <= 1; use_slow_path++) {
		t_r5_recycled_between_w3_and_w4();
		t_r4_recycled_during_field_copy();
		t_gen0_hand_being_written();
		t_publish_then_read();
		t_writer_paused_at_every_step();
		t_slow_path_stale_check();
		t_demotion_floor();
	}
	use_slow_path = 1;
	t_startup_switch();
	if (failures) {
		fprintf(stderr, "interleave: %d failure(s)\n", failures);
		return 1;
	}
	printf("interleave: %s: all interleavings hold (inline and slow-path readers)\n", g_only ? g_only : "every test");
	return 0;
}
