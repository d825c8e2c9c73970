/*
 * Prints the ABI fingerprint of the headers it is built with: the FASTCLOCK_ABI number, the size, alignment
 * and every field's offset and size of the structures the inline readers and fc_status compile into
 * applications, and the constants they pass to the library. check_layout.py compares it with the committed
 * block for that ABI number in cmake/abi-layout.txt. With --runtime it also prints the linked library's fc_abi().
 */
#include <fastclock.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define S(T) printf("size %s %zu align %zu\n", #T, sizeof(struct T), _Alignof(struct T))
#define F(T, f) printf("field %s.%s %zu %zu\n", #T, #f, offsetof(struct T, f), sizeof(((struct T *)0)->f))
#define K(c) printf("const %s %lld\n", #c, (long long)(c))

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--runtime")) {
		printf("%d\n", fc_abi());
		return 0;
	}
	printf("abi %d\n", FASTCLOCK_ABI);
	S(fc_hand);
	F(fc_hand, gen); F(fc_hand, flags); F(fc_hand, stale_ticks); F(fc_hand, base_ticks); F(fc_hand, mask);
	F(fc_hand, mult); F(fc_hand, frac); F(fc_hand, mono_ns); F(fc_hand, real_off_ns); F(fc_hand, valid_ticks);
	F(fc_hand, mono_err_ns); F(fc_hand, err_mult); F(fc_hand, utc_err_ns); F(fc_hand, sync_status);
	F(fc_hand, pad_); F(fc_hand, floor_ns); F(fc_hand, next); F(fc_hand, utc_corr_ns);
	F(fc_hand, mono_sec); F(fc_hand, mono_subsec); F(fc_hand, real_sec); F(fc_hand, real_subsec); F(fc_hand, real_ns);
	S(fc_pub);
	F(fc_pub, current); F(fc_pub, coarse_mono); F(fc_pub, coarse_real_off);
	S(fc__bound);
	F(fc__bound, track_err_ns); F(fc__bound, utc_err_ns); F(fc__bound, utc_corr_ns); F(fc__bound, sync_status);
	S(fc_interval);
	F(fc_interval, earliest_ns); F(fc_interval, latest_ns); F(fc_interval, status);
	S(fc_status);
	F(fc_status, backend); F(fc_status, reason); F(fc_status, counter); F(fc_status, clocksource);
	F(fc_status, freq_source); F(fc_status, counter_hz_initial); F(fc_status, counter_hz); F(fc_status, period_ns);
	F(fc_status, reanchors); F(fc_status, slow_paths); F(fc_status, waits); F(fc_status, discontinuities);
	F(fc_status, real_steps); F(fc_status, trust_checks); F(fc_status, last_error_ns);
	F(fc_status, last_bracket_ns); F(fc_status, max_abs_error_ns); F(fc_status, updater_running);
	F(fc_status, config_error); F(fc_status, sync_status); F(fc_status, ntp_maxerror_ns);
	F(fc_status, ntp_esterror_ns); F(fc_status, ntp_status); F(fc_status, step_notifier);
	F(fc_status, step_notifications); F(fc_status, bound_source); F(fc_status, bound_why); F(fc_status, bound_reason);
	F(fc_status, bound_status); F(fc_status, bound_age_ns); F(fc_status, bound_half_ns); F(fc_status, bound_center_ns);
	F(fc_status, leap); F(fc_status, bound_error); F(fc_status, bound_error_age_ns);
	K(FC__MONO); K(FC__REAL); K(FC__RELAXED); K(FC_HANDS); K(FC_HAND_KERNEL); K(FC_HAVE_COUNTER);
	K(FC_SYNC_UNKNOWN); K(FC_SYNC_SYNCHRONIZED); K(FC_SYNC_FREE_RUNNING); K(FC_SYNC_DISRUPTED);
	K(FC_BACKEND_COUNTER); K(FC_BACKEND_KERNEL);
	K(FC_FREQ_NONE); K(FC_FREQ_PERF); K(FC_FREQ_CPUID); K(FC_FREQ_CNTFRQ); K(FC_FREQ_MEASURED);
	return 0;
}
