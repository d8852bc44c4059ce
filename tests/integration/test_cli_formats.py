"""The sockmatrix CLI as one tool, against a real coordinator and two real agents on loopback:
every data command in every --format gives valid output, "did you mean", tests named by a part
of their label or an id, show with the why, export's default when piped, messages in the
user's words, presets' estimate from a run of the same tests under another name."""
import csv
import io
import json
import os
import pty
import re
import subprocess
import unittest

from smtest import BIN_DIR, Fleet, wait_for

CLI = os.path.join(BIN_DIR, "sockmatrix")

# seed-tcp-unix's tests, under other names (as make demo runs them) and with 2 repetitions.
SEED_TESTS = [{"workload": "stream", "scope": "local", "transport": ["tcp", "unix"],
               "framing": "lines", "msg_size": 128, "count": 8192, "nodelay": [False, True]}]
LABEL = "stream tcp lines 128 B x 8192"
# Words of the API a table for a reader must not print: paths, field names.
API_WORDS = r"GET /|/api/|ci_lo|ci_hi|ci_coverage|\(field: "
MD_SEP = re.compile(r"^\|( :?-{3,}:? \|)+$")


class CliFormatsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.f = Fleet(n=2, hold_ms=1000, lab=False)
        cls.addClassCleanup(cls.f.stop)
        cls.f.start()
        spec = {"hosts": "all", "repetitions": 2, "warmup": 0, "tests": SEED_TESTS}
        cls.a = int(cls.f.run_done({"name": "lab-copy", **spec}, timeout=240)["id"])
        cls.b = int(cls.f.run_done({"name": "lab-copy-2", **spec}, timeout=240)["id"])

    def cli(self, *args):
        env = dict(os.environ)
        env.pop("SOCKMATRIX_COORDINATOR", None)
        # Bytes decoded here: text=True would turn CSV's CRLF into LF.
        p = subprocess.run([CLI, "--coordinator", self.f.url, *args], capture_output=True,
                           timeout=120, stdin=subprocess.DEVNULL, env=env)
        p.stdout, p.stderr = p.stdout.decode(), p.stderr.decode()
        return p

    def ok(self, *args):
        p = self.cli(*args)
        self.assertEqual(p.returncode, 0, p)
        return p

    def data_commands(self):
        a, b = str(self.a), str(self.b)
        return [["agents"], ["presets"], ["runs"], ["show", a], ["jobs", a],
                ["jobs", a, "--cell", "0"], ["tests"], ["tests", a], ["export", a],
                ["anomalies", a], ["hosts", "diff", "h1", "h2"], ["hosts", "fingerprint", "h1"],
                ["compare", a, b], ["trends", "--host", "h1", "--test", "stream tcp lines"],
                ["schedules"]]

    def assert_csv(self, text, what):
        self.assertTrue(text.endswith("\r\n") or text == "", what)
        rows = list(csv.reader(io.StringIO(text, newline="")))
        self.assertGreater(len(rows), 0, what)
        # One width for every row, and the rows come back the same after a round trip.
        self.assertEqual({len(r) for r in rows}, {len(rows[0])}, what)
        out = io.StringIO(newline="")
        csv.writer(out, lineterminator="\r\n").writerows(rows)
        self.assertEqual(list(csv.reader(io.StringIO(out.getvalue(), newline=""))), rows, what)
        return rows

    def assert_md(self, text, what):
        lines = text.splitlines()
        start = next((i for i, l in enumerate(lines) if l.startswith("|")), None)
        self.assertIsNotNone(start, what)
        table = []
        for line in lines[start:]:
            if not line.startswith("|"):
                break
            table.append(line)
        self.assertRegex(table[1], MD_SEP, what)
        width = table[0].count("|") - table[0].count("\\|")
        for line in table:
            self.assertTrue(line.endswith("|"), (what, line))
            self.assertEqual(line.count("|") - line.count("\\|"), width, (what, line))

    def test_every_data_command_in_every_format(self):
        for cmd in self.data_commands():
            for fmt in ("table", "csv", "md", "json"):
                with self.subTest(cmd=cmd, fmt=fmt):
                    p = self.ok(*cmd, "--format", fmt)
                    what = f"{' '.join(cmd)} --format {fmt}: {p.stdout!r}"
                    if fmt == "json":
                        json.loads(p.stdout)
                    elif fmt == "csv":
                        self.assert_csv(p.stdout, what)
                    elif fmt == "md":
                        self.assert_md(p.stdout, what)
                    elif cmd[0] != "schedules":  # none yet: said on stderr
                        self.assertTrue(p.stdout.strip(), what)
                    if fmt == "table":  # what a reader sees speaks no API
                        self.assertNotRegex(p.stdout, API_WORDS, what)

    def test_csv_fields_with_commas_round_trip(self):
        rows = self.assert_csv(self.ok("presets", "--format", "csv").stdout, "presets")
        desc = {r[0]: r[-1] for r in rows[1:]}
        self.assertIn(", with and without", desc["seed-tcp-unix"])
        rows = self.assert_csv(self.ok("agents", "--format", "csv").stdout, "agents")
        labels = {r[0]: r[5] for r in rows[1:]}
        self.assertEqual(labels["h1"], "rack=1,role=test")

    def test_json_of_runs_is_the_coordinators_answer(self):
        self.assertEqual(json.loads(self.ok("runs", "--format", "json").stdout),
                         self.f.get("/api/runs"))
        self.assertEqual(json.loads(self.ok("show", str(self.a), "--format", "json").stdout),
                         self.f.get(f"/api/runs/{self.a}"))

    def test_did_you_mean(self):
        cases = [(["trend", "--host", "h1"], "unknown command 'trend': did you mean trends?"),
                 (["runs", "--fromat", "csv"], "did you mean --format?"),
                 (["agents", "--format", "jsno"], "did you mean json?"),
                 (["hosts", "dif", "h1", "h2"], "did you mean diff?"),
                 (["shwo", "1"], "did you mean show?")]
        for args, needle in cases:
            with self.subTest(args=args):
                p = self.cli(*args)
                self.assertEqual(p.returncode, 2, p)
                self.assertIn(needle, p.stderr)

    def trend(self, test):
        # Disturbed samples counted too: on a busy machine every sample of a cell may be.
        p = self.ok("trends", "--host", "h1", "--test", test, "--format", "json", "--disturbed",
                    "include")
        return json.loads(p.stdout)

    def rows_of_tests(self, *run):
        return json.loads(self.ok("tests", *run, "--format", "json").stdout)

    def test_trends_by_a_part_of_a_label_or_an_id(self):
        full = self.trend(LABEL)
        self.assertEqual(full["test"], LABEL)
        self.assertEqual([p["run"] for p in full["points"]], [str(self.a), str(self.b)])
        self.assertEqual(self.trend("stream tcp lines"), full)
        self.assertEqual(self.trend("STREAM_TCP_LINES"), full)
        tid = next(r["id"] for r in self.rows_of_tests() if r["test"] == LABEL)
        self.assertEqual(self.trend(tid), full)
        # --help's example names a test that make demo runs (the same tests as here).
        example = re.search(r"trends --host h2 --test '([^']+)'", self.ok("--help").stdout)
        self.assertIsNotNone(example)
        self.assertEqual(self.trend(example.group(1)), full)

    def test_trends_with_an_ambiguous_or_unknown_part_lists_the_tests(self):
        p = self.cli("trends", "--host", "h1", "--test", "lines")
        self.assertEqual(p.returncode, 2, p)
        self.assertRegex(p.stderr, r"--test 'lines' names \d+ tests: give more of the label")
        self.assertIn(f"'{LABEL}'", p.stderr)
        p = self.cli("trends", "--host", "h1", "--test", "udp")
        self.assertEqual(p.returncode, 2, p)
        self.assertIn("--test 'udp' names no test; the tests are: t1 '", p.stderr)
        self.assertEqual(p.stdout, "")

    def test_tests_lists_a_runs_tests_with_their_ids(self):
        rows = self.rows_of_tests(str(self.a))
        labels = {r["test"] for r in rows}
        self.assertIn(LABEL, labels)
        self.assertIn("stream unix lines 128 B x 8192", labels)
        for r in rows:
            self.assertRegex(r["id"], r"^t\d+$")
        # The same ids as the list of every test.
        everywhere = {r["test"]: r["id"] for r in self.rows_of_tests()}
        for r in rows:
            self.assertEqual(everywhere[r["test"]], r["id"])
        table = self.ok("tests", str(self.a)).stdout
        self.assertRegex(table, r"(?m)^ID +SHORT +TEST$")

    def test_show_prints_the_flags_as_anomalies_does(self):
        show = self.ok("show", str(self.a)).stdout
        text = self.ok("anomalies", str(self.a)).stdout
        self.assertRegex(show, r"(?m)^verdict: ")
        # Every flag line and every line of its why that anomalies prints, show prints too.
        for line in text.splitlines()[1:]:
            if line.startswith("  ") and line.strip():
                self.assertIn(line + "\n", show)

    def test_export_without_format_is_csv_when_piped(self):
        p = self.ok("export", str(self.a))
        self.assertTrue(p.stdout.startswith("host,"), p.stdout[:80])
        self.assert_csv(p.stdout, "export")
        self.assertEqual(p.stdout, self.ok("export", str(self.a), "--format", "csv").stdout)

    def test_export_without_format_is_markdown_on_a_terminal(self):
        master, slave = pty.openpty()
        env = dict(os.environ)
        env.pop("SOCKMATRIX_COORDINATOR", None)
        p = subprocess.run([CLI, "--coordinator", self.f.url, "export", str(self.a)],
                           stdout=slave, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                           timeout=60, env=env)
        os.close(slave)
        out = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO once the terminal's other end is closed and drained
                break
            if not chunk:
                break
            out += chunk
        os.close(master)
        self.assertEqual(p.returncode, 0, p)
        text = out.decode().replace("\r\n", "\n")  # the terminal's own line ends
        self.assertTrue(text.startswith(f"## run {self.a}: lab-copy\n"), text[:80])
        self.assert_md(text, "export on a terminal")

    def test_messages_say_the_users_words(self):
        p = self.cli("compare", str(self.a), "999999")
        self.assertEqual(p.returncode, 1, p)
        self.assertNotIn("field", p.stderr)
        self.assertIn("run B", p.stderr)
        self.assertNotRegex(p.stderr, r"\bb: ")
        p = self.cli("jobs", str(self.a), "--cell", "999")
        self.assertEqual(p.returncode, 2, p)
        self.assertIn(f"--cell 999: run {self.a} has no such cell; its cells are 0 (h", p.stderr)
        self.assertNotIn("field", p.stderr)

    def test_presets_estimate_from_the_same_tests_under_another_name(self):
        p = self.ok("presets", "--format", "json")
        rows = {r["name"]: r for r in json.loads(p.stdout)}
        seed = rows["seed-tcp-unix"]
        # Two hosts x 3 variants (tcp, tcp+nodelay, unix) x (10 + 2 warm-up): the whole fleet.
        self.assertEqual(seed["jobs_2_hosts"], "72")
        self.assertRegex(seed["estimate"],
                         rf"^about \S+ \(run {self.b} lab-copy-2: \d+ jobs in \S+, scaled\)$")
        self.assertTrue(rows["quick"]["estimate"].startswith("no estimate"))

    def test_presets_count_the_hosts_busy_with_a_run_too(self):
        long = {"name": "long", "hosts": ["h1"], "repetitions": 1, "warmup": 0,
                "tests": [{"workload": "stream", "scope": "local", "transport": "tcp",
                           "msg_size": 1000, "duration_ms": 60000}]}
        rid = self.f.start_run(long)
        self.addCleanup(self.f.post, f"/api/runs/{rid}/cancel", {})
        status = lambda: {a["name"]: a["status"] for a in self.f.get("/api/agents")["agents"]}
        wait_for("h1 busy", lambda: status()["h1"] == "busy", 30)
        rows = {r["name"]: r for r in json.loads(self.ok("presets", "--format", "json").stdout)}
        self.assertEqual(rows["seed-tcp-unix"]["jobs_2_hosts"], "72")
        self.f.post(f"/api/runs/{rid}/cancel", {})
        wait_for("every agent idle", lambda: set(status().values()) == {"online"}, 30)


if __name__ == "__main__":
    unittest.main()
