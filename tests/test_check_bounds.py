"""tests/check_bounds.py itself, on small trees made here: a tree in bounds passes; a C file
one line over the bound, a unit test at tests/unit/'s top and one in a folder that mirrors
nothing each fail it, naming the file."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "check_bounds.py")
sys.path.insert(0, HERE)
import check_bounds  # noqa: E402  (the bound itself, so the test follows it)


class CheckBoundsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="sm-bounds-")
        self.root = self.tmp.name
        subprocess.run(["git", "init", "-q", self.root], check=True, timeout=30)
        self.write("coordinator/store/jobs.c", "int x;\n" * check_bounds.MAX_C_LINES)
        self.write("tests/unit/testutil.h", "/* helpers */\n")
        self.write("tests/unit/coordinator/store/test_store_jobs.c", "int main(void);\n")
        self.write("tests/unit/coordinator/store/golden/table.csv", "a,b\n")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, rel, text):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        subprocess.run(["git", "-C", self.root, "add", rel], check=True, timeout=30)

    def run_check(self):
        r = subprocess.run([sys.executable, SCRIPT, self.root], capture_output=True, text=True,
                           timeout=60)
        lines = [line for line in r.stdout.splitlines() if not line.startswith("check_bounds:")]
        return r.returncode, lines

    def test_a_tree_in_bounds_passes(self):
        self.assertEqual(self.run_check(), (0, []))

    def test_a_c_file_one_line_over_fails(self):
        self.write("coordinator/store/jobs.c", "int x;\n" * (check_bounds.MAX_C_LINES + 1))
        rc, lines = self.run_check()
        self.assertEqual(rc, 1)
        self.assertEqual(len(lines), 1)
        self.assertTrue(lines[0].startswith("coordinator/store/jobs.c: 801 lines"), lines)

    def test_a_test_file_over_the_bound_fails_too(self):
        self.write("tests/unit/coordinator/store/test_store_jobs.c", "int y;\n" * 900)
        rc, lines = self.run_check()
        self.assertEqual(rc, 1)
        self.assertIn("tests/unit/coordinator/store/test_store_jobs.c: 900 lines", lines[0])

    def test_a_unit_test_at_the_top_fails(self):
        self.write("tests/unit/test_jobs.c", "int main(void);\n")
        rc, lines = self.run_check()
        self.assertEqual(rc, 1)
        self.assertEqual(len(lines), 1)
        self.assertTrue(lines[0].startswith("tests/unit/test_jobs.c: a unit test sits"), lines)

    def test_a_folder_that_mirrors_nothing_fails(self):
        self.write("tests/unit/coordinator/stores/test_store_runs.c", "int main(void);\n")
        rc, lines = self.run_check()
        self.assertEqual(rc, 1)
        self.assertEqual(len(lines), 1)
        self.assertIn("mirrors no folder of the tree (coordinator/stores/ does not exist)",
                      lines[0])

    def test_an_untracked_file_is_not_read(self):
        path = os.path.join(self.root, "tests/unit/stray.c")
        with open(path, "w", encoding="utf-8") as f:
            f.write("int z;\n")
        self.assertEqual(self.run_check(), (0, []))


if __name__ == "__main__":
    unittest.main()
