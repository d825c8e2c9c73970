/*
 * fastclock — the library's version and ABI number, for run-time checks against the FASTCLOCK_VERSION_* and
 * FASTCLOCK_ABI macros an application was built with.
 *
 * Owns: fc_version, fc_abi.
 * May call: nothing (the macros of <fastclock.h> only).
 */
#include "fastclock.h"

#define FC_STR_(x) #x
#define FC_STR(x) FC_STR_(x)

const char *fc_version(void)
{
	return FC_STR(FASTCLOCK_VERSION_MAJOR) "." FC_STR(FASTCLOCK_VERSION_MINOR) "." FC_STR(FASTCLOCK_VERSION_PATCH);
}

int fc_abi(void) { return FASTCLOCK_ABI; }
