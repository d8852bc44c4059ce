#!/usr/bin/env python3
"""Checks that every repository file name the comments, strings and docs give still exists.

A comment that still names a file after the file was split, renamed or moved into a folder
sends its reader to nothing. This check reads the comments and strings of the C, JS, Python,
shell and CMake files (the code between them is the compiler's to check) and the whole of the
README and docs/, and fails on each name that looks like one of ours but names nothing.

What looks like one of our names:
- A bare file name ending in one of our extensions (EXTENSIONS): `jobs.c`, `run.js`,
  `smtest.py`. It holds if some tracked file has that name.
- A path whose first folder is a top folder of the repository (`coordinator/analysis/table.h`,
  `tests/integration`), or a folder of ours anywhere and a name with one of our extensions
  (`api/internal.h`, `api/api_fixture.c`). It holds if it is a tracked file or folder, the
  tail of one (`store/jobs.c` of coordinator/store/jobs.c) or a module, a file without its
  extension (`proto/msg` of proto/msg.c and proto/msg.h).
- A path that starts with ./ or ../ is read from the folder of the file that holds it; a path
  after a variable (${SM_BIN_DIR}/sm-agent, $dir/lab.sh) is read as a tail.
What is not ours by its form, and is not checked:
- A name in angle brackets (<sys/socket.h>), a path starting with / (an installed file, or a
  path of the HTTP API), a web address, a ../ path that leads out of the repository, and a
  path whose first folder is no folder of ours (src/anet.c, lib/cf-socket.c: other projects').
- A place holder: a one-letter name (x.md, a.c), or an upper-case word the same line also uses
  alone (NAME of "sm_integration_test(NAME ...): tests/integration/NAME.py").
- A pattern: a name beside a * (*_int.h, proto/msg*.c).
Files made at build time (GENERATED) or by a test in a folder of its own (MADE), and file names
of other projects (OTHERS) hold too, each listed with its reason. The tests of the checks
(tests/test_check_*.py) and of the dashboard's lint (tests/web/unit/lint.test.mjs) are not
read: they plant names that do not exist on purpose.
Usage: check_names.py [ROOT] (the repository; by default the one this file is in)."""
import fnmatch
import os
import re
import subprocess
import sys

EXTENSIONS = ("c", "h", "js", "mjs", "py", "sh", "md", "cmake")
# Made by the build or by a tool, never tracked: each holds although git does not list it.
GENERATED = {
    "compile_commands.json": "CMake writes it into the build folder (.gitignore)",
    "docs/screenshots": "tests/web/test_web.py writes each view's screenshot there (.gitignore)",
    "web/node_modules": "npm ci installs it (web/package.json)",
    "tests/web/node_modules": "npm ci installs it (tests/web/package.json)",
}
# Names of other projects' files, cited as examples or as what we build on.
OTHERS = {
    "cmocka.h": "the cmocka library's header, which the unit tests include as <cmocka.h>",
    "Chart.js": "the chart library's name (web/node_modules/chart.js, from npm)",
}
# Made by a test at run time in a folder of its own: they name no file of the repository.
MADE = {
    "leak.js": "tests/integration/test_http_security.py links it into a temporary web folder",
    "test_spin.py": "tests/test_slowest.py writes it into a temporary folder",
}
# Not read: they plant names that do not exist on purpose.
NOT_READ = ("tests/test_check_*.py", "tests/web/unit/lint.test.mjs")

NAME_CHARS = r'[A-Za-z0-9_.+/-]'
TOKEN = re.compile(NAME_CHARS + r'+')
WEB = re.compile(r'\b[a-zA-Z][a-zA-Z0-9+.-]*://\S*|\bmailto:\S+|\b[\w.+-]+@[\w-]+\.[\w.-]+')
BARE = re.compile(r'^[A-Za-z0-9_][A-Za-z0-9_.+-]*\.(' + "|".join(EXTENSIONS) + r')$')
PLACE_HOLDER = re.compile(r'^[A-Za-z]\.[a-z]+$')
HEREDOC = re.compile(r'<<-?\s*([\'"]?)([A-Za-z_]\w*)\1')
# Where a comment or a string may start, by language: the rest is code, skipped at once.
MARKS = {"c": re.compile(r'[/"\']'), "js": re.compile(r'[/"\'`]'),
         "python": re.compile(r'[#"\']'), "shell": re.compile(r'[#"\'<\\]'),
         "cmake": re.compile(r'[#"]')}


