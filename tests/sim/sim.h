// fastclock simulation harness: a deterministic simulated machine (counter, kernel clocks, NTP state) and a
// runner that drives the library's real tracking code (fc__start_clock / fc__read_slow_ns / fc__windup /
// fc__windup_set_kernel_locked, fc__hand_read_ns, track.c, hands.c, sample.c) over it under scripted scenarios.
//
// Time model. The machine has a true time t (ns, long double). Everything is a function of t:
//   counter   c(t): piecewise linear at `hz` x (1 + drift), may jump, stop, wrap at `mask`, lag (skew);
//   kernel    CLOCK_MONOTONIC k(t): piecewise linear at 1 + ppm (NTP slew), may stop (suspend);
//             CLOCK_REALTIME = k(t) + wall_off (steps: settimeofday, leap seconds, resume);
//   NTP       adjtimex state (maxerror, status) through the ntp hook; true UTC = realtime - utc_err.
// Every counter read costs counter_cost ns of true time, every kernel read kernel_cost ns (plus, now and
// then, a preemption). A read's value belongs to one instant inside its cost: the counter's at its middle,
// the kernel's at 20-50 % of the call (the vDSO reads its counter early in the call). The error of a
// fastclock read is its value minus the kernel's (whole-ns) value at that read's instant, so a perfect
// tracker scores 0 and the bracket's half width is the honest uncertainty of every sample.
// Only one run exists at a time: the machine and the clock are globals (fc__hand_read_ns's counter hook takes
// no context).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "read.h"
#include "hands.h"
#include "sample.h"
#include "start.h"
#include "state.h"
#include "windup.h"

namespace sim {

// Deterministic generator (splitmix64), so every run is reproducible bit for bit.
struct Rng {
	uint64_t s = 0x9e3779b97f4a7c15ull;
	uint64_t next()
	{
		uint64_t z = (s += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		return z ^ (z >> 31);
	}
	double uniform() { return (double)(next() >> 11) * (1.0 / 9007199254740992.0); } // [0, 1)
	double uniform(double a, double b) { return a + (b - a) * uniform(); }
	double normal(); // N(0, 1), Box-Muller
};

struct Machine {
	// --- configuration ---
	long double hz = 3e9L;          // nominal counter frequency
	uint64_t mask = ~0ull;          // counter width
	// Costs calibrated on this project's machine: lfence;rdtsc ~16 ns, and the library's best sample
	// bracket (fc_status().last_bracket_ns) 49 ns = 8 + 33 + 8.
	long double counter_cost = 16;  // ns per counter read
	long double kernel_cost = 33;   // ns per kernel clock read
	int relaxed_early_max = 30;     // a relaxed read's counter is taken up to this many ticks early (10 ns)
	double skew_p = 0;              // probability that a counter read lags (cross-core skew) ...
	int skew_lo = 0, skew_hi = 0;   // ... by this many ticks
	double preempt_p = 0;           // probability that a kernel read is preempted ...
	long double preempt_lo = 0, preempt_hi = 0; // ... for this long (ns), before or after its clock read
	int64_t utc_err = 10000;        // CLOCK_REALTIME - true UTC (ns)
	long ntp_maxerror_us = 50;      // adjtimex maxerror / esterror reported
	long ntp_esterror_us = 20;
	int ntp_status = 0;             // STA_* bits reported
	// adjtimex's tick is not configured: it is derived from the kernel's rate as the kernel would show it
	// (ntp_tick()). k_slew_ppm: the part of the rate an adjtime() slew makes (+-500 ppm, MAX_TICKADJ), which
	// the tick does not carry.
	long double k_slew_ppm = 0;
	int64_t boot_off = 0;           // CLOCK_BOOTTIME - CLOCK_MONOTONIC (grows by each suspend)
	long double kernel_quantum = 0; // the kernel clocksource's step (ns; 0: 1 ns), e.g. hpet 69.84, acpi_pm 279.4
	double kernel_frac_lo = 0.2, kernel_frac_hi = 0.5; // where in its call the kernel reads its clock
	int disturb_real = 0;           // this many CLOCK_REALTIME reads are preempted (alternately before and
	long double disturb_ns = 50000; // after the clock read) for this long: disturbed wall-offset brackets
	// The kernel's coarse clocks (CLOCK_*_COARSE): its clocks at its last tick (HZ 250), or at its last update
	// (a resume, a rate change) if later; a wall step shows in them at once, as the kernel's
	// timekeeping_update does. A read costs coarse_cost ns and is not a value's instant (the vDSO's, no
	// counter read).
	long double tick_ns = 4e6L;
	long double coarse_cost = 6;
	// A sched_yield (a reader waiting for a writer past its spins, read.c) is a system call and a switch to the
	// writer when it is runnable: it costs yield_cost ns of true time (the simulation's own sched_yield, which
	// makes no system call: a wait through a writer stalled for a 1 s period took tens of seconds of real ones).
	long double yield_cost = 1000;

