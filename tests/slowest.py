"""The slowest ctest entries of one or more runs, from the JUnit files ctest wrote
(ctest --output-junit FILE): what make test prints at its end.

    python3 tests/slowest.py [-n 10] LABEL=JUNIT.xml[:WALL_SECONDS] ...

LABEL names the build (gcc, asan); WALL_SECONDS, when given, is the wall time of that ctest
run, printed beside the sum of its tests' times (which exceeds it when tests ran side by
side). A file that is missing (that half did not run) is said and skipped."""
import argparse
import os
import sys
import xml.etree.ElementTree as ET


def cases(path):
    """(name, seconds, status) of every test in a ctest JUnit file."""
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.iter("testsuite")
    for suite in suites:
        for case in suite.iter("testcase"):
            status = case.get("status", "run")
            if case.find("failure") is not None:
                status = "failed"
            elif case.find("skipped") is not None or status == "notrun":
                status = "skipped/not run"
            else:
                status = "passed" if status == "run" else status
            yield case.get("name"), float(case.get("time") or 0), status


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=10, help="how many to list (default 10)")
    ap.add_argument("runs", nargs="+", metavar="LABEL=JUNIT.xml[:WALL_SECONDS]")
    a = ap.parse_args(argv)
    rows, totals = [], []
    for spec in a.runs:
        label, _, rest = spec.partition("=")
        path, _, wall = rest.partition(":")
        if not os.path.isfile(path):
            totals.append(f"  {label}: did not run (no {path})")
            continue
        mine = [(secs, label, name, status) for name, secs, status in cases(path)]
        rows += mine
        line = f"  {label}: {len(mine)} tests, {sum(r[0] for r in mine):.0f} s of test time"
        if wall:
            line += f", {int(wall) // 60} min {int(wall) % 60:02d} s wall"
        totals.append(line)
    print(f"\nThe {a.n} slowest tests:")
    for secs, label, name, status in sorted(rows, reverse=True)[:a.n]:
        extra = "" if status == "passed" else f"  ({status})"
        print(f"  {secs:8.1f} s  {label:5} {name}{extra}")
    print("\n".join(totals))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