def language(rel, first_line):
    base = os.path.basename(rel)
    ext = base.rpartition(".")[2] if "." in base else ""
    if ext in ("c", "h"):
        return "c"
    if ext in ("js", "mjs"):
        return "js"
    if ext == "py":
        return "python"
    if ext == "sh" or base == "Makefile" or re.match(r'#!.*\b(ba)?sh\b', first_line):
        return "shell"
    if base == "CMakeLists.txt" or ext == "cmake":
        return "cmake"
    if ext == "md" and (rel == "README.md" or rel.startswith("docs/")):
        return "markdown"
    return None


def blank(code):
    """The code as blanks, its line ends kept."""
    return re.sub(r'[^\n]', " ", code)


def quoted_end(text, i, quote, escapes=True, multiline=False):
    """The index just past the string whose opening quote is at i."""
    n = len(text)
    j = i + len(quote)
    while j < n:
        if escapes and text[j] == "\\":
            j += 2
            continue
        if text.startswith(quote, j):
            return j + len(quote)
        if text[j] == "\n" and not multiline:
            return j
        j += 1
    return n


def words(text, lang):
    """The text with everything but comments and strings blanked (line ends kept), and the
    quotes and comment marks blanked too."""
    if lang == "markdown":
        return text
    keep = []  # (start, end) of comment and string bodies
    n = len(text)
    i = 0
    last_code = ""  # the last non-blank code character, for a JS regular expression
    marks = MARKS[lang]
    while i < n:
        m = marks.search(text, i)
        if not m:
            break
        code = text[i:m.start()].rstrip()
        last_code = code[-1] if code else last_code
        i = m.start()
        c = text[i]
        two = text[i:i + 2]
        start = end = None
        if lang in ("c", "js") and two == "//":
            start, end = i + 2, text.find("\n", i)
            end = n if end < 0 else end
            stop = end
        elif lang in ("c", "js") and two == "/*":
            end = text.find("*/", i + 2)
            start, end, stop = i + 2, (n if end < 0 else end), (n if end < 0 else end + 2)
        elif lang == "cmake" and text.startswith("#[[", i):
            end = text.find("]]", i)
            start, end, stop = i + 3, (n if end < 0 else end), (n if end < 0 else end + 2)
        elif c == "#" and lang in ("python", "cmake", "shell") and (
                lang != "shell" or i == 0 or text[i - 1] in " \t\n;(|&"):
            start, end = i + 1, text.find("\n", i)
            end = n if end < 0 else end
            stop = end
        elif lang == "python" and text.startswith(('"""', "'''"), i):
            stop = quoted_end(text, i, text[i:i + 3], multiline=True)
            start, end = i + 3, max(i + 3, stop - 3)
        elif c == '"' or (c == "'" and lang in ("python", "shell", "js")) or (
                c == "`" and lang == "js"):
            multiline = lang in ("shell", "cmake") or c == "`"
            escapes = not (lang == "shell" and c == "'")
            stop = quoted_end(text, i, c, escapes=escapes, multiline=multiline)
            start, end = i + 1, max(i + 1, stop - 1)
        elif lang == "shell" and c == "\\":
            i += 2  # \" or \' in code quotes nothing
            continue
        elif lang == "shell" and HEREDOC.match(text, i):
            # A here-document is text to its delimiter's line: read it all.
            h = HEREDOC.match(text, i)
            body = text.find("\n", h.end())
            body = n if body < 0 else body + 1
            close = re.compile(r'^\t*' + re.escape(h.group(2)) + r'\s*$', re.M).search(text, body)
            start, end = body, (close.start() if close else n)
            stop = close.end() if close else n
        elif c == "'" and lang == "c":
            i = quoted_end(text, i, "'")
            last_code = "'"
            continue
        elif c == "/" and lang == "js" and (last_code == "" or last_code in "(,=:[!&|?{};+-*%<>~^"
                                            or re.search(r'\b(return|typeof|case)\s*$',
                                                         text[max(0, i - 12):i])):
            i = regex_end(text, i)
            last_code = "/"
            continue
        if start is None:
            if not c.isspace():
                last_code = c
            i += 1
            continue
        keep.append((start, end))
        i = stop
        last_code = '"'
    out = []
    pos = 0
    for start, end in keep:
        out += [blank(text[pos:start]), text[start:end]]
        pos = end
    out.append(blank(text[pos:]))
    return "".join(out)


