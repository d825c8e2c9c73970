/*
 * fuzz_config: the environment parser and the clock_gettime drop-in with arbitrary input.
 *   - fc__config_parse(source, period_us) with two arbitrary strings and an arbitrary error-buffer size,
 *     against a reference written from the documented grammar (FASTCLOCK_SOURCE: "", auto, counter,
 *     kernel; FASTCLOCK_PERIOD_US: "" or decimal digits only, value 1..1000000): same error count, same
 *     backend and period, error text terminated inside the buffer and empty when there is no error;
 *   - fc_clock_gettime(id, ts) with an arbitrary clock id: the same return value and errno as the
 *     kernel's clock_gettime for that id, a normalised timespec, and for a NULL pointer -1 with EINVAL for an
 *     id the kernel rejects, EFAULT for one it accepts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "fastclock.h"

#define CHECK(cond, ...)                                                                                       \
	do {                                                                                                   \
		if (!(cond)) {                                                                                 \
			fprintf(stderr, "fuzz_config: %s: ", #cond);                                           \
			fprintf(stderr, __VA_ARGS__);                                                          \
			fputc('\n', stderr);                                                                   \
			abort();                                                                               \
		}                                                                                              \
	} while (0)

/* The documented grammar, independently: returns 1 if valid and sets *backend / *period_ns. */
static int ref_source(const char *s, int *backend)
{
	*backend = 0;
	if (s == NULL || s[0] == 0 || strcmp(s, "auto") == 0)
		return 1;
	if (strcmp(s, "counter") == 0) {
		*backend = FC_BACKEND_COUNTER;
		return 1;
	}
	if (strcmp(s, "kernel") == 0) {
		*backend = FC_BACKEND_KERNEL;
		return 1;
	}
	return 0;
}

static int ref_period(const char *s, int64_t *period_ns)
{
	int64_t v = 0;
	*period_ns = FC_DEFAULT_PERIOD_NS;
	if (s == NULL || s[0] == 0)
		return 1;
	for (const char *c = s; *c; c++) {
		if (*c < '0' || *c > '9')
			return 0;
		if (v <= 1000000) /* saturate: anything larger is out of range anyway */
			v = v * 10 + (*c - '0');
	}
	if (v < 1 || v > 1000000)
		return 0;
	*period_ns = v * 1000;
	return 1;
}

static void fuzz_parse(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 2), *a, *b;
	char err[256];
	size_t errlen, cut;
	struct fc_config cfg;
	int want_backend, nerr, want_err;
	int64_t want_period;
	const char *src = NULL, *per = NULL;

	if (size < 2) {
		free(buf);
		return;
	}
	/* byte 0: error buffer size (0..255); byte 1: bit 0 source NULL, bit 1 period NULL; then
	 * "source\0period" */
	errlen = data[0];
	memcpy(buf, data + 2, size - 2);
	buf[size - 2] = 0;
	buf[size - 1] = 0;
	a = buf;
	cut = strlen(a);
	b = a + cut + (cut < size - 2 ? 1 : 0);
	if (!(data[1] & 1))
		src = a;
	if (!(data[1] & 2))
		per = b;

	memset(err, 'x', sizeof(err));
	nerr = fc__config_parse(src, per, &cfg, err, errlen);
	want_err = !ref_source(src, &want_backend) + !ref_period(per, &want_period);
	CHECK(nerr == want_err, "source '%s' period '%s': %d errors, want %d", src ? src : "(null)",
	      per ? per : "(null)", nerr, want_err);
	CHECK(cfg.backend == (ref_source(src, &want_backend) ? want_backend : 0), "backend %d", cfg.backend);
	CHECK(cfg.period_ns == want_period, "period '%s': %lld ns, want %lld", per ? per : "(null)",
	      (long long)cfg.period_ns, (long long)want_period);
	if (errlen) {
		CHECK(memchr(err, 0, errlen) != NULL, "error text not terminated within %zu bytes", errlen);
		CHECK(nerr > 0 || err[0] == 0, "error text without an error: '%s'", err);
		CHECK(nerr == 0 || errlen < 2 || err[0] != 0, "an error without text");
		for (size_t i = errlen; i < sizeof(err); i++)
			CHECK(err[i] == 'x', "wrote past the error buffer (%zu bytes) at %zu", errlen, i);
	}
	free(buf);
}

static void fuzz_gettime(const uint8_t *data, size_t size)
{
	clockid_t id = 0;
	struct timespec ts, kts;
	int rc, krc, e, ke;

	for (size_t i = 0; i < size && i < 4; i++)
		id = (clockid_t)(((uint32_t)id << 8) | data[i]);
	errno = 0;
	rc = fc_clock_gettime(id, &ts);
	e = errno;
	errno = 0;
	krc = clock_gettime(id, &kts);
	ke = errno;
	CHECK(rc == krc, "clock %d: returned %d, the kernel %d", (int)id, rc, krc);
	if (rc == 0)
		CHECK(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000L, "clock %d: tv_nsec %ld", (int)id, ts.tv_nsec);
	else
		CHECK(e == ke, "clock %d: errno %d, the kernel %d", (int)id, e, ke);
	/* A NULL timespec: as the kernel, an invalid id is EINVAL (checked first), a valid one EFAULT. */
	errno = 0;
	rc = fc_clock_gettime(id, NULL);
	e = errno;
	CHECK(rc == -1 && e == (krc == 0 ? EFAULT : ke), "clock %d: NULL timespec: %d/errno %d (the kernel: %d/%d)",
	      (int)id, rc, e, krc, ke);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_parse(data, size);
	fuzz_gettime(data, size);
	return 0;
}
