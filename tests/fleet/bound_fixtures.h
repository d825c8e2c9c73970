// fastclock tests — the files the bound-source tests write: a temporary directory, a ClockBound segment, a
// VMClock page (tests/fleet/test_bound.cc, tests/unit/test_bound_sources.cc).
#ifndef FASTCLOCK_TEST_BOUND_FIXTURES_H
#define FASTCLOCK_TEST_BOUND_FIXTURES_H

#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <string>

#include "bound/bound.h"

namespace {

constexpr int64_t MS = 1000000, SEC = 1000000000;

std::string tmpdir()
{
	char t[] = "/tmp/fc_bound_XXXXXX";
	EXPECT_NE(mkdtemp(t), nullptr);
	return t;
}

// A ClockBound segment written as clock-bound-d's writer does: generation odd while writing, even after.
struct Segment {
	std::string path;
	fc_cb_segment s{};
	explicit Segment(const std::string &dir) : path(dir + "/shm0")
	{
		s.magic[0] = FC_CB_MAGIC0;
		s.magic[1] = FC_CB_MAGIC1;
		s.segsize = FC_CB_SIZE;
		s.version = FC_CB_VERSION;
		s.generation = 2;
		s.max_drift_ppb = 1000;
		s.clock_status = FC_CB_SYNCHRONIZED;
	}
	void set_as_of(int64_t ns, int64_t void_after_ns)
	{
		s.as_of_sec = ns / SEC, s.as_of_nsec = ns % SEC;
		s.void_after_sec = void_after_ns / SEC, s.void_after_nsec = void_after_ns % SEC;
	}
	void write()
	{
		int fd = open(path.c_str(), O_RDWR | O_CREAT, 0644);
		ASSERT_GE(fd, 0);
		ASSERT_EQ(pwrite(fd, &s, sizeof(s), 0), (ssize_t)sizeof(s));
		close(fd);
	}
	void update() // a complete update: two generation steps
	{
		s.generation = (uint16_t)(s.generation + 2);
		if (s.generation == 0)
			s.generation = 2;
		write();
	}
};

struct VmFile {
	std::string path;
	uint8_t m[4096]{};
	explicit VmFile(const std::string &d) : path(d + "/vmclock0")
	{
		uint32_t magic = FC_VMCLOCK_MAGIC, size = 104;
		memcpy(m, &magic, 4), memcpy(m + 4, &size, 4);
		m[8] = 1;              // version
		m[34] = FC_VMC_SYNCHRONIZED;
		write();
	}
	void marker(uint64_t v) { memcpy(m + 16, &v, 8); }
	void write()
	{
		int fd = open(path.c_str(), O_RDWR | O_CREAT, 0644);
		ASSERT_EQ(pwrite(fd, m, sizeof(m), 0), (ssize_t)sizeof(m));
		close(fd);
	}
};

} // namespace

#endif
