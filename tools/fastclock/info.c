/*
 * fastclock info — what this machine's clocks are made of, in well under a second.
 *
 * Sources: /sys/devices/system/clocksource/clocksource0 (the kernel's clocksource), /proc/cpuinfo (TSC
 * flags, hypervisor), CPUID (x86: invariant TSC, hypervisor vendor), /sys/hypervisor and DMI (VM), adjtimex
 * (NTP), /proc/<pid>/comm (which daemon disciplines the clock), /proc/self/timens_offsets (time namespace)
 * and fc_status() (fastclock's backend). The vDSO status of each clock id is MEASURED, not guessed: the
 * libc call is timed against syscall(SYS_clock_gettime) for the same id; a libc call that costs at least
 * SYSCALL_LIKE of the raw syscall is itself a syscall (the vDSO fell back: no vDSO for that id, or a
 * clocksource the vDSO cannot read).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <fastclock.h>

#include "cli.h"
#include "clocks.h"

#ifndef CLOCK_TAI
#define CLOCK_TAI 11
#endif

#define SYSCALL_LIKE 0.6 /* a vDSO read costs ~5-20% of a syscall; a fallback costs >= 100% */
#define VDSO_CALLS 64    /* calls per timed batch */
#define VDSO_BATCHES 7   /* median of 7: robust to one preemption */

static const char info_help[] =
	"usage: fastclock info [--json]\n"
	"\n"
	"Describe this machine's clocks: the kernel clocksource (current and available), the CPU's TSC flags,\n"
	"the counter frequency and where it came from, whether this is a VM and which hypervisor clock it\n"
	"offers, the vDSO status of each clock id (measured against the raw syscall), the NTP state (adjtimex,\n"
	"and which daemon runs), time-namespace offsets, fastclock's backend and why, and a recommendation.\n"
	"\n"
	"  --json    one JSON document on stdout (schema: share/fastclock/bench.schema.json, \"info\")\n";

struct vdso_row {
	const char *name;
	clockid_t id;
	int ok;             /* clock_getres succeeded (the kernel knows the id) */
	double getres_ns;
	double libc_ns, sys_ns;
	int is_syscall;
};

struct info {
	char cs[64], avail[256];
	/* cpu */
	int have_flags;
	int f_tsc, f_constant, f_nonstop, f_known_freq, f_rdtscp, f_reliable, f_hypervisor, f_tsc_adjust;
	int cpuid_invariant; /* -1 unknown */
	char cpu_model[128];
	/* vm */
	char hv_vendor[32], hv_sys[64], dmi_vendor[128], dmi_product[128];
	char hv_clocks[160];
	int is_vm;
	/* vdso */
	int vdso_mapped;
	struct vdso_row rows[12];
	int nrows;
	double gtod_libc_ns, gtod_sys_ns, time_libc_ns;
	double fc_mono_cost_ns;
	int coarse_checked;       /* with its keeper, this process's coarse reads are: 0 one load, 1 checked, -1 unknown */
	double fc_coarse_cost_ns; /* fc_mono_coarse_ns with that keeper running */
	/* ntp */
	int adj_ok, adj_state, adj_errno;
	struct timex tx;
	char daemons[160];
	/* timens */
	int timens_present;
	long long timens_mono_s, timens_mono_ns, timens_boot_s, timens_boot_ns;
	/* fastclock */
	struct fc_status st;
	char rec[2048];
};

static int has_word(const char *list, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = list; (p = strstr(p, w)) != NULL; p += n) {
		int start = p == list || isspace((unsigned char)p[-1]);
		int end = p[n] == '\0' || isspace((unsigned char)p[n]);
		if (start && end)
			return 1;
	}
	return 0;
}

static void read_cpuinfo(struct info *in)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		if (!in->cpu_model[0] && (!strncmp(line, "model name", 10) || !strncmp(line, "Model", 5))) {
			snprintf(in->cpu_model, sizeof(in->cpu_model), "%s", colon + 2);
			in->cpu_model[strcspn(in->cpu_model, "\n")] = 0;
		}
		if (!in->have_flags && (!strncmp(line, "flags", 5) || !strncmp(line, "Features", 8))) {
			const char *fl = colon + 1;
			in->have_flags = 1;
			in->f_tsc = has_word(fl, "tsc");
			in->f_constant = has_word(fl, "constant_tsc");
			in->f_nonstop = has_word(fl, "nonstop_tsc");
			in->f_known_freq = has_word(fl, "tsc_known_freq");
			in->f_rdtscp = has_word(fl, "rdtscp");
			in->f_reliable = has_word(fl, "tsc_reliable");
			in->f_hypervisor = has_word(fl, "hypervisor");
			in->f_tsc_adjust = has_word(fl, "tsc_adjust");
		}
	}
	free(line);
	fclose(f);
}

