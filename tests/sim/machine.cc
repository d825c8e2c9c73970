// The simulated machine: counter, kernel clocks and NTP state as functions of true time (see sim.h).
#include <algorithm>
#include <cmath>

#include "sim.h"

fc_clock SIM_CLOCK;
fc_pub SIM_PUB;

namespace sim {

Machine M;

double Rng::normal()
{
	double u1 = uniform(), u2 = uniform();
	if (u1 < 1e-300)
		u1 = 1e-300;
	return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

int64_t Machine::kmono_floor(long double tt) const
{
	const long double k = kmono_at(tt);
	if (kernel_quantum > 0) // a coarse clocksource: the value steps every quantum (grid anchored at 0)
		return (int64_t)floorl(floorl(k / kernel_quantum) * kernel_quantum);
	return (int64_t)floorl(k);
}

void Machine::pump()
{
	if (in_async || async.empty())
		return;
	in_async = true;
	for (size_t i = 0; i < async.size();) {
		if (async[i].at <= t) {
			auto fn = std::move(async[i].fn);
			async.erase(async.begin() + (long)i);
			fn();
			i = 0;
		} else {
			i++;
		}
	}
	in_async = false;
}

uint64_t Machine::counter_value_at(long double tt) const
{
	long double c = floorl(counter_at(tt));
	// A 64-bit counter wraps at 2^64 (a narrower one at mask + 1, in the source). Converting a long double at
	// or above 2^64 to uint64_t is undefined: reduce first. long double's 64-bit mantissa holds
	// every integer below 2^64 exactly.
	const long double two64 = 18446744073709551616.0L;
	c = fmodl(c, two64);
	if (c < 0)
		c += two64;
	return (uint64_t)c & mask;
}

uint64_t Machine::read_counter(bool relaxed)
{
	pump();
	long double inst = t + counter_cost / 2;
	long double at = inst;
	if (relaxed && relaxed_early_max > 0 && c_rate > 0)
		at -= (long double)(rng.next() % (uint64_t)(relaxed_early_max + 1)) / c_rate;
	uint64_t v = counter_value_at(at);
	last_skewed = 0;
	if (skew_p > 0 && rng.uniform() < skew_p) {
		int lag = skew_lo + (int)(rng.next() % (uint64_t)(skew_hi - skew_lo + 1));
		v -= (uint64_t)lag;
		// The lagging core's kernel (its vDSO reads the same counter) shows the time of the lagging value:
		// judge the read against that, so what is measured is fastclock's handling, not the lag itself.
		if (c_rate > 0)
			inst -= lag / c_rate;
		last_skewed = 1;
	}
	t += counter_cost;
	last_instant = inst; // a relaxed read is judged at the instant the ordered read would have had
	counter_reads++;
	return v & mask;
}

int64_t Machine::coarse_at(long double tt, clockid_t id) const
{
	const long double tick = floorl(tt / tick_ns) * tick_ns;
	const int64_t k = kmono_floor(std::max(tick, tk0));
	return id == CLOCK_REALTIME_COARSE ? k + wall_off : k;
}

int64_t Machine::read_coarse(clockid_t id)
{
	pump();
	const int64_t v = coarse_at(t + coarse_cost / 2, id);
	t += coarse_cost;
	return v;
}

int Machine::read_kernel(clockid_t id, int64_t *ns)
{
	if (id == CLOCK_REALTIME_COARSE || id == CLOCK_MONOTONIC_COARSE) {
		*ns = read_coarse(id);
		return 0;
	}
	pump();
	long double before = 0, after = 0;
	if (preempt_p > 0 && rng.uniform() < preempt_p) {
		long double d = rng.uniform((double)preempt_lo, (double)preempt_hi);
		if (rng.uniform() < 0.5)
			before = d;
		else
			after = d;
	}
	if (id == CLOCK_REALTIME && disturb_real > 0) {
		if (disturb_real-- % 2)
			before += disturb_ns;
		else
			after += disturb_ns;
	}
	long double inst = t + before + kernel_cost * rng.uniform(kernel_frac_lo, kernel_frac_hi);
	t += before + kernel_cost + after;
	int64_t k = kmono_floor(inst);
	*ns = id == CLOCK_REALTIME ? k + wall_off : id == CLOCK_BOOTTIME ? k + boot_off : k;
	last_instant = inst;
	if (first_kernel_instant < 0)
		first_kernel_instant = inst;
	kernel_reads++;
	return 0;
}

long Machine::ntp_tick() const
{
	const long double slew = std::max(-500.0L, std::min(500.0L, k_slew_ppm));
	const long double f = (k_rate - 1) * 1e6L - slew; // ppm of nominal the tick and the frequency carry
	if (fabsl(f) <= 500)
		return 10000;
	return std::max(9000L, std::min(11000L, 10000 + (long)lroundl(f / 100)));
}

uint64_t counter_ordered() { return M.read_counter(false); }
uint64_t counter_relaxed() { return M.read_counter(true); }
int64_t wall_coarse() { return M.read_coarse(CLOCK_REALTIME_COARSE); }

static uint64_t src_counter(void *) { return M.read_counter(false); }
static int src_kernel(void *, clockid_t id, int64_t *ns) { return M.read_kernel(id, ns); }
static int src_ntp(void *, fc_ntp *out)
{
	fc__ntp_classify(0, M.ntp_status, M.ntp_maxerror_us, M.ntp_esterror_us, out);
	out->tick_us = M.ntp_tick();
	return out->sync;
}

const fc_source source_template = {src_counter, src_kernel, src_ntp, nullptr, ~0ull, nullptr};

} // namespace sim

// The library's sched_yield (read.c's wait for a writer): the simulation's, so a wait costs true time, not real
// system calls. The simulation has one thread: the writer it waits for is an asynchronous action (Machine::async).
extern "C" int sched_yield(void)
{
	sim::M.t += sim::M.yield_cost;
	return 0;
}
