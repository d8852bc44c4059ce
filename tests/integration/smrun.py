"""Runs test files as ctest should see them: `python3 smrun.py MODULE...` in the folder that
holds the modules (unittest's own arguments, -v and -k, pass through).

Exit status: 1 when a test failed or errored; 77 (the tests' SKIP_RETURN_CODE in
tests/CMakeLists.txt) when none failed but any was skipped, so that ctest reports the file as
skipped and a green run means every test in it ran; 0 when all ran and passed. The skips are
listed at the end with their reasons, so that the log says which tests did not run and why."""
import os
import sys
import unittest

SKIPPED = 77


def main(argv):
    sys.path.insert(0, os.getcwd())
    prog = unittest.main(module=None, argv=[argv[0], *argv[1:]], exit=False)
    result = prog.result
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
