/*
 * fc_bench — every clock side by side, in one run, interleaved.
 *
 * What a figure means: the cost of one call when calls are made back to back (throughput, as a logger or a
 * tracer makes them), in ns, measured as (clock_gettime(CLOCK_MONOTONIC) around a batch of N calls) / N. The
 * results of the calls are summed into a sink so the compiler cannot drop them. A batch is sized to take
 * about --batch-ms; the loop around the call (an add, a compare, a branch) is included, and shown alone as
 * "(empty loop)".
 *
 * Why interleaved rounds: on a shared machine the noise (a neighbour's build, a host that steals the CPU)
 * comes and goes over seconds. Each round measures every candidate once, in a rotated order, so a noisy
 * second hits all candidates alike; per candidate we report the median over rounds and its spread, and the
 * ratios are taken within each round (same noise) before their median is taken.
 *
 * Ratios: "x vDSO" = this / clock_gettime(CLOCK_MONOTONIC) through the vDSO; "x ctr" = this / the bare
 * counter read that gives the same ordering: lfence;rdtsc (isb;mrs on arm64) for ordered reads, plain rdtsc
 * (mrs) for relaxed, coarse and other reads.
 *
 * Thread scaling: aggregate calls per second of a few clocks with 1, 2, 4, ... N threads each calling in a
 * loop for --scale-ms; efficiency = throughput(n) / (n * throughput(1)). Readers of fastclock share no
 * written memory, so they should scale like the bare counter.
 */
#include <fastclock.h>
#include <fastclock.hpp>

#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#if FC_BENCH_HAVE_ABSL
#include <absl/time/clock.h>
#include <absl/time/time.h>
#endif

namespace {

/* ------------------------------------------------------------------------------------------------------
 * The candidates. Each is a struct with a static call() returning something that depends on the reading;
 * run_batch<C> is one out-of-line loop per candidate, so every candidate gets the same loop around it.
 */

#define BENCH_INLINE static inline __attribute__((always_inline))

BENCH_INLINE uint64_t ts_ns(const struct timespec &ts)
{
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct EmptyLoop {
	BENCH_INLINE uint64_t call()
	{
		uint64_t x = 1;
		__asm__ __volatile__("" : "+r"(x)); /* an opaque 1: keeps the loop a loop */
		return x;
	}
};

#if defined(__x86_64__)
#define CTR_RAW "rdtsc"
#define CTR_ORDERED "lfence;rdtsc"
struct CtrRaw {
	BENCH_INLINE uint64_t call()
	{
		uint32_t lo, hi;
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		return ((uint64_t)hi << 32) | lo;
	}
};
struct CtrOrdered {
	BENCH_INLINE uint64_t call()
	{
		uint32_t lo, hi;
		__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
		return ((uint64_t)hi << 32) | lo;
	}
};
struct CtrRdtscp {
	BENCH_INLINE uint64_t call()
	{
		uint32_t lo, hi, aux;
		__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux) : : "memory");
		return (((uint64_t)hi << 32) | lo) + aux;
	}
};
#elif defined(__aarch64__)
#define CTR_RAW "cntvct"
#define CTR_ORDERED "isb;cntvct"
struct CtrRaw {
	BENCH_INLINE uint64_t call()
	{
		uint64_t v;
		__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
		return v;
	}
};
struct CtrOrdered {
	BENCH_INLINE uint64_t call()
	{
		uint64_t v;
		__asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
		return v;
	}
};
#endif

template <clockid_t ID> struct Vdso {
	BENCH_INLINE uint64_t call()
	{
		struct timespec ts;
		clock_gettime(ID, &ts);
		return ts_ns(ts);
	}
};
struct SyscallMono {
	BENCH_INLINE uint64_t call()
	{
		struct timespec ts;
		syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
		return ts_ns(ts);
	}
};
struct Gettimeofday {
	BENCH_INLINE uint64_t call()
	{
		struct timeval tv;
		gettimeofday(&tv, NULL);
		return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
	}
};
struct Time {
	BENCH_INLINE uint64_t call() { return (uint64_t)time(NULL); }
};
struct StdSteady {
	BENCH_INLINE uint64_t call() { return (uint64_t)std::chrono::steady_clock::now().time_since_epoch().count(); }
};
struct StdSystem {
	BENCH_INLINE uint64_t call() { return (uint64_t)std::chrono::system_clock::now().time_since_epoch().count(); }
};
#if FC_BENCH_HAVE_ABSL
struct AbslNow {
	BENCH_INLINE uint64_t call() { return (uint64_t)absl::ToUnixNanos(absl::Now()); }
};
struct AbslNanos {
	BENCH_INLINE uint64_t call() { return (uint64_t)absl::GetCurrentTimeNanos(); }
};
#endif

