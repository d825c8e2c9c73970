// The C++ clocks of fc_icount (bench/callgrind.sh): fastclock::steady_clock and system_clock, compiled as an
// application compiles them, so their counts can be set beside fc_mono_ns and fc_real_ns.
#include <fastclock.hpp>

#include <cstdint>

extern "C" {
__attribute__((noinline)) uint64_t icount_fc_steady_clock(uint64_t n)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < n; i++)
		s += static_cast<uint64_t>(fastclock::steady_clock::now().time_since_epoch().count());
	return s;
}

__attribute__((noinline)) uint64_t icount_fc_system_clock(uint64_t n)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < n; i++)
		s += static_cast<uint64_t>(fastclock::system_clock::now().time_since_epoch().count());
	return s;
}
}
