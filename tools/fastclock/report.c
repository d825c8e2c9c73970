/*
 * fastclock report RESULT.json... [-o DIR] — render bench or check JSON with Python (matplotlib, jsonschema).
 *
 * Nothing of the build is compiled in, so an installed prefix or an unpacked package stands alone.
 * The interpreter: $FASTCLOCK_PYTHON, else the first of python3 (on PATH) and /usr/bin/python3 that imports
 * matplotlib, else python3 (the script then says which packages to install). The script: $FASTCLOCK_REPORT_SCRIPT,
 * else <bindir>/FASTCLOCK_REPORT_REL/fastclock_report.py, <bindir> being this executable's directory (the build
 * tree stages the script at the same relative place: tools/fastclock/CMakeLists.txt).
 * The script's exit status is passed through (0 ok, 1 the rendering failed, 2 a bad input, 3 its output could
 * not be written); any other status is 1. A program started with raised privileges (AT_SECURE: set-user-ID, file
 * capabilities) runs no Python at all (exit 1): its PATH and PYTHONPATH are the caller's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

#ifndef FASTCLOCK_REPORT_REL
#define FASTCLOCK_REPORT_REL "../share/fastclock"
#endif

#define REPORT_INSTALL_HINT                                                                                      \
	"install matplotlib and jsonschema: 'apt install python3-matplotlib python3-jsonschema' (Debian, Ubuntu) " \
	"or 'python3 -m pip install matplotlib jsonschema', or set FASTCLOCK_PYTHON to a Python that has them"

static const char report_help[] =
	"usage: fastclock report RESULT.json... [-o DIR]\n"
	"\n"
	"Render 'fastclock bench --json' runs (several are combined: medians over runs) or one\n"
	"'fastclock check --json' in DIR (default: fastclock-report); each clock's figures are checked first and\n"
	"those that cannot be right are marked (efficiency, cpu, below-counter, rate, unstable):\n"
	"  summary.md/.csv the verdict line and the headline table                  (bench)\n"
	"  cost.png        a dot per clock, cheapest first, vDSO and counter lines  (bench)\n"
	"  deltas.png      consecutive deltas of every clock on one shared axis     (bench)\n"
	"  scaling.png     rate per thread and efficiency, the clocks that matter   (bench)\n"
	"  agreement.png   fastclock - kernel per sample, the worst one marked      (bench, check)\n"
	"  report.json     what each picture shows\n"
	"  report.html     all of the above, one self-contained page\n"
	"\n"
	"  -o, --output DIR   output directory (created if missing)\n"
	"\n"
	"Python: $FASTCLOCK_PYTHON, else the first of python3 and /usr/bin/python3 that has matplotlib;\n"
	"Debian: apt install python3-matplotlib python3-jsonschema.\n"
	"Script: $FASTCLOCK_REPORT_SCRIPT, else <this program's directory>/" FASTCLOCK_REPORT_REL
	"/fastclock_report.py.\n";

/* Does `py -c 'import matplotlib, jsonschema'` succeed? Its output goes nowhere. */
static int python_has_modules(const char *py)
{
	int status;
	pid_t pid = fork();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		/* From /: `python -c` puts the current directory first on sys.path, and root's report run in /tmp
		 * imported nobody's /tmp/matplotlib.py (ran it as root). */
		if (chdir("/") != 0)
			_exit(127);
		execlp(py, py, "-c", "import matplotlib, jsonschema", (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static const char *find_python(void)
{
	static const char *const candidates[] = {"python3", "/usr/bin/python3"};
	const char *e = secure_getenv("FASTCLOCK_PYTHON"); /* never a caller's, were this tool set-user-ID */
	if (e && *e)
		return e;
	for (size_t k = 0; k < sizeof(candidates) / sizeof(candidates[0]); k++)
		if (python_has_modules(candidates[k]))
			return candidates[k];
	return "python3"; /* the script names what to install */
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
			return path;
		}
	}
	return "fastclock_report.py"; /* not found: the caller says so */
}

/* Run the report script with args[2..] (args[0], args[1]: filled here with the Python and the script) and
 * pass its exit status through. */
static int run_script(char **args)
{
	const char *py, *script;
	pid_t pid;
	int status;
	/* Started with raised privileges (set-user-ID, set-group-ID, file capabilities: AT_SECURE), the caller's
	 * environment is not ours to follow: execvp("python3") searched the caller's PATH and ran the caller's
	 * program with our privileges, and even /usr/bin/python3 takes the caller's PYTHONPATH. Refused: never
	 * install this tool that way; run it as yourself (docs/THREATS.md). */
	if (getauxval(AT_SECURE)) {
		cli_error("refusing to run Python in a program started with raised privileges (set-user-ID or file "
			  "capabilities): the caller's PATH and PYTHONPATH would choose what runs; run fastclock as yourself");
		return CLI_EXIT_FAIL;
	}
	py = find_python();
	script = find_script();
	if (access(script, R_OK) != 0)
		return cli_usage_error("cannot read the report script '%s': %s (set FASTCLOCK_REPORT_SCRIPT)", script,
				       strerror(errno));
	args[0] = (char *)py;
	args[1] = (char *)script;
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		cli_error("fork: %s", strerror(errno));
		return CLI_EXIT_FAIL;
	}
	if (pid == 0) {
		execvp(py, args);
		cli_error("cannot run Python '%s': %s (" REPORT_INSTALL_HINT ")", py, strerror(errno));
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

/* A readable regular file, or exit 2 naming it. Returns 0 if it is. */
static int check_input(const char *path)
{
	struct stat sb;
	if (stat(path, &sb) != 0)
		return cli_usage_error("cannot read '%s': %s", path, strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return cli_usage_error("cannot read '%s': not a regular file", path);
	if (access(path, R_OK) != 0)
		return cli_usage_error("cannot read '%s': %s", path, strerror(errno));
	return 0;
}

int cmd_report(int argc, char **argv)
{
	enum { MAX_INPUTS = 64 };
	const char *inputs[MAX_INPUTS], *outdir = "fastclock-report";
	char *args[MAX_INPUTS + 5];
	int n_in = 0, n_args = 2;
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
		} else if (n_in < MAX_INPUTS) {
			inputs[n_in++] = argv[i];
		} else {
			return cli_usage_error("too many inputs (at most %d RESULT.json)", MAX_INPUTS);
		}
	}
	if (!n_in)
		return cli_usage_error("missing RESULT.json (see 'fastclock report --help')");
	for (int k = 0; k < n_in; k++)
		if (check_input(inputs[k]))
			return CLI_EXIT_USAGE;
	for (int k = 0; k < n_in; k++)
		args[n_args++] = (char *)inputs[k];
	args[n_args++] = "-o";
	args[n_args++] = (char *)outdir;
	args[n_args] = NULL;
	return run_script(args);
}

static const char compare_help[] =
	"usage: fastclock compare A.json B.json [--json]\n"
	"\n"
	"Compare two 'fastclock bench --json' runs (two machines, two builds, before and after): per clock the\n"
	"median cost in A and B and B / A, the ratio to the vDSO in each, the single-read p99.99 latency in each,\n"
	"and the figures each run's own checks flag; a verdict line first. Clocks measured in one run only are\n"
	"listed as such. --json prints the same as one JSON document (\"schema\": \"fastclock-compare/1\").\n"
	"Needs Python 3 with jsonschema (the inputs are validated against bench.schema.json first).\n"
	"Exit codes: 0, 1 the comparison failed, 2 bad usage or an input that is not a bench JSON, 3 the output\n"
	"could not be written.\n";

int cmd_compare(int argc, char **argv)
{
	const char *in[2];
	char *args[7];
	int n_in = 0, json = 0, n_args = 2;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(compare_help, stdout);
			return CLI_EXIT_OK;
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			return cli_usage_error("unknown option '%s' (see 'fastclock compare --help')", argv[i]);
		} else if (n_in < 2) {
			in[n_in++] = argv[i];
		} else {
			return cli_usage_error("unexpected argument '%s' (two runs: A.json B.json)", argv[i]);
		}
	}
	if (n_in != 2)
		return cli_usage_error("compare needs two runs: A.json B.json (see 'fastclock compare --help')");
	for (int k = 0; k < 2; k++)
		if (check_input(in[k]))
			return CLI_EXIT_USAGE;
	args[n_args++] = "--compare";
	args[n_args++] = (char *)in[0];
	args[n_args++] = (char *)in[1];
	if (json)
		args[n_args++] = "--json";
	args[n_args] = NULL;
	return run_script(args);
}