struct FcMono {
	BENCH_INLINE uint64_t call() { return (uint64_t)fc_mono_ns(); }
};
struct FcMonoRelaxed {
	BENCH_INLINE uint64_t call() { return (uint64_t)fc_mono_ns_relaxed(); }
};
struct FcReal {
	BENCH_INLINE uint64_t call() { return (uint64_t)fc_real_ns(); }
};
struct FcRealRelaxed {
	BENCH_INLINE uint64_t call() { return (uint64_t)fc_real_ns_relaxed(); }
};
struct FcMonoCoarse {
	BENCH_INLINE uint64_t call() { return (uint64_t)fc_mono_coarse_ns(); }
};
struct FcRealCoarse {
	BENCH_INLINE uint64_t call() { return (uint64_t)fc_real_coarse_ns(); }
};
struct FcTicks {
	BENCH_INLINE uint64_t call() { return fc_ticks(); }
};
struct FcTicksRelaxed {
	BENCH_INLINE uint64_t call() { return fc_ticks_relaxed(); }
};
struct FcRealBounded {
	BENCH_INLINE uint64_t call()
	{
		struct fc_interval iv;
		fc_real_bounded(&iv);
		return (uint64_t)iv.earliest_ns + (uint64_t)iv.latest_ns + (uint64_t)iv.status;
	}
};
struct FcMonoBounded {
	BENCH_INLINE uint64_t call()
	{
		struct fc_interval iv;
		fc_mono_bounded(&iv);
		return (uint64_t)iv.earliest_ns + (uint64_t)iv.latest_ns + (uint64_t)iv.status;
	}
};
template <clockid_t ID> struct FcClockGettime {
	BENCH_INLINE uint64_t call()
	{
		struct timespec ts;
		fc_clock_gettime(ID, &ts);
		return ts_ns(ts);
	}
};
struct FcGettimeofday {
	BENCH_INLINE uint64_t call()
	{
		struct timeval tv;
		fc_gettimeofday(&tv, NULL);
		return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
	}
};
struct FcSteady {
	BENCH_INLINE uint64_t call() { return (uint64_t)fastclock::steady_clock::now().time_since_epoch().count(); }
};
struct FcSystem {
	BENCH_INLINE uint64_t call() { return (uint64_t)fastclock::system_clock::now().time_since_epoch().count(); }
};

template <class C> __attribute__((noinline)) uint64_t run_batch(uint64_t n)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < n; i++)
		s += C::call();
	return s;
}

enum Base { BASE_RAW, BASE_ORDERED };

struct Candidate {
	const char *name;
	const char *group;
	Base base; /* which bare counter read it is compared with */
	uint64_t (*batch)(uint64_t n);
	Candidate(const char *n, const char *g, Base b, uint64_t (*f)(uint64_t)) : name(n), group(g), base(b), batch(f) {}
	/* filled by the run */
	uint64_t calls = 0;
	std::vector<double> ns;            /* ns per call, one per round */
	std::vector<double> x_vdso, x_ctr; /* per-round ratios */
	std::vector<double> over_ctr;      /* per-round ns above the counter read */
};

#define CAND(name, group, base, type) Candidate{name, group, base, run_batch<type>}

