/*
 * fuzz_vmclock: a VMClock page as a hostile host or file would have it (src/bound/vmclock.c).
 * Input: 8 bytes of counter value, 8 of CLOCK_REALTIME before the sample, 4 of the bracket's width, 8 of
 * CLOCK_MONOTONIC (taken modulo 2^62; its lowest bit: also go through a file, ~100x slower), then the page (any
 * length). Checks:
 *   - fc__vmc_parse: accepts only >= 104 bytes with the magic, version 1 and size >= 104, says why otherwise;
 *   - on what it accepts, fc__vmc_time_at (UTC at the counter and its maximum error: an error >= 0, or a
 *     refusal with a reason) and fc__vmc_bound over two samples (a half-width >= 0, a growth >= 0, a centre
 *     within +-INT64_MAX / 4, a half-width that never shrinks or wraps as time goes on), under ASan and UBSan;
 *   - the page as a file: opened, polled, checked for change and closed (the pread path).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bound/vmclock.h"

#define FUZZ_NAME "fuzz_vmclock"
#include "fuzz_check.h"

#define SEC 1000000000LL
#define PAGE_MIN 104

static char g_path[64];

static uint64_t get(const uint8_t *p, int n)
{
	uint64_t v = 0;
	memcpy(&v, p, (size_t)n);
	return v;
}

static void check_bound(const struct fc_bound *b, int64_t mono)
{
	CHECK(b->half_ns >= 0 && b->drift_ppb >= 0, "half %lld drift %lld", (long long)b->half_ns, (long long)b->drift_ppb);
	CHECK(b->center_ns >= -(INT64_MAX / 4) && b->center_ns <= INT64_MAX / 4, "centre %lld", (long long)b->center_ns);
	int64_t h0 = fc__bound_half_at(b, mono), h1 = fc__bound_half_at(b, mono + SEC), h2 = fc__bound_half_at(b, INT64_MAX);
	CHECK(h0 >= b->half_ns && h0 <= h1 && h1 <= h2 && h2 <= INT64_MAX / 4, "half %lld %lld %lld", (long long)h0,
	      (long long)h1, (long long)h2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fc_vmc_snap s;
	struct fc_vmc v;
	struct fc_bound b;
	char why[FC_BOUND_TEXT];
	uint64_t ctr;
	int64_t r0, r1, mono, utc, err;
	int fd;
	if (size < 28)
		return 0;
	ctr = get(data, 8);
	r0 = (int64_t)get(data + 8, 8);
	r1 = (int64_t)((uint64_t)r0 + get(data + 16, 4));
	mono = (int64_t)(get(data + 20, 8) & ((1ull << 62) - 1));
	data += 28, size -= 28;
	if (fc__vmc_parse(data, size, &s, why, sizeof(why)) != 0) {
		CHECK(why[0] && memchr(why, 0, sizeof(why)), "why");
		CHECK(size < PAGE_MIN || get(data, 4) != FC_VMCLOCK_MAGIC || get(data + 8, 2) != 1 || get(data + 4, 4) < PAGE_MIN,
		      "refused a valid header");
	} else {
		CHECK(size >= PAGE_MIN, "accepted %zu bytes", size);
		if (fc__vmc_time_at(&s, FC_VMC_COUNTER_X86_TSC, ctr, &utc, &err, why, sizeof(why)) == 0)
			CHECK(err >= 0, "error %lld", (long long)err);
		else
			CHECK(why[0] && memchr(why, 0, sizeof(why)), "why");
		memset(&v, 0, sizeof(v));
		v.snap = s;
		v.have_snap = 1;
		memset(&b, 0, sizeof(b));
		if (fc__vmc_bound(&v, FC_VMC_COUNTER_X86_TSC, mono, r0, ctr, r1, &b))
			check_bound(&b, mono);
		if (fc__vmc_bound(&v, FC_VMC_COUNTER_X86_TSC, mono + 2000000, r0, ctr + 5000000, r1, &b))
			check_bound(&b, mono + 2000000);
	}
	if (!(mono & 1))
		return 0;
	if (!g_path[0]) {
		char dir[] = "/tmp/fc_fuzz_vmclock_XXXXXX";
		CHECK(mkdtemp(dir) != NULL, "mkdtemp");
		snprintf(g_path, sizeof(g_path), "%s/vmclock0", dir);
	}
	fd = open(g_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, data, size) == (ssize_t)size, "write");
	close(fd);
	memset(&b, 0, sizeof(b));
	if (fc__vmc_open(&v, g_path, &b, mono) == 0) {
		fc__vmc_poll(&v, &b, mono);
		(void)fc__vmc_unchanged(&v);
		fc__vmc_close(&v);
	} else {
		CHECK(b.last_error[0] && memchr(b.last_error, 0, sizeof(b.last_error)), "last_error");
	}
	return 0;
}
