// The C++ clocks of `fastclock bench`: the std::chrono clocks and fastclock.hpp's drop-in replacements.
// Calls only the standard library and the public <fastclock.hpp>.
#include <chrono>

#include <fastclock.hpp>

#include "clocks.h"

namespace {

template <class Clock> inline std::int64_t now_ns()
{
	return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

FCB_DEFINE(std_system, now_ns<std::chrono::system_clock>())
FCB_DEFINE(std_steady, now_ns<std::chrono::steady_clock>())
FCB_DEFINE(std_hires, now_ns<std::chrono::high_resolution_clock>())
FCB_DEFINE(fc_steady, now_ns<fastclock::steady_clock>())
FCB_DEFINE(fc_system, now_ns<fastclock::system_clock>())
FCB_DEFINE(fc_coarse_steady, now_ns<fastclock::coarse_steady_clock>())

} // namespace

#define E(NAME, TL, CALL, BASE, SYM) {NAME, GROUP, TL, CALL, -1, 0, 1, FCB_BASE_##BASE, fcb_batch_##SYM, fcb_sample_##SYM, fcb_latency_##SYM}

extern "C" {
#define GROUP "std::chrono"
const struct fcb_clock fcb_cxx_clocks[] = {
	E("std::chrono::system_clock", "realtime", "std::chrono::system_clock::now()", ORDERED, std_system),
	E("std::chrono::steady_clock", "monotonic", "std::chrono::steady_clock::now()", ORDERED, std_steady),
	E("std::chrono::high_resolution_clock", "realtime", "std::chrono::high_resolution_clock::now()", ORDERED, std_hires),
#undef GROUP
#define GROUP "fastclock"
	E("fastclock::steady_clock", "monotonic", "fastclock::steady_clock::now()", ORDERED, fc_steady),
	E("fastclock::system_clock", "realtime", "fastclock::system_clock::now()", ORDERED, fc_system),
	E("fastclock::coarse_steady_clock", "monotonic", "fastclock::coarse_steady_clock::now()", RAW, fc_coarse_steady),
};
const size_t fcb_n_cxx_clocks = sizeof(fcb_cxx_clocks) / sizeof(fcb_cxx_clocks[0]);
}
