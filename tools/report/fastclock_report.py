#!/usr/bin/env python3
"""Render `fastclock bench --json` runs or a `fastclock check --json` as PNG pictures, a headline table and one
self-contained HTML page.

Usage: fastclock_report.py RESULT.json [RESULT.json ...] [-o DIR]      (normally run through `fastclock report`)
       fastclock_report.py --compare A.json B.json [--json]           (`fastclock compare`)

Several bench runs of the same clocks are combined first: per clock the median over runs of each run's median
cost, p25, p75 and ratios, the lowest and highest run median, the median of each thread point; the delta
histograms summed; the agreement series one after the other.

Every figure is checked before it is drawn (`figure_checks`); a figure that cannot be right is marked in the
table (column `check`) and in the pictures, and counted in the verdict line:
  efficiency    a thread point more than 10 % above perfect scaling (the one-thread rate was measured low)
  cpu           a thread point whose threads got less than 0.9 of a CPU each (the machine was busy)
  below-counter a clock that reads the counter costs less than 0.95 x that counter read
  rate          one thread's calls/s disagrees with the cost per call by more than 2x either way
  unstable      the runs' medians differ by more than 1.5x, or p75 / p25 > 1.5 (a bimodal cost)
efficiency and rate are judged only where the threads had their CPUs (cpu share >= 0.9): a busy machine is
'cpu' alone. A flag that most clocks carry is a property of the run, said once in the verdict.

Writes into DIR (default: fastclock-report):
  bench:  cost.png, deltas.png, scaling.png, agreement.png, summary.md, summary.csv, report.json, report.html
  check:  agreement.png, report.json, report.html
Image sizes (pixels, at 100 dpi): cost.png and deltas.png 1200 x (140 + 22 x clocks); scaling.png and
agreement.png 1200 x 600. report.json says what each picture shows (the order of the clocks, the reference
lines, the clocks left out and why, the worst agreement sample), so a test can check the pictures' content.
report.html embeds every image (base64 data: URIs) and the tables: it can be mailed alone.
Needs matplotlib and jsonschema (Debian: apt install python3-matplotlib python3-jsonschema).
Exit status: 0 rendered; 1 rendering failed (or matplotlib / jsonschema missing); 2 an input is unreadable, not
JSON, does not match docs/bench.schema.json, or the output directory cannot be made; 3 the list of files
written could not be printed (standard output closed or full).
"""
import argparse
import atexit
import base64
import csv
import errno
import html
import io
import json
import math
import os
import shutil
import stat
import statistics
import sys


def private_mpl_dir():
    """A matplotlib cache directory no other user can have made, can write or can point elsewhere:
    $TMPDIR/fastclock-mpl-<euid>, else a fresh one there, opened as the output directory is (open_output_dir: no
    other user's link on its path, ours, writable by no one else) and 0700; matplotlib is given procfs's link to
    that descriptor (/proc/self/fd/N, the directory judged, whatever is at its path later). A fixed shared name
    ($TMPDIR/fastclock-mpl) let any user make it first: matplotlib read their matplotlibrc, and wrote its font
    cache through their symbolic link onto any file of ours; a directory judged by its path and given to
    matplotlib by that path could be swapped between the two (a link on the path repointed)."""
    tmp = os.environ.get("TMPDIR", "/tmp")
    fd = judged_private_dir(os.path.join(tmp, f"fastclock-mpl-{os.geteuid()}"))
    fresh = None
    if fd is None:
        fresh = f"fastclock-mpl-{os.getpid()}-{base64.b32encode(os.urandom(10)).decode('ascii').lower()}"
        fd = judged_private_dir(os.path.join(tmp, fresh), fresh=True)
    if fd is None:
        print(f"fastclock: report: no private directory for matplotlib's cache in {tmp} (set TMPDIR to a directory "
              "of your own)", file=sys.stderr)
        sys.exit(1)
    os.set_inheritable(fd, False)
    if fresh:  # removed at exit relative to the directory above it (rmtree with dir_fd follows no link)
        up = os.open("..", DIR_FLAGS, dir_fd=fd)
        atexit.register(remove_at, up, fresh)
    via = f"/proc/self/fd/{fd}"
    try:
        same = (os.stat(via).st_dev, os.stat(via).st_ino) == (os.fstat(fd).st_dev, os.fstat(fd).st_ino)
    except OSError:
        same = False
    # without procfs: its real path, judged (no link on it, every directory on it ours or root's, no other user
    # may rename an entry on it): the name then leads nowhere else
    return via if same else (os.path.realpath(os.path.join(tmp, fresh or f"fastclock-mpl-{os.geteuid()}")))


def remove_at(dfd, name):
    """rmtree of name in the directory open at dfd (never by a path; Python < 3.11 has no dir_fd there: left)."""
    try:
        shutil.rmtree(name, ignore_errors=True, dir_fd=dfd)
    except TypeError:
        pass
    os.close(dfd)


def judged_private_dir(path, fresh=False):
    """The descriptor of the directory at path (made 0700 where missing; with fresh, it must be made now), judged as
    the output directory is and private (0700); None where it is not."""
    try:
        fd = open_output_dir(path, 0o700, must_make=fresh)
    except (Refused, OSError):
        return None
    if os.fstat(fd).st_mode & 0o077:
        os.close(fd)
        return None
    return fd


def import_matplotlib_away_from_cwd():
    """matplotlib reads a matplotlibrc in the current directory before any other (its search order, at import): in a
    directory others may write (root's report run in /tmp) theirs restyled our pictures (white on white, other
    scales). Imported from / (root's), then back to where the paths given are relative to."""
    try:
        here = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        here = None
    try:
        if here is not None:
            os.chdir("/")
        import matplotlib  # noqa: F401
    except ImportError:
        fail(f"matplotlib is not installed for {sys.executable}: {INSTALL_HINT}", 1)
    finally:
        if here is not None:
            os.fchdir(here)
            os.close(here)


class Refused(Exception):
    """The output directory is not ours alone to write into: str() says why (a sentence)."""


# Symbolic links followed while opening the output directory, at most (the kernel's own limit, MAXSYMLINKS).
MAX_LINKS = 40
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def others_may_write(st):
    return st.st_mode & 0o002 or (st.st_mode & 0o020 and not own_private_group(st.st_gid))