static void read_cpuid(struct info *in)
{
	in->cpuid_invariant = -1;
#if defined(__x86_64__)
	{
		unsigned a, b, c, d;
		if (__get_cpuid(0x80000000, &a, &b, &c, &d) && a >= 0x80000007 &&
		    __get_cpuid(0x80000007, &a, &b, &c, &d))
			in->cpuid_invariant = (d >> 8) & 1;
		if (__get_cpuid(1, &a, &b, &c, &d) && ((c >> 31) & 1)) {
			/* Hypervisor present: leaf 0x40000000 carries the vendor signature in EBX, ECX, EDX. */
			__cpuid(0x40000000, a, b, c, d);
			memcpy(in->hv_vendor, &b, 4);
			memcpy(in->hv_vendor + 4, &c, 4);
			memcpy(in->hv_vendor + 8, &d, 4);
			in->hv_vendor[12] = 0;
			for (int i = 0; i < 12; i++)
				if (!isprint((unsigned char)in->hv_vendor[i]))
					in->hv_vendor[i] = ' ';
		}
	}
#endif
}

static const char *hv_name(const char *sig)
{
	static const struct {
		const char *sig, *name;
	} t[] = {{"KVMKVMKVM", "KVM"},       {"Microsoft Hv", "Hyper-V"}, {"VMwareVMware", "VMware"},
		 {"XenVMMXenVMM", "Xen HVM"}, {"TCGTCGTCGTCG", "QEMU TCG"}, {"VBoxVBoxVBox", "VirtualBox"},
		 {"bhyve bhyve ", "bhyve"},   {"ACRNACRNACRN", "ACRN"},    {" lrpepyh  vr", "Parallels"},
		 {"QNXQVMBSQG", "QNX"},       {"Linux KVM Hv", "KVM (Hyper-V enlightened)"}};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strncmp(sig, t[i].sig, strlen(t[i].sig)))
			return t[i].name;
	return sig;
}

static void read_vm(struct info *in)
{
	static const char *const hv_cs[] = {"kvm-clock", "hyperv_clocksource_tsc_page", "hyperv_clocksource_msr",
					    "xen", "vmware-tsc", "pvclock"};
	cli_read_line("/sys/hypervisor/type", in->hv_sys, sizeof(in->hv_sys));
	cli_read_line("/sys/class/dmi/id/sys_vendor", in->dmi_vendor, sizeof(in->dmi_vendor));
	cli_read_line("/sys/class/dmi/id/product_name", in->dmi_product, sizeof(in->dmi_product));
	in->hv_clocks[0] = 0;
	for (size_t i = 0; i < sizeof(hv_cs) / sizeof(hv_cs[0]); i++)
		if (has_word(in->avail, hv_cs[i])) {
			if (in->hv_clocks[0])
				strncat(in->hv_clocks, " ", sizeof(in->hv_clocks) - strlen(in->hv_clocks) - 1);
			strncat(in->hv_clocks, hv_cs[i], sizeof(in->hv_clocks) - strlen(in->hv_clocks) - 1);
		}
	in->is_vm = in->f_hypervisor || in->hv_vendor[0] || in->hv_sys[0] || in->hv_clocks[0] ||
		    strstr(in->dmi_product, "Virtual") || strstr(in->dmi_vendor, "QEMU") ||
		    strstr(in->dmi_product, "KVM") || strstr(in->dmi_vendor, "VMware") ||
		    strstr(in->dmi_vendor, "Amazon EC2") || strstr(in->dmi_vendor, "Google");
}

/* ---- vDSO, measured ---- */
/* The probes, each inlined into its own batch loop as `fastclock bench` does (clocks.h); the clock id is read
 * from probe_id, set before each measurement. */
static clockid_t probe_id;

static inline int64_t probe_libc(void)
{
	struct timespec ts;
	clock_gettime(probe_id, &ts);
	return ts.tv_nsec;
}

static inline int64_t probe_sys(void)
{
	struct timespec ts;
	syscall(SYS_clock_gettime, probe_id, &ts);
	return ts.tv_nsec;
}

static inline int64_t probe_gtod(int raw)
{
	struct timeval tv;
	if (raw)
		syscall(SYS_gettimeofday, &tv, NULL);
	else
		gettimeofday(&tv, NULL);
	return tv.tv_usec;
}

