#!/usr/bin/env python3
"""Checks that every link of the README and docs/ to a path leads to a file of the repository.

Rules, each a failure with the file, line and link named:
- A link to a relative path (`[text](docs/x.md)`, `![img](docs/x.png)`) names a file or folder
  that exists, resolved from the folder of the Markdown file that holds it.
- It stays inside the repository: no `../` out of it, no absolute path (`/home/...`) and no
  `file:` address. A reader of the repository has only the repository.
- A link with a heading (`docs/x.md#some-heading`, or `#some-heading` in the same file) names
  a heading the Markdown file has, as GitHub makes its anchors.
Addresses on the web (http:, https:, mailto:) are not checked: they need the network.
Inline code and fenced code blocks are skipped: a link in them is an example, not a link.
Usage: check_links.py [ROOT] (the repository; by default the one this file is in)."""
import os
import re
import sys

# [text](target) and ![alt](target); target up to a space (an optional "title" follows) or ")".
LINK = re.compile(r'!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)')
# [label]: target, a reference definition.
REF_DEF = re.compile(r'^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$')
FENCE = re.compile(r'^\s{0,3}(```+|~~~+)')
CODE_SPAN = re.compile(r'(`+)(?:.+?)\1')
HEADING = re.compile(r'^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$')
WEB = re.compile(r'^[a-zA-Z][a-zA-Z0-9+.-]*:')


def markdown_files(root):
    """README.md at the top and every Markdown file under docs/, as paths from root."""
    files = []
    if os.path.exists(os.path.join(root, "README.md")):
        files.append("README.md")
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, "docs")):
        dirnames[:] = sorted(d for d in dirnames if d != "node_modules")
        for name in sorted(filenames):
            if name.endswith(".md"):
                files.append(os.path.relpath(os.path.join(dirpath, name), root))
    return files


def prose_lines(text, blank_code=True):
    """(line number, line) of the lines outside fenced code, with inline code blanked out
    unless blank_code is false."""
    fence = None
    for no, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m:
            mark = m.group(1)
            if fence is None:
                fence = mark[0] * len(mark)
                continue
            if mark.startswith(fence):
                fence = None
                continue
        if fence is None:
            yield no, CODE_SPAN.sub(lambda s: " " * len(s.group(0)), line) if blank_code else line


def slug(heading):
    """GitHub's anchor of a heading: lower case, inline markup and punctuation dropped,
    spaces made hyphens."""
    text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', heading)  # a link keeps its text
    text = text.replace("`", "").lower()
    text = re.sub(r'[^\w\- ]', "", text)
    return text.replace(" ", "-")


def anchors(path):
    """Every heading anchor of a Markdown file; a repeated heading gets -1, -2..."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    seen = {}
    out = set()
    for _, line in prose_lines(text, blank_code=False):
        m = HEADING.match(line)
        if not m:
            continue
        s = slug(m.group(1))
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else f"{s}-{n}")
    return out


def check_link(root, rel, target, cache):
    """The problem with one link target of file rel, or None."""
    if not target or WEB.match(target) and not target.lower().startswith("file:"):
        return None
    if target.lower().startswith("file:"):
        return "a file: address; link to a file of the repository by its relative path"
    path, _, anchor = target.partition("#")
    if path.startswith("/"):
        return "an absolute path; link to a file of the repository by its relative path"
    here = os.path.dirname(os.path.join(root, rel))
    full = os.path.normpath(os.path.join(here, path)) if path else os.path.join(root, rel)
    top = os.path.normpath(root)
    if os.path.commonpath([top, full]) != top:
        return "leads out of the repository"
    if not os.path.exists(full):
        return "no such file in the repository"
    if anchor and full.endswith(".md") and os.path.isfile(full):
        if full not in cache:
            cache[full] = anchors(full)
        if anchor not in cache[full]:
            return f"{os.path.relpath(full, top)} has no heading '#{anchor}'"
    return None


def check_file(root, rel, cache):
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        text = f.read()
    problems = []
    for no, line in prose_lines(text):
        targets = [m.group(1) for m in LINK.finditer(line)]
        m = REF_DEF.match(line)
        if m:
            targets.append(m.group(1))
        for target in targets:
            why = check_link(root, rel, target, cache)
            if why:
                problems.append(f"{rel}:{no}: ({target}): {why}")
    return problems


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    root = os.path.abspath(root)
    files = markdown_files(root)
    cache = {}
    problems = []
    for rel in files:
        problems += check_file(root, rel, cache)
    for p in problems:
        print(p)
    print(f"check_links: {len(files)} files, {len(problems)} problems")
    return 1 if problems or not files else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
