// fastclock — std::chrono clocks over the C API.
//
//   fastclock::steady_clock        CLOCK_MONOTONIC, ordered counter read (drop-in for std::chrono::steady_clock)
//   fastclock::system_clock        CLOCK_REALTIME, ordered counter read (drop-in for std::chrono::system_clock)
//   fastclock::coarse_steady_clock CLOCK_MONOTONIC, coarse (fc_mono_coarse_ns: its cost class and staleness)
// Each now() is the C read it names (fc_mono_ns, fc_real_ns, fc_mono_coarse_ns), at its cost: noexcept, no
// errors, async-signal-safe, fork-safe.
// Their time_point types ARE std::chrono's (steady_clock::time_point, system_clock::time_point): the clocks count
// from the same epochs (CLOCK_MONOTONIC's, and the Unix epoch: std::chrono::system_clock's since C++20 and on
// every Linux standard library before it), so a time point from one compares with, subtracts from and converts
// like one from the other (std::chrono::system_clock::to_time_t(fastclock::system_clock::now())).
// All meet the TrivialClock requirements (checked below with std::chrono::is_clock_v where available).
#ifndef FASTCLOCK_HPP
#define FASTCLOCK_HPP

#include <chrono>
#include <cstdint>
#include <ctime>
#include <type_traits>

#include "fastclock.h"

namespace fastclock {

// The library's nanoseconds in the standard clock's duration: the identity (no code) where that is nanoseconds,
// as in libstdc++; truncated toward zero where it is coarser (libc++'s system_clock counts microseconds).
namespace detail {
template <class Duration> inline Duration from_ns(std::int64_t ns) noexcept
{
	return std::chrono::duration_cast<Duration>(std::chrono::nanoseconds(ns));
}
} // namespace detail

struct steady_clock {
	using duration = std::chrono::steady_clock::duration;
	using rep = duration::rep;
	using period = duration::period;
	using time_point = std::chrono::steady_clock::time_point;
	static constexpr bool is_steady = true;
	static time_point now() noexcept { return time_point(detail::from_ns<duration>(fc_mono_ns())); }
};

struct system_clock {
	using duration = std::chrono::system_clock::duration;
	using rep = duration::rep;
	using period = duration::period;
	using time_point = std::chrono::system_clock::time_point;
	static constexpr bool is_steady = false;
	static time_point now() noexcept { return time_point(detail::from_ns<duration>(fc_real_ns())); }
	static std::time_t to_time_t(time_point t) noexcept { return std::chrono::system_clock::to_time_t(t); }
	static time_point from_time_t(std::time_t t) noexcept { return std::chrono::system_clock::from_time_t(t); }
	// The same type both ways since time_point is std::chrono::system_clock's; kept for code written against
	// the separate type.
	static std::chrono::system_clock::time_point to_std(time_point t) noexcept { return t; }
	static time_point from_std(std::chrono::system_clock::time_point t) noexcept { return t; }
};

struct coarse_steady_clock {
	using duration = std::chrono::steady_clock::duration;
	using rep = duration::rep;
	using period = duration::period;
	using time_point = std::chrono::steady_clock::time_point;
	static constexpr bool is_steady = true;
	static time_point now() noexcept { return time_point(detail::from_ns<duration>(fc_mono_coarse_ns())); }
};

#if defined(__cpp_lib_chrono) && __cpp_lib_chrono >= 201907L
static_assert(std::chrono::is_clock_v<steady_clock>);
static_assert(std::chrono::is_clock_v<system_clock>);
static_assert(std::chrono::is_clock_v<coarse_steady_clock>);
#endif

} // namespace fastclock

#endif // FASTCLOCK_HPP
