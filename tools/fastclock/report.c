/*
 * fastclock report RESULT.json [-o DIR] — render a bench or check JSON with Python (matplotlib, pandas).
 *
 * The interpreter: $FASTCLOCK_PYTHON, else <source>/.venv/bin/python (scripts/setup.sh creates it), else
 * python3 on PATH. The script: $FASTCLOCK_REPORT_SCRIPT, else the installed one, <bindir>/FASTCLOCK_REPORT_REL/
 * fastclock_report.py (<bindir>: this executable's directory, so an installed prefix stands alone), else
 * <source>/tools/report/fastclock_report.py (a build tree). <source> is compiled in (FASTCLOCK_SOURCE_DIR).
 * The script's exit status is passed through (0 ok, 1 the rendering failed, 2 a bad input, 3 its output could
 * not be written); any other status is 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

#ifndef FASTCLOCK_SOURCE_DIR
#define FASTCLOCK_SOURCE_DIR "."
#endif
#ifndef FASTCLOCK_REPORT_REL
#define FASTCLOCK_REPORT_REL "../share/fastclock"
#endif

static const char report_help[] =
	"usage: fastclock report RESULT.json [-o DIR]\n"
	"\n"
	"Render the JSON of 'fastclock bench --json' or 'fastclock check --json' as PNG files and one\n"
	"self-contained HTML page (images embedded) in DIR (default: fastclock-report):\n"
	"  cost.png        cost per call, log scale, with the p25..p75 spread      (bench)\n"
	"  deltas.png      histogram of consecutive deltas, one panel per clock    (bench)\n"
	"  scaling.png     calls per second against threads, per clock             (bench)\n"
	"  agreement.png   fastclock - kernel over time, mono and real             (bench, check)\n"
	"  report.html     all of the above and the tables\n"
	"\n"
	"  -o, --output DIR   output directory (created if missing)\n"
	"\n"
	"Python: $FASTCLOCK_PYTHON, else " FASTCLOCK_SOURCE_DIR "/.venv/bin/python, else python3.\n"
	"Script: $FASTCLOCK_REPORT_SCRIPT, else <this program's directory>/" FASTCLOCK_REPORT_REL
	"/fastclock_report.py\n(installed), else " FASTCLOCK_SOURCE_DIR "/tools/report/fastclock_report.py.\n";

static const char *find_python(void)
{
	static char venv[4096];
	const char *e = secure_getenv("FASTCLOCK_PYTHON"); /* never a caller's, were this tool set-user-ID */
	if (e && *e)
		return e;
	snprintf(venv, sizeof(venv), "%s/.venv/bin/python", FASTCLOCK_SOURCE_DIR);
	if (access(venv, X_OK) == 0)
		return venv;
	return "python3";
}

static const char *find_script(void)
{
	static char path[4096 + sizeof(FASTCLOCK_REPORT_REL) + sizeof("/fastclock_report.py")];
	const char *e = secure_getenv("FASTCLOCK_REPORT_SCRIPT");
	char exe[4096];
	ssize_t n;
	if (e && *e)
		return e;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(path, sizeof(path), "%s/%s/fastclock_report.py", exe, FASTCLOCK_REPORT_REL);
			if (access(path, R_OK) == 0)
				return path;
		}
	}
	snprintf(path, sizeof(path), "%s/tools/report/fastclock_report.py", FASTCLOCK_SOURCE_DIR);
	return path;
}

int cmd_report(int argc, char **argv)
{
	const char *input = NULL, *outdir = "fastclock-report", *py, *script;
	struct stat sb;
	pid_t pid;
	int status;
	for (int i = 1; i < argc; i++) {
		const char *v;
		int m;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(report_help, stdout);
			return CLI_EXIT_OK;
		} else if ((m = cli_opt(argc, argv, &i, "-o", &v)) != 0 ||
			   (m = cli_opt(argc, argv, &i, "--output", &v)) != 0) {
			if (m < 0)
				return CLI_EXIT_USAGE;
			if (!*v)
				return cli_usage_error("empty output directory");
			outdir = v;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			return cli_usage_error("unknown option '%s' (see 'fastclock report --help')", argv[i]);
		} else if (!input) {
			input = argv[i];
		} else {
			return cli_usage_error("unexpected argument '%s' (one RESULT.json only)", argv[i]);
		}
	}
	if (!input)
		return cli_usage_error("missing RESULT.json (see 'fastclock report --help')");
	if (stat(input, &sb) != 0)
		return cli_usage_error("cannot read '%s': %s", input, strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return cli_usage_error("cannot read '%s': not a regular file", input);
	if (access(input, R_OK) != 0)
		return cli_usage_error("cannot read '%s': %s", input, strerror(errno));
	py = find_python();
	script = find_script();
	if (access(script, R_OK) != 0)
		return cli_usage_error("cannot read the report script '%s': %s (set FASTCLOCK_REPORT_SCRIPT)", script,
				       strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		cli_error("fork: %s", strerror(errno));
		return CLI_EXIT_FAIL;
	}
	if (pid == 0) {
		execlp(py, py, script, input, "-o", outdir, (char *)NULL);
		cli_error("cannot run Python '%s': %s (set FASTCLOCK_PYTHON, or run scripts/setup.sh)", py,
			  strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			cli_error("waitpid: %s", strerror(errno));
			return CLI_EXIT_FAIL;
		}
	if (WIFEXITED(status)) {
		int rc = WEXITSTATUS(status);
		if (rc == 127)
			return CLI_EXIT_FAIL;
		return rc == CLI_EXIT_OK || rc == CLI_EXIT_USAGE || rc == CLI_EXIT_OUTPUT ? rc : CLI_EXIT_FAIL;
	}
	cli_error("the report script was killed by signal %d", WTERMSIG(status));
	return CLI_EXIT_FAIL;
}
