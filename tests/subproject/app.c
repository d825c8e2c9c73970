/* The parent's program: reads the clock through the subproject's fastclock::fastclock. */
#include <fastclock.h>
#include <stdio.h>

int main(void)
{
	int64_t a = fc_mono_ns(), b = fc_mono_ns();
	printf("parent: fastclock %s, %s\n", fc_version(), b >= a ? "ok" : "time went back");
	return b >= a ? 0 : 1;
}