std::vector<Candidate> make_candidates()
{
	std::vector<Candidate> c = {
		CAND("(empty loop)", "reference", BASE_RAW, EmptyLoop),
#if defined(__x86_64__) || defined(__aarch64__)
		CAND(CTR_RAW, "counter", BASE_RAW, CtrRaw),
		CAND(CTR_ORDERED, "counter", BASE_ORDERED, CtrOrdered),
#endif
#if defined(__x86_64__)
		CAND("rdtscp", "counter", BASE_ORDERED, CtrRdtscp),
#endif
		CAND("clock_gettime(MONOTONIC)", "vdso", BASE_ORDERED, Vdso<CLOCK_MONOTONIC>),
		CAND("clock_gettime(REALTIME)", "vdso", BASE_ORDERED, Vdso<CLOCK_REALTIME>),
		CAND("clock_gettime(MONOTONIC_COARSE)", "vdso", BASE_RAW, Vdso<CLOCK_MONOTONIC_COARSE>),
		CAND("clock_gettime(REALTIME_COARSE)", "vdso", BASE_RAW, Vdso<CLOCK_REALTIME_COARSE>),
		CAND("syscall(clock_gettime MONOTONIC)", "syscall", BASE_ORDERED, SyscallMono),
		CAND("gettimeofday", "vdso", BASE_ORDERED, Gettimeofday),
		CAND("time", "vdso", BASE_RAW, Time),
		CAND("std::chrono::steady_clock", "c++", BASE_ORDERED, StdSteady),
		CAND("std::chrono::system_clock", "c++", BASE_ORDERED, StdSystem),
#if FC_BENCH_HAVE_ABSL
		CAND("absl::Now", "absl", BASE_RAW, AbslNow),
		CAND("absl::GetCurrentTimeNanos", "absl", BASE_RAW, AbslNanos),
#endif
		CAND("fc_mono_ns", "fastclock", BASE_ORDERED, FcMono),
		CAND("fc_mono_ns_relaxed", "fastclock", BASE_RAW, FcMonoRelaxed),
		CAND("fc_real_ns", "fastclock", BASE_ORDERED, FcReal),
		CAND("fc_real_ns_relaxed", "fastclock", BASE_RAW, FcRealRelaxed),
		CAND("fc_mono_coarse_ns", "fastclock", BASE_RAW, FcMonoCoarse),
		CAND("fc_real_coarse_ns", "fastclock", BASE_RAW, FcRealCoarse),
		CAND("fc_ticks", "fastclock", BASE_ORDERED, FcTicks),
		CAND("fc_ticks_relaxed", "fastclock", BASE_RAW, FcTicksRelaxed),
		CAND("fc_real_bounded", "fastclock", BASE_ORDERED, FcRealBounded),
		CAND("fc_mono_bounded", "fastclock", BASE_ORDERED, FcMonoBounded),
		CAND("fc_clock_gettime(MONOTONIC)", "fastclock", BASE_ORDERED, FcClockGettime<CLOCK_MONOTONIC>),
		CAND("fc_clock_gettime(REALTIME)", "fastclock", BASE_ORDERED, FcClockGettime<CLOCK_REALTIME>),
		CAND("fc_gettimeofday", "fastclock", BASE_ORDERED, FcGettimeofday),
		CAND("fastclock::steady_clock::now", "fastclock", BASE_ORDERED, FcSteady),
		CAND("fastclock::system_clock::now", "fastclock", BASE_ORDERED, FcSystem),
	};
	return c;
}

/* The clocks of the thread-scaling table: fastclock's precise and coarse reads, their kernel counterparts,
 * and the bare ordered counter read as the hardware's own limit. */
struct ScaleCand {
	const char *name;
	uint64_t (*batch)(uint64_t n);
};
const ScaleCand kScaleCands[] = {
#if defined(__x86_64__) || defined(__aarch64__)
	{CTR_ORDERED, run_batch<CtrOrdered>},
#endif
	{"fc_mono_ns", run_batch<FcMono>},
	{"fc_real_ns", run_batch<FcReal>},
	{"clock_gettime(MONOTONIC)", run_batch<Vdso<CLOCK_MONOTONIC>>},
	{"fc_mono_coarse_ns", run_batch<FcMonoCoarse>},
	{"clock_gettime(MONOTONIC_COARSE)", run_batch<Vdso<CLOCK_MONOTONIC_COARSE>>},
};

/* ------------------------------------------------------------------------------------------------------
 * Helpers.
 */
volatile uint64_t g_sink; /* every batch's sum ends here */

int64_t now_ns()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Percentile with linear interpolation between order statistics (p in [0, 1]). */
double pct(std::vector<double> v, double p)
{
	if (v.empty())
		return NAN;
	std::sort(v.begin(), v.end());
	double pos = p * (double)(v.size() - 1);
	size_t i = (size_t)pos;
	if (i + 1 >= v.size())
		return v.back();
	return v[i] + (pos - (double)i) * (v[i + 1] - v[i]);
}
double median(const std::vector<double> &v) { return pct(v, 0.5); }