FCB_DEFINE(libc, probe_libc())
FCB_DEFINE(sys, probe_sys())
FCB_DEFINE(gtod_libc, probe_gtod(0))
FCB_DEFINE(gtod_sys, probe_gtod(1))
FCB_DEFINE(time, time(NULL))
FCB_DEFINE(fc_mono, fc_mono_ns())
FCB_DEFINE(fc_coarse, fc_mono_coarse_ns())

/* Median over VDSO_BATCHES batches of VDSO_CALLS calls: the engine's batch timing (bench_batch_median). */
static double cost_of(void (*batch)(long n), clockid_t id)
{
	probe_id = id;
	return bench_batch_median(batch, VDSO_CALLS, VDSO_BATCHES);
}

/* The keeper's policy once it has run: -1 while no thread of this process is named "fastclock" (src/updater.c
 * names it at its first run), else 1 if it runs SCHED_FIFO, 0 if not. /proc/self/task: this process's few
 * threads (field 41 of stat is the policy). */
static int keeper_fifo(void)
{
	int found = -1;
	struct dirent *e;
	DIR *d = opendir("/proc/self/task");
	while (d && found < 0 && (e = readdir(d)) != NULL) {
		char path[300], buf[512], *p;
		FILE *f;
		int field = 2;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%.20s/stat", e->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fgets(buf, sizeof(buf), f) && strstr(buf, "(fastclock)") && (p = strrchr(buf, ')')) != NULL)
			for (char *q = p + 1; *q; q++)
				if (*q == ' ' && ++field == 41) {
					found = atoi(q + 1) == 1 /* SCHED_FIFO */;
					break;
				}
		fclose(f);
	}
	if (d)
		closedir(d);
	return found;
}

static void measure_vdso(struct info *in)
{
	static const struct {
		const char *name;
		clockid_t id;
	} ids[] = {{"REALTIME", CLOCK_REALTIME},
		   {"MONOTONIC", CLOCK_MONOTONIC},
		   {"MONOTONIC_RAW", CLOCK_MONOTONIC_RAW},
		   {"BOOTTIME", CLOCK_BOOTTIME},
		   {"TAI", CLOCK_TAI},
		   {"REALTIME_COARSE", CLOCK_REALTIME_COARSE},
		   {"MONOTONIC_COARSE", CLOCK_MONOTONIC_COARSE},
		   {"PROCESS_CPUTIME_ID", CLOCK_PROCESS_CPUTIME_ID},
		   {"THREAD_CPUTIME_ID", CLOCK_THREAD_CPUTIME_ID}};
	in->vdso_mapped = getauxval(AT_SYSINFO_EHDR) != 0;
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		struct vdso_row *r = &in->rows[in->nrows++];
		struct timespec res;
		r->name = ids[i].name;
		r->id = ids[i].id;
		r->ok = clock_getres(r->id, &res) == 0;
		r->getres_ns = r->ok ? (double)res.tv_sec * 1e9 + (double)res.tv_nsec : NAN;
		if (!r->ok)
			continue;
		cost_of(fcb_batch_libc, r->id); /* warm up: the first call may fault the vDSO data page in */
		r->libc_ns = cost_of(fcb_batch_libc, r->id);
		r->sys_ns = cost_of(fcb_batch_sys, r->id);
		r->is_syscall = r->libc_ns >= SYSCALL_LIKE * r->sys_ns;
	}
	in->gtod_libc_ns = cost_of(fcb_batch_gtod_libc, 0);
	in->gtod_sys_ns = cost_of(fcb_batch_gtod_sys, 0);
	in->time_libc_ns = cost_of(fcb_batch_time, 0);
	fc_mono_ns();
	in->fc_mono_cost_ns = cost_of(fcb_batch_fc_mono, 0);
	/* The coarse clocks as this process gets them: a keeper started (and stopped) here. It is SCHED_FIFO where
	 * the process may, and coarse reads are one load (fc_coarse_one_load); otherwise they are checked
	 * against the kernel's coarse clock (src/updater.c). Another process may have other privileges. */
	in->coarse_checked = -1;
	in->fc_coarse_cost_ns = NAN;
	if (fc_updater_start(0) == 0) {
		/* The keeper stores its first value at its own first run, which comes when the scheduler lets it: wait
		 * for it to have run (named, and a FIFO one's value kept), 1 s at most. */
		int fifo = -1;
		for (int i = 0; i < 10000 && ((fifo = keeper_fifo()) < 0 || (fifo && !fc_coarse_one_load())); i++) {
			const struct timespec ts = {0, 100000};
			nanosleep(&ts, NULL);
		}
		in->coarse_checked = fifo < 0 ? -1 : !fc_coarse_one_load();
		in->fc_coarse_cost_ns = cost_of(fcb_batch_fc_coarse, 0);
		fc_updater_stop();
	}
}

