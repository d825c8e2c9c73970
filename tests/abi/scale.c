/*
 * fc__scale_portable (the 32-bit targets' fc__scale, no __int128) equals the 128-bit fc__scale: edge values
 * and 10^6 pseudo-random triples (xorshift64, fixed seed). Exit 0, or 1 with the first difference.
 */
#include <fastclock.h>
#include <inttypes.h>
#include <stdio.h>

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int same(uint64_t d, uint64_t m, uint64_t f)
{
	uint64_t a = fc__scale(d, m, f), b = fc__scale_portable(d, m, f);
	if (a == b)
		return 1;
	printf("scale: delta %" PRIu64 " mult %" PRIu64 " frac %" PRIu64 ": int128 %" PRIu64 ", portable %" PRIu64 "\n",
	       d, m, f, a, b);
	return 0;
}

int main(void)
{
	static const uint64_t edge[] = {0, 1, 2, 0xffffffffu, 0x100000000u, 0x100000001u, 0x7fffffffffffffffu,
					0x8000000000000000u, 0xfffffffffffffffeu, 0xffffffffffffffffu};
	uint64_t s = 0x9e3779b97f4a7c15u;
	size_t n = sizeof(edge) / sizeof(edge[0]);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			for (size_t k = 0; k < n; k++)
				if (!same(edge[i], edge[j], edge[k]))
					return 1;
	for (int i = 0; i < 1000000; i++) {
		uint64_t d = rnd(&s) >> (rnd(&s) & 63), m = rnd(&s) >> (rnd(&s) & 63), f = rnd(&s) >> (rnd(&s) & 63);
		if (!same(d, m, f))
			return 1;
	}
	printf("scale: portable == int128 on %zu edge triples and 10^6 random ones\n", n * n * n);
	return 0;
}
