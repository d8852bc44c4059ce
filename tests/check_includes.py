#!/usr/bin/env python3
"""Checks that includes run one way between the project's parts and the coordinator's rooms.

Rules, each a failure with the file, line and include named:
- proto/ includes nothing of agent/ or coordinator/; agent/ nothing of coordinator/.
- A coordinator room includes only rooms below it in ROOMS (and proto/); cli/ only CLI_USES.
- An agent room includes only rooms of a lower level in AGENT_LEVELS, never one beside it;
  agent/main.c is the only file at agent/'s top.
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
# The agent's rooms by level, top first: a room may include the rooms of the levels after its
# own, never one of its own level or above (the two front ends do not know each other).
AGENT_LEVELS = [["once", "fleet"], ["runner"], ["workloads", "host"],
                ["net", "measure", "spool", "session"]]
AGENT_LEVEL = {room: i for i, level in enumerate(AGENT_LEVELS) for room in level}
AGENT_TOP = {"main.c", "CMakeLists.txt"}
INCLUDE = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]')
PRIVATE = re.compile(r'(^|/)(internal|[a-z0-9_]+_internal|[a-z0-9_]+_int)\.h$')
SOURCE_DIRS = ("proto", "agent", "coordinator", "bench", "testkit", "tests/unit", "tests/fuzz",
               "tests/tools")


def room_of(path):
    """'coordinator/api/x.c' -> 'api'; None outside the coordinator's rooms."""
    parts = path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "coordinator" else None


def agent_room_of(path):
    """'agent/host/items.c' -> 'host'; None outside the agent's rooms."""
    parts = path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "agent" else None


def agent_order(where, room, target_room):
    """The problem with agent room `room` including `target_room`, or None."""
    if target_room == room:
        return None
    if room not in AGENT_LEVEL or target_room not in AGENT_LEVEL:
        return f"{where}: agent/{room}/ or agent/{target_room}/ is not a known room"
    if AGENT_LEVEL[target_room] == AGENT_LEVEL[room]:
        return (f"{where}: agent/{room}/ and agent/{target_room}/ sit side by side and may not "
                "include each other")
    if AGENT_LEVEL[target_room] < AGENT_LEVEL[room]:
        return f"{where}: agent/{room}/ is below agent/{target_room}/ and may not include it"
    return None


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
        agent_room, agent_target = agent_room_of(rel), agent_room_of(inc)
        if agent_room and agent_target:
            problem = agent_order(where, agent_room, agent_target)
            if problem:
                problems.append(problem)
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
    agent = os.path.join(root, "agent")
    for n in sorted(os.listdir(agent)):
        if os.path.isdir(os.path.join(agent, n)):
            if n not in AGENT_LEVEL:
                problems.append(f"agent/{n}/: a room not in check_includes.py's order")
        elif n not in AGENT_TOP:
            problems.append(f"agent/{n}: only main.c sits at agent/'s top; put it in its room")
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
