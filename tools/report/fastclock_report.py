#!/usr/bin/env python3
"""Render `fastclock bench --json` or `fastclock check --json` as PNG plots and one self-contained HTML page.

Usage: fastclock_report.py RESULT.json [-o DIR]      (normally run through `fastclock report`)

Writes into DIR (default: fastclock-report):
  bench JSON:  cost.png, deltas.png, scaling.png, agreement.png, report.html
  check JSON:  agreement.png, report.html
Image sizes are fixed by the data, so a test can check them (pixels, at 100 dpi):
  cost.png       1200 x (200 + 30 * clocks)
  deltas.png     1200 x (260 * ceil(clocks / 4))
  scaling.png    1200 x 600
  agreement.png  1200 x 600
report.html embeds every image (base64 data: URIs) and the tables, so it can be mailed or attached alone.
Exit status: 0 rendered; 1 rendering failed (or matplotlib, pandas, jsonschema missing); 2 the input is
unreadable, not JSON, or does not match docs/bench.schema.json (validated before anything reads it); 3 the
list of files written could not be printed (standard output closed or full).
"""
import argparse
import base64
import html
import io
import json
import math
import os
import sys

# Headless and no writes to $HOME: a private matplotlib cache when the default one is not writable.
os.environ.setdefault("MPLBACKEND", "Agg")
if not os.access(os.path.expanduser("~"), os.W_OK):
    os.environ.setdefault("MPLCONFIGDIR", os.path.join(os.environ.get("TMPDIR", "/tmp"), "fastclock-mpl"))

DPI = 100
WIDTH_PX = 1200
DELTA_COLS = 4
DELTA_ROW_PX = 260
COST_BASE_PX = 200
COST_PER_CLOCK_PX = 30
PLAIN_HEIGHT_PX = 600


def fail(msg, code):
    print(f"fastclock: report: {msg}", file=sys.stderr)
    sys.exit(code)


def expected_sizes(doc):
    """The PNG files a document renders to and their (width, height) in pixels."""
    if doc.get("command") == "check":
        return {"agreement.png": (WIDTH_PX, PLAIN_HEIGHT_PX)}
    n = len(doc.get("clocks", []))
    rows = max(1, math.ceil(n / DELTA_COLS))
    return {
        "cost.png": (WIDTH_PX, COST_BASE_PX + COST_PER_CLOCK_PX * max(n, 1)),
        "deltas.png": (WIDTH_PX, DELTA_ROW_PX * rows),
        "scaling.png": (WIDTH_PX, PLAIN_HEIGHT_PX),
        "agreement.png": (WIDTH_PX, PLAIN_HEIGHT_PX),
    }


def _schema_path():
    """$FASTCLOCK_SCHEMA; else next to this script (an installed prefix: share/fastclock/); else the source
    tree's docs/."""
    here = os.path.dirname(os.path.abspath(__file__))
    for p in (os.environ.get("FASTCLOCK_SCHEMA"), os.path.join(here, "bench.schema.json"),
              os.path.join(here, "..", "..", "docs", "bench.schema.json")):
        if p and os.path.exists(p):
            return p
    return os.environ.get("FASTCLOCK_SCHEMA") or os.path.join(here, "..", "..", "docs", "bench.schema.json")


SCHEMA = _schema_path()


def validate(path, doc):
    """Check doc against docs/bench.schema.json (the definition its `command` names) before anything reads
    it; exit 2 naming the first problem and where it is."""
    try:
        import jsonschema
    except ImportError:
        fail(f"jsonschema is not installed for {sys.executable} (run scripts/setup.sh, or set FASTCLOCK_PYTHON)", 1)
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
        fail(f"'{path}' does not match docs/bench.schema.json at {where}: {e.message[:200]}{more}", 2)


