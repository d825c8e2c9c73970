// C++ consumer of the installed package (static library): the chrono clocks compile and tick.
#include <fastclock.hpp>
#include <cstdio>

int main()
{
	auto a = fastclock::steady_clock::now();
	auto b = fastclock::steady_clock::now();
	std::printf("consumer_cxx: %s\n", b >= a ? "ok" : "steady_clock went back");
	return b >= a ? 0 : 1;
}
