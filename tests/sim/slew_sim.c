/*
 * A kernel clock slewed as chronyd drives it (mlichvar/chrony 8f2db83: sys_generic.c update_slew /
 * handle_end_of_slew, sys_linux.c set_frequency's tick + freq quantisation), a chronyd tracking stream with
 * errors inside its claimed root distance, a reference that steps +30 ms and back; fc__slew_eval judged at
 * every read (true UTC inside [earliest, latest]) and its half-width set against ClockBound's formula
 * (|correction| + root delay / 2 + root dispersion + 15 ppm since its chronyd read) at the same instants.
 *
 * Deterministic (fixed seed); exit 1 on any miss, or when our median or p99 half-width is not below
 * ClockBound's in a phase (the latter only when the caller re-asks chronyd as soon as the kernel's rate
 * changes, argument 3 = 1, the default; with 0 it asks once a second and only misses fail).
 * Usage: fc_slew_sim [seconds] [seed] [re-ask on a rate change: 1|0] [x: chronyd -x, the kernel left alone]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bound/slew.h"

#define HZ 100
#define NOMINAL_TICK 10000
#define MAX_FREQ_PPM 100000.0 /* sys_linux.c: 1e6 * max_tick_bias / nominal_tick */
#define STEP_S 1e-3           /* the simulation's time step (true time); chronyd's timers fire on it */
#define POLL_S 8.0            /* chronyd's update interval (poll 3) */
#define ASK_S 1.0             /* our request to chronyd (the writer's chronyd poll) */
#define READ_EVERY 10         /* a read every 10 steps: 10 ms */
#define CB_DRIFT_PPM 15.0     /* clock-bound-d's default --max-drift-rate */
#define EPOCH 1000.0          /* REALTIME in the readings = RT + EPOCH (s) */

