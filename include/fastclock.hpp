// fastclock — std::chrono clocks over the C API.
//
//   fastclock::steady_clock        CLOCK_MONOTONIC, ordered counter read (drop-in for std::chrono::steady_clock)
//   fastclock::system_clock        CLOCK_REALTIME, ordered counter read (drop-in for std::chrono::system_clock;
//                                  its time_point converts to/from std::chrono::system_clock's)
//   fastclock::coarse_steady_clock CLOCK_MONOTONIC, one load (see fc_mono_coarse_ns for its staleness)
// All meet the TrivialClock requirements (checked below with std::chrono::is_clock_v where available).
#ifndef FASTCLOCK_HPP
#define FASTCLOCK_HPP

#include <chrono>
#include <ctime>
#include <type_traits>

#include "fastclock.h"

namespace fastclock {

struct steady_clock {
	using rep = std::int64_t;
	using period = std::nano;
	using duration = std::chrono::nanoseconds;
	using time_point = std::chrono::time_point<steady_clock>;
	static constexpr bool is_steady = true;
	static time_point now() noexcept { return time_point(duration(fc_mono_ns())); }
};

struct system_clock {
	using rep = std::int64_t;
	using period = std::nano;
	using duration = std::chrono::nanoseconds;
	using time_point = std::chrono::time_point<system_clock>;
	static constexpr bool is_steady = false;
	static time_point now() noexcept { return time_point(duration(fc_real_ns())); }
	// Both count from the Unix epoch (std::chrono::system_clock does so since C++20, and in practice on
	// every Linux standard library before it).
	static std::chrono::system_clock::time_point to_std(time_point t) noexcept
	{
		return std::chrono::system_clock::time_point(
			std::chrono::duration_cast<std::chrono::system_clock::duration>(t.time_since_epoch()));
	}
	static time_point from_std(std::chrono::system_clock::time_point t) noexcept
	{
		return time_point(std::chrono::duration_cast<duration>(t.time_since_epoch()));
	}
	static std::time_t to_time_t(time_point t) noexcept
	{
		return static_cast<std::time_t>(std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count());
	}
	static time_point from_time_t(std::time_t t) noexcept { return time_point(std::chrono::seconds(t)); }
};

struct coarse_steady_clock {
	using rep = std::int64_t;
	using period = std::nano;
	using duration = std::chrono::nanoseconds;
	using time_point = std::chrono::time_point<coarse_steady_clock>;
	static constexpr bool is_steady = true;
	static time_point now() noexcept { return time_point(duration(fc_mono_coarse_ns())); }
};

#if defined(__cpp_lib_chrono) && __cpp_lib_chrono >= 201907L
static_assert(std::chrono::is_clock_v<steady_clock>);
static_assert(std::chrono::is_clock_v<system_clock>);
static_assert(std::chrono::is_clock_v<coarse_steady_clock>);
#endif

} // namespace fastclock

#endif // FASTCLOCK_HPP