def load(path):
    try:
        with open(path, "r", encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        fail(f"cannot read '{path}': {e.strerror}", 2)
    except (ValueError, UnicodeDecodeError) as e:
        fail(f"'{path}' is not JSON: {e}", 2)
    validate(path, doc)
    return doc


def clocks_frame(doc):
    import pandas as pd

    rows = []
    for c in doc["clocks"]:
        cost, res, d = c.get("cost", {}), c.get("resolution", {}), c.get("deltas", {})
        row = {
            "clock": c["name"],
            "group": c.get("group"),
            "cost_ns": cost.get("median_ns"),
            "p25_ns": cost.get("p25_ns"),
            "p75_ns": cost.get("p75_ns"),
            "getres_ns": res.get("getres_ns"),
            "observed_res_ns": res.get("observed_ns"),
            "stale_pct": None if d.get("zero_share") is None else 100 * d["zero_share"],
            "delta_p50_ns": d.get("p50_ns"),
            "delta_p99_ns": d.get("p99_ns"),
            "backward": d.get("backward_steps"),
        }
        for t in c.get("threads", []):
            row[f"Mcalls/s @{t['threads']}"] = None if t.get("calls_per_s") is None else t["calls_per_s"] / 1e6
        rows.append(row)
    return pd.DataFrame(rows)


def agreement_frame(doc):
    import pandas as pd

    a = doc["agreement"]
    cols = ["t_s", "mono_err_ns", "mono_half_ns", "real_err_ns", "real_half_ns"]
    return pd.DataFrame({k: pd.to_numeric(pd.Series(a.get(k, []), dtype="float64")) for k in cols})


def new_figure(w_px, h_px):
    import matplotlib.pyplot as plt

    return plt.figure(figsize=(w_px / DPI, h_px / DPI), dpi=DPI)


def save(fig, path):
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=DPI)  # no bbox_inches="tight": the size stays what expected_sizes() says
    plt.close(fig)


GROUP_COLORS = {
    "libc": "#8c8c8c",
    "clock_gettime": "#4c72b0",
    "counter": "#55a868",
    "std::chrono": "#c44e52",
    "fastclock": "#dd8452",
}


