/*
 * fastclock — chronyd's tracking report over its command socket (chrony's candm.h, protocol version 6), with
 * the newest measurement of the source chronyd selected, asked without ever blocking: a round of requests is
 * sent on one poll and the replies collected on later ones.
 *
 * Two transports, both connect()ed so that the kernel delivers chronyd's datagrams and nobody else's:
 *   unix  chronyd's unix socket (full access; reachable by root and chronyd's user, its directory is theirs);
 *   udp   chronyd's command port on the loopback, 127.0.0.1:323 then [::1]:323 (the monitoring commands that
 *         cmdmon.c leaves open to any local process: tracking, n_sources, source_data), for everyone else,
 *         while the kernel says every socket on the port is root's or chronyd's user's (sock_diag).
 * Each round's sequence numbers are drawn at random (getrandom): a reply must name one of this round's, so a
 * datagram that reaches us by another way is dropped and never completes a round.
 *
 * Owns: struct fc_chrony (the socket, our private socket directory, the outstanding round, the last report),
 * the candm encoding, the table of this process's socket directories (removed at exit), its driver
 * (fc__chrony_driver: the report aged as ClockBound's client ages a segment).
 * May call: async-signal-safe libc only (socket, bind, connect, mkdirat, openat, openat2, fchmodat, flock,
 * unlinkat, getdents64, getrandom, sendto, recv, recvfrom, getpid, adjtimex with modes 0, clock_gettime), bound.c,
 * fmt.c, slew.c.
 */
#define _GNU_SOURCE /* O_PATH */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "chrony.h"
#include "../units.h"


/* candm.h: protocol version, packet types, the tracking command and reply codes. */
#define CANDM_VERSION 6
#define CANDM_REQUEST 1
#define CANDM_REPLY 2
#define CANDM_REQ_TRACKING 33
#define CANDM_RPY_TRACKING 5
#define CANDM_REQ_N_SOURCES 14
#define CANDM_RPY_N_SOURCES 2
#define CANDM_REQ_SOURCE_DATA 15
#define CANDM_RPY_SOURCE_DATA 3
#define CANDM_STT_SUCCESS 0
#define CANDM_STT_NOSUCHSOURCE 4
/* Request header: version, pkt_type, res1, res2, command (16), attempt (16), sequence (32), pad1, pad2. */
#define CANDM_REQ_HEAD 20
/* Reply header: version, pkt_type, res1, res2, command, reply, status, pad1..3 (16 each), sequence, pad4, pad5. */
#define CANDM_RPY_HEAD 28
/* RPY_Tracking up to its EOR: ref_id (4), IPAddr (20), stratum (2), leap_status (2), Timespec ref_time (12),
 * nine Floats (36). */
#define CANDM_TRACKING_LEN 76
/* Since version 6 a request is padded to the length of its reply (against amplification); chronyd drops a
 * shorter one. */
#define CANDM_TRACKING_PKT (CANDM_RPY_HEAD + CANDM_TRACKING_LEN)
/* RPY_Source_Data up to its EOR: IPAddr (20), poll, stratum, state, mode, flags, reachability (2 each),
 * since_sample (4), orig_latest_meas, latest_meas, latest_meas_err (Floats). Its request carries an index (4). */
#define CANDM_SOURCE_DATA_LEN 48
#define CANDM_SOURCE_DATA_PKT (CANDM_RPY_HEAD + CANDM_SOURCE_DATA_LEN)
/* RPY_N_Sources up to its EOR: n_sources (4). */
#define CANDM_N_SOURCES_LEN 4
#define CANDM_N_SOURCES_PKT (CANDM_RPY_HEAD + CANDM_N_SOURCES_LEN)
/* The sequence numbers of one round: tracking, the count, then one per source-data request. */
#define ROUND_SEQS (2u + FC_CHRONY_MAX_SOURCES)

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8), p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)(v >> 16)), put16(p + 2, (uint16_t)v); }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)get16(p) << 16 | get16(p + 2); }

/* candm.h's Float: a 7-bit signed exponent and a 25-bit signed coefficient, value = coef * 2^(exp - 25). */
static double get_float(const uint8_t *p)
{
	uint32_t x = get32(p);
	int32_t e = (int32_t)(x >> 25), c = (int32_t)(x & 0x1ffffffu);
	double v, scale = 1.0;
	if (e >= 64)
		e -= 128;
	if (c >= 1 << 24)
		c -= 1 << 25;
	e -= 25;
	v = (double)c;
	/* |e| <= 89: a loop of halvings/doublings is exact and needs no libm */
	for (; e > 0; e--)
		scale *= 2.0;
	for (; e < 0; e++)
		scale *= 0.5;
	return v * scale;
}

static size_t request(uint16_t cmd, size_t pkt, uint32_t seq, uint8_t *buf, size_t len)
{
	if (len < pkt)
		return 0;
	memset(buf, 0, pkt); /* padding */
	buf[0] = CANDM_VERSION;
	buf[1] = CANDM_REQUEST;
	put16(buf + 4, cmd);
	put32(buf + 8, seq);
	return pkt;
}

size_t fc__chrony_request(uint32_t seq, uint8_t *buf, size_t len)
{
	return request(CANDM_REQ_TRACKING, CANDM_TRACKING_PKT, seq, buf, len);
}

size_t fc__chrony_request_source(uint32_t seq, uint32_t index, uint8_t *buf, size_t len)
{
	size_t n = request(CANDM_REQ_SOURCE_DATA, CANDM_SOURCE_DATA_PKT, seq, buf, len);
	if (n)
		put32(buf + CANDM_REQ_HEAD, index); /* REQ_Source_Data: index */
	return n;
}

size_t fc__chrony_request_count(uint32_t seq, uint8_t *buf, size_t len)
{
	return request(CANDM_REQ_N_SOURCES, CANDM_N_SOURCES_PKT, seq, buf, len);
}

/* Common reply checks; 0 if buf is a successful reply of type rpy to request cmd with sequence seq. */
static int check_reply(const uint8_t *buf, size_t len, uint32_t seq, uint16_t cmd, uint16_t rpy, size_t pkt,
		       char *err, size_t errlen)
{
	if (len < CANDM_RPY_HEAD) {
		fc__bfmt(err, errlen, "chronyd reply of %zu bytes (header is %d)", len, CANDM_RPY_HEAD);
		return -1;
	}
	if (buf[0] != CANDM_VERSION || buf[1] != CANDM_REPLY) {
		fc__bfmt(err, errlen, "chronyd reply version %u type %u (want %d, %d)", buf[0], buf[1], CANDM_VERSION,
			 CANDM_REPLY);
		return -1;
	}
	if (get32(buf + 16) != seq) {
		fc__bfmt(err, errlen, "chronyd reply sequence %u (want %u)", get32(buf + 16), seq);
		return -1;
	}
	if (get16(buf + 8) != CANDM_STT_SUCCESS) {
		fc__bfmt(err, errlen, "chronyd refused request %u: status %u", cmd, get16(buf + 8));
		return -1;
	}
	if (get16(buf + 4) != cmd || get16(buf + 6) != rpy || len < pkt) {
		fc__bfmt(err, errlen, "chronyd reply command %u reply %u length %zu (want %u %u %zu)", get16(buf + 4),
			 get16(buf + 6), len, cmd, rpy, pkt);
		return -1;
	}
	return 0;
}

int fc__chrony_decode_source(const uint8_t *buf, size_t len, uint32_t seq, struct fc_chrony_source *sd, char *err,
			    size_t errlen)
{
	const uint8_t *d = buf + CANDM_RPY_HEAD;
	if (check_reply(buf, len, seq, CANDM_REQ_SOURCE_DATA, CANDM_RPY_SOURCE_DATA, CANDM_SOURCE_DATA_PKT, err,
			errlen) != 0)
		return -1;
	memcpy(sd->addr, d, sizeof(sd->addr)); /* IPAddr: the source's address (a refclock's: its refid) */
	sd->state = get16(d + 24);
	sd->reachability = get16(d + 30);
	sd->since_sample = get32(d + 32);
	sd->latest_meas = get_float(d + 40);
	sd->latest_meas_err = get_float(d + 44);
	return 0;
}

int fc__chrony_decode_count(const uint8_t *buf, size_t len, uint32_t seq, uint32_t *n, char *err, size_t errlen)
{
	if (check_reply(buf, len, seq, CANDM_REQ_N_SOURCES, CANDM_RPY_N_SOURCES, CANDM_N_SOURCES_PKT, err, errlen) != 0)
		return -1;
	*n = get32(buf + CANDM_RPY_HEAD);
	return 0;
}

int fc__chrony_decode(const uint8_t *buf, size_t len, uint32_t seq, struct fc_chrony_tracking *t, char *err,
		     size_t errlen)
{
	const uint8_t *d = buf + CANDM_RPY_HEAD;
	if (check_reply(buf, len, seq, CANDM_REQ_TRACKING, CANDM_RPY_TRACKING, CANDM_TRACKING_PKT, err, errlen) != 0)
		return -1;
	t->ref_id = get32(d);
	t->stratum = get16(d + 24);
	t->leap_status = get16(d + 26);
	t->ref_time_sec = (int64_t)((uint64_t)get32(d + 28) << 32 | get32(d + 32));
	if (get32(d + 28) == 0x7fffffffu) /* TV_NOHIGHSEC: a 32-bit time */
		t->ref_time_sec = get32(d + 32);
	t->ref_time_nsec = get32(d + 36);
	t->correction = get_float(d + 40);
	t->last_offset = get_float(d + 44);
	t->rms_offset = get_float(d + 48);
	t->freq_ppm = get_float(d + 52);
	t->resid_freq_ppm = get_float(d + 56);
	t->skew_ppm = get_float(d + 60);
	t->root_delay = get_float(d + 64);
	t->root_dispersion = get_float(d + 68);
	t->last_update_interval = get_float(d + 72);
	return 0;
}

