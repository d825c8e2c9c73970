/*
 * fuzz_segment: ClockBound's segment as a hostile file would have it (src/bound/clockbound.c).
 * Input: 8 bytes of CLOCK_MONOTONIC_COARSE "now" (taken modulo 2^62: a kernel clock), 8 of VMClock's marker, 1
 * byte of flags (bit 0: pass the marker; bit 1: also go through a file, ~100x slower), then the file's bytes
 * (any length). Checks:
 *   - fc__cb_parse on the bytes: accepts only >= 80 bytes with the magic, segsize >= 80 and version 2, and says
 *     why (terminated) otherwise;
 *   - fc__cb_eval on what it accepts: a status in range, a terminated reason; SYNCHRONIZED or FREE_RUNNING only
 *     with a bound in [0, 2^50] ns, as_of in [0, 2^33) s and not after now + 1 us, a drift under 1e9 ppb; the
 *     half-width never shrinks as time goes on and never wraps;
 *   - the file itself: written to a scratch file, opened (fc__cb_open), polled twice (fc__cb_poll) and closed,
 *     under ASan and UBSan (no read past the copy, no overflow, no crash on any length);
 *   - the same bytes as /proc/self/timens_offsets (fc__cb_parse_timens): an offset within +-2^29 s, or a
 *     terminated reason.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bound/clockbound.h"

#define FUZZ_NAME "fuzz_segment"
#include "fuzz_check.h"

#define SEC 1000000000LL

static char g_path[64];

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static void check_bound(const struct fc_bound *b, int64_t now)
{
	CHECK(b->status >= FC_SYNC_UNKNOWN && b->status <= FC_SYNC_DISRUPTED, "status %d", b->status);
	CHECK(memchr(b->reason, 0, sizeof(b->reason)) != NULL && b->reason[0], "reason");
	if (b->status == FC_SYNC_SYNCHRONIZED || b->status == FC_SYNC_FREE_RUNNING) {
		CHECK(b->half_ns >= 0 && b->half_ns <= (1LL << 50), "half %lld", (long long)b->half_ns);
		CHECK(b->as_of_ns >= 0 && b->as_of_ns < (1LL << 33) * SEC && b->as_of_ns <= now + 1000, "as_of %lld now %lld",
		      (long long)b->as_of_ns, (long long)now);
		CHECK(b->drift_ppb >= 0 && b->drift_ppb < 1000000000, "drift %lld", (long long)b->drift_ppb);
	}
	int64_t h0 = fc__bound_half_at(b, now), h1 = fc__bound_half_at(b, now + 1000 * SEC),
		h2 = fc__bound_half_at(b, INT64_MAX);
	CHECK(h0 >= 0 && h0 <= h1 && h1 <= h2 && h2 <= INT64_MAX / 4, "half at now %lld, +1000 s %lld, end %lld",
	      (long long)h0, (long long)h1, (long long)h2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fc_cb_segment s;
	struct fc_bound b;
	struct fc_cb cb;
	char why[FC_BOUND_TEXT];
	int64_t now;
	uint64_t marker;
	int fd;
	if (size < 17)
		return 0;
	now = (int64_t)(get64(data) & ((1ull << 62) - 1));
	marker = get64(data + 8);
	const int flags = data[16], pass_marker = flags & 1;
	data += 17, size -= 17;
	memset(why, 0x55, sizeof(why));
	if (fc__cb_parse(data, size, &s, why, sizeof(why)) == 0) {
		CHECK(size >= FC_CB_SIZE && s.magic[0] == FC_CB_MAGIC0 && s.magic[1] == FC_CB_MAGIC1 &&
			      s.version == FC_CB_VERSION && s.segsize >= FC_CB_SIZE,
		      "accepted %zu bytes, version %u", size, s.version);
		memset(&b, 0, sizeof(b));
		fc__cb_eval(&s, now, &b);
		check_bound(&b, now);
	} else {
		CHECK(memchr(why, 0, sizeof(why)) != NULL && why[0], "why");
	}
	{
		int64_t off = 0;
		memset(why, 0x55, sizeof(why));
		if (fc__cb_parse_timens((const char *)data, size, &off, why, sizeof(why)) == 0)
			CHECK(off > -(1LL << 29) * SEC && off < (1LL << 29) * SEC, "offset %lld", (long long)off);
		else
			CHECK(memchr(why, 0, sizeof(why)) != NULL && why[0], "timens why");
	}
	/* the file path: open, poll twice, close */
	if (!(flags & 2))
		return 0;
	if (!g_path[0]) {
		char dir[] = "/tmp/fc_fuzz_segment_XXXXXX";
		CHECK(mkdtemp(dir) != NULL, "mkdtemp");
		snprintf(g_path, sizeof(g_path), "%s/shm0", dir);
	}
	fd = open(g_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0, "open %s", g_path);
	CHECK(write(fd, data, size) == (ssize_t)size, "write");
	close(fd);
	memset(&b, 0, sizeof(b));
	if (fc__cb_open(&cb, g_path, &b, now) == 0) {
		fc__cb_poll(&cb, now, pass_marker ? &marker : NULL, &b);
		check_bound(&b, now);
		fc__cb_poll(&cb, now + SEC, pass_marker ? &marker : NULL, &b);
		check_bound(&b, now + SEC);
		fc__cb_close(&cb);
	} else {
		CHECK(b.last_error[0] && memchr(b.last_error, 0, sizeof(b.last_error)), "last_error");
	}
	return 0;
}