def plot_cost(doc, df, path, size):
    fig = new_figure(*size)
    ax = fig.add_axes([0.30, 70 / size[1], 0.66, 1 - 110 / size[1]])
    d = df.iloc[::-1]
    y = range(len(d))
    med = d["cost_ns"].astype(float)
    lo = (med - d["p25_ns"].astype(float)).clip(lower=0).fillna(0)
    hi = (d["p75_ns"].astype(float) - med).clip(lower=0).fillna(0)
    colors = [GROUP_COLORS.get(g, "#333333") for g in d["group"]]
    ax.barh(list(y), med.fillna(0).clip(lower=1e-3), xerr=[lo, hi], color=colors, capsize=2)
    ax.set_yticks(list(y))
    ax.set_yticklabels(d["clock"], fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("ns per call (median of repeated batches; bar: p25..p75)")
    ax.set_title("cost per call")
    ax.grid(axis="x", which="both", alpha=0.3)
    for yi, v, top in zip(y, med, d["p75_ns"].astype(float)):
        if v == v:
            ax.text(max(v, top if top == top else v) * 1.1, yi, f"{v:.3g}", va="center", fontsize=7)
    handles = [__import__("matplotlib.patches", fromlist=["Patch"]).Patch(color=c, label=g)
               for g, c in GROUP_COLORS.items() if g in set(d["group"])]
    if handles:
        ax.legend(handles=handles, fontsize=8, loc="lower right")
    save(fig, path)


def plot_deltas(doc, path, size):
    from matplotlib.ticker import NullFormatter

    clocks = doc["clocks"]
    n = max(1, len(clocks))
    rows = math.ceil(n / DELTA_COLS)
    fig = new_figure(*size)
    axes = fig.subplots(rows, DELTA_COLS, squeeze=False)
    for i, ax in enumerate(axes.flat):
        if i >= len(clocks):
            ax.set_visible(False)
            continue
        c = clocks[i]
        d = c.get("deltas", {})
        h = d.get("histogram", {})
        edges, counts = h.get("edges_ns", []), h.get("counts", [])
        total = d.get("samples") or 0
        zero = h.get("zero", 0) or 0
        neg = h.get("negative", 0) or 0
        if counts and sum(counts) > 0 and len(edges) == len(counts) + 1:
            nz = [k for k, v in enumerate(counts) if v]
            a, b = max(0, nz[0] - 1), min(len(counts), nz[-1] + 2)
            ax.stairs(counts[a:b], edges[a:b + 1], fill=True, color=GROUP_COLORS.get(c.get("group"), "#333"))
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.xaxis.set_minor_formatter(NullFormatter())  # a one-decade axis would print crowded minor labels
            ax.yaxis.set_minor_formatter(NullFormatter())
        else:
            ax.text(0.5, 0.5, "no positive delta\n(every read returned the same value)", ha="center",
                    va="center", fontsize=8, transform=ax.transAxes)
            ax.set_xticks([])
            ax.set_yticks([])
        stale = f"{100 * zero / total:.1f}%" if total else "-"
        ax.set_title(f"{c['name']}\nzero {stale}, back {neg}", fontsize=8)
        ax.tick_params(labelsize=7)
    fig.suptitle("consecutive deltas (ns, log-log)", fontsize=10)
    fig.subplots_adjust(left=0.05, right=0.98, bottom=40 / size[1], top=1 - 95 / size[1], hspace=0.9, wspace=0.3)
    save(fig, path)


def plot_scaling(doc, path, size):
    fig = new_figure(*size)
    ax1, ax2 = fig.subplots(1, 2)
    # 10 colours x 3 line styles x 3 markers: each of the ~30 clocks gets its own look (colours alone repeat)
    styles = [(col, ls, mk) for ls, mk in (("-", "o"), ("--", "s"), (":", "^")) for col in range(10)]
    for i, c in enumerate(doc["clocks"]):
        th = c.get("threads", [])
        xs = [t["threads"] for t in th if t.get("calls_per_s") is not None]
        ys = [t["calls_per_s"] / 1e6 for t in th if t.get("calls_per_s") is not None]
        es = [t.get("efficiency") for t in th if t.get("calls_per_s") is not None]
        if not xs:
            continue
        col, ls, mk = styles[i % len(styles)]
        look = dict(color=f"C{col}", linestyle=ls, marker=mk, linewidth=1)
        ax1.plot(xs, ys, label=c["name"], **look)
        ax2.plot(xs, [e if e is not None else float("nan") for e in es], **look)
    ax1.set_yscale("log")
    ax1.set_xlabel("threads")
    ax1.set_ylabel("Mcalls/s, all threads")
    ax1.set_title("throughput")
    ax2.set_xlabel("threads")
    ax2.set_ylabel("rate(T) / (T x rate(1))")
    ax2.set_title("scaling efficiency")
    ax2.axhline(1.0, color="k", linewidth=0.5)
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ts = sorted({t["threads"] for c in doc["clocks"] for t in c.get("threads", [])})
        if ts:
            ax.set_xticks(ts)
    if doc["clocks"]:
        h, labels = ax1.get_legend_handles_labels()
        fig.legend(h, labels, fontsize=7, loc="center right", ncol=1 if len(labels) <= 20 else 2, frameon=False)
    fig.subplots_adjust(left=0.06, right=0.58 if len(doc["clocks"]) > 20 else 0.75, bottom=0.1, top=0.92,
                        wspace=0.3)
    save(fig, path)


def plot_agreement(doc, df, path, size):
    fig = new_figure(*size)
    axes = fig.subplots(2, 1, sharex=True)
    for ax, which, label in ((axes[0], "mono", "fc_mono_ns - CLOCK_MONOTONIC"),
                             (axes[1], "real", "fc_real_ns - CLOCK_REALTIME")):
        if len(df):
            d = df.sort_values("t_s")
            ax.fill_between(d["t_s"], -d[f"{which}_half_ns"], d[f"{which}_half_ns"], color="#cccccc",
                            step="mid", label="kernel bracket (half-width)")
            ax.plot(d["t_s"], d[f"{which}_err_ns"], ".", markersize=2, color="#4c72b0",
                    label="fastclock - bracket midpoint")
            lim = d[f"{which}_err_ns"].abs().quantile(0.99)
            if lim == lim and lim > 0:
                ax.set_ylim(-2 * lim, 2 * lim)
            ax.legend(fontsize=7, loc="upper right")
        else:
            ax.text(0.5, 0.5, "no samples", ha="center", va="center", transform=ax.transAxes)
        ax.set_ylabel("ns")
        ax.set_title(label, fontsize=9)
        ax.grid(alpha=0.3)
    axes[1].set_xlabel("seconds since start")
    fig.suptitle(f"agreement with the kernel ({doc['command']}, {len(df)} samples)", fontsize=10)
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.09, top=0.9, hspace=0.3)
    save(fig, path)