static int64_t sec_to_ns_up(double s)
{
	double ns = s * 1e9;
	if (ns >= 9e18)
		return INT64_MAX / 4;
	if (ns <= -9e18)
		return -INT64_MAX / 4;
	return (int64_t)ns + (ns > 0 ? 1 : -1);
}

/* What a report may hold. candm's Float carries no NaN or infinity but reaches +-2^62: a time past
 * FC_CHRONY_MAX_SEC, a negative delay, dispersion, skew or error, or a rate past FC_CHRONY_MAX_PPM is no
 * report of a working chronyd, and sums of a few such values would overflow an int64 of ns. The report is
 * refused: UNKNOWN naming the field (NaN and infinities, which a caller's struct may hold, fail the same
 * comparisons). Returns 1 if refused. */
static int refused(const struct fc_chrony_tracking *t, const struct fc_chrony_source *sd, struct fc_bound *b)
{
	const double m = FC_CHRONY_MAX_SEC, r = FC_CHRONY_MAX_PPM;
	const struct {
		const char *name;
		double v, lo, hi;
		const char *unit;
	} f[] = {
		{"correction", t->correction, -m, m, "s"},
		{"root delay", t->root_delay, 0, m, "s"},
		{"root dispersion", t->root_dispersion, 0, m, "s"},
		{"skew", t->skew_ppm, 0, r, "ppm"},
		{"residual frequency", t->resid_freq_ppm, -r, r, "ppm"},
		{"newest measurement", sd ? sd->latest_meas : 0.0, -m, m, "s"},
		{"measurement error", sd ? sd->latest_meas_err : 0.0, 0, m, "s"},
	};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (f[i].v >= f[i].lo && f[i].v <= f[i].hi)
			continue;
		b->status = FC_SYNC_UNKNOWN;
		b->center_ns = 0;
		b->half_ns = INT64_MAX / 4;
		b->drift_ppb = 0;
		b->leap = FC_LEAP_NONE;
		fc__bfmt(b->reason, sizeof(b->reason), "chronyd's %s %.6f %s is outside %.0f .. %.0f %s: report refused",
			 f[i].name, f[i].v, f[i].unit, f[i].lo, f[i].hi, f[i].unit);
		return 1;
	}
	return 0;
}

/* The interval: chronyd's estimate of true time is the clock plus its current correction c, within its root
 * distance (root_delay / 2 + root_dispersion: ClockBound's rule without the correction). A running chronyd
 * (not -x) slews the clock towards that estimate at up to maxslewrate (83 ms/s by default), so between polls the
 * true offset moves from c towards 0 at a rate we do not see: the interval covers both ends, [min(0, c),
 * max(0, c)], widened by the root distance.
 * After a reference step chronyd's tracking keeps its old estimate for 10-20 s (the new samples look like
 * outliers to its regression) while its newest measurement of the selected source (source data: latest_meas,
 * the local clock's offset from the source, positive when ahead) already shows the step: the source's time is
 * clock + c - latest_meas within latest_meas_err. The interval also covers that point, so it widens at the
 * first measurement after a step instead of staying wrong until tracking moves. When the two disagree by more than
 * their combined claimed errors (|latest_meas| > root distance + latest_meas_err) the report is UNKNOWN: chronyd's
 * filter may hand on a mix of samples from both sides of a step (a +30 ms step read as +13.8 ms in one fleet run),
 * which no interval from this report is sure to hold. In steady state latest_meas is within the noise of 0 and
 * adds nothing. Every value is inside refused()'s limits, so no sum below overflows
 * and half_ns >= 0 (earliest <= latest). */
int fc__chrony_eval(const struct fc_chrony_tracking *t, const struct fc_chrony_source *sd, int64_t at,
		   struct fc_bound *b)
{
	const struct fc_chrony_source *use = sd && sd->reachability != 0 ? sd : NULL;
	int64_t c, dist, lo, hi;
	int disagree = 0;
	double rate_ppm;
	b->as_of_ns = at;
	if (refused(t, use, b))
		return b->status;
	c = sec_to_ns_up(t->correction);
	dist = sec_to_ns_up(t->root_delay / 2 + t->root_dispersion);
	lo = c < 0 ? c : 0;
	hi = c > 0 ? c : 0;
	if (use) {
		int64_t m = sec_to_ns_up(t->correction - use->latest_meas), e = sec_to_ns_up(use->latest_meas_err);
		if (m - e < lo)
			lo = m - e;
		if (m + e > hi)
			hi = m + e;
		/* the estimate (c within dist) and the measurement (c - latest_meas within e) cannot both hold */
		disagree = sec_to_ns_up(use->latest_meas < 0 ? -use->latest_meas : use->latest_meas) > dist + e;
	}
	/* centre rounded down, half rounded up: [centre - half, centre + half] covers [lo, hi] */
	b->center_ns = lo + (hi - lo) / 2;
	b->half_ns = (hi - lo) - (hi - lo) / 2 + dist;
	/* growth: chrony's own dispersion rate (maxclockerror, 1 ppm unless configured) plus the frequency's
	 * skew and residual: the clock may wander that fast from the estimate until the next report (at most
	 * 2 * FC_CHRONY_MAX_PPM: 2e9 ppb) */
	rate_ppm = t->skew_ppm + (t->resid_freq_ppm < 0 ? -t->resid_freq_ppm : t->resid_freq_ppm);
	b->drift_ppb = FC_CHRONY_DRIFT_PPB + (int64_t)(rate_ppm * 1000.0) + 1;
	b->leap = t->leap_status == 1 ? FC_LEAP_INSERT : t->leap_status == 2 ? FC_LEAP_DELETE : FC_LEAP_NONE;
	if (t->leap_status == 3) {
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason), "chronyd is not synchronised (leap status 3)");
	} else if (t->ref_time_sec == 0 || !(t->last_update_interval > 0)) {
		/* chronyd's first report after a start has no update yet (ClockBound's Unknown with as_of 0) */
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason), "chronyd has not updated the clock yet");
	} else if (disagree) {
		/* chronyd's filter may hand on a mix of samples from before and after a step (a median of 8 here):
		 * the point measured need not be where the source is now, so covering it promises nothing */
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason),
			 "%s %d measured %.6f s from chronyd's estimate (errors %.6f + %.6f s): untracked step",
			 use->state == FC_CHRONY_SELECTED ? "selected source" : "last selected source", use->index, -use->latest_meas, t->root_delay / 2 + t->root_dispersion, use->latest_meas_err);
	} else {
		b->status = FC_SYNC_SYNCHRONIZED;
		fc__bfmt(b->reason, sizeof(b->reason), "chronyd stratum %d, corr %.6f s, dist %.6f s; %s %d meas %.6f s",
			 t->stratum, t->correction, t->root_delay / 2 + t->root_dispersion,
			 !use ? "no source data" : use->state == FC_CHRONY_SELECTED ? "selected source" : "last selected source",
			 use ? use->index : -1, use ? use->latest_meas : 0.0);
	}
	return b->status;
}

/* adjtimex(modes 0) writes nothing; the REALTIME read right after it, between two MONOTONIC reads, is the
 * instant slew.c follows the clock from */
static int kernel_read(struct fc_slew_kernel *k)
{
	struct timex tx;
	struct timespec m0, r, m1;
	memset(&tx, 0, sizeof(tx));
	if (adjtimex(&tx) < 0)
		return -1;
	/* the bracket is tight (vDSO reads, tens of ns): slew.c tells a step from REALTIME - MONOTONIC moving by
	 * more than 1 us between two readings */
	clock_gettime(CLOCK_MONOTONIC, &m0);
	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m1);
	k->rt_ns = (int64_t)r.tv_sec * NS_PER_SEC + r.tv_nsec;
	k->mono_lo = (int64_t)m0.tv_sec * NS_PER_SEC + m0.tv_nsec;
	k->mono_hi = (int64_t)m1.tv_sec * NS_PER_SEC + m1.tv_nsec;
	k->freq = tx.freq;
	k->tick = tx.tick;
	k->offset = tx.offset;
	k->status = tx.status;
	return 0;
}

int (*fc__chrony_kernel_read)(struct fc_slew_kernel *k);

static int read_kernel(struct fc_slew_kernel *k)
{
	return fc__chrony_kernel_read ? fc__chrony_kernel_read(k) : kernel_read(k);
}

static int64_t realtime_now(void)
{
	struct fc_slew_kernel k;
	struct timespec r;
	if (fc__chrony_kernel_read) /* a test's clock */
		return fc__chrony_kernel_read(&k) == 0 ? k.rt_ns : 0;
	clock_gettime(CLOCK_REALTIME, &r);
	return (int64_t)r.tv_sec * NS_PER_SEC + r.tv_nsec;
}

/* chronyd's slew followed (slew.c, docs/ACCURACY.md 4b): where the kernel shows the slew chronyd set is the one
 * running since before the request (TRACKED, or one change as chronyd's timer or update makes it), a
 * SYNCHRONIZED report covers [0, the correction still pending now] (not the one at the reply) within the root
 * distance; between reports the centre may move at the slew's rate, folded into the growth. The newest measurement's point (shifted by the slew achieved) stays in
 * the interval. DISAGREE (chronyd slews towards an offset its report did not hold: a step): UNKNOWN, and the
 * next round is asked at once. FALLBACK (the PLL on, a reply older than 2 s, a stepped clock, ...): the report's
 * own interval, widened by what chronyd's slews overshoot. Fail closed: any doubt keeps the wider one.
 * now: CLOCK_MONOTONIC of this poll, taken before the kernel is read (the half-width holds from it on). */
