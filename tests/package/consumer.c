/* Built against the installed fastclock: reads both clocks and checks them against the kernel. */
#include <fastclock.h>
#include <stdio.h>

int main(void)
{
	struct timespec ts;
	struct fc_status st;
	int64_t m = fc_mono_ns(), k;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	k = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	if (fc_status(&st) != 0 || m > k || k - m > 100000000) {
		fprintf(stderr, "consumer: fc_mono_ns %lld vs kernel %lld\n", (long long)m, (long long)k);
		return 1;
	}
	printf("consumer: ok, backend %s, mono %lld ns\n", fc_backend_name(st.backend), (long long)m);
	return 0;
}
