/* FC__HANDS_STATIC (src/hands.h) compiled as C, as state.c compiles it for the global clock, for
 * Hands.FC__HANDS_STATIC_is_what_fc__hands_init_makes (C++ has no such array designators). */
#include "hands.h"

struct fc_hands *fc_test_hands_static(void);

static struct fc_hands hs = FC__HANDS_STATIC(hs);

struct fc_hands *fc_test_hands_static(void) { return &hs; }
