/*
 * fastclock — may the counter be trusted? Fail closed.
 *
 * The rule (PRIOR_ART pitfall 1): use the counter only when the kernel itself keeps time with it (its current
 * clocksource is "tsc" on x86-64, "arch_sys_counter" on arm64) and, on x86-64, the CPU reports an invariant
 * TSC (CPUID 0x80000007 EDX bit 8: constant rate in all P-, C- and T-states). The kernel checks TSC
 * synchronisation across cores and demotes the clocksource (to hpet, acpi_pm, kvm-clock...) if it fails a
 * watchdog check, so following its choice inherits that check. windup.c repeats the test on the slow path
 * about once a second to follow a run-time demotion.
 *
 * Async-signal-safe: the check runs on whichever thread re-anchors, a signal handler included, so it reads
 * the file with open/read into the caller's buffer (opened by file.c's fc__file_open, as the bound sources' files,
 * async-signal-safe too) and builds its sentence with fc__str_cat (no stdio, no malloc, no getenv: the test
 * override is passed in once by the initialisation). The file is hostile until checked (docs/THREATS.md): an
 * administrator's mistake or a container may put anything at /sys, and a test's path anything at all.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "str.h"
#include "file.h"
#include "fmt.h"
#include "trust.h"

#define CLOCKSOURCE_PATH "/sys/devices/system/clocksource/clocksource0/current_clocksource"

static char g_path[256]; /* a test's clocksource file ("" : the kernel's) */
static int g_need_sysfs = 1; /* the file must be on sysfs (always for the kernel's; a test's: as it says) */

void fc__trust_set_path(const char *path, int need_sysfs)
{
	g_path[0] = 0;
	if (path)
		fc__str_cat(g_path, sizeof(g_path), path, (const char *)0);
	g_need_sysfs = g_path[0] ? need_sysfs : 1;
}

/* The clocksource's name into cs, or -1 with why naming what was wrong. The file is opened as a bound source's
 * (fc__file_open: looked at through O_PATH first, so a FIFO, a device or a directory at the path is never
 * opened, and no open waits; never through a symbolic link; a regular file that only root or its directory's
 * owner can have written), then kept only on sysfs (the kernel's word: /sys on something else, an administrator's
 * bind mount or a container's tmpfs, is anyone's) and only if it reads as a name (no NUL: "tsc\0hpet" is not
 * "tsc"). Read once, bounded by cs. */
static int read_clocksource(char *cs, size_t cslen, char *why, size_t whylen)
{
	const char *path = g_path[0] ? g_path : CLOCKSOURCE_PATH;
	char err[120] = "";
	struct fc_file_err fe = {err, sizeof(err), NULL, 0};
	struct stat st;
	struct statfs sf;
	ssize_t n;
	int fd, e;
	fd = fc__file_open(path, FC_OPEN_REG, &st, &fe);
	if (fd < 0) {
		fc__str_cat(why, whylen, "cannot read the kernel's current clocksource: ", err, (const char *)0);
		return -1;
	}
	/* fstatfs's errno named when it fails, "not on sysfs" only for a filesystem it named */
	e = !g_need_sysfs ? 0 : fstatfs(fd, &sf) != 0 ? errno : sf.f_type != FC_SYSFS_MAGIC ? -1 : 0;
	if (e) {
		fc__bfmt(why, whylen, "the kernel's current clocksource is not trusted: %.100s %s%s", path,
			 e < 0 ? "is not on sysfs" : "fstatfs: ", e < 0 ? "" : fc__errname(e));
		close(fd);
		return -1;
	}
	/* pread at 0, not read: a fork between the open and the read (a signal handler's, inside the writer) leaves
	 * parent and child on one open file, and the one that read second found its offset at the end: "empty", and
	 * the kernel backend for good (probe_fork_from_a_handler_inside_the_writer, 3 of 30 runs) */
	do
		n = pread(fd, cs, cslen - 1, 0);
	while (n < 0 && errno == EINTR);
	e = errno;
	close(fd);
	if (n > 0 && !memchr(cs, 0, (size_t)n)) {
		cs[n] = 0;
		while (n > 0 && (cs[n - 1] == '\n' || cs[n - 1] == ' '))
			cs[--n] = 0;
	}
	if (n <= 0 || memchr(cs, 0, (size_t)n)) {
		fc__bfmt(why, whylen, "cannot read the kernel's current clocksource (%.100s): %s", path,
			 n < 0 ? fc__errname(e) : n == 0 ? "empty" : "not a name (a NUL byte)");
		return -1;
	}
	return 0;
}

#if defined(__x86_64__)
/* CPUID 0x80000007 EDX[8], asked once per process: in a guest a CPUID is a VM exit (microseconds, against tens
 * of ns on bare metal) and the answer never changes. Every x86-64 CPU implements
 * the extended leaves up to 0x80000008 (long mode's address sizes), so the leaf is asked without first asking
 * the highest one (__get_cpuid would: a second exit). 0: not asked yet; 1: invariant; 2: not. Relaxed: a
 * race only asks twice. */
static int g_invariant;
static int invariant_tsc(void)
{
	int v = __atomic_load_n(&g_invariant, __ATOMIC_RELAXED);
	if (v == 0) {
		unsigned a, b, c, d;
		__cpuid(0x80000007, a, b, c, d);
		(void)a, (void)b, (void)c;
		v = (d & (1u << 8)) ? 1 : 2;
		__atomic_store_n(&g_invariant, v, __ATOMIC_RELAXED);
	}
	return v == 1;
}
#endif

int fc__trust_check(char *why, size_t whylen, char *cs, size_t cslen)
{
	why[0] = 0;
	if (read_clocksource(cs, cslen, why, whylen) != 0) {
		cs[0] = 0;
		fc__str_cat(cs, cslen, "unknown", (const char *)0);
		return 0;
	}
#if defined(__x86_64__)
	if (strcmp(cs, "tsc") != 0) {
		fc__str_cat(why, whylen, "kernel clocksource is '", cs, "', not 'tsc': the kernel does not trust the TSC",
			    (const char *)0);
		return 0;
	}
	{
		if (!invariant_tsc()) {
			fc__str_cat(why, whylen, "CPU does not report an invariant TSC (CPUID 0x80000007 EDX[8])",
				    (const char *)0);
			return 0;
		}
	}
	fc__str_cat(why, whylen, "kernel clocksource is 'tsc' and the CPU reports an invariant TSC", (const char *)0);
	return 1;
#elif defined(__aarch64__)
	if (strcmp(cs, "arch_sys_counter") != 0) {
		fc__str_cat(why, whylen, "kernel clocksource is '", cs, "', not 'arch_sys_counter'", (const char *)0);
		return 0;
	}
	fc__str_cat(why, whylen, "kernel clocksource is 'arch_sys_counter' (CNTVCT_EL0)", (const char *)0);
	return 1;
#else
	(void)cslen;
	fc__str_cat(why, whylen, "no user-readable counter on this architecture", (const char *)0);
	return 0;
#endif
}
