// C++ consumer of the installed package (static library): the chrono clocks compile and tick, and their time
// points are std::chrono's (to_time_t and comparison with std::chrono::system_clock::now() compile).
#include <fastclock.hpp>
#include <cstdio>
#include <ctime>

int main()
{
	auto a = fastclock::steady_clock::now();
	auto b = fastclock::steady_clock::now();
	std::time_t t = std::chrono::system_clock::to_time_t(fastclock::system_clock::now());
	if (t <= 0 || fastclock::system_clock::now() > std::chrono::system_clock::now() + std::chrono::seconds(1)) {
		std::printf("consumer_cxx: system_clock disagrees with std::chrono::system_clock\n");
		return 1;
	}
	std::printf("consumer_cxx: %s\n", b >= a ? "ok" : "steady_clock went back");
	return b >= a ? 0 : 1;
}
