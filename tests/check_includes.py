#!/usr/bin/env python3
"""Checks that includes run one way between the project's parts and the coordinator's rooms.

Rules, each a failure with the file, line and include named:
- proto/ includes nothing of agent/ or coordinator/; agent/ nothing of coordinator/.
- A coordinator room includes only rooms below it in ROOMS (and proto/); cli/ only CLI_USES.
- A private header (internal.h, *_internal.h, *_int.h) is included only from its own folder
  (and from tests/, which may reach into what they test).
- No public header outside proto/ includes <cjson/cJSON.h>: cJSON stays behind proto/json.h
  and the codecs.
Usage: check_includes.py [ROOT] (the repository; by default the one this file is in)."""
import os
import re
import sys

# Top to bottom: a room may include the rooms after it, never one before it.
ROOMS = ["server", "api", "recurring", "control", "reports", "store", "schema", "analysis",
         "model"]
CLI_USES = {"cli", "schema", "analysis", "model"}
INCLUDE = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]')
PRIVATE = re.compile(r'(^|/)(internal|[a-z0-9_]+_internal|[a-z0-9_]+_int)\.h$')
SOURCE_DIRS = ("proto", "agent", "coordinator", "bench", "tests/unit", "tests/fuzz",
               "tests/tools")


def room_of(path):
    """'coordinator/api/x.c' -> 'api'; None outside the coordinator's rooms."""
    parts = path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "coordinator" else None


def check_file(root, rel):
    problems = []
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        lines = f.readlines()
    part = rel.split("/")[0]
    room = room_of(rel)
    is_public_header = rel.endswith(".h") and not PRIVATE.search(rel)
    for no, line in enumerate(lines, 1):
        m = INCLUDE.match(line)
        if not m:
            continue
        kind, inc = m.groups()
        where = f"{rel}:{no}: #include {kind}{inc}{'>' if kind == '<' else chr(34)}"
        if kind == "<":
            if inc == "cjson/cJSON.h" and is_public_header and part != "proto":
                problems.append(f"{where}: a public header hands out cJSON (keep it behind "
                                "proto/json.h)")
            continue
        target_part = inc.split("/")[0]
        if part == "proto" and target_part in ("agent", "coordinator"):
            problems.append(f"{where}: proto/ includes nothing of agent/ or coordinator/")
        if part == "agent" and target_part == "coordinator":
            problems.append(f"{where}: agent/ includes nothing of coordinator/")
        if (PRIVATE.search(inc) and os.path.dirname(inc) != os.path.dirname(rel)
                and part != "tests"):
            problems.append(f"{where}: a private header of {os.path.dirname(inc)}/ used "
                            "outside its folder")
        target_room = room_of(inc)
        if room and target_room and target_room != room:
            if room == "cli":
                if target_room not in CLI_USES:
                    problems.append(f"{where}: cli/ uses only {', '.join(sorted(CLI_USES))}")
            elif target_room == "cli":
                problems.append(f"{where}: only cli/ includes cli/")
            elif target_room not in ROOMS or room not in ROOMS:
                problems.append(f"{where}: {room} or {target_room} is not a known room")
            elif ROOMS.index(target_room) < ROOMS.index(room):
                problems.append(f"{where}: {room}/ is below {target_room}/ and may not "
                                "include it")
    return problems


def files(root):
    for top in SOURCE_DIRS:
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for n in sorted(names):
                if n.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(dirpath, n), root)


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                      "..")
    known = {d for d in os.listdir(os.path.join(root, "coordinator"))
             if os.path.isdir(os.path.join(root, "coordinator", d))}
    problems = []
    for d in sorted(known - set(ROOMS) - {"cli"}):
        problems.append(f"coordinator/{d}/: a room not in check_includes.py's order")
    checked = 0
    for rel in files(root):
        problems += check_file(root, rel)
        checked += 1
    for p in problems:
        print(p)
    print(f"check_includes: {checked} files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
