"""Browser test of a run's job list: a finished run's page lists every job of GET
/api/runs/ID/jobs, the same after a reload, each with its test, repetition, state, duration,
headline in the table's notation and, when failed, its reason; a job's details show its result.
A cell's samples view (#/run/ID/cell/N) draws one dot per repetition, warm-ups hollow, after a
reload too."""
import os
import re
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from test_web import WebCase, setUpModule, web_fleet  # noqa: E402,F401

# Per host: 2 variants x (1 warm-up + 3 repetitions), and as many of a stream that runs into its
# 500 ms time limit (each retry too): 2 x 12 = 24 jobs, 8 of them failed; "remeasure": 0, so
# that a sample this busy machine disturbs adds no round.
SPEC = {"name": "joblist", "hosts": "all", "repetitions": 3, "remeasure": 0, "warmup": 1,
        "tests": [{"workload": "stream", "scope": "local", "transport": ["tcp", "unix"],
                   "msg_size": 1000, "count": 200},
                  {"workload": "stream", "scope": "local", "transport": "unix",
                   "msg_size": 65536, "count": 1000000000, "time_limit_ms": 500}]}


class JobListTest(WebCase):
    @classmethod
    def setUpClass(cls):
        cls.f = web_fleet(n=2)
        cls.addClassCleanup(cls.f.stop)
        cls.f.start()

    def test_a_finished_runs_page_lists_all_its_jobs_after_a_reload(self):
        f = self.f
        rid = self.start_run(f, SPEC)
        self.assertEqual(self.wait_run(f, rid)["state"], "failed")
        api = f.get(f"/api/runs/{rid}/jobs?limit=1000")
        self.assertEqual(api["total"], 24)
        res = self.drive(f, "run_jobs", run=rid, total=api["total"])
        ids = [j["id"] for j in api["jobs"]]
        self.assertEqual([j["id"] for j in res["before"]], ids)
        self.assertEqual([j["id"] for j in res["after"]], ids, "the same list after a reload")
        self.assertTrue(res["note_hidden"])
        by = {j["id"]: j for j in api["jobs"]}
        for row in res["after"]:
            j = by[row["id"]]
            self.assertEqual(row["test"], j["test"])
            self.assertEqual(row["state"], j["state"])
            self.assertEqual(row["warmup"], j["warmup"])
            self.assertEqual(row["rep"], ("warm-up " if j["warmup"] else "rep ")
                             + str(j["repetition"]))
            self.assertEqual(row["href"], f"/api/jobs/{j['id']}")
            if j["state"] == "failed":
                self.assertIn("time limit", row["reason"])
                self.assertIsNone(row["headline"])
            else:
                self.assertIsNone(row["reason"])
                # One notation: "123.4 MB/s", never an exponent.
                self.assertRegex(row["headline"], r"^\d+(\.\d+)? MB/s$")
                self.assertRegex(row["duration"], r"^\d+(\.\d+)? s$")
        opened = by[res["opened"]]
        self.assertEqual(res["details"]["result"], opened["result"])
        self.assertEqual(res["details"]["params"], opened["params"])
        self.assertTrue(re.match(r"^\d+$", res["opened"]))

    def test_a_cells_samples_view_shows_one_dot_per_repetition_after_a_reload(self):
        f = self.f
        spec = {"name": "cellsamples", "hosts": "all", "repetitions": 4, "remeasure": 0,
                "warmup": 1,
                "tests": [{"workload": "stream", "scope": "local", "transport": "tcp",
                           "msg_size": 1000, "count": 200}]}
        rid = self.start_run(f, spec)
        self.assertEqual(self.wait_run(f, rid)["state"], "done")
        cell = f.get(f"/api/runs/{rid}/cells/0")
        values = cell["values"]
        self.assertEqual(len(values), 5)
        res = self.drive(f, "cell_samples", run=rid, cell=0, n=len(values))
        for snap in (res["before"], res["after"]):
            self.assertEqual(snap["hash"], f"#/run/{rid}/cell/0")
            self.assertEqual([d["job"] for d in snap["dots"]], [v["job"] for v in values])
            self.assertEqual([d["warmup"] for d in snap["dots"]], [v["warmup"] for v in values])
            self.assertEqual([d["hollow"] for d in snap["dots"]], [v["warmup"] for v in values])
            self.assertEqual([d["counted"] for d in snap["dots"]], [v["counted"] for v in values])
            self.assertEqual(snap["list"], [v["job"] for v in values])
            # On a busy machine every repetition may be disturbed and left out: no median then.
            have = cell["median"] is not None
            self.assertEqual(snap["median_line"], have)
            self.assertEqual(snap["ci_band"], have and cell["ci95_low"] is not None)
            self.assertIn(f"n={cell['n']}" if have else "no median", snap["figures"])
        self.assertEqual(sum(d["warmup"] for d in res["after"]["dots"]), 1)


if __name__ == "__main__":
    unittest.main()
