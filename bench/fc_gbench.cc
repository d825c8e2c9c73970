// fc_gbench — the main clocks under Google Benchmark, as a cross-check of fc_bench with a familiar harness
// (one clock at a time, not interleaved: use fc_bench for the side-by-side figures).
#include <fastclock.h>
#include <fastclock.hpp>

#include <benchmark/benchmark.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <ctime>

static void BM_clock_gettime(benchmark::State &state, clockid_t id)
{
	struct timespec ts;
	for (auto _ : state) {
		clock_gettime(id, &ts);
		benchmark::DoNotOptimize(ts);
	}
}
BENCHMARK_CAPTURE(BM_clock_gettime, MONOTONIC, CLOCK_MONOTONIC);
BENCHMARK_CAPTURE(BM_clock_gettime, REALTIME, CLOCK_REALTIME);
BENCHMARK_CAPTURE(BM_clock_gettime, MONOTONIC_COARSE, CLOCK_MONOTONIC_COARSE);

static void BM_syscall_clock_gettime(benchmark::State &state)
{
	struct timespec ts;
	for (auto _ : state) {
		syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
		benchmark::DoNotOptimize(ts);
	}
}
BENCHMARK(BM_syscall_clock_gettime);

static void BM_std_steady_clock(benchmark::State &state)
{
	for (auto _ : state)
		benchmark::DoNotOptimize(std::chrono::steady_clock::now());
}
BENCHMARK(BM_std_steady_clock);

#define FC_BM(fn)                                                                                      \
	static void BM_##fn(benchmark::State &state)                                                   \
	{                                                                                              \
		fc_init();                                                                             \
		for (auto _ : state)                                                                   \
			benchmark::DoNotOptimize(fn());                                                \
	}                                                                                              \
	BENCHMARK(BM_##fn)->ThreadRange(1, 2)
FC_BM(fc_mono_ns);
FC_BM(fc_mono_ns_relaxed);
FC_BM(fc_real_ns);
FC_BM(fc_mono_coarse_ns);
FC_BM(fc_ticks);

static void BM_fastclock_steady_clock(benchmark::State &state)
{
	for (auto _ : state)
		benchmark::DoNotOptimize(fastclock::steady_clock::now());
}
BENCHMARK(BM_fastclock_steady_clock);

BENCHMARK_MAIN();