static uint64_t rng = 88172645463325252ull;
static double uni(void) /* xorshift64*, [0, 1) */
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (double)((rng * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}
static double gauss(void)
{
	double u = uni() + 1e-12, v = uni();
	return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/* the machine */
static double T, RT, ref_off;     /* true time, kernel REALTIME (s), the reference's step */
static const double base_true = 12.5; /* ppm the hardware runs fast: chronyd's exact base frequency */
static long k_freq, k_tick = NOMINAL_TICK;

/* chronyd (sys_generic.c state) */
static double base, O, slew_freq, slew_start, slew_end, corr_rate, last_offset, t_update, disp0;
static const double rms = 30e-6, skew = 0.1, resid = 0.01, root_delay = 300e-6;

static double rate(void) /* dRT/dT: the kernel's total frequency against the hardware's, plus wander */
{
	double total = HZ * (double)(NOMINAL_TICK - k_tick) - (double)k_freq / 65536.0;
	return (1 - total * 1e-6) / (1 - base_true * 1e-6) * (1 + 0.02e-6 * sin(T / 50));
}

static double set_frequency(double f) /* sys_linux.c set_frequency: returns what the kernel runs */
{
	int dt = (int)lround(f / HZ);
	double req = -(f - HZ * dt);
	k_freq = (long)(req * 65536.0);
	k_tick = NOMINAL_TICK - dt;
	return HZ * dt - (double)k_freq / 65536.0;
}

static void update_slew(void) /* sys_generic.c update_slew, excess-duration terms left out */
{
	double duration, corr, total;
	O -= slew_freq * (RT - slew_start);
	if (fabs(O) < 1e-9)
		duration = 1e4;
	else {
		duration = corr_rate / fabs(O);
		if (duration < 1.0)
			duration = 1.0;
	}
	corr = O / duration;
	if (corr > 1.0 / 12)
		corr = 1.0 / 12;
	if (corr < -1.0 / 12)
		corr = -1.0 / 12;
	total = base + corr * (1e6 - base);
	total = total > MAX_FREQ_PPM ? MAX_FREQ_PPM : total < -MAX_FREQ_PPM ? -MAX_FREQ_PPM : total;
	total = set_frequency(total);
	slew_freq = (total - base) / (1e6 - total);
	if (fabs(O) < 1e-9 || O * slew_freq <= 0)
		duration = 1e4;
	else {
		duration = O / slew_freq;
		duration = duration < 1 ? 1 : duration > 1e4 ? 1e4 : duration;
	}
	slew_start = RT;
	slew_end = RT + duration;
}

static int nullx; /* chronyd -x: sys_null.c, the kernel is never touched */
static double null_rt0;

static double correction(double rt) /* offset_convert: true-time estimate - REALTIME */
{
	if (nullx) /* sys_null.c offset_convert: -freq x (raw - last update) - offset register */
		return -1e-6 * base * (rt - null_rt0) - O;
	return slew_freq * (rt - slew_start) - O;
}

static void chronyd_update(void) /* reference.c: a new estimate, offset accrued, frequency set */
{
	double err = gauss() * rms, old;
	if (err > 4 * rms)
		err = 4 * rms;
	if (err < -4 * rms)
		err = -4 * rms;
	O -= slew_freq * (RT - slew_start);
	slew_start = RT;
	old = O;
	O = RT - (T + ref_off + err); /* chronyd's new estimate of true time is off by err */
	last_offset = O - old;
	base = base_true + (uni() - 0.5) * skew; /* within the skew chronyd reports */
	corr_rate = 3.0 * 0.5 * rms * POLL_S;    /* reference.c: correction_time_ratio * 0.5 * offset_sd * interval */
	t_update = T;
	disp0 = 20e-6 + 4 * rms;                 /* covers err; then grows as chronyd's does */
	if (nullx) {
		null_rt0 = RT;
		slew_freq = 0;
		return;
	}
	update_slew();
}

static struct fc_slew_kernel kread(void)
{
	struct fc_slew_kernel k = {0};
	k.rt_ns = (int64_t)((RT + EPOCH) * 1e9);
	k.mono_lo = k.rt_ns - 1000000000000LL - 20;
	k.mono_hi = k.rt_ns - 1000000000000LL + 20;
	k.freq = k_freq;
	k.tick = k_tick;
	return k;
}

enum { STEADY, UP, BACK, NPH };
static const char *phname[NPH] = {"steady", "+30 ms, 1.2 s", "-30 ms, 1.2 s"};
static double *ours[NPH], *cbs[NPH];
static long nph[NPH];

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}
static double pct(double *v, long n, double p)
{
	return v[(long)(p * (double)(n - 1))];
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 600, next_update = 0, next_ask = 0.5;
	long steps, misses = 0, cb_misses = 0, today_misses = 0, unseen = 0, nupd = 0, reply_upd = 0, status_n[5] = {0}, reads = 0;
	int have = 0, fail = 0, ask_at_once = 1, worst_st = 0;
	struct fc_slew_in in = {0};
	struct fc_slew_out out;
	double up_at = seconds / 3, back_at = 2 * seconds / 3, worst = 0, worst_t = 0, seen_at = -10;

	if (argc > 2)
		rng = strtoull(argv[2], NULL, 0) | 1;
	if (argc > 3)
		ask_at_once = atoi(argv[3]);
	if (argc > 4)
		nullx = argv[4][0] == 'x';
	steps = (long)(seconds / STEP_S);
	for (int p = 0; p < NPH; p++) {
		ours[p] = calloc((size_t)steps / READ_EVERY + 1, sizeof(double));
		cbs[p] = calloc((size_t)steps / READ_EVERY + 1, sizeof(double));
	}
	T = 0;
	RT = 0.002; /* 2 ms off at the start */
	base = base_true;
	set_frequency(base);
	in.hz = HZ;
	for (long i = 0; i < steps; i++) {
		/* chronyd: updates every POLL_S; the reference steps at an update (chronyd sees it there: before its
		 * first measurement after a step no tracking-based bound can know, that is the newest-measurement
		 * check's business); its end-of-slew timer fires 0-3 ms late */
		if (T >= next_update) {
			if (T >= up_at && ref_off == 0 && T < back_at) {
				ref_off = 0.030;
				seen_at = T;
			}
			if (T >= back_at && ref_off != 0) {
				ref_off = 0;
				seen_at = T;
			}
			chronyd_update();
			nupd++;
			next_update += POLL_S;
		} else if (!nullx && RT >= slew_end + uni() * 3e-3) {
			update_slew();
		}
		/* our request: adjtimex before sending, chronyd answers 50-200 us later, the reply lands 30 us after */
		if (T >= next_ask) {
			double u = 50e-6 + uni() * 150e-6, rt_c = RT + rate() * u, disp;
			in.at_req = kread();
			disp = disp0 + (T + u - t_update) * (1 + skew + resid) * 1e-6; /* reference.c get_root_dispersion */
			in.t = (struct fc_slew_tracking){correction(rt_c), last_offset, rms, base, resid, skew,
							 root_delay, disp, 0};
			in.reply_rt_ns = (int64_t)((RT + EPOCH + rate() * (u + 30e-6)) * 1e9) + 1;
			have = 1;
			reply_upd = nupd;
			next_ask += ASK_S;
		}
		T += STEP_S;
		RT += STEP_S * rate();
		if (have && i % READ_EVERY == 5) {
			double truth, c, half, cb;
			int ph = T < seen_at + 1.2 ? (ref_off != 0 ? UP : BACK) : STEADY; /* chronyd's 1 s slew of it */
			in.now = kread();
			if (in.now.rt_ns < in.reply_rt_ns)
				continue;
			fc__slew_eval(&in, &out);
			truth = (T + ref_off - RT) * 1e9 + ((RT + EPOCH) * 1e9 - (double)in.now.rt_ns); /* true UTC - REALTIME read */
			c = in.t.correction;
			cb = (fabs(c) + in.t.root_delay / 2 + in.t.root_dispersion +
			      CB_DRIFT_PPM * 1e-6 * (double)(in.now.rt_ns - in.reply_rt_ns) / 1e9) * 1e9;
			cb_misses += fabs(truth) > cb;
			{ /* today's chrony.c interval ([0, c] + root distance) from the same reply, for the record */
				struct fc_slew_out td;
				fc__slew_fallback(&in.t, in.now.rt_ns - in.at_req.rt_ns, &td);
				today_misses += fabs(truth - (double)td.center_ns) > (double)td.half_ns;
			}
			status_n[out.status]++;
			reads++;
			/* the caller asks chronyd again at once when the kernel's rate has changed since its reply */
			if (ask_at_once && out.status != FC_SLEW_TRACKED && next_ask > T)
				next_ask = T;
			if (out.status == FC_SLEW_DISAGREE)
				continue; /* not a claim: the caller reports UNKNOWN */
			half = (double)out.half_ns;
			if (getenv("SLEW_TRACE") && T >= atof(getenv("SLEW_TRACE")) && T < atof(getenv("SLEW_TRACE")) + 3)
				printf("trace t=%.3f status %d half %.1f us cb %.1f us c %.1f us truth %.1f us centre %.1f us\n", T,
				       out.status, half / 1e3, cb / 1e3, c * 1e6, truth / 1e3, (double)out.center_ns / 1e3);
			if (nullx && reply_upd != nupd && fabs(truth - (double)out.center_ns) > half) {
				/* chronyd -x leaves the kernel alone: an update after our reply is invisible until the next
				 * one (chronyd's newest measurement is the chrony source's way to see it) */
				unseen++;
			} else if (fabs(truth - (double)out.center_ns) > half) {
				if (misses < 10)
					printf("MISS t=%.3f status %d (%s): truth %.0f ns, centre %lld half %lld\n", T, out.status,
					       out.why, truth, (long long)out.center_ns, (long long)out.half_ns);
				misses++;
			} else if (fabs(truth - (double)out.center_ns) / half > worst)
				worst = fabs(truth - (double)out.center_ns) / half, worst_t = T, worst_st = out.status;
			if (T >= 60 && nph[ph] < steps / READ_EVERY) {
				ours[ph][nph[ph]] = half;
				cbs[ph][nph[ph]] = cb;
				nph[ph]++;
			}
		}
	}
	printf("fc_slew_sim: %.0f s, %ld reads, misses %ld (ClockBound's formula: %ld, today's [0, c]: %ld), closest "
	       "|err|/half %.3f (t %.2f s, status %d); "
	       "tracked %ld, ended %ld, updated %ld, fallback %ld, disagree (UNKNOWN) %ld\n",
	       seconds, reads, misses, cb_misses, today_misses, worst, worst_t, worst_st, status_n[0], status_n[1], status_n[2], status_n[3],
	       status_n[4]);
	if (nullx)
		printf("chronyd -x: %ld reads outside while the reply held predated chronyd's update (not judged)\n", unseen);
	printf("%-18s %7s %12s %12s %12s %12s %8s %8s\n", "phase", "reads", "ours p50", "CB p50", "ours p99", "CB p99",
	       "p50 x", "p99 x");
	for (int p = 0; p < NPH; p++) {
		double o50, c50, o99, c99;
		if (nph[p] == 0) {
			printf("%-18s no reads\n", phname[p]);
			fail = 1;
			continue;
		}
		qsort(ours[p], (size_t)nph[p], sizeof(double), cmp);
		qsort(cbs[p], (size_t)nph[p], sizeof(double), cmp);
		o50 = pct(ours[p], nph[p], 0.5);
		c50 = pct(cbs[p], nph[p], 0.5);
		o99 = pct(ours[p], nph[p], 0.99);
		c99 = pct(cbs[p], nph[p], 0.99);
		printf("%-18s %7ld %9.1f us %9.1f us %9.1f us %9.1f us %8.3f %8.3f\n", phname[p], nph[p], o50 / 1e3,
		       c50 / 1e3, o99 / 1e3, c99 / 1e3, o50 / c50, o99 / c99);
		if (ask_at_once && (!(o50 < c50) || !(o99 < c99)))
			fail = 1;
	}
	if (misses) {
		printf("FAIL: %ld reads with true UTC outside the interval\n", misses);
		fail = 1;
	}
	for (int p = 0; p < NPH; p++) {
		free(ours[p]);
		free(cbs[p]);
	}
	return fail;
}