/* ---- NTP ---- */
static void read_ntp(struct info *in)
{
	static const char *const known[] = {"chronyd", "ntpd", "systemd-timesyn", "openntpd", "ptp4l", "phc2sys",
					    "timemaster", "ntpdate", "sntp", "vmtoolsd", "qemu-ga", "hv_utils"};
	DIR *d;
	struct dirent *e;
	memset(&in->tx, 0, sizeof(in->tx));
	in->tx.modes = 0;
	errno = 0;
	in->adj_state = adjtimex(&in->tx);
	in->adj_ok = in->adj_state >= 0;
	in->adj_errno = in->adj_ok ? 0 : errno;
	in->daemons[0] = 0;
	d = opendir("/proc");
	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		char path[300], comm[64];
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if (cli_read_line(path, comm, sizeof(comm)))
			continue;
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
			if (strcmp(comm, known[i]) != 0)
				continue;
			if (!strcmp(comm, "systemd-timesyn"))
				strcpy(comm, "systemd-timesyncd");
			if (!has_word(in->daemons, comm)) {
				if (in->daemons[0])
					strncat(in->daemons, " ", sizeof(in->daemons) - strlen(in->daemons) - 1);
				strncat(in->daemons, comm, sizeof(in->daemons) - strlen(in->daemons) - 1);
			}
		}
	}
	closedir(d);
}

static const char *adj_state_name(int s)
{
	switch (s) {
	case TIME_OK:
		return "TIME_OK";
	case TIME_INS:
		return "TIME_INS (leap second to insert)";
	case TIME_DEL:
		return "TIME_DEL (leap second to delete)";
	case TIME_OOP:
		return "TIME_OOP (leap second in progress)";
	case TIME_WAIT:
		return "TIME_WAIT (leap second just happened)";
	case TIME_ERROR:
		return "TIME_ERROR (clock not synchronised)";
	default:
		return "unknown";
	}
}

static int ntp_synced(const struct info *in)
{
	return in->adj_ok && in->adj_state != TIME_ERROR && !(in->tx.status & STA_UNSYNC);
}

static void read_timens(struct info *in)
{
	char line[128];
	FILE *f = fopen("/proc/self/timens_offsets", "r");
	if (!f)
		return;
	in->timens_present = 1;
	while (fgets(line, sizeof(line), f)) {
		char name[32];
		long long s, ns;
		if (sscanf(line, "%31s %lld %lld", name, &s, &ns) != 3)
			continue;
		if (!strcmp(name, "monotonic") || !strcmp(name, "1")) {
			in->timens_mono_s = s;
			in->timens_mono_ns = ns;
		} else if (!strcmp(name, "boottime") || !strcmp(name, "7")) {
			in->timens_boot_s = s;
			in->timens_boot_ns = ns;
		}
	}
	fclose(f);
}

static const struct vdso_row *row(const struct info *in, const char *name)
{
	for (int i = 0; i < in->nrows; i++)
		if (!strcmp(in->rows[i].name, name))
			return &in->rows[i];
	return NULL;
}

/* ---- recommendation ---- */
static void add(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	size_t len = strlen(buf);
	if (len >= n - 1)
		return;
	va_start(ap, fmt);
	/* clang-analyzer reports ap as uninitialised here: a known false positive (va_start is just above). */
	vsnprintf(buf + len, n - len, fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized)
	va_end(ap);
}

