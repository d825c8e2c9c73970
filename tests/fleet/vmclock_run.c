/*
 * fastclock fleet test — VMClock as the time source, end to end through the public API.
 *
 * No VMClock runs here (no driver in this kernel; docs/ACCURACY.md), so this program plays the host: it
 * writes a page of Linux's vmclock-abi.h layout whose time of the CPU's counter is CLOCK_REALTIME + 2 ms
 * (the counter's frequency measured over 50 ms), maximum error 20 us and 100 ppm, and updates it under its
 * seq_count as a host would. The library (FASTCLOCK_VMCLOCK_PATH, auto mode, no ClockBound, no chronyd) must
 * serve it as "vmclock", and every bounded read must contain VMClock's own time of a counter read taken
 * between two bounded reads: i1.earliest <= vmclock(counter) <= i2.latest, whenever the status claims
 * anything. The host's script, after the steady part:
 *   migration    the disruption marker moves and the clock is FREERUNNING for 300 ms: DISRUPTED must be seen,
 *                then SYNCHRONIZED again;
 *   recalibrate  a new counter_value/time pair on the same line and a period 20 ppm off (within the promised
 *                100 ppm): the intervals follow the new line;
 *   unreliable   clock_status UNRELIABLE: the source must turn to the next one ("kernel").
 * Usage: fleet_vmclock SECONDS TMPDIR (the environment chooses the period and the backend). Exit 0: held;
 * 1: a read outside, or a step of the script not seen; 77: this CPU has no counter VMClock can describe.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../../src/bound/vmclock.h"
#include "fastclock.h"
#include "fastclock/fc_counter.h"

#define MS 1000000LL
#define SEC 1000000000LL
#define OFFSET_NS (2 * MS)   /* VMClock's time - CLOCK_REALTIME */
#define MAXERR_NS 20000      /* its time_maxerror_nanosec */
#define SHIFT 16             /* counter_period_shift */

static int64_t now(int clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * SEC + ts.tv_nsec;
}

static uint8_t *page;             /* the VMClock the library maps (MAP_SHARED) */
static struct fc_vmc_snap line;   /* what the page says, for the checks */

static void put(int off, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		page[off + i] = (uint8_t)(v >> (8 * i));
}

/* Publish `line` as a host does: seq_count odd, the fields, seq_count even (release: the fields first). */
static void publish(void)
{
	uint32_t *seq = (uint32_t *)(page + 12);
	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	page[10] = (uint8_t)line.counter_id;
	page[11] = (uint8_t)line.time_type;
	put(16, line.disruption_marker, 8);
	put(24, line.flags, 8);
	page[34] = (uint8_t)line.clock_status;
	page[38] = (uint8_t)line.leap_indicator;
	page[39] = (uint8_t)line.counter_period_shift;
	put(40, line.counter_value, 8);
	put(48, line.counter_period_frac_sec, 8);
	put(64, line.counter_period_maxerror_rate_frac_sec, 8);
	put(72, line.time_sec, 8);
	put(80, line.time_frac_sec, 8);
	put(96, line.time_maxerror_nanosec, 8);
	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELEASE);
}

/* The line through (counter c, time t ns) with a counter of hz. */
static void set_line(uint64_t c, int64_t t, long double hz)
{
	long double period = 18446744073709551616.0L * (long double)(1u << SHIFT) / hz;
	line.counter_value = c;
	line.time_sec = (uint64_t)(t / SEC);
	line.time_frac_sec = (uint64_t)((long double)(t % SEC) / 1e9L * 18446744073709551616.0L);
	line.counter_period_frac_sec = (uint64_t)period;
	line.counter_period_maxerror_rate_frac_sec = (uint64_t)(period * 100e-6L);
}

struct tally {
	uint64_t n, claimed, synced, disrupted, outside;
	int64_t min_margin;
	double sum_half;
};

/* Reads until `until`: i1, the counter, i2; VMClock's time of the counter must lie in [i1.earliest, i2.latest]. */
static void run(struct tally *t, int64_t until)
{
	while (now(CLOCK_MONOTONIC) < until) {
		struct fc_interval i1, i2;
		int64_t utc, err, margin;
		uint64_t c;
		char why[FC_BOUND_TEXT];
		fc_real_bounded(&i1);
		c = fc__counter_ordered();
		fc_real_bounded(&i2);
		t->n++;
		if (i1.status == FC_SYNC_UNKNOWN || i2.status == FC_SYNC_UNKNOWN)
			continue;
		if (fc__vmc_time_at(&line, FC_VMC_OUR_COUNTER, c, &utc, &err, why, sizeof(why)) != 0)
			continue; /* the script's UNRELIABLE part: no VMClock time to check against */
		t->claimed++;
		t->synced += i1.status == FC_SYNC_SYNCHRONIZED;
		t->disrupted += i1.status == FC_SYNC_DISRUPTED;
		margin = utc - i1.earliest_ns < i2.latest_ns - utc ? utc - i1.earliest_ns : i2.latest_ns - utc;
		if (margin < 0 && t->outside++ < 5)
			printf("OUTSIDE: vmclock %lld not in [%lld, %lld] (%s), %lld ns out\n", (long long)utc,
			       (long long)i1.earliest_ns, (long long)i2.latest_ns, fc_sync_name(i1.status), (long long)-margin);
		if (t->claimed == 1 || margin < t->min_margin)
			t->min_margin = margin;
		t->sum_half += (double)(i1.latest_ns - i1.earliest_ns) / 2;
	}
}

