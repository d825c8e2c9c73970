/*
 * fastclock — may the counter be trusted? Fail closed.
 *
 * The rule (PRIOR_ART pitfall 1): use the counter only when the kernel itself keeps time with it (its current
 * clocksource is "tsc" on x86-64, "arch_sys_counter" on arm64) and, on x86-64, the CPU reports an invariant
 * TSC (CPUID 0x80000007 EDX bit 8: constant rate in all P-, C- and T-states). The kernel checks TSC
 * synchronisation across cores and demotes the clocksource (to hpet, acpi_pm, kvm-clock...) if it fails a
 * watchdog check, so following its choice inherits that check. clock.c repeats the test on the slow path
 * about once a second to follow a run-time demotion.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "internal.h"

#define CLOCKSOURCE_PATH "/sys/devices/system/clocksource/clocksource0/current_clocksource"

static int read_clocksource(char *cs, size_t cslen)
{
	/* FASTCLOCK_TEST_CLOCKSOURCE_FILE: tests point this at a file of their own to play a machine whose
	 * kernel uses another clocksource (never change the host's). */
	const char *path = getenv("FASTCLOCK_TEST_CLOCKSOURCE_FILE");
	FILE *f = fopen(path && *path ? path : CLOCKSOURCE_PATH, "re");
	size_t n;

	if (!f)
		return -1;
	n = fread(cs, 1, cslen - 1, f);
	fclose(f);
	cs[n] = 0;
	while (n > 0 && (cs[n - 1] == '\n' || cs[n - 1] == ' '))
		cs[--n] = 0;
	return n > 0 ? 0 : -1;
}

int fc_trust_check(char *why, size_t whylen, char *cs, size_t cslen)
{
	if (read_clocksource(cs, cslen) != 0) {
		snprintf(cs, cslen, "unknown");
		snprintf(why, whylen, "cannot read the kernel's current clocksource (" CLOCKSOURCE_PATH ")");
		return 0;
	}
#if defined(__x86_64__)
	if (strcmp(cs, "tsc") != 0) {
		snprintf(why, whylen, "kernel clocksource is '%s', not 'tsc': the kernel does not trust the TSC",
			 cs);
		return 0;
	}
	{
		unsigned a, b, c, d;
		if (!__get_cpuid(0x80000007, &a, &b, &c, &d) || !(d & (1u << 8))) {
			snprintf(why, whylen, "CPU does not report an invariant TSC (CPUID 0x80000007 EDX[8])");
			return 0;
		}
	}
	snprintf(why, whylen, "kernel clocksource is 'tsc' and the CPU reports an invariant TSC");
	return 1;
#elif defined(__aarch64__)
	if (strcmp(cs, "arch_sys_counter") != 0) {
		snprintf(why, whylen, "kernel clocksource is '%s', not 'arch_sys_counter'", cs);
		return 0;
	}
	snprintf(why, whylen, "kernel clocksource is 'arch_sys_counter' (CNTVCT_EL0)");
	return 1;
#else
	snprintf(why, whylen, "no user-readable counter on this architecture");
	return 0;
#endif
}
