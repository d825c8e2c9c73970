/*
 * fastclock — the kernel's clock_gettime in the vDSO, found in the ELF image the kernel maps into every process
 * (getauxval(AT_SYSINFO_EHDR)), as the kernel's own tools/testing/selftests/vDSO/parse_vdso.c finds it.
 *
 * Why: libc's clock_gettime reaches the same function through its own text and a pointer in ld.so's data. A
 * read that comes after the process stopped reading for a while pays a TLB and a cache miss for each page it
 * touches, and those two pages are most of a cold libc read (docs/PERFORMANCE.md, "Reads after a pause"). The
 * slow path's kernel reads (state.c's real source) call the vDSO's function directly, once the
 * start-up's trust step has found it (start.c): a few us there, on a slow path that reads sysfs anyway, rather
 * than on a process's first call or at the load of every program linked with the library.
 *
 * The image is the kernel's, in this process: its structure is checked (magic, class, the header sizes, a
 * PT_LOAD, a DT_HASH), not distrusted; a symbol must be a defined function. Anything else: NULL, and the caller
 * keeps libc's clock_gettime.
 */
#include <elf.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>

#include "vdso.h"

/* Not under MemorySanitizer: it sees a timespec written only through libc's clock_gettime, which it intercepts;
 * the vDSO's writes are invisible to it, and every read of their values would be reported. */
#if defined(__has_feature)
#if __has_feature(memory_sanitizer)
#define VDSO_UNSEEN_WRITES 1
#endif
#endif

#if defined(VDSO_UNSEEN_WRITES)
/* libc's clock_gettime */
#elif defined(__x86_64__)
#define VDSO_CLOCK_GETTIME "__vdso_clock_gettime"
#elif defined(__aarch64__)
#define VDSO_CLOCK_GETTIME "__kernel_clock_gettime"
#endif

fc_kernel_gettime_fn fc__vdso_find(const void *image, const char *name)
{
	const unsigned char *base = image;
	const Elf64_Ehdr *eh = image;
	const Elf64_Phdr *ph;
	const Elf64_Dyn *dyn = NULL;
	const Elf64_Sym *sym = NULL;
	const Elf64_Word *hash = NULL;
	const char *str = NULL;
	const unsigned char *load = NULL;
	fc_kernel_gettime_fn f;

	if (base == NULL || name == NULL || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum == 0 ||
	    eh->e_phnum > 64)
		return NULL;
	ph = (const Elf64_Phdr *)(base + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && load == NULL) {
			/* the image's link-time addresses (the dynamic section's) to this mapping's */
			load = base + ((intptr_t)ph[i].p_offset - (intptr_t)ph[i].p_vaddr);
		} else if (ph[i].p_type == PT_DYNAMIC) {
			dyn = (const Elf64_Dyn *)(base + ph[i].p_offset);
		}
	}
	if (load == NULL || dyn == NULL)
		return NULL;
	for (int i = 0; i < 256 && dyn[i].d_tag != DT_NULL; i++) {
		const unsigned char *at = load + dyn[i].d_un.d_ptr;
		if (dyn[i].d_tag == DT_SYMTAB)
			sym = (const Elf64_Sym *)at;
		else if (dyn[i].d_tag == DT_STRTAB)
			str = (const char *)at;
		else if (dyn[i].d_tag == DT_HASH)
			hash = (const Elf64_Word *)at;
	}
	if (sym == NULL || str == NULL || hash == NULL)
		return NULL;
	/* DT_HASH's second word, nchain, is the number of symbols (the kernel links the vDSO with a SysV hash on
	 * every architecture it supports) */
	for (Elf64_Word i = 0; i < hash[1] && i < 4096; i++) {
		const int bind = ELF64_ST_BIND(sym[i].st_info);
		if (ELF64_ST_TYPE(sym[i].st_info) != STT_FUNC || sym[i].st_shndx == SHN_UNDEF ||
		    (bind != STB_GLOBAL && bind != STB_WEAK) || strcmp(str + sym[i].st_name, name) != 0)
			continue;
		{
			/* an address in the image to a function pointer, as dlsym's callers convert it */
			const void *at = load + sym[i].st_value;
			memcpy(&f, &at, sizeof(f));
			return f;
		}
	}
	return NULL;
}

#ifdef VDSO_CLOCK_GETTIME
static int before(const struct timespec *x, const struct timespec *y)
{
	return x->tv_sec < y->tv_sec || (x->tv_sec == y->tv_sec && x->tv_nsec < y->tv_nsec);
}
#endif

fc_kernel_gettime_fn fc__vdso_clock_gettime(void)
{
#ifdef VDSO_CLOCK_GETTIME
	/* the auxiliary vector gives the image's address as an integer */
	const void *image = (const void *)getauxval(AT_SYSINFO_EHDR); // NOLINT(performance-no-int-to-ptr)
	const fc_kernel_gettime_fn f = fc__vdso_find(image, VDSO_CLOCK_GETTIME);
	/* What is checked is what is used: every clock the library reads through it (state.c's real source, the
	 * coarse reads) must read as libc's, between two of libc's. Not one clock for all: a clock_gettime put in
	 * libc's place (libfaketime's REALTIME with a true MONOTONIC, a program's own) changes some clocks only. */
	static const clockid_t ids[] = {CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME, CLOCK_MONOTONIC_COARSE,
					CLOCK_REALTIME_COARSE};
	if (f == NULL)
		return NULL;
	for (unsigned i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		struct timespec a, v, b;
		if (clock_gettime(ids[i], &a) != 0 || f(ids[i], &v) != 0 || clock_gettime(ids[i], &b) != 0 ||
		    before(&v, &a) || before(&b, &v))
			return NULL;
	}
	return f;
#else
	return NULL;
#endif
}