	// --- state ---
	long double t = 1e9L;   // true time (ns)
	long double c0 = 1e15L; // counter value (unwrapped, ticks) at tc0
	long double tc0 = 1e9L;
	long double c_rate = 3.0L; // ticks per true ns
	bool c_stopped = false;
	long double k0 = 1e9L; // CLOCK_MONOTONIC at tk0
	long double tk0 = 1e9L;
	long double k_rate = 1.0L;
	bool k_stopped = false;
	int64_t wall_off = 1700000000ll * 1000000000ll; // CLOCK_REALTIME - CLOCK_MONOTONIC
	Rng rng;

	// --- what the last read measured ---
	long double last_instant = 0; // true time the last counter/kernel read's value belongs to
	long double first_kernel_instant = -1; // ... the first kernel read's since the runner last asked
	int last_skewed = 0;          // the last counter read lagged (skew)
	uint64_t counter_reads = 0, kernel_reads = 0;

	// --- asynchronous actions (other threads), run from inside the hooks when their time comes ---
	struct Async {
		long double at;
		std::function<void()> fn;
	};
	std::vector<Async> async;
	bool in_async = false;

	long double counter_at(long double tt) const
	{
		return c_stopped ? c0 : c0 + (tt - tc0) * c_rate;
	}
	// The counter's value at tt as the hardware shows it: whole ticks, wrapped at 2^64 (and at mask + 1).
	uint64_t counter_value_at(long double tt) const;
	long double kmono_at(long double tt) const { return k_stopped ? k0 : k0 + (tt - tk0) * k_rate; }
	int64_t kmono_floor(long double tt) const; // whole ns, on the clocksource's steps (kernel_quantum)

	// Faults and changes, effective from now.
	void rebase_counter() { c0 = counter_at(t); tc0 = t; }
	void rebase_kernel() { k0 = kmono_at(t); tk0 = t; }
	void set_counter_ppm(long double ppm) { rebase_counter(); c_rate = hz / 1e9L * (1 + ppm * 1e-6L); }
	void scale_counter_rate(long double f) { rebase_counter(); c_rate *= f; }
	void jump_counter(long double ticks) { rebase_counter(); c0 += ticks; }
	void stop_counter(bool s) { rebase_counter(); c_stopped = s; }
	void set_kernel_ppm(long double ppm, long double slew_ppm = 0)
	{
		rebase_kernel();
		k_rate = 1 + ppm * 1e-6L;
		k_slew_ppm = slew_ppm;
	}
	// The tick adjtimex reports (us per USER_HZ tick, 10000 nominal): the kernel's rate is
	// nominal x tick / 10000 x (1 + frequency + slew), the frequency within +-500 ppm (MAXFREQ), so a rate
	// (less its slew) beyond +-500 ppm has moved the tick: to the nearest unit of 100 ppm (the remainder is
	// within +-50 ppm, as chronyd leaves it), within ADJ_TICK's +-10 %.
	long ntp_tick() const;
	void stop_kernel(bool s) { rebase_kernel(); k_stopped = s; }

	int64_t coarse_at(long double tt, clockid_t id) const; // CLOCK_REALTIME_COARSE or CLOCK_MONOTONIC_COARSE
	int64_t read_coarse(clockid_t id);                      // a read of one (costs coarse_cost)

