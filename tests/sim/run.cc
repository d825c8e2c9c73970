// The runner: one scenario x one reader variant over the simulated machine, measured against the kernel.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "sim.h"

namespace sim {

namespace {
constexpr long double INF = std::numeric_limits<long double>::infinity();
constexpr double CONVERGED_NS = 25; // "back within 25 ns"

uint64_t hash_str(const char *s, uint64_t h = 1469598103934665603ull)
{
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

bool lock_writer()
{
	int expect = 0;
	return __atomic_compare_exchange_n(&SIM_CLOCK.lock, &expect, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}
void unlock_writer() { __atomic_store_n(&SIM_CLOCK.lock, 0, __ATOMIC_RELEASE); }

uint64_t g_hint_hz; // the counter's nominal rate as the source gives it (CPUID's figure on a real machine)
uint64_t sim_hz_hint(void *) { return g_hint_hz; }
// The start-up's reads: a reader every START_GAP of true time drives its steps (the 50 us trust step, the 1 ms rate)
constexpr long double START_GAP = 10000;
} // namespace

Run::Run(const Scenario &s, const Variant &v) : sc(s), var(v)
{
	M = Machine{};
	M.rng.s = hash_str(v.name, hash_str(s.name));
	sc.setup(*this);
}

// ---- actions of other threads ---------------------------------------------------------------------------
void Run::notify_step()
{
	// updater.c: the loop's periodic turn re-anchors (fc__windup_with_chores; the chores are not simulated).
	const fc_hand *cur = __atomic_load_n(&SIM_PUB.current, __ATOMIC_ACQUIRE);
	if (SIM_CLOCK.backend == FC_BACKEND_COUNTER)
		fc__windup(&SIM_CLOCK, cur);
}

void Run::step_notifier()
{
	// updater.c: on a CANCEL_ON_SET wake-up the loop re-anchors at once, unless the current hand saw the step.
	if (SIM_CLOCK.backend == FC_BACKEND_COUNTER && !fc__windup_saw_wall(&SIM_CLOCK))
		notify_step();
}

void Run::exempt_real_until_seen()
{
	real_exempt_ = true;
	real_steps_at_ = SIM_CLOCK.track.real_steps;
}

void Run::exempt_until_reanchor()
{
	all_exempt_ = true;
	exempt_reanchors_ = SIM_CLOCK.reanchors;
}

void Run::demote(const char *why)
{
	// clock.c's trust re-check, as in windup_locked: under the writer lock.
	if (!lock_writer()) {
		r_.failures.push_back("demote: writer lock busy");
		return;
	}
	fc__windup_set_kernel_locked(&SIM_CLOCK, why);
	unlock_writer();
}

void Run::stall_writer(long double stall_ns)
{
	// windup_locked's steps, with the writer descheduled between computing the hand and publishing it.
	if (!lock_writer())
		return;
	fc_sample s;
	if (fc__sample_take(&SIM_CLOCK.src, FC_SAMPLE_TRIES, &s) != 0) {
		unlock_writer();
		return;
	}
	uint64_t ta = SIM_CLOCK.src.counter(SIM_CLOCK.src.ctx);
	const fc_hand *cur = __atomic_load_n(&SIM_PUB.current, __ATOMIC_RELAXED);
	fc_hand p;
	fc__track_update(&SIM_CLOCK.track, cur, &s, ta, &p);
	p.utc_err_ns = cur->utc_err_ns; // stamp_utc_bound is windup.c's; the NTP state did not change
	p.sync_status = fc__track_sync(&SIM_CLOCK.track, &p, &SIM_CLOCK.ntp);
	M.async.push_back(Machine::Async{M.t + stall_ns, [p]() {
						 fc__hands_publish(&SIM_PUB, &p);
						 __atomic_store_n(&SIM_PUB.coarse_real_off, p.real_off_ns, __ATOMIC_RELAXED);
						 __atomic_store_n(&SIM_PUB.coarse_mono, p.mono_ns, __ATOMIC_RELAXED);
						 __atomic_fetch_add(&SIM_CLOCK.reanchors, 1, __ATOMIC_RELAXED);
						 unlock_writer();
					 }});
}

// The instant the value of the read just made belongs to: its last counter read on a counter hand (the
// slow path re-reads the counter after re-anchoring), its first kernel read on a kernel hand (a floor check or
// the NTP refresh of a bounded read may read more clocks after it).
long double Run::value_instant()
{
	const fc_hand *h = __atomic_load_n(&SIM_PUB.current, __ATOMIC_ACQUIRE);
	long double i = (h->flags & FC_HAND_KERNEL) && M.first_kernel_instant >= 0 ? M.first_kernel_instant
										    : M.last_instant;
	M.first_kernel_instant = -1;
	return i;
}

// ---- reads: the same two steps as include/fastclock.h, over the simulated counter ---------------------
// The inline readers' hooks: the simulated counter's distance from the anchor, masked (it may be narrow).
static uint64_t ticks_ordered(const fc_hand *th) { return fc__hand_ticks_masked(th, counter_ordered()); }
static uint64_t ticks_relaxed(const fc_hand *th) { return fc__hand_ticks_masked(th, counter_relaxed()); }

int64_t Run::read(int how, bool relaxed, long double *instant)
{
	int64_t m;
	const bool real = how & FC__REAL;
	int64_t v;
	M.first_kernel_instant = -1;
	if (fc__hand_read_ns(&SIM_PUB, relaxed ? ticks_relaxed : ticks_ordered, real, &m))
		v = m;
	else
		v = fc__read_slow_ns(&SIM_CLOCK, how | (relaxed ? FC__RELAXED : 0));
	*instant = value_instant();
	return v;
}

// fc_mono_bounded / fc_real_bounded: the inline read with its bound, else the slow path's (fc__slow_bounded
// is fc__read_slow on the global clock).
int Run::bounded(int how, int64_t *v, int64_t *track_err, int64_t *utc_err, long double *instant)
{
	int64_t m;
	fc__bound b;
	const bool real = how & FC__REAL;
	M.first_kernel_instant = -1;
	if (real ? fc__hand_read_real_bounded(&SIM_PUB, ticks_ordered, wall_coarse, &m, &b)
		 : fc__hand_read_bounded(&SIM_PUB, ticks_ordered, real, &m, &b))
		*v = m;
	else
		*v = fc__read_slow(&SIM_CLOCK, how, &b);
	*track_err = b.track_err_ns;
	*utc_err = real ? b.utc_err_ns : 0;
	*instant = value_instant();
	return b.sync_status;
}

// bounded: for a bounded real read (blind windows of a step the coarse clock shows do not exempt it).
bool Run::in_window(long double t, bool blind, bool mono, bool bounded) const
{
	for (const Window &w : windows_) {
		if (bounded && w.bounded_sees)
			continue;
		long double e = blind ? (mono ? w.blind_mono_end : w.blind_real_end) : (w.fault ? w.settle_end : w.at);
		if (t >= w.at && t < e)
			return true;
	}
	return false;
}

void Run::sample()
{
	const long double t0 = M.t;
	long double inst;
	int64_t err[4];
	bool steady = !in_window(t0, false, true);

	auto timed = [&](auto f) {
		long double b = M.t;
		auto v = f();
		r_.max_latency = std::max(r_.max_latency, (double)(M.t - b));
		return v;
	};
	auto mono_seen = [&](int64_t v) {
		if (v < last_mono_)
			r_.mono_violations++;
		last_mono_ = v;
	};

	// 1, 2: the variant's plain reads.
	int64_t vm = timed([&] { return read(FC__MONO, var.relaxed, &inst); });
	mono_seen(vm);
	err[0] = vm - M.kmono_floor(inst);
	M.t += read_spacing;
	int64_t vr = timed([&] { return read(FC__REAL, var.relaxed, &inst); });
	err[1] = vr - (M.kmono_floor(inst) + M.wall_off);
	M.t += read_spacing;
	// 3, 4: bounded reads (always ordered, as the API's are).
	int64_t v, te, ne;
	// The part of a bound that is the allowance for an unseen kernel rate change (src/track.c kernel_swing(), the
	// tracker's swing_mult over the read's delta): a declared cost, left out of the tightness ratio.
	auto swing_part = [&](long double at) -> int64_t {
		const fc_hand *h = __atomic_load_n(&SIM_PUB.current, __ATOMIC_ACQUIRE);
		if (h->flags & FC_HAND_KERNEL)
			return 0;
		// the wrapped value, as the hardware shows it (past 2^64 the unwrapped long double does not convert:
		// the sim then left the swing in the bound and reported a ~400x ratio around a 2^64 wrap)
		uint64_t d = (M.counter_value_at(at) - h->base_ticks) & h->mask;
		if (d > h->valid_ticks)
			d = 0;
		return (int64_t)(((unsigned __int128)d * SIM_CLOCK.track.swing_mult) >> 32);
	};
	// The exemption after a resume (exempt_until_reanchor) covers the reads of the hand in use at the resume: it
	// ends at the first re-anchor, for the reads from then on, also when that re-anchor comes inside this sample
	// (an earlier read of the sample was the old hand's).
	auto still_exempt = [&] {
		if (all_exempt_ && SIM_CLOCK.reanchors != exempt_reanchors_)
			all_exempt_ = false;
		return all_exempt_;
	};
	const int st_m = timed([&] { return bounded(FC__MONO, &v, &te, &ne, &inst); });
	const bool exempt_m = still_exempt();
	mono_seen(v);
	err[2] = v - M.kmono_floor(inst);
	int64_t bound_m = te;
	const int64_t swing_m = swing_part(inst);
	M.t += read_spacing;
	const int st_r = timed([&] { return bounded(FC__REAL, &v, &te, &ne, &inst); });
	const bool exempt_r = still_exempt();
	int64_t kr = M.kmono_floor(inst) + M.wall_off;
	err[3] = v - kr;
	int64_t bound_r = te;
	const int64_t swing_r = swing_part(inst);
	int64_t utc = kr - M.utc_err;
	const bool blind_m = in_window(t0, true, true), blind_r = in_window(t0, true, false);
	const bool utc_out = utc < v - te - ne || utc > v + te + ne;
	if (utc_out) {
		r_.utc_miss++;
		r_.utc_miss_blind += blind_r;
		// a promise (fc_real_after / fc_real_before act on both)
		const bool promise = st_r == FC_SYNC_SYNCHRONIZED || st_r == FC_SYNC_FREE_RUNNING;
		r_.utc_miss_seen += promise && !in_window(t0, true, false, true) && !real_exempt_ && !exempt_r;
	}
	if (sc.targets.off_max >= 0)
		r_.off_reads += (std::llabs(err[0]) > sc.targets.off_max && !blind_m) +
				(std::llabs(err[1]) > sc.targets.off_max && !blind_r);
	// Rate-change lag (see Result::rate_lag), counted at each re-anchor.
	if (SIM_CLOCK.reanchors != seen_reanchors_ && SIM_CLOCK.backend == FC_BACKEND_COUNTER && !M.k_stopped &&
	    !M.c_stopped) {
		seen_reanchors_ = SIM_CLOCK.reanchors;
		constexpr long double RATE_KNOWN_PPM = 10;
		if (M.k_rate != seen_k_rate_) {
			seen_k_rate_ = M.k_rate;
			r_.rate_changes++;
			lag_ = 0;
		}
		if (lag_ >= 0) {
			lag_++;
			const long double truth = M.k_rate / M.c_rate; // kernel ns per tick
			const long double est = (long double)SIM_CLOCK.track.mult_est / 4294967296.0L;
			if (fabsl(est / truth - 1) * 1e6L <= RATE_KNOWN_PPM) {
				r_.rate_lag.push_back(lag_);
				lag_ = -1;
			}
		}
	}
	// Misses: every bounded read whose status is not DISRUPTED (SYNCHRONIZED, FREE_RUNNING or UNKNOWN: the
	// tracking bound is claimed whatever the UTC state) is judged, no window exempt but an unannounced wall step
	// until the tracker has seen it (real reads only), and the hand in use at a resume from a suspend with the
	// counter running, until the next re-anchor (both physics: nothing the read sees has changed).
	if (real_exempt_ && SIM_CLOCK.track.real_steps > real_steps_at_)
		real_exempt_ = false;
	r_.disrupted_n += (st_m == FC_SYNC_DISRUPTED) + (st_r == FC_SYNC_DISRUPTED);
	if (st_m != FC_SYNC_DISRUPTED && exempt_m) {
		r_.exempt_n++;
	} else if (st_m != FC_SYNC_DISRUPTED) {
		r_.sync_n++;
		r_.sync_miss_mono += std::llabs(err[2]) > bound_m;
		r_.sync_max_err = std::max(r_.sync_max_err, (double)std::llabs(err[2]));
		if (bound_m > 0)
			r_.sync_worst_ratio =
				std::max(r_.sync_worst_ratio, (double)std::llabs(err[2]) / (double)bound_m);
		r_.sync_widths.push_back((float)bound_m);
	}
	if (st_r != FC_SYNC_DISRUPTED && (real_exempt_ || exempt_r)) {
		r_.exempt_n++;
	} else if (st_r != FC_SYNC_DISRUPTED) {
		r_.sync_n++;
		r_.sync_miss_real += std::llabs(err[3]) > bound_r;
		r_.sync_utc_miss += utc_out && st_r == FC_SYNC_SYNCHRONIZED;
		r_.sync_max_err = std::max(r_.sync_max_err, (double)std::llabs(err[3]));
		if (bound_r > 0)
			r_.sync_worst_ratio =
				std::max(r_.sync_worst_ratio, (double)std::llabs(err[3]) / (double)bound_r);
	}
	M.t += read_spacing;

	r_.samples++;
	r_.reads += 4;
	double am = (double)std::max(std::llabs(err[0]), std::llabs(err[2]));
	double ar = (double)std::max(std::llabs(err[1]), std::llabs(err[3]));
	r_.max_mono = std::max(r_.max_mono, am);
	r_.max_real = std::max(r_.max_real, ar);
	if (steady)
		r_.steady_max = std::max(r_.steady_max, std::max(am, ar));

	// Bound coverage, with the blind windows counted apart.
	r_.cover_n += 2;
	static const bool trace = getenv("FC_SIM_TRACE") != nullptr;
	if (trace && ((std::llabs(err[2]) > bound_m && !blind_m) || (std::llabs(err[3]) > bound_r && !blind_r))) {
		const fc_hand *h = SIM_PUB.current;
		fprintf(stderr, "miss t=%.6f ms st %d/%d err m/r %lld/%lld bound m/r %lld/%lld hand age %.1f us nhist %u skew %d\n",
			(double)((t0 - t_start) / 1e6L), st_m, st_r, (long long)err[2], (long long)err[3], (long long)bound_m,
			(long long)bound_r, (double)((h->flags & FC_HAND_KERNEL) ? -1 : (double)((M.read_counter(false) - h->base_ticks) & h->mask) / 3000.0),
			SIM_CLOCK.track.nhist, M.last_skewed);
	}
	if (std::llabs(err[2]) > bound_m) {
		r_.cover_miss++;
		r_.cover_miss_blind += blind_m;
	}
	if (std::llabs(err[3]) > bound_r) {
		r_.cover_miss++;
		r_.cover_miss_blind += blind_r;
	}
	if (steady && SIM_CLOCK.backend == FC_BACKEND_COUNTER && SIM_CLOCK.track.nhist) {
		const fc_track &tr = SIM_CLOCK.track;
		double h = (double)(((unsigned __int128)tr.hist[tr.nhist - 1].c_half * tr.mult_est) >> 32);
		r_.half_bracket = std::min(r_.half_bracket, h);
	}
	if (steady) {
		r_.steady_bound = std::max(r_.steady_bound, (double)std::max(bound_m - swing_m, bound_r - swing_r));
		r_.steady_err = std::max(r_.steady_err, (double)std::max(std::llabs(err[2]), std::llabs(err[3])));
	}

	// Re-convergence (ordered reads: a property of the tracker) and the first read after a fault.
	for (FaultTrack &f : faults_) {
		if (t0 < f.at || t0 >= f.end)
			continue;
		if (std::llabs(err[2]) > CONVERGED_NS || std::llabs(err[3]) > CONVERGED_NS)
			f.last_bad = t0;
		if (f.want_first && !f.first_done) {
			f.first_done = true;
			r_.first_read = std::max(r_.first_read, (double)std::llabs(err[0]));
			r_.first_read_real = std::max(r_.first_read_real, (double)std::llabs(err[1]));
		}
	}
}

Result Run::go()
{
	r_ = Result{};
	r_.scenario = sc.name;
	r_.variant = var.name;
	SIM_CLOCK = fc_clock{};
	SIM_PUB = fc_pub{};
	fc_source src = source_template;
	src.mask = M.mask;
	src.hz_hint = sim_hz_hint;
	g_hint_hz = hint_measure ? 0 : hint_hz ? hint_hz : (uint64_t)M.hz;
	// The shipped start-up (start.c) in simulated time: a kernel hand, then the readers' slow path takes its steps
	// (no trust check: trust_every 0) and publishes the first counter hand. The run starts there.
	fc__hands_init(&SIM_CLOCK.hands, &SIM_PUB, gen_start);
	SIM_CLOCK.hands_static = 1; // fc__start_clock keeps these hands
	fc__start_clock(&SIM_CLOCK, &SIM_PUB, &src, period_ns, 0);
	for (int i = 0; i < 100000 && !fc__start_done(&SIM_CLOCK); i++) {
		M.t += START_GAP;
		M.pump();
		(void)fc__read_slow_ns(&SIM_CLOCK, FC__MONO);
	}
	if (!fc__start_done(&SIM_CLOCK) || SIM_CLOCK.backend != FC_BACKEND_COUNTER) {
		r_.failures.push_back(std::string("the start-up did not reach the counter: ") + SIM_CLOCK.reason);
		return r_;
	}
	t_start = M.t;
	// Sparse readers re-anchor as the shipped library's do with no keeper: the chores (the NTP state's tick, the
	// bound's poll) at most once a second, the hands between stamped from their last results (windup.c)
	if (var.sparse)
		SIM_CLOCK.chores_max_age_ns = 1000000000;
	std::stable_sort(events.begin(), events.end(), [](const Event &a, const Event &b) { return a.at < b.at; });
	const long double end = t_start + duration;
	const long double settle = 20e6L + 8 * var.gap; // the rate history (8 re-anchors) has forgotten the fault
	// Start-up is not steady state: the rate rests on the frequency hint until the history fills.
	windows_.push_back(Window{t_start, t_start + settle, t_start, t_start, true, false});
	for (const Event &e : events)
		if (e.fault || e.blind_mono > 0 || e.blind_real > 0) {
			long double a = t_start + e.at;
			windows_.push_back(
				Window{a, a + e.dur + settle, a + e.blind_mono, a + e.blind_real, e.fault, e.bounded_sees});
		}
	for (size_t i = 0; i < events.size(); i++) {
		if (!events[i].fault)
			continue;
		long double e = end;
		for (size_t j = i + 1; j < events.size(); j++)
			if (events[j].fault) {
				e = t_start + events[j].at;
				break;
			}
		faults_.push_back(FaultTrack{t_start + events[i].at, e, -1, events[i].first_read});
	}

	const long double P = (long double)period_ns;
	long double next_read = M.t + var.gap * (var.sparse ? M.rng.uniform(0.9, 1.1) : M.rng.uniform(0.8, 1.2));
	long double next_upd = updater ? M.t + 0.75L * P : INF;
	next_event_ = 0;
	for (;;) {
		long double ne = next_event_ < events.size() ? t_start + events[next_event_].at : INF;
		long double tn = std::min(next_read, std::min(ne, next_upd));
		if (tn > end)
			break;
		if (M.t < tn)
			M.t = tn;
		M.pump();
		if (tn == ne) {
			const Event &e = events[next_event_++];
			e.fn(*this);
			if (e.fault) // measured from when the fault has taken effect (a suspend: from the resume)
				for (FaultTrack &f : faults_)
					if (f.at == tn)
						f.at = M.t;
			next_read += reader_pause_;
			reader_pause_ = 0;
			next_upd += updater_pause_;
			updater_pause_ = 0;
			continue;
		}
		if (tn == next_upd) {
			notify_step(); // the updater's periodic turn is the same call
			next_upd = M.t + 0.75L * P;
			continue;
		}
		sample();
		next_read = M.t + var.gap * (var.sparse ? M.rng.uniform(0.9, 1.1) : M.rng.uniform(0.8, 1.2));
	}
	M.pump();

	for (FaultTrack &f : faults_)
		if (f.last_bad >= 0)
			r_.reconv = std::max(r_.reconv, (double)(f.last_bad - f.at));
		else
			r_.reconv = std::max(r_.reconv, 0.0);
	r_.discontinuities = SIM_CLOCK.track.discontinuities;
	r_.real_steps = SIM_CLOCK.track.real_steps;
	r_.reanchors = SIM_CLOCK.reanchors;
	r_.waits = SIM_CLOCK.waits;
	check_targets(sc, var, r_);
	return r_;
}

void check_targets(const Scenario &sc, const Variant &v, Result &r)
{
	const Targets &t = sc.targets;
	char b[200];
	auto fail = [&](const char *fmt, double a, double lim) {
		snprintf(b, sizeof(b), fmt, a, lim);
		r.failures.push_back(b);
	};
	if (r.mono_violations)
		fail("%.0f monotonic violations (target %.0f)", (double)r.mono_violations, 0);
	if (t.disc_max >= 0 && r.discontinuities > (uint64_t)t.disc_max)
		fail("%.0f discontinuities (target at most %.0f)", (double)r.discontinuities, (double)t.disc_max);
	if (t.disc_min >= 0 && r.discontinuities < (uint64_t)t.disc_min)
		fail("%.0f discontinuities (target at least %.0f)", (double)r.discontinuities, (double)t.disc_min);
	if (t.adversarial) {
		if (r.sync_miss_mono + r.sync_miss_real)
			fail("%.0f bounded reads outside their tracking bound while SYNCHRONIZED (target %.0f)",
			     (double)(r.sync_miss_mono + r.sync_miss_real), 0);
		if (r.sync_utc_miss)
			fail("%.0f fc_real_bounded intervals missed true UTC while SYNCHRONIZED (target %.0f)",
			     (double)r.sync_utc_miss, 0);
		if (r.sync_n == 0)
			fail("%.0f synchronised reads judged (target > %.0f)", 0, 0);
		if (t.median_width >= 0 && !r.sync_widths.empty()) {
			std::vector<float> w = r.sync_widths;
			std::nth_element(w.begin(), w.begin() + (long)(w.size() / 2), w.end());
			if (w[w.size() / 2] > t.median_width)
				fail("median half-width %.0f ns > %.0f", w[w.size() / 2], t.median_width);
		}
		return;
	}
	const double extra = v.relaxed ? t.steady_relaxed_extra : 0;
	if (t.max_mono >= 0 && r.max_mono > t.max_mono + extra)
		fail("max |err| mono %.0f ns > %.0f", r.max_mono, t.max_mono + extra);
	if (t.max_real >= 0 && r.max_real > t.max_real + extra)
		fail("max |err| real %.0f ns > %.0f", r.max_real, t.max_real + extra);
	double steady = t.steady + extra;
	if (t.steady >= 0 && r.steady_max > steady)
		fail("steady-state max |err| %.0f ns > %.0f", r.steady_max, steady);
	const double reconv = std::max(t.reconv, t.reconv_reads * 1.2 * (double)v.gap);
	if (t.reconv >= 0 && r.reconv > reconv)
		fail("re-convergence %.0f ns > %.0f", r.reconv, reconv);
	if (t.first_read >= 0 && r.first_read > t.first_read)
		fail("first read after the fault |err| mono %.0f ns > %.0f", r.first_read, t.first_read);
	if (t.first_read_real >= 0 && r.first_read_real > t.first_read_real)
		fail("first read after the fault |err| real %.0f ns > %.0f", r.first_read_real, t.first_read_real);
	if (t.ratio >= 0 && r.steady_err > 0 && r.ratio_floor() > t.ratio)
		fail("steady-state bound / max(actual, half bracket) %.2f > %.2f", r.ratio_floor(), t.ratio);
	if (t.cover >= 0 && r.cover_pct_outside_blind() < t.cover)
		fail("bound holds at %.4f %% of samples (outside blind windows) < %.0f %%", r.cover_pct_outside_blind(),
		     t.cover);
	if (r.utc_miss > r.utc_miss_blind)
		fail("fc_real_bounded missed true UTC %.0f times outside blind windows (target %.0f)",
		     (double)(r.utc_miss - r.utc_miss_blind), 0);
	if (r.utc_miss_seen)
		fail("fc_real_bounded missed true UTC %.0f times while SYNCHRONIZED (or FREE_RUNNING) after a wall step "
		     "the kernel showed (target %.0f)",
		     (double)r.utc_miss_seen, 0);
	if (t.off_max >= 0 && r.off_reads)
		fail("%.0f plain reads off by more than %.0f ns outside blind windows (target 0)", (double)r.off_reads,
		     t.off_max);
}

} // namespace sim