def regex_end(text, i):
    """The index just past the JS regular expression literal opening at i."""
    j, n, cls = i + 1, len(text), False
    while j < n and text[j] != "\n":
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == "[":
            cls = True
        elif text[j] == "]":
            cls = False
        elif text[j] == "/" and not cls:
            return j + 1
        j += 1
    return j


class Tree:
    """The tracked files of the repository, their folders and the tails of both."""

    def __init__(self, root):
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True,
                             check=True).stdout.decode()
        self.files = [f for f in out.split("\0") if f]
        self.basenames = {os.path.basename(f) for f in self.files}
        self.paths = set()
        self.folder_names = set()
        self.top = set()
        for f in self.files + list(GENERATED):
            parts = f.split("/")
            if len(parts) > 1:
                self.top.add(parts[0])
            self.folder_names.update(parts[:-1])
            for a in range(len(parts)):
                for b in range(a + 1, len(parts) + 1):
                    self.paths.add("/".join(parts[a:b]))
        self.top.discard(".ci")

    def holds(self, path):
        """A tracked file or folder, a tail of one, or a module: proto/msg of proto/msg.c."""
        path = path.rstrip("/")
        parts = path.split("/")
        if any("/".join(parts[:k]) in GENERATED for k in range(1, len(parts) + 1)):
            return True
        return path in self.paths or (
            "." not in os.path.basename(path)
            and any(path + "." + ext in self.paths for ext in EXTENSIONS))


def check_token(tree, rel, tok, before, after, line):
    """The name tok of file rel if it looks like ours and names nothing, else None."""
    if before == "<" and after == ">":
        return None
    tok = re.sub(r'[.,:;-]+$', "", tok)
    name = tok
    if not tok or tok in OTHERS or tok in GENERATED or tok in MADE:
        return None
    if "*" in (before, after):
        return None  # a pattern: *_int.h, proto/msg*.c
    if before == "$" and "/" in tok:
        tok = tok.partition("/")[2]  # $dir/x: a tail
    elif tok.startswith("/"):
        if before in "})" and before:
            tok = tok.lstrip("/")  # ${DIR}/x or $(dirname "$0")/x: a tail
        else:
            return None
    if "/" not in tok:
        if not BARE.match(tok) or ".." in tok or PLACE_HOLDER.match(tok):
            return None
        return None if tok in tree.basenames else name
    if tok.startswith(("./", "../")):
        full = os.path.normpath(os.path.join(os.path.dirname(rel), tok))
        if full.startswith("../") or full == "..":
            return None
        if not BARE.match(os.path.basename(full)) and full.split("/")[0] not in tree.top:
            return None
        return None if tree.holds(full) or full in GENERATED else tok
    parts = [p for p in tok.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts) or "//" in tok:
        return None
    if parts[0] not in tree.top and not (parts[0] in tree.folder_names
                                         and BARE.match(parts[-1])):
        return None
    if PLACE_HOLDER.match(parts[-1]):
        return None
    stem = parts[-1].partition(".")[0]
    if stem.isupper() and re.search(r'(^|[^\w/])' + stem + r'($|[^\w/.])', line):
        return None  # NAME of tests/integration/NAME.py, a word the same line uses alone
    return None if tree.holds("/".join(parts)) else name


def check_file(root, tree, rel):
    path = os.path.join(root, rel)
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    lang = language(rel, text.split("\n", 1)[0])
    if lang is None:
        return None
    problems = []
    for no, line in enumerate(words(text, lang).split("\n"), 1):
        line = WEB.sub(lambda m: " " * len(m.group(0)), line)
        for m in TOKEN.finditer(line):
            if "/" not in m.group(0) and "." not in m.group(0):
                continue
            before = line[m.start() - 1] if m.start() else ""
            after = line[m.end()] if m.end() < len(line) else ""
            name = check_token(tree, rel, m.group(0), before, after, line)
            if name:
                problems.append(f"{rel}:{no}: {name}")
    return problems


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    root = os.path.abspath(root)
    tree = Tree(root)
    read = 0
    problems = []
    for rel in tree.files:
        if any(fnmatch.fnmatch(rel, p) for p in NOT_READ):
            continue
        if not os.path.isfile(os.path.join(root, rel)):
            continue
        found = check_file(root, tree, rel)
        if found is not None:
            read += 1
            problems += found
    for p in problems:
        print(p)
    print(f"check_names: {read} files, {len(problems)} problems")
    return 1 if problems or not read else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