def open_output_dir(out, mode=0o755, must_make=False):
    """The output directory, opened once (made where it is missing) and judged on that descriptor: every file is
    then created relative to it, so what was judged is what is written into. The path is walked one component at a
    time from "/" (or the current directory), each opened with O_NOFOLLOW relative to the one before: a symbolic
    link on the way is followed only if it is ours or root's (its target read from the link judged, walked the
    same way). Checked once and written through the path later, another user's link in -o's path pointed into
    root's directory while checked and elsewhere while written (root's file overwritten through a link named
    summary.md). Returns the descriptor, or raises Refused (not ours) or OSError (cannot be opened or made)."""
    me = os.geteuid()
    todo = [c for c in out.split("/") if c not in ("", ".")][::-1]  # a stack: the next component last
    fd = os.open("/" if out.startswith("/") else ".", DIR_FLAGS)
    links = 0
    try:
        while todo:
            name = todo.pop()
            last = not todo
            try:
                if last and must_make:  # a fresh directory: made now, by us, or refused
                    os.mkdir(name, mode, dir_fd=fd)
                nfd = os.open(name, DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                os.mkdir(name, mode, dir_fd=fd)  # a link at the name is never followed by mkdir
                nfd = os.open(name, DIR_FLAGS, dir_fd=fd)
            except OSError as e:
                if e.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                # a symbolic link (or not a directory at all): looked at without following it, then followed
                # only if ours or root's, by the target read from that very link
                lfd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
                try:
                    lst = os.fstat(lfd)
                    if not stat.S_ISLNK(lst.st_mode):
                        raise NotADirectoryError(errno.ENOTDIR, "it exists and is not a directory" if last else
                                                 f"'{name}' on its path is not a directory")
                    if lst.st_uid not in (0, me):
                        raise Refused(f"'{name}' on its path is a symbolic link of uid {lst.st_uid}'s")
                    links += 1
                    if links > MAX_LINKS:
                        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
                    target = os.readlink("", dir_fd=lfd)
                finally:
                    os.close(lfd)
                todo += [c for c in target.split("/") if c not in ("", ".")][::-1]
                if target.startswith("/"):
                    os.close(fd)
                    fd = os.open("/", DIR_FLAGS)
                continue
            os.close(fd)
            fd = nfd
        why = output_dir_refusal(fd)
        if why:
            raise Refused(why)
        return fd
    except BaseException:
        os.close(fd)
        raise


def output_dir_refusal(fd):
    """Why the directory open at fd is not ours alone to write into (a sentence), or None. The report writes fixed
    names there (summary.md, report.html, ...): in another user's directory, or one others may write, their link
    'summary.md -> /root/.bashrc' had root's report (run in /tmp, the default -o fastclock-report made by them
    first) overwrite root's file with the summary."""
    st = os.fstat(fd)
    me = os.geteuid()
    if st.st_uid != me:
        return f"it is uid {st.st_uid}'s (mode {stat.S_IMODE(st.st_mode):o})"
    if others_may_write(st):
        return f"other users may write it (group {st.st_gid}, mode {stat.S_IMODE(st.st_mode):o})"
    # ...and no one else can have moved it where it is (and away again): every directory above it, walked up by
    # ".." from the descriptor (its real place, not a path looked up again), is ours or root's, writable by no one
    # else but where the sticky bit keeps them from renaming our entry (/tmp)
    cur, up_fd = st, os.open("..", DIR_FLAGS, dir_fd=fd)
    try:
        for _ in range(4096):
            up = os.fstat(up_fd)
            if (up.st_dev, up.st_ino) == (cur.st_dev, cur.st_ino):
                return None  # "/": its own parent
            if up.st_uid not in (0, me) or (others_may_write(up) and not up.st_mode & stat.S_ISVTX):
                return (f"the directory above it, {dir_name(up_fd)}, lets another user replace it (uid {up.st_uid}, "
                        f"mode {stat.S_IMODE(up.st_mode):o})")
            nxt = os.open("..", DIR_FLAGS, dir_fd=up_fd)
            os.close(up_fd)
            cur, up_fd = up, nxt
        return "it is nested deeper than 4096 directories"
    finally:
        os.close(up_fd)


def dir_name(fd):
    """A directory's name for a message (procfs's link to the descriptor; the descriptor if there is none)."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return f"(descriptor {fd})"


# The output directory's descriptor (main): every file the report writes is created relative to it.
OUT_FD = None


def out_open(name, mode="w", **kw):
    """A file object for `name` in the output directory: created relative to its descriptor, never through a
    symbolic link (O_NOFOLLOW), only a regular file of ours (truncated)."""
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o644, dir_fd=OUT_FD)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            raise OSError(errno.EPERM, f"{name} is not a regular file of ours")
        os.set_blocking(fd, True)
        os.ftruncate(fd, 0)
        return os.fdopen(fd, mode, **kw)
    except BaseException:
        os.close(fd)
        raise


def out_read(name):
    """The bytes of `name` in the output directory (a picture written there), read relative to its descriptor."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=OUT_FD)
    with os.fdopen(fd, "rb") as f:
        return f.read()


def own_private_group(gid):
    """Is gid the user's own private group (named as the user, no other member)? Its write bit is then the user's."""
    import grp
    import pwd
    try:
        return grp.getgrgid(gid).gr_name == pwd.getpwuid(os.geteuid()).pw_name and not grp.getgrgid(gid).gr_mem
    except KeyError:
        return False


# Headless and no writes to $HOME: a private matplotlib cache when the default one is not writable.
os.environ.setdefault("MPLBACKEND", "Agg")
if not os.access(os.path.expanduser("~"), os.W_OK):
    os.environ.setdefault("MPLCONFIGDIR", private_mpl_dir())

DPI = 100
WIDTH_PX = 1200
ROWS_BASE_PX = 140
ROW_PX = 22
PLAIN_HEIGHT_PX = 600
INSTALL_HINT = ("install them with 'apt install python3-matplotlib python3-jsonschema' (Debian, Ubuntu) or "
                "'python3 -m pip install matplotlib jsonschema', or set FASTCLOCK_PYTHON to a Python that has them")
# The clocks a scaling picture shows, when measured (the question: does the clock scale with cores?).
SCALING_CLOCKS = ["fc_mono_ns", "fc_mono_ns_relaxed", "fc_real_ns", "fc_mono_coarse_ns",
                  "clock_gettime.MONOTONIC", "clock_gettime.REALTIME", "clock_gettime.MONOTONIC_COARSE",
                  "rdtsc", "std::chrono::steady_clock"]
VDSO_REF = "clock_gettime.MONOTONIC"
GROUP_COLORS = {"libc": "#8c8c8c", "clock_gettime": "#4c72b0", "counter": "#55a868", "std::chrono": "#c44e52",
                "fastclock": "#dd8452", "syscall": "#8172b3", "absl": "#937860", "reference": "#bbbbbb"}


COMMAND = "report"  # the fastclock command this run serves (report, or compare): every error message names it


def fail(msg, code):
    print(f"fastclock: {COMMAND}: {msg}", file=sys.stderr)
    sys.exit(code)


def expected_sizes(doc):
    """The PNG files a document renders to and their (width, height) in pixels."""
    if doc.get("command") == "check":
        return {"agreement.png": (WIDTH_PX, PLAIN_HEIGHT_PX)}
    h = ROWS_BASE_PX + ROW_PX * max(1, len(doc.get("clocks", [])))
    return {"cost.png": (WIDTH_PX, h), "deltas.png": (WIDTH_PX, h), "scaling.png": (WIDTH_PX, PLAIN_HEIGHT_PX),
            "agreement.png": (WIDTH_PX, PLAIN_HEIGHT_PX)}


def _schema_path():
    """$FASTCLOCK_SCHEMA; else next to this script (an installed prefix: share/fastclock/); else the source
    tree's docs/."""
    here = os.path.dirname(os.path.abspath(__file__))
    for p in (os.environ.get("FASTCLOCK_SCHEMA"), os.path.join(here, "bench.schema.json"),
              os.path.join(here, "..", "..", "docs", "bench.schema.json")):
        if p and os.path.exists(p):
            return p
    return os.environ.get("FASTCLOCK_SCHEMA") or os.path.join(here, "bench.schema.json")


SCHEMA = _schema_path()


def validate(path, doc):
    """Check doc against docs/bench.schema.json (the definition its `command` names) before anything reads
    it; exit 2 naming the first problem and where it is."""
    try:
        import jsonschema
    except ImportError:
        fail(f"jsonschema is not installed for {sys.executable}: {INSTALL_HINT}", 1)
    try:
        with open(SCHEMA, encoding="utf-8") as f:
            schema = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"cannot read the schema '{SCHEMA}': {e} (set FASTCLOCK_SCHEMA)", 1)
    if not isinstance(doc, dict) or doc.get("command") not in ("bench", "check"):
        got = doc.get("command") if isinstance(doc, dict) else type(doc).__name__
        fail(f"'{path}' is not the JSON of 'fastclock bench --json' or 'fastclock check --json' "
             f"(command: {got!r})", 2)
    sub = dict(schema["$defs"][doc["command"]], **{"$defs": schema["$defs"]})
    errs = sorted(jsonschema.Draft202012Validator(sub).iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errs:
        e = errs[0]
        where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
        more = f" (and {len(errs) - 1} more)" if len(errs) > 1 else ""
        fail(f"'{path}' does not match bench.schema.json at {where}: {e.message[:200]}{more}", 2)


def open_input(path):
    """A file object for the input at path, judged on the descriptor it is read through: looked at before anything
    opens it (O_PATH: no FIFO waited for, no device's driver run), kept only if a regular file, then opened as that
    very inode (procfs's link to the descriptor; without procfs by the path again, kept only if the same inode).
    `fastclock report` checks it by its path before this script runs: another user's link on that path, swapped to
    a FIFO in between, held the report in its read for ever (or fed it their bytes)."""
    pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        st = os.fstat(pfd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        try:
            fd = os.open(f"/proc/self/fd/{pfd}", os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
        again = os.fstat(fd)
        if (again.st_dev, again.st_ino) != (st.st_dev, st.st_ino) or not stat.S_ISREG(again.st_mode):
            os.close(fd)
            raise OSError(errno.EINVAL, "replaced as it was opened")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "r", encoding="utf-8")
    finally:
        os.close(pfd)


def load(path):
    try:
        with open_input(path) as f:
            doc = json.load(f)
    except OSError as e:
        fail(f"cannot read '{path}': {e.strerror}", 2)
    except (ValueError, UnicodeDecodeError) as e:
        # Python's "Expecting value: line 1 column 1 (char 0)" says nothing to whoever gave a text file
        at = f" (line {e.lineno})" if getattr(e, "lineno", 1) > 1 else ""
        fail(f"'{path}' is not JSON{at}: give the file that 'fastclock bench --json' or "
             f"'fastclock check --json' wrote, not their text output", 2)
    validate(path, doc)
    return doc


def med(xs):
    xs = [x for x in xs if x is not None and x == x]
    return statistics.median(xs) if xs else None


def combine(paths, docs):
    """One bench document from several runs of the same clocks (see the module's text); runs_min/max_ns kept."""
    if len(docs) == 1:
        d = docs[0]
        for c in d.get("clocks", []):
            m = c.get("cost", {}).get("median_ns")
            c["cost"]["runs_min_ns"] = c["cost"]["runs_max_ns"] = m
        d["runs"] = 1
        return d
    if any(d["command"] != "bench" for d in docs):
        fail("several inputs are combined only when all are 'fastclock bench --json' runs", 2)
    names = [c["name"] for c in docs[0]["clocks"]]
    for p, d in zip(paths, docs):
        if [c["name"] for c in d["clocks"]] != names:
            fail(f"'{p}' measured other clocks than '{paths[0]}': report combines runs of the same clocks; "
                 f"to set two different runs side by side use 'fastclock compare {paths[0]} {p}'", 2)
    out = json.loads(json.dumps(docs[0]))
    out["runs"] = len(docs)
    out["interrupted"] = any(d.get("interrupted") for d in docs)
    for k, c in enumerate(out["clocks"]):
        cs = [d["clocks"][k] for d in docs]
        costs = [x.get("cost", {}) for x in cs]
        for key in ("median_ns", "p25_ns", "p75_ns", "x_vdso", "x_counter", "over_counter_ns"):
            c["cost"][key] = med([x.get(key) for x in costs])
        meds = [x.get("median_ns") for x in costs if x.get("median_ns") is not None]
        c["cost"]["runs_min_ns"] = min(meds) if meds else None
        c["cost"]["runs_max_ns"] = max(meds) if meds else None
        dl = [x.get("deltas", {}) for x in cs]
        for key in ("p25_ns", "p50_ns", "p75_ns", "p99_ns"):
            c["deltas"][key] = med([x.get(key) for x in dl])
        c["deltas"]["samples"] = sum(x.get("samples") or 0 for x in dl)
        c["deltas"]["backward_steps"] = sum(x.get("backward_steps") or 0 for x in dl)
        zs = [x.get("zero_share") for x in dl if x.get("zero_share") is not None]
        c["deltas"]["zero_share"] = sum(zs) / len(zs) if zs else None
        hs = [x.get("histogram", {}) for x in dl]
        h0 = c["deltas"].get("histogram", {})
        if h0 and all(h.get("edges_ns") == h0.get("edges_ns") for h in hs):
            h0["counts"] = [sum(v) for v in zip(*[h.get("counts", []) for h in hs])]
            h0["zero"] = sum(h.get("zero", 0) or 0 for h in hs)
            h0["negative"] = sum(h.get("negative", 0) or 0 for h in hs)
        lats = [x.get("latency") for x in cs if x.get("latency")]
        if lats:
            c["latency"] = {k: med([x.get(k) for x in lats]) for k in ("p50_ns", "p99_ns", "p99_9_ns", "p99_99_ns")}
            c["latency"]["max_ns"] = max((x.get("max_ns") for x in lats if x.get("max_ns") is not None), default=None)
            c["latency"]["samples"] = sum(x.get("samples") or 0 for x in lats)
        for j, t in enumerate(c.get("threads", [])):
            ps = [x["threads"][j] for x in cs if j < len(x.get("threads", []))]
            for key in ("calls_per_s", "efficiency", "cpu_share"):
                t[key] = med([p.get(key) for p in ps])
    out["after_pause"] = combine_after_pause([d.get("after_pause") for d in docs])
    if out["after_pause"] is None:
        out.pop("after_pause")
    ag = {k: [] for k in ("t_s", "mono_err_ns", "mono_half_ns", "real_err_ns", "real_half_ns")}
    t0 = 0.0
    starts = []
    for d in docs:
        a = d.get("agreement", {})
        ts = a.get("t_s", [])
        starts.append(t0)
        for k in ag:
            ag[k] += [t0 + t for t in ts] if k == "t_s" else a.get(k, [])
        t0 += (max(ts) if ts else 0.0) + 0.5
    ag["samples"] = len(ag["t_s"])
    ag["run_starts_s"] = starts  # where each run's series begins on the common axis (agreement.png)
    out["agreement"] = ag
    return out


def reads_counter(c):
    """A clock whose value comes from a counter read (not a coarse clock or time(): those read memory)."""
    n = c["name"].lower()
    return not ("coarse" in n or n in ("time", "(empty loop)") or c.get("group") in ("reference",)
                or c.get("timeline") == "cputime" or n == "getrusage")


def figure_checks(c):
    """The flags of one clock's figures that cannot be right (module text); a list of short strings."""
    flags = []
    cost = c.get("cost", {})
    th = c.get("threads", [])
    # efficiency and rate judged only where the threads had their CPUs (bench_out.c's had_cpu): a busy machine
    # is 'cpu', said once, not also 'efficiency' and 'rate' on every clock
    ok = lambda s: not (s is not None and s < 0.9)
    s1 = next((t.get("cpu_share") for t in th if t.get("threads") == 1), None)
    if any(ok(s1) and ok(t.get("cpu_share")) and (t.get("efficiency") or 0) > 1.10 for t in th):
        flags.append("efficiency")
    if any(t.get("cpu_share") is not None and t["cpu_share"] < 0.9 for t in th):
        flags.append("cpu")
    xc = cost.get("x_counter")
    if reads_counter(c) and c.get("group") != "counter" and xc is not None and xc < 0.95:
        flags.append("below-counter")
    one = next((t for t in th if t.get("threads") == 1 and t.get("calls_per_s")), None)
    m = cost.get("median_ns")
    if one and m and m > 0 and ok(one.get("cpu_share")):
        r = one["calls_per_s"] * m / 1e9
        if r > 2 or r < 0.5:
            flags.append("rate")
    lo, hi, p25, p75 = cost.get("runs_min_ns"), cost.get("runs_max_ns"), cost.get("p25_ns"), cost.get("p75_ns")
    if (lo and hi and hi / lo > 1.5) or (p25 and p75 and p25 > 0 and p75 / p25 > 1.5):
        flags.append("unstable")
    return flags


def clock_rows(doc):
    rows = []
    for c in doc["clocks"]:
        cost, d = c.get("cost", {}), c.get("deltas", {})
        one = next((t for t in c.get("threads", []) if t.get("threads") == 1), {})
        rows.append({
            "clock": c["name"], "group": c.get("group"),
            "median_ns": cost.get("median_ns"), "p25_ns": cost.get("p25_ns"), "p75_ns": cost.get("p75_ns"),
            "runs_min_ns": cost.get("runs_min_ns"), "runs_max_ns": cost.get("runs_max_ns"),
            "x_vdso": cost.get("x_vdso"), "x_counter": cost.get("x_counter"),
            "mcalls_1thr": None if one.get("calls_per_s") is None else one["calls_per_s"] / 1e6,
            "delta_p50_ns": d.get("p50_ns"), "delta_p99_ns": d.get("p99_ns"),
            "zero_pct": None if d.get("zero_share") is None else 100 * d["zero_share"],
            "lat_p9999_ns": c.get("latency", {}).get("p99_99_ns"), "lat_max_ns": c.get("latency", {}).get("max_ns"),
            "backward": d.get("backward_steps"), "check": " ".join(figure_checks(c)),
        })
    return rows


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):  # 4 significant digits, whole numbers from 10 000 up: never an exponent
        return f"{v:.0f}" if abs(v) >= 1e4 else f"{v:.4g}"
    return str(v)


def cell(r, k):
    """A table cell as a reader sees it (summary.md, report.html): the zero-delta share as share_pct says it,
    never 100 for 99.9996 %; summary.csv keeps the number."""
    v = r.get(k)
    if k == "zero_pct" and v is not None:
        return share_pct(v / 100).rstrip("%")
    return fmt(v)


AFTER_PAUSE_FIGURES = ("p50_ns", "p90_ns", "p99_ns", "vdso_p50_ns", "vdso_p90_ns", "vdso_p99_ns", "x_vdso_p50",
                       "x_vdso_p99", "gap_p50_ns", "vdso_gap_p50_ns")


def combine_after_pause(sections):
    """Reads after a pause over runs: per pause and pair the median over the runs that read it of each figure,
    the reads summed. Runs without the section (older runs) are left out; None when none has it or the runs
    measured other pauses or pairs."""
    secs = [a for a in sections if a]
    if not secs:
        return None
    shape = [(r["pause_ns"], [(c["clock"], c["vdso"]) for c in r["pairs"]]) for r in secs[0]["rows"]]
    if any([(r["pause_ns"], [(c["clock"], c["vdso"]) for c in r["pairs"]]) for r in a["rows"]] != shape
           for a in secs):
        return None
    out = json.loads(json.dumps(secs[0]))
    for i, r in enumerate(out["rows"]):
        for j, c in enumerate(r["pairs"]):
            cs = [a["rows"][i]["pairs"][j] for a in secs if a["rows"][i]["pairs"][j]["samples"]]
            c["samples"] = sum(x["samples"] for x in cs)
            for k in AFTER_PAUSE_FIGURES:
                c[k] = med([x.get(k) for x in cs])
    out["runs"] = len(secs)
    return out


def pause_text(ns):
    if not ns:
        return "0"
    return f"{ns / 1e3:g} us" if ns < 10**6 else f"{ns / 1e6:g} ms" if ns < 10**9 else f"{ns / 1e9:g} s"


def after_pause_clause(doc):
    """The verdict's words on reads after a pause: fc_mono_ns's p50 and p99 over clock_gettime's, lowest to
    highest, over the pauses from 10 us to 100 ms that were measured; None without them."""
    rows = [r for r in (doc.get("after_pause") or {}).get("rows", []) if 10**4 <= r["pause_ns"] <= 10**8]
    xs = [(r["pause_ns"], c["x_vdso_p50"], c["x_vdso_p99"]) for r in rows for c in r["pairs"][:1]
          if c["samples"] and c["x_vdso_p50"] is not None and c["x_vdso_p99"] is not None]
    if not xs:
        return None
    return (f"reads after a pause ({pause_text(xs[0][0])} to {pause_text(xs[-1][0])}): fc_mono_ns p50 at "
            f"{min(x[1] for x in xs):.2f}-{max(x[1] for x in xs):.2f}x clock_gettime's, p99 at "
            f"{min(x[2] for x in xs):.2f}-{max(x[2] for x in xs):.2f}x")


AFTER_PAUSE_COLS = ["pause", "reads", "fc_mono_ns p50", "p90", "p99", "clock_gettime p50", "p90", "p99", "x p50",
                    "x p99", "fc_real_ns x p50, p99", "fc_clock_gettime x p50, p99", "fc_gettimeofday x p50, p99"]


def after_pause_table(doc):
    """The reads-after-a-pause table's rows (cells as text; '-' where not measured), or [] without the section."""
    def f(v, d=0):
        return "-" if v is None else f"{v:.{d}f}"
    out = []
    for r in (doc.get("after_pause") or {}).get("rows", []):
        m = r["pairs"][0]
        out.append([pause_text(r["pause_ns"]), str(m["samples"]), f(m["p50_ns"]), f(m["p90_ns"]), f(m["p99_ns"]),
                    f(m["vdso_p50_ns"]), f(m["vdso_p90_ns"]), f(m["vdso_p99_ns"]), f(m["x_vdso_p50"], 2),
                    f(m["x_vdso_p99"], 2)] +
                   [f"{f(c['x_vdso_p50'], 2)}, {f(c['x_vdso_p99'], 2)}" for c in r["pairs"][1:4]])
    return out


AFTER_PAUSE_TITLE = ("reads after a pause (one read timed alone, interleaved with the vDSO's; ns; x: fastclock / "
                     "vDSO; medians over runs)")


def verdict(doc, rows):
    """One line: fastclock's headline ratio, the runs, and what the figure checks found (flags most clocks carry
    are said once, as a property of the run)."""
    by = {r["clock"]: r for r in rows}
    common = common_flags(rows)
    own = [r["clock"] for r in rows if set(r["check"].split()) - common]
    runs = doc.get("runs", 1)
    parts = []
    fc, vd = by.get("fc_mono_ns"), by.get(VDSO_REF)
    if fc and fc["x_vdso"] is not None and vd and vd["median_ns"]:
        parts.append(f"fc_mono_ns costs {fc['x_vdso']:.2f}x the vDSO's clock_gettime(MONOTONIC) (the median of "
                     f"per-round ratios; medians {fc['median_ns']:.3g} and {vd['median_ns']:.3g} ns)")
    elif fc and fc["median_ns"]:
        parts.append(f"fc_mono_ns costs {fc['median_ns']:.3g} ns")
    if after_pause_clause(doc):
        parts.append(after_pause_clause(doc))
    parts.append(f"{runs} run{'s' if runs != 1 else ''}")
    if common:
        parts.append("every run: " + "; ".join(FLAG_WORDS.get(f, f) for f in sorted(common)) + ": re-run on a quiet "
                     "machine before trusting these figures")
    # beside a flag most clocks carry ('cpu' in nearly every row of the table), "2 of 40 clocks with a suspect
    # figure" read as contradicting the table: the count is of the clocks flagged for something else
    besides = " besides " + ", ".join(f"'{f}'" for f in sorted(common)) if common else ""
    parts.append(f"{len(own)} of {len(rows)} clocks with a suspect figure{besides} (column 'check')" if own else
                 (f"no clock's figure suspect{besides}"))
    if doc.get("interrupted"):
        parts.append("INTERRUPTED")
    return "Verdict: " + "; ".join(parts)


def check_verdict(doc):
    """The check report's first line: PASS or FAIL as `fastclock check` said, with what it rests on."""
    v = doc.get("violations", {})
    worst = doc.get("worst_outside_bracket_ns", {})
    w = max([x for x in worst.values() if isinstance(x, (int, float))] or [0])
    rest = (f"{doc.get('bracketed_reads', 0)} bracketed reads and {doc.get('pingpong_rounds', 0)} ping-pong rounds "
            f"in {doc.get('duration_s', 0):g} s on {doc.get('threads', '?')} threads")
    if doc.get("passed"):
        head = (f"PASS: fastclock agreed with the kernel: no violation in {rest}; worst read {si_ns(w, sign=False)} "
                f"outside the kernel's bracket (allowed: {si_ns(doc.get('slack_ns', 0), sign=False)})")
    else:
        bad = [f"{k} {n}" for k, n in v.items() if k != "total" and n]
        head = f"FAIL: {v.get('total', len(bad))} violations ({', '.join(bad) or 'see the JSON'}) in {rest}"
    if doc.get("interrupted"):
        head += "; INTERRUPTED"
    return "Verdict: " + head


TABLE_COLS = [("clock", "clock"), ("median_ns", "median ns/call"), ("p25_ns", "p25"), ("p75_ns", "p75"),
              ("runs_min_ns", "runs' min"), ("runs_max_ns", "runs' max"), ("x_vdso", "x vDSO"),
              ("x_counter", "x counter"), ("mcalls_1thr", "Mcalls/s 1 thr"), ("delta_p50_ns", "delta p50 ns"),
              ("delta_p99_ns", "delta p99 ns"), ("zero_pct", "zero deltas %"), ("backward", "backward"),
              ("lat_p9999_ns", "1 read p99.99 ns"), ("lat_max_ns", "1 read max ns"),
              ("check", "check")]


def write_summary(doc, rows, out):
    """summary.md (verdict line, then the headline table) and summary.csv (the same table)."""
    lines = [verdict(doc, rows), "",  # where and when, as the pictures' footer says it (the kernel, the date)
             f"Measured by {where_text(doc)}; medians over runs.", "",
             "| " + " | ".join(t for _, t in TABLE_COLS) + " |",
             "|---|" + "---:|" * (len(TABLE_COLS) - 2) + "---|"]
    for r in rows:
        lines.append("| " + " | ".join(f"`{r[k]}`" if k == "clock" else cell(r, k) for k, _ in TABLE_COLS) + " |")
    pauses = after_pause_table(doc)
    if pauses:
        lines += ["", AFTER_PAUSE_TITLE[0].upper() + AFTER_PAUSE_TITLE[1:] + ":", "",
                  "| " + " | ".join(AFTER_PAUSE_COLS) + " |", "|---|" + "---:|" * (len(AFTER_PAUSE_COLS) - 1)]
        lines += ["| " + " | ".join(r) + " |" for r in pauses]
    with out_open("summary.md", "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    with out_open("summary.csv", "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow([k for k, _ in TABLE_COLS])
        for r in rows:
            w.writerow(["" if r[k] is None else r[k] for k, _ in TABLE_COLS])


def new_figure(w_px, h_px):
    import matplotlib.pyplot as plt

    return plt.figure(figsize=(w_px / DPI, h_px / DPI), dpi=DPI)


def where_text(doc):
    """Where and when the figures were measured, for a picture that travels without its JSON: the command and
    runs, the date, the machine (CPU, CPUs, kernel, clocksource) and what fastclock ran on there."""
    h, fc = doc.get("host", {}), doc.get("fastclock", {})
    when = (doc.get("created_utc") or "").replace("T", " ").replace("Z", " UTC")
    what = f"fastclock {doc.get('command', '?')}" + (f", {runs_text(doc)}" if doc.get("command") == "bench" else "")
    machine = (f"{h.get('cpu_model', '?')}, {h.get('ncpus', '?')} CPUs, {h.get('machine', '?')}, Linux "
               f"{h.get('kernel', '?')}, clocksource {h.get('clocksource', '?')}")
    mhz = fc.get("counter_hz")
    lib = f"fastclock {doc.get('tool_version', '?')}, backend {fc.get('backend', '?')}" + (
        f" ({fc.get('counter', 'counter')} at {mhz / 1e6:.1f} MHz)" if fc.get("backend") == "counter" and mhz else "")
    return f"{what}{', ' + when if when else ''} on {machine}; {lib}"


def footer(fig, doc, size):
    """The where-and-when line, along the picture's bottom edge (every plot keeps 30 px free under its x label)."""
    fig.text(0.01, 6 / size[1], "measured by " + where_text(doc), fontsize=7.5, color="#555555", ha="left",
             va="bottom")


def figure_texts(fig):
    """Every non-empty text drawn in the figure with its box in pixels: titles, labels, tick labels, legends,
    annotations."""
    from matplotlib.text import Text

    r = fig.canvas.get_renderer()
    unseen = set()  # the labels of ticks outside the view: matplotlib keeps them but does not draw them
    for ax in fig.axes:
        for axis, lim in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            lo, hi = min(lim), max(lim)
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not lo - 1e-9 * abs(hi - lo) <= tick.get_loc() <= hi + 1e-9 * abs(hi - lo):
                    unseen |= {id(tick.label1), id(tick.label2)}
    out = []
    for t in fig.findobj(Text):
        s = t.get_text()
        if not s.strip() or not t.get_visible() or id(t) in unseen:
            continue
        try:
            bb = t.get_window_extent(r)
        except (RuntimeError, ValueError):
            continue
        if bb.width > 0 and bb.height > 0:
            out.append((s, bb))
    return out


def clipped(fig, texts):
    """Texts that run past the picture's edge: a reader sees them cut."""
    w, h = fig.bbox.width, fig.bbox.height
    return [s for s, bb in texts if bb.x0 < -1 or bb.y0 < -1 or bb.x1 > w + 1 or bb.y1 > h + 1]


def overlaps(texts):
    """Pairs of texts whose boxes overlap by more than 1 px each way: labels written over each other."""
    bad = []
    for i in range(len(texts)):
        a = texts[i][1]
        for j in range(i + 1, len(texts)):
            b = texts[j][1]
            if min(a.x1, b.x1) - max(a.x0, b.x0) > 1 and min(a.y1, b.y1) - max(a.y0, b.y0) > 1:
                bad.append([texts[i][0], texts[j][0]])
    return bad


def save(fig, path, side=None):
    """Write the PNG; with side, record in report.json what a reader sees written in it (every text), any two
    texts drawn over each other and any text cut by the picture's edge (a test asserts there are none)."""
    import matplotlib.pyplot as plt

    fig.canvas.draw()
    if side is not None:
        texts = figure_texts(fig)
        side["texts"] = [t[0] for t in texts]
        side["overlapping_texts"] = overlaps(texts)
        side["clipped_texts"] = clipped(fig, texts)
    with out_open(os.path.basename(path), "wb") as f:  # the output directory's descriptor, never the path
        fig.savefig(f, dpi=DPI, format="png")  # no bbox_inches="tight": the size stays what expected_sizes() says
    plt.close(fig)


def rows_axes(fig, size):
    """An axes for one row per clock, with room on the left for the names."""
    return fig.add_axes([0.25, 75 / size[1], 0.62, 1 - 125 / size[1]])  # 75 px: x label, then the footer


def common_flags(rows):
    """Flags that most clocks carry say something about the run (a busy machine), not about one clock."""
    n = len(rows)
    counts = {}
    for r in rows:
        for f in r["check"].split():
            counts[f] = counts.get(f, 0) + 1
    return {f for f, k in counts.items() if n and k > n / 2}


FLAG_WORDS = {"efficiency": "efficiency above 1.1", "cpu": "threads got < 0.9 CPU each (a busy machine)",
              "below-counter": "cheaper than its counter read", "rate": "calls/s disagree with the cost",
              "unstable": "runs or quartiles differ by > 1.5x"}


# The same, in lines that fit cost.png's legend column (about 24 characters).
FLAG_LEGEND = {"efficiency": "efficiency: threads\nscaled better than\nperfect (above 1.1)",
               "cpu": "cpu: threads got < 0.9\nCPU each (busy machine)",
               "below-counter": "below-counter: cheaper\nthan its counter read",
               "rate": "rate: calls/s and cost\nper call disagree > 2x",
               "unstable": "unstable: runs or\nquartiles differ > 1.5x"}


def plot_cost(doc, rows, path, size, side):
    """A dot per clock at its median cost, sorted (cheapest at the top), with the p25..p75 spread; the vDSO
    and the counter as vertical reference lines; a clock with a flagged figure drawn hollow with '!'. Flags
    that most clocks carry are said once, under the title."""
    from matplotlib.lines import Line2D

    fig = new_figure(*size)
    ax = fig.add_axes([0.25, 75 / size[1], 0.57, 1 - 135 / size[1]])  # 75 px: x label, then the footer
    common = common_flags(rows)
    rs = sorted([r for r in rows if r["median_ns"] and r["median_ns"] > 0], key=lambda r: r["median_ns"])
    own = {r["clock"]: [f for f in r["check"].split() if f not in common] for r in rs}
    for y, r in enumerate(rs):
        col = GROUP_COLORS.get(r["group"], "#333333")
        if r["p25_ns"] and r["p75_ns"]:
            ax.plot([max(r["p25_ns"], 1e-3), r["p75_ns"]], [y, y], color=col, linewidth=2, alpha=0.5)
        ax.plot([r["median_ns"]], [y], "o", color=col, markersize=7,
                markerfacecolor="white" if own[r["clock"]] else col)
        label = num3(r["median_ns"]) + ("  ! " + ", ".join(own[r["clock"]]) if own[r["clock"]] else "")
        ax.text(max(r["median_ns"], r["p75_ns"] or 0) * 1.12, y, label, fontsize=7, va="center",
                color="#b00000" if own[r["clock"]] else "#333333", zorder=3,
                bbox=dict(facecolor="white", edgecolor="none", pad=0.3, alpha=0.85))  # over the reference lines
    ax.set_yticks(range(len(rs)))
    ax.set_yticklabels([r["clock"] for r in rs], fontsize=8)
    ax.set_ylim(len(rs) - 0.3, -0.7)  # cheapest at the top
    ax.set_xscale("log")
    refs = {}
    handles = []
    by = {r["clock"]: r for r in rows}
    counter = next((by[n] for n in ("lfence;rdtsc", "fc_ticks", "rdtsc") if n in by and by[n]["median_ns"]), None)
    for key, r, style in (("vdso", by.get(VDSO_REF), "--"), ("counter", counter, ":")):
        if r and r["median_ns"]:
            ax.axvline(r["median_ns"], color="k", linestyle=style, linewidth=1)
            handles.append(Line2D([], [], color="k", linestyle=style,
                                  label=f"{'vDSO ' + r['clock'].split('.')[-1] if key == 'vdso' else r['clock']} "
                                        f"{r['median_ns']:.3g} ns"))
            refs[key] = {"clock": r["clock"], "ns": r["median_ns"]}
    # at least a decade, and room right of the last dot for its label: a run of one clock (--clocks) had a range
    # of 1.74-1.755 x 10^1, its label past the picture's edge and its ticks in powers of ten
    vals = [v for r in rs for v in (r["median_ns"], r["p25_ns"], r["p75_ns"]) if v and v > 0]
    vals += [v["ns"] for v in refs.values()]
    if vals:
        lo, hi = min(vals) / 1.5, max(vals) * 2.5
        if hi / lo < 10:
            mid = math.sqrt(lo * hi)
            lo, hi = mid / math.sqrt(10), mid * math.sqrt(10)
        ax.set_xlim(lo, hi)
        if hi / lo < 1000:
            plain_log_ticks(ax.xaxis)
    ax.set_xlabel("ns per call, log scale (dot: median over rounds and runs; line: p25..p75)")
    ax.grid(axis="x", which="both", alpha=0.3)
    ax.grid(axis="y", alpha=0.15)
    groups = [g for g in GROUP_COLORS if g in {r["group"] for r in rs}]
    # the one reference row, "(empty loop)", is not a clock: said in the key (deltas.png says it in its row)
    handles += [Line2D([], [], marker="o", linestyle="", color=GROUP_COLORS[g],
                       label="reference: the batch\nloop alone, no call" if g == "reference" else g) for g in groups]
    if any(own.values()):
        handles.append(Line2D([], [], marker="o", linestyle="", color="k", markerfacecolor="white",
                              label="! suspect figure:"))
        for f in sorted({f for fl in own.values() for f in fl}):  # what each flag written beside a dot means
            handles.append(Line2D([], [], linestyle="", label=FLAG_LEGEND.get(f, f)))
    fig.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(0.83, 1 - 60 / size[1]),
               frameon=False)
    fig.suptitle(f"cost per call, cheapest at the top ({runs_text(doc)})" +
                 ("; left of the dashed line: cheaper than the vDSO" if "vdso" in refs else ""), fontsize=11)
    if common:
        fig.text(0.5, 1 - 52 / size[1], "every run: " + "; ".join(FLAG_WORDS.get(f, f) for f in sorted(common)),
                 ha="center", fontsize=9, color="#b00000")
    footer(fig, doc, size)
    drawn = {}
    save(fig, path, drawn)
    side["cost.png"] = {"order": [r["clock"] for r in rs], "median_ns": [r["median_ns"] for r in rs],
                        "reference_lines": refs, "flagged": [c for c, f in own.items() if f],
                        "run_flags": sorted(common),
                        "left_out": [r["clock"] for r in rows if not (r["median_ns"] and r["median_ns"] > 0)],
                        **drawn}


def share_pct(share):
    """A share as a percentage that never reads 0 % or 100 % unless it is exactly that: a coarse clock with 3
    non-zero deltas in 262144 read "100% zero" beside the violin of those 3."""
    p = 100 * share
    if p <= 0 or p >= 100:
        return f"{p:.0f}%"
    if p < 0.1:
        return "<0.1%"
    if p > 99.9:
        return ">99.9%"
    return f"{p:.1f}%"


def hist_quantile(edges, counts, q):
    """The q-quantile of a histogram's samples (geometric middle of the bin that holds it)."""
    want, acc = sum(counts) * q, 0
    for k, v in enumerate(counts):
        acc += v
        if acc >= want and v:
            return math.sqrt(edges[k] * edges[k + 1]) if edges[k] > 0 else edges[k + 1]
    return edges[-1]


def hist_median(edges, counts):
    """The median of a histogram's samples (geometric middle of the bin that holds it)."""
    return hist_quantile(edges, counts, 0.5)


def plot_deltas(doc, path, size, side):
    """Consecutive-delta distributions on one shared log axis: per clock a box (the middle half of its non-zero
    deltas), the median and the min..max line; at the right the share of zero deltas (reads that returned the
    same value) and, where few deltas moved, how many. A violin whose height was each bin's share needed a
    legend lesson; a box plot reads at once. A coarse clock read twice (fc_mono_coarse_ns and
    fastclock::coarse_steady_clock) showed two medians from a handful of moves each: the count says so."""
    from matplotlib.patches import Rectangle

    fig = new_figure(*size)
    ax = rows_axes(fig, size)
    items = []
    for c in doc["clocks"]:
        d = c.get("deltas", {})
        h = d.get("histogram", {})
        edges, counts = h.get("edges_ns", []), h.get("counts", [])
        ok = counts and sum(counts) > 0 and len(edges) == len(counts) + 1
        items.append((hist_median(edges, counts) if ok else float("inf"), c, d, edges if ok else None, counts))
    items.sort(key=lambda t: (t[0], t[1]["name"]))
    lo_x, hi_x = float("inf"), 0.0
    for _, _, _, edges, counts in items:
        if edges:
            nz = [k for k, v in enumerate(counts) if v]
            lo_x, hi_x = min(lo_x, edges[nz[0]]), max(hi_x, edges[nz[-1] + 1])
    plotted, only_zero, zero_labels, boxes, moves = [], [], {}, {}, {}
    for y, (_, c, d, edges, counts) in enumerate(items):
        col = GROUP_COLORS.get(c.get("group"), "#333333")
        zs = d.get("zero_share")
        if edges:
            nz = [k for k, v in enumerate(counts) if v]  # the whole range, however rare its ends (preemptions)
            ax.plot([edges[nz[0]], edges[nz[-1] + 1]], [y, y], color=col, linewidth=0.8)
            q1, q3 = hist_quantile(edges, counts, 0.25), hist_quantile(edges, counts, 0.75)
            if q3 <= q1:  # one bin: a box a bin wide, so it shows
                k = next(k for k in nz if edges[k] <= q1 <= edges[k + 1])
                q1, q3 = max(edges[k], q1 / 1.25), min(edges[k + 1], q1 * 1.25)
            ax.add_patch(Rectangle((q1, y - 0.32), q3 - q1, 0.64, facecolor=col, alpha=0.75, edgecolor=col))
            ax.plot([hist_median(edges, counts)], [y], "|", color="k", markersize=10)
            plotted.append(c["name"])
            boxes[c["name"]] = [q1, q3]
            moves[c["name"]] = sum(counts)
        else:
            why = ("not a clock: the batch loop alone" if c.get("timeline") == "none"
                   else "the value changes less often than it is read (coarse)")
            ax.text(0.02, y, f"every delta zero: {why}",
                    transform=ax.get_yaxis_transform(), fontsize=7, va="center", color="#555555")
            only_zero.append(c["name"])
        back = d.get("backward_steps") or 0
        zl = share_pct(zs) + " zero" if zs is not None else "-"
        if edges and sum(counts) < 100:  # the box and median of a handful of moves: say how many
            zl += f", {sum(counts)} moved"
        zero_labels[c["name"]] = zl
        ax.text(1.01, y, zl + (f", {back} BACK" if back else ""),
                transform=ax.get_yaxis_transform(), fontsize=7, va="center", color="#b00000" if back else "#333")
    ax.set_yticks(range(len(items)))
    ax.set_yticklabels([t[1]["name"] for t in items], fontsize=8)
    ax.set_ylim(len(items) - 0.3, -0.7)  # smallest deltas at the top
    ax.set_xscale("log")
    if hi_x > 0:
        ax.set_xlim(lo_x / 2, hi_x * 2)
    ax.set_xlabel("ns between consecutive reads that differ, one thread (log).  Box: the middle half of them; "
                  "|: median; line: min..max")
    ax.grid(axis="x", which="major", alpha=0.4)
    fig.suptitle("how far apart two consecutive reads are: narrow and left = stable and cheap", fontsize=11,
                 y=1 - 8 / size[1], va="top")
    # the colours: cost.png's groups, in one row under the title, so the picture explains them itself
    from matplotlib.patches import Patch
    groups = [g for g in GROUP_COLORS if g in {t[1].get("group") for t in items}]
    fig.legend(handles=[Patch(color=GROUP_COLORS[g], alpha=0.7, label=g) for g in groups], fontsize=8,
               loc="upper center", bbox_to_anchor=(0.56, 1 - 26 / size[1]), ncol=max(1, len(groups)),
               frameon=False, handlelength=1.2, columnspacing=1.2, borderaxespad=0)
    footer(fig, doc, size)
    drawn = {}
    save(fig, path, drawn)
    side["deltas.png"] = {"order": [t[1]["name"] for t in items], "violins": plotted, "all_zero": only_zero,
                          "shared_axis": True, "zero_labels": zero_labels, "legend": groups, "boxes": boxes,
                          "moves": moves, "encoding": "box p25..p75 of the non-zero deltas, median, min..max",
                          **drawn}


def plain_log_ticks(axis):
    """A log axis spanning less than a decade or two showed one labelled tick ("10^2") or labels like
    "1.74 x 10^1": label 1-2-3-5 steps in plain numbers, so each value can be read off."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 3.0, 5.0)))
    axis.set_minor_locator(LogLocator(base=10, subs=tuple(range(1, 10))))
    axis.set_major_formatter(FuncFormatter(lambda v, _: num3(v)))
    axis.set_minor_formatter(NullFormatter())


def plot_scaling(doc, path, size, side):
    """Calls per second per thread against threads for the clocks that matter (SCALING_CLOCKS, as measured);
    flat lines scale perfectly. Points whose threads got < 0.9 CPU each are hollow."""
    fig = new_figure(*size)
    ax1, ax2 = fig.subplots(1, 2)
    by = {c["name"]: c for c in doc["clocks"]}
    chosen = [n for n in SCALING_CLOCKS if n in by and any(t.get("calls_per_s") for t in by[n].get("threads", []))]
    busy = []
    for i, n in enumerate(chosen):
        th = [t for t in by[n]["threads"] if t.get("calls_per_s")]
        xs = [t["threads"] for t in th]
        # a line style each as well as a colour: equal rates (fc_mono_ns and fc_real_ns) drew one line over the other
        look = dict(color=f"C{i}", linewidth=1.5, linestyle=("-", "--", "-.", ":")[i % 4])
        ax1.plot(xs, [t["calls_per_s"] / t["threads"] / 1e6 for t in th], label=n, **look)
        ax2.plot(xs, [t.get("efficiency") for t in th], **look)
        for t in th:
            hollow = t.get("cpu_share") is not None and t["cpu_share"] < 0.9
            if hollow:
                busy.append([n, t["threads"]])
            kw = dict(color=f"C{i}", markerfacecolor="white" if hollow else f"C{i}", markersize=6)
            ax1.plot([t["threads"]], [t["calls_per_s"] / t["threads"] / 1e6], "o", **kw)
            ax2.plot([t["threads"]], [t.get("efficiency")], "o", **kw)
    ax1.set_yscale("log")
    plain_log_ticks(ax1.yaxis)
    ax1.set_ylabel("Mcalls/s per thread (log)")
    ax1.set_title("rate per thread: flat = scales with cores", fontsize=10)
    ax2.set_ylabel("efficiency: rate(T) / (T x rate(1))")
    ax2.set_title("scaling efficiency (1 = perfect; above 1.1 is a measuring error)", fontsize=10)
    ax2.axhline(1.0, color="k", linewidth=0.6)
    ax2.axhspan(1.1, max(1.2, ax2.get_ylim()[1]), color="#f4cccc", alpha=0.5, linewidth=0)
    ts = sorted({t["threads"] for c in doc["clocks"] for t in c.get("threads", [])})
    for ax in (ax1, ax2):
        ax.set_xlabel("threads")
        ax.grid(alpha=0.3)
        if ts:
            ax.set_xticks(ts)
    h, labels = ax1.get_legend_handles_labels()
    if busy:
        from matplotlib.lines import Line2D
        h.append(Line2D([], [], marker="o", linestyle="", color="k", markerfacecolor="white"))
        labels.append("hollow: threads got < 0.9 CPU each")
    fig.legend(h, labels, fontsize=8, loc="center right", frameon=False)
    # what the picture is, for a reader without the source: the panels' own titles say how to read each
    fig.suptitle("thread scaling: T threads each call one clock in a loop, pinned round robin to the CPUs; their "
                 "calls counted over one common window", fontsize=11, y=1 - 8 / size[1], va="top")
    footer(fig, doc, size)
    fig.subplots_adjust(left=0.06, right=0.76, bottom=0.14, top=0.88, wspace=0.3)
    drawn = {}
    save(fig, path, drawn)
    lo, hi = ax1.get_ylim()
    ticks = [t.get_text() for t in ax1.get_yticklabels() if t.get_text() and lo <= t.get_position()[1] <= hi]
    side["scaling.png"] = {"clocks": chosen, "left_out": len(doc["clocks"]) - len(chosen), "busy_points": busy,
                           "rate_tick_labels": ticks, **drawn}


def num3(v):
    """3 significant digits, never an exponent: 0.788, 56.5, 481, 1445."""
    return f"{v:.0f}" if abs(v) >= 1000 else f"{v:.3g}"


def si_ns(v, sign=True):
    """ns in the unit that reads best: 12 ns, 3.4 us, 2.5 ms."""
    a = abs(v)
    for unit, div in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if a >= div:
            return f"{v / div:{'+' if sign else ''}.3g} {unit}"
    return f"{v:{'+' if sign else ''}.0f} ns"


def worst_sample(es, hs):
    """The sample to mark, and whether every sample is inside its bracket. Where some sample is outside, the one
    farthest outside (|err| - half-width). Otherwise the largest |err| among the tight brackets (half-width at
    most twice the median): a read whose bracket the scheduler stretched to milliseconds can sit milliseconds
    from the midpoint and still be right, and marking it would read as fastclock being milliseconds off."""
    outside = [i for i in range(len(es)) if abs(es[i]) > hs[i]]
    if outside:
        return max(outside, key=lambda i: abs(es[i]) - hs[i]), False
    cap = 2 * sorted(hs)[len(hs) // 2]
    tight = [i for i in range(len(es)) if hs[i] <= cap] or list(range(len(es)))
    return max(tight, key=lambda i: abs(es[i])), True


def runs_text(doc):
    n = doc.get("runs", 1)
    return f"{n} run" + ("" if n == 1 else "s")


def plot_agreement(doc, path, size, side):
    """fastclock - kernel bracket midpoint per sample, the bracket's half-width as a grey bar at each sample
    (no band drawn over stretches without samples); points beyond the axis drawn as triangles at its edge;
    the worst sample marked."""
    a = doc.get("agreement", {})
    t = a.get("t_s", [])
    fig = new_figure(*size)
    axes = fig.subplots(2, 1, sharex=True)
    info = {}
    for ax, which, label in ((axes[0], "mono", "fc_mono_ns - CLOCK_MONOTONIC"),
                             (axes[1], "real", "fc_real_ns - CLOCK_REALTIME")):
        err, half = a.get(f"{which}_err_ns", []), a.get(f"{which}_half_ns", [])
        pts = [(x, e, hw) for x, e, hw in zip(t, err, half) if e is not None and x is not None]
        if not pts:
            ax.text(0.5, 0.5, "no samples", ha="center", va="center", transform=ax.transAxes)
            info[which] = {"samples": 0}
        else:
            xs = [p[0] for p in pts]
            es = [p[1] for p in pts]
            hs = [p[2] or 0 for p in pts]
            # The axis follows the reads whose kernel bracket is tight (half-width at most twice the median, as
            # worst_sample): it holds their largest |error| and twice the typical bracket. A read the scheduler
            # preempted inside its bracket sits up to milliseconds from the midpoint and says nothing about
            # fastclock; a few of them scaled the axis to +-10 ms, and the +-20 ns agreement read as a flat
            # line "off by 8 ms". Those reads are drawn at the edge and counted in a note under the title; a
            # tight read far off (a real disagreement) still scales the axis.
            cap = 2 * sorted(hs)[len(hs) // 2]
            tight = [abs(e) for e, h in zip(es, hs) if h <= cap] or [abs(e) for e in es]
            lim = max(1.5 * max(tight), cap, 1.0)
            ax.set_ylim(-lim, lim)
            bars = [(x, h) for x, h in zip(xs, hs) if h <= lim]  # a bracket wider than the axis: its read is noted
            ax.vlines([b[0] for b in bars], [-b[1] for b in bars], [b[1] for b in bars], color="#cccccc", linewidth=2,
                      label="kernel bracket (± half-width)")
            ax.plot(xs, es, ".", markersize=3, color="#4c72b0", label="fastclock - bracket midpoint")
            out = [(x, e, abs(e) > hw) for x, e, hw in zip(xs, es, hs) if abs(e) > lim]
            # red only where the sample is also outside its bracket; grey where a stretched bracket holds it
            for sign, mk in ((1, "^"), (-1, "v")):
                for bad, col, what in ((False, "#888888", "inside its bracket"), (True, "#b00000", "OUTSIDE its bracket")):
                    o = [x for x, e, b in out if e * sign > 0 and b == bad]
                    if o:
                        ax.plot(o, [sign * lim * 0.95] * len(o), mk, color=col, markersize=6,
                                label=f"beyond the axis, {what} (drawn at the edge)")
            k, inside = worst_sample(es, hs)
            wy = max(-lim * 0.95, min(lim * 0.95, es[k]))
            if inside:
                text = (f"every sample inside its bracket; circled: the largest |error| among brackets at most twice "
                        f"the median's width, {si_ns(es[k])} at {xs[k]:.2f} s (±{si_ns(hs[k], sign=False)})")
            else:
                text = (f"circled: the worst, {si_ns(es[k])} at {xs[k]:.2f} s, "
                        f"{si_ns(abs(es[k]) - hs[k], sign=False)} OUTSIDE its ±{si_ns(hs[k], sign=False)} bracket")
            wide = [h for h in hs if h > lim]
            off_note = ""
            if out:
                n_in = sum(1 for o in out if not o[2])
                off_note = f"{len(out)} read{'s' if len(out) != 1 else ''} off scale (triangles at the edge), "
                if n_in == len(out):
                    off_note += "each inside its kernel bracket"
                else:
                    off_note += (f"|error| up to {si_ns(max(abs(o[1]) for o in out), sign=False)}, "
                                 f"{len(out) - n_in} OUTSIDE its bracket")
                if wide:
                    off_note += (f"; {len(wide)} bracket{'s' if len(wide) != 1 else ''} up to "
                                 f"±{si_ns(max(wide), sign=False)} (the thread was preempted inside), not drawn")
                text += "\n" + off_note
            # the sentences go under the panel's title, never over the samples; the sample is circled
            ax.text(0.5, 1.0, text, transform=ax.transAxes, ha="center", va="bottom", fontsize=8,
                    color="#b00000" if not inside else "#333333", linespacing=1.3)
            ax.plot([xs[k]], [wy], "o", markerfacecolor="none", markeredgecolor="#b00000", markersize=10)
            # a long stretch without samples said for what it is (bench samples in its thread windows and once
            # between phases: none while it times the costs, the deltas or the latencies), not left to read as a
            # missing or broken part; written only where it fits inside the stretch
            why = ("no samples here:\nbench samples in its\nthread windows only" if doc.get("command") == "bench"
                   else "no samples here:\nthread 0, which samples\nevery 10 ms, did not run")
            for g0, g1 in zip(xs, xs[1:]):
                if g1 - g0 <= 0.1 * (xs[-1] - xs[0]):
                    continue
                note = ax.text((g0 + g1) / 2, 0.5, why, ha="center", va="center", fontsize=8, color="#555555",
                               transform=ax.get_xaxis_transform())
                ax.set_xlim(ax.get_xlim())  # fixed, so the pixels measured now are the picture's
                px = ax.transData.transform([(g0, 0), (g1, 0)])
                if note.get_window_extent(fig.canvas.get_renderer()).width > 0.9 * (px[1][0] - px[0][0]):
                    note.remove()
                    continue
                info.setdefault("gaps", []).append([which, round(g0, 3), round(g1, 3)])
            info[which] = {"samples": len(pts), "worst_ns": es[k], "worst_t_s": xs[k], "worst_inside_bracket": inside,
                           "beyond_axis": len(out), "ylim_ns": lim, "tight_bracket_ns": cap,
                           "beyond_axis_outside_bracket": sum(1 for o in out if o[2]),
                           "brackets_wider_than_axis": len(wide), "off_scale_note": off_note}
        # each tick in the unit that reads (a bracket stretched to milliseconds had the axis read "5.0" under a
        # "1e6" multiplier in the corner, beside the label "ns")
        from matplotlib.ticker import FuncFormatter
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: si_ns(v, sign=False) if v else "0"))
        ax.set_ylabel("fastclock - kernel")
        ax.set_title(label, fontsize=9, pad=14 + (11 if info.get(which, {}).get("off_scale_note") else 0))
        ax.grid(alpha=0.3)
    starts = a.get("run_starts_s", [])
    if len(starts) > 1:  # a dotted line where each run after the first begins
        for ax in axes:
            for i, x in enumerate(starts[1:], 2):
                ax.axvline(x, color="#888888", linestyle=":", linewidth=1)
                ax.text(x, 0.02, f" run {i}", transform=ax.get_xaxis_transform(), fontsize=7, color="#555555")
        info["run_starts_s"] = starts
    axes[1].set_xlabel("seconds since start" + (" (runs one after the other, dotted: a run begins)"
                                                 if doc.get("runs", 1) > 1 else ""))
    fig.suptitle(f"agreement with the kernel ({doc['command']}, {len(t)} samples; inside the grey bar = within "
                 "the kernel's own bracket)", fontsize=10)
    h, labels = [], []
    for ax in axes:  # one legend for both panels, above them (never over a sample)
        for hh, ll in zip(*ax.get_legend_handles_labels()):
            if ll not in labels:
                h.append(hh)
                labels.append(ll)
    if h:
        fig.legend(h, labels, fontsize=8, loc="upper center", ncol=len(h), bbox_to_anchor=(0.5, 0.955), frameon=False)
    footer(fig, doc, size)
    notes = any(info.get(w, {}).get("off_scale_note") for w in ("mono", "real"))
    # a second line under each title (the off-scale note) takes room from the panels, not from the legend
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.13, top=0.83 if notes else 0.86, hspace=0.42 if notes else 0.3)
    save(fig, path, info)
    side["agreement.png"] = info


def img_tag(name, alt):
    b64 = base64.b64encode(out_read(name)).decode("ascii")
    return f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{b64}"></figure>'


def kv_table(d):
    rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>"
                   for k, v in d.items() if not isinstance(v, (dict, list)))
    return f"<table class=kv>{rows}</table>"


def rows_table(rows, cols):
    head = "".join(f"<th>{html.escape(t)}</th>" for _, t in cols)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(cell(r, k))}</td>" for k, _ in cols) + "</tr>"
                   for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def write_html(doc, out, images, head_line, tables):
    title = f"fastclock {doc['command']} report"
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title>",
        "<style>body{font-family:sans-serif;margin:2em;max-width:1300px}"
        "table{border-collapse:collapse;font-size:12px;margin:1em 0}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}th{background:#f4f4f4}"
        "table.kv th{text-align:left}img{max-width:100%}.verdict{font-size:1.2em;font-weight:bold}</style>"
        "</head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p class=verdict>{html.escape(head_line)}</p>" if head_line else "",
        f"<p>measured by {html.escape(where_text(doc))}</p>",  # the pictures' footer line: which machine, up top
    ]
    for heading, frame in tables:
        parts += [f"<h2>{html.escape(heading)}</h2>", frame]
    for name, alt in images:
        parts += [f"<h2>{html.escape(alt)}</h2>", img_tag(name, alt)]
    parts += ["<h2>machine</h2>", kv_table(doc.get("host", {})), "<h2>fastclock</h2>", kv_table(doc.get("fastclock", {}))]
    if doc["command"] == "check":
        summary = {k: v for k, v in doc.items() if not isinstance(v, (dict, list))}
        parts += ["<h2>check</h2>", kv_table(summary), "<h3>violations</h3>", kv_table(doc.get("violations", {})),
                  "<h3>worst outside the kernel's bracket (ns)</h3>", kv_table(doc.get("worst_outside_bracket_ns", {}))]
    parts.append("</body></html>\n")
    with out_open("report.html", "w", encoding="utf-8") as f:
        f.write("\n".join(parts))


def compare(path_a, path_b, as_json):
    """`fastclock compare A.json B.json`: two bench runs side by side, clock by clock; a verdict line first."""
    docs = [load(path_a), load(path_b)]
    for p, d in zip((path_a, path_b), docs):
        if d["command"] != "bench":
            fail(f"'{p}' is not the JSON of 'fastclock bench --json' (compare takes two bench runs)", 2)
    a, b = (combine([p], [d]) for p, d in zip((path_a, path_b), docs))
    ra, rb = ({r["clock"]: r for r in clock_rows(d)} for d in (a, b))
    rows = []
    for name in list(ra) + [n for n in rb if n not in ra]:
        x, y = ra.get(name), rb.get(name)
        ca, cb = x and x["median_ns"], y and y["median_ns"]
        rows.append({"clock": name, "a_ns": ca, "b_ns": cb, "b_over_a": cb / ca if ca and cb else None,
                     "a_x_vdso": x and x["x_vdso"], "b_x_vdso": y and y["x_vdso"],
                     "a_lat_p9999_ns": x and x["lat_p9999_ns"], "b_lat_p9999_ns": y and y["lat_p9999_ns"],
                     "a_check": x["check"] if x else "not measured", "b_check": y["check"] if y else "not measured"})
    both = [r for r in rows if r["b_over_a"]]
    fc = next((r for r in both if r["clock"] == "fc_mono_ns"), None)
    ratios = sorted(r["b_over_a"] for r in both)
    parts = []
    if fc:
        parts.append(f"fc_mono_ns {fc['a_ns']:.3g} ns in A, {fc['b_ns']:.3g} ns in B ({fc['b_over_a']:.2f}x)")
    if ratios:
        parts.append(f"B / A over {len(ratios)} clocks: median {statistics.median(ratios):.2f}x, "
                     f"{ratios[0]:.2f}x to {ratios[-1]:.2f}x")
    only = [r["clock"] for r in rows if not r["b_over_a"]]
    if only:
        parts.append(f"{len(only)} clock(s) not in both")
    flagged = [r["clock"] for r in rows if (r["a_check"] and r["a_check"] != "not measured")
               or (r["b_check"] and r["b_check"] != "not measured")]
    parts.append(f"{len(flagged)} with figures flagged" if flagged else "no figure flagged")
    head = "Verdict: " + "; ".join(parts)
    host = lambda d: (f"{d.get('host', {}).get('cpu_model', '?')}, {d.get('host', {}).get('ncpus', '?')} CPUs, "
                      f"{d.get('host', {}).get('clocksource', '?')}, tool {d.get('tool_version', '?')}")
    if as_json:
        json.dump({"schema": "fastclock-compare/1", "command": "compare", "a": path_a, "b": path_b,
                   "a_host": host(a), "b_host": host(b), "verdict": head, "clocks": rows}, sys.stdout, indent=1)
        print()
    else:
        cols = [("clock", "clock"), ("a_ns", "A ns"), ("b_ns", "B ns"), ("b_over_a", "B / A"),
                ("a_x_vdso", "A x vDSO"), ("b_x_vdso", "B x vDSO"), ("a_lat_p9999_ns", "A 1 read p99.99"),
                ("b_lat_p9999_ns", "B 1 read p99.99"), ("a_check", "A check"), ("b_check", "B check")]
        print(head)
        print()
        print(f"A: {path_a} ({host(a)})")
        print(f"B: {path_b} ({host(b)})")
        print()
        print("| " + " | ".join(t for _, t in cols) + " |")
        print("|---|" + "---:|" * 7 + "---|---|")
        for r in rows:
            print("| " + " | ".join(f"`{r[k]}`" if k == "clock" else fmt(r[k]) for k, _ in cols) + " |")
    sys.stdout.flush()
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="fastclock report", description=__doc__.split("\n")[0])
    ap.add_argument("result", nargs="+", help="JSON of 'fastclock bench --json' (one or more runs) or of "
                    "'fastclock check --json'")
    ap.add_argument("-o", "--output", default="fastclock-report", help="output directory")
    ap.add_argument("--compare", action="store_true", help="compare two bench runs (fastclock compare)")
    ap.add_argument("--json", action="store_true", help="with --compare: one JSON document")
    args = ap.parse_args(argv)
    if args.compare:
        global COMMAND
        COMMAND = "compare"
        if len(args.result) != 2:
            fail("compare takes two bench runs: A.json B.json", 2)
        try:
            return compare(args.result[0], args.result[1], args.json)
        except OSError as e:
            sys.stdout = None
            fail(f"cannot write to standard output: {e.strerror}", 3)
    docs = [load(p) for p in args.result]
    import_matplotlib_away_from_cwd()
    global OUT_FD
    try:
        OUT_FD = open_output_dir(args.output)
    except Refused as e:
        fail(f"cannot write into '{args.output}': {e}: name a directory of your own with -o", 2)
    except NotADirectoryError as e:
        fail(f"cannot write into '{args.output}': {e.strerror or 'it exists and is not a directory'}", 2)
    except OSError as e:
        fail(f"cannot create the directory '{args.output}': {e.strerror}", 2)
    if len(docs) > 1 and any(d["command"] != "bench" for d in docs):
        fail("several inputs are combined only when all are 'fastclock bench --json' runs", 2)
    doc = combine(args.result, docs)
    sizes = expected_sizes(doc)
    out = args.output
    images, tables, side, written = [], [], {"inputs": args.result, "command": doc["command"],
                                             "runs": doc.get("runs", 1)}, []
    head_line = check_verdict(doc) if doc["command"] == "check" else ""
    side["verdict"] = head_line
    try:
        if doc["command"] == "bench":
            rows = clock_rows(doc)
            head_line = verdict(doc, rows)
            side["verdict"] = head_line
            side["flags"] = {r["clock"]: r["check"].split() for r in rows if r["check"]}
            write_summary(doc, rows, out)
            written += ["summary.md", "summary.csv"]
            plot_cost(doc, rows, "cost.png", sizes["cost.png"], side)
            plot_deltas(doc, "deltas.png", sizes["deltas.png"], side)
            plot_scaling(doc, "scaling.png", sizes["scaling.png"], side)
            images += [("cost.png", "cost per call"), ("deltas.png", "consecutive deltas"),
                       ("scaling.png", "thread scaling")]
            tables.append(("clocks (medians over runs; 'check' names figures that cannot be right)",
                           rows_table(rows, TABLE_COLS)))
            if after_pause_table(doc):
                head = "".join(f"<th>{html.escape(t)}</th>" for t in AFTER_PAUSE_COLS)
                body = "".join("<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in r) + "</tr>"
                               for r in after_pause_table(doc))
                tables.append((AFTER_PAUSE_TITLE, f"<table><tr>{head}</tr>{body}</table>"))
        plot_agreement(doc, "agreement.png", sizes["agreement.png"], side)
        images.append(("agreement.png", "agreement with the kernel"))
        write_html(doc, out, images, head_line, tables)
        with out_open("report.json", "w", encoding="utf-8") as f:
            json.dump(side, f, indent=1)
    except OSError as e:
        fail(f"cannot write into '{out}': {e.strerror}", 2)
    except Exception as e:  # a rendering failure: say what, exit 1
        fail(f"rendering failed: {type(e).__name__}: {e}", 1)
    try:
        if head_line:
            print(head_line)
        for name in list(sizes) + written + ["report.json", "report.html"]:
            print(os.path.join(out, name))
        sys.stdout.flush()
    except OSError as e:  # docs/cli.md: exit 3 when the output cannot be written
        sys.stdout = None  # nothing more to flush at exit
        fail(f"cannot write to standard output: {e.strerror}", 3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
