/*
 * fastclock — async-signal-safe message formatting (the bound sources', src/file.c's). They run under the writer,
 * which a read's slow path may enter from a signal handler; snprintf may allocate and strerror reads the locale,
 * so their messages are built with these.
 *
 * Owns: fc__bfmt / fc__bvfmt (a printf subset: %s %.Ns %.*s %d %i %u %o %x %#x with l/ll/z, %.Nf, %%), fc__errname.
 * May call: nothing beyond the compiler's builtins.
 */
#include <errno.h>
#include <stdarg.h>

#include "fmt.h"

struct out {
	char *p;
	size_t n, len;
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->n)
		o->p[o->len] = c;
	o->len++;
}

static void put_u(struct out *o, unsigned long long u, unsigned base, int min_digits)
{
	char tmp[24];
	int i = 0;
	do {
		unsigned d = (unsigned)(u % base);
		tmp[i++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
		u /= base;
	} while (u || i < min_digits);
	while (i > 0)
		put(o, tmp[--i]);
}

/* Fixed point with prec (0..9) decimals, rounded half away from zero; |x| beyond 1.8e19 prints as "huge". */
static void put_f(struct out *o, double x, int prec)
{
	unsigned long long scale = 1, whole, frac;
	double a = x < 0 ? -x : x;
	if (x != x) {
		put(o, 'n'), put(o, 'a'), put(o, 'n');
		return;
	}
	for (int i = 0; i < prec; i++)
		scale *= 10;
	if (a >= 1.8e19 / (double)scale) {
		const char *h = x < 0 ? "-huge" : "huge";
		while (*h)
			put(o, *h++);
		return;
	}
	whole = (unsigned long long)(a * (double)scale + 0.5);
	frac = whole % scale;
	whole /= scale;
	if (x < 0 && (whole || frac))
		put(o, '-');
	put_u(o, whole, 10, 1);
	if (prec) {
		put(o, '.');
		put_u(o, frac, 10, prec);
	}
}

int fc__bvfmt(char *dst, size_t n, const char *fmt, va_list ap)
{
	struct out o = {dst, n, 0};
	for (const char *f = fmt; *f; f++) {
		int alt = 0, prec = -1, lng = 0;
		if (*f != '%') {
			put(&o, *f);
			continue;
		}
		f++;
		if (*f == '#')
			alt = 1, f++;
		if (*f == '.' && f[1] == '*') {
			prec = va_arg(ap, int);
			f += 2;
		} else if (*f == '.') {
			prec = 0;
			for (f++; *f >= '0' && *f <= '9'; f++)
				prec = prec * 10 + (*f - '0');
		}
		while (*f == 'l' || *f == 'z')
			lng += *f == 'z' ? 2 : 1, f++;
		switch (*f) {
		case 'd':
		case 'i': {
			long long v = lng >= 2 ? va_arg(ap, long long) : lng == 1 ? va_arg(ap, long) : va_arg(ap, int);
			if (v < 0)
				put(&o, '-');
			put_u(&o, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v, 10, 1);
			break;
		}
		case 'u':
		case 'o':
		case 'x': {
			unsigned long long v = lng >= 2 ? va_arg(ap, unsigned long long)
				: lng == 1 ? va_arg(ap, unsigned long) : va_arg(ap, unsigned);
			if (*f == 'x' && alt && v)
				put(&o, '0'), put(&o, 'x');
			put_u(&o, v, *f == 'x' ? 16 : *f == 'o' ? 8 : 10, 1);
			break;
		}
		case 'f':
			put_f(&o, va_arg(ap, double), prec < 0 ? 6 : prec > 9 ? 9 : prec);
			break;
		case 's': {
			const char *s = va_arg(ap, const char *);
			if (!s)
				s = "(null)";
			for (int i = 0; s[i] && (prec < 0 || i < prec); i++)
				put(&o, s[i]);
			break;
		}
		case '%':
			put(&o, '%');
			break;
		default: /* unsupported: shown, never misread */
			put(&o, '%');
			if (!*f)
				f--;
			else
				put(&o, *f);
		}
	}
	if (n)
		dst[o.len < n ? o.len : n - 1] = 0;
	return (int)o.len;
}

int fc__bfmt(char *dst, size_t n, const char *fmt, ...)
{
	va_list ap;
	int r;
	va_start(ap, fmt);
	r = fc__bvfmt(dst, n, fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized): a clang-analyzer 14 false positive
	va_end(ap);
	return r;
}

const char *fc__errname(int e)
{
	switch (e) {
	case ENOENT: return "no such file or directory (ENOENT)";
	case EACCES: return "permission denied (EACCES)";
	case EPERM: return "operation not permitted (EPERM)";
	case ECONNREFUSED: return "connection refused (ECONNREFUSED)";
	case EAGAIN: return "would block (EAGAIN)";
	case ENOTSOCK: return "not a socket (ENOTSOCK)";
	case EADDRINUSE: return "address in use (EADDRINUSE)";
	case ENAMETOOLONG: return "name too long (ENAMETOOLONG)";
	case ENODEV: return "no such device (ENODEV)";
	case EINVAL: return "invalid argument (EINVAL)";
	case ENOMEM: return "out of memory (ENOMEM)";
	case EMFILE: return "too many open files (EMFILE)";
	case ENOBUFS: return "no buffer space (ENOBUFS)";
	case ELOOP: return "a symbolic link, not followed (ELOOP)";
	case ENXIO: return "no reader or device (ENXIO)";
	case ENOSYS: return "not implemented (ENOSYS)";
	default: return "system error (see errno)";
	}
}
