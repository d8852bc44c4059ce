#!/usr/bin/env python3
"""Checks that includes run one way between the project's parts and the coordinator's rooms.

Rules, each a failure with the file, line and include named:
- proto/ includes nothing of agent/ or coordinator/; agent/ nothing of coordinator/.
- A coordinator room includes only rooms below it in ROOMS (and proto/); cli/ only CLI_USES.
- An agent room includes only rooms of a lower level in AGENT_LEVELS, never one beside it;
  agent/main.c is the only file at agent/'s top.
- A private header (internal.h, *_internal.h, *_int.h) is included only from its own folder
  (and from tests/, which may reach into what they test).
- No public header outside proto/ includes cJSON (<cjson/cJSON.h>, or a header that includes
  it, such as proto/json.h): cJSON stays behind proto/json.h and the codecs.
- cJSON is included and named in code only where JSON is parsed and built (docs/design.md,
  "Where JSON is parsed"): JSON_DIRS and JSON_FILES; anywhere else, including <cjson/cJSON.h>
  or a header that includes it, or naming cJSON outside comments and strings, fails.
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
AGENT_LEVELS = [["once", "fleet"], ["runner", "experiment"], ["workloads", "host"],
                ["net", "measure", "spool", "session"]]
AGENT_LEVEL = {room: i for i, level in enumerate(AGENT_LEVELS) for room in level}
AGENT_TOP = {"main.c", "CMakeLists.txt"}
INCLUDE = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]')
PRIVATE = re.compile(r'(^|/)(internal|[a-z0-9_]+_internal|[a-z0-9_]+_int)\.h$')
SOURCE_DIRS = ("proto", "agent", "coordinator", "bench", "testkit", "tests/unit", "tests/fuzz",
               "tests/tools")
# Where cJSON may be used: the wire's codecs; the API's documents, its handlers, the exports and
# the run specs; the tests, which build and read the JSON they check.
JSON_DIRS = ("proto/", "coordinator/schema/", "coordinator/api/", "coordinator/analysis/",
             "coordinator/model/", "tests/")
# The CLI's views of the API's answers and the bodies it sends (apiview.h, public, hands out no
# cJSON); the --spec file read and checked, for the line and column cJSON stops at.
JSON_FILES = re.compile(r"^coordinator/cli/(apiview(_[a-z0-9]+)?\.c|apiview_internal\.h|"
                        r"specfile\.c)$")
JSON_RULE = ("cJSON is used only in proto/, coordinator/{api,schema,analysis,model}/, the CLI's "
             "apiview*.c and specfile.c, and tests/ (docs/design.md, \"Where JSON is parsed\")")
CJSON_NAME = re.compile(r"\bcJSON\w*")
# Comments, string and character literals: what the search for cJSON in code skips.
NOT_CODE = re.compile(r'//[^\n]*|/\*.*?\*/|"(\\.|[^"\\\n])*"|\'(\\.|[^\'\\\n])*\'', re.S)


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


def json_allowed(rel):
    """Whether file rel may include and use cJSON."""
    return rel.startswith(JSON_DIRS) or bool(JSON_FILES.match(rel))


def includes(root, rel):
    """(line number, kind '<' or '"', include as written, the file it names or None) of rel."""
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        lines = f.readlines()
    out = []
    for no, line in enumerate(lines, 1):
        m = INCLUDE.match(line)
        if not m:
            continue
        kind, inc = m.groups()
        target = None
        if kind == '"':
            # From the top of the repository, as the project spells them, or from rel's folder.
            for cand in (inc, os.path.join(os.path.dirname(rel), inc)):
                if os.path.isfile(os.path.join(root, cand)):
                    target = os.path.normpath(cand)
                    break
        out.append((no, kind, inc, target))
    return out


def is_cjson(inc):
    """Whether the include is cJSON's own header (<cjson/cJSON.h>, however it is spelled)."""
    stem, ext = os.path.splitext(os.path.basename(inc))
    return stem.lower() == "cjson" and ext == ".h"


def cjson_headers(root, rels):
    """The headers among rels that hand out cJSON: they include it, or a header that does."""
    incs = {rel: includes(root, rel) for rel in rels if rel.endswith(".h")}
    found = set()
    while True:
        more = {rel for rel, lst in incs.items() if rel not in found and any(
            is_cjson(i) or t in found for _, _, i, t in lst)}
        if not more:
            return found
        found |= more


def code_uses_cjson(root, rel):
    """(first line, count of lines) where rel names cJSON outside comments, strings and
    #include lines; None when it does not."""
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        text = f.read()
    # Comments and literals blanked, their line ends kept, so that line numbers still hold.
    code = NOT_CODE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    hits = [no for no, line in enumerate(code.split("\n"), 1)
            if CJSON_NAME.search(line) and not INCLUDE.match(line)]
    return (hits[0], len(hits)) if hits else None


def check_file(root, rel, cjson_hdrs=frozenset()):
    problems = []
    part = rel.split("/")[0]
    room = room_of(rel)
    is_public_header = rel.endswith(".h") and not PRIVATE.search(rel)
    allowed = json_allowed(rel)
    for no, kind, inc, target in includes(root, rel):
        where = f"{rel}:{no}: #include {kind}{inc}{'>' if kind == '<' else chr(34)}"
        if is_cjson(inc) or target in cjson_hdrs:
            if not allowed:
                problems.append(f"{where}: {JSON_RULE}")
            elif is_public_header and part != "proto":
                problems.append(f"{where}: a public header hands out cJSON (keep it behind "
                                "proto/json.h)")
        if kind == "<":
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
    use = None if allowed else code_uses_cjson(root, rel)
    if use:
        lines = "" if use[1] == 1 else f" (and {use[1] - 1} more lines)"
        problems.append(f"{rel}:{use[0]}: names cJSON in code{lines}: {JSON_RULE}")
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
    rels = list(files(root))
    hdrs = cjson_headers(root, rels)
    for rel in rels:
        problems += check_file(root, rel, hdrs)
        checked += 1
    for p in problems:
        print(p)
    print(f"check_includes: {checked} files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
