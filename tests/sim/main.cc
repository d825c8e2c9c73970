// fc_sim: runs the scenario table over the simulated machine and prints a markdown table.
//   fc_sim                     every scenario, every reader variant
//   fc_sim --scenario NAME     one scenario (ctest runs each as sim_NAME)
//   fc_sim --list              names and one-line descriptions
//   fc_sim -v                  also print counters (re-anchors, discontinuities, waits, latency) and failures
// Exit status: 0 if every target of every run holds, 1 otherwise, 2 for a usage error.
#include <cstdio>
#include <cstring>
#include <string>

#include "sim.h"

using namespace sim;

static std::string ns(double v)
{
	char b[64];
	double a = v < 0 ? -v : v;
	if (v < 0 && v > -1.5)
		return "-";
	if (a < 1e3)
		snprintf(b, sizeof b, "%.0f ns", v);
	else if (a < 1e6)
		snprintf(b, sizeof b, "%.1f us", v / 1e3);
	else if (a < 1e9)
		snprintf(b, sizeof b, "%.2f ms", v / 1e6);
	else if (a < 3600e9)
		snprintf(b, sizeof b, "%.2f s", v / 1e9);
	else
		snprintf(b, sizeof b, "%.2f h", v / 3600e9);
	return b;
}

static std::string pct(double p)
{
	char b[32];
	if (p >= 100)
		return "100";
	snprintf(b, sizeof b, "%.3f", p);
	return b;
}

int main(int argc, char **argv)
{
	const char *only = nullptr;
	bool verbose = false, list = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--scenario") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
			verbose = true;
		else if (!strcmp(argv[i], "--list"))
			list = true;
		else {
			fprintf(stderr, "usage: %s [--scenario NAME] [--list] [-v]\n", argv[0]);
			return 2;
		}
	}
	if (list) {
		for (const Scenario &sc : scenarios())
			printf("%-22s %s\n", sc.name, sc.what);
		return 0;
	}
	bool found = false, ok = true;
	printf("| scenario | reads | max err mono | max err real | steady max | re-converge | mono viol | "
	       "bound cover %% (outside blind) | bound/actual (/half bracket) | result |\n");
	printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
	std::string notes;
	for (const Scenario &sc : scenarios()) {
		if (only && strcmp(only, sc.name))
			continue;
		found = true;
		for (const Variant &v : variants_for(sc)) {
			Run run(sc, v);
			Result r = run.go();
			char ratio[32];
			if (r.steady_err > 0)
				snprintf(ratio, sizeof ratio, "%.2f (%.2f)", r.ratio(), r.ratio_floor());
			else
				snprintf(ratio, sizeof ratio, "-");
			printf("| %s | %s | %s | %s | %s | %s | %llu | %s (%s) | %s | %s |\n", sc.name, v.name,
			       ns(r.max_mono).c_str(), ns(r.max_real).c_str(), ns(r.steady_max).c_str(),
			       ns(r.reconv).c_str(), (unsigned long long)r.mono_violations, pct(r.cover_pct()).c_str(),
			       pct(r.cover_pct_outside_blind()).c_str(), ratio, r.pass() ? "PASS" : "FAIL");
			ok &= r.pass();
			if (verbose || !r.pass()) {
				char b[512];
				snprintf(b, sizeof b,
					 "- %s %s: %llu samples, %llu re-anchors, %llu discontinuities, %llu wall steps, "
					 "%llu waits, longest read %s, first read after fault %s / %s, bound misses %llu "
					 "(%llu blind), UTC misses %llu\n",
					 sc.name, v.name, (unsigned long long)r.samples, (unsigned long long)r.reanchors,
					 (unsigned long long)r.discontinuities, (unsigned long long)r.real_steps,
					 (unsigned long long)r.waits, ns(r.max_latency).c_str(), ns(r.first_read).c_str(),
					 ns(r.first_read_real).c_str(), (unsigned long long)r.cover_miss,
					 (unsigned long long)r.cover_miss_blind, (unsigned long long)r.utc_miss);
				notes += b;
				for (const std::string &f : r.failures)
					notes += "  - FAIL: " + f + "\n";
			}
		}
	}
	if (!found) {
		fprintf(stderr, "no scenario named '%s' (try --list)\n", only);
		return 2;
	}
	if (!notes.empty())
		printf("\n%s", notes.c_str());
	return ok ? 0 : 1;
}