double time_batch_ns(uint64_t (*batch)(uint64_t), uint64_t n)
{
	int64_t t0 = now_ns();
	g_sink = g_sink + batch(n);
	int64_t t1 = now_ns();
	return (double)(t1 - t0);
}

/* Calls per batch so that one batch takes about target_ns: double n until a batch takes >= 1/8 of the
 * target (long enough that the two clock reads around it are noise), then scale; best of 3 at that size. */
uint64_t calibrate(uint64_t (*batch)(uint64_t), double target_ns)
{
	uint64_t n = 64;
	double t = time_batch_ns(batch, n);
	while (t < target_ns / 8 && n < (1ull << 40)) {
		n *= 2;
		t = time_batch_ns(batch, n);
	}
	double best = t;
	for (int i = 0; i < 2; i++)
		best = std::min(best, time_batch_ns(batch, n));
	double per = best / (double)n;
	uint64_t m = (uint64_t)(target_ns / (per > 0 ? per : 1e-3));
	return m < 64 ? 64 : m;
}

std::string read_first_line(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return "?";
	char buf[256] = "";
	if (!fgets(buf, sizeof buf, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

std::string cpu_model()
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return "?";
	char line[512];
	std::string r = "?";
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "model name", 10) == 0 || strncmp(line, "Model name", 10) == 0) {
			const char *p = strchr(line, ':');
			if (p) {
				r = p + 1 + strspn(p + 1, " \t");
				r.erase(r.find_last_not_of("\n ") + 1);
			}
			break;
		}
	}
	fclose(f);
	return r;
}

std::string json_str(const std::string &s)
{
	std::string o = "\"";
	for (char ch : s) {
		unsigned char c = (unsigned char)ch;
		if (c == '"' || c == '\\') {
			o += '\\';
			o += ch;
		} else if (c < 0x20) {
			char b[8];
			snprintf(b, sizeof b, "\\u%04x", c);
			o += b;
		} else {
			o += ch;
		}
	}
	return o + "\"";
}

std::string json_num(double v)
{
	if (!std::isfinite(v))
		return "null";
	char b[64];
	snprintf(b, sizeof b, "%.4f", v);
	return b;
}

std::string json_arr(const std::vector<double> &v)
{
	std::string o = "[";
	for (size_t i = 0; i < v.size(); i++)
		o += (i ? "," : "") + json_num(v[i]);
	return o + "]";
}

/* ------------------------------------------------------------------------------------------------------
 * Thread scaling.
 */
struct ScaleResult {
	const char *name;
	std::vector<int> threads;
	std::vector<std::vector<double>> rate;  /* [thread-count index][repetition] aggregate calls/s */
	std::vector<std::vector<double>> share; /* [thread-count index][repetition] mean CPU time / wall time */
};

int64_t thread_cpu_ns()
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* n threads call `batch` in chunks of 1024 until told to stop; each times its own run, and the aggregate
 * rate is the sum of the per-thread rates (threads start and stop a few us apart). *share is the threads'
 * mean CPU time / wall time: below 1 when other processes (or more threads than CPUs) took CPU time, so a
 * low efficiency can be told apart from contention in the clock itself. */
double scale_once(uint64_t (*batch)(uint64_t), int n, double run_ns, double *share)
{
	std::atomic<int> ready{0};
	std::atomic<bool> go{false}, stop{false};
	std::vector<double> rates((size_t)n, 0.0), shares((size_t)n, 0.0);
	std::vector<std::thread> th;
	for (int i = 0; i < n; i++) {
		th.emplace_back([&, i] {
			ready.fetch_add(1);
			while (!go.load(std::memory_order_acquire))
				;
			uint64_t calls = 0, s = 0;
			int64_t c0 = thread_cpu_ns(), t0 = now_ns();
			do {
				s += batch(1024);
				calls += 1024;
			} while (!stop.load(std::memory_order_relaxed));
			int64_t t1 = now_ns(), c1 = thread_cpu_ns();
			g_sink = g_sink + s;
			rates[(size_t)i] = (double)calls * 1e9 / (double)(t1 - t0);
			shares[(size_t)i] = (double)(c1 - c0) / (double)(t1 - t0);
		});
	}
	while (ready.load() < n)
		std::this_thread::yield();
	go.store(true, std::memory_order_release);
	std::this_thread::sleep_for(std::chrono::nanoseconds((int64_t)run_ns));
	stop.store(true);
	for (auto &t : th)
		t.join();
	double sum = 0, sh = 0;
	for (int i = 0; i < n; i++) {
		sum += rates[(size_t)i];
		sh += shares[(size_t)i];
	}
	*share = sh / n;
	return sum;
}

