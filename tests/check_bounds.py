#!/usr/bin/env python3
"""Checks the bounds a newcomer relies on to find their way in the tree.

Rules, each a failure naming the file:
- No C source or header of ours (proto/, agent/, coordinator/, bench/, testkit/, tests/) is over
  MAX_C_LINES lines: a file that grows past it holds more than one idea and is split.
- The unit tests mirror the tree: a folder under tests/unit/ is the path of a folder of ours
  (tests/unit/coordinator/store/ tests coordinator/store/), or a data folder (DATA_DIRS) of
  one; only the helpers every unit test may use sit at tests/unit/'s top (UNIT_TOP).
Usage: check_bounds.py [ROOT] (the repository; by default the one this file is in)."""
import os
import subprocess
import sys

MAX_C_LINES = 800
C_DIRS = ("proto/", "agent/", "coordinator/", "bench/", "testkit/", "tests/")
UNIT = "tests/unit/"
UNIT_TOP = {"testutil.h"}
DATA_DIRS = {"golden"}


def tracked(root):
    """The repository's tracked files, relative to root."""
    out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True,
                         check=True, timeout=60).stdout.decode()
    return [rel for rel in out.split("\0") if rel and os.path.isfile(os.path.join(root, rel))]


def check(root):
    """The problems of the tree at root, one line each."""
    files = tracked(root)
    problems = []
    for rel in files:
        if rel.endswith((".c", ".h")) and rel.startswith(C_DIRS):
            with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                n = sum(1 for _ in f)
            if n > MAX_C_LINES:
                problems.append(f"{rel}: {n} lines, over {MAX_C_LINES}: split it by what its "
                                "parts do")
    for rel in files:
        if not rel.startswith(UNIT):
            continue
        folder, name = os.path.split(rel[len(UNIT):])
        if not folder:
            if name not in UNIT_TOP:
                problems.append(f"{rel}: a unit test sits in the folder of what it tests "
                                f"({UNIT}<part>/<room>/), not at {UNIT}'s top")
            continue
        parts = folder.split("/")
        while parts and parts[-1] in DATA_DIRS:
            parts.pop()
        if not parts or not os.path.isdir(os.path.join(root, *parts)):
            problems.append(f"{rel}: {UNIT}{folder}/ mirrors no folder of the tree "
                            f"({'/'.join(parts) or '(none)'}/ does not exist)")
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    problems = check(root)
    for p in problems:
        print(p)
    print(f"check_bounds: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
