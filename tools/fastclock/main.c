/*
 * fastclock — survey, diagnose and check every clock on this machine.
 *
 *   fastclock info                 the machine's clocks: clocksource, TSC flags, VM, vDSO, NTP, fastclock
 *   fastclock bench                cost, resolution, staleness, deltas, thread scaling of every clock
 *   fastclock check [--duration S] fastclock against the kernel: agreement, monotonicity, causality
 *   fastclock report RESULT.json   PNG plots and one HTML page (Python: tools/report/fastclock_report.py)
 *
 * Documentation: docs/cli.md. Exit codes: 0 ok, 1 a problem found, 2 bad usage, 3 output not written,
 * 130 interrupted. Owns the dispatch and the final check of standard output; calls the commands (cli.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <fastclock.h>

#include "cli.h"

static const char usage[] =
	"usage: fastclock <command> [options]\n"
	"\n"
	"Survey, diagnose and check every clock on this machine (fastclock " FASTCLOCK_TOOL_VERSION ").\n"
	"\n"
	"commands:\n"
	"  info                     clocksource, TSC flags, VM, vDSO per clock id, NTP, fastclock backend,\n"
	"                           and a recommendation (< 1 s)\n"
	"  bench                    cost, resolution, staleness, deltas and thread scaling of every clock\n"
	"  check [--duration S]     run fastclock against the kernel for S seconds (default 5); exit 1 on any\n"
	"                           violation\n"
	"  report RESULT.json...    render bench/check JSON: a verdict, a table, PNGs and one HTML page\n"
	"  compare A.json B.json    two bench runs side by side (two machines, two builds): cost, latency, ratios\n"
	"  monitor                  one JSON line per interval: drift against the kernel, the UTC bound, events\n"
	"\n"
	"`fastclock help <command>` or `fastclock <command> --help` describes each command; `man fastclock`\n"
	"has them all, with what each figure means.\n"
	"Exit codes: 0 ok, 1 problem found, 2 bad usage, 3 output could not be written, 130 interrupted.\n";

static int run(int argc, char **argv)
{
	static char help_arg[] = "--help";
	const char *cmd;
	char *help_argv[4];
	if (argc < 2)
		return cli_usage_error("missing command (info, bench, check, report, compare, monitor; see 'fastclock --help')");
	cmd = argv[1];
	if (!strcmp(cmd, "help") && argc == 3) { /* fastclock help CMD = fastclock CMD --help */
		help_argv[0] = argv[0];
		help_argv[1] = argv[2];
		help_argv[2] = help_arg;
		help_argv[3] = NULL;
		cmd = argv[2];
		argc = 3;
		argv = help_argv;
	} else if (!strcmp(cmd, "help") && argc > 3) {
		return cli_usage_error("help takes one command (info, bench, check, report, compare, monitor)");
	}
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		fputs(usage, stdout);
		return CLI_EXIT_OK;
	}
	if (!strcmp(cmd, "--version")) {
		if (argc > 2)
			return cli_usage_error("--version takes no argument, got '%s' (usage: fastclock --version)", argv[2]);
		printf("fastclock %s (library %d.%d.%d)\n", FASTCLOCK_TOOL_VERSION, FASTCLOCK_VERSION_MAJOR,
		       FASTCLOCK_VERSION_MINOR, FASTCLOCK_VERSION_PATCH);
		return CLI_EXIT_OK;
	}
	cli_set_command(cmd);
	if (!strcmp(cmd, "info"))
		return cmd_info(argc - 1, argv + 1);
	if (!strcmp(cmd, "bench"))
		return cmd_bench(argc - 1, argv + 1);
	if (!strcmp(cmd, "check"))
		return cmd_check(argc - 1, argv + 1);
	if (!strcmp(cmd, "report"))
		return cmd_report(argc - 1, argv + 1);
	if (!strcmp(cmd, "compare"))
		return cmd_compare(argc - 1, argv + 1);
	if (!strcmp(cmd, "monitor"))
		return cmd_monitor(argc - 1, argv + 1);
	cli_set_command(NULL);
	if (cmd[0] == '-')
		return cli_usage_error("unknown option '%s' (try 'fastclock --help')", cmd);
	return cli_usage_error("unknown command '%s' (commands: info, bench, check, report, compare, monitor)", cmd);
}

int main(int argc, char **argv)
{
	/* A closed standard output is found now, not after a 20 s run (and no file opened later takes fd 1). */
	if (fcntl(STDOUT_FILENO, F_GETFD) < 0 && errno == EBADF) {
		cli_error("cannot write to standard output: %s", strerror(EBADF));
		return CLI_EXIT_OUTPUT;
	}
	return cli_finish_output(run(argc, argv));
}
