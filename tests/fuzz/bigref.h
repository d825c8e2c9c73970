/*
 * A reference for the fuzzers' arithmetic that shares no code and no 128-bit type with the library:
 * 192-bit two's-complement integers on six 32-bit limbs, schoolbook multiplication, carry by hand.
 */
#ifndef FASTCLOCK_FUZZ_BIGREF_H
#define FASTCLOCK_FUZZ_BIGREF_H

#include <stdint.h>

#define BN_LIMBS 6

typedef struct {
	uint32_t l[BN_LIMBS]; /* little-endian, two's complement */
} bn;

static inline bn bn_u64(uint64_t v)
{
	bn r = {{0}};
	r.l[0] = (uint32_t)v;
	r.l[1] = (uint32_t)(v >> 32);
	return r;
}

static inline bn bn_i64(int64_t v)
{
	bn r = bn_u64((uint64_t)v);
	if (v < 0)
		for (int i = 2; i < BN_LIMBS; i++)
			r.l[i] = 0xffffffffu;
	return r;
}

static inline bn bn_add(bn a, bn b)
{
	bn r;
	uint64_t carry = 0;
	for (int i = 0; i < BN_LIMBS; i++) {
		uint64_t s = (uint64_t)a.l[i] + b.l[i] + carry;
		r.l[i] = (uint32_t)s;
		carry = s >> 32;
	}
	return r;
}

/* unsigned a * b, both < 2^64: the 128-bit product, limb by limb */
static inline bn bn_mul_u64(uint64_t a, uint64_t b)
{
	uint32_t x[2] = {(uint32_t)a, (uint32_t)(a >> 32)}, y[2] = {(uint32_t)b, (uint32_t)(b >> 32)};
	bn r = {{0}};
	for (int i = 0; i < 2; i++) {
		uint64_t carry = 0;
		for (int j = 0; j < 2; j++) {
			uint64_t t = (uint64_t)x[i] * y[j] + r.l[i + j] + carry;
			r.l[i + j] = (uint32_t)t;
			carry = t >> 32;
		}
		for (int k = i + 2; carry && k < BN_LIMBS; k++) {
			uint64_t t = (uint64_t)r.l[k] + carry;
			r.l[k] = (uint32_t)t;
			carry = t >> 32;
		}
	}
	return r;
}

/* a * 2^32 */
static inline bn bn_shl32(bn a)
{
	bn r;
	r.l[0] = 0;
	for (int i = 1; i < BN_LIMBS; i++)
		r.l[i] = a.l[i - 1];
	return r;
}

/* floor(a / 2^32) (arithmetic shift) */
static inline bn bn_sar32(bn a)
{
	bn r;
	for (int i = 0; i < BN_LIMBS - 1; i++)
		r.l[i] = a.l[i + 1];
	r.l[BN_LIMBS - 1] = (a.l[BN_LIMBS - 1] & 0x80000000u) ? 0xffffffffu : 0;
	return r;
}

static inline int bn_neg(bn a) { return (a.l[BN_LIMBS - 1] & 0x80000000u) != 0; }

static inline uint64_t bn_low64(bn a) { return (uint64_t)a.l[0] | ((uint64_t)a.l[1] << 32); }

/* does a fit in a signed integer of `bits` bits (a multiple of 32)? */
static inline int bn_fits_signed(bn a, int bits)
{
	int top = bits / 32; /* limbs used */
	uint32_t ext = (a.l[top - 1] & 0x80000000u) ? 0xffffffffu : 0;
	for (int i = top; i < BN_LIMBS; i++)
		if (a.l[i] != ext)
			return 0;
	return 1;
}

static inline int bn_eq(bn a, bn b)
{
	for (int i = 0; i < BN_LIMBS; i++)
		if (a.l[i] != b.l[i])
			return 0;
	return 1;
}

/* the low 128 bits as two 64-bit halves */
static inline void bn_low128(bn a, uint64_t *lo, uint64_t *hi)
{
	*lo = bn_low64(a);
	*hi = (uint64_t)a.l[2] | ((uint64_t)a.l[3] << 32);
}

#endif /* FASTCLOCK_FUZZ_BIGREF_H */