static void slew_follow(struct fc_chrony *ch, int64_t now, struct fc_bound *b)
{
	const struct fc_chrony_tracking *t = &ch->last;
	struct fc_slew_in in;
	struct fc_slew_out out, fb;
	int64_t lo, hi;
	if (!ch->slew_ok || b->status != FC_SYNC_SYNCHRONIZED)
		return;
	/* the reference time is chronyd's 64-bit seconds: one past an int64 of ns is no time to follow a slew from
	 * (fuzz_chrony: the product overflowed); the report's own interval stands */
	if (t->ref_time_sec <= 0 || t->ref_time_sec > INT64_MAX / NS_PER_SEC)
		return;
	memset(&in, 0, sizeof(in));
	in.t.correction = t->correction;
	in.t.last_offset = t->last_offset;
	in.t.rms_offset = t->rms_offset;
	in.t.freq_ppm = t->freq_ppm;
	in.t.resid_freq_ppm = t->resid_freq_ppm;
	in.t.skew_ppm = t->skew_ppm;
	in.t.root_delay = t->root_delay;
	in.t.root_dispersion = t->root_dispersion;
	in.t.ref_time_ns = t->ref_time_sec * NS_PER_SEC;
	in.at_req = ch->slew_k;
	in.reply_rt_ns = ch->slew_reply_rt;
	if (read_kernel(&in.now) != 0)
		return;
	fc__slew_eval(&in, &out);
	if (out.status == FC_SLEW_DISAGREE) {
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason), "via %s: %.90s", ch->via_name, out.why);
		ch->last_sent = now - 1000 * NS_PER_SEC; /* the next poll asks again */
		return;
	}
	if (out.status == FC_SLEW_FALLBACK) {
		fc__slew_fallback(&in.t, in.now.rt_ns - in.reply_rt_ns, &fb);
		if (out.half_ns > fb.half_ns)
			b->half_ns += out.half_ns - fb.half_ns;
		/* the transport, the report's own words up to its source (fc__chrony_eval: "chronyd stratum N, corr ..,
		 * dist ..; selected source I meas .."), so the fallback still names the source followed, then why the
		 * slew was not (cut where 120 characters end) */
		char was[FC_BOUND_TEXT];
		const char *from, *to;
		memcpy(was, b->reason, sizeof(was));
		was[sizeof(was) - 1] = 0;
		from = strstr(was, "corr ");
		from = from ? from : was;
		to = strstr(from, " meas ");
		fc__bfmt(b->reason, sizeof(b->reason), "via %s: %.*s; slew not followed: %.45s", ch->via_name,
			 to ? (int)(to - from) : (int)strlen(from), from, out.why);
		return;
	}
	/* the clock as it is (0) stays in, as in the report's own interval: chronyd's root distance alone does not
	 * hold a reference step that its median filter hides for up to two of its polls (fleet clockbound-step
	 * with [centre +- half] alone: SYNCHRONIZED and wrong 7.0 s against ClockBound's 2.2 s, docs/ACCURACY.md);
	 * what the slew gives is the correction still pending now instead of the one at the reply */
	lo = out.center_ns < 0 ? out.center_ns : 0;
	hi = out.center_ns > 0 ? out.center_ns : 0;
	if (ch->have_src && ch->src.reachability != 0) {
		/* the measured point, moved with the estimate by the slew achieved since the reply (widened by the
		 * half-width too, as in fc__chrony_eval) */
		int64_t m = out.center_ns - sec_to_ns_up(ch->src.latest_meas), e = sec_to_ns_up(ch->src.latest_meas_err);
		if (m - e < lo)
			lo = m - e;
		if (m + e > hi)
			hi = m + e;
	}
	lo -= out.half_ns;
	hi += out.half_ns;
	/* taken only where it is narrower (never wider than the report's own interval; under chronyd -x, nothing
	 * slewed, it is that interval give or take rounding, and the report's reason stays) */
	if (hi - lo >= 2 * b->half_ns - 2000)
		return;
	b->center_ns = lo + (hi - lo) / 2;
	b->half_ns = (hi - lo) - (hi - lo) / 2;
	b->as_of_ns = now;
	b->drift_ppb = out.drift_ppb + (out.rate_ppb < 0 ? -out.rate_ppb : out.rate_ppb);
	fc__bfmt(b->reason, sizeof(b->reason), "via %s: chronyd's estimate, slew %s: corr %.6f s, half %.6f s", ch->via_name,
		 out.status == FC_SLEW_TRACKED ? "tracked" : out.status == FC_SLEW_ENDED ? "ended" : "updated",
		 t->correction, (double)b->half_ns / 1e9);
}

void fc__chrony_report(const struct fc_chrony *ch, int64_t at, struct fc_bound *b)
{
	char r[FC_BOUND_TEXT];
	fc__chrony_eval(&ch->last, ch->have_src ? &ch->src : NULL, at, b);
	memcpy(r, b->reason, sizeof(r));
	fc__bfmt(b->reason, sizeof(b->reason), "via %s: %s", ch->via_name, r);
}

/* ---- where chronyd answers: our socket ------------------------------------------------------------------- */

/* 32 random bits: getrandom without blocking; before the kernel's pool is ready (early boot) or without
 * getrandom (Linux < 3.17), a mix of the clock, the pid and the previous draw: guessable, and then the connected
 * socket alone keeps other senders out. */
static uint32_t rand32(struct fc_chrony *ch)
{
	uint32_t v;
	struct timespec ts;
	uint64_t z;
	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
		return v;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ch->rng += 0x9e3779b97f4a7c15ull ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^ (uint64_t)getpid() << 44;
	z = ch->rng; /* splitmix64's finaliser */
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)((z ^ (z >> 31)) >> 32);
}

/*
 * The unix transport. chronyd sends its reply to the requester's path, so we need a socket bound to a path
 * that chronyd (its own user, after it drops root) can reach and write: in the directory of its socket, as
 * chronyc does. That directory belongs to chronyd's user, who can rename, replace or symlink anything in it at
 * any moment; a chmod by path there could be sent through a symlink onto a root-owned file. So (as chronyc
 * since 4.4) we never touch a path in it: we create a directory of our own there
 * (fastclock.<pid>.<64 random bits>, 0711: chronyd's user may pass, not list), hold it by a descriptor, and
 * bind "sock" inside. Only we can add or change entries in our directory, so the socket found there through
 * the descriptor is the one we bound, and fchmodat through the descriptor reaches nothing else even if the
 * directory's name in chronyd's directory was swapped meanwhile (then bind went elsewhere, "sock" is missing in
 * ours, and the open fails). The socket is 0666 so that chronyd's user can send to it; it is connect()ed to
 * chronyd's socket, so the kernel refuses every other sender (EPERM), whoever can reach the path.
 * Leftovers: close() and the exit of the process remove the socket and the directory (a fork child's copy is
 * the parent's, never removed by the child); a process that crashed leaves its directory, which the next open
 * by a process that may remove it (its user, or root) does: a live owner holds a lock (flock) on its directory
 * for as long as its descriptor is open, so a directory whose lock can be taken is a dead process's.
 */
#define SOCK_NAME "sock"
/* The sweep of leftovers at each open: at most this many directory reads of 1 KiB and directories opened
 * (a fixed handful of system calls, however many processes left one). */
#define SWEEP_READS 4
#define SWEEP_OPENS 8