	void pump(); // run due asynchronous actions (not re-entrant)
	uint64_t read_counter(bool relaxed);
	int read_kernel(clockid_t id, int64_t *ns);
};

extern Machine M;

// The hooks handed to the library.
uint64_t counter_ordered(); // the inline readers' counter (run.cc's ticks hooks): no context
uint64_t counter_relaxed();
int64_t wall_coarse(); // the inline bounded real read's CLOCK_REALTIME_COARSE (fc__hand_read_real_bounded)
extern const fc_source source_template; // counter/kernel/ntp over M (mask filled in by the runner)

// ---- scenarios and results -------------------------------------------------------------------------------
struct Variant {
	const char *name; // "ordered/1us", ...
	bool relaxed;
	long double gap; // mean time between reader arrivals (ns); jittered +-20 %
	bool rare() const { return gap >= 1e6L; }
	bool sparse = false; // adversarial: readers every 1.3 P (each finds its hand expired), no updater
};

struct Targets {
	// Negative: not checked for this scenario. All values in ns.
	double max_mono = -1, max_real = -1;    // max |err| over all samples
	double steady = 25;                     // max |err| outside fault windows
	double steady_relaxed_extra = 10;       // relaxed reads may be up to 30 ticks (10 ns) early: physics
	double reconv = -1;                     // max time after a fault until |err| stays within 25 ns ...
	double reconv_reads = 0;                // ... or this many reader gaps, if longer (a rate needs 2 reads)
	double first_read = -1;                 // |err| of the first mono read after a flagged fault
	double first_read_real = -1;            // ... and of the first real read
	double ratio = 3.5;                     // max bound / max(max |err|, half the best sample bracket),
	                                        // outside fault windows (no bound can be below the half bracket);
	                                        // the bound also carries half the wall-offset bracket (~26 ns, a
	                                        // little over one half sample bracket) and a step the brackets
	                                        // can hide inside the rate's baseline (F5): 2 + 1.06 + 0.4 + noise
	double cover = 100;                     // % of samples (outside blind windows) whose bound holds
	double off_max = -1;                    // plain reads off by more than this (ns) outside blind windows: none
	int64_t disc_max = -1, disc_min = -1;   // the tracker's discontinuity count at the end of the run
	// The adversarial suite (adv_*): only these are checked: no bounded read outside its interval while its
	// status says SYNCHRONIZED (mono and real tracking bound, and the fc_real_bounded interval vs true UTC),
	// no monotonic violation, and at least one synchronised read judged.
	bool adversarial = false;
	double median_width = -1; // adversarial: the largest median tracking half-width (ns) while synchronised
};

class Run;

struct Event {
	long double at;              // true time, ns after the run starts
	std::function<void(Run &)> fn;
	const char *what;
	bool fault = true;           // starts a fault window (reconvergence measured from here)
	long double dur = 0;         // how long the fault itself lasts (a slew), ns
	long double blind_mono = 0;  // samples this long after the event are exempt from bound coverage:
	long double blind_real = 0;  // the fault cannot be seen before the next re-anchor (physics)
	bool first_read = false;     // check the first read after it against Targets::first_read
	// A forward wall step (settimeofday, a resume with the counter stopped) shows in the kernel's coarse clock
	// at once: fc_real_bounded sees it (fc__hand_read_real_bounded), so its blind window exempts plain reads
	// only, and a bounded real read that says SYNCHRONIZED must hold true UTC inside it too.
	bool bounded_sees = false;
};

struct Scenario {
	const char *name;
	const char *what; // one line: what the counter and the kernel do
	std::function<void(Run &)> setup; // configure M and the run, add events; called per variant
	Targets targets;
	bool hourly = false; // variants read once an hour instead of every 1 us / 50 ms
	int64_t period_ns = 0; // adversarial: the re-anchor period; readers arrive every P/5 (at least 250 ns)
	bool frequent = false; // only the readers arriving every ~1 us (the scenario needs their re-anchors)
};

struct Result {
	std::string scenario, variant;
	uint64_t samples = 0, reads = 0;
	double max_mono = 0, max_real = 0, steady_max = 0, reconv = -1, first_read = -1, first_read_real = -1;
	uint64_t mono_violations = 0;
	uint64_t cover_n = 0, cover_miss = 0, cover_miss_blind = 0; // tracking bound (mono and real reads)
	uint64_t utc_miss = 0, utc_miss_blind = 0;                  // fc_real_bounded interval vs true UTC
	uint64_t utc_miss_seen = 0; // ... while SYNCHRONIZED or FREE_RUNNING, outside every blind window that
	                            // exempts bounded reads
	uint64_t off_reads = 0;     // plain reads off by more than Targets::off_max outside blind windows
	double steady_bound = 0, steady_err = 0;                    // maxima, for the ratio (the bound less its
	                                                            // allowance for an unseen kernel rate change)
	double half_bracket = 1e300;                                // smallest half sample bracket seen, ns
	double max_latency = 0;                                     // longest read, true ns
	uint64_t discontinuities = 0, real_steps = 0, reanchors = 0, waits = 0;
	// While the read's status was SYNCHRONIZED (bounded reads): how many were judged, how many lay outside
	// their tracking bound (mono, real) or their fc_real_bounded interval (UTC); the largest |error|, and
	// every tracking half-width (for the median and the worst).
	uint64_t sync_n = 0, sync_miss_mono = 0, sync_miss_real = 0, sync_utc_miss = 0, exempt_n = 0;
	uint64_t disrupted_n = 0; // bounded reads whose status was DISRUPTED (not judged)
	double sync_max_err = 0, sync_worst_ratio = 0; // worst |error| / bound (how close a read came to missing)
	std::vector<float> sync_widths;
	// What an adjtimex() read at every re-anchor would add: a daemon's rate change shows in its
	// freq / tick at the first re-anchor after it. The tracker's own samples: how many re-anchors after a
	// kernel rate change until its rate estimate is within RATE_KNOWN_PPM of the kernel's new rate.
	std::vector<int> rate_lag; // one entry per change that the run saw settle
	uint64_t rate_changes = 0;
	std::vector<std::string> failures;
	double ratio() const { return steady_err > 0 ? steady_bound / steady_err : (steady_bound > 0 ? 1e9 : 0); }
	// The bound's tightness against what can be known: a sample pins the kernel only to half its bracket.
	double ratio_floor() const
	{
		double d = std::max(steady_err, half_bracket < 1e300 ? half_bracket : 0.0);
		return d > 0 ? steady_bound / d : 0;
	}
	double cover_pct() const { return cover_n ? 100.0 * (double)(cover_n - cover_miss) / (double)cover_n : 100; }
	double cover_pct_outside_blind() const
	{
		uint64_t n = cover_n - cover_miss_blind;
		return n ? 100.0 * (double)(n - (cover_miss - cover_miss_blind)) / (double)n : 100;
	}
	bool pass() const { return failures.empty(); }
};

// The state of one run: the clock under test, its configuration and the reader's bookkeeping.
class Run {
public:
	Run(const Scenario &sc, const Variant &v);
	Result go();

