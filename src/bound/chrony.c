/*
 * fastclock — chronyd's tracking report over its unix command socket (chrony's candm.h, protocol version 6),
 * with the newest measurement of the source chronyd selected, asked without ever blocking: a round of requests
 * is sent on one poll and the replies collected on later ones.
 *
 * Owns: struct fc_chrony (the socket, the outstanding request, the last report), the candm encoding.
 * May call: async-signal-safe libc only (socket, bind, chmod, unlink, sendto, recv, getpid), bound.c, fmt.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "bound.h"

#define NS_PER_SEC 1000000000LL

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

/* The interval: chronyd's estimate of true time is the clock plus its current correction c, within its root
 * distance (root_delay / 2 + root_dispersion: ClockBound's rule without the correction). A running chronyd
 * (not -x) slews the clock towards that estimate at up to maxslewrate (83 ms/s by default), so between polls the
 * true offset moves from c towards 0 at a rate we do not see: the interval covers both ends, [min(0, c),
 * max(0, c)], widened by the root distance.
 * After a reference step chronyd's tracking keeps its old estimate for 10-20 s (the new samples look like
 * outliers to its regression) while its newest measurement of the selected source (source data: latest_meas,
 * the local clock's offset from the source, positive when ahead) already shows the step: the source's time is
 * clock + c - latest_meas within latest_meas_err. The interval also covers that point, so it widens at the
 * first measurement after a step instead of staying wrong until tracking moves. In steady state latest_meas is
 * within the noise of 0 and adds nothing. */
int fc__chrony_eval(const struct fc_chrony_tracking *t, const struct fc_chrony_source *sd, int64_t at,
		   struct fc_bound *b)
{
	int64_t c = sec_to_ns_up(t->correction), dist, lo, hi;
	double rate_ppm;
	dist = sec_to_ns_up(t->root_delay / 2 + t->root_dispersion);
	if (dist < 0)
		dist = -dist;
	lo = c < 0 ? c : 0;
	hi = c > 0 ? c : 0;
	if (sd && sd->reachability != 0) {
		int64_t m = sec_to_ns_up(t->correction - sd->latest_meas), e = sec_to_ns_up(sd->latest_meas_err);
		if (e < 0)
			e = -e;
		if (m - e < lo)
			lo = m - e;
		if (m + e > hi)
			hi = m + e;
	}
	/* centre rounded down, half rounded up: [centre - half, centre + half] covers [lo, hi] */
	b->center_ns = lo + (hi - lo) / 2;
	b->half_ns = (hi - lo) - (hi - lo) / 2 + dist;
	b->as_of_ns = at;
	/* growth: chrony's own dispersion rate (maxclockerror, 1 ppm unless configured) plus the frequency's
	 * skew and residual: the clock may wander that fast from the estimate until the next report */
	rate_ppm = (t->skew_ppm < 0 ? -t->skew_ppm : t->skew_ppm) +
		   (t->resid_freq_ppm < 0 ? -t->resid_freq_ppm : t->resid_freq_ppm);
	b->drift_ppb = FC_CHRONY_DRIFT_PPB + (rate_ppm < 1e6 ? (int64_t)(rate_ppm * 1000.0) + 1 : 1000000000);
	b->leap = t->leap_status == 1 ? FC_LEAP_INSERT : t->leap_status == 2 ? FC_LEAP_DELETE : FC_LEAP_NONE;
	if (t->leap_status == 3) {
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason), "chronyd is not synchronised (leap status 3)");
	} else if (t->ref_time_sec == 0 || t->last_update_interval <= 0) {
		/* chronyd's first report after a start has no update yet (ClockBound's Unknown with as_of 0) */
		b->status = FC_SYNC_UNKNOWN;
		fc__bfmt(b->reason, sizeof(b->reason), "chronyd has not updated the clock yet");
	} else {
		b->status = FC_SYNC_SYNCHRONIZED;
		fc__bfmt(b->reason, sizeof(b->reason),
			 "chronyd stratum %d, correction %.6f s, root distance %.6f s; %s %d newest measurement %.6f s",
			 t->stratum, t->correction, t->root_delay / 2 + t->root_dispersion,
			 !sd ? "no source data" : sd->state == FC_CHRONY_SELECTED ? "selected source" : "last selected source",
			 sd ? sd->index : -1, sd ? sd->latest_meas : 0.0);
	}
	return b->status;
}