struct dirent64_k { /* the kernel's struct linux_dirent64 */
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* The directory `name` in chronyd's directory d0 (a leftover, or the one we just made), opened only if it is on
 * d0's filesystem and not a link. A mount there (chronyd's user may mount a FUSE filesystem on an entry of its own
 * directory, or swap one in for ours; with user_allow_other root's opendir, getdents and flock in it wait on that
 * filesystem's server, which need never answer: the open holds the writer lock) is refused without a request to
 * it: openat2's RESOLVE_NO_XDEV fails on the mount point (EXDEV) before the mount is entered. Where openat2 is
 * missing (Linux < 5.6, or a seccomp filter: ENOSYS, EPERM) nothing is entered: nothing is swept (a leftover
 * costs an entry), and our own directory is removed again and the unix socket not used (the command port is). */
#ifndef SYS_openat2
#define SYS_openat2 437 /* Linux 5.6, the generic table (x86-64, arm64, riscv64): a libc older than it */
#endif
struct open_how_k { /* linux/openat2.h's struct open_how */
	uint64_t flags, mode, resolve;
};
#define RESOLVE_NO_XDEV_K 0x01
#define RESOLVE_NO_SYMLINKS_K 0x04
static int open_entry(int d0, const char *name)
{
	struct open_how_k how = {.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
				 .resolve = RESOLVE_NO_XDEV_K | RESOLVE_NO_SYMLINKS_K};
	return (int)syscall(SYS_openat2, d0, name, &how, sizeof(how));
}

static void sweep(int d0)
{
	char buf[1024] __attribute__((aligned(8)));
	int opens = 0;
	for (int k = 0; k < SWEEP_READS && opens < SWEEP_OPENS; k++) {
		long n = syscall(SYS_getdents64, d0, buf, sizeof(buf));
		if (n <= 0)
			return;
		for (long off = 0; off < n && opens < SWEEP_OPENS;) {
			const struct dirent64_k *e = (const struct dirent64_k *)(const void *)(buf + off);
			int fd;
			off += e->d_reclen;
			if (strncmp(e->d_name, "fastclock.", 10) != 0 || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
				continue;
			opens++;
			fd = open_entry(d0, e->d_name);
			if (fd < 0 && (errno == ENOSYS || errno == EPERM))
				return;
			if (fd < 0)
				continue;
			if (flock(fd, LOCK_EX | LOCK_NB) == 0) { /* nobody holds it: its process is gone */
				unlinkat(fd, SOCK_NAME, 0);
				unlinkat(d0, e->d_name, AT_REMOVEDIR);
			}
			close(fd); /* and the lock with it */
		}
	}
}

/* This process's socket directories, removed at exit (close() removes its own earlier). Slots are claimed with
 * a compare-and-swap: 0 free, 1 being written, 2 held. Full: the directory is left to the sweep. */
#define LIVE_MAX 8
static struct {
	int state;
	int owner; /* the pid that made it: a fork child never removes its parent's */
	int dirfd;
	uint64_t dev, ino;
	char name[sizeof(((struct fc_chrony *)0)->local)]; /* its name, fastclock.<pid>.<random> */
} live[LIVE_MAX];
static int live_used; /* a directory was ever kept in live[] (the exit handler has something to look at) */

/* Our directory's name (fastclock.<pid>.<random>) from local, its path: the component before "/sock". */
static void local_name(const char *local, char *name, size_t n)
{
	const char *end = strrchr(local, '/'), *start = end;
	while (start > local && start[-1] != '/')
		start--;
	fc__bfmt(name, n, "%.*s", (int)(end - start), start);
}

static void live_add(const struct fc_chrony *ch)
{
	for (int i = 0; i < LIVE_MAX; i++) {
		int expect = 0;
		if (__atomic_compare_exchange_n(&live[i].state, &expect, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			live[i].owner = ch->owner;
			live[i].dirfd = ch->dirfd;
			live[i].dev = ch->dir_dev;
			live[i].ino = ch->dir_ino;
			local_name(ch->local, live[i].name, sizeof(live[i].name));
			__atomic_store_n(&live[i].state, 2, __ATOMIC_RELEASE); /* the fields above before "held" */
			__atomic_store_n(&live_used, 1, __ATOMIC_RELAXED);
			return;
		}
	}
}

static void live_del(int dirfd)
{
	for (int i = 0; i < LIVE_MAX; i++) {
		int expect = 2;
		if (__atomic_load_n(&live[i].state, __ATOMIC_ACQUIRE) == 2 && live[i].dirfd == dirfd &&
		    __atomic_compare_exchange_n(&live[i].state, &expect, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			__atomic_store_n(&live[i].state, 0, __ATOMIC_RELEASE);
	}
}

/* Remove our socket and directory through descriptors only: the socket through our directory's, the directory by
 * its name in the directory that holds it now, reached from ours by "..", and only while that name is still ours
 * (chronyd's user may have put another empty directory there). Never by the configured path again: a link on it,
 * repointed since the open, leads elsewhere. Only while the descriptor is still our directory: a program that
 * closed it (a daemon closing every descriptor) may have another file under that number. */
static void remove_local(int dirfd, uint64_t dev, uint64_t ino, const char *name)
{
	struct stat st;
	int up;
	if (fstat(dirfd, &st) != 0 || !S_ISDIR(st.st_mode) || (uint64_t)st.st_dev != dev || (uint64_t)st.st_ino != ino)
		return;
	unlinkat(dirfd, SOCK_NAME, 0);
	up = openat(dirfd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (up < 0)
		return;
	if (fstatat(up, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && (uint64_t)st.st_dev == dev &&
	    (uint64_t)st.st_ino == ino)
		unlinkat(up, name, AT_REMOVEDIR);
	close(up);
}

__attribute__((destructor)) static void chrony_at_exit(void)
{
	int pid;
	/* a process that never made a directory (no bounded read, or no chronyd asked): nothing to do, no system call */
	if (!__atomic_load_n(&live_used, __ATOMIC_RELAXED))
		return;
	pid = (int)getpid();
	for (int i = 0; i < LIVE_MAX; i++) {
		int expect = 2;
		if (__atomic_compare_exchange_n(&live[i].state, &expect, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			if (live[i].owner == pid)
				remove_local(live[i].dirfd, live[i].dev, live[i].ino, live[i].name);
			__atomic_store_n(&live[i].state, 0, __ATOMIC_RELEASE);
		}
	}
}

void fc__chrony_close(struct fc_chrony *ch)
{
	fc__file_close(ch->fd, ch->fd_id); /* and the directory's below: a fork child may have reused the numbers */
	if (ch->dirfd >= 0 && ch->owner != 0) { /* owner: set once the directory is made (0 in a zeroed struct) */
		if (ch->owner == (int)getpid()) {
			char name[sizeof(ch->local)];
			local_name(ch->local, name, sizeof(name));
			live_del(ch->dirfd);
			remove_local(ch->dirfd, ch->dir_dev, ch->dir_ino, name);
		}
		/* a fork child's copy: the parent's lock stays with the parent's descriptor */
		fc__file_close(ch->dirfd, (struct fc_fd_id){ch->dir_dev, ch->dir_ino});
	}
	ch->fd = -1;
	ch->dirfd = -1;
}

static int denied(int e) { return e == EACCES || e == EPERM; }

/* chronyd's socket directory (dir0: "." for a bare name, "/" at the root); returns the socket's name in it. */
static const char *socket_dir(const char *path, char *dir0, size_t n)
{
	const char *slash = strrchr(path, '/');
	fc__bfmt(dir0, n, "%.*s", slash ? (slash == path ? 1 : (int)(slash - path)) : 1, slash ? path : ".");
	return slash ? slash + 1 : path;
}

/* connect() fd to the entry `base` of the directory open at dfd (the one judged), resolved through that
 * descriptor: Linux has no connectat, so the name is "/proc/self/fd/<dfd>/<base>", whose magic link is this
 * process's own descriptor, which no other user can swap. The configured path's names are never looked up
 * again: a link on them that another user owns may point at their directory (and a forger's socket) by now.
 * 0, or -1 (errno; ENAMETOOLONG where the name does not fit sun_path; no /proc: fails closed). */
static int connect_at(int fd, int dfd, const char *base)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (fc__bfmt(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/%s", dfd, base) >= (int)sizeof(a.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return connect(fd, (struct sockaddr *)&a, sizeof(a));
}

/* Our socket in the directory of chronyd's, connected to it. 0, or -1 with b->last_error (ch->denied: this
 * process may not use chronyd's unix socket). */
static int unix_open(struct fc_chrony *ch, const char *path, struct fc_bound *b, int64_t now)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	char dir0[sizeof(ch->path)], name[48];
	const char *base = socket_dir(path, dir0, sizeof(dir0));
	int d0, e = 0;
	struct stat st;

	fc__bfmt(ch->via_name, sizeof(ch->via_name), "unix socket");
	d0 = open(dir0, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d0 < 0 || fstat(d0, &st) != 0) {
		e = errno;
		ch->denied = denied(e);
		fc__bound_error(b, now, "chronyd's socket directory %.60s: %s", dir0, fc__errname(e));
		goto fail;
	}
	/* the socket is chronyd's word only if no one but root and chronyd's user could have put it there (bound.c):
	 * an administrator's FASTCLOCK_CHRONY_SOCKET into a directory any user can make (/tmp/x) is never asked */
	if (fc__bound_socket_trusted(d0, base, path, b, now) != 0) {
		ch->denied = 2; /* not ours to use: the command port instead, this reason kept */
		goto fail;
	}
	sweep(d0);
	for (int tries = 0;; tries++) {
		uint64_t r = (uint64_t)rand32(ch) << 32 | rand32(ch);
		char hex[17];
		for (int i = 0; i < 16; i++)
			hex[i] = "0123456789abcdef"[r >> (60 - 4 * i) & 15];
		hex[16] = 0;
		fc__bfmt(name, sizeof(name), "fastclock.%d.%s", (int)getpid(), hex);
		if (fc__bfmt(ch->local, sizeof(ch->local), "%s/%s/%s", dir0, name, SOCK_NAME) >= (int)sizeof(ch->local)) {
			fc__bound_error(b, now, "chronyd's socket directory is too long: %.80s", dir0);
			goto fail;
		}
		if (mkdirat(d0, name, 0700) != 0) {
			e = errno;
			if (e == EEXIST && tries < 2) /* 64 random bits: a leftover of ours with the same pid at most */
				continue;
			ch->denied = denied(e);
			fc__bound_error(b, now, "mkdir in %.60s: %s", dir0, fc__errname(e));
			goto fail;
		}
		ch->dirfd = open_entry(d0, name); /* never into a mount or through a link swapped in for it */
		if (ch->dirfd < 0) {
			/* ours, made just now: removed again (rmdir removes an empty directory only: a mount or a link
			 * swapped in stays, EBUSY or ENOTDIR). A process out of descriptors (EMFILE) would leave one
			 * each try, three each open (once a second), in chronyd's directory, and no sweep could take them */
			e = errno;
			unlinkat(d0, name, AT_REMOVEDIR);
		}
		if (ch->dirfd < 0 && (e == ENOSYS || e == EPERM)) {
			ch->denied = 2; /* not ours to use safely: the command port instead, this reason kept */
			fc__bound_error(b, now, "our directory in %.60s is not entered without openat2 (%s)", dir0,
				       fc__errname(e));
			goto fail;
		}
		if (ch->dirfd < 0 && e != EXDEV && e != ELOOP && e != ENOENT && e != ENOTDIR) {
			/* not something swapped in for it (a mount, a link, a file) or removed: a new name fails alike */
			fc__bound_error(b, now, "open our directory in %.60s: %s", dir0, fc__errname(e));
			goto fail;
		}
		/* ours, locked, and still there (another process's sweep may have taken it before the lock) */
		if (ch->dirfd >= 0 && flock(ch->dirfd, LOCK_EX | LOCK_NB) == 0 && fstat(ch->dirfd, &st) == 0 &&
		    st.st_nlink > 0 && st.st_uid == geteuid()) {
			ch->dir_dev = (uint64_t)st.st_dev;
			ch->dir_ino = (uint64_t)st.st_ino;
			break;
		}
		if (ch->dirfd >= 0)
			close(ch->dirfd);
		ch->dirfd = -1;
		if (tries == 2) {
			fc__bound_error(b, now, "our directory in %.60s was removed or replaced as it was made", dir0);
			goto fail;
		}
	}
	ch->owner = (int)getpid();
	live_add(ch);
	/* chronyd's user passes through (whatever our umask), cannot list */
	ch->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	ch->fd_id = fc__file_fd_id(ch->fd);
	if (fchmod(ch->dirfd, 0711) != 0 || ch->fd < 0) {
		fc__bound_error(b, now, "socket(AF_UNIX): %s", fc__errname(errno));
		goto fail;
	}
	memcpy(a.sun_path, ch->local, strlen(ch->local) + 1);
	errno = 0;
	if (bind(ch->fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    fstatat(ch->dirfd, SOCK_NAME, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISSOCK(st.st_mode) ||
	    fchmodat(ch->dirfd, SOCK_NAME, 0666, 0) != 0) {
		fc__bound_error(b, now, "bind %.80s: %s", ch->local, errno ? fc__errname(errno) : "not where it was bound");
		goto fail;
	}
	/* our bind above went by the path (chronyd replies to that name), checked after it through our directory's
	 * descriptor; chronyd's socket is connected through the descriptor judged (d0), and the kernel then takes
	 * only its datagrams */
	if (connect_at(ch->fd, d0, base) != 0) {
		e = errno;
		ch->denied = denied(e);
		fc__bound_error(b, now, "connect to chronyd at %.70s: %s", path, fc__errname(e));
		goto fail;
	}
	close(d0);
	return 0;
fail:
	if (d0 >= 0)
		close(d0);
	fc__chrony_close(ch);
	return -1;
}

/* The UDP transport: chronyd's command port on the loopback, connected, so the kernel delivers only datagrams
 * from that address and port. Below net.ipv4.ip_unprivileged_port_start (1024 unless lowered; it applies to IPv6
 * too) a bind needs CAP_NET_BIND_SERVICE, and chronyd holds the port (its SO_REUSEADDR lets only such a process
 * bind beside it). Where the port is open to every user, nothing tells chronyd's reply from anyone's: refused.
 * The capability is not chronyd's alone: who holds the port is asked of the kernel too (cmdport_held). */
static long unprivileged_port_start(void)
{
	char buf[16];
	long v = 0;
	struct statfs sf;
	/* O_NONBLOCK, O_NOCTTY, O_NOFOLLOW: whatever is there, the open neither waits (a FIFO) nor acts */
	int fd = open("/proc/sys/net/ipv4/ip_unprivileged_port_start",
		      O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC), n;
	/* unreadable: unknown (no /proc/sys: a chroot, systemd's ProcSubset=pid; or Linux < 4.11, fixed at 1024). -1,
	 * so that the port is not trusted: assuming 1024 trusted anyone's port 323 where the namespace's value is 0.
	 * Not procfs (a file bind-mounted there saying 1024 where the namespace's value is 0): unknown too. */
	if (fd < 0)
		return -1;
	n = fstatfs(fd, &sf) == 0 && sf.f_type == FC_PROC_SUPER_MAGIC ? (int)pread(fd, buf, sizeof(buf) - 1, 0) : -1; /* at 0: trust.c */
	close(fd);
	for (int i = 0; i < n && buf[i] >= '0' && buf[i] <= '9' && v < 100000; i++)
		v = v * 10 + (buf[i] - '0');
	return n > 0 ? v : -1;
}

/* Is chronyd's command port still one only a privileged process can bind? 0 (ch->port_checked = now), or -1
 * with the reason. */
static int cmdport_privileged(struct fc_chrony *ch, struct fc_bound *b, int64_t now)
{
	long start = unprivileged_port_start();
	if (FC_CHRONY_CMDPORT >= start) {
		if (start < 0)
			fc__bound_error(b, now, "chronyd's %s: who may bind port %d is unknown here (ip_unprivileged_port_start "
				       "cannot be read)", ch->via_name, FC_CHRONY_CMDPORT);
		else
			fc__bound_error(b, now, "chronyd's %s: any user may bind port %d here (ip_unprivileged_port_start %ld)",
				       ch->via_name, FC_CHRONY_CMDPORT, start);
		return -1;
	}
	ch->port_checked = now;
	return 0;
}

/* ---- who holds the command port ---------------------------------------------------------------------------- */

/* chronyd's user: the owner of chronyd's socket directory (the directory of ch->path, looked at as an entry of its
 * parent, reached through an O_PATH descriptor: only search permission is needed there, as for a process that may
 * not enter the directory itself), where no one but root could have put that directory there: its parent and every
 * directory above it root's and writable by no one else (a sticky one only above a root-owned entry), as
 * fc__bound_socket_trusted asks of a socket directory of chronyd's user. -1 where none is known (no such directory,
 * a link, root's own, or one another user could have placed): then root alone may hold the port. At most
 * FC_CHRONYD_USER_DEPTH levels. */
#define FC_CHRONYD_USER_DEPTH 128
static long chronyd_user(const char *path)
{
	char dir0[sizeof(((struct fc_chrony *)0)->path)], up0[sizeof(dir0)];
	struct stat cur, up, next;
	const char *name;
	long uid = -1, owner;
	int fd;
	socket_dir(path, dir0, sizeof(dir0));
	name = socket_dir(dir0, up0, sizeof(up0));
	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -1;
	fd = open(up0, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstatat(fd, name, &cur, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(cur.st_mode) || cur.st_uid == 0) {
		close(fd);
		return -1;
	}
	owner = (long)cur.st_uid;
	/* fd: the directory holding `cur`, judged; then its parent, until "/" (its own parent) */
	for (int depth = 0; depth < FC_CHRONYD_USER_DEPTH; depth++) {
		int pfd;
		if (fstat(fd, &up) != 0 || up.st_uid != 0 ||
		    ((up.st_mode & (S_IWGRP | S_IWOTH)) && !((up.st_mode & S_ISVTX) && cur.st_uid == 0)))
			break;
		pfd = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = pfd;
		if (fd < 0 || fstat(fd, &next) != 0)
			break;
		if (next.st_dev == up.st_dev && next.st_ino == up.st_ino) {
			uid = owner;
			break;
		}
		cur = up;
	}
	if (fd >= 0)
		close(fd);
	return uid;
}

/* Who holds chronyd's command port. CAP_NET_BIND_SERVICE says nothing of who a process is: a service user given
 * it (systemd's AmbientCapabilities=, setcap) binds 323 while chronyd is stopped or restarting (or beside it, with
 * SO_REUSEADDR) and answers from it. The kernel tells any user who owns each socket (sock_diag's inet_diag dump:
 * idiag_uid, its creator's uid in our user namespace; one not mapped there reads 65534): the port is trusted only
 * while every UDP socket bound to port 323 (any address, IPv4 and IPv6: a [::] socket answers for 127.0.0.1 too)
 * is root's or chronyd's user's (ch->chronyd_uid, chronyd_user). need_holder: a reply is waiting, so someone must
 * hold the port now (a socket that sent and was closed: its reply not taken). What the kernel's answer lacks or
 * cannot be read (no sock_diag: a seccomp filter, EPERM; no udp_diag; a short, foreign or unknown message; an
 * interrupted or endless dump) fails closed with the reason. Never waits: the kernel writes the dump into our
 * queue at the request and at each read; at most DIAG_READS reads of DIAG_BUF bytes a family. 0, or -1 with
 * b->last_error (naming "port 323 held by uid N" where that is why). */
#define DIAG_BUF 8192
#define DIAG_READS 16
static int diag_family(int nl, int family, uint32_t seq, long chronyd_uid, int *holders, long *bad, int *err,
		       const char **what)
{
	struct {
		struct nlmsghdr h;
		struct inet_diag_req_v2 r;
	} req;
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	char buf[DIAG_BUF] __attribute__((aligned(8)));
	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.h.nlmsg_seq = seq;
	req.r.sdiag_family = (uint8_t)family;
	req.r.sdiag_protocol = IPPROTO_UDP;
	req.r.idiag_states = ~0u;
	req.r.id.idiag_sport = htons(FC_CHRONY_CMDPORT); /* the kernel's filter; each answer is checked again */
	if (sendto(nl, &req, sizeof(req), MSG_DONTWAIT, (struct sockaddr *)&kernel, sizeof(kernel)) != (ssize_t)sizeof(req)) {
		*err = errno, *what = "request";
		return -1;
	}
	for (int k = 0; k < DIAG_READS; k++) {
		struct sockaddr_nl from = {.nl_family = AF_NETLINK, .nl_pid = ~0u}; /* not the kernel's unless it says so */
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(nl, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
		if (n < 0) {
			*err = errno, *what = "answer";
			return -1;
		}
		if (fl != sizeof(from) || from.nl_pid != 0) { /* only the kernel's answer counts */
			*err = 0, *what = "answer not the kernel's";
			return -1;
		}
		for (size_t off = 0; off < (size_t)n;) {
			const struct nlmsghdr *h = (const struct nlmsghdr *)(const void *)(buf + off);
			size_t left = (size_t)n - off;
			if (left < sizeof(*h) || h->nlmsg_len < sizeof(*h) || h->nlmsg_len > left || h->nlmsg_seq != seq ||
			    (h->nlmsg_flags & NLM_F_DUMP_INTR)) {
				*err = 0, *what = "answer truncated, foreign or interrupted";
				return -1;
			}
			if (h->nlmsg_type == NLMSG_DONE) {
				if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(int)) && *(const int *)NLMSG_DATA(h) < 0) {
					*err = -*(const int *)NLMSG_DATA(h), *what = "dump";
					return -1;
				}
				return 0;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);
				*err = h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) ? -e->error : 0, *what = "request";
				/* no IPv6 here (a kernel without it: no handler for the family): no IPv6 socket holds the port */
				return family == AF_INET6 && (*err == ENOENT || *err == EAFNOSUPPORT) ? 0 : -1;
			}
			if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
				*err = 0, *what = "answer of an unknown type or length";
				return -1;
			}
			const struct inet_diag_msg *m = NLMSG_DATA(h);
			if (m->idiag_family == family && ntohs(m->id.idiag_sport) == FC_CHRONY_CMDPORT) {
				(*holders)++;
				if (m->idiag_uid != 0 && (chronyd_uid < 0 || m->idiag_uid != (unsigned long)chronyd_uid))
					*bad = (long)m->idiag_uid;
			}
			off += NLMSG_ALIGN(h->nlmsg_len) < left ? NLMSG_ALIGN(h->nlmsg_len) : left;
		}
	}
	*err = 0, *what = "dump longer than it may be";
	return -1;
}

static int cmdport_held(struct fc_chrony *ch, int need_holder, struct fc_bound *b, int64_t now)
{
	int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_SOCK_DIAG), holders = 0, err = 0, r = 0;
	long bad = -1;
	const char *what = "socket";
	uint32_t seq = rand32(ch);
	if (nl < 0)
		err = errno, r = -1;
	for (int i = 0; i < 2 && r == 0; i++)
		r = diag_family(nl, i ? AF_INET6 : AF_INET, seq + (uint32_t)i, ch->chronyd_uid, &holders, &bad, &err, &what);
	if (nl >= 0)
		close(nl);
	if (r != 0)
		fc__bound_error(b, now, "%s not trusted: its holder unknown (sock_diag %s%s%s)", ch->via_name, what,
			       err ? ": " : "", err ? fc__errname(err) : "");
	else if (bad >= 0)
		fc__bound_error(b, now, "%s not trusted: port %d held by uid %ld (not root, not chronyd's user)",
			       ch->via_name, FC_CHRONY_CMDPORT, bad);
	else if (need_holder && holders == 0)
		fc__bound_error(b, now, "%s not trusted: a reply from port %d, which no socket holds now", ch->via_name,
			       FC_CHRONY_CMDPORT);
	else
		return 0;
	return -1;
}

static int udp_open(struct fc_chrony *ch, int v6, int judge, struct fc_bound *b, int64_t now)
{
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(FC_CHRONY_CMDPORT)};
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(FC_CHRONY_CMDPORT)};
	ch->via = v6 ? FC_CHRONY_VIA_UDP6 : FC_CHRONY_VIA_UDP4;
	fc__bfmt(ch->via_name, sizeof(ch->via_name), "udp %s:%d", v6 ? "[::1]" : "127.0.0.1", FC_CHRONY_CMDPORT);
	if (cmdport_privileged(ch, b, now) != 0 || (judge && cmdport_held(ch, 0, b, now) != 0))
		return -1;
	a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a6.sin6_addr = in6addr_loopback;
	ch->fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	ch->fd_id = fc__file_fd_id(ch->fd);
	if (ch->fd < 0 || (v6 ? connect(ch->fd, (struct sockaddr *)&a6, sizeof(a6))
			      : connect(ch->fd, (struct sockaddr *)&a4, sizeof(a4))) != 0) {
		fc__bound_error(b, now, "chronyd's %s: %s", ch->via_name, fc__errname(errno));
		fc__chrony_close(ch);
		return -1;
	}
	return 0;
}

/* Does anything listen on chronyd's command port (v4 or v6)? One request is sent on a fresh connected socket
 * and the socket read at once: on the loopback a port nobody listens on answers with an ICMP error before
 * send() returns (ECONNREFUSED here). 1 unless both are refused (a late error only makes it 1: the open then
 * finds out). */
static int cmdport_listens(void)
{
	uint8_t buf[CANDM_TRACKING_PKT];
	struct fc_chrony probe;
	int open = 0;
	memset(&probe, 0, sizeof(probe));
	for (int v6 = 0; v6 < 2 && !open; v6++) {
		struct fc_bound scratch = {0};
		size_t len = fc__chrony_request(rand32(&probe), buf, sizeof(buf));
		probe.fd = -1;
		probe.dirfd = -1;
		if (udp_open(&probe, v6, 0, &scratch, 0) != 0) /* a probe: it takes no reply */
			continue;
		open = send(probe.fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)len &&
		       !(recv(probe.fd, buf, sizeof(buf), MSG_DONTWAIT) < 0 && errno == ECONNREFUSED);
		close(probe.fd);
	}
	return open;
}

int fc__chrony_present(const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0)
		return S_ISSOCK(st.st_mode);
	/* chronyd's directory exists but is closed to us (root's and chronyd's user's): its command port, if it
	 * listens (cmdport 0 turns it off: then the next source serves) */
	return errno == EACCES && cmdport_listens();
}

int fc__chrony_open(struct fc_chrony *ch, const char *path, struct fc_bound *b, int64_t now)
{
	char keep[sizeof(b->last_error)];
	int64_t keep_at;
	memset(ch, 0, sizeof(*ch));
	ch->fd = -1;
	ch->dirfd = -1;
	ch->src_index = -1;
	if (strlen(path) >= sizeof(ch->path)) {
		fc__bound_error(b, now, "chronyd socket path too long (%zu bytes): %.60s", strlen(path), path);
		return -1;
	}
	fc__bfmt(ch->path, sizeof(ch->path), "%s", path);
	memcpy(keep, b->last_error, sizeof(keep));
	keep_at = b->last_error_at;
	if (unix_open(ch, path, b, now) == 0)
		return 0;
	if (!ch->denied) /* not a question of permission: chronyd's socket is broken or gone */
		return -1;
	if (ch->denied == 2 && !cmdport_listens()) /* the port only where it listens (as fc__chrony_present) */
		return -1;
	/* not root nor chronyd's user: the monitoring commands on its command port (the refusal is how it should
	 * be for this user, no error) */
	ch->chronyd_uid = chronyd_user(path);
	if (udp_open(ch, 0, 1, b, now) != 0)
		return -1;
	if (ch->denied != 2) {
		memcpy(b->last_error, keep, sizeof(keep));
		b->last_error_at = keep_at;
	}
	return 0;
}

/* Reconnect to chronyd's unix socket after it restarted (its old socket is gone: ECONNREFUSED, and the kernel
 * disconnected ours), if what is there now is still placed by root or chronyd's user alone (the open's check
 * again: the directory may have been opened to others since; -2, the reason recorded). While disconnected
 * anyone who can reach our path could send to it: what came then is dropped unread, so the new round sees
 * only the new chronyd's replies. */
static int unix_reconnect(struct fc_chrony *ch, struct fc_bound *b, int64_t now)
{
	uint8_t junk[64];
	char dir0[sizeof(ch->path)];
	const char *base = socket_dir(ch->path, dir0, sizeof(dir0));
	int d0 = open(dir0, O_RDONLY | O_DIRECTORY | O_CLOEXEC), trusted, r;
	if (d0 < 0)
		return -1;
	trusted = fc__bound_socket_trusted(d0, base, ch->path, b, now) == 0;
	/* what was judged is what is connected: through d0, as at the open */
	r = trusted ? connect_at(ch->fd, d0, base) : 0;
	close(d0);
	if (!trusted)
		return -2;
	if (r != 0)
		return -1;
	for (int i = 0; i < FC_CHRONY_RECV_MAX && recv(ch->fd, junk, sizeof(junk), MSG_DONTWAIT) >= 0; i++)
		;
	return 0;
}

/* UDP with no reply ever: chronyd may listen on the other loopback address (bindcmdaddress) */
static void udp_flip(struct fc_chrony *ch, struct fc_bound *b, int64_t now)
{
	int v6 = ch->via == FC_CHRONY_VIA_UDP4;
	fc__file_close(ch->fd, ch->fd_id);
	ch->fd = -1;
	udp_open(ch, v6, 1, b, now);
}

/* How much a source of the round counts: 2 the one chronyd selected, 1 the one it selected last, known by its
 * address (an index moves when the list changes), followed while none is selected: right after a reference
 * step chronyd may stop calling its only source selected, and that source's newest measurement is what shows
 * the step; 0 neither, or unreachable. */
static int rank(const struct fc_chrony *ch, const struct fc_chrony_source *sd)
{
	if (sd->reachability == 0)
		return 0;
	if (sd->state == FC_CHRONY_SELECTED)
		return 2;
	return ch->src_index >= 0 && memcmp(sd->addr, ch->src.addr, sizeof(sd->addr)) == 0 ? 1 : 0;
}

/* The followed source's period between measurements (2^poll s; chronyd's polls run from 2^-7 s to 2^24 s, a
 * value past them is taken at the limit), else the interval between chronyd's last two clock updates; 0 when
 * neither is known. */
static int64_t period_ns(const struct fc_chrony *ch)
{
	const double u = ch->last.last_update_interval;
	if (ch->have_src) {
		int p = ch->poll < -7 ? -7 : ch->poll > 24 ? 24 : ch->poll;
		return p >= 0 ? NS_PER_SEC << p : NS_PER_SEC >> -p;
	}
	return u > 0 && u <= FC_CHRONY_MAX_SEC ? (int64_t)(u * 1e9) : 0;
}

/* Has the source's newest measurement changed since the last round (same source: a different value, or a
 * sample younger than the one before)? */
static int new_sample(const struct fc_chrony_source *was, const struct fc_chrony_source *now)
{
	return memcmp(was->addr, now->addr, sizeof(was->addr)) == 0 &&
	       (was->latest_meas != now->latest_meas || was->latest_meas_err != now->latest_meas_err ||
		now->since_sample < was->since_sample);
}

/* The schedule, at the end of a round that carried a tracking report (now: its end). chronyd's data change
 * only when it takes a measurement (source data) and updates the clock from it (tracking's ref_time): if
 * this round shows such a change, it happened after the last round that showed none was sent (seen_sent)
 * and before now, and the next comes one period later, in [core_lo, core_hi]: rounds go every eighth of
 * fine_ns there (the change is then seen within 12.5 ms, and the next core is that narrow: a few rounds a
 * period), widened by that much each side (a refclock's timer, re-armed at each firing, creeps by the
 * scheduler's delays). Around it, from window_lo until the change is seen or window_hi passes (a measurement
 * chronyd dropped; the cap's rounds then find the next), every fine_ns: the window is widened by a 32nd of the
 * period each side (chronyd randomises an NTP source's polls by up to 2 %, a refclock's are exact) and starts
 * up to fine_ns early at random, so that processes do not ask in step. */
static void schedule(struct fc_chrony *ch, int changed, int64_t now)
{
	int64_t p = period_ns(ch), slack = p / 32, near = ch->fine_ns / 8;
	if (changed && ch->seen_sent && p > 0) {
		ch->window_lo = ch->seen_sent + p - slack - (int64_t)(rand32(ch) % (uint64_t)(ch->fine_ns > 1 ? ch->fine_ns : 1));
		ch->window_hi = now + p + slack + ch->fine_ns;
		/* a core only where the change was seen within a window's round of the last that did not show it (a
		 * cap round's second is no place to ask 8 times as often), and for a period of a second or more (a
		 * chronyd measuring more often is asked every fine_ns: never 8 times as often) */
		ch->core_lo = ch->seen_sent + p - near;
		ch->core_hi = now - ch->seen_sent <= 2 * ch->fine_ns && p >= FC_CHRONY_CAP_NS ? now + p + near : 0;
	} else if (changed) {
		ch->window_lo = ch->window_hi = ch->core_hi = 0; /* the first report, or no period: learnt at the next change */
	}
	ch->seen_sent = ch->sent_at;
}

/* Every reply of the round is in (or the round timed out): the best source becomes the one in the interval. */
static void end_round(struct fc_chrony *ch, int64_t now)
{
	int changed = ch->round_changed, other = 0;
	if (ch->round_rank > 0 && ch->have_src && memcmp(ch->src.addr, ch->round_src.addr, sizeof(ch->src.addr)) != 0)
		other = 1; /* another source followed: its phase is not known */
	else if (ch->round_rank > 0)
		changed |= !ch->have_src || new_sample(&ch->src, &ch->round_src);
	if (ch->round_rank > 0) {
		ch->src = ch->round_src;
		ch->poll = ch->round_poll;
		ch->have_src = 1;
		ch->src_index = ch->round_src.index;
	} else {
		ch->have_src = 0; /* no source to follow this round: tracking alone, as ClockBound (the one followed
				   * stays known, and asked, should it answer again) */
	}
	/* more sources than one round asks, and none of these selected: look at the next ones (the request list
	 * keeps the one followed) */
	if (ch->round_rank < 2 && ch->n_sources > FC_CHRONY_MAX_SOURCES)
		ch->first = (ch->first + FC_CHRONY_MAX_SOURCES - 1) % ch->n_sources;
	if (ch->got & 1)
		schedule(ch, changed, now);
	if (other)
		ch->window_lo = ch->window_hi = ch->core_hi = 0;
	ch->sent_at = 0;
}

/* Is a round due? The first at once; then one FC_CHRONY_CAP_NS (less its random part, cap_ns) after the last,
 * or every fine_ns inside the window where chronyd's next measurement is expected, every eighth of it in its
 * core; never sooner than fine_ns after the last elsewhere. */
static int due(const struct fc_chrony *ch, int64_t now)
{
	int64_t at = ch->last_sent + (ch->cap_ns > ch->fine_ns ? ch->cap_ns : ch->fine_ns);
	int64_t fine = ch->last_sent + ch->fine_ns, near = ch->last_sent + ch->fine_ns / 8;
	if (ch->rounds == 0)
		return 1;
	if (ch->window_hi) {
		if (fine < ch->window_lo)
			fine = ch->window_lo;
		if (near < ch->core_lo)
			near = ch->core_lo;
		if (near <= ch->core_hi && near < fine)
			fine = near;
		if (fine <= ch->window_hi && fine < at)
			at = fine;
	}
	return now >= at;
}

/* Is s a sequence number of a recent round (this one after it ended, or one of the FC_CHRONY_PAST before)? */
static int late(const struct fc_chrony *ch, uint32_t s)
{
	uint32_t past = ch->rounds > FC_CHRONY_PAST ? FC_CHRONY_PAST : ch->rounds ? ch->rounds - 1 : 0;
	if (!ch->sent_at && ch->rounds && s - ch->seq < ROUND_SEQS)
		return 1;
	for (uint32_t i = 0; i < past; i++)
		if (s - ch->past[i] < ROUND_SEQS)
			return 1;
	return 0;
}

/* One reply datagram: 1 if it belongs to the outstanding round (taken, or a source chronyd no longer has or
 * would not give), 0 if it is a late reply to a recent round or a repeat of one taken (dropped silently), -1 if
 * it is neither or malformed (dropped; err says why). Only a reply naming one of the round's random sequence
 * numbers is taken, once: anything else costs at most this round (then timed out), never completes it. */
static int take(struct fc_chrony *ch, const uint8_t *buf, size_t n, int64_t now, char *err, size_t errlen)
{
	uint32_t s = n >= CANDM_RPY_HEAD ? get32(buf + 16) : 0, k = s - ch->seq;
	struct fc_chrony_source sd;
	if (n < CANDM_RPY_HEAD) {
		fc__bfmt(err, errlen, "a datagram of %zu bytes that is no reply of chronyd's", n);
		return -1;
	}
	if (late(ch, s))
		return 0;
	if (!ch->sent_at || k >= ROUND_SEQS) {
		fc__bfmt(err, errlen, "a datagram with sequence %u, no request of ours: dropped", s);
		return -1;
	}
	if (k == 0) {
		struct fc_chrony_tracking t;
		if (ch->got & 1)
			return 0;
		if (fc__chrony_decode(buf, n, ch->seq, &t, err, errlen) != 0)
			return -1;
		ch->round_changed = !ch->last_reply || t.ref_time_sec != ch->last.ref_time_sec ||
				    t.ref_time_nsec != ch->last.ref_time_nsec;
		ch->last = t;
		ch->last_reply = now;
		ch->tracking_at = ch->sent_at;
		ch->slew_k = ch->round_k;
		ch->slew_reply_rt = realtime_now();
		ch->slew_ok = ch->round_k_ok && ch->slew_reply_rt != 0;
		ch->got |= 1;
		return 1;
	}
	if (k == 1) {
		if (ch->got & 2)
			return 0;
		if (fc__chrony_decode_count(buf, n, ch->seq + 1, &ch->n_sources, err, errlen) != 0)
			return -1;
		if (ch->first >= ch->n_sources) /* applies to the next round's requests */
			ch->first = 0;
		ch->got |= 2;
		return 1;
	}
	if (k - 2 < (uint32_t)ch->want_src) {
		uint16_t status = get16(buf + 8);
		if (ch->src_got & 1u << (k - 2))
			return 0;
		ch->src_got |= 1u << (k - 2);
		ch->got_src++; /* answered, whatever the answer */
		if (status == CANDM_STT_NOSUCHSOURCE) /* the list shrank since the count */
			return 1;
		if (fc__chrony_decode_source(buf, n, ch->seq + k, &sd, err, errlen) != 0)
			return -1;
		sd.index = (int)ch->req_index[k - 2];
		if (rank(ch, &sd) > ch->round_rank) {
			ch->round_src = sd;
			ch->round_rank = rank(ch, &sd);
			ch->round_poll = (int16_t)get16(buf + CANDM_RPY_HEAD + 20); /* RPY_Source_Data: poll */
		}
		return 1;
	}
	fc__bfmt(err, errlen, "a reply with sequence %u to a request not sent: dropped", s);
	return -1;
}

/* The source-data requests of a round: the source followed (if any), then the list from `first` round, at
 * most FC_CHRONY_MAX_SOURCES and no more than chronyd counted last (index 0 alone before it has answered: most
 * have one). */
static void plan_round(struct fc_chrony *ch)
{
	uint32_t n = ch->n_sources, want = n == 0 ? 1 : n < FC_CHRONY_MAX_SOURCES ? n : FC_CHRONY_MAX_SOURCES;
	int k = 0;
	if (ch->src_index >= 0 && (uint32_t)ch->src_index < n)
		ch->req_index[k++] = (uint32_t)ch->src_index;
	for (uint32_t i = 0; (uint32_t)k < want && i < (n ? n : 1); i++) {
		uint32_t index = (ch->first + i) % (n ? n : 1);
		if (!(ch->src_index >= 0 && index == (uint32_t)ch->src_index))
			ch->req_index[k++] = index;
	}
	ch->want_src = k;
}

/* Is our socket's directory gone (unlinked: no name left)? */
static int gone(const struct fc_chrony *ch)
{
	struct stat st;
	return ch->dirfd >= 0 && (fstat(ch->dirfd, &st) != 0 || st.st_nlink == 0 ||
				  fstatat(ch->dirfd, SOCK_NAME, &st, AT_SYMLINK_NOFOLLOW) != 0);
}

/* Send one request of the round on the connected socket; 0, or -1 (errno set). */
static int send_req(const struct fc_chrony *ch, const uint8_t *buf, size_t len)
{
	return send(ch->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

int fc__chrony_poll(struct fc_chrony *ch, int64_t now, int64_t min_interval, struct fc_bound *b)
{
	uint8_t buf[512];
	char err[FC_BOUND_TEXT];
	int updated = 0;
	ssize_t n;

	if (ch->fd < 0)
		return 0;
	/* the command port: an administrator may lower ip_unprivileged_port_start after the open (read then only, any
	 * user's socket on 323 would keep the open one's trust). Read again at most once a second (an
	 * open, a read, a close on the writer's poll, never on a read path), before any reply is taken or round sent:
	 * where any user may now bind the port, it is dropped with the reason (the next open refuses it too). */
	if (ch->via != FC_CHRONY_VIA_UNIX && now - ch->port_checked >= NS_PER_SEC && cmdport_privileged(ch, b, now) != 0) {
		fc__chrony_close(ch);
		return 0;
	}
	/* collect the datagrams waiting (a bounded number a poll): late replies to older rounds are dropped, so
	 * they never fill the socket's queue */
	for (int i = 0; i < FC_CHRONY_RECV_MAX && (n = recv(ch->fd, buf, sizeof(buf), MSG_DONTWAIT)) >= 0; i++) {
		int r;
		/* the command port: whoever holds it now is asked of the kernel before anything from it is taken (once a
		 * poll that has replies: about once a round, never on a read path) */
		if (i == 0 && ch->via != FC_CHRONY_VIA_UNIX && cmdport_held(ch, 1, b, now) != 0) {
			b->status = FC_SYNC_UNKNOWN;
			fc__bfmt(b->reason, sizeof(b->reason), "%s", b->last_error);
			fc__chrony_close(ch);
			return 0;
		}
		r = take(ch, buf, (size_t)n, now, err, sizeof(err));
		if (r < 0)
			fc__bound_error(b, now, "%s", err);
		if (r <= 0)
			continue;
		if (ch->got == 3 && ch->got_src == ch->want_src)
			end_round(ch, now);
		if (ch->last_reply) {
			fc__chrony_report(ch, ch->tracking_at, b);
			slew_follow(ch, now, b);
		}
		updated = 1;
	}
	if (ch->sent_at && now - ch->sent_at >= FC_CHRONY_TIMEOUT_NS) {
		fc__bound_error(b, now, "no reply from chronyd at %.70s in %lld ms (%s)",
			       ch->via == FC_CHRONY_VIA_UNIX ? ch->path : ch->via_name,
			       (long long)(FC_CHRONY_TIMEOUT_NS / 1000000),
			       !(ch->got & 1) ? "tracking" : !(ch->got & 2) ? "source count" : "source data");
		if (!(ch->got & 1) && !ch->last_reply && ch->via != FC_CHRONY_VIA_UNIX)
			udp_flip(ch, b, now);
		if (ch->via == FC_CHRONY_VIA_UNIX && !(ch->got & 1) && gone(ch)) {
			/* our directory was removed (chronyd's directory recreated, a clean-up): chronyd's replies
			 * have nowhere to go; closed, so that the source is opened again */
			fc__bound_error(b, now, "our socket %.80s was removed: reopening", ch->local);
			fc__chrony_close(ch);
		}
		end_round(ch, now); /* what did come counts */
		if (ch->fd < 0)
			return updated;
	}
	ch->fine_ns = min_interval;
	if (!ch->sent_at && due(ch, now)) {
		size_t len;
		int e;
		ch->last_sent = now;
		ch->cap_ns = FC_CHRONY_CAP_NS - (int64_t)(rand32(ch) % (uint32_t)(FC_CHRONY_CAP_NS / 4));
		ch->round_changed = 0;
		if (ch->rounds)
			ch->past[(ch->rounds - 1) % FC_CHRONY_PAST] = ch->seq;
		ch->rounds++;
		ch->seq = rand32(ch);
		ch->got = 0;
		ch->got_src = 0;
		ch->src_got = 0;
		ch->round_rank = 0;
		plan_round(ch);
		ch->round_k_ok = read_kernel(&ch->round_k) == 0; /* before the request: chronyd answers after it */
		len = fc__chrony_request(ch->seq, buf, sizeof(buf));
		if (send_req(ch, buf, len) != 0) {
			/* chronyd restarted (unix: its old socket is gone), or an ICMP error from an earlier request
			 * (udp) is reported now: once more, reconnected */
			int r = 0;
			e = errno;
			if ((e == ECONNREFUSED || e == ENOTCONN) &&
			    (ch->via != FC_CHRONY_VIA_UNIX || (r = unix_reconnect(ch, b, now)) == 0) && send_req(ch, buf, len) == 0)
				goto sent;
			e = errno;
			if (r != -2) /* -2: the reconnect recorded why it is not trusted */
				fc__bound_error(b, now, "send to chronyd (%s at %.60s): %s", ch->via_name,
					       ch->via == FC_CHRONY_VIA_UNIX ? ch->path : "the loopback", fc__errname(e));
			if (e == ECONNREFUSED && !ch->last_reply && ch->via != FC_CHRONY_VIA_UNIX)
				udp_flip(ch, b, now);
			return updated;
		}
	sent:
		ch->sent_at = now;
		/* the rest are best effort: one that cannot be sent is not waited for */
		len = fc__chrony_request_count(ch->seq + 1, buf, sizeof(buf));
		if (send_req(ch, buf, len) != 0)
			ch->got |= 2;
		for (int i = 0; i < ch->want_src; i++) {
			len = fc__chrony_request_source(ch->seq + 2 + (uint32_t)i, ch->req_index[i], buf, sizeof(buf));
			if (send_req(ch, buf, len) != 0)
				ch->want_src = i;
		}
	}
	return updated;
}

/* ---- the driver (select.c's table) ------------------------------------------------------------------------ */

static void drv_init(void *s)
{
	struct fc_chrony *ch = s;
	ch->fd = -1;
	ch->dirfd = -1;
}

/* Only where chronyd is there to be asked (fc__chrony_present): an absent socket is not a reason to try its
 * port. */
static int drv_open(void *s, const char *path, struct fc_bound *b, int64_t now)
{
	struct fc_chrony *ch = s;
	if (!fc__chrony_present(path)) {
		fc__bound_error(b, now, "no chronyd socket at %.70s", path);
		drv_init(ch);
		fc__bfmt(ch->path, sizeof(ch->path), "%s", path);
		return -1;
	}
	return fc__chrony_open(ch, path, b, now);
}

static void drv_close(void *s) { fc__chrony_close(s); }
static int drv_is_open(const void *s) { return ((const struct fc_chrony *)s)->fd >= 0; }

/* A round every t->every_ns around chronyd's next measurement, else once a second (fc__chrony_poll), the replies
 * collected without blocking; the report aged as ClockBound's client ages a segment (FC_CHRONY_GRACE_NS,
 * FC_CHRONY_VOID_NS). */
static void drv_poll(void *s, const struct fc_bound_tick *t, struct fc_bound *b)
{
	struct fc_chrony *ch = s;
	int64_t mono = t->mono;
	fc__chrony_poll(ch, mono, t->every_ns, b);
	if (ch->last_reply == 0) {
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason), "no tracking report from chronyd (%s) at %.60s yet", ch->via_name,
			 ch->path);
	} else if (b->status == FC_SYNC_SYNCHRONIZED && mono - b->as_of_ns >= FC_CHRONY_VOID_NS) {
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason), "no report from chronyd for %lld s",
			 (long long)((mono - b->as_of_ns) / NS_PER_SEC));
	} else if (b->status == FC_SYNC_SYNCHRONIZED && mono - b->as_of_ns >= FC_CHRONY_GRACE_NS) {
		b->status = FC_SYNC_FREE_RUNNING;
		fc__bfmt(b->reason, sizeof(b->reason), "no report from chronyd for %lld ms",
			 (long long)((mono - b->as_of_ns) / 1000000));
	} else if (ch->last_reply && mono - b->as_of_ns < FC_CHRONY_GRACE_NS && b->status == FC_SYNC_FREE_RUNNING) {
		fc__chrony_report(ch, b->as_of_ns, b); /* fresh again */
	}
}

/* chronyd has said nothing for ClockBound's grace (or never) */
static int drv_silent(const void *s, const struct fc_bound_tick *t)
{
	const struct fc_chrony *ch = s;
	return ch->last_reply == 0 || t->mono - ch->last_reply >= FC_CHRONY_GRACE_NS;
}

/* The selected source's newest sample: its age is whole seconds at the reply, at the latest the request's send
 * time; one more second is taken off. */
static int64_t drv_measured_at(const void *s)
{
	const struct fc_chrony *ch = s;
	return ch->have_src && ch->last_reply ? ch->tracking_at - ((int64_t)ch->src.since_sample + 1) * NS_PER_SEC
					      : INT64_MIN;
}

static const char *drv_via(const void *s) { return ((const struct fc_chrony *)s)->via_name; }

const struct fc_bound_driver fc__chrony_driver = {
	.name = "chrony", .init = drv_init, .open = drv_open, .close = drv_close, .is_open = drv_is_open,
	.poll = drv_poll, .silent = drv_silent, .measured_at = drv_measured_at, .via = drv_via,
};
