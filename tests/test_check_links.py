"""tests/check_links.py itself: a copy of the README and docs/ passes, and each kind of bad
link planted in the copy fails it, naming the file, the line and the link."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, ".."))
SCRIPT = os.path.join(HERE, "check_links.py")


class CheckLinksTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="sm-links-")
        self.addCleanup(shutil.rmtree, self.root)
        shutil.copy(os.path.join(SRC, "README.md"), self.root)
        shutil.copytree(os.path.join(SRC, "docs"), os.path.join(self.root, "docs"))
        # The README and docs link to files of the repository beyond docs/: link targets that
        # are not Markdown need only exist.
        for rel in self.non_markdown_targets():
            path = os.path.join(self.root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if not os.path.exists(path):
                open(path, "w").close()

    def non_markdown_targets(self):
        sys.path.insert(0, HERE)
        try:
            import check_links
        finally:
            sys.path.pop(0)
        out = []
        for rel in check_links.markdown_files(SRC):
            with open(os.path.join(SRC, rel)) as f:
                text = f.read()
            for _, line in check_links.prose_lines(text):
                for m in check_links.LINK.finditer(line):
                    path = m.group(1).partition("#")[0]
                    if path and not check_links.WEB.match(path) and not path.endswith(".md"):
                        full = os.path.normpath(os.path.join(os.path.dirname(rel), path))
                        if not os.path.exists(os.path.join(self.root, full)):
                            out.append(full)
        return out

    def check(self):
        r = subprocess.run([sys.executable, SCRIPT, self.root], capture_output=True, text=True,
                           timeout=60)
        return r.returncode, r.stdout

    def append(self, rel, text):
        with open(os.path.join(self.root, rel), "a") as f:
            f.write("\n" + text + "\n")

    def lines(self, rel):
        with open(os.path.join(self.root, rel)) as f:
            return len(f.read().splitlines())

    def test_the_docs_as_they_are_pass(self):
        rc, out = self.check()
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"check_links: \d+ files, 0 problems")

    def test_the_repository_itself_passes(self):
        r = subprocess.run([sys.executable, SCRIPT, SRC], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout)

    def test_a_link_to_a_missing_file_fails(self):
        self.append("README.md", "See [the manual](docs/manual.md).")
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn(f"README.md:{self.lines('README.md')}: (docs/manual.md): no such file in "
                      "the repository", out)

    def test_a_link_out_of_the_repository_fails(self):
        self.append("docs/deploy.md", "The design: [design](../../design.md).")
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn(f"docs/deploy.md:{self.lines('docs/deploy.md')}: (../../design.md): leads "
                      "out of the repository", out)

    def test_an_absolute_path_and_a_file_address_fail(self):
        self.append("README.md", "[a](/work/design.md) and [b](file:///work/design.md)")
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn("(/work/design.md): an absolute path", out)
        self.assertIn("(file:///work/design.md): a file: address", out)

    def test_a_heading_that_is_not_there_fails(self):
        self.append("README.md", "[x](docs/analysis.md#no-such-heading) [y](#nor-this-one)")
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn("(docs/analysis.md#no-such-heading): docs/analysis.md has no heading "
                      "'#no-such-heading'", out)
        self.assertIn("(#nor-this-one): README.md has no heading '#nor-this-one'", out)

    def test_a_heading_that_is_there_passes(self):
        self.append("docs/scale.md", "## A heading: with `code`, punctuation\n\n"
                    "[here](#a-heading-with-code-punctuation) "
                    "[there](analysis.md#run-against-run)")
        rc, out = self.check()
        self.assertEqual(rc, 0, out)

    def test_links_in_code_and_on_the_web_are_not_checked(self):
        self.append("README.md", "`[x](nowhere.md)` [web](https://example.net/nowhere.md)\n\n"
                    "```sh\necho '[x](nowhere.md)'\n```")
        rc, out = self.check()
        self.assertEqual(rc, 0, out)


if __name__ == "__main__":
    unittest.main()
