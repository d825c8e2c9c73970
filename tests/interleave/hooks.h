/* Force-included (-include) into tests/interleave's copy of the library and its test: the interleaving
 * points of fc_hand.h (the reader protocol, inline and slow path alike) and src/hands.c become calls of the test's scheduler. */
#ifndef FASTCLOCK_INTERLEAVE_HOOKS_H
#define FASTCLOCK_INTERLEAVE_HOOKS_H
void fc_test_point(int n);
void fc_test_writer_point(int n);
#define FC__TEST_POINT(n) fc_test_point(n)
#define FC__WRITER_POINT(n) fc_test_writer_point(n)
#endif
