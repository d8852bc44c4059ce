"""Runs test files as ctest should see them: `python3 smrun.py MODULE...` in the folder that
holds the modules (unittest's own arguments, -v and -k, pass through).

Exit status: 1 when a test failed or errored; 77 (the tests' SKIP_RETURN_CODE in
tests/CMakeLists.txt) when none failed but any was skipped, so that ctest reports the file as
skipped and a green run means every test in it ran; 0 when all ran and passed. The skips are
listed at the end with their reasons, so that the log says which tests did not run and why.
`--part netns` runs only the tests of the classes marked @netns (smtest.py: they change the
root network namespace), `--part loopback` only the others: ctest runs a file that has both in
two entries, the first holding the root network's lock. Without --part, every test runs.
Each test's wall time is listed too, slowest first, so that a slow file says where its time
goes (class set-ups, a lab or a fleet shared by a class's tests, count in their first test's
time)."""
import os
import sys
import time
import unittest

SKIPPED = 77


class TimedResult(unittest.TextTestResult):
    """Keeps each test's wall time, from its start (its class's set-up before it included) to
    its end."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.times = []
        self._last = time.monotonic()

    def stopTest(self, test):
        super().stopTest(test)
        now = time.monotonic()
        self.times.append((now - self._last, test.id()))
        self._last = now


def part_of(test):
    return "netns" if getattr(type(test), "sm_netns", False) else "loopback"


def only(suite, part):
    """The suite with only the tests of part (a module that failed to load stays, to fail)."""
    kept = unittest.TestSuite()
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            sub = only(t, part)
            if sub.countTestCases():
                kept.addTest(sub)
        elif part_of(t) == part or type(t).__module__ == "unittest.loader":
            kept.addTest(t)
    return kept


class Loader(unittest.TestLoader):
    part = None

    def loadTestsFromNames(self, names, module=None):
        suite = super().loadTestsFromNames(names, module)
        return only(suite, self.part) if self.part else suite


def main(argv):
    sys.path.insert(0, os.getcwd())
    args = list(argv[1:])
    loader = Loader()
    if "--part" in args:
        i = args.index("--part")
        loader.part = args[i + 1]
        if loader.part not in ("netns", "loopback"):
            sys.exit(f"smrun.py: --part netns or --part loopback, not {loader.part!r}")
        del args[i:i + 2]
    runner = unittest.TextTestRunner(resultclass=TimedResult, verbosity=2 if "-v" in args else 1)
    prog = unittest.main(module=None, argv=[argv[0], *args], testRunner=runner,
                         testLoader=loader, exit=False)
    if loader.part and not prog.result.testsRun:
        print(f"smrun.py: no test of part {loader.part} in {args}", file=sys.stderr)
        return 1
    result = prog.result
    if result.times:
        print("\nseconds per test, slowest first (a class's set-up in its first test's):",
              file=sys.stderr)
        for secs, name in sorted(result.times, reverse=True):
            print(f"  {secs:7.1f}  {name}", file=sys.stderr)
    if not result.wasSuccessful():
        return 1
    if result.skipped:
        print(f"\nSKIPPED {len(result.skipped)} of {result.testsRun} tests:", file=sys.stderr)
        for test, reason in result.skipped:
            print(f"  {test.id()}: {reason}", file=sys.stderr)
        return SKIPPED
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
