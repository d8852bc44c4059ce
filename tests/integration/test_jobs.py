"""A run's jobs against the real coordinator and two real agents on loopback: GET
/api/runs/ID/jobs pages over every job once, the job resource says why a job failed, and
`sockmatrix show` prints the run's times, each failed job's id, host and reason, and its flags;
`sockmatrix jobs` lists the jobs the API lists; a job's samples and a cell's repetitions
(GET /api/runs/ID/cells/N, `sockmatrix jobs RUN --cell N`) agree with the table."""
import json
import os
import re
import subprocess
import unittest

from smtest import BIN_DIR, Fleet

CLI = os.path.join(BIN_DIR, "sockmatrix")

# Per host: a stream that ends well, and one that runs into its 500 ms time limit (twice: the
# retry fails the same way), so the run ends failed with 2 of its 4 jobs; "remeasure": 0, so
# that a sample this busy machine disturbs adds no fifth.
SPEC = {"name": "jobs", "hosts": ["h1", "h2"], "repetitions": 1, "remeasure": 0, "warmup": 0,
        "tests": [{"workload": "stream", "scope": "local", "transport": "tcp",
                   "msg_size": 1000, "count": 100},
                  {"workload": "stream", "scope": "local", "transport": "unix",
                   "msg_size": 65536, "count": 1000000000, "time_limit_ms": 500}]}

ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"


class JobsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.f = Fleet(n=2, hold_ms=1000, lab=False)
        cls.addClassCleanup(cls.f.stop)
        cls.f.start()
        cls.rid = cls.f.start_run(SPEC)
        cls.ended = cls.f.wait_run(cls.rid, timeout=120)

    def all_jobs(self, query):
        jobs, after = [], None
        while True:
            page = self.f.get(f"/api/runs/{self.rid}/jobs?{query}"
                              + (f"&after={after}" if after else ""))
            jobs += page["jobs"]
            after = page["next"]
            if after is None:
                return jobs, page["total"]

    def test_pages_of_one_cover_every_job_once(self):
        self.assertEqual(self.ended["state"], "failed", self.ended)
        jobs, total = self.all_jobs("limit=1")
        self.assertEqual(total, 4)
        self.assertEqual(len({j["id"] for j in jobs}), 4)
        self.assertEqual([j["id"] for j in jobs],
                         [j["id"] for j in self.f.get(f"/api/runs/{self.rid}/jobs")["jobs"]])

    def test_a_failed_job_says_why_and_has_no_headline(self):
        failed, total = self.all_jobs("state=failed")
        self.assertEqual(total, 2)
        self.assertEqual({j["host"] for j in failed}, {"h1", "h2"})
        for j in failed:
            self.assertIn("time limit", j["reason"])
            self.assertEqual(j["attempt"], 2)
            self.assertIsNone(j["headline"])
            self.assertEqual(j["run"], str(self.rid))
            self.assertEqual(self.f.get(f"/api/jobs/{j['id']}"), j)
        done, _ = self.all_jobs("state=done")
        for j in done:
            self.assertEqual(j["test"], "stream tcp 1000 B x 100")
            self.assertEqual(j["headline"]["metric"], "throughput_MBps")
            self.assertEqual(j["headline"]["unit"], "MB/s")
            self.assertGreater(j["headline"]["value"], 0)
            self.assertGreaterEqual(j["duration_ms"], 0)

    def test_show_prints_times_failed_jobs_and_flags(self):
        p = subprocess.run([CLI, "--coordinator", self.f.url, "show", str(self.rid)],
                           capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        self.assertEqual(p.returncode, 0, p)
        out = p.stdout
        self.assertRegex(out, rf"(?m)^created: {ISO}$")
        m = re.search(rf"(?m)^finished: ({ISO}) \(took (\d+\.\d s|\d+m \d\ds)\)$", out)
        self.assertIsNotNone(m, out)
        failed, _ = self.all_jobs("state=failed")
        lines = re.findall(r"(?m)^  job (\d+) on (h\d): (.*)$", out)
        self.assertEqual(sorted(lines), sorted((j["id"], j["host"], j["reason"]) for j in failed))
        self.assertIn("\nfailures:\n", out)
        anomalies = self.f.get(f"/api/runs/{self.rid}/anomalies")["anomalies"]
        if anomalies:
            self.assertIn("\nflags:\n", out)
        else:
            self.assertIn("\nflags: none\n", out)

    def cli(self, *args):
        return subprocess.run([CLI, "--coordinator", self.f.url, *args], capture_output=True,
                              text=True, timeout=60, stdin=subprocess.DEVNULL)

    def test_jobs_lists_the_apis_jobs_as_a_grid_and_as_json(self):
        p = self.cli("jobs", str(self.rid))
        self.assertEqual(p.returncode, 0, p)
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0].split(), ["ID", "HOST", "TEST", "REP", "WARM-UP", "STATE",
                                            "DURATION", "HEADLINE", "REASON"])
        api = self.f.get(f"/api/runs/{self.rid}/jobs")["jobs"]
        self.assertEqual([line.split()[0] for line in lines[1:]], [j["id"] for j in api])
        for line, j in zip((x.rstrip() for x in lines[1:]), api):
            self.assertIn(f" {j['test']} ", line)
            host = (j.get("result") or {}).get("host") or {}
            if j["state"] == "failed":
                self.assertTrue(line.endswith(j["reason"]), line)
            elif host.get("disturbed"):
                # What disturbed the host, in the agent's words, where a failure's reason goes.
                self.assertTrue(line.endswith(f"disturbed: {host['disturbed_reason']}"), line)
            else:
                # One notation, as the dashboard: no exponent.
                self.assertRegex(line, r" \d+(\.\d+)? MB/s$")
        p = self.cli("jobs", str(self.rid), "--host", "h2", "--state", "failed",
                     "--format", "json")
        self.assertEqual(p.returncode, 0, p)
        got = json.loads(p.stdout)
        self.assertEqual(got, self.f.get(f"/api/runs/{self.rid}/jobs?host=h2&state=failed")["jobs"])
        self.assertEqual(len(got), 1)
        p = self.cli("jobs", "999999")
        self.assertEqual(p.returncode, 1, p)
        self.assertEqual(p.stderr, "sockmatrix: no run 999999 (sockmatrix runs lists them)\n")

    def table_cell(self, table, host, test):
        r, c = table["rows"].index(host), [x["label"] for x in table["columns"]].index(test)
        return next(x for x in table["cells"] if x["row"] == r and x["column"] == c)

    def test_samples_and_the_cell_endpoint_agree_with_the_table(self):
        # A job measured while this shared machine was busy is disturbed and left out of the
        # table by default: with disturbed=include every ok job counts, whatever the load.
        table = self.f.get(f"/api/runs/{self.rid}/table?disturbed=include")
        plain = self.f.get(f"/api/runs/{self.rid}/table")
        done, _ = self.all_jobs("state=done")
        self.assertEqual(len(done), 2)
        for j in done:
            figures = {m["metric"]: m for m in j["samples"]["metrics"]}
            head = figures[j["headline"]["metric"]]
            self.assertEqual(head["value"], j["headline"]["value"])
            self.assertEqual(head["unit"], "MB/s")
            self.assertEqual(figures["seconds"]["unit"], "s")
            self.assertEqual(figures["bytes"]["unit"], "B")
            self.assertEqual(figures["bytes"]["value"], 1000 * 100)
            self.assertIsNone(j["samples"]["sides"])
            self.assertIsNone(j["samples"]["inner"])
            # n = 1: the table's median is the job's headline value, to the last digit.
            cell = self.table_cell(table, j["host"], j["test"])
            self.assertEqual(cell["n"], 1)
            self.assertEqual(cell["median"], j["headline"]["value"])
            got = self.f.get(f"/api/runs/{self.rid}/cells/{j['cell']}?disturbed=include")
            self.assertEqual((got["host"], got["test"]), (j["host"], j["test"]))
            self.assertEqual([(v["job"], v["value"], v["warmup"], v["counted"])
                              for v in got["values"]],
                             [(j["id"], j["headline"]["value"], False, True)])
            for k in ("median", "ci95_low", "ci95_high", "n"):
                self.assertEqual(got[k], cell[k], k)
            # By default, the table's own figures (none when the one job was disturbed).
            disturbed = j["result"]["host"]["disturbed"]
            got = self.f.get(f"/api/runs/{self.rid}/cells/{j['cell']}")
            self.assertEqual([(v["disturbed"], v["counted"]) for v in got["values"]],
                             [(disturbed, not disturbed)])
            cell = self.table_cell(plain, j["host"], j["test"])
            for k in ("median", "ci95_low", "ci95_high", "n"):
                self.assertEqual(got[k], cell.get(k), k)
            # The CLI prints the same values and figures.
            p = self.cli("jobs", str(self.rid), "--cell", str(j["cell"]))
            self.assertEqual(p.returncode, 0, p)
            lines = p.stdout.splitlines()
            self.assertEqual(lines[0], f"cell {j['cell']}: {j['host']}, {j['test']} "
                                       "(throughput_MBps, MB/s)")
            if disturbed:
                self.assertEqual(lines[1], "table: -")
            else:
                self.assertRegex(lines[1], r"^table: [\d.]+ \[[\d.]+, [\d.]+\] n=1$")
                self.assertEqual(lines[3].split()[-1], lines[1].split()[1])
            self.assertEqual(lines[2].split(), ["JOB", "REP", "WARM-UP", "STATE", "COUNTED",
                                                "VALUE", "WHY"])
            self.assertEqual(lines[3].split()[:3], [j["id"], "0", "done"])
            self.assertIn(" no (disturbed) " if disturbed else " yes ", lines[3])
            if disturbed:
                self.assertEqual(got["values"][0]["disturbed_reason"],
                                 j["result"]["host"]["disturbed_reason"])
                self.assertTrue(lines[3].endswith(" " + j["result"]["host"]["disturbed_reason"]),
                                lines[3])
            else:
                self.assertIsNone(got["values"][0]["disturbed_reason"])
            p = self.cli("jobs", str(self.rid), "--cell", str(j["cell"]), "--format", "json")
            self.assertEqual(p.returncode, 0, p)
            self.assertEqual(json.loads(p.stdout), got)
        # A failed job's cell: its value is none, the table counts nothing.
        failed, _ = self.all_jobs("state=failed")
        got = self.f.get(f"/api/runs/{self.rid}/cells/{failed[0]['cell']}")
        self.assertEqual([(v["value"], v["counted"], v["state"]) for v in got["values"]],
                         [(None, False, "failed")])
        # A cell the run does not have is a bad argument: the cells it has are listed.
        p = self.cli("jobs", str(self.rid), "--cell", "99")
        self.assertEqual(p.returncode, 2, p)
        self.assertIn(f"--cell 99: run {self.rid} has no such cell; its cells are 0 (h", p.stderr)
        p = self.cli("jobs", str(self.rid), "--cell", "x")
        self.assertEqual(p.returncode, 2, p)
        self.assertIn("--cell: 'x' is not a cell number", p.stderr)


if __name__ == "__main__":
    unittest.main()
