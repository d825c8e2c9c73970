// Configuration parsing and the NTP-state rules: pure functions.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <initializer_list>
#include <string>
#include <sys/timex.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

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

// The environment is read in one pass over environ (src/init.c env_scan), as getenv reads it: a whole name
// followed by '=', the first definition of a name wins, and a name that begins another (FASTCLOCK_UPDATER,
// FASTCLOCK_UPDATER_RT) or a longer one (FASTCLOCK_PERIOD_USX) is not taken for it. fc_probe config-error TEXT
// exits 0 only if fc_status().config_error contains TEXT; execve gives it an environment setenv could not
// (a name defined twice).
static int probe_with_env(const char *want, std::initializer_list<const char *> env)
{
	std::vector<char *> envp;
	for (const char *e : env)
		envp.push_back(const_cast<char *>(e));
	envp.push_back(nullptr);
	const pid_t pid = fork();
	if (pid == 0) {
		char *argv[] = {const_cast<char *>(FC_PROBE), const_cast<char *>("config-error"), const_cast<char *>(want),
				nullptr};
		const int devnull = open("/dev/null", O_WRONLY);
		dup2(devnull, 1);
		dup2(devnull, 2);
		execve(FC_PROBE, argv, envp.data());
		_exit(127);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

TEST(ConfigEnv, the_first_definition_of_a_name_wins_and_only_whole_names_match)
{
	const std::initializer_list<const char *> env = {"PATH=/usr/bin", "FASTCLOCK_PERIOD_USX=-7", "FASTCLOCK_PERIOD_U=-8",
							  "FASTCLOCK_PERIOD_US=-5", "FASTCLOCK_PERIOD_US=250",
							  "FASTCLOCK_UPDATER_RT=yes", "FASTCLOCK_UPDATER=maybe", "FASTCLOCK_SOURCE"};
	EXPECT_EQ(probe_with_env("FASTCLOCK_PERIOD_US='-5'", env), 0);
	EXPECT_EQ(probe_with_env("FASTCLOCK_UPDATER_RT='yes'", env), 0);
	EXPECT_EQ(probe_with_env("FASTCLOCK_UPDATER='maybe'", env), 0);
	// what must not be there: the longer and shorter names' values, the second definition
	EXPECT_NE(probe_with_env("'-7'", env), 0);
	EXPECT_NE(probe_with_env("'-8'", env), 0);
	EXPECT_NE(probe_with_env("'250'", env), 0);
	// and a clean environment gives no error at all (the probe itself works: empty TEXT is always contained)
	EXPECT_EQ(probe_with_env("", {"PATH=/usr/bin"}), 0);
	EXPECT_NE(probe_with_env("FASTCLOCK", {"PATH=/usr/bin"}), 0);
}
