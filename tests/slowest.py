"""The slowest ctest entries of one or more runs, from the JUnit files ctest wrote
(ctest --output-junit FILE): what make test prints at its end.

    python3 tests/slowest.py [-n 10] [--wall PHASE=SECONDS ...] [--cpu LABEL=CPU.tsv ...]
                             LABEL=JUNIT.xml ...

LABEL names the build (gcc, asan); a label given twice (the gcc build's two ctest runs) is
counted as one. --wall names a phase of the run and its wall time, printed after the sums of
the tests' times (which exceed it when tests ran side by side). A file that is missing (that
run did not happen) is said and skipped. --cpu reads the CPU seconds the Python test files
logged (tests/integration/smrun.py, SM_CPU_LOG): each listed test shows its CPU time beside its
wall time, and the tests that took the most CPU are listed too: in a phase where both CPUs are
busy, those are what its wall time is made of."""
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


def cpu_seconds(path):
    """{name: user + system seconds} of a CPU log; a line that does not parse is skipped."""
    out = {}
    with open(path) as f:
        for line in f:
            try:
                name, user, system = line.rstrip("\n").split("\t")
                out[name] = out.get(name, 0.0) + float(user) + float(system)
            except ValueError:
                continue
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=10, help="how many to list (default 10)")
    ap.add_argument("--wall", action="append", default=[], metavar="PHASE=SECONDS",
                    help="a phase's wall time, printed at the end (repeatable)")
    ap.add_argument("--cpu", action="append", default=[], metavar="LABEL=CPU.tsv",
                    help="a build's CPU log (repeatable)")
    ap.add_argument("runs", nargs="+", metavar="LABEL=JUNIT.xml")
    a = ap.parse_args(argv)
    cpu = {}
    for spec in a.cpu:
        label, _, path = spec.partition("=")
        if os.path.isfile(path):
            cpu.update({(label, n): s for n, s in cpu_seconds(path).items()})
    rows, labels, missing = [], {}, []
    for spec in a.runs:
        label, _, path = spec.partition("=")
        labels.setdefault(label, [])
        if not os.path.isfile(path):
            missing.append(f"  {label}: {path} is missing (that run did not happen)")
            continue
        mine = [(secs, label, name, status) for name, secs, status in cases(path)]
        rows += mine
        labels[label] += mine
    print(f"\nThe {a.n} slowest tests:")
    for secs, label, name, status in sorted(rows, reverse=True)[:a.n]:
        extra = "" if status == "passed" else f"  ({status})"
        used = f"  CPU {cpu[label, name]:6.1f} s" if (label, name) in cpu else ""
        print(f"  {secs:8.1f} s  {label:5} {name}{used}{extra}")
    for label, mine in labels.items():
        if mine:
            print(f"  {label}: {len(mine)} tests, {sum(r[0] for r in mine):.0f} s of test time")
    if cpu:
        print(f"The {a.n} Python test files that took the most CPU (user + system, with the "
              "processes they started):")
        for (label, name), secs in sorted(cpu.items(), key=lambda kv: -kv[1])[:a.n]:
            print(f"  {secs:8.1f} s  {label:5} {name}")
        for label in labels:
            mine = [s for (lab, _), s in cpu.items() if lab == label]
            if mine:
                print(f"  {label}: {len(mine)} files, {sum(mine):.0f} CPU-s")
    for line in missing:
        print(line)
    for spec in a.wall:
        phase, _, secs = spec.rpartition("=")
        print(f"  {phase}: {int(secs) // 60} min {int(secs) % 60:02d} s wall")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
