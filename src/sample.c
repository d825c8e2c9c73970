/*
 * fastclock — bracketed sampling of the kernel's clocks against the counter.
 *
 * A CLOCK_MONOTONIC read between two ordered counter reads c1 <= c2 happened at some count in [c1, c2]: we
 * keep the tightest of `tries` such brackets (a preempted try is simply outvoted). The wall offset
 * CLOCK_REALTIME - CLOCK_MONOTONIC is bracketed the same way by monotonic reads before and after a realtime
 * read: the offset lies in [r - m2, r - m1] (fc__sample_offset, also what convert.c and state.c take the
 * kernel's offset with).
 */
#include <limits.h>

#include "sample.h"

int fc__sample_take(const struct fc_source *src, int tries, struct fc_sample *out)
{
	uint64_t best = UINT64_MAX, second = UINT64_MAX;
	int64_t m_last = 0;
	int got = 0;
	struct fc_sample runner_up = {0};

	for (int i = 0; i < tries; i++) {
		int64_t m;
		uint64_t c1 = src->counter(src->ctx);
		int rc = src->kernel(src->ctx, CLOCK_MONOTONIC, &m);
		uint64_t c2 = src->counter(src->ctx);
		uint64_t w = (c2 - c1) & src->mask;

		if (rc != 0)
			return -1;
		m_last = m;
		if (w > (src->mask >> 1)) /* counter went back inside the bracket (cross-core skew): useless */
			continue;
		if (w < best) {
			if (got) {
				second = best;
				runner_up = *out;
			}
			best = w;
			out->c_mid = (c1 + w / 2) & src->mask;
			out->c_half = (w + 1) / 2;
			out->mono = m;
			got = 1;
		} else if (w < second) {
			second = w;
			runner_up.c_mid = (c1 + w / 2) & src->mask;
			runner_up.c_half = (w + 1) / 2;
			runner_up.mono = m;
		}
	}
	if (!got)
		return -1;
	/* The same code brackets the same call each try, so an honest bracket is never much narrower than the
	 * next best: one less than half as wide had a counter read that lagged (a read on a core whose counter
	 * is behind) and may not contain the kernel's read at all. Take the next best. */
	if (second != UINT64_MAX && best * 2 < second) {
		out->c_mid = runner_up.c_mid;
		out->c_half = runner_up.c_half;
		out->mono = runner_up.mono;
	}
	{
		/* CLOCK_BOOTTIME between the last try's CLOCK_MONOTONIC read and one more: BOOTTIME - MONOTONIC lies
		 * in [b - m2, b - m_last]. Two vDSO reads (~40 ns); a failed read leaves the range unread (lo > hi). */
		int64_t b, m2;
		out->boot_lo = 1;
		out->boot_hi = 0;
		if (src->kernel(src->ctx, CLOCK_BOOTTIME, &b) == 0 && src->kernel(src->ctx, CLOCK_MONOTONIC, &m2) == 0 &&
		    m2 >= m_last) {
			out->boot_lo = b - m2;
			out->boot_hi = b - m_last;
		}
	}
	{
		struct fc_offset o;
		if (fc__sample_offset(src, 2, 1, &o) != 0)
			return -1;
		out->off_lo = o.lo;
		out->off_hi = o.hi;
	}
	return 0;
}

/* One kernel read, tried up to `tries` times; *ns keeps what the last try left. */
static int kernel_read(const struct fc_source *src, clockid_t id, int tries, int64_t *ns)
{
	*ns = 0;
	for (int i = 0; i < tries; i++)
		if (src->kernel(src->ctx, id, ns) == 0)
			return 0;
	return -1;
}

int fc__sample_offset(const struct fc_source *src, int brackets, int tries, struct fc_offset *out)
{
	int64_t best = INT64_MAX;
	*out = (struct fc_offset){0};
	for (int i = 0; i < brackets; i++) {
		int64_t m1, r, m2;
		int bad = kernel_read(src, CLOCK_MONOTONIC, tries, &m1);
		bad |= kernel_read(src, CLOCK_REALTIME, tries, &r);
		bad |= kernel_read(src, CLOCK_MONOTONIC, tries, &m2);
		if (m2 - m1 < best) {
			best = m2 - m1;
			out->lo = r - m2;
			out->hi = r - m1;
			out->m1 = m1;
		}
		if (bad)
			return -1;
	}
	return 0;
}
