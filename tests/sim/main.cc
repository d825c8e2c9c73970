// fc_sim: runs the scenario table over the simulated machine and prints a markdown table.
//   fc_sim                     every scenario, every reader variant
//   fc_sim --scenario NAME     one scenario (ctest runs each as sim_NAME); an adversarial family name
//                              (adv_steps) runs it at every period (adv_steps@1us ... adv_steps@1s)
//   fc_sim --adversarial       the adversarial suite only, with its own table
//   fc_sim --list              names and one-line descriptions
//   fc_sim -v                  also print counters (re-anchors, discontinuities, waits, latency) and failures
// Exit status: 0 if every target of every run holds, 1 otherwise, 2 for a usage error.
#include <algorithm>
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
	bool verbose = false, list = false, adv_only = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--scenario") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
			verbose = true;
		else if (!strcmp(argv[i], "--list"))
			list = true;
		else if (!strcmp(argv[i], "--adversarial"))
			adv_only = true;
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
	auto selected = [&](const Scenario &sc) {
		if (adv_only && !sc.period_ns)
			return false;
		if (!only)
			return true;
		size_t n = strlen(only);
		return !strcmp(only, sc.name) || (!strncmp(only, sc.name, n) && sc.name[n] == '@');
	};
	bool found = false, ok = true;
	std::string adv;
	if (!adv_only)
		printf("| scenario | reads | max err mono | max err real | steady max | re-converge | mono viol | "
	       "bound cover %% (outside blind) | bound/actual (/half bracket) | result |\n");
	if (!adv_only)
		printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
	std::string notes;
	for (const Scenario &sc : scenarios()) {
		if (!selected(sc))
			continue;
		found = true;
		for (const Variant &v : variants_for(sc)) {
			Run run(sc, v);
			Result r = run.go();
			if (sc.period_ns) {
				// The adversarial table: misses while synchronised, and the interval's width.
				std::vector<float> w = r.sync_widths;
				double med = 0, worst = 0;
				if (!w.empty()) {
					std::nth_element(w.begin(), w.begin() + (long)(w.size() / 2), w.end());
					med = w[w.size() / 2];
					worst = *std::max_element(w.begin(), w.end());
				}
				char b[512];
				snprintf(b, sizeof b,
					 "| %s | %s | %llu | %llu | %llu / %llu / %llu | %llu | %s | %s | %s | %.3f | %s |\n",
					 sc.name, v.name, (unsigned long long)r.sync_n, (unsigned long long)r.disrupted_n,
					 (unsigned long long)r.sync_miss_mono, (unsigned long long)r.sync_miss_real,
					 (unsigned long long)r.sync_utc_miss, (unsigned long long)r.exempt_n,
					 ns(r.sync_max_err).c_str(), ns(med).c_str(), ns(worst).c_str(),
					 r.sync_worst_ratio, r.pass() ? "PASS" : "FAIL");
				adv += b;
				ok &= r.pass();
				if (verbose && r.rate_changes) {
					std::vector<int> l = r.rate_lag;
					std::sort(l.begin(), l.end());
					char c[256];
					snprintf(c, sizeof c,
						 "- %s %s: %llu kernel rate changes, %zu settled; re-anchors until "
						 "the rate estimate is within 10 ppm: median %d, max %d (an "
						 "adjtimex read at every re-anchor: 1)\n",
						 sc.name, v.name, (unsigned long long)r.rate_changes, l.size(),
						 l.empty() ? 0 : l[l.size() / 2], l.empty() ? 0 : l.back());
					notes += c;
				}
				if (!r.pass()) {
					notes += "- " + std::string(sc.name) + " " + v.name + ":\n";
					for (const std::string &f : r.failures)
						notes += "  - FAIL: " + f + "\n";
				}
				continue;
			}
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
	if (!adv.empty())
		printf("%s| scenario | reads | judged reads (not DISRUPTED) | DISRUPTED reads | misses mono / real / UTC | "
		       "reads not judged (unannounced step, resume) | max |err| | median half-width | worst half-width | "
		       "worst |err| / half-width | result |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n%s",
		       adv_only ? "" : "\n", adv.c_str());
	if (!notes.empty())
		printf("\n%s", notes.c_str());
	return ok ? 0 : 1;
}
