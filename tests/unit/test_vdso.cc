// What a read after a long pause touches: the vDSO's clock_gettime called directly (vdso.c), the global clock and
// fc__pub in one page (state.c), errno reached through this thread's own pointer (read.c). Judged by values and
// addresses, never by time.
#include <gtest/gtest.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <vector>
#include "bound_fixtures.h"
#include "fastclock.h"
#include "state.h"
#include "vdso.h"

namespace
{

#if defined(__x86_64__)
const char *const kName = "__vdso_clock_gettime";
#elif defined(__aarch64__)
const char *const kName = "__kernel_clock_gettime";
#else
const char *const kName = nullptr;
#endif

int64_t ns(const timespec &ts)
{
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// The [vdso] mapping's extent, from /proc/self/maps.
bool vdso_extent(uintptr_t *lo, uintptr_t *hi)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	bool found = false;
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", lo, hi) == 2)
			found = true;
	if (f)
		fclose(f);
	return found;
}

} // namespace

TEST(Vdso, its_clock_gettime_reads_the_clocks_libc_reads)
{
	if (kName == nullptr || getauxval(AT_SYSINFO_EHDR) == 0)
		GTEST_SKIP() << "no vDSO here";
	const fc_kernel_gettime_fn f = fc__vdso_clock_gettime();
	ASSERT_NE(f, nullptr);
	const clockid_t ids[] = {CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_MONOTONIC_COARSE, CLOCK_REALTIME_COARSE,
				 CLOCK_BOOTTIME};
	for (clockid_t id : ids) {
		timespec a, v, b;
		ASSERT_EQ(clock_gettime(id, &a), 0);
		ASSERT_EQ(f(id, &v), 0) << id;
		ASSERT_EQ(clock_gettime(id, &b), 0);
		EXPECT_LE(ns(a), ns(v)) << id;
		EXPECT_LE(ns(v), ns(b)) << id;
	}
	timespec ts;
	EXPECT_NE(f((clockid_t)12345, &ts), 0); // an id the kernel does not know fails (no errno: -EINVAL)
}

// Found by the start-up's trust step, not at load. (Not asserted of the first call: the trust step is due a
// millisecond after initialisation, and a first call that a busy machine holds up that long takes it.)
TEST(Vdso, the_library_reads_the_kernel_through_it_once_started)
{
	FC_TEST_NEEDS_A_FRESH_LIBRARY();
	if (kName == nullptr || getauxval(AT_SYSINFO_EHDR) == 0)
		GTEST_SKIP() << "no vDSO here";
	EXPECT_EQ(forked([] {
			  EXPECT_EQ(fc__global_clock()->kernel_gettime, nullptr); // not at load
			  ASSERT_EQ(fc_init(), 0);                                // the start-up finished
			  EXPECT_EQ(fc__global_clock()->kernel_gettime, fc__vdso_clock_gettime());
			  EXPECT_NE(fc__global_clock()->kernel_gettime, nullptr);
		  }),
		  0);
}

