/*
 * fuzz_chrony: chronyd's replies as anything the peer could send, through the decoders, the round logic and the
 * evaluation (src/bound/chrony.c).
 *   Input: records [flags][len][len bytes]. Each record's bytes are decoded directly (tracking, source count,
 *   source data, with the sequence number they carry) and evaluated; then sent as a datagram into a source
 *   whose socket is one end of a socketpair (the other end plays chronyd: the requests it receives are read and
 *   discarded), and the source polled. flags bit 0: the datagram's sequence number is set to the outstanding
 *   round's first + (flags >> 1 & 7), so that it is taken as a reply; bit 4: the poll comes 1.5 s later (a
 *   round times out), else 1 ms later.
 *   Checks: no sanitizer report (ASan, UBSan: no overflow in any float's conversion or sum); every bound that is
 *   not UNKNOWN is ordered (half >= 0) and its ends, and its half-width 1000 s later, fit an int64 of ns; a
 *   status is one of enum fc_sync; the reason and the last error are terminated in their buffers.
 */
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bound/chrony.h"

#define FUZZ_NAME "fuzz_chrony"
#include "fuzz_check.h"

#define SEC 1000000000LL

static void check_bound(const struct fc_bound *b)
{
	CHECK(memchr(b->reason, 0, sizeof(b->reason)) != NULL, "reason not terminated");
	CHECK(memchr(b->last_error, 0, sizeof(b->last_error)) != NULL, "last error not terminated");
	CHECK(b->status >= FC_SYNC_UNKNOWN && b->status <= FC_SYNC_DISRUPTED, "status %d", b->status);
	if (b->status == FC_SYNC_UNKNOWN)
		return;
	CHECK(b->half_ns >= 0, "half %lld (%s)", (long long)b->half_ns, b->reason);
	CHECK(b->center_ns >= INT64_MIN / 4 && b->center_ns <= INT64_MAX / 4, "centre %lld (%s)", (long long)b->center_ns,
	      b->reason);
	CHECK(b->half_ns <= INT64_MAX / 4, "half %lld (%s)", (long long)b->half_ns, b->reason);
	CHECK(b->drift_ppb >= 0, "drift %lld", (long long)b->drift_ppb);
	CHECK(fc__bound_half_at(b, b->as_of_ns + 1000 * SEC) >= b->half_ns, "the half-width shrank");
}

static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

static void decode_alone(const uint8_t *d, size_t n)
{
	struct fc_chrony_tracking t;
	struct fc_chrony_source s;
	struct fc_bound b;
	uint32_t seq = n >= 20 ? get32(d + 16) : 0, count;
	char err[FC_BOUND_TEXT];
	int have_t = fc__chrony_decode(d, n, seq, &t, err, sizeof(err)) == 0;
	int have_s = fc__chrony_decode_source(d, n, seq, &s, err, sizeof(err)) == 0;
	(void)fc__chrony_decode_count(d, n, seq, &count, err, sizeof(err));
	CHECK(memchr(err, 0, sizeof(err)) != NULL, "error not terminated");
	if (have_t) {
		memset(&b, 0, sizeof(b));
		fc__chrony_eval(&t, NULL, SEC, &b);
		check_bound(&b);
	}
	if (have_s && n >= 104) { /* the same bytes read as both: a source beside the tracking report */
		memset(&b, 0, sizeof(b));
		if (fc__chrony_decode(d, n, seq, &t, err, sizeof(err)) == 0) {
			s.index = 0;
			fc__chrony_eval(&t, &s, SEC, &b);
			check_bound(&b);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int sv[2] = {-1, -1};
	static struct fc_chrony ch;
	struct fc_bound b;
	int64_t now = SEC;
	uint8_t junk[512];

	if (sv[0] < 0 && socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	while (recv(sv[0], junk, sizeof(junk), MSG_DONTWAIT) >= 0 || recv(sv[1], junk, sizeof(junk), MSG_DONTWAIT) >= 0)
		;
	memset(&ch, 0, sizeof(ch));
	ch.fd = sv[0];
	ch.dirfd = -1;
	ch.src_index = -1;
	ch.via = FC_CHRONY_VIA_UNIX; /* a reconnect (never needed: the pair stays connected) would fail on the path */
	strcpy(ch.via_name, "fuzz");
	strcpy(ch.path, "fuzz");
	memset(&b, 0, sizeof(b));
	b.status = FC_SYNC_UNKNOWN;
	fc__chrony_poll(&ch, now, SEC, &b); /* the first round's requests */
	for (size_t off = 0; off + 2 <= size;) {
		uint8_t flags = data[off], len = data[off + 1], dg[256];
		size_t n = size - off - 2 < len ? size - off - 2 : len;
		memcpy(dg, data + off + 2, n);
		off += 2 + n;
		decode_alone(dg, n);
		if ((flags & 1) && n >= 20) {
			uint32_t s = ch.seq + (uint32_t)(flags >> 1 & 7);
			dg[16] = (uint8_t)(s >> 24), dg[17] = (uint8_t)(s >> 16), dg[18] = (uint8_t)(s >> 8), dg[19] = (uint8_t)s;
		}
		(void)send(sv[1], dg, n, MSG_DONTWAIT);
		now += flags & 16 ? SEC + SEC / 2 : 1000000;
		fc__chrony_poll(&ch, now, SEC, &b);
		check_bound(&b);
		while (recv(sv[1], junk, sizeof(junk), MSG_DONTWAIT) >= 0) /* chronyd's end: the requests, dropped */
			;
	}
	return 0;
}