static void report(const char *name, const struct tally *t)
{
	printf("%-12s reads %llu claimed %llu synchronized %llu disrupted %llu outside %llu  min margin %.3f us  "
	       "mean half-width %.3f us\n",
	       name, (unsigned long long)t->n, (unsigned long long)t->claimed, (unsigned long long)t->synced,
	       (unsigned long long)t->disrupted, (unsigned long long)t->outside, t->min_margin / 1e3,
	       t->claimed ? t->sum_half / (double)t->claimed / 1e3 : 0);
}

static const char *source(void)
{
	static struct fc_status st;
	fc_status(&st);
	return st.bound_source;
}

int main(int argc, char **argv)
{
	double secs;
	char path[512];
	int fd, ok = 1;
	uint64_t c0, c1;
	int64_t r0, r1, t0;
	long double hz;
	struct tally steady = {0}, migration = {0}, recal = {0}, unrel = {0};
	const char *src, *period_us = getenv("FASTCLOCK_PERIOD_US");
	/* the library sees the host's changes at its next re-anchor: hold each state for 2.5 periods at least */
	int64_t hold = period_us ? (int64_t)(atof(period_us) * 2500) : 0;

	if (argc != 3) {
		fprintf(stderr, "usage: fleet_vmclock SECONDS TMPDIR\n");
		return 2;
	}
	if (FC_VMC_OUR_COUNTER < 0) {
		printf("SKIP: this CPU has no counter VMClock describes\n");
		return 77;
	}
	secs = atof(argv[1]);
	snprintf(path, sizeof(path), "%s/vmclock0", argv[2]);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, 4096) != 0 ||
	    (page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		perror(path);
		return 1;
	}
	close(fd);
	put(0, FC_VMCLOCK_MAGIC, 4);
	put(4, 104, 4);
	put(8, 1, 2);
	/* the counter's frequency against CLOCK_REALTIME over 50 ms: the host's calibration */
	r0 = now(CLOCK_REALTIME), c0 = fc__counter_ordered();
	usleep(50000);
	r1 = now(CLOCK_REALTIME), c1 = fc__counter_ordered();
	hz = (long double)(c1 - c0) * 1e9L / (long double)(r1 - r0);
	line.counter_id = FC_VMC_OUR_COUNTER;
	line.time_type = FC_VMC_TIME_UTC;
	line.flags = FC_VMC_FLAG_TIME_MAXERROR_VALID | FC_VMC_FLAG_PERIOD_MAXERROR_VALID;
	line.clock_status = FC_VMC_SYNCHRONIZED;
	line.counter_period_shift = SHIFT;
	line.time_maxerror_nanosec = MAXERR_NS;
	line.disruption_marker = 1;
	set_line(c1, r1 + OFFSET_NS, hz);
	publish();

	setenv("FASTCLOCK_VMCLOCK_PATH", path, 1);
	setenv("FASTCLOCK_CLOCKBOUND_PATH", "/nonexistent/shm0", 1);
	setenv("FASTCLOCK_CHRONY_SOCKET", "/nonexistent/chronyd.sock", 1);
	unsetenv("FASTCLOCK_BOUND_SOURCE");
	printf("VMClock at %s: counter %.6Lf GHz, time = CLOCK_REALTIME + %lld ns, max error %d ns + 100 ppm\n", path,
	       hz / 1e9L, (long long)OFFSET_NS, MAXERR_NS);

	t0 = now(CLOCK_MONOTONIC);
	run(&steady, t0 + (int64_t)(secs * SEC * 0.4));
	src = source();
	if (strcmp(src, "vmclock") != 0 || steady.synced == 0) {
		printf("FAIL: source %s, %llu synchronized reads (want vmclock, > 0)\n", src,
		       (unsigned long long)steady.synced);
		ok = 0;
	}
	/* migration: the marker moves; the host is free running for 300 ms, then synchronised again */
	line.disruption_marker = 2;
	line.clock_status = FC_VMC_FREERUNNING;
	publish();
	run(&migration, now(CLOCK_MONOTONIC) + (hold > 300 * MS ? hold : 300 * MS));
	line.clock_status = FC_VMC_SYNCHRONIZED;
	publish();
	run(&migration, now(CLOCK_MONOTONIC) + (hold > 200 * MS ? hold : 200 * MS));
	if (migration.disrupted == 0 || migration.synced == 0) {
		printf("FAIL: around the migration %llu disrupted and %llu synchronized reads (want both > 0)\n",
		       (unsigned long long)migration.disrupted, (unsigned long long)migration.synced);
		ok = 0;
	}
	/* recalibration: the line through the current point, 20 ppm steeper */
	{
		uint64_t c = fc__counter_ordered();
		int64_t utc, err;
		char why[FC_BOUND_TEXT];
		fc__vmc_time_at(&line, FC_VMC_OUR_COUNTER, c, &utc, &err, why, sizeof(why));
		set_line(c, utc, hz / (1 + 20e-6L));
		publish();
	}
	run(&recal, now(CLOCK_MONOTONIC) + (int64_t)(secs * SEC * 0.4));
	/* unreliable: the library serves the next source */
	line.clock_status = FC_VMC_UNRELIABLE;
	publish();
	run(&unrel, now(CLOCK_MONOTONIC) + (hold > 100 * MS ? hold : 100 * MS));
	src = source();
	if (strcmp(src, "kernel") != 0) {
		printf("FAIL: source %s with an UNRELIABLE VMClock (want kernel, the next one here)\n", src);
		ok = 0;
	}
	report("steady", &steady);
	report("migration", &migration);
	report("recalibrated", &recal);
	if (steady.outside || migration.outside || recal.outside)
		ok = 0;
	printf("%s\n", ok ? "held" : "FAILED");
	return ok ? 0 : 1;
}