struct Options {
	int rounds = 21;
	double batch_ms = 10;
	int max_threads = -1; /* -1: online CPUs; 0: no scaling */
	int scale_reps = 5;
	double scale_ms = 100;
	bool quick = false, markdown = false, updater = false;
	const char *json = nullptr;
	const char *filter = nullptr;
};

void usage(FILE *f)
{
	fprintf(f,
		"usage: fc_bench [--rounds R] [--batch-ms MS] [--quick] [--threads N] [--scale-reps K]\n"
		"                [--scale-ms MS] [--updater] [--filter SUBSTR] [--json FILE] [--markdown] [--list]\n"
		"  --rounds R      interleaved rounds (default 21; --quick: 5)\n"
		"  --batch-ms MS   target duration of one batch of calls (default 10; --quick: 1)\n"
		"  --threads N     thread scaling with 1, 2, 4, ... N threads (default: online CPUs; 0: skip)\n"
		"  --scale-reps K  repetitions of each scaling point, median taken (default 5; --quick: 1)\n"
		"  --scale-ms MS   duration of each scaling point (default 100; --quick: 10)\n"
		"  --updater       run fastclock's updater thread during the measurements (default: off)\n"
		"  --filter S      only candidates whose name contains S (the vDSO and counter baselines stay)\n"
		"  --json FILE     also write every sample and summary as JSON\n"
		"  --markdown      also print the tables as markdown\n"
		"  --list          list the candidates and exit\n");
}

bool parse_num(const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi))
		return false;
	*out = v;
	return true;
}

} // namespace