static void recommend(struct info *in)
{
	const struct vdso_row *mono = row(in, "MONOTONIC"), *coarse = row(in, "MONOTONIC_COARSE");
	char *b = in->rec;
	size_t n = sizeof(in->rec);
	int counter_ok = in->st.backend == FC_BACKEND_COUNTER;
	int invariant = in->cpuid_invariant == 1 || (in->f_constant && in->f_nonstop);
	b[0] = 0;
	if (mono && mono->is_syscall)
		add(b, n,
		    "clock_gettime(CLOCK_MONOTONIC) is a system call here (%.0f ns, as much as the raw syscall's %.0f "
		    "ns): the kernel's clocksource '%s' cannot be read from user space, so every clock read enters the "
		    "kernel. ",
		    mono->libc_ns, mono->sys_ns, in->cs);
	else if (mono)
		add(b, n, "clock_gettime(CLOCK_MONOTONIC) is served by the vDSO (%.0f ns vs %.0f ns for the syscall). ",
		    mono->libc_ns, mono->sys_ns);
	if (counter_ok) {
		add(b, n,
		    "fastclock uses the %s counter (%s), so fc_mono_ns()/fc_real_ns() cost about %.0f ns per read "
		    "and agree with the kernel at every re-anchor; use them (or fastclock::steady_clock) in hot paths, "
		    "fc_mono_ns_relaxed() for durations measured in one thread, and fc_real_bounded() where you need "
		    "an honest error bound. ",
		    in->st.counter, in->st.reason, in->fc_mono_cost_ns);
	} else {
		add(b, n, "fastclock falls back to clock_gettime (%s). ", in->st.reason);
		if (in->f_tsc && invariant && strcmp(in->cs, "tsc") != 0 && has_word(in->avail, "tsc"))
			add(b, n,
			    "The CPU has an invariant TSC and the kernel lists 'tsc' as available: if this host's TSC "
			    "is stable (the kernel's watchdog agrees), switching the clocksource to tsc (echo tsc > "
			    "/sys/devices/system/clocksource/clocksource0/current_clocksource, or tsc=reliable "
			    "clocksource=tsc on the kernel command line) makes both the vDSO and fastclock's counter "
			    "path available. ");
		else if (in->f_tsc && !invariant)
			add(b, n, "The TSC is not invariant on this CPU, so no user-space counter can be trusted; keep "
				  "clock_gettime. ");
	}
	if (in->is_vm && !strcmp(in->cs, "tsc") && !in->f_known_freq)
		add(b, n, "In this VM the TSC frequency is not announced by the hypervisor (no tsc_known_freq); "
			  "after a live migration the rate may change, which fastclock detects and re-tracks. ");
	if (!ntp_synced(in))
		add(b, n,
		    "The kernel reports its wall clock as not synchronised%s: CLOCK_REALTIME (and fc_real_ns) may "
		    "be off by seconds; fc_real_bounded() reports this as %s. ",
		    in->daemons[0] ? "" : " and no time daemon was found", fc_sync_name(in->st.sync_status));
	if (coarse && coarse->ok && coarse->getres_ns >= 1e6 && in->coarse_checked == 0)
		add(b, n,
		    "The kernel's coarse clocks tick every %.0f ms (%.1f ns a read); fc_mono_coarse_ns() costs %.1f ns "
		    "here and is at most one re-anchor period (%.0f us) old: its updater thread (started by a coarse "
		    "read 1 ms or more after the first, or by fc_updater_start()) runs SCHED_FIFO in this process. A process without "
		    "RLIMIT_RTPRIO >= 1 or CAP_SYS_NICE gets coarse reads checked against the kernel's coarse clock "
		    "instead (never staler than it).",
		    coarse->getres_ns / 1e6, coarse->libc_ns, in->fc_coarse_cost_ns, (double)in->st.period_ns / 1e3);
	else if (coarse && coarse->ok && in->coarse_checked == 1)
		add(b, n,
		    "fastclock's updater thread cannot run SCHED_FIFO in this process (or FASTCLOCK_UPDATER_RT=0), so "
		    "fc_mono_coarse_ns() is checked against the kernel's coarse clock (%.1f ns, the kernel's %.1f ns): "
		    "one re-anchor period (%.0f us) old while the thread gets a CPU, never staler than the kernel's; "
		    "with RLIMIT_RTPRIO >= 1 (or CAP_SYS_NICE) it is one load.",
		    in->fc_coarse_cost_ns, coarse->libc_ns, (double)in->st.period_ns / 1e3);
}

