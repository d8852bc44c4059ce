"""Browser test of the Trends view: on a loopback fleet, three runs of the same spec and one of 18
tests; Debian's Chromium (drive.mjs) reads the grid of hosts x tests with each cell's verdict
class, clicks a cell, and the trend chart drawn under it has as many points as GET /api/trends
gives; a reload keeps the hash and the chart. At 1,400 px the 24 tests' grid scrolls in its own
box and the page does not; the time axis' ticks carry a date; a trend of one point shows its
95% CI (measured in the canvas' pixels); no text of the page names the API or its fields."""
import os
import re
import sys
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from test_web import WebCase, setUpModule, web_fleet  # noqa: E402,F401

SPEC = {"name": "trend", "hosts": "all", "repetitions": 3, "warmup": 0,
        "tests": [{"workload": "stream", "scope": "local", "transport": ["tcp", "unix"],
                   "msg_size": 1000, "count": 200}]}
# Up to 24 tests in the grid and the tables (16 variants and up to 8 TCP/Unix ratios), small
# enough to end in a minute: what made Trends 1,814 px wide in a 1,400 px window.
WIDE = {"name": "wide", "hosts": "all", "repetitions": 3, "warmup": 0,
        "tests": [{"workload": "stream", "scope": "local", "transport": ["tcp", "unix"],
                   "msg_size": [100, 500, 1000, 4000, 8000, 16000], "count": 200},
                  {"workload": "rr", "scope": "local", "transport": ["tcp", "unix"],
                   "req_size": [1, 64], "resp_size": 1, "count": 200}]}
# The API's words, which the page must not show (its text, hover texts, the chart's legend).
API_WORDS = re.compile(r"GET |/api/|ci_lo|ci_hi|_MBps")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
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
        cls.wide = cls.f.start_run(WIDE)
        assert cls.f.wait_run(cls.wide, 240)["state"] == "done"

    def trend(self, host, test, metric):
        q = urllib.parse.urlencode({"host": host, "test": test, "metric": metric},
                                   quote_via=urllib.parse.quote)
        return self.f.get(f"/api/trends?{q}")

    def check_fit(self, res, width):
        self.assertEqual(res["inner_width"], width)
        self.assertLessEqual(res["scroll_width"], width, "the page scrolls sideways")
        self.assertGreaterEqual(res["top_width"], res["scroll_width"],
                                "the top bar stops short of the page")
        self.assertTrue(res["box_scrolls"], res)  # the grid is wider than its box, which scrolls
        self.assertGreater(res["grid_width"], res["box_width"])
        self.assertLessEqual(res["box_right"], width)
        self.assertTrue(res["hosts_in_view"], "scrolled, the grid hides its hosts")
        self.assertIn("Scroll the grid sideways", res["grid_note"])

    def check_words(self, res):
        for where in ("text", "hover", "chart_text"):
            texts = res[where].splitlines() if where == "text" else res[where]
            found = [x for x in texts if API_WORDS.search(x)]
            self.assertEqual(found, [], f"the API's words in the page's {where}")

    def test_a_wide_grid_scrolls_in_its_box_and_a_lone_point_shows_its_interval(self):
        grid = self.f.get("/api/grid")
        # The wide run's 16 measured columns are there whatever its samples: a ratio column
        # (tcp/unix) only where both sides kept a median, which a busy machine can take away.
        self.assertGreaterEqual(len(grid["tests"]), 16)
        # A cell only the wide run has: its trend is one point. A busy machine may set aside
        # all of a cell's samples (no point) or all but one (an interval of no width), so the
        # first with an interval to draw is taken, among all of the wide run's cells. When the
        # machine left none, the grid's fit is still checked on a cell of the wide run; the
        # drawing of a lone point's interval is checked on a fixture by the next test.
        wide = [(c, self.trend(c["host"], c["test"], c["metric"])) for c in grid["cells"]
                if str(c["run"]) == str(self.wide)]
        self.assertTrue(wide, "the grid has no cell of the wide run")
        spread = lambda t: len(t["points"]) == 1 and t["points"][0]["ci_lo"] < t["points"][0]["ci_hi"]
        one, trend = next(((c, t) for c, t in wide if spread(t)),
                          next(((c, t) for c, t in wide if t["points"]), (None, None)))
        self.assertIsNotNone(one, f"no cell of the wide run has a median: {wide}")
        for width, height in ((1400, 900), (1024, 768)):
            with self.subTest(size=f"{width}x{height}"):
                res = self.drive(self.f, "trends_fit", width=width, height=height,
                                 host=one["host"], test=one["test"])
                self.check_fit(res, width)
                self.assertEqual(res["columns"], len(grid["tests"]))
                self.assertEqual(res["points"], len(trend["points"]))
                if trend["points"]:
                    self.assertTrue(res["ticks"])
                for t in res["ticks"]:
                    self.assertRegex(t, DATE)
                if spread(trend):
                    self.assertGreater(res["ci_px"][0], 0, "the lone point's 95% CI is not drawn")
                self.check_words(res)

    def test_a_lone_point_of_another_day_has_its_date_and_a_tall_interval(self):
        # One run on 2026-12-01 at noon, its interval +-10% of its median: on a linear axis
        # that is most of the chart's height.
        fixture = {"host": "h1", "test": "stream tcp 128 KiB", "metric": "throughput_MBps",
                   "unit": "MB/s", "rule": "GET /api/runs/ID/anomalies; ci_lo, ci_hi",
                   "points": [{"run": "7", "run_name": "n", "finished_ms": 1796126400000,
                               "median": 1000, "ci_lo": 900, "ci_hi": 1100, "n": 5,
                               "flagged": False}]}
        res = self.drive(self.f, "trends_fit", width=1400, height=900, host="h1",
                         test=fixture["test"], fixture=fixture)
        self.check_fit(res, 1400)
        self.assertEqual(res["points"], 1)
        self.assertTrue(all("2026-12-01" in t for t in res["ticks"]), res["ticks"])
        self.assertGreaterEqual(res["ci_px"][0], 40, res["ci_px"])
        self.check_words(res)

    def test_grid_then_a_cells_trend_chart_that_survives_a_reload(self):
        grid = self.f.get("/api/grid")
        # A cell that has a median (its chart has points), of a tcp column where one has: a
        # cell whose samples a busy machine all set aside has a run and no point.
        with_median = [c for c in grid["cells"] if c["run"] and c.get("median") is not None
                       and "/" not in c["test"]]
        self.assertTrue(with_median, f"no cell of the grid has a median: {grid['cells']}")
        pick = next((c for c in with_median if "tcp" in c["test"]), with_median[0])
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
