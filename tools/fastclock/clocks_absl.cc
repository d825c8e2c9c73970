// Abseil's clocks for `fastclock bench`, side by side with the others: compiled and linked only when CMake finds
// Abseil (tools/fastclock/CMakeLists.txt defines FASTCLOCK_CLI_HAVE_ABSL then). Calls only Abseil's public API.
#include <absl/time/clock.h>
#include <absl/time/time.h>

#include "clocks.h"

namespace {

FCB_DEFINE(absl_now, absl::ToUnixNanos(absl::Now()))
FCB_DEFINE(absl_nanos, absl::GetCurrentTimeNanos())

} // namespace

// absl reads the TSC without a fence and interpolates from a kernel sample: compared with the plain counter read.
#define E(NAME, CALL, SYM) {NAME, "absl", "realtime", CALL, -1, 0, 1, FCB_BASE_RAW, fcb_batch_##SYM, fcb_sample_##SYM, fcb_latency_##SYM}

extern "C" {
const struct fcb_clock fcb_absl_clocks[] = {
	E("absl::Now", "absl::ToUnixNanos(absl::Now())", absl_now),
	E("absl::GetCurrentTimeNanos", "absl::GetCurrentTimeNanos()", absl_nanos),
};
const size_t fcb_n_absl_clocks = sizeof(fcb_absl_clocks) / sizeof(fcb_absl_clocks[0]);
}
