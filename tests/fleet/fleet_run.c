/*
 * fastclock fleet tests — scenarios against the real engines.
 *
 * Scenario (one line each): the reference is CLOCK_REALTIME + offset (+50 ms, noise +-20 us) fed to chronyd -x
 * through an SHM refclock; chronyd's tracking (and ClockBound's segment, written by clock-bound-d from that
 * chronyd) yield intervals; every sample checks that [earliest, latest] contains the reference's time
 * (CLOCK_REALTIME + offset at that instant) whenever the status is not UNKNOWN.
 *   chrony-steady S     S seconds of steady tracking
 *   chrony-step S       +50 ms -> +80 ms after 3 s; the interval holds or stops claiming
 *   chrony-restart S    chronyd killed after 3 s, restarted 4 s later
 * Usage: fleet_run SCENARIO SECONDS TMPDIR. Exit 0: held; 1: a sample outside; 77: engines unavailable.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../src/bound/bound.h"
#include "engines.h"

#define SKIP 77
#define MS 1000000LL
#define SEC 1000000000LL

struct tally {
	uint64_t n, outside, unknown, synced;
	int64_t min_margin, max_half, min_half;
	double sum_half;
};

static void tally_add(struct tally *t, int64_t lo, int64_t hi, int64_t truth, int status)
{
	int64_t margin = truth - lo < hi - truth ? truth - lo : hi - truth, half = (hi - lo) / 2;
	t->n++;
	if (status == FC_SYNC_UNKNOWN) {
		t->unknown++;
		return;
	}
	t->synced += status == FC_SYNC_SYNCHRONIZED;
	if (margin < 0)
		t->outside++;
	if (t->n == 1 || margin < t->min_margin)
		t->min_margin = margin;
	if (half > t->max_half)
		t->max_half = half;
	if (t->min_half == 0 || half < t->min_half)
		t->min_half = half;
	t->sum_half += (double)half;
}

static void tally_print(const char *name, const struct tally *t)
{
	uint64_t k = t->n - t->unknown;
	printf("%-12s samples %llu claimed %llu (synchronized %llu) outside %llu  min margin %.3f us  half-width "
	       "min %.3f mean %.3f max %.3f us\n",
	       name, (unsigned long long)t->n, (unsigned long long)k, (unsigned long long)t->synced,
	       (unsigned long long)t->outside, t->min_margin / 1e3, t->min_half / 1e3, k ? t->sum_half / (double)k / 1e3 : 0,
	       t->max_half / 1e3);
}

static struct feeder feed = {.offset_ns = 50 * MS, .noise_ns = 20000};
static struct fc_bounder chrony_bd;

static void poll_and_check(struct fc_bounder *bd, struct tally *t, int verbose)
{
	int64_t mono = now_ns(CLOCK_MONOTONIC), coarse = now_ns(CLOCK_MONOTONIC_COARSE);
	const struct fc_bound *b = fc_bounder_poll(bd, mono, coarse);
	int64_t real = now_ns(CLOCK_REALTIME), half = fc_bound_half_at(b, now_ns(CLOCK_MONOTONIC));
	int64_t truth = real + feed.offset_ns;
	static int64_t last_print;
	tally_add(t, real + b->center_ns - half, real + b->center_ns + half, truth, b->status);
	if (verbose && mono - last_print >= SEC) {
		last_print = mono;
		fprintf(stderr, "t %.1f status %s center %.3f ms half %.3f ms truth-real %.3f ms  %s | %s\n", mono / 1e9,
			fc_sync_name(b->status), b->center_ns / 1e6, half / 1e6, feed.offset_ns / 1e6, b->reason,
			b->last_error);
	}
}

static int wait_synced(struct fc_bounder *bd, int64_t limit_ns)
{
	int64_t end = now_ns(CLOCK_MONOTONIC) + limit_ns;
	while (now_ns(CLOCK_MONOTONIC) < end) {
		const struct fc_bound *b = fc_bounder_poll(bd, now_ns(CLOCK_MONOTONIC), now_ns(CLOCK_MONOTONIC_COARSE));
		if (b->status == FC_SYNC_SYNCHRONIZED)
			return 0;
		usleep(20000);
	}
	return -1;
}

/* Sample until `until` (CLOCK_MONOTONIC) at ~1 sample per 10 us. */
static void run_until(struct fc_bounder *bd, struct tally *t, int64_t until, int verbose)
{
	while (now_ns(CLOCK_MONOTONIC) < until) {
		poll_and_check(bd, t, verbose);
		for (volatile int i = 0; i < 200; i++) {
		}
	}
}

int main(int argc, char **argv)
{
	const char *scen, *tmp;
	char sock[512];
	double secs;
	int verbose = getenv("FLEET_VERBOSE") != NULL;
	struct fc_bound_config cfg;
	struct tally t = {0};
	char err[200];
	pid_t chronyd;
	int64_t start;

	if (argc != 4) {
		fprintf(stderr, "usage: fleet_run SCENARIO SECONDS TMPDIR\n");
		return 2;
	}
	scen = argv[1], secs = atof(argv[2]), tmp = argv[3];
	if (geteuid() != 0) {
		printf("SKIP: the engines need root (namespaces, chronyd)\n");
		return SKIP;
	}
	if (access("/usr/sbin/chronyd", X_OK) != 0) {
		printf("SKIP: /usr/sbin/chronyd not installed (scripts/setup.sh installs chrony)\n");
		return SKIP;
	}
	if (engines_unshare(tmp) != 0)
		return SKIP;
	snprintf(sock, sizeof(sock), "/run/chrony/chronyd.sock");
	if (feeder_start(&feed) != 0)
		return 1;
	chronyd = chronyd_start(tmp, sock);
	fc_bound_config_parse("chrony", NULL, sock, "/nonexistent", &cfg, err, sizeof(err));
	usleep(300000);
	fc_bounder_init(&chrony_bd, &cfg, now_ns(CLOCK_MONOTONIC));
	if (wait_synced(&chrony_bd, 30 * SEC) != 0) {
		printf("FAIL: chronyd not synchronised in 30 s: %s | %s\n", chrony_bd.cur.reason, chrony_bd.cur.last_error);
		engine_stop(chronyd);
		feeder_stop(&feed);
		return 1;
	}
	start = now_ns(CLOCK_MONOTONIC);
	if (strcmp(scen, "chrony-steady") == 0) {
		run_until(&chrony_bd, &t, start + (int64_t)(secs * SEC), verbose);
	} else if (strcmp(scen, "chrony-step") == 0) {
		run_until(&chrony_bd, &t, start + 3 * SEC, verbose);
		feed.offset_ns = 80 * MS;
		run_until(&chrony_bd, &t, start + (int64_t)(secs * SEC), verbose);
	} else if (strcmp(scen, "chrony-restart") == 0) {
		run_until(&chrony_bd, &t, start + 3 * SEC, verbose);
		engine_stop(chronyd);
		run_until(&chrony_bd, &t, start + 7 * SEC, verbose);
		chronyd = chronyd_start(tmp, sock);
		run_until(&chrony_bd, &t, start + (int64_t)(secs * SEC), verbose);
	} else {
		fprintf(stderr, "unknown scenario %s\n", scen);
		engine_stop(chronyd);
		feeder_stop(&feed);
		return 2;
	}
	engine_stop(chronyd);
	feeder_stop(&feed);
	fc_bounder_close(&chrony_bd);
	tally_print(scen, &t);
	return t.outside ? 1 : 0;
}
