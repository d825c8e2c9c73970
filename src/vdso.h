/*
 * fastclock — vdso.c: the kernel's clock_gettime in the vDSO, called without libc's wrapper.
 * Floor 0. Owns: finding a function in the vDSO's ELF image.
 * May call: libc (getauxval, clock_gettime for the check).
 */
#ifndef FASTCLOCK_VDSO_H
#define FASTCLOCK_VDSO_H

#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A clock_gettime: 0, or nonzero on failure (the vDSO's returns the system call's -errno, and sets no errno). */
typedef int (*fc_kernel_gettime_fn)(clockid_t id, struct timespec *ts);

/* The defined function `name` of the 64-bit ELF image mapped at `image` (the vDSO's layout: one PT_LOAD, a
 * PT_DYNAMIC with DT_SYMTAB, DT_STRTAB and DT_HASH), or NULL. */
fc_kernel_gettime_fn fc__vdso_find(const void *image, const char *name);
/* This process's vDSO clock_gettime, checked against libc's (for each clock the library reads, a read between two
 * of libc's), or NULL: no vDSO, another architecture, or a function that does not read what libc reads. */
fc_kernel_gettime_fn fc__vdso_clock_gettime(void);

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_VDSO_H */