def img_tag(path, alt):
    with open(path, "rb") as f:
        b64 = base64.b64encode(f.read()).decode("ascii")
    return f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{b64}"></figure>'


def kv_table(d):
    rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>"
                   for k, v in d.items() if not isinstance(v, (dict, list)))
    return f"<table class=kv>{rows}</table>"


def write_html(doc, out, images, tables):
    title = f"fastclock {doc['command']} report"
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title>",
        "<style>body{font-family:sans-serif;margin:2em;max-width:1300px}"
        "table{border-collapse:collapse;font-size:12px;margin:1em 0}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}th{background:#f4f4f4}"
        "table.kv th{text-align:left}img{max-width:100%}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>created {html.escape(str(doc.get('created_utc', '')))}, tool {html.escape(str(doc.get('tool_version')))}"
        "</p>",
        "<h2>machine</h2>", kv_table(doc.get("host", {})),
        "<h2>fastclock</h2>", kv_table(doc.get("fastclock", {})),
    ]
    if doc["command"] == "check":
        summary = {k: v for k, v in doc.items() if not isinstance(v, (dict, list))}
        parts += ["<h2>check</h2>", kv_table(summary), "<h3>violations</h3>", kv_table(doc.get("violations", {})),
                  "<h3>worst outside the kernel's bracket (ns)</h3>", kv_table(doc.get("worst_outside_bracket_ns", {}))]
    for heading, frame in tables:
        parts += [f"<h2>{html.escape(heading)}</h2>",
                  frame.to_html(index=False, na_rep="-", float_format=lambda v: f"{v:.4g}", border=0)]
    for name, alt in images:
        parts += [f"<h2>{html.escape(alt)}</h2>", img_tag(os.path.join(out, name), alt)]
    parts.append("</body></html>\n")
    with open(os.path.join(out, "report.html"), "w", encoding="utf-8") as f:
        f.write("\n".join(parts))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="fastclock report", description=__doc__.split("\n")[0])
    ap.add_argument("result", help="JSON written by 'fastclock bench --json' or 'fastclock check --json'")
    ap.add_argument("-o", "--output", default="fastclock-report", help="output directory")
    args = ap.parse_args(argv)
    doc = load(args.result)
    try:
        import matplotlib  # noqa: F401
        import pandas  # noqa: F401
    except ImportError as e:
        fail(f"{e.name} is not installed for {sys.executable} (run scripts/setup.sh, or set FASTCLOCK_PYTHON)", 1)
    try:
        os.makedirs(args.output, exist_ok=True)
    except OSError as e:
        fail(f"cannot create '{args.output}': {e.strerror}", 2)
    sizes = expected_sizes(doc)
    agree = agreement_frame(doc)
    images, tables = [], []
    try:
        if doc["command"] == "bench":
            df = clocks_frame(doc)
            plot_cost(doc, df, os.path.join(args.output, "cost.png"), sizes["cost.png"])
            plot_deltas(doc, os.path.join(args.output, "deltas.png"), sizes["deltas.png"])
            plot_scaling(doc, os.path.join(args.output, "scaling.png"), sizes["scaling.png"])
            images += [("cost.png", "cost per call"), ("deltas.png", "consecutive deltas"),
                       ("scaling.png", "thread scaling")]
            tables.append(("clocks", df))
        plot_agreement(doc, agree, os.path.join(args.output, "agreement.png"), sizes["agreement.png"])
        images.append(("agreement.png", "agreement with the kernel"))
        if len(agree):
            tables.append(("agreement summary (ns)", agree.drop(columns=["t_s"]).describe(
                percentiles=[0.5, 0.99]).reset_index().rename(columns={"index": "stat"})))
        write_html(doc, args.output, images, tables)
    except Exception as e:  # a rendering failure: say what, exit 1
        fail(f"rendering failed: {type(e).__name__}: {e}", 1)
    try:
        for name in list(sizes) + ["report.html"]:
            print(os.path.join(args.output, name))
        sys.stdout.flush()
    except OSError as e:  # docs/cli.md: exit 3 when the output cannot be written
        sys.stdout = None  # nothing more to flush at exit
        fail(f"cannot write to standard output: {e.strerror}", 3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
