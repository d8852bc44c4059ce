"""The README's "After the demo" commands, run as written against a fleet like the demo's: three
agents h1..h3 on loopback and a coordinator, with the demo's two runs (its own specs, read from
deploy/lab/demo.sh, with fewer repetitions) as runs 1 and 2. Each command must exit 0 and print
what its comment promises; the demo's end must print the same commands.

The README's commands name build/bin/sockmatrix, as typed from the source folder after `make
demo`; they run here in a folder whose build/bin is this build's, with the coordinator's address
in $SOCKMATRIX_COORDINATOR (the demo's coordinator is at the command line's default address,
which a test cannot take). Nothing else of a command is changed."""
import json
import os
import re
import shlex
import subprocess
import tempfile
import unittest
import urllib.parse

from smtest import BIN_DIR, Fleet

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
README = os.path.join(REPO, "README.md")
DEMO = os.path.join(REPO, "deploy", "lab", "demo.sh")
CLI_AS_TYPED = "build/bin/sockmatrix"


def section(text, title):
    """The lines of the `## title` section of a Markdown text, up to the next heading of its
    level or above."""
    lines = text.splitlines()
    start = lines.index(f"## {title}")
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"^#{1,2} ", lines[i])),
               len(lines))
    return lines[start + 1:end]


def after_the_demo():
    """The commands of the README's "After the demo" section: the lines of its one ```sh
    block, each a whole command (no continuation lines), comments kept as the reader sees them."""
    with open(README) as f:
        lines = section(f.read(), "After the demo")
    opens = [i for i, line in enumerate(lines) if line.startswith("```")][::2]
    blocks = []
    for i in opens:
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        blocks.append((lines[i], lines[i + 1:end]))
    if len(blocks) != 1 or blocks[0][0] != "```sh":
        raise AssertionError(f"'After the demo' needs exactly one ```sh block, has {blocks}")
    return [line for line in blocks[0][1] if line.strip() and not line.startswith("#")]


def demo_specs():
    """The run specs demo.sh writes ("cat >FILE <<'SPEC' ... SPEC"), in the order it runs them."""
    with open(DEMO) as f:
        text = f.read()
    specs = {m.group(1): json.loads(m.group(2)) for m in re.finditer(
        r'cat >"\$STATE/([\w-]+\.json)" <<\'SPEC\'\n(.*?)\nSPEC\n', text, re.S)}
    order = re.findall(r'run --spec "\$STATE/([\w-]+\.json)"', text)
    return [specs[name] for name in order]


# What each command of the README must print beyond exit 0: needles in its output.
EXPECT = {
    "agents": ["NAME", "STATUS", "h1", "h2", "h3", "online"],
    "runs": ["seed-tcp-unix-lab", "seed-http-lab", "done"],
    "show": ["seed-tcp-unix-lab", "done", "flags:", "stream tcp lines 128 B x 8192"],
    "anomalies": ["run 1 (seed-tcp-unix-lab)"],
    # On loopback the three agents share one machine and its settings: "no differences: N
    # items the same", where the demo's lab prints h2's qdisc beside h1's.
    "hosts": ["items the same"],
    "export": ["| host |", "| h1 ", "| h2 ", "| h3 ", "http thread 1 MiB"],
    "tests": ["ID", "SHORT", "stream tcp lines 128 B x 8192"],
    "trends": ["stream tcp lines 128 B x 8192", "h2"],
}


