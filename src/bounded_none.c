/*
 * fastclock — the bounded reads of a build without the UTC bound (cmake -DFASTCLOCK_BOUND=OFF): floor 6, in place
 * of bounded.c and src/bound/. A bounded read gives the tracking part (the clock's own bound vs the kernel's) and
 * promises nothing of UTC: status UNKNOWN (DISRUPTED while the tracker says so), fc_real_bounded's interval as wide
 * as a bound that promises nothing; fc_status says why. fc_init installs nothing (no fc__bound_install).
 *
 * Owns: fc__slow_bounded and fc__bound_status of such a build.
 * May call: read.c (fc__read_global), state.c, init.c, the public API.
 */
#include <errno.h>

#include "section.h"
#include "bounded.h"
#include "read.h"
#include "state.h"
#include "units.h"

FC__START_TEXT int fc__slow_bounded(struct fc_interval *out, int how)
{
	struct fc__bound b;
	int64_t v, utc_err;
	if (out == NULL) {
		errno = EFAULT;
		return -1;
	}
	v = fc__read_global(how, &b);
	utc_err = (how & FC__REAL) ? FC_BOUND_NOTHING : 0;
	out->earliest_ns = v - b.track_err_ns - utc_err;
	out->latest_ns = v + b.track_err_ns + utc_err;
	out->status = b.sync_status == FC_SYNC_DISRUPTED ? FC_SYNC_DISRUPTED : FC_SYNC_UNKNOWN;
	return 0;
}

void fc__bound_status(struct fc_clock *c, struct fc_status *out)
{
	struct fc_interval iv;
	(void)c;
	out->bound_error_age_ns = -1;
	out->bound_age_ns = -1;
	out->bound_half_ns = FC_BOUND_NOTHING;
	out->bound_status = FC_SYNC_UNKNOWN;
	fc__copy_str(out->bound_source, sizeof(out->bound_source), "none");
	fc__copy_str(out->bound_why, sizeof(out->bound_why), "left out of this build (FASTCLOCK_BOUND=OFF)");
	fc__copy_str(out->bound_reason, sizeof(out->bound_reason), "no bound source in this build");
	fc_real_bounded(&iv);
	out->sync_status = iv.status;
}
