"""make test's end lines: tests/slowest.py reads ctest's JUnit files and the CPU logs that
tests/integration/smrun.py writes, and smrun.py logs the CPU of a test file's own process and
of the processes it started."""
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SLOWEST = os.path.join(HERE, "slowest.py")
SMRUN = os.path.join(HERE, "integration", "smrun.py")

JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="x" tests="3">
  <testcase name="test_a" classname="test_a" time="30.5" status="run"/>
  <testcase name="test_b" classname="test_b" time="120.0" status="run"><failure/></testcase>
  <testcase name="unit_c" classname="unit_c" time="2.0" status="run"/>
</testsuite>
"""


class SlowestTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="sm-slowest-")
        self.addCleanup(shutil.rmtree, self.dir)

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def slowest(self, *args):
        r = subprocess.run([sys.executable, SLOWEST, *args], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_lists_the_slowest_with_their_cpu_and_the_most_cpu(self):
        junit = self.write("junit.xml", JUNIT)
        # test_a ran twice in the log (a second ctest run of it): its CPU adds up; a torn
        # line is skipped.
        cpu = self.write("cpu.tsv", "test_a\t10.0\t2.5\ntest_b\t1.0\t1.0\ntest_a\t0.5\t0.0\n"
                                    "torn\t1\n")
        out = self.slowest("-n", "2", "--wall", "side by side=545", "--cpu", f"gcc={cpu}",
                           f"gcc={junit}")
        lines = out.splitlines()
        i = lines.index("The 2 slowest tests:")
        self.assertEqual(lines[i + 1].split(), ["120.0", "s", "gcc", "test_b", "CPU", "2.0",
                                                "s", "(failed)"])
        self.assertEqual(lines[i + 2].split(), ["30.5", "s", "gcc", "test_a", "CPU", "13.0",
                                                "s"])
        self.assertIn("  gcc: 3 tests, 152 s of test time", lines)
        j = next(k for k, line in enumerate(lines) if line.startswith("The 2 Python test files"))
        self.assertEqual(lines[j + 1].split(), ["13.0", "s", "gcc", "test_a"])
        self.assertEqual(lines[j + 2].split(), ["2.0", "s", "gcc", "test_b"])
        self.assertIn("  gcc: 2 files, 15 CPU-s", lines)
        self.assertEqual(lines[-1], "  side by side: 9 min 05 s wall")

    def test_a_missing_cpu_log_or_junit_file_is_said_not_fatal(self):
        junit = self.write("junit.xml", JUNIT)
        out = self.slowest("--cpu", f"asan={self.dir}/none.tsv", f"gcc={junit}",
                           f"asan={self.dir}/none.xml")
        self.assertNotIn("CPU", out)
        self.assertIn(f"  asan: {self.dir}/none.xml is missing (that run did not happen)", out)


class SmrunCpuLogTest(unittest.TestCase):
    def test_a_test_files_cpu_counts_the_processes_it_waited_for(self):
        d = tempfile.mkdtemp(prefix="sm-smrun-")
        self.addCleanup(shutil.rmtree, d)
        # One test that spends about 0.3 s of CPU in a child process, none in its own.
        with open(os.path.join(d, "test_spin.py"), "w") as f:
            f.write(textwrap.dedent("""\
                import subprocess, sys, unittest
                SPIN = ("import time\\nt = time.process_time()\\n"
                        "while time.process_time() - t < 0.3: pass")
                class Spin(unittest.TestCase):
                    def test_spin(self):
                        subprocess.run([sys.executable, "-c", SPIN], check=True)
                """))
        log = os.path.join(d, "cpu.tsv")
        env = dict(os.environ, SM_CPU_LOG=log)
        r = subprocess.run([sys.executable, SMRUN, "test_spin"], cwd=d, env=env,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(log) as f:
            [line] = f.read().splitlines()
        name, user, system = line.split("\t")
        self.assertEqual(name, "test_spin")
        self.assertGreaterEqual(float(user) + float(system), 0.3, line)


if __name__ == "__main__":
    unittest.main()