class ReadmeTextTest(unittest.TestCase):
    def test_every_command_after_the_demo_is_the_cli_by_its_path_in_the_build(self):
        cmds = after_the_demo()
        self.assertGreaterEqual(len(cmds), 5, cmds)
        for c in cmds:
            self.assertTrue(c.startswith(CLI_AS_TYPED + " "), c)
            self.assertIn(shlex.split(c, comments=True)[1], EXPECT, c)

    def test_the_readme_never_names_the_cli_as_if_it_were_on_the_path(self):
        # After `make demo` the command line is build/bin/sockmatrix; a bare `sockmatrix ...`
        # in the README's own commands would not run. (The roll-out's step 5 runs on a host
        # where the package installed it, and says so.)
        with open(README) as f:
            text = f.read()
        for block in re.findall(r"```sh\n(.*?)```", text, re.S):
            for line in block.splitlines():
                self.assertFalse(re.match(r"^\s*sockmatrix(-agent|-coordinator)?\s", line), line)

    def test_the_demos_end_prints_the_readmes_commands(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("SM_DEMO_")}
        env["SM_BIN_DIR"] = os.path.join(REPO, "build", "bin")
        p = subprocess.run(["bash", DEMO, "next"], cwd=REPO, env=env, capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p)
        printed = [line.strip() for line in p.stderr.splitlines()
                   if line.strip().startswith(CLI_AS_TYPED + " ")]
        self.assertEqual(printed, [c.strip() for c in after_the_demo()])
        self.assertIn("http://127.0.0.1:8080/", p.stderr)
        self.assertIn("make demo-down", p.stderr)
        with open(README) as f:
            self.assertIn("`make demo-down`", "\n".join(section(f.read(), "After the demo")))

    def test_the_demos_specs_are_found(self):
        names = [s["name"] for s in demo_specs()]
        self.assertEqual(names, ["seed-tcp-unix-lab", "seed-http-lab"])


class AfterTheDemoTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.f = Fleet(n=3, hold_ms=1000, lab=False)
        cls.addClassCleanup(cls.f.stop)
        cls.f.start()
        # The demo's runs 1 and 2, as it writes them, with 3 repetitions and no warm-up: what
        # the commands read is there, and the test measures nothing.
        for i, spec in enumerate(demo_specs(), 1):
            spec = dict(spec, repetitions=3, warmup=0)
            run = cls.f.run_done(spec, timeout=240)
            if str(run["id"]) != str(i):
                raise AssertionError(f"the demo's run {i} got id {run['id']}: {run}")
        cls.folder = tempfile.mkdtemp(prefix="sm-readme-")
        os.makedirs(os.path.join(cls.folder, "build"))
        os.symlink(BIN_DIR, os.path.join(cls.folder, "build", "bin"))

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["rm", "-rf", cls.folder], check=False)

    def run_as_written(self, line):
        env = {k: v for k, v in os.environ.items() if not k.startswith("SOCKMATRIX_")}
        env["SOCKMATRIX_COORDINATOR"] = self.f.url
        return subprocess.run(["bash", "-c", line], cwd=self.folder, env=env,
                              capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)

    def test_each_command_after_the_demo_runs_as_written(self):
        for line in after_the_demo():
            with self.subTest(command=line):
                p = self.run_as_written(line)
                self.assertEqual(p.returncode, 0, f"{line}\n{p.stdout}\n{p.stderr}")
                self.assertEqual(p.stderr, "", line)
                self.assertTrue(p.stdout.strip(), line)
                for needle in EXPECT[shlex.split(line, comments=True)[1]]:
                    self.assertIn(needle, p.stdout, f"{line}\n{p.stdout}")
                if os.environ.get("SM_README_SHOW"):
                    print(f"\n$ {line}\n{p.stdout}")

    def test_the_trend_names_a_test_of_run_1_and_prints_the_apis_points(self):
        line = next(c for c in after_the_demo() if " trends " in c)
        args = shlex.split(line, comments=True)
        host, test = args[args.index("--host") + 1], args[args.index("--test") + 1]
        # The part of a label the README gives names one test run 1 has for that host.
        cells = self.f.get("/api/runs/1")["cells"]
        named = {c["test"] for c in cells if c["host"] == host and test.lower() in c["test"].lower()}
        self.assertEqual(len(named), 1, (test, named))
        test = named.pop()
        p = self.run_as_written(line)
        self.assertEqual(p.returncode, 0, p)
        # One row per run with a median in that cell, as the API gives them: run 1 when a
        # sample of it was not disturbed (a loaded machine may leave it none).
        api = self.f.get("/api/trends?host=h2&test=" + urllib.parse.quote(test))
        rows = [r.split() for r in p.stdout.splitlines() if re.match(r"^\d{4}-\d\d-\d\d ", r)]
        self.assertEqual([r[2] for r in rows], [pt["run"] for pt in api["points"]], p.stdout)
        self.assertLessEqual({pt["run"] for pt in api["points"]}, {"1"})

if __name__ == "__main__":
    unittest.main()
