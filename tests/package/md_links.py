#!/usr/bin/env python3
"""Every relative link of every Markdown file installed under ROOT resolves to a file installed under ROOT.
  md_links.py ROOT [FILE.md...]
With FILEs (relative to ROOT), only those are checked, their links still against ROOT (the source's pages).
A link is [text](target), ![alt](target) or a reference definition "[id]: target", outside code spans and fenced
blocks; a target with a scheme (https:, mailto:) is not checked. The target's path, relative to the file's
directory, must name a file under ROOT (not above it: what the package did not install is not there for its
user); its #fragment, if any, must be a heading (GitHub's anchor for it) or an <a id/name> of the .md file it
names. Prints one line per dead link; exit 1 if any, or if ROOT holds no .md file (nothing checked is no pass).
"""
import os
import re
import sys
import urllib.parse

FENCE = re.compile(r"^ {0,3}(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+[\"'(][^)]*)?\)")
REFDEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s[^>]*\b(?:id|name)\s*=\s*[\"']([^\"']+)[\"']", re.I)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def prose_lines(path):
    """(line number, text) of each line outside fenced code blocks, code spans blanked."""
    fence = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = FENCE.match(line)
            if m:
                if fence is None:
                    fence = m.group(1)
                elif m.group(1) == fence:
                    fence = None
                continue
            if fence is None:
                yield n, CODE_SPAN.sub(lambda s: " " * len(s.group(0)), line.rstrip("\n"))


def slug(text):
    """GitHub's anchor of a heading: its text (link targets and markup dropped), lower case, punctuation but '-'
    and '_' removed, each space a '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text).replace("`", "")
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        seen, found = {}, set()
        fence = None
        with open(path, encoding="utf-8") as f:
            for line in f:
                m = FENCE.match(line)
                if m:
                    fence = m.group(1) if fence is None else (None if m.group(1) == fence else fence)
                    continue
                if fence is not None:
                    continue
                found.update(HTML_ANCHOR.findall(line))
                h = HEADING.match(line)
                if h:
                    s = slug(h.group(2))
                    k = seen.get(s, 0)
                    seen[s] = k + 1
                    found.add(s if k == 0 else f"{s}-{k}")
        cache[path] = found
    return cache[path]


def main():
    if len(sys.argv) < 2 or not os.path.isdir(sys.argv[1]):
        sys.exit(__doc__.strip())
    root = os.path.realpath(sys.argv[1])
    if len(sys.argv) > 2:
        docs = [os.path.join(root, f) for f in sys.argv[2:]]
    else:
        docs = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".md"))
    if not docs:
        print(f"md_links: no .md file under {root}")
        return 1
    dead = links = 0
    for doc in docs:
        rel = os.path.relpath(doc, root)
        for n, line in prose_lines(doc):
            targets = [m.group(1) for m in INLINE.finditer(line)]
            m = REFDEF.match(line)
            if m:
                targets.append(m.group(1))
            for t in targets:
                t = t.strip("<>")
                if SCHEME.match(t):
                    continue
                links += 1
                path, _, frag = t.partition("#")
                path = urllib.parse.unquote(path)
                dest = os.path.realpath(os.path.join(os.path.dirname(doc), path)) if path else doc
                why = None
                if os.path.commonpath([root, dest]) != root:
                    why = "outside the installed tree"
                elif not os.path.isfile(dest):
                    why = "no such file installed"
                elif frag and dest.endswith(".md") and urllib.parse.unquote(frag) not in anchors(dest):
                    why = f"{os.path.relpath(dest, root)} has no heading #{frag}"
                if why:
                    print(f"md_links: {rel}:{n}: ({t}): {why}")
                    dead += 1
    print(f"md_links: {len(docs)} .md file(s), {links} relative link(s), {dead} dead")
    return 1 if dead else 0


if __name__ == "__main__":
    sys.exit(main())
