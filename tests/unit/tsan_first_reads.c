/* First calls on four threads at once, all coarse reads, in a program built with ThreadSanitizer
 * (sanitized_reads.sh): what a coarse read loads before it waits for the initialisation (read.c,
 * coarse_fine_period: the period's mode) must be written atomically by it. Exit 0 with no report. */
#include <pthread.h>
#include <stdio.h>

#include "fastclock.h"

static void *reader(void *arg)
{
	int64_t last = 0, bad = 0;
	(void)arg;
	for (int i = 0; i < 1000; i++) {
		const int64_t v = fc_mono_coarse_ns();
		bad |= v < last;
		last = v;
	}
	return (void *)(intptr_t)bad;
}

int main(void)
{
	pthread_t t[4];
	int bad = 0;
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, reader, NULL) != 0)
			return 2;
	for (int i = 0; i < 4; i++) {
		void *r;
		pthread_join(t[i], &r);
		bad |= r != NULL;
	}
	puts(bad ? "bad" : "ok");
	return bad;
}
