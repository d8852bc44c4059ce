"""Runs test files as ctest should see them: `python3 smrun.py MODULE...` in the folder that
holds the modules (unittest's own arguments, -v and -k, pass through).

Exit status: 1 when a test failed or errored; 77 (the tests' SKIP_RETURN_CODE in
tests/CMakeLists.txt) when none failed but any was skipped, so that ctest reports the file as
skipped and a green run means every test in it ran; 0 when all ran and passed. The skips are
listed at the end with their reasons, so that the log says which tests did not run and why.
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


def main(argv):
    sys.path.insert(0, os.getcwd())
    runner = unittest.TextTestRunner(resultclass=TimedResult, verbosity=2 if "-v" in argv else 1)
    prog = unittest.main(module=None, argv=[argv[0], *argv[1:]], testRunner=runner, exit=False)
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
