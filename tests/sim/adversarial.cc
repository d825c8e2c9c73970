// The adversarial suite: what the kernel may legally do between two re-anchors, at the periods the
// API accepts (1 us, 2 us, 50 us: below the updater's 50 us wake-up floor, 1 ms, 100 ms, 1 s), against the
// tracking bound. Every bounded read whose status is SYNCHRONIZED is judged (Targets::adversarial, check_targets
// in run.cc): a read outside its interval is a miss, and any miss fails the scenario. The only reads not judged: real reads after a wall step nobody
// announced (settimeofday without the updater's notifier), until the tracker has seen it.
// Scenario names are FAMILY@PERIOD (adv_steps@1ms); `fc_sim --scenario adv_steps` runs every period.
// Event times are in periods, each at a random phase inside its period (seeded: runs are reproducible).
#include <sys/timex.h>

#include <cmath>
#include <cstring>
#include <deque>
#include <string>

#include "sim.h"

namespace sim {

namespace {
constexpr long double US = 1e3L, MS = 1e6L, S = 1e9L;
constexpr long double DAY = 86400 * S;

// Names must outlive the table (Scenario holds const char *).
const char *keep(const std::string &s)
{
	static std::deque<std::string> names;
	names.push_back(s);
	return names.back().c_str();
}

long double per(const Run &r) { return (long double)r.period_ns; }
// n periods from the start, at a random phase inside the period.
long double at_p(Run &r, long double n) { return (n + M.rng.uniform(0.05, 0.95)) * per(r); }

void add(std::vector<Scenario> &v, const char *family, const char *what, std::function<void(Run &)> setup)
{
	static const struct {
		const char *name;
		int64_t ns;
	} periods[] = {{"1us", 1000}, {"2us", 2000}, {"50us", 50000}, {"1ms", 1000000}, {"16ms", 16000000}, {"100ms", 100000000}, {"1s", 1000000000}};
	for (const auto &p : periods) {
		Targets t;
		t.adversarial = true;
		const int64_t pns = p.ns;
		Scenario sc{keep(std::string(family) + "@" + p.name), what,
			    [setup, pns](Run &r) {
				    r.period_ns = pns;
				    setup(r);
			    },
			    t};
		sc.period_ns = pns;
		v.push_back(sc);
	}
}

// The kernel's rate (ppm against the counter's nominal rate) from now on, slew_ppm of it an adjtime() slew (the
// rest, beyond +-500 ppm, moves adjtimex's tick: Machine::ntp_tick).
std::function<void(Run &)> rate(long double ppm, long double slew_ppm = 0)
{
	return [ppm, slew_ppm](Run &) { M.set_kernel_ppm(ppm, slew_ppm); };
}

// Slews of +-amp around base, reversing after 1, 2, 3, 5, 1, 2, ... periods, from period `from` for n turns.
long double slew_flips(Run &r, long double from, int n, long double base, long double amp)
{
	static const int gaps[] = {1, 2, 3, 5};
	long double p = from;
	for (int i = 0; i < n; i++) {
		const long double slew = (i % 2) ? -amp : amp;
		r.at(at_p(r, p), "slew reverses", rate(base + slew, slew), false);
		p += gaps[i % 4];
	}
	return p;
}

// A leap second as adjtimex reports it: STA_INS (or STA_DEL) set well before; the kernel steps CLOCK_REALTIME
// back 1 s at UTC midnight (insertion) or forward 1 s at 23:59:59 (deletion); the daemon clears the flag later.
// Readers read for 300 periods, then (short periods) pause until 30 periods before the step and read through
// it, pause again past the repeated second and read 300 periods more.
void leap(Run &r, bool insert, long double late = 0)
{
	const long double P = per(r);
	const long double pre = 300 * P, step = pre + 4 * S + 50 * P;
	if (late > 0) { // the kernel applies it `late` after the second boundary: a re-anchor comes in between
		r.at(step + late / 2, "re-anchor before the late leap", [](Run &r2) { r2.notify_step(); }, false);
		r.at(step + late, insert ? "leap second inserted late" : "leap second deleted late",
		     [insert](Run &) { M.wall_off += insert ? -(int64_t)S : (int64_t)S; }, false);
	}
	// CLOCK_REALTIME at `step` (true time from the start) is the next midnight, less 1 s for a deletion.
	const long double k_at_step = M.kmono_at(M.t + step);
	const long double midnight = std::ceil((k_at_step + (long double)M.wall_off) / DAY) * DAY;
	M.wall_off = (int64_t)(midnight - (insert ? 0 : S) - k_at_step);
	M.ntp_status = insert ? STA_INS : STA_DEL;
	if (late <= 0)
		r.at(step, insert ? "leap second inserted" : "leap second deleted",
		     [insert](Run &) { M.wall_off += insert ? -(int64_t)S : (int64_t)S; }, false);
	r.at(step + 2 * S + 100 * P, "daemon clears the leap flag", [](Run &) { M.ntp_status = 0; }, false);
	if (P < 10 * MS) {
		r.at(pre, "reader pauses", [step, pre, P](Run &r2) { r2.pause_reader(step - 30 * P - pre); }, false);
		r.at(step + 30 * P, "reader pauses", [](Run &r2) { r2.pause_reader(1.5L * S); }, false);
	}
	r.duration = step + 1.5L * S + 30 * P + 300 * P;
}

std::vector<Scenario> make()
{
	std::vector<Scenario> v;

	add(v, "adv_steady", "quiet kernel, tick nominal (ntpd or timesyncd steering through the PLL): the half-width",
	    [](Run &r) { r.duration = 200 * per(r); });
	// The narrow allowance where it is honest: at the default period, 2000 ppm x P + the rest, not 5000 ppm x P.
	for (Scenario &sc : v)
		if (!strcmp(sc.name, "adv_steady@1ms"))
			sc.targets.median_width = 1100;
	add(v, "adv_steps",
	    "chronyd holding the kernel +3000 ppm (tick 10030: 5000 ppm allowance): kernel rate steps of 1, 2, 5, 20, "
	    "100, 500, 1000, 2000 and 5000 ppm (alternating sign, each back 20 periods later) at random phases",
	    [](Run &r) {
		    M.set_kernel_ppm(3000);
		    const long double ppm[] = {1, 2, 5, 20, 100, 500, 1000, 2000, 5000};
		    for (int i = 0; i < 9; i++) {
			    const long double s = (i % 2) ? -ppm[i] : ppm[i];
			    r.at(at_p(r, 30 + 40 * i), "kernel rate step", rate(3000 + s), false);
			    r.at(at_p(r, 50 + 40 * i), "kernel rate back", rate(3000), false);
		    }
		    r.duration = 400 * per(r);
	    });
	add(v, "adv_steps_pll",
	    "ntpd / timesyncd (tick nominal: 2000 ppm allowance): the kernel's rate moves by 5, 100, 500, 1000, 1500 "
	    "and 2000 ppm within the frequency's and the slew's ranges (+-500 ppm each), each back 20 periods later "
	    "right after a re-anchor",
	    [](Run &r) {
		    // {from, to}: frequency + slew, each within +-500 ppm (the tick stays nominal)
		    const long double mv[][2] = {{0, 5},      {0, -100},    {-250, 250},
						 {500, -500}, {-500, 1000}, {1000, -1000}};
		    for (int i = 0; i < 6; i++) {
			    const long double a = mv[i][0], b = mv[i][1];
			    r.at(at_p(r, 20 + 40 * i), "kernel rate (from)", rate(a, a / 2), false);
			    r.at(at_p(r, 30 + 40 * i), "kernel rate step", rate(b, b / 2), false);
			    r.at(at_p(r, 50 + 40 * i), "re-anchor, then the rate back", [a](Run &r2) {
				    r2.notify_step();
				    M.set_kernel_ppm(a, a / 2);
			    }, false);
		    }
		    r.duration = 280 * per(r);
	    });
	add(v, "adv_base_m1000",
	    "chronyd holding the kernel 1000 ppm slow (tick 9990): steps of 5000 ppm of nominal either way from there "
	    "(the allowance is in ppm of nominal: 1/200 of the measured rate fell 0.1 % short)",
	    [](Run &r) {
		    M.set_kernel_ppm(-1000);
		    const long double to[] = {-6000, 4000, -5990, 3990};
		    for (int i = 0; i < 4; i++) {
			    r.at(at_p(r, 30 + 40 * i), "kernel rate 5000 ppm from the base", rate(to[i]), false);
			    r.at(at_p(r, 50 + 40 * i), "back to the base", rate(-1000), false);
		    }
		    r.duration = 200 * per(r);
	    });
	add(v, "adv_tick_moves",
	    "tick nominal, slews +-500 ppm; then chronyd moves the tick a few units (rate +600 ppm, tick 10006), and "
	    "from then on the rate by 4000 ppm at once, the tick back at nominal in between",
	    [](Run &r) {
		    long double p = slew_flips(r, 10, 10, 0, 500);
		    r.at(at_p(r, p + 5), "tick + 6 units", rate(600), false);
		    // the tick back to nominal in between: chronyd may move it again at any time
		    const long double to[] = {4000, 0, -4000, 0}; // each change over 2000 ppm, within 5000
		    for (int i = 0; i < 4; i++)
			    r.at(at_p(r, p + 20 + 20 * i), "tick moves", rate(to[i]), false);
		    r.duration = (p + 120) * per(r);
	    });
	add(v, "adv_after_break",
	    "chronyd (the tick moved: -1500 ppm, tick 9985, from the start): a 5000 ppm step breaks continuity, then "
	    "moves of up to 4900 ppm 2-7 periods later, some right after a re-anchor; repeated",
	    [](Run &r) {
		    long double p = 20, cur = -1500;
		    M.set_kernel_ppm(cur);
		    for (int i = 0; i < 12; i++) {
			    // every change is within 5000 ppm of the rate before it (the allowance), the rate within +-1 %
			    const long double base = cur + (cur > 0 ? -5000 : 5000);
			    r.at(at_p(r, p), "break: 5000 ppm step", rate(base), false);
			    // every rate off nominal by 1000 ppm or more: the tick moved, the 5000 ppm allowance (a
			    // 5000 ppm move away from a nominal tick no read has seen is outside the contract)
			    long double d;
			    do
				    d = M.rng.uniform(-4900, 4900);
			    while (std::fabs((double)(base + d)) > 10000 || std::fabs((double)(base + d)) < 1000);
			    const long double after = 2 + (i % 6); // the break seen by a whole period first
			    const long double x = base + d;
			    cur = x;
			    if (i % 3 == 0)
				    r.at(at_p(r, p + after), "move after the break", rate(x), false);
			    else
				    r.at((p + after + 0.01L) * per(r), "re-anchor, then a move after the break",
					 [x](Run &r2) {
						 r2.notify_step();
						 M.set_kernel_ppm(x);
					 }, false);
			    p += after + 12;
		    }
		    r.duration = (p + 20) * per(r);
	    });
	// chronyd ending a fast slew: the rate has sat on a plateau (tick moved) for more than the rate's history, then
	// the tick goes back to nominal, some right after a re-anchor: a change of up to 4900 ppm from every rate in
	// the history, with the tick read nominal from then on. The plateau is reached in steps the allowance covers
	// (a first move of the tick by more than 2000 ppm that no read has seen is outside the contract).
	for (int sign = 1; sign >= -1; sign -= 2) {
		add(v, sign > 0 ? "adv_tick_plateau_down" : "adv_tick_plateau_up",
		    sign > 0 ? "tick nominal, then +2000 and +4900 ppm (tick 10049) for 9-20 periods, back to "
			       "nominal (some right after a re-anchor); repeated"
			     : "tick nominal, then -2000 and -4900 ppm (tick 9951) for 9-20 periods, back up to "
			       "nominal (some right after a re-anchor); repeated",
		    [sign](Run &r) {
			    const long double hi = 4900 * sign;
			    long double p = slew_flips(r, 10, 6, 0, 500);
			    r.at(at_p(r, p + 2), "rate 2000 ppm (tick moves)", rate(2000 * sign), false);
			    p += 12;
			    const long double hold[] = {20, 9, 15, 12};
			    for (int i = 0; i < 4; i++) {
				    r.at(at_p(r, p), "plateau", rate(hi), false);
				    p += hold[i];
				    if (i % 2 == 0)
					    r.at((p + 0.01L) * per(r), "re-anchor, then the tick back to nominal",
						 [](Run &r2) {
							 r2.notify_step();
							 M.set_kernel_ppm(0);
						 },
						 false);
				    else
					    r.at(at_p(r, p), "the tick back to nominal", rate(0), false);
				    p += 20;
			    }
			    r.duration = (p + 10) * per(r);
		    });
		// The process starts on the plateau (the start-up measures the rate: SYNCHRONIZED from the first
		// hand, no adjtimex read yet), and the tick is back at nominal when the first re-anchor reads it: every
		// rate in the history is the plateau's. The run starts at the first counter hand.
		add(v, sign > 0 ? "adv_tick_start_down" : "adv_tick_start_up",
		    sign > 0 ? "the process starts at +4900 ppm (tick 10049); nominal when the first re-anchor reads "
			       "the tick"
			     : "the process starts at -4900 ppm (tick 9951); nominal when the first re-anchor reads "
			       "the tick",
		    [sign](Run &r) {
			    r.hint_measure = true;
			    M.set_kernel_ppm(4900 * sign);
			    const long double p0 = 0; // the run starts at the first counter hand, after the measurement
			    // half a period after the first hand, before the next re-anchor
			    r.at(std::max(per(r) / 2, 5 * US), "the tick back to nominal, then a re-anchor",
				 [](Run &r2) {
					 M.set_kernel_ppm(0);
					 r2.notify_step();
				 },
				 false);
			    slew_flips(r, p0 + 20, 10, 0, 500);
			    r.duration = (p0 + 60) * per(r);
		    });
	}
	add(v, "adv_clocksource",
	    "the kernel switches clocksource to hpet (69.8 ns steps, 0.5 us a read), back to the counter, then to "
	    "acpi_pm (279 ns steps, 1 us a read); no trust re-check (the sim's clock has none); the hand in use at a "
	    "switch is not judged until the next re-anchor (its reads cannot see the switch: physics)",
	    [](Run &r) {
		    r.at(at_p(r, 30), "clocksource hpet", [](Run &r2) {
			    r2.exempt_until_reanchor();
			    M.kernel_quantum = 1e9L / 14318180;
			    M.kernel_cost = 500;
			    M.kernel_frac_lo = 0;
			    M.kernel_frac_hi = 0.02;
		    }, false);
		    r.at(at_p(r, 80), "clocksource tsc", [](Run &r2) {
			    r2.exempt_until_reanchor();
			    M.kernel_quantum = 0;
			    M.kernel_cost = 33;
			    M.kernel_frac_lo = 0.2;
			    M.kernel_frac_hi = 0.5;
		    }, false);
		    r.at(at_p(r, 110), "clocksource acpi_pm", [](Run &r2) {
			    r2.exempt_until_reanchor();
			    M.kernel_quantum = 1e9L / 3579545;
			    M.kernel_cost = 1000;
			    M.kernel_frac_lo = 0; // the clocksource read at the very start of the call
			    M.kernel_frac_hi = 0.02;
		    }, false);
		    r.duration = 160 * per(r);
	    });
	add(v, "adv_suspend_short",
	    "suspends of 0.1, 0.5, 0.9 and 1.1 P (shorter than the window P + P/8) with the counter running: "
	    "CLOCK_MONOTONIC stops, CLOCK_BOOTTIME and CLOCK_REALTIME jump; the hand in use at the resume is not "
	    "judged until the next re-anchor (it reads the counter alone)",
	    [](Run &r) {
		    const long double f[] = {0.1L, 0.5L, 0.9L, 1.1L};
		    for (int i = 0; i < 4; i++) {
			    const long double d = f[i] * per(r);
			    r.at(at_p(r, 30 + 40 * i), "suspend, counter running", [d](Run &r2) {
				    M.stop_kernel(true);
				    M.t += d;
				    M.stop_kernel(false);
				    M.boot_off += (int64_t)d;
				    M.wall_off += (int64_t)d;
				    r2.exempt_until_reanchor();
			    }, false);
		    }
		    r.duration = 200 * per(r);
	    });
	add(v, "adv_suspend_stopped",
	    "suspends of 10 h and 1 s with the counter stopped (CLOCK_MONOTONIC with it; CLOCK_REALTIME and "
	    "CLOCK_BOOTTIME jump), and a settimeofday +1 s with a writer holding the lock a period after it; no "
	    "notifier: every hand is fresh after each, and every read judged (fc_real_bounded sees each jump in the "
	    "kernel's coarse clock)",
	    [](Run &r) {
		    // event times are true time, which a suspend spends: each later event comes after the earlier sleeps
		    const long double d[] = {36000 * S, S};
		    for (int i = 0; i < 2; i++) {
			    const long double len = d[i];
			    r.at(at_p(r, 30 + 60 * i) + (i ? d[0] : 0), "suspend, counter stopped", [len](Run &) {
				    M.stop_kernel(true);
				    M.stop_counter(true);
				    M.t += len;
				    M.stop_kernel(false);
				    M.stop_counter(false);
				    M.boot_off += (int64_t)len;
				    M.wall_off += (int64_t)len;
			    }, false);
		    }
		    // a writer (the keeper) takes the lock just after the step and is descheduled for a period: readers
		    // that see the step may not re-anchor, and answer with the kernel's clock
		    r.at(at_p(r, 150) + d[0] + d[1], "settimeofday +1 s, a writer stalled", [](Run &r2) {
			    M.wall_off += (int64_t)S;
			    r2.stall_writer(per(r2));
		    }, false);
		    r.duration = 200 * per(r) + 36001 * S;
	    });
	add(v, "adv_counter32_1ghz",
	    "a 32-bit counter at 1 GHz (wraps every 4.3 s): the period is capped by what its width allows; slews "
	    "+-500 ppm",
	    [](Run &r) {
		    M.hz = 1e9L;
		    M.c_rate = 1;
		    M.mask = 0xffffffffull;
		    M.c0 = 4294967296.0L * 16 - 20 * per(r); // the first wrap 20 periods in
		    slew_flips(r, 10, 20, 0, 500);
		    r.duration = 120 * per(r);
	    });
	add(v, "adv_slew_flip",
	    "adjtime slew +-500 ppm reversing after 1, 2, 3, 5 periods; then the same around an NTP frequency of "
	    "+500 ppm (0 <-> 1000 ppm), then a frequency step of -1000 ppm in the middle of a reversal",
	    [](Run &r) {
		    long double p = slew_flips(r, 20, 40, 0, 500);
		    p = slew_flips(r, p + 5, 40, 500, 500);
		    r.at(at_p(r, p + 5), "frequency -1000 ppm and slew reverses", rate(-500), false);
		    r.duration = (p + 60) * per(r);
	    });
	add(v, "adv_biased_preempted",
	    "the kernel reads its clock at the very start of its call (first half of the run), then at the very end; "
	    "5 % of kernel reads preempted 1 us - 2 periods (before or after the clock read); slews +-500 ppm "
	    "reversing every few periods",
	    [](Run &r) {
		    M.kernel_frac_lo = 0;
		    M.kernel_frac_hi = 0.02;
		    M.preempt_p = 0.05;
		    M.preempt_lo = 1 * US;
		    M.preempt_hi = std::max(2 * per(r), 2 * US);
		    long double p = slew_flips(r, 20, 30, 0, 500);
		    r.at(at_p(r, p), "kernel reads move to the end of the call", [](Run &) {
			    M.kernel_frac_lo = 0.98;
			    M.kernel_frac_hi = 1;
		    }, false);
		    p = slew_flips(r, p + 2, 30, 0, 500);
		    r.duration = (p + 20) * per(r);
	    });
	add(v, "adv_offset_bracket",
	    "the wall-offset brackets (monotonic, realtime, monotonic) of the first 3 samples are preempted 50 us "
	    "around the realtime read; later settimeofday +1 s and -1 h, each followed by 3 such samples",
	    [](Run &r) {
		    M.disturb_real = 6; // 2 offset brackets per sample
		    // 6 disturbed reads cost 300 us of true time: at short periods the steps come after that.
		    const long double t0 = 400 * US, p0 = std::ceil(t0 / per(r));
		    const long double steps[] = {S, -3600 * S};
		    for (int i = 0; i < 2; i++) {
			    const long double d = steps[i];
			    r.at(at_p(r, p0 + 40 + 60 * i), "settimeofday, then disturbed brackets", [d](Run &r2) {
				    M.wall_off += (int64_t)d;
				    M.disturb_real = 6;
				    r2.exempt_real_until_seen();
			    }, false);
		    }
		    r.duration = (p0 + 160) * per(r) + 300 * US;
	    });
	static const long double hint_ppm[] = {0, 100, -1100, 3000, -20000, 20000};
	for (long double h : hint_ppm) {
		char name[48], what[260];
		snprintf(name, sizeof name, "adv_hint_%s%.0f", h < 0 ? "m" : "", std::fabs((double)h));
		snprintf(what, sizeof what,
			 "the counter's nominal rate (CPUID's) %+.0f ppm off its rate against the kernel (a process "
			 "started during a slew): the start-up keeps its 1 ms measurement, or past 1/64 measures 3 "
			 "more times first; the kernel slews +-500 ppm from period 10",
			 (double)h);
		add(v, keep(name), keep(what), [h](Run &r) {
			r.hint_hz = (uint64_t)llroundl(M.hz * (1 + h * 1e-6L));
			slew_flips(r, 10, 20, 0, 500);
			r.duration = 120 * per(r);
		});
	}
	add(v, "adv_hint_measured",
	    "no hint: the start-up measures the rate over 1 ms while the kernel slews at +500 ppm and reverses "
	    "to -500 ppm 100 us in",
	    [](Run &r) {
		    r.hint_measure = true;
		    M.set_kernel_ppm(500);
		    M.async.push_back(Machine::Async{M.t + 100 * US, [] { M.set_kernel_ppm(-500); }});
		    // The measurement is over before the run starts (at the first counter hand).
		    const long double p0 = 0;
		    slew_flips(r, p0 + 10, 20, 0, 500);
		    r.duration = (p0 + 120) * per(r);
	    });
	add(v, "adv_leap_late_ins",
	    "leap second inserted a tick (4 ms) after UTC midnight, a re-anchor in between (the updater's turn)",
	    [](Run &r) { leap(r, true, 4 * MS); });
	add(v, "adv_leap_late_del", "leap second deleted a tick (4 ms) after 23:59:59, a re-anchor in between",
	    [](Run &r) { leap(r, false, 4 * MS); });
	add(v, "adv_leap_ins", "leap second inserted (STA_INS; CLOCK_REALTIME steps back 1 s at UTC midnight)",
	    [](Run &r) { leap(r, true); });
	add(v, "adv_leap_del", "leap second deleted (STA_DEL; CLOCK_REALTIME steps forward 1 s at 23:59:59)",
	    [](Run &r) { leap(r, false); });
	return v;
}
} // namespace

std::vector<Scenario> adversarial_scenarios() { return make(); }

} // namespace sim
