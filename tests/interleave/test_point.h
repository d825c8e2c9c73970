/*
 * tests/interleave — force-included (-include) before every file of the interleaving tests, so the protocol's
 * test points (FC__TEST_POINT in include/fastclock/fc_hand.h and src/hands.c) call the test's scheduler.
 * Owns nothing else; the released library never sees this file.
 */
#ifndef FC_INTERLEAVE_TEST_POINT_H
#define FC_INTERLEAVE_TEST_POINT_H
void fc_test_point(int n);
#define FC__TEST_POINT(n) fc_test_point(n)
#endif
