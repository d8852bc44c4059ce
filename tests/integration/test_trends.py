"""Trends and the fleet grid on a loopback fleet: three small runs of the same spec; the trend
of a host's cell has a point per run, in finished order, whose median is that run's table cell;
from/to keep the runs finished between them; an unknown host is a note that names the hosts;
the grid's cells name the last run; the CLI prints the same points."""
import json
import os
import subprocess
import unittest
import urllib.parse

from smtest import BIN_DIR, Fleet

CLI = os.path.join(BIN_DIR, "sockmatrix")

SPEC = {"name": "trend", "hosts": "all", "repetitions": 5, "warmup": 0,
        "tests": [{"workload": "stream", "scope": "local", "transport": "tcp", "msg_size": 1000,
                   "count": 200}]}


class TrendsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.f = Fleet(n=2, hold_ms=1000, lab=False)
        cls.addClassCleanup(cls.f.stop)
        cls.f.start()
        cls.runs = [cls.f.run_done(SPEC) for _ in range(3)]
        cls.tables = [cls.f.get(f"/api/runs/{r['id']}/table?format=json") for r in cls.runs]
        cls.test = cls.tables[0]["columns"][0]["label"]

    def trend(self, host, **extra):
        q = urllib.parse.urlencode({"host": host, "test": self.test, **extra},
                                   quote_via=urllib.parse.quote)
        return self.f.get_status(f"/api/trends?{q}")

    def cell(self, table, host):
        """The median of host's cell in the table's first column, None without one."""
        row = table["rows"].index(host)
        for c in table["cells"]:
            if c["row"] == row and c["column"] == 0 and c["n"] > 0:
                return c["median"]
        return None

    def test_trend_has_a_point_per_run_with_its_tables_median(self):
        st, got = self.trend("h1")
        self.assertEqual(st, 200, got)
        self.assertEqual((got["host"], got["test"]), ("h1", self.test))
        self.assertEqual(got["unit"], self.tables[0]["columns"][0]["unit"])
        # A cell whose samples were all disturbed (a busy machine) has no median, and no point.
        want = [(str(r["id"]), self.cell(t, "h1")) for r, t in zip(self.runs, self.tables)
                if self.cell(t, "h1") is not None]
        self.assertEqual([(p["run"], p["median"]) for p in got["points"]], want)
        self.assertGreaterEqual(len(want), 2, "two runs' h1 cells had no median")
        finished = [p["finished_ms"] for p in got["points"]]
        self.assertEqual(finished, sorted(finished))
        for p in got["points"]:
            self.assertLessEqual(p["ci_lo"], p["median"])
            self.assertGreaterEqual(p["ci_hi"], p["median"])
            self.assertIn(p["flagged"], (True, False))
            self.assertEqual(p["run_name"], "trend")

    def test_with_disturbed_samples_every_run_is_a_point(self):
        # Disturbed samples (a busy machine) can leave a cell without a median; counted in,
        # each of the three runs has its point, equal to its table's cell counted the same way.
        st, got = self.trend("h1", disturbed="include")
        self.assertEqual(st, 200, got)
        tables = [self.f.get(f"/api/runs/{r['id']}/table?format=json&disturbed=include")
                  for r in self.runs]
        self.assertEqual([(p["run"], p["median"]) for p in got["points"]],
                         [(str(r["id"]), self.cell(t, "h1")) for r, t in zip(self.runs, tables)])
        self.assertEqual(len(got["points"]), 3)

    def test_from_and_to_keep_the_runs_finished_between_them(self):
        _, all_points = self.trend("h1")
        pts = all_points["points"]
        st, got = self.trend("h1", **{"from": pts[1]["finished_ms"], "to": pts[-1]["finished_ms"]})
        self.assertEqual(st, 200, got)
        self.assertEqual([p["run"] for p in got["points"]], [p["run"] for p in pts[1:]])
        st, got = self.trend("h1", **{"from": 0, "to": pts[0]["finished_ms"] - 1})
        self.assertEqual((st, got["points"]), (200, []))
        self.assertIn("note", got)
        st, got = self.trend("h1", **{"from": 10, "to": 5})
        self.assertEqual((st, got["field"]), (400, "to"))

    def test_unknown_host_is_a_note_naming_the_hosts(self):
        st, got = self.trend("h9")
        self.assertEqual((st, got["points"]), (200, []))
        self.assertEqual(got["note"], "no ended run has host 'h9'; the hosts they have: h1, h2")

    def test_grid_cells_name_the_last_run(self):
        st, got = self.f.get_status("/api/grid")
        self.assertEqual(st, 200, got)
        self.assertEqual(got["hosts"], ["h1", "h2"])
        self.assertEqual(got["tests"], [self.test])
        last = str(self.runs[-1]["id"])
        # A host can move against the run before (this machine's own variation): a regression
        # needs no fleet, and flags the cell.
        an = self.f.get(f"/api/runs/{last}/anomalies")
        regressed = {a["host"] for a in an["anomalies"] if a["kind"] == "regression"}
        for c in got["cells"]:
            self.assertEqual(c["run"], last, c)
            if c["host"] in regressed:
                self.assertEqual((c["verdict"], c["why"]), ("flagged", None), c)
                continue
            # Two hosts make no fleet: each cell was measured, and not judged; the grid says so
            # with the table's reason, never ok.
            self.assertEqual(c["verdict"], "inconclusive", c)
            self.assertTrue(c["why"], c)
            median = self.cell(self.tables[-1], c["host"])
            if median is not None:
                self.assertEqual(c["median"], median)

    def test_cli_prints_the_same_points(self):
        env = dict(os.environ)
        env.pop("SOCKMATRIX_COORDINATOR", None)
        run = lambda *a: subprocess.run([CLI, "--coordinator", self.f.url, "trends", *a],
                                        capture_output=True, text=True, timeout=60,
                                        stdin=subprocess.DEVNULL, env=env)
        _, api = self.trend("h1")
        p = run("--host", "h1", "--test", self.test, "--format", "json")
        self.assertEqual(p.returncode, 0, p)
        self.assertEqual(json.loads(p.stdout)["points"], api["points"])
        p = run("--host", "h1", "--test", self.test)
        self.assertEqual(p.returncode, 0, p)
        for pt in api["points"]:
            self.assertIn(f" {pt['run']} ", p.stdout)
        p = run("--host", "h1", "--test", self.test, "--format", "csv")
        self.assertEqual(p.returncode, 0, p)
        lines = p.stdout.splitlines()
        self.assertTrue(lines[0].startswith("finished_utc,run,"), lines[0])
        self.assertEqual(len(lines), 1 + len(api["points"]))
        p = run("--host", "h1", "--test", self.test, "--disturbed", "include", "--format", "json")
        self.assertEqual(p.returncode, 0, p)
        _, api = self.trend("h1", disturbed="include")
        self.assertEqual(json.loads(p.stdout)["points"], api["points"])
        p = run("--host", "h1")
        self.assertEqual(p.returncode, 2, p)
        self.assertIn("--test", p.stderr)
        # A host no run has is a mistyped argument in every format: exit 2, naming it and the
        # hosts there are, and nothing on stdout.
        for fmt in ("table", "csv", "json"):
            p = run("--host", "h9", "--test", self.test, "--format", fmt)
            self.assertEqual((p.returncode, p.stdout), (2, ""), p)
            self.assertEqual(p.stderr, "sockmatrix: trends: no ended run has host 'h9'; the hosts "
                             "they have: h1, h2\n")


if __name__ == "__main__":
    unittest.main()