// The parser on a copy of this process's vDSO: it finds the function at the same offset, and finds nothing in an
// image damaged in any of the places it checks.
TEST(Vdso, a_damaged_image_gives_no_function)
{
	uintptr_t lo = 0, hi = 0;
	const uintptr_t base = getauxval(AT_SYSINFO_EHDR);
	if (kName == nullptr || base == 0 || !vdso_extent(&lo, &hi) || base != lo)
		GTEST_SKIP() << "no vDSO here";
	const fc_kernel_gettime_fn real = fc__vdso_find((const void *)base, kName);
	ASSERT_NE(real, nullptr);
	const uintptr_t off = (uintptr_t)real - base;
	const std::vector<unsigned char> image((const unsigned char *)lo, (const unsigned char *)hi);
	auto find = [&](auto damage) {
		std::vector<unsigned char> copy = image;
		damage(copy.data());
		return (uintptr_t)fc__vdso_find(copy.data(), kName) - (uintptr_t)copy.data();
	};
	auto nothing = [&](auto damage) {
		std::vector<unsigned char> copy = image;
		damage(copy.data());
		return fc__vdso_find(copy.data(), kName) == nullptr;
	};
	EXPECT_EQ(find([](unsigned char *) {}), off);
	EXPECT_EQ(fc__vdso_find(image.data(), "no_such_function"), nullptr);
	EXPECT_EQ(fc__vdso_find(nullptr, kName), nullptr);
	EXPECT_TRUE(nothing([](unsigned char *p) { p[EI_MAG1] = 'X'; }));
	EXPECT_TRUE(nothing([](unsigned char *p) { p[EI_CLASS] = ELFCLASS32; }));
	EXPECT_TRUE(nothing([](unsigned char *p) { ((ElfW(Ehdr) *)p)->e_phentsize = 1; }));
	EXPECT_TRUE(nothing([](unsigned char *p) { ((ElfW(Ehdr) *)p)->e_phnum = 0; }));
	auto phdrs = [](unsigned char *p) { return (ElfW(Phdr) *)(p + ((ElfW(Ehdr) *)p)->e_phoff); };
	EXPECT_TRUE(nothing([&](unsigned char *p) {
		for (int i = 0; i < ((ElfW(Ehdr) *)p)->e_phnum; i++)
			if (phdrs(p)[i].p_type == PT_DYNAMIC)
				phdrs(p)[i].p_type = PT_NOTE;
	}));
	EXPECT_TRUE(nothing([&](unsigned char *p) {
		for (int i = 0; i < ((ElfW(Ehdr) *)p)->e_phnum; i++)
			if (phdrs(p)[i].p_type == PT_LOAD)
				phdrs(p)[i].p_type = PT_NOTE;
	}));
	for (const Elf64_Sxword tag : {DT_HASH, DT_SYMTAB, DT_STRTAB})
		EXPECT_TRUE(nothing([&](unsigned char *p) {
			for (int i = 0; i < ((ElfW(Ehdr) *)p)->e_phnum; i++) {
				if (phdrs(p)[i].p_type != PT_DYNAMIC)
					continue;
				for (ElfW(Dyn) *d = (ElfW(Dyn) *)(p + phdrs(p)[i].p_offset); d->d_tag != DT_NULL; d++)
					if (d->d_tag == tag)
						d->d_tag = DT_DEBUG;
			}
		})) << "without dynamic tag "
		    << tag;
	// the symbol itself (found by its name, as the parser finds it): not a function, undefined, local
	auto symbol = [&](unsigned char *p) -> ElfW(Sym) * {
		uintptr_t load = 0;
		ElfW(Sym) *sym = nullptr;
		const char *str = nullptr;
		for (int k = 0; k < ((ElfW(Ehdr) *)p)->e_phnum; k++)
			if (phdrs(p)[k].p_type == PT_LOAD) {
				load = (uintptr_t)p + phdrs(p)[k].p_offset - phdrs(p)[k].p_vaddr;
				break;
			}
		for (int i = 0; i < ((ElfW(Ehdr) *)p)->e_phnum; i++)
			if (phdrs(p)[i].p_type == PT_DYNAMIC)
				for (ElfW(Dyn) *d = (ElfW(Dyn) *)(p + phdrs(p)[i].p_offset); d->d_tag != DT_NULL; d++) {
					if (d->d_tag == DT_SYMTAB)
						sym = (ElfW(Sym) *)(load + d->d_un.d_ptr);
					if (d->d_tag == DT_STRTAB)
						str = (const char *)(load + d->d_un.d_ptr);
				}
		for (int n = 0; sym && str && n < 4096; n++, sym++)
			if (strcmp(str + sym->st_name, kName) == 0)
				return sym;
		ADD_FAILURE() << "no symbol " << kName;
		static ElfW(Sym) dummy;
		return &dummy;
	};
	EXPECT_TRUE(nothing([&](unsigned char *p) { symbol(p)->st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT); }));
	EXPECT_TRUE(nothing([&](unsigned char *p) { symbol(p)->st_shndx = SHN_UNDEF; }));
	EXPECT_TRUE(nothing([&](unsigned char *p) { symbol(p)->st_info = ELF64_ST_INFO(STB_LOCAL, STT_FUNC); }));
}

// The inline read's data (fc__pub) and the slow path's (the global clock) in one page: a read after a long pause
// pays a TLB miss for each page.
TEST(OnePage, the_global_clock_and_its_hands_lie_in_one_page)
{
	const uintptr_t first = (uintptr_t)&fc__pub, last = (uintptr_t)&fc__clock_global + sizeof(fc__clock_global) - 1;
	EXPECT_EQ(first / 4096, last / 4096) << std::hex << first << " .. " << last;
	EXPECT_EQ((uintptr_t)&fc__clock_global / 4096, first / 4096);
}

// A read's slow path leaves errno as it found it, on the thread's first slow path (which finds errno's address)
// and after: the first call's initialisation parses FASTCLOCK_PERIOD_US with strtoll, which sets errno.
TEST(Errno, a_slow_read_leaves_errno_as_it_found_it)
{
	FC_TEST_NEEDS_A_FRESH_LIBRARY();
	EXPECT_EQ(forked([] {
			  setenv("FASTCLOCK_PERIOD_US", "1000", 1);
			  errno = EXDEV;
			  (void)fc_mono_ns(); // the first call: initialisation
			  EXPECT_EQ(errno, EXDEV);
			  errno = ENOTTY;
			  for (int i = 0; i < 5; i++) {
				  struct timespec ts = {0, 3000000};
				  nanosleep(&ts, nullptr);
				  errno = ENOTTY;
				  (void)fc_real_ns(); // a stale hand: the slow path
				  EXPECT_EQ(errno, ENOTTY);
			  }
		  }),
		  0);
	EXPECT_EQ(
		forked([] {
			setenv("FASTCLOCK_PERIOD_US", "1000", 1);
			errno = EXDEV;
			(void)fc_ticks(); // the first call, through fc__ticks_kernel where the counter is not known yet
			EXPECT_EQ(errno, EXDEV);
		}),
		0);
}