void fc__chrony_close(struct fc_chrony *ch)
{
	if (ch->fd >= 0) {
		close(ch->fd);
		if (ch->owner == (int)getpid())
			unlink(ch->local);
	}
	ch->fd = -1;
}

int fc__chrony_open(struct fc_chrony *ch, const char *path, struct fc_bound *b, int64_t now)
{
	static unsigned serial;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path) : 1;
	unsigned k = __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED);

	memset(ch, 0, sizeof(*ch));
	ch->fd = -1;
	ch->src_index = -1;
	if (strlen(path) >= sizeof(ch->path)) {
		fc__bound_error(b, now, "chronyd socket path too long (%zu bytes): %s", strlen(path), path);
		return -1;
	}
	fc__bfmt(ch->path, sizeof(ch->path), "%s", path);
	/* chronyd answers a unix-socket request by sending to the requester's path, so ours is bound beside its
	 * socket (as chronyc does), named by pid and a serial so processes and clocks never collide. */
	if (fc__bfmt(ch->local, sizeof(ch->local), "%.*s/fastclock.%d.%u.sock", dirlen, slash ? path : ".",
		     (int)getpid(), k) >= (int)sizeof(ch->local)) {
		fc__bound_error(b, now, "chronyd socket directory too long: %s", path);
		return -1;
	}
	ch->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (ch->fd < 0) {
		fc__bound_error(b, now, "socket(AF_UNIX): %s", fc__errname(errno));
		return -1;
	}
	unlink(ch->local);
	memcpy(a.sun_path, ch->local, strlen(ch->local) + 1);
	if (bind(ch->fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		fc__bound_error(b, now, "bind %s: %s", ch->local, fc__errname(errno));
		close(ch->fd);
		ch->fd = -1;
		return -1;
	}
	ch->owner = (int)getpid();
	/* chronyd may run as another user (Debian: _chrony) and must be able to send to us */
	chmod(ch->local, 0666);
	/* not connected: each request is sent to the path, so a restarted chronyd (a new socket) is found */
	return 0;
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

/* Every reply of the round is in (or the round timed out): the best source becomes the one in the interval. */
static void end_round(struct fc_chrony *ch)
{
	if (ch->round_rank > 0) {
		ch->src = ch->round_src;
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
	ch->sent_at = 0;
}

/* One reply datagram: 1 if it belongs to the outstanding round (taken, or a source chronyd no longer has or
 * would not give), 0 if it is a late reply to an older round (dropped silently), -1 if it is neither or
 * malformed (err says why). */
static int take(struct fc_chrony *ch, const uint8_t *buf, size_t n, int64_t now, char *err, size_t errlen)
{
	uint32_t k = n >= CANDM_RPY_HEAD ? get32(buf + 16) - ch->seq : ROUND_SEQS;
	struct fc_chrony_source sd;
	/* a reply to one of the last rounds, or to this one after it timed out: chronyd was slow */
	if (n >= CANDM_RPY_HEAD && ((ch->seq - get32(buf + 16)) - 1 < 4 * ROUND_SEQS || (!ch->sent_at && k < ROUND_SEQS)))
		return 0;
	fc__bfmt(err, errlen, "a datagram of %zu bytes that is no reply of chronyd's", n);
	if (k == 0) {
		struct fc_chrony_tracking t;
		if (fc__chrony_decode(buf, n, ch->seq, &t, err, errlen) != 0)
			return -1;
		ch->last = t;
		ch->last_reply = now;
		ch->tracking_at = ch->sent_at;
		ch->got |= 1;
		return 1;
	}
	if (k == 1) {
		if (fc__chrony_decode_count(buf, n, ch->seq + 1, &ch->n_sources, err, errlen) != 0)
			return -1;
		if (ch->first >= ch->n_sources) /* applies to the next round's requests */
			ch->first = 0;
		ch->got |= 2;
		return 1;
	}
	if (k - 2 < (uint32_t)ch->want_src) {
		uint16_t status = get16(buf + 8);
		ch->got_src++; /* answered, whatever the answer */
		if (status == CANDM_STT_NOSUCHSOURCE) /* the list shrank since the count */
			return 1;
		if (fc__chrony_decode_source(buf, n, ch->seq + k, &sd, err, errlen) != 0)
			return -1;
		sd.index = (int)ch->req_index[k - 2];
		if (rank(ch, &sd) > ch->round_rank) {
			ch->round_src = sd;
			ch->round_rank = rank(ch, &sd);
		}
		return 1;
	}
	/* not of this round, nor of a recent one: named by the tracking check */
	fc__chrony_decode(buf, n, ch->seq, &(struct fc_chrony_tracking){0}, err, errlen);
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

int fc__chrony_poll(struct fc_chrony *ch, int64_t now, int64_t min_interval, struct fc_bound *b)
{
	uint8_t buf[512];
	char err[FC_BOUND_TEXT];
	int updated = 0;
	ssize_t n;

	if (ch->fd < 0)
		return 0;
	/* collect the datagrams waiting (a bounded number a poll): late replies to older rounds are dropped, so
	 * they never fill the socket's queue */
	for (int i = 0; i < FC_CHRONY_RECV_MAX && (n = recv(ch->fd, buf, sizeof(buf), MSG_DONTWAIT)) >= 0; i++) {
		int r = take(ch, buf, (size_t)n, now, err, sizeof(err));
		if (r < 0)
			fc__bound_error(b, now, "%s", err);
		if (r <= 0)
			continue;
		if (ch->got == 3 && ch->got_src == ch->want_src)
			end_round(ch);
		if (ch->last_reply)
			fc__chrony_eval(&ch->last, ch->have_src ? &ch->src : NULL, ch->tracking_at, b);
		updated = 1;
	}
	if (ch->sent_at && now - ch->sent_at >= FC_CHRONY_TIMEOUT_NS) {
		fc__bound_error(b, now, "no reply from chronyd at %s in %lld ms (%s)", ch->path,
			       (long long)(FC_CHRONY_TIMEOUT_NS / 1000000),
			       !(ch->got & 1) ? "tracking" : !(ch->got & 2) ? "source count" : "source data");
		end_round(ch); /* what did come counts */
	}
	if (!ch->sent_at && (ch->seq == 0 || now - ch->last_sent >= min_interval)) {
		struct sockaddr_un a = {.sun_family = AF_UNIX};
		size_t len;
		memcpy(a.sun_path, ch->path, strlen(ch->path) + 1);
		ch->last_sent = now;
		ch->seq += ROUND_SEQS;
		ch->got = 0;
		ch->got_src = 0;
		ch->round_rank = 0;
		plan_round(ch);
		len = fc__chrony_request(ch->seq, buf, sizeof(buf));
		if (sendto(ch->fd, buf, len, MSG_DONTWAIT, (struct sockaddr *)&a, sizeof(a)) != (ssize_t)len) {
			fc__bound_error(b, now, "send to chronyd at %s: %s", ch->path, fc__errname(errno));
			return updated;
		}
		ch->sent_at = now;
		/* the rest are best effort: one that cannot be sent is not waited for */
		len = fc__chrony_request_count(ch->seq + 1, buf, sizeof(buf));
		if (sendto(ch->fd, buf, len, MSG_DONTWAIT, (struct sockaddr *)&a, sizeof(a)) != (ssize_t)len)
			ch->got |= 2;
		for (int i = 0; i < ch->want_src; i++) {
			len = fc__chrony_request_source(ch->seq + 2 + (uint32_t)i, ch->req_index[i], buf, sizeof(buf));
			if (sendto(ch->fd, buf, len, MSG_DONTWAIT, (struct sockaddr *)&a, sizeof(a)) != (ssize_t)len)
				ch->want_src = i;
		}
	}
	return updated;
}
