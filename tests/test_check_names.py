"""tests/check_names.py itself: a copy of the tracked files passes, and a file name that names
nothing, planted in a comment, a string or a doc of the copy, fails it, naming the file, the
line and the name; what is not one of our names by its form passes."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, ".."))
SCRIPT = os.path.join(HERE, "check_names.py")


def problems(out):
    """The problem lines of the check's output."""
    return {line for line in out.splitlines() if not line.startswith("check_names:")}


class CheckNamesTest(unittest.TestCase):
    """One copy of the tracked files, committed, put back after each test."""

    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="sm-names-")
        out = subprocess.run(["git", "-C", SRC, "ls-files", "-z"], capture_output=True,
                             check=True, timeout=60).stdout.decode()
        for rel in filter(None, out.split("\0")):
            src = os.path.join(SRC, rel)
            if os.path.isfile(src):
                os.makedirs(os.path.dirname(os.path.join(cls.root, rel)), exist_ok=True)
                shutil.copy(src, os.path.join(cls.root, rel))
        cls.git("init", "-q")
        cls.git("add", "-A")
        cls.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "copy")
        # What the copy reports before a test plants anything: a planted name must add its
        # own line and nothing else, whatever the tree reports already.
        cls.before = problems(cls.check(cls)[1])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root)

    def tearDown(self):
        self.git("reset", "-q", "--hard")

    @classmethod
    def git(cls, *args):
        subprocess.run(["git", "-C", cls.root, *args], check=True, capture_output=True,
                       timeout=60)

    def check(self, root=None):
        r = subprocess.run([sys.executable, SCRIPT, root or self.root], capture_output=True,
                           text=True, timeout=60)
        return r.returncode, r.stdout

    def planted(self):
        """The problems the check reports beyond those of the copy as it was."""
        rc, out = self.check()
        return rc, problems(out) - self.before

    def append(self, rel, text):
        with open(os.path.join(self.root, rel), "a") as f:
            f.write("\n" + text + "\n")
        with open(os.path.join(self.root, rel)) as f:
            return len(f.read().splitlines())

    def test_the_tree_as_it_is_passes(self):
        rc, out = self.check()
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"check_names: \d+ files, 0 problems")

    def test_the_repository_itself_passes(self):
        rc, out = self.check(SRC)
        self.assertEqual(rc, 0, out)

    def test_a_made_up_name_in_a_c_comment_fails(self):
        no = self.append("coordinator/analysis/analysis.c",
                         "/* The medians are in analysis_medians.c. */")
        rc, new = self.planted()
        self.assertEqual(rc, 1)
        self.assertEqual(new, {f"coordinator/analysis/analysis.c:{no}: analysis_medians.c"})

    def test_a_made_up_path_in_a_js_comment_fails(self):
        no = self.append("web/components/results.js", "// The rule is coordinator/tables.h's.")
        rc, new = self.planted()
        self.assertEqual(rc, 1)
        self.assertEqual(new, {f"web/components/results.js:{no}: coordinator/tables.h"})

    def test_a_made_up_name_in_a_doc_fails(self):
        no = self.append("docs/design.md", "The hub (`coordinator/web.c`) and its run.mjs.")
        rc, new = self.planted()
        self.assertEqual(rc, 1)
        self.assertEqual(new, {f"docs/design.md:{no}: coordinator/web.c",
                               f"docs/design.md:{no}: run.mjs"})

    def test_a_made_up_name_in_a_python_string_and_a_shell_comment_fails(self):
        py = self.append("tests/integration/smtest.py", 'HELPER = "tests/integration/lab.py"')
        sh = self.append("deploy/lab/lab.sh", '# the hosts come from hosts.sh, "$here/hosts.sh"')
        rc, new = self.planted()
        self.assertEqual(rc, 1)
        self.assertEqual(new, {f"tests/integration/smtest.py:{py}: tests/integration/lab.py",
                               f"deploy/lab/lab.sh:{sh}: hosts.sh",
                               f"deploy/lab/lab.sh:{sh}: here/hosts.sh"})

    def test_a_file_moved_away_breaks_the_comments_naming_it(self):
        self.git("mv", "coordinator/analysis/regression.c", "coordinator/analysis/regress.c")
        no = self.append("coordinator/analysis/stats.c",
                         "/* The tests of a regression: regression.c, analysis/regression.c. */")
        rc, new = self.planted()
        self.assertEqual(rc, 1)
        self.assertLessEqual({f"coordinator/analysis/stats.c:{no}: regression.c",
                              f"coordinator/analysis/stats.c:{no}: analysis/regression.c"}, new)

    def test_names_that_are_ours_pass(self):
        # A bare name, a tail of a path, a folder, a module (proto/msg.c and .h), a relative
        # path from the file, a path after a variable.
        self.append("coordinator/analysis/stats.c",
                    "/* jobs.c, store/jobs.c, coordinator/store/, proto/msg, ../../proto/buf.h */")
        self.append("tests/CMakeLists.txt", '# "${SM_SRC}/integration/smrun.py" runs them')
        self.append("web/components/results.js",
                    "import { el } from '../dom.js'; // charts.js draws")
        _, new = self.planted()
        self.assertEqual(new, set())

    def test_what_is_not_ours_by_its_form_passes(self):
        # A system header, another project's path, a web address, an installed path, an API
        # path, a place holder, a pattern, and names in code rather than in a comment.
        self.append("coordinator/analysis/stats.c",
                    "/* <sys/socket.h>, redis's src/anet.c, https://x.example/a/gone.c,\n"
                    " * /usr/lib/gone.c, /api/gone.js, x.md, *_gone.h */\n"
                    "#include <linux/gone.h>")
        self.append("web/components/results.js",
                    "const gone = { c: 1 }; const t = gone.c / 2 / gone.c;")
        self.append("README.md", "```sh\ncurl https://example.net/gone.sh\n```")
        _, new = self.planted()
        self.assertEqual(new, set())


if __name__ == "__main__":
    unittest.main()
