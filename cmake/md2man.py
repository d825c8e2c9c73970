#!/usr/bin/env python3
"""Markdown to a man page (roff, man macros), for the subset docs/cli.md uses: a '#' title, '##'/'###'
headings, paragraphs, fenced code blocks, pipe tables, '-' lists, **bold**, *italic*, `code` and links.

docs/cli.md is the only source of the fastclock(1) man page: CMakeLists.txt runs this at build time.
  md2man.py --name fastclock --section 1 --version 0.1.0 docs/cli.md fastclock.1
NAME is the first sentence of the first paragraph; SYNOPSIS the first column of the first table whose first
header is 'command' (or 'NAME <command> [options]' without one). Exit 2 on a missing file or bad arguments.
"""
import argparse
import re
import sys


def esc(text):
    """Escape roff specials in plain text (before inline markup is turned into font changes)."""
    return text.replace("\\", "\\e").replace("-", "\\-")


def inline(text):
    """Inline markdown to roff font changes; the result is escaped."""
    out = []
    pos = 0
    # `code`, **bold**, *italic*, [text](link)
    for m in re.finditer(r"`([^`]+)`|\*\*(.+?)\*\*|(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])|\[([^\]]+)\]\([^)]+\)", text):
        out.append(esc(text[pos:m.start()]))
        if m.group(1) is not None:
            out.append("\\fB" + esc(m.group(1)) + "\\fR")
        elif m.group(2) is not None:
            out.append("\\fB" + inline(m.group(2)) + "\\fR")
        elif m.group(3) is not None:
            out.append("\\fI" + esc(m.group(3)) + "\\fR")
        else:
            out.append(inline(m.group(4)))
        pos = m.end()
    out.append(esc(text[pos:]))
    return "".join(out)


def line(text):
    """One output text line: a leading '.' or '\'' would be read as a request."""
    return "\\&" + text if text[:1] in (".", "'") else text


def cells(row):
    return [c.strip() for c in row.strip().strip("|").split("|")]


MAN_SKIP = re.compile(r"<!-- man: skip -->.*?<!-- /man: skip -->\n?", re.S)


def for_the_reader(md):
    """The text a person at the terminal needs: what lies between `<!-- man: skip -->` and
    `<!-- /man: skip -->` (build steps, test names, source paths) is left out, and so is every HTML comment."""
    md = MAN_SKIP.sub("", md)
    md = re.sub(r"[ \t]*<!--.*?-->[ \t]*\n?", "", md, flags=re.S)
    return md


def convert(md, name, section, version):
    md = for_the_reader(md)
    lines = md.split("\n")
    title = ""
    body = []  # roff lines of DESCRIPTION onwards
    synopsis = []
    first_para = None
    i = 0
    para = []

    def flush():
        nonlocal first_para
        if para:
            text = " ".join(s.strip() for s in para)
            if first_para is None:
                first_para = text
            body.extend([".PP", line(inline(text))])
            para.clear()

    while i < len(lines):
        ln = lines[i]
        if ln.startswith("```"):
            flush()
            i += 1
            body.extend([".PP", ".RS 4", ".nf"])
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(line(esc(lines[i])))
                i += 1
            body.extend([".fi", ".RE"])
        elif ln.startswith("# "):
            flush()
            title = re.sub(r"[`*]", "", ln[2:]).strip()
        elif ln.startswith("## ") or ln.startswith("### "):
            flush()
            level, text = ln.split(" ", 1)
            text = re.sub(r"[`*]", "", text).strip()
            if level == "##":
                body.append('.SH "%s"' % esc(text.upper()))
            else:
                body.append('.SS "%s"' % esc(text))
        elif ln.startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(cells(lines[i]))
                i += 1
            i -= 1
            head, rows = rows[0], [r for r in rows[1:] if not all(re.fullmatch(r":?-+:?", c) for c in r)]
            if head[0].lower() == "command" and not synopsis:
                synopsis = [re.sub(r"`", "", r[0]) for r in rows]
            for r in rows:
                body.extend([".TP", line(inline(r[0]))])
                rest = [inline(c) if k == 1 else inline(head[k]) + ": " + inline(c)
                        for k, c in enumerate(r) if k >= 1 and k < len(head) and c]
                for k, c in enumerate(rest):
                    if k:
                        body.append(".br")
                    body.append(line(c))
        elif re.match(r"^\s*[-*] ", ln):
            flush()
            item = [re.sub(r"^\s*[-*] ", "", ln)]
            while i + 1 < len(lines) and lines[i + 1].startswith("  ") and lines[i + 1].strip():
                i += 1
                item.append(lines[i].strip())
            body.extend([".IP \\(bu 2", line(inline(" ".join(item)))])
        elif not ln.strip():
            flush()
        else:
            para.append(ln)
        i += 1
    flush()

    summary = re.split(r"(?<=\.)\s", first_para or title, maxsplit=1)[0].rstrip(".")
    summary = re.sub(r"[`*]", "", summary)
    out = ['.\\" Generated from docs/cli.md by cmake/md2man.py: edit that file, not this one.',
           '.TH "%s" "%s" "" "%s %s" "%s"' % (name.upper(), section, name, version, esc(title or name)),
           ".SH NAME", "%s \\- %s" % (name, esc(summary[:1].lower() + summary[1:])), ".SH SYNOPSIS"]
    for k, s in enumerate(synopsis or ["%s <command> [options]" % name]):
        if k:
            out.append(".br")
        out.append(line("\\fB" + esc(s) + "\\fR"))
    out.append('.SH "DESCRIPTION"')
    return "\n".join(out + body) + "\n"


def main():
    ap = argparse.ArgumentParser(description="markdown (docs/cli.md) to a man page")
    ap.add_argument("--name", required=True)
    ap.add_argument("--section", default="1")
    ap.add_argument("--version", default="")
    ap.add_argument("input")
    ap.add_argument("output")
    a = ap.parse_args()
    try:
        with open(a.input, encoding="utf-8") as f:
            md = f.read()
    except OSError as e:
        print("md2man: cannot read '%s': %s" % (a.input, e.strerror), file=sys.stderr)
        return 2
    with open(a.output, "w", encoding="utf-8") as f:
        f.write(convert(md, a.name, a.section, a.version))
    return 0


if __name__ == "__main__":
    sys.exit(main())