int main(int argc, char **argv)
{
	Options o;
	bool rounds_set = false, batch_set = false, reps_set = false, sms_set = false, list = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		double v;
		auto need = [&](double lo, double hi) {
			if (i + 1 >= argc || !parse_num(argv[i + 1], lo, hi, &v)) {
				fprintf(stderr, "fc_bench: %s needs a number in [%g, %g]\n", a, lo, hi);
				exit(2);
			}
			i++;
		};
		if (!strcmp(a, "--rounds")) {
			need(1, 10000);
			o.rounds = (int)v;
			rounds_set = true;
		} else if (!strcmp(a, "--batch-ms")) {
			need(0.01, 10000);
			o.batch_ms = v;
			batch_set = true;
		} else if (!strcmp(a, "--threads")) {
			need(0, 4096);
			o.max_threads = (int)v;
		} else if (!strcmp(a, "--scale-reps")) {
			need(1, 1000);
			o.scale_reps = (int)v;
			reps_set = true;
		} else if (!strcmp(a, "--scale-ms")) {
			need(1, 100000);
			o.scale_ms = v;
			sms_set = true;
		} else if (!strcmp(a, "--quick")) {
			o.quick = true;
		} else if (!strcmp(a, "--updater")) {
			o.updater = true;
		} else if (!strcmp(a, "--markdown")) {
			o.markdown = true;
		} else if (!strcmp(a, "--list")) {
			list = true;
		} else if (!strcmp(a, "--json") && i + 1 < argc) {
			o.json = argv[++i];
		} else if (!strcmp(a, "--filter") && i + 1 < argc) {
			o.filter = argv[++i];
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "fc_bench: unknown or incomplete option '%s'\n", a);
			usage(stderr);
			return 2;
		}
	}
	if (o.quick) {
		if (!rounds_set)
			o.rounds = 5;
		if (!batch_set)
			o.batch_ms = 1;
		if (!reps_set)
			o.scale_reps = 1;
		if (!sms_set)
			o.scale_ms = 10;
	}
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;
	if (o.max_threads < 0)
		o.max_threads = (int)ncpu;

	std::vector<Candidate> all = make_candidates(), cands;
	for (auto &c : all) {
		bool base = !strcmp(c.name, "clock_gettime(MONOTONIC)") || !strcmp(c.group, "counter");
		if (!o.filter || base || strstr(c.name, o.filter))
			cands.push_back(c);
	}
	if (list) {
		for (auto &c : cands)
			printf("%-34s %s\n", c.name, c.group);
		return 0;
	}
	size_t i_vdso = SIZE_MAX, i_raw = SIZE_MAX, i_ord = SIZE_MAX;
	for (size_t i = 0; i < cands.size(); i++) {
		if (!strcmp(cands[i].name, "clock_gettime(MONOTONIC)"))
			i_vdso = i;
#if defined(CTR_RAW)
		if (!strcmp(cands[i].name, CTR_RAW))
			i_raw = i;
		if (!strcmp(cands[i].name, CTR_ORDERED))
			i_ord = i;
#endif
	}

	/* Start fastclock (lazy init would otherwise land in the first batch) and say what it runs on. */
	fc_init();
	if (o.updater && fc_updater_start(0) != 0)
		fprintf(stderr, "fc_bench: fc_updater_start failed: %s\n", strerror(errno));
	struct fc_status st0;
	fc_status(&st0);

	struct utsname un;
	uname(&un);
	std::string cpu = cpu_model(), clocksource =
		read_first_line("/sys/devices/system/clocksource/clocksource0/current_clocksource");

	printf("fc_bench: %d rounds x %zu candidates, ~%.3g ms per batch, interleaved (order rotated each round)\n",
	       o.rounds, cands.size(), o.batch_ms);
	printf("  ns/call of back-to-back calls, timed by clock_gettime(CLOCK_MONOTONIC) around each batch\n");
	printf("machine:   %s, %ld online CPUs, clocksource %s, %s %s, load average %s\n", cpu.c_str(), ncpu,
	       clocksource.c_str(), un.sysname, un.release, read_first_line("/proc/loadavg").c_str());
	printf("fastclock: backend %s (%s), counter %s at %.6f GHz (%s), period %.0f us, updater %s\n",
	       fc_backend_name(st0.backend), st0.reason, st0.counter, (double)st0.counter_hz / 1e9,
	       fc_freq_source_name(st0.freq_source), (double)st0.period_ns / 1e3, o.updater ? "on" : "off");
	if (st0.backend != FC_BACKEND_COUNTER)
		printf("NOTE: fastclock runs on the kernel backend here, so its rows measure clock_gettime plus a check\n");
	fflush(stdout);

	/* Warm up and size the batches. */
	double target = o.batch_ms * 1e6;
	for (auto &c : cands)
		c.calls = calibrate(c.batch, target);

	int64_t t_start = now_ns();
	size_t nc = cands.size();
	for (int r = 0; r < o.rounds; r++) {
		std::vector<double> t(nc);
		for (size_t k = 0; k < nc; k++) {
			size_t i = (k + (size_t)r) % nc;
			t[i] = time_batch_ns(cands[i].batch, cands[i].calls) / (double)cands[i].calls;
		}
		for (size_t i = 0; i < nc; i++) {
			Candidate &c = cands[i];
			c.ns.push_back(t[i]);
			if (i_vdso != SIZE_MAX)
				c.x_vdso.push_back(t[i] / t[i_vdso]);
			size_t b = c.base == BASE_ORDERED ? i_ord : i_raw;
			if (b != SIZE_MAX) {
				c.x_ctr.push_back(t[i] / t[b]);
				c.over_ctr.push_back(t[i] - t[b]);
			}
		}
	}
	double elapsed_s = (double)(now_ns() - t_start) / 1e9;

	/* The table. Every data row: name, group, then numbers only (the smoke test parses it). */
	printf("\n%-34s %-9s %8s %8s %8s %8s %6s %8s %8s %-12s %8s\n", "candidate", "group", "median", "min", "p25",
	       "p75", "IQR%", "x vDSO", "x ctr", "ctr base", "+ns ctr");
	for (auto &c : cands) {
		double med = median(c.ns), p25 = pct(c.ns, 0.25), p75 = pct(c.ns, 0.75);
		const char *bn = c.base == BASE_ORDERED ?
#if defined(CTR_ORDERED)
					  CTR_ORDERED : CTR_RAW;
#else
					  "-" : "-";
#endif
		printf("%-34s %-9s %8.2f %8.2f %8.2f %8.2f %5.1f%% %7.2fx %7.2fx %-12s %+8.2f\n", c.name, c.group, med,
		       *std::min_element(c.ns.begin(), c.ns.end()), p25, p75, 100 * (p75 - p25) / med, median(c.x_vdso),
		       median(c.x_ctr), bn, median(c.over_ctr));
	}
	printf("(end of table: %zu candidates, %.1f s; ns per call; x = median over rounds of the per-round ratio)\n",
	       nc, elapsed_s);

	/* Thread scaling. */
	std::vector<ScaleResult> sres;
	if (o.max_threads > 0) {
		std::vector<int> ns;
		for (int n = 1; n < o.max_threads; n *= 2)
			ns.push_back(n);
		ns.push_back(o.max_threads);
		for (auto &sc : kScaleCands) {
			ScaleResult res;
			res.name = sc.name;
			res.threads = ns;
			res.rate.assign(ns.size(), {});
			res.share.assign(ns.size(), {});
			sres.push_back(res);
		}
		/* Interleaved as above: each repetition runs every (clock, thread count) pair once. */
		for (int rep = 0; rep < o.scale_reps; rep++)
			for (size_t j = 0; j < ns.size(); j++)
				for (size_t k = 0; k < sres.size(); k++) {
					double sh;
					sres[k].rate[j].push_back(scale_once(kScaleCands[k].batch, ns[j], o.scale_ms * 1e6, &sh));
					sres[k].share[j].push_back(sh);
				}
		printf("\nthread scaling: aggregate Mcalls/s, median of %d x %.3g ms; eff = thr(n) / (n x thr(1));\n"
		       "  cpu = the threads' CPU time / wall time (below 1: other load, or more threads than CPUs)\n",
		       o.scale_reps, o.scale_ms);
		printf("%-34s", "clock");
		for (int n : ns)
			printf(" %9s%-3d %5s %4s", "threads=", n, "eff", "cpu");
		printf("\n");
		for (auto &s : sres) {
			printf("%-34s", s.name);
			double r1 = median(s.rate[0]);
			for (size_t j = 0; j < ns.size(); j++) {
				double r = median(s.rate[j]);
				printf(" %12.1f %5.2f %4.2f", r / 1e6, r / ((double)ns[j] * r1), median(s.share[j]));
			}
			printf("\n");
		}
		printf("load average after scaling: %s\n", read_first_line("/proc/loadavg").c_str());
		if (o.max_threads > ncpu)
			printf("(more threads than the %ld online CPUs: efficiency below 1 is expected)\n", ncpu);
	}

	struct fc_status st1;
	fc_status(&st1);
	printf("\nfastclock during the run: %" PRIu64 " re-anchors, %" PRIu64 " slow paths, %" PRIu64
	       " waits, backend %s\n",
	       st1.reanchors - st0.reanchors, st1.slow_paths - st0.slow_paths, st1.waits - st0.waits,
	       fc_backend_name(st1.backend));

	if (o.markdown) {
		printf("\n| clock | median ns/call | p25 – p75 | x vDSO MONOTONIC | x counter (base) |\n");
		printf("|---|---:|---:|---:|---:|\n");
		for (auto &c : cands) {
			const char *bn = c.base == BASE_ORDERED ?
#if defined(CTR_ORDERED)
						  CTR_ORDERED : CTR_RAW;
#else
						  "-" : "-";
#endif
			printf("| `%s` | %.2f | %.2f – %.2f | %.2f | %.2f (%s) |\n", c.name, median(c.ns), pct(c.ns, 0.25),
			       pct(c.ns, 0.75), median(c.x_vdso), median(c.x_ctr), bn);
		}
		if (!sres.empty()) {
			printf("\n| clock |");
			for (int n : sres[0].threads)
				printf(" %d thr: Mcalls/s (eff, cpu) |", n);
			printf("\n|---|");
			for (size_t j = 0; j < sres[0].threads.size(); j++)
				printf("---:|");
			printf("\n");
			for (auto &s : sres) {
				printf("| `%s` |", s.name);
				double r1 = median(s.rate[0]);
				for (size_t j = 0; j < s.threads.size(); j++) {
					double r = median(s.rate[j]);
					printf(" %.1f (%.2f, %.2f) |", r / 1e6, r / ((double)s.threads[j] * r1), median(s.share[j]));
				}
				printf("\n");
			}
		}
	}

	if (o.json) {
		FILE *f = fopen(o.json, "w");
		if (!f) {
			fprintf(stderr, "fc_bench: cannot write %s: %s\n", o.json, strerror(errno));
			return 1;
		}
		fprintf(f, "{\n  \"tool\": \"fc_bench\",\n  \"unit\": \"ns per call\",\n");
		fprintf(f, "  \"machine\": {\"cpu\": %s, \"online_cpus\": %ld, \"clocksource\": %s, \"kernel\": %s},\n",
			json_str(cpu).c_str(), ncpu, json_str(clocksource).c_str(), json_str(un.release).c_str());
		fprintf(f,
			"  \"fastclock\": {\"backend\": %s, \"reason\": %s, \"counter\": %s, \"counter_hz\": %" PRIu64
			", \"freq_source\": %s, \"period_ns\": %" PRId64 ", \"updater\": %s, \"reanchors\": %" PRIu64
			", \"slow_paths\": %" PRIu64 "},\n",
			json_str(fc_backend_name(st0.backend)).c_str(), json_str(st0.reason).c_str(),
			json_str(st0.counter).c_str(), st0.counter_hz, json_str(fc_freq_source_name(st0.freq_source)).c_str(),
			st0.period_ns, o.updater ? "true" : "false", st1.reanchors - st0.reanchors,
			st1.slow_paths - st0.slow_paths);
		fprintf(f, "  \"config\": {\"rounds\": %d, \"batch_ms\": %s, \"compiler\": %s},\n", o.rounds,
			json_num(o.batch_ms).c_str(), json_str(__VERSION__).c_str());
		fprintf(f, "  \"candidates\": [\n");
		for (size_t i = 0; i < nc; i++) {
			Candidate &c = cands[i];
			fprintf(f,
				"    {\"name\": %s, \"group\": %s, \"counter_base\": %s, \"calls_per_batch\": %" PRIu64
				", \"median\": %s, \"min\": %s, \"p25\": %s, \"p75\": %s, \"x_vdso\": %s, \"x_counter\": %s, "
				"\"over_counter_ns\": %s, \"rounds\": %s}%s\n",
				json_str(c.name).c_str(), json_str(c.group).c_str(),
				json_str(c.base == BASE_ORDERED ? "ordered" : "raw").c_str(), c.calls,
				json_num(median(c.ns)).c_str(), json_num(*std::min_element(c.ns.begin(), c.ns.end())).c_str(),
				json_num(pct(c.ns, 0.25)).c_str(), json_num(pct(c.ns, 0.75)).c_str(),
				json_num(median(c.x_vdso)).c_str(), json_num(median(c.x_ctr)).c_str(),
				json_num(median(c.over_ctr)).c_str(), json_arr(c.ns).c_str(), i + 1 < nc ? "," : "");
		}
		fprintf(f, "  ],\n  \"scaling\": {\"reps\": %d, \"ms\": %s, \"clocks\": [\n", o.scale_reps,
			json_num(o.scale_ms).c_str());
		for (size_t k = 0; k < sres.size(); k++) {
			ScaleResult &s = sres[k];
			fprintf(f, "    {\"name\": %s, \"points\": [", json_str(s.name).c_str());
			double r1 = median(s.rate[0]);
			for (size_t j = 0; j < s.threads.size(); j++) {
				double r = median(s.rate[j]);
				fprintf(f,
					"%s{\"threads\": %d, \"calls_per_s\": %s, \"efficiency\": %s, \"cpu_share\": %s, "
					"\"reps\": %s}",
					j ? ", " : "", s.threads[j], json_num(r).c_str(),
					json_num(r / ((double)s.threads[j] * r1)).c_str(), json_num(median(s.share[j])).c_str(),
					json_arr(s.rate[j]).c_str());
			}
			fprintf(f, "]}%s\n", k + 1 < sres.size() ? "," : "");
		}
		fprintf(f, "  ]}\n}\n");
		if (fclose(f) != 0) {
			fprintf(stderr, "fc_bench: writing %s failed\n", o.json);
			return 1;
		}
	}
	if (o.updater)
		fc_updater_stop();
	return 0;
}