/* ---- output ---- */
static void print_text(const struct info *in)
{
	const struct fc_status *st = &in->st;
	printf("kernel clocksource\n");
	printf("  current            %s\n", in->cs[0] ? in->cs : "(unreadable)");
	printf("  available          %s\n", in->avail[0] ? in->avail : "(unreadable)");
	printf("cpu\n");
	printf("  model              %s\n", in->cpu_model[0] ? in->cpu_model : "(unknown)");
	if (in->have_flags) {
		printf("  tsc flags          tsc:%s constant_tsc:%s nonstop_tsc:%s tsc_known_freq:%s rdtscp:%s "
		       "tsc_reliable:%s tsc_adjust:%s\n",
		       in->f_tsc ? "yes" : "no", in->f_constant ? "yes" : "no", in->f_nonstop ? "yes" : "no",
		       in->f_known_freq ? "yes" : "no", in->f_rdtscp ? "yes" : "no", in->f_reliable ? "yes" : "no",
		       in->f_tsc_adjust ? "yes" : "no");
	}
	printf("  invariant tsc      %s\n", in->cpuid_invariant == 1   ? "yes (CPUID 0x80000007 EDX[8])"
				       : in->cpuid_invariant == 0 ? "no (CPUID 0x80000007 EDX[8] clear)"
				       : (in->f_constant && in->f_nonstop) ? "yes (constant_tsc + nonstop_tsc)"
									    : "unknown");
	printf("counter\n");
	printf("  counter            %s\n", st->counter);
	printf("  frequency          %.6f MHz (initial %.6f MHz, source: %s)\n", (double)st->counter_hz / 1e6,
	       (double)st->counter_hz_initial / 1e6, fc_freq_source_name(st->freq_source));
	printf("virtualisation\n");
	printf("  virtual machine    %s\n", in->is_vm ? "yes" : "no (no hypervisor flag, CPUID leaf, or sysfs entry)");
	if (in->hv_vendor[0])
		printf("  hypervisor         %s (CPUID signature '%s')\n", hv_name(in->hv_vendor), in->hv_vendor);
	if (in->hv_sys[0])
		printf("  /sys/hypervisor    %s\n", in->hv_sys);
	if (in->dmi_vendor[0] || in->dmi_product[0])
		printf("  dmi                %s %s\n", in->dmi_vendor, in->dmi_product);
	if (in->is_vm)
		printf("  hypervisor clocks  %s\n", in->hv_clocks[0] ? in->hv_clocks : "none offered");
	printf("vdso (measured: libc call vs raw syscall; %s)\n",
	       in->vdso_mapped ? "vDSO mapped" : "no vDSO mapped in this process");
	printf("  %-20s %12s %10s %10s  %s\n", "clock id", "getres", "libc ns", "syscall ns", "served by");
	for (int i = 0; i < in->nrows; i++) {
		const struct vdso_row *r = &in->rows[i];
		if (!r->ok) {
			printf("  %-20s %12s %10s %10s  %s\n", r->name, "-", "-", "-", "not supported by this kernel");
			continue;
		}
		printf("  %-20s %10.0fns %10.1f %10.1f  %s\n", r->name, r->getres_ns, r->libc_ns, r->sys_ns,
		       r->is_syscall ? "syscall" : "vdso");
	}
	printf("  %-20s %12s %10.1f %10.1f  %s\n", "gettimeofday", "1000ns", in->gtod_libc_ns, in->gtod_sys_ns,
	       in->gtod_libc_ns >= SYSCALL_LIKE * in->gtod_sys_ns ? "syscall" : "vdso");
	printf("  %-20s %12s %10.1f %10s\n", "time", "1s", in->time_libc_ns, "-");
	printf("ntp (adjtimex)\n");
	if (in->adj_ok) {
		printf("  state              %s, %s\n", adj_state_name(in->adj_state),
		       ntp_synced(in) ? "synchronised" : "NOT synchronised (STA_UNSYNC or TIME_ERROR)");
		printf("  status bits        0x%04x%s%s%s\n", in->tx.status, in->tx.status & STA_PLL ? " PLL" : "",
		       in->tx.status & STA_UNSYNC ? " UNSYNC" : "", in->tx.status & STA_NANO ? " NANO" : "");
		printf("  maxerror           %ld us\n", (long)in->tx.maxerror);
		printf("  esterror           %ld us\n", (long)in->tx.esterror);
		printf("  frequency          %.3f ppm\n", (double)in->tx.freq / 65536.0);
	} else {
		printf("  adjtimex failed: %s\n", strerror(in->adj_errno));
	}
	printf("  daemon             %s\n", in->daemons[0] ? in->daemons : "none found in /proc/*/comm");
	printf("  fastclock sync     %s\n", fc_sync_name(st->sync_status));
	printf("time namespace\n");
	if (!in->timens_present)
		printf("  offsets            (no /proc/self/timens_offsets: kernel without time namespaces)\n");
	else if (in->timens_mono_s || in->timens_mono_ns || in->timens_boot_s || in->timens_boot_ns)
		printf("  offsets            monotonic %+lld.%09lld s, boottime %+lld.%09lld s (in a time namespace)\n",
		       in->timens_mono_s, in->timens_mono_ns, in->timens_boot_s, in->timens_boot_ns);
	else
		printf("  offsets            none (monotonic 0, boottime 0)\n");
	printf("fastclock\n");
	printf("  backend            %s\n", fc_backend_name(st->backend));
	printf("  reason             %s\n", st->reason);
	{
		const char *fixed = getenv("FASTCLOCK_PERIOD_US");
		if (fixed && *fixed)
			printf("  period             %lld us (FASTCLOCK_PERIOD_US)\n",
			       (long long)(st->period_ns / 1000));
		else /* this tool read the bound: a program that reads plain clocks only has the longer default */
			printf("  period             %lld us (a program that reads bounds or coarse clocks; plain "
			       "reads only: %d us)\n",
			       (long long)(st->period_ns / 1000), FC_PERIOD_PLAIN_NS / 1000);
	}
	printf("  fc_mono_ns cost    %.1f ns\n", in->fc_mono_cost_ns);
	if (in->coarse_checked >= 0)
		printf("  coarse reads       %s, %.1f ns\n",
		       in->coarse_checked ? "checked against the kernel's coarse clock (updater not real-time here)"
					  : "one load (updater SCHED_FIFO here)",
		       in->fc_coarse_cost_ns);
	else
		printf("  coarse reads       unknown (fc_updater_start failed)\n");
	if (st->config_error[0])
		printf("  config error       %s\n", st->config_error);
	printf("bound vs UTC (fc_real_bounded)\n");
	printf("  source             %s (%s)\n", st->bound_source, st->bound_why);
	printf("  status             %s: %s\n", fc_sync_name(st->bound_status), st->bound_reason);
	/* UNKNOWN (and DISRUPTED) intervals promise nothing (fastclock.h): say so beside the width, which a reader
	 * otherwise takes for a bound. */
	printf("  half-width         %.3f us", st->bound_half_ns / 1e3);
	if (st->bound_status != FC_SYNC_SYNCHRONIZED && st->bound_status != FC_SYNC_FREE_RUNNING)
		printf(" (not a bound while %s)", fc_sync_name(st->bound_status));
	printf(", centre %+.3f us from CLOCK_REALTIME, ", st->bound_center_ns / 1e3);
	if (st->bound_age_ns >= 0)
		printf("data %.3f s old\n", st->bound_age_ns / 1e9);
	else
		printf("no data from the source\n"); /* bound_age_ns -1: it never gave any (fc_status) */
	if (st->bound_error[0])
		printf("  last error         %s (%.1f s ago)\n", st->bound_error, st->bound_error_age_ns / 1e9);
	printf("recommendation\n");
	{
		/* wrap at 100 columns */
		const char *p = in->rec;
		while (*p) {
			size_t len = strlen(p), cut = len;
			if (len > 96) {
				cut = 96;
				while (cut > 0 && p[cut] != ' ')
					cut--;
				if (cut == 0)
					cut = 96;
			}
			printf("  %.*s\n", (int)cut, p);
			p += cut;
			while (*p == ' ')
				p++;
		}
	}
}

