/*
 * fastclock — trust.c: may the counter be trusted (the kernel's clocksource, an invariant counter).
 * Floor 0. Owns: the fail-closed rule and the clocksource file's path. May call: str.c, fmt.c, file.c (opening
 * the file as a source's, fc__file_open).
 */
#ifndef FASTCLOCK_TRUST_H
#define FASTCLOCK_TRUST_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if the counter may be used (the kernel's clocksource uses it and the CPU says it is invariant), else 0;
 * `why` gets a sentence either way, `cs` the clocksource name. */
int fc__trust_check(char *why, size_t whylen, char *cs, size_t cslen);
/* Where fc__trust_check reads the clocksource: the kernel's file, or a test's (FASTCLOCK_TEST_CLOCKSOURCE_FILE,
 * read once by the initialisation and passed here; NULL or "": the kernel's). The file must be on sysfs unless
 * need_sysfs is 0 for a test's path (the kernel's always). */
void fc__trust_set_path(const char *path, int need_sysfs);

#ifdef __cplusplus
}
#endif

#endif /* FASTCLOCK_TRUST_H */
