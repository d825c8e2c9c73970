/*
 * fastclock — where the first call's code lies (macros only: any floor includes it).
 *
 * A process's first call runs the initialisation and the first kernel read: about 1,500 instructions in a dozen
 * functions of six files, each on whatever text page the link put it. In a fresh process every page is a TLB
 * miss (a two-level walk in a VM), and seconds after the last call its lines are gone from the caches too: each
 * page the call touches costs a miss of its own (docs/PERFORMANCE.md, "Start-up"). FC__START_TEXT puts those
 * functions in .text.startup.fastclock, which the GNU linkers' default scripts place with every .text.startup
 * section (main, the constructors: this library's on_load included), so the first call runs on one or two pages
 * that the process's start has already touched. A read after a long pause (a parked keeper's reader: read.c's
 * kernel_past_hand) finds its pages as cold, and runs on the same ones. Linkers that do not group sections by
 * prefix (lld without -z keep-text-section-prefix) leave them in .text: the same code, only not grouped.
 */
#ifndef FASTCLOCK_SECTION_H
#define FASTCLOCK_SECTION_H

#define FC__START_TEXT __attribute__((section(".text.startup.fastclock")))

#endif /* FASTCLOCK_SECTION_H */