static void print_json(const struct info *in)
{
	const struct fc_status *st = &in->st;
	struct jw j;
	jw_begin_doc(&j, "info");
	jw_obj(&j, "clocksource");
	jw_str(&j, "current", in->cs);
	jw_str(&j, "available", in->avail);
	jw_end_obj(&j);
	jw_obj(&j, "cpu");
	jw_str(&j, "model", in->cpu_model);
	jw_bool(&j, "tsc", in->f_tsc);
	jw_bool(&j, "constant_tsc", in->f_constant);
	jw_bool(&j, "nonstop_tsc", in->f_nonstop);
	jw_bool(&j, "tsc_known_freq", in->f_known_freq);
	jw_bool(&j, "rdtscp", in->f_rdtscp);
	jw_bool(&j, "tsc_reliable", in->f_reliable);
	if (in->cpuid_invariant >= 0)
		jw_bool(&j, "invariant_tsc", in->cpuid_invariant);
	else
		jw_bool(&j, "invariant_tsc", in->f_constant && in->f_nonstop);
	jw_end_obj(&j);
	jw_obj(&j, "counter");
	jw_str(&j, "name", st->counter);
	jw_int(&j, "hz", (int64_t)st->counter_hz);
	jw_int(&j, "hz_initial", (int64_t)st->counter_hz_initial);
	jw_str(&j, "freq_source", fc_freq_source_name(st->freq_source));
	jw_end_obj(&j);
	jw_obj(&j, "vm");
	jw_bool(&j, "is_vm", in->is_vm);
	jw_str(&j, "hypervisor", in->hv_vendor[0] ? hv_name(in->hv_vendor) : (in->hv_sys[0] ? in->hv_sys : NULL));
	jw_str(&j, "hypervisor_clocks", in->hv_clocks);
	jw_str(&j, "dmi", in->dmi_vendor[0] || in->dmi_product[0] ? in->dmi_product : NULL);
	jw_end_obj(&j);
	jw_obj(&j, "vdso");
	jw_bool(&j, "mapped", in->vdso_mapped);
	jw_arr(&j, "clocks");
	for (int i = 0; i < in->nrows; i++) {
		const struct vdso_row *r = &in->rows[i];
		jw_obj(&j, NULL);
		jw_str(&j, "clock", r->name);
		jw_bool(&j, "supported", r->ok);
		jw_num(&j, "getres_ns", r->getres_ns);
		jw_num(&j, "libc_ns", r->ok ? round(r->libc_ns * 10) / 10 : NAN);
		jw_num(&j, "syscall_ns", r->ok ? round(r->sys_ns * 10) / 10 : NAN);
		jw_str(&j, "served_by", !r->ok ? "unsupported" : r->is_syscall ? "syscall" : "vdso");
		jw_end_obj(&j);
	}
	jw_end_arr(&j);
	jw_end_obj(&j);
	jw_obj(&j, "ntp");
	jw_bool(&j, "adjtimex_ok", in->adj_ok);
	jw_bool(&j, "synchronized", ntp_synced(in));
	jw_str(&j, "state", in->adj_ok ? adj_state_name(in->adj_state) : NULL);
	jw_int(&j, "status", in->tx.status);
	jw_int(&j, "maxerror_us", in->tx.maxerror);
	jw_int(&j, "esterror_us", in->tx.esterror);
	jw_str(&j, "daemon", in->daemons);
	jw_str(&j, "fastclock_sync", fc_sync_name(st->sync_status));
	jw_end_obj(&j);
	jw_obj(&j, "timens");
	jw_bool(&j, "present", in->timens_present);
	jw_int(&j, "monotonic_offset_ns", in->timens_mono_s * 1000000000LL + in->timens_mono_ns);
	jw_int(&j, "boottime_offset_ns", in->timens_boot_s * 1000000000LL + in->timens_boot_ns);
	jw_end_obj(&j);
	jw_obj(&j, "fastclock");
	jw_str(&j, "backend", fc_backend_name(st->backend));
	jw_str(&j, "reason", st->reason);
	jw_int(&j, "period_ns", st->period_ns);
	jw_num(&j, "fc_mono_ns_cost_ns", round(in->fc_mono_cost_ns * 10) / 10);
	jw_str(&j, "coarse_reads", in->coarse_checked < 0 ? "unknown" : in->coarse_checked ? "checked" : "one_load");
	if (in->coarse_checked >= 0)
		jw_num(&j, "fc_mono_coarse_ns_cost_ns", round(in->fc_coarse_cost_ns * 10) / 10);
	jw_str(&j, "config_error", st->config_error);
	jw_end_obj(&j);
	jw_obj(&j, "bound");
	jw_str(&j, "source", st->bound_source);
	jw_str(&j, "why", st->bound_why);
	jw_str(&j, "status", fc_sync_name(st->bound_status));
	jw_str(&j, "reason", st->bound_reason);
	jw_int(&j, "half_width_ns", st->bound_half_ns);
	jw_int(&j, "center_ns", st->bound_center_ns);
	jw_int(&j, "age_ns", st->bound_age_ns);
	jw_str(&j, "last_error", st->bound_error);
	jw_int(&j, "last_error_age_ns", st->bound_error_age_ns);
	jw_end_obj(&j);
	jw_str(&j, "recommendation", in->rec);
	jw_end_obj(&j);
}

int cmd_info(int argc, char **argv)
{
	static struct info in;
	int json = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(info_help, stdout);
			return CLI_EXIT_OK;
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (argv[i][0] == '-') {
			return cli_usage_error("unknown option '%s' (see 'fastclock info --help')", argv[i]);
		} else {
			return cli_usage_error("unexpected argument '%s' (see 'fastclock info --help')", argv[i]);
		}
	}
	memset(&in, 0, sizeof(in));
	fc_init();
	cli_read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", in.cs, sizeof(in.cs));
	cli_read_line("/sys/devices/system/clocksource/clocksource0/available_clocksource", in.avail,
		      sizeof(in.avail));
	read_cpuinfo(&in);
	read_cpuid(&in);
	read_vm(&in);
	measure_vdso(&in);
	read_ntp(&in);
	read_timens(&in);
	fc_status(&in.st);
	recommend(&in);
	if (json)
		print_json(&in);
	else
		print_text(&in);
	return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}
