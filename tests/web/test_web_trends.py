"""Browser test of the Trends view: on a loopback fleet, three runs of the same spec; Debian's
Chromium (drive.mjs) reads the grid of hosts x tests with each cell's verdict class, clicks a
cell, and the trend chart drawn under it has as many points as GET /api/trends gives; a reload
keeps the hash and the chart."""
import os
import sys
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from test_web import WebCase, setUpModule, web_fleet  # noqa: E402,F401

SPEC = {"name": "trend", "hosts": "all", "repetitions": 3, "warmup": 0,
        "tests": [{"workload": "stream", "scope": "local", "transport": ["tcp", "unix"],
                   "msg_size": 1000, "count": 200}]}
CLASS = {"ok": "verdict-ok", "flagged": "verdict-flagged", "inconclusive": "verdict-inconclusive",
         "failed": "verdict-failed", "no data": "verdict-nodata"}


class TrendsWebTest(WebCase):
    @classmethod
    def setUpClass(cls):
        cls.f = web_fleet(n=2)
        cls.addClassCleanup(cls.f.stop)
        cls.f.start()
        for _ in range(3):
            rid = cls.f.start_run(SPEC)
            assert cls.f.wait_run(rid, 180)["state"] == "done"

    def test_grid_then_a_cells_trend_chart_that_survives_a_reload(self):
        grid = self.f.get("/api/grid")
        # A cell of the tcp column that has a run (its chart has points).
        pick = next(c for c in grid["cells"] if c["run"] and "tcp" in c["test"]
                    and "/" not in c["test"])
        q = urllib.parse.urlencode({"host": pick["host"], "test": pick["test"],
                                    "metric": pick["metric"]}, quote_via=urllib.parse.quote)
        trend = self.f.get(f"/api/trends?{q}")
        # A trend whose medians span more than 10x, run 12 flagged: served by the page's own
        # route for GET /api/trends after the real chart was checked.
        pt = lambda run, med, flagged: {"run": run, "run_name": "n", "finished_ms": 1764547200000
                                        + int(run) * 3600000, "median": med, "ci_lo": med * 0.9,
                                        "ci_hi": med * 1.1, "n": 5, "flagged": flagged}
        fixture = {"host": "h2", "test": "stream tcp 128 KiB", "metric": "throughput_MBps",
                   "unit": "MB/s", "rule": "r",
                   "points": [pt("10", 1500, False), pt("11", 1480, False), pt("12", 6, True)]}
        res = self.drive(self.f, "trends", n_cells=len(grid["cells"]), host=pick["host"],
                         test=pick["test"], fixture=fixture)

        shown = {(c["host"], c["test"]): c for c in res["cells"]}
        self.assertEqual(set(shown), {(c["host"], c["test"]) for c in grid["cells"]})
        for c in grid["cells"]:
            s = shown[(c["host"], c["test"])]
            self.assertEqual(s["verdict"], c["verdict"])
            self.assertIn(CLASS[c["verdict"]], s["classes"])
            self.assertEqual(s["run"], c["run"] or "")
        self.assertEqual([x["verdict"] for x in res["legend"]],
                         ["ok", "flagged", "inconclusive", "failed", "no data"])
        for x in res["legend"]:
            self.assertIn(x["verdict"], x["text"])  # a word beside the colour
            self.assertIn(CLASS[x["verdict"]], x["classes"])

        want_hash = "#/trends/" + "/".join(urllib.parse.quote(x, safe="")
                                           for x in (pick["host"], pick["test"], pick["metric"]))
        chart = res["chart"]
        self.assertEqual(chart["hash"], want_hash)
        self.assertEqual(chart["points"], len(trend["points"]))
        self.assertGreater(chart["points"], 0)
        self.assertEqual(chart["flagged"], sum(p["flagged"] for p in trend["points"]))
        self.assertEqual(chart["rows"], [p["run"] for p in trend["points"]])
        self.assertEqual(chart["run_links"], [f"#/run/{p['run']}" for p in trend["points"]])
        self.assertIn(chart["scale"], ("linear", "log"))
        self.assertEqual(res["reloaded"]["hash"], want_hash)
        self.assertEqual(res["reloaded"]["points"], chart["points"])
        self.assertEqual(res["reloaded"]["rows"], chart["rows"])
        out = res["outlier"]
        self.assertEqual(out["points"], 3)
        self.assertEqual(out["scale"], "log")  # 1500 against 6: more than 10x
        self.assertEqual(out["flagged"], 1)
        self.assertEqual(out["marked"], ["12"])
        self.assertEqual(res["page_errors"], [])
