// The scenario table. Each entry says in one line what the counter and the kernel do; its setup schedules
// that on the simulated machine, for one reader variant (ordered or relaxed reads, arriving every ~1 us or
// every ~50 ms; or once an hour). Times: `u` is 1 ms for frequent readers and 100 ms for rare ones, so a
// rare reader sees the same faults with tens of reads between them.
#include <sys/timex.h>

#include <cmath>
#include <memory>

#include "sim.h"

namespace sim {

namespace {
constexpr long double US = 1e3L, MS = 1e6L, S = 1e9L, HOUR = 3600 * S;
constexpr long double P = 1e6L;                 // the default re-anchor period
constexpr long double ONE_HAND = P + P / 8 + 5 * US; // a fault no sample can see yet: until the next re-anchor

long double unit(const Run &r) { return r.var.rare() ? 100 * MS : MS; }

// A fault the tracker cannot see before the next re-anchor, on one clock or both.
void blind(Run &r, long double mono, long double real)
{
	r.last().blind_mono = mono;
	r.last().blind_real = real;
}

std::vector<Scenario> make()
{
	std::vector<Scenario> v;

	v.push_back({"steady", "quiet machine: 3 GHz counter, kernel without slew; the baseline",
		     [](Run &r) { r.duration = 100 * unit(r); }, Targets{}});

	{
		Targets t;
		t.max_mono = t.max_real = 1000;
		t.reconv = 10 * MS;
		v.push_back({"slew_500ppm",
			     "kernel rate +500 ppm, 0, -500 ppm, 0 (one 500 ppm change at a time); physics: a change D is "
			     "invisible until the next re-anchor and costs up to D x P = 500 ns; the bound learns its size "
			     "one period later",
			     [](Run &r) {
				     long double u = unit(r);
				     const long double ppm[] = {500, 0, -500, 0};
				     for (int i = 0; i < 4; i++) {
					     long double p = ppm[i];
					     r.at((20 + 40 * i) * u + (0.1L + 0.25L * i) * P, "kernel rate change",
						  [p](Run &) { M.set_kernel_ppm(p); });
					     // Unseen until the next re-anchor; its size is known one period later.
					     blind(r, 2 * ONE_HAND, 2 * ONE_HAND);
				     }
				     r.duration = 180 * u;
			     },
			     t});
	}
	{
		Targets t;
		t.max_mono = t.max_real = 100000;
		t.reconv = 10 * MS;
		t.reconv_reads = 2; // a rare reader confirms the new rate at its second read after the change
		v.push_back({"slew_chrony",
			     "chrony fast slew: kernel rate +50000 ppm (50 ms/s) for 0.2 s, then back; physics: up to "
			     "D x P = 50 us before a re-anchor sees each change, and one more re-anchor (a rare reader's "
			     "next read) to confirm the rate",
			     [](Run &r) {
				     long double u = unit(r);
				     r.at(20 * u, "slew starts", [](Run &) { M.set_kernel_ppm(50000); });
				     r.last().dur = 200 * MS;
				     blind(r, 2 * ONE_HAND, 2 * ONE_HAND);
				     r.at(20 * u + 200 * MS, "slew ends", [](Run &) { M.set_kernel_ppm(0); });
				     blind(r, 2 * ONE_HAND, 2 * ONE_HAND);
				     r.duration = 20 * u + 200 * MS + 60 * u;
			     },
			     t});
	}
	v.push_back({"wander",
		     "counter frequency random-walks at 1 ppm/sqrt(s) (steps every 1 ms / 10 ms); kernel steady",
		     [](Run &r) {
			     long double step = r.var.rare() ? 10 * MS : MS;
			     r.duration = r.var.rare() ? 60 * S : 300 * MS;
			     auto ppm = std::make_shared<double>(0);
			     double sigma = 1.0 * std::sqrt((double)(step / S));
			     for (long double t = step; t < r.duration; t += step)
				     r.at(t, "counter rate step", [ppm, sigma](Run &) {
					     *ppm += sigma * M.rng.normal();
					     M.set_counter_ppm(*ppm);
				     }, false);
		     },
		     Targets{}});

	auto wall_steps = [](Run &r, bool notify) {
		long double u = unit(r);
		const long double steps[] = {S, -S, HOUR, -HOUR};
		for (int i = 0; i < 4; i++) {
			long double d = steps[i];
			long double at = (20 + 20 * i) * u + (0.05L + 0.3L * i) * P; // early, mid and late in a period
			r.at(at, "settimeofday", [d](Run &) { M.wall_off += (int64_t)d; });
			blind(r, 0, notify ? 100 * US : ONE_HAND);
			// forward, and more than a tick: fc_real_bounded sees it in the kernel's coarse clock at once
			r.last().bounded_sees = d > M.tick_ns;
			if (notify) // the updater's CANCEL_ON_SET timerfd wakes it ~30 us later
				r.at(at + 30 * US, "step notifier", [](Run &r2) { r2.step_notifier(); }, false);
		}
		r.duration = 100 * u;
	};
	{
		Targets t;
		t.max_mono = 25;
		t.reconv = 1 * MS;
		v.push_back({"wall_step",
			     "settimeofday +1 s, -1 s, +1 h, -1 h; no notifier: the wall clock follows at the next re-anchor "
			     "(within one period), the monotonic clock does not move",
			     [wall_steps](Run &r) { wall_steps(r, false); }, t});
		t.reconv = 100 * US;
		v.push_back({"wall_step_notify",
			     "as wall_step, with the updater thread running and its step notifier (CANCEL_ON_SET timerfd) "
			     "waking it 30 us after each step",
			     [wall_steps](Run &r) {
				     r.updater = true;
				     wall_steps(r, true);
			     },
			     t});
	}
	{
		Targets t;
		t.max_mono = 25;
		t.reconv = 1 * MS;
		v.push_back({"leap_second",
			     "CLOCK_REALTIME inserts a leap second (steps back 1 s, STA_INS) and later deletes one (+1 s, "
			     "STA_DEL); no notifier; CLOCK_MONOTONIC unaffected",
			     [](Run &r) {
				     long double u = unit(r);
				     M.ntp_status = STA_INS;
				     r.at(30 * u + 0.07L * P, "leap second inserted", [](Run &) {
					     M.wall_off -= (int64_t)S;
					     M.ntp_status = STA_DEL;
				     });
				     blind(r, 0, ONE_HAND);
				     r.at(70 * u + 0.61L * P, "leap second deleted", [](Run &) {
					     M.wall_off += (int64_t)S;
					     M.ntp_status = 0;
				     });
				     blind(r, 0, ONE_HAND);
				     r.duration = 100 * u;
			     },
			     t});
	}
	{
		Targets t;
		// After a counter jump the new hand starts no lower than what readers can have got on the old one:
		// the kernel's elapsed time since its anchor (up to P + P/8) at the largest kernel rate change
		// between re-anchors (1/500, REACH_TOL_DIV in src/track.c) above the kernel: up to 2.25 us.
		t.first_read = t.first_read_real = 1000 + (P + P / 8) / 500;
		t.reconv = 1 * MS;
		v.push_back({"suspend_counter_runs",
			     "system suspended 1 h: the counter keeps running, CLOCK_MONOTONIC stops, CLOCK_REALTIME "
			     "jumps +1 h at resume",
			     [](Run &r) {
				     long double u = unit(r);
				     r.at(30 * u + 0.93L * P, "suspend 1 h", [](Run &) {
					     M.stop_kernel(true);
					     M.t += HOUR;
					     M.stop_kernel(false);
					     M.wall_off += (int64_t)HOUR;
					     M.boot_off += (int64_t)HOUR; // CLOCK_BOOTTIME counts the suspend
				     });
				     r.last().dur = HOUR;
				     r.last().first_read = true;
				     r.duration = 60 * u + HOUR;
			     },
			     t});
		t.first_read_real = -1;
		// A suspend whose counter stops with CLOCK_MONOTONIC: the kernel's wall clock jumps at the resume, and
		// its coarse clock with it. Plain reads see nothing changed: CLOCK_REALTIME follows at the next
		// re-anchor (or the notifier's wake-up). A bounded real read sees the coarse clock past its hand and
		// re-anchors: never SYNCHRONIZED 10 h off.
		auto suspend_stopped = [](Run &r, bool notify) {
			long double u = unit(r);
			const long double at = 30 * u + 0.37L * P, d = 10 * HOUR;
			r.at(at, "suspend 10 h", [d, notify](Run &r2) {
				M.stop_kernel(true);
				M.stop_counter(true);
				M.t += d;
				M.stop_kernel(false);
				M.stop_counter(false);
				M.wall_off += (int64_t)d;
				M.boot_off += (int64_t)d;
				if (notify) // its sleep is on CLOCK_MONOTONIC, which stood still
					r2.pause_updater(d);
			});
			r.last().dur = d;
			r.last().first_read = true;
			blind(r, 0, d + (notify ? 40 * US : ONE_HAND));
			r.last().bounded_sees = true;
			if (notify) { // CANCEL_ON_SET fires on the resume: the updater wakes ~30 us later
				r.updater = true;
				r.at(at + d + 30 * US, "step notifier", [](Run &r2) { r2.step_notifier(); }, false);
			}
			r.duration = 60 * u + d;
		};
		v.push_back({"suspend_counter_stops",
			     "system suspended 10 h: the counter and CLOCK_MONOTONIC stop, CLOCK_REALTIME jumps +10 h; no "
			     "notifier: plain reads see nothing changed, so the wall clock follows at the next re-anchor; "
			     "bounded reads see the kernel's coarse clock ahead and re-anchor",
			     [suspend_stopped](Run &r) { suspend_stopped(r, false); }, t});
		// The tracker re-converges on its own time after the discontinuity (DISRUPTED meanwhile, its bound
		// holding): the resume's first bounded read re-anchors and the notifier again 30 us later, and a
		// history restarted on that short baseline takes a few periods (up to ~190 ns off, DISRUPTED).
		t.reconv = 3 * MS;
		t.off_max = 1000; // only the reads before the notifier's re-anchor, 30 us after the resume
		v.push_back({"suspend_counter_stops_notify",
			     "as suspend_counter_stops, with the updater thread running and its step notifier "
			     "(CANCEL_ON_SET timerfd, which fires on a resume) waking it 30 us after the resume",
			     [suspend_stopped](Run &r) { suspend_stopped(r, true); }, t});
	}
	{
		Targets t;
		t.first_read = t.first_read_real = 1000 + (P + P / 8) / 500; // as suspend_counter_runs
		t.reconv = 1 * MS;
		v.push_back({"migrate_jump",
			     "VM migration: counter jumps +250 ms, -250 ms, +10 s, -10 s (past the hand's window: the "
			     "first read re-anchors); kernel steady",
			     [](Run &r) {
				     long double u = unit(r);
				     const long double j[] = {0.25L * S, -0.25L * S, 10 * S, -10 * S};
				     for (int i = 0; i < 4; i++) {
					     long double ticks = j[i] * 3;
					     r.at((20 + 20 * i) * u + 0.41L * P, "counter jump",
						  [ticks](Run &) { M.jump_counter(ticks); });
					     r.last().first_read = true;
				     }
				     r.duration = 100 * u;
			     },
			     t});
	}
	{
		Targets t;
		// J, plus the dominance rule: readers losing the re-anchor race may use the old hand up to P + P/8,
		// so the new line, 1/16 slower, must start P/8 x 1/16 = 7.8 us above the old one's continuation.
		t.max_mono = t.max_real = 100000 + 7813 + 1000;
		t.reconv = 10 * MS;
		v.push_back({"migrate_small_jump",
			     "counter jumps +100 us: it lands inside the hand's validity window, so reads return +100 us at "
			     "once (physics); the tracker slews it out at 1/16 without going back (+7.8 us dominance)",
			     [](Run &r) {
				     long double u = unit(r);
				     r.at(20 * u + 0.21L * P, "counter jump +100 us", [](Run &) { M.jump_counter(3 * 100 * US); });
				     blind(r, 2 * MS, 2 * MS);
				     r.duration = 60 * u;
			     },
			     t});
	}
	{
		Targets t;
		t.max_mono = t.max_real = 20000 + 1000; // D x P twice: one period unseen, one to confirm the rate
		t.reconv = 10 * MS;
		t.reconv_reads = 2;
		t.first_read = t.first_read_real = 1000; // the jump: re-anchored at the kernel by the first read
		v.push_back({"migrate_rate",
			     "VM migration to hosts whose counter runs +1 %, then nominal, -1 %, nominal, then a jump of "
			     "+1 s with +1 %; kernel steady; physics: D x P = 10 us per period before the rate is confirmed",
			     [](Run &r) {
				     long double u = unit(r);
				     const long double f[] = {1.01L, 1 / 1.01L, 0.99L, 1 / 0.99L};
				     for (int i = 0; i < 4; i++) {
					     long double x = f[i];
					     r.at((20 + 30 * i) * u + 0.3L * P, "counter rate change",
						  [x](Run &) { M.scale_counter_rate(x); });
					     blind(r, 2 * ONE_HAND, 2 * ONE_HAND);
				     }
				     r.at(140 * u + 0.41L * P, "counter jump +1 s and rate +1 %", [](Run &) {
					     M.jump_counter(3 * S);
					     M.scale_counter_rate(1.01L);
				     });
				     r.last().first_read = true;
				     blind(r, 2 * ONE_HAND, 2 * ONE_HAND);
				     r.duration = 170 * u;
			     },
			     t});
	}
	{
		Targets t;
		t.steady = 25 + 500 / 3.0; // a read behind its hand's anchor is clamped to it: off by its lag, <= 167 ns
		v.push_back({"cross_core_skew",
			     "1 counter read in 50 comes from a core whose counter lags 100-500 ticks (reads of one thread "
			     "are 200 ns apart, so a lagging read is behind the writer's reads, never the thread's own); "
			     "one behind its hand's anchor is clamped to it, so it is off by its lag (<= 167 ns)",
			     [](Run &r) {
				     M.skew_p = 0.02;
				     M.skew_lo = 100;
				     M.skew_hi = 500;
				     r.read_spacing = 200;
				     r.duration = 100 * unit(r);
			     },
			     t});
	}
	v.push_back({"wrap64",
		     "64-bit counter that wraps at 2^64 (a TSC set near the top, or reset late in a VM), first wrap 2 ms "
		     "in; rare readers also pause 1 s across it",
		     [](Run &r) {
			     M.c0 = 18446744073709551616.0L - 2 * MS * 3;
			     if (r.var.rare()) {
				     r.at(1 * MS, "reader pauses", [](Run &r2) { r2.pause_reader(1 * S); }, false);
				     r.duration = 3 * S;
			     } else {
				     r.duration = 60 * MS;
			     }
		     },
		     Targets{}});
	// Counter frequencies other than a 3 GHz TSC: arm64's CNTFRQ is commonly 25 MHz (some SoCs 1 MHz; a
	// 1 GHz counter is mandated from Armv8.6), and a fast TSC runs at 5 GHz. One tick is then 40 ns or 1 us:
	// the bracket and the agreement are whole ticks, so the steady-state target scales with the tick.
	{
		const struct {
			const char *name;
			long double hz;
			double steady;
		} freqs[] = {{"counter_1mhz", 1e6L, 2100}, {"counter_25mhz", 25e6L, 105}, {"counter_5ghz", 5e9L, 25}};
		for (const auto &f : freqs) {
			Targets t;
			t.steady = f.steady;
			t.ratio = -1; // the bound / error ratio is about whole ticks here, not about tracking
			const long double hz = f.hz;
			v.push_back({f.name, "a counter of another frequency (see the comment above): steady tracking",
				     [hz](Run &r) {
					     M.hz = hz;
					     M.c_rate = hz / 1e9L;
					     // A relaxed read runs up to ~10 ns early (out-of-order execution): 30 ticks at
					     // 3 GHz, under one tick here.
					     M.relaxed_early_max = (int)(10 * hz / 1e9L);
					     r.duration = 100 * unit(r);
				     },
				     t});
		}
	}
	v.push_back({"wrap32",
		     "32-bit counter (wraps every 1.43 s at 3 GHz), first wrap 2 ms in; rare readers also pause 1 s, "
		     "1.3 s and 2 s (gaps near and past the wrap)",
		     [](Run &r) {
			     M.mask = 0xffffffffull;
			     M.c0 = 4294967296.0L * 256 - 2 * MS * 3;
			     if (r.var.rare()) {
				     const long double pause[] = {1 * S, 1.3L * S, 2 * S};
				     for (int i = 0; i < 3; i++) {
					     long double d = pause[i];
					     r.at((3 + 3 * i) * S, "reader pauses", [d](Run &r2) { r2.pause_reader(d); }, false);
				     }
				     r.duration = 14 * S;
			     } else {
				     r.duration = 60 * MS;
			     }
		     },
		     Targets{}});
	{
		// Fail closed: after the switch the (untrusted) counter is no longer read, so monotonic reads hold at
		// the largest value the last counter hand could have returned until the kernel passes it: at most
		// the validity window P + P/8 (1.125 ms) of standing still, once per demotion. Wall reads follow
		// the kernel at once.
		Targets t;
		t.first_read = P + P / 8;
		t.first_read_real = 1000;
		v.push_back({"kernel_fallback",
			     "the kernel stops trusting the counter mid-period: fc__windup_set_kernel_locked, then every "
			     "read is the kernel's clock, held at the last counter hand's largest value until the kernel passes it",
			     [](Run &r) {
				     long double u = unit(r);
				     r.at(30 * u + 0.2L * P, "clocksource demoted",
					  [](Run &r2) { r2.demote("sim: the kernel marked the counter unstable"); });
				     r.last().first_read = true;
				     r.duration = 60 * u;
			     },
			     t});
	}
	v.push_back({"noisy_kernel",
		     "5 % of kernel clock reads are preempted for 50-500 us (before or after reading the clock)",
		     [](Run &r) {
			     M.preempt_p = 0.05;
			     M.preempt_lo = 50 * US;
			     M.preempt_hi = 500 * US;
			     r.duration = 100 * unit(r);
		     },
		     Targets{}});
	v.push_back({"stalled_writer",
		     "a writer is descheduled 3 ms (and later 0.5 ms) between sampling and publishing, holding the "
		     "lock; generations start next to the wrap",
		     [](Run &r) {
			     long double u = unit(r);
			     r.at(20 * u + 0.5L * P, "writer stalls 3 ms", [](Run &r2) { r2.stall_writer(3 * MS); }, false);
			     r.at(50 * u + 0.5L * P, "writer stalls 0.5 ms", [](Run &r2) { r2.stall_writer(0.5L * MS); },
				  false);
			     r.duration = 80 * u;
		     },
		     Targets{}});
	{
		Targets t;
		t.max_mono = t.max_real = 1000;
		v.push_back({"hourly_reader",
			     "one read an hour for 8 h; meanwhile the kernel's rate moves +100 ppm and the counter's +3 ppm",
			     [](Run &r) {
				     r.at(2.5L * HOUR, "kernel rate +100 ppm", [](Run &) { M.set_kernel_ppm(100); }, false);
				     r.at(4.5L * HOUR, "counter rate +3 ppm", [](Run &) { M.set_counter_ppm(3); }, false);
				     r.duration = 8 * HOUR;
			     },
			     t, true});
	}
	// fc_set_period_ns between 1 us and 1 s while readers come and go (8 threads on a real machine): a rate
	// history filled at a 1 us period spans 8 us, and the next sample may come milliseconds or a second later.
	// No step: no discontinuity. The same with counter jumps (a step of 50 us after 20 ms of idle readers,
	// 5 ms after 1.2 s): each is one. Only the discontinuity count and monotonicity are judged here.
	auto period_changes = [](Run &r, bool steps) {
		static const int64_t periods[] = {1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};
		static const long double idle[] = {20 * US, 300 * US, 3 * MS, 10 * MS, 30 * MS, 300 * MS, 1200 * MS};
		auto set_period = [](int64_t p) {
			return [p](Run &) {
				fc__windup_lock(&SIM_CLOCK);
				fc__windup_set_period_locked(&SIM_CLOCK, p);
				fc__windup_unlock(&SIM_CLOCK);
			};
		};
		// Noisier brackets than the default machine's: the kernel reads its clock anywhere in its call.
		M.kernel_frac_lo = 0.05;
		M.kernel_frac_hi = 0.95;
		r.period_ns = 1000;
		long double t = 0;
		for (int i = 0; i < 42; i++) {
			int64_t p = periods[(i * 5 + i / 7) % 7];
			long double g = idle[(i * 3 + i / 7) % 7], jump = 0;
			if (steps && i == 10)
				g = 20 * MS, jump = 50 * US, p = 1000; // a history 8 re-anchors at 1 us long
			if (steps && i == 20)
				g = 1200 * MS, jump = 5 * MS, p = 1000;
			// A hand made at a 1 s period stays until it is stale: before a jump, re-anchor at once (as the
			// updater thread does), so the history is 1 us periods when the readers go idle.
			if (jump > 0)
				r.at(t, "re-anchor", [](Run &r2) { r2.notify_step(); }, false);
			t += 300 * US; // readers at a 1 us period
			r.at(t, "period changed, readers idle", [set_period, p, g](Run &r2) {
				set_period(p)(r2);
				r2.pause_reader(g);
			}, false);
			if (jump > 0)
				r.at(t + g / 2, "counter jump", [jump](Run &) { M.jump_counter(3 * jump); }, false);
			t += g + 300 * US; // readers at that period
			r.at(t, "period 1 us", set_period(1000), false);
		}
		r.duration = t + 300 * US;
	};
	{
		Targets t;
		t.steady = t.ratio = t.cover = -1;
		t.disc_max = 0;
		Scenario sc{"period_changes",
			    "fc_set_period_ns between 1 us and 1 s, readers idle for 20 us to 1.2 s in between, noisy "
			    "brackets; no step: no discontinuity",
			    [period_changes](Run &r) { period_changes(r, false); }, t};
		sc.frequent = true;
		v.push_back(sc);
		sc.name = "period_changes_steps";
		sc.what = "as period_changes, with the counter jumping 50 us after 20 ms of idle readers (2500 ppm of "
			  "the gap) and 5 ms after 1.2 s: each jump is one discontinuity, and nothing else is";
		sc.setup = [period_changes](Run &r) { period_changes(r, true); };
		sc.targets.disc_max = sc.targets.disc_min = 2;
		v.push_back(sc);
	}
	return v;
}
} // namespace

const std::vector<Scenario> &scenarios()
{
	static const std::vector<Scenario> v = [] {
		std::vector<Scenario> all = make();
		for (Scenario &sc : adversarial_scenarios())
			all.push_back(sc);
		return all;
	}();
	return v;
}

std::vector<Variant> variants_for(const Scenario &sc)
{
	if (sc.hourly)
		return {{"ordered/1h", false, HOUR}, {"relaxed/1h", true, HOUR}};
	if (sc.period_ns) {
		// Several reads per period, at random phases: the hand's whole window is judged.
		const long double gap = std::max((long double)sc.period_ns / 5, 250.0L);
		// and sparse readers: every 1.3 P, past each hand's window (P + P/8), with no updater
		Variant sparse{"ordered/sparse", false, 1.3L * (long double)sc.period_ns};
		sparse.sparse = true;
		return {{"ordered/P5", false, gap}, {"relaxed/P5", true, gap}, sparse};
	}
	if (sc.frequent)
		return {{"ordered/1us", false, 1 * US}, {"relaxed/1us", true, 1 * US}};
	return {{"ordered/1us", false, 1 * US},
		{"relaxed/1us", true, 1 * US},
		{"ordered/50ms", false, 50 * MS},
		{"relaxed/50ms", true, 50 * MS}};
}

} // namespace sim
