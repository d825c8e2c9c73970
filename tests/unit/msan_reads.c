/* Every kind of read, in a program built with MemorySanitizer (sanitized_reads.sh): the library's kernel reads must
 * write what the sanitizer sees (libc's clock_gettime, which it intercepts; not the vDSO's, called directly). Exit
 * 0 when every value is defined and plausible. */
#include <stdio.h>
#include <time.h>

#include "fastclock.h"

int main(void)
{
	const clockid_t ids[] = {CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_MONOTONIC_COARSE, CLOCK_REALTIME_COARSE};
	struct fc_interval iv;
	struct timespec ts;
	int bad = 0;
	bad |= fc_mono_coarse_ns() <= 0; /* the first call: it initialises, through a kernel read */
	bad |= fc_mono_ns() <= 0;
	bad |= fc_real_ns() <= 0;
	bad |= fc_real_coarse_ns() <= 0;
	bad |= fc_real_bounded(&iv) != 0 || iv.latest_ns < iv.earliest_ns;
	for (unsigned i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		bad |= fc_clock_gettime(ids[i], &ts) != 0 || ts.tv_sec <= 0;
	(void)fc_init();
	bad |= fc_mono_ns() <= 0;
	puts(bad ? "bad" : "ok");
	return bad;
}
