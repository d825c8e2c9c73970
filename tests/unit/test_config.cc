// Configuration parsing and the NTP-state rules: pure functions.
#include <gtest/gtest.h>

#include <string>
#include <sys/timex.h>

#include "config.h"
#include "fastclock.h"
#include "ntp.h"
#include "str.h"

namespace {

TEST(Config, defaults_when_unset)
{
	fc_config c;
	char err[160];
	EXPECT_EQ(fc__config_parse(nullptr, nullptr, &c, err, sizeof(err)), 0);
	EXPECT_EQ(c.backend, 0);
	EXPECT_EQ(c.period_ns, FC_DEFAULT_PERIOD_NS);
	EXPECT_STREQ(err, "");
}

TEST(Config, valid_values_are_taken)
{
	fc_config c;
	char err[160];
	EXPECT_EQ(fc__config_parse("kernel", "250", &c, err, sizeof(err)), 0);
	EXPECT_EQ(c.backend, FC_BACKEND_KERNEL);
	EXPECT_EQ(c.period_ns, 250000);
	EXPECT_EQ(fc__config_parse("counter", "1000000", &c, err, sizeof(err)), 0);
	EXPECT_EQ(c.backend, FC_BACKEND_COUNTER);
	EXPECT_EQ(c.period_ns, 1000000000);
	EXPECT_EQ(fc__config_parse("auto", "1", &c, err, sizeof(err)), 0);
	EXPECT_EQ(c.backend, 0);
	EXPECT_EQ(c.period_ns, 1000);
}

TEST(Config, updater_rt_is_one_unless_zero)
{
	char err[160] = "";
	int rt = -1;
	EXPECT_EQ(fc__config_parse_updater_rt(nullptr, &rt, err, sizeof(err)), 0);
	EXPECT_EQ(rt, 1);
	EXPECT_EQ(fc__config_parse_updater_rt("0", &rt, err, sizeof(err)), 0);
	EXPECT_EQ(rt, 0);
	EXPECT_EQ(fc__config_parse_updater_rt("1", &rt, err, sizeof(err)), 0);
	EXPECT_EQ(rt, 1);
	EXPECT_STREQ(err, "");
	EXPECT_EQ(fc__config_parse_updater_rt("yes", &rt, err, sizeof(err)), 1);
	EXPECT_EQ(rt, 1);
	EXPECT_NE(std::string(err).find("FASTCLOCK_UPDATER_RT='yes'"), std::string::npos);
}

TEST(Config, bad_values_are_named_and_replaced_by_defaults)
{
	fc_config c;
	char err[160];
	EXPECT_EQ(fc__config_parse("TSC", "0", &c, err, sizeof(err)), 2);
	EXPECT_EQ(c.backend, 0);
	EXPECT_EQ(c.period_ns, FC_DEFAULT_PERIOD_NS);
	EXPECT_NE(std::string(err).find("FASTCLOCK_SOURCE='TSC'"), std::string::npos) << err;
	EXPECT_NE(std::string(err).find("FASTCLOCK_PERIOD_US='0'"), std::string::npos) << err;
	for (const char *bad : {"-1", "1000001", "12ms", " 5", "99999999999999999999999", "0x10"}) {
		EXPECT_EQ(fc__config_parse(nullptr, bad, &c, err, sizeof(err)), 1) << bad;
		EXPECT_EQ(c.period_ns, FC_DEFAULT_PERIOD_NS) << bad;
	}
}

TEST(Config, error_text_fits_a_tiny_buffer)
{
	fc_config c;
	char err[8];
	EXPECT_EQ(fc__config_parse("nonsense-value", "x", &c, err, sizeof(err)), 2);
	EXPECT_LT(strlen(err), sizeof(err));
}

TEST(Ntp, rules_for_sync_status)
{
	fc_ntp n;
	EXPECT_EQ(fc__ntp_classify(-1, 0, 0, 0, &n), FC_SYNC_UNKNOWN);
	EXPECT_EQ(n.maxerror_ns, 0);
	// Undisciplined kernel: STA_UNSYNC and maxerror at its 16 s reset value (this machine's state).
	EXPECT_EQ(fc__ntp_classify(TIME_ERROR, STA_UNSYNC, 16000000, 16000000, &n), FC_SYNC_FREE_RUNNING);
	// chrony without rtcsync: STA_UNSYNC stays set, but maxerror is meaningful.
	EXPECT_EQ(fc__ntp_classify(TIME_ERROR, STA_UNSYNC, 1500, 100, &n), FC_SYNC_SYNCHRONIZED);
	EXPECT_EQ(n.maxerror_ns, 1500000);
	// ntpd/chrony with STA_PLL and a small maxerror.
	EXPECT_EQ(fc__ntp_classify(TIME_OK, STA_PLL, 20000, 50, &n), FC_SYNC_SYNCHRONIZED);
	EXPECT_EQ(n.esterror_ns, 50000);
	// systemd-timesyncd right after a sync: maxerror 0 (documented as optimistic).
	EXPECT_EQ(fc__ntp_classify(TIME_OK, 0, 0, 0, &n), FC_SYNC_SYNCHRONIZED);
}

} // namespace

// The async-signal-safe string builder the slow path's messages use (src/str.c).
TEST(Str, cat_appends_truncates_and_terminates)
{
	char b[12] = "ab";
	fc__str_cat(b, sizeof(b), "cd", "ef", (const char *)0);
	EXPECT_STREQ(b, "abcdef");
	fc__str_cat(b, sizeof(b), "0123456789", (const char *)0);
	EXPECT_STREQ(b, "abcdef01234"); // 11 characters and the terminator
	char u[4] = {'x', 'y', 'z', 'w'}; // not terminated: starts over
	fc__str_cat(u, sizeof(u), "q", (const char *)0);
	EXPECT_STREQ(u, "q");
	char z[1] = {'x'};
	fc__str_cat(z, 0, "q", (const char *)0); // size 0: untouched
	EXPECT_EQ(z[0], 'x');
}
