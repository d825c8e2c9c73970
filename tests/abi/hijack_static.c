/*
 * Names the library used internally before they took the reserved prefix fc__: an application
 * may define them, and with the static library its definitions must not replace the library's code (a static
 * link resolves the library's calls to the first definition: the program's). Each counts its calls.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

extern volatile int fc_abi_hijacked;

int fc_trust_check(char *why, size_t whylen, char *cs, size_t cslen);
int fc_trust_check(char *why, size_t whylen, char *cs, size_t cslen)
{
	fc_abi_hijacked++;
	snprintf(why, whylen, "hijacked");
	snprintf(cs, cslen, "hijacked");
	return 0;
}

int fc_config_parse(const char *source, const char *period_us, void *out, char *err, size_t errlen);
int fc_config_parse(const char *source, const char *period_us, void *out, char *err, size_t errlen)
{
	(void)source, (void)period_us, (void)out;
	fc_abi_hijacked++;
	snprintf(err, errlen, "hijacked");
	return 1;
}

int64_t fc_clock_read(void *c, int how, void *b);
int64_t fc_clock_read(void *c, int how, void *b)
{
	(void)c, (void)how, (void)b;
	fc_abi_hijacked++;
	return 0;
}
