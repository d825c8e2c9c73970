/*
 * fastclock — what every bound source shares: a struct fc_bound's half-width at a given time (saturating growth),
 * the recording of a source's last error, and src/file.c's opener and judges with a source's last_error as the
 * place a refusal is said (docs/THREATS.md).
 *
 * Owns: fc__bound_half_at, fc__bound_error, fc__bound_open_file, fc__bound_judge, fc__bound_still_trusted,
 * fc__bound_writers_error, fc__bound_socket_trusted.
 * May call: fmt.c, file.c.
 */
#define _GNU_SOURCE /* O_PATH */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "bound.h"
#include "../units.h"


int64_t fc__bound_half_at(const struct fc_bound *b, int64_t mono)
{
	int64_t age, grow;
	const int64_t cap = INT64_MAX / 4;
	if (__builtin_sub_overflow(mono, b->as_of_ns, &age))
		age = mono > b->as_of_ns ? INT64_MAX : 0; /* an as_of from the far past is as old as it gets */
	if (age < 0)
		age = 0;
	if (b->drift_ppb < 0 || b->half_ns < 0)
		return cap; /* a source never gives these; if one did, it promises nothing */
	/* age (ns) * ppb / 1e9 in 128 bits (< 2^63 x 2^63), saturated before it is narrowed: a growth of 1000x (a
	 * VMClock's saturated rate, src/bound/vmclock.c) passes 2^63 ns after 35 days (fuzz_vmclock found it
	 * wrapping negative) */
	{
		__int128 g = ((__int128)age * b->drift_ppb) / NS_PER_SEC;
		if (g >= cap)
			return cap;
		grow = (int64_t)g;
	}
	if (b->half_ns >= cap || grow >= cap - b->half_ns)
		return cap;
	return b->half_ns + grow;
}

void fc__bound_error(struct fc_bound *b, int64_t now, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	/* clang-analyzer 14 misreads va_start here (a false positive) */
	fc__bvfmt(b->last_error, sizeof(b->last_error), fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized)
	va_end(ap);
	b->last_error_at = now;
}

/* ---- src/file.c's, with a struct fc_bound's last_error as the place a refusal is said ---------------------- */
static struct fc_file_err err_of(struct fc_bound *b, int64_t now)
{
	return (struct fc_file_err){b->last_error, sizeof(b->last_error), &b->last_error_at, now};
}

int fc__bound_open_file(const char *path, int kinds, struct stat *st, struct fc_bound *b, int64_t now)
{
	struct fc_file_err e = err_of(b, now);
	return fc__file_open(path, kinds, st, &e);
}

int fc__bound_judge(int fd, const struct stat *st, unsigned owner, unsigned or_owner, const char *path,
		    struct fc_bound *b, int64_t now, const char *else_who)
{
	struct fc_file_err e = err_of(b, now);
	return fc__file_judge(fd, st, owner, or_owner, path, &e, else_who);
}

int fc__bound_still_trusted(int fd, unsigned owner, const char *path, struct fc_bound *b, int64_t now)
{
	struct fc_file_err e = err_of(b, now);
	return fc__file_still_trusted(fd, owner, path, &e);
}

void fc__bound_writers_error(const struct stat *st, const char *path, struct fc_bound *b, int64_t now,
			     const char *else_who)
{
	struct fc_file_err e = err_of(b, now);
	fc__file_writers_error(st, path, &e, else_who);
}

int fc__bound_socket_trusted(int dfd, const char *base, const char *path, struct fc_bound *b, int64_t now)
{
	struct fc_file_err e = err_of(b, now);
	return fc__file_socket_trusted(dfd, base, path, &e);
}