	// For scenario setups.
	const Scenario &sc;
	const Variant &var;
	long double duration = 100e6L; // ns of true time
	int64_t period_ns = 1000000;
	uint32_t gen_start = UINT32_MAX - 3; // generations wrap within the first re-anchors of every run
	bool updater = false;                // re-anchor every 3/4 period as the updater thread does
	long double read_spacing = 0;        // extra true time between the reads of one sample
	std::vector<Event> events;
	long double t_start = 0;

	void at(long double t_rel, const char *what, std::function<void(Run &)> fn, bool fault = true)
	{
		events.push_back(Event{t_rel, std::move(fn), what, fault});
	}
	Event &last() { return events.back(); }
	void pause_reader(long double ns) { reader_pause_ += ns; }
	// The updater thread sleeps on CLOCK_MONOTONIC, which stops during a suspend: its next turn comes this
	// much later in true time.
	void pause_updater(long double ns) { updater_pause_ += ns; }
	// A wall step nobody announced (settimeofday; no notifier): real reads are not judged from now until the
	// tracker has seen it (its real_steps count moves). No observer can know of it earlier.
	void exempt_real_until_seen();
	// A suspend with the counter running: reads of the hand in use at the resume, until the next re-anchor,
	// are not judged (they read the counter alone: nothing they see says time stood still; physics).
	void exempt_until_reanchor();
	uint64_t hint_hz = 0;     // the counter frequency the source gives the start-up (0: the true nominal one)
	bool hint_measure = false; // give none: the start-up keeps its measurement unchecked

	// Actions other threads take (the updater's step notifier, a demotion, a stalled writer).
	void notify_step();                     // a re-anchor, as the updater's periodic turn
	void step_notifier();                   // what the updater does on a CANCEL_ON_SET wake-up
	void demote(const char *why);           // the trust re-check fails: fc__windup_set_kernel_locked
	void stall_writer(long double stall_ns); // writer samples, then is descheduled before publishing

private:
	void sample();
	int64_t read(int how, bool relaxed, long double *instant);
	int bounded(int how, int64_t *v, int64_t *track_err, int64_t *utc_err, long double *instant);
	bool in_window(long double t, bool blind, bool mono, bool bounded = false) const;
	long double value_instant();
	struct Window {
		long double at, settle_end, blind_mono_end, blind_real_end;
		bool fault;
		bool bounded_sees; // Event::bounded_sees
	};
	std::vector<Window> windows_;
	bool real_exempt_ = false;
	bool all_exempt_ = false;
	uint64_t exempt_reanchors_ = 0;
	uint64_t seen_reanchors_ = 0;
	long double seen_k_rate_ = 1;
	int lag_ = -1; // re-anchors since an unsettled kernel rate change, or -1
	uint64_t real_steps_at_ = 0;
	long double reader_pause_ = 0;
	long double updater_pause_ = 0;
	Result r_;
	int64_t last_mono_ = INT64_MIN;
	size_t next_event_ = 0;
	struct FaultTrack {
		long double at, end;
		long double last_bad = -1;
		bool want_first;
		bool first_done = false;
	};
	std::vector<FaultTrack> faults_;
};

const std::vector<Scenario> &scenarios();
std::vector<Scenario> adversarial_scenarios(); // adversarial.cc; scenarios() includes them
std::vector<Variant> variants_for(const Scenario &sc);
void check_targets(const Scenario &sc, const Variant &v, Result &r);

} // namespace sim

// The clock under test (one at a time).
extern fc_clock SIM_CLOCK;
extern fc_pub SIM_PUB;
