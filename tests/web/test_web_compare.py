"""Browser test of run against run: on a loopback fleet, two runs with partly different tests
and a third that shares none with the first; Debian's Chromium (drive.mjs) picks the second run
on the first's compare view, and what the page shows is checked against GET /api/compare. Runs
that share no cell are said to, on the compare view and in History (never "No regressions")."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from test_web import WebCase, setUpModule, web_fleet  # noqa: E402,F401


def spec(name, tests):
    return {"name": name, "hosts": "all", "repetitions": 3, "warmup": 0, "tests": tests}


def stream(transports, count):
    return {"workload": "stream", "scope": "local", "transport": transports, "msg_size": 1000,
            "count": count}


class CompareRunsWebTest(WebCase):
    @classmethod
    def setUpClass(cls):
        cls.f = web_fleet(n=2)
        cls.addClassCleanup(cls.f.stop)
        cls.f.start()
        cls.runs = []
        for s in (spec("a", [stream(["tcp", "unix"], 200)]),
                  spec("b", [stream(["tcp"], 200), stream(["tcp"], 400)]),
                  spec("c", [stream(["unix"], 300)])):
            rid = cls.f.start_run(s)
            assert cls.f.wait_run(rid, 180)["state"] == "done"
            cls.runs.append(rid)

    def test_compare_view_sets_run_a_against_run_b(self):
        a, b, c = self.runs
        api = self.f.get(f"/api/compare?a={a}&b={b}")
        res = self.drive(self.f, "compare_runs", a=a, b=b, c=c)
        self.assertEqual(res["hash"], f"#/compare/{a}/{b}")
        shown = {(r["host"], r["test"]): r for r in res["rows"]}
        self.assertEqual(set(shown), {(x["host"], x["test"]) for x in api["shared"]})
        for x in api["shared"]:
            r = shown[(x["host"], x["test"])]
            self.assertEqual(r["verdict"], x["verdict"])
            # A change beyond the CIs is marked; an overlap never is.
            self.assertEqual(r["marked"], x["verdict"] in ("higher", "lower"))
            # test, run A, run B, change, verdict; units on the numbers
            self.assertEqual(r["cells"][0], x["test"])
            self.assertIn(f"{x['unit']}[", r["cells"][1])
            if x["b"]["median"] is None:
                # No sample of run B's cell counted (each disturbed, this machine busy beside
                # the test, or failed): no figure and no change, rather than one made of nothing.
                empty = f"{x['b']['failed']} failed" if x["b"].get("failed") else "-"
                self.assertEqual((r["cells"][2], r["cells"][3]), (empty, "-"), r)
                continue
            self.assertIn(f"n={x['b']['n']}", r["cells"][2])
            self.assertTrue(r["cells"][3].endswith("%"), r)
        self.assertEqual(len(res["only_a"]), len(api["only_a"]))
        self.assertEqual(len(res["only_b"]), len(api["only_b"]))
        self.assertIn(f"{api['counts']['shared']} cells in both runs", res["note"])
        self.assertIn(f"runs {a} and {c} share no cell", res["none"])
        self.assertEqual(res["none_rows"], 0)
        self.assertIn(f"runs {c} and {a} share no cell", res["history"])
        self.assertNotIn("No regression", res["history"])


class TablesWebTest(WebCase):
    """The quick preset's table on a 1400x900 screen, the run page's test names and a pair
    matrix scaled to the fleet's median (issue 18, tables and heatmap)."""

    @classmethod
    def setUpClass(cls):
        cls.f = web_fleet(n=3)
        cls.addClassCleanup(cls.f.stop)
        cls.f.start()
        cls.quick = cls.f.start_run({"preset": "quick"})
        assert cls.f.wait_run(cls.quick, 300)["state"] == "done"
        # Six repetitions: a pair cell with all six covers 95% and carries no "~".
        cls.pairs = cls.f.start_run({
            "name": "pairs", "hosts": "all", "repetitions": 6, "warmup": 0, "pairs": "mesh",
            "tests": [{"workload": "stream", "scope": "pair", "transport": "tcp",
                       "msg_size": 1000, "count": 200}]})
        assert cls.f.wait_run(cls.pairs, 300)["state"] == "done"

    def test_tables_fit_name_tests_as_the_api_and_scale_the_heatmap_to_the_median(self):
        res = self.drive(self.f, "tables", run=self.quick, pair_run=self.pairs,
                         width=1400, height=900)
        q = res["quick"]
        # The flags column is on the screen and the page itself never scrolls sideways.
        self.assertEqual(q["viewport"], 1400)
        self.assertIsNotNone(q["flags_right"])
        self.assertLessEqual(q["flags_right"], q["viewport"], q)
        self.assertLessEqual(q["flags_right"], q["wrap_right"] + 1, q)
        self.assertFalse(q["wrap_scrolls"], q)
        self.assertLessEqual(q["page_scroll_width"], q["viewport"], q)

        # Short headers from the API, the full label on hover.
        table = self.f.get(f"/api/runs/{self.quick}/table?format=json")
        cols = table["columns"] + table["ratio_columns"]
        self.assertEqual(len(q["headers"]), len(cols))
        for th, c in zip(q["headers"], cols):
            unit = "ratio" if c["unit"] == "x" else c["unit"]
            self.assertEqual(th["text"], f"{c['short']} ({unit})")
            self.assertEqual(th["label"], c["label"])
            self.assertTrue(th["title"].startswith(c["label"] + ": "), th)
            self.assertLess(len(c["short"]), len(c["label"]))

        # "~" exactly where the API says the interval covers less than 95%: at 3 repetitions
        # ([min, max], 75%) every value cell; the legend says what it means.
        self.assertIn("~ marks an interval that covers less than 95% (below 6 samples it is "
                      "[min, max])", q["caption"])
        self.assertNotIn("CV", q["caption"])
        for name, key, offset in (("cells", "columns", 0),
                                  ("ratios", "ratio_columns", len(table["columns"]))):
            for c in table[name]:
                if c["median"] is None:
                    continue
                row = next(r for r in q["rows"] if r["host"] == table["rows"][c["row"]])
                self.assertEqual(row["tilde"][offset + c["column"]], c["ci_short"], (key, c))
                self.assertEqual(c["ci_short"], c["ci_coverage"] < 0.95)
        self.assertTrue(any(c["ci_short"] for c in table["cells"]))

        # The run page names each cell as the API does, sizes as the tables write them.
        run = self.f.get(f"/api/runs/{self.quick}")
        want = {str(c["index"]): c["test"] for c in run["cells"]}
        self.assertEqual({c["index"]: c["test"] for c in res["cells"]}, want)
        self.assertIn("stream tcp 128 KiB x 256", want.values())

        # The pair matrix: deviation from the median of all pair cells, neutral within the
        # analysis' floor, and the legend and title say so.
        heat = res["heat"]
        an = self.f.get(f"/api/runs/{self.pairs}/anomalies")
        floor = an["floor"]
        pt = self.f.get(f"/api/runs/{self.pairs}/table?format=json")
        meds = sorted(c["median"] for c in pt["cells"] if c["column"] == 0)
        self.assertEqual(len(heat["cells"]), 6)
        mid = (meds[2] + meds[3]) / 2
        for c in heat["cells"]:
            cell = next(x for x in pt["cells"]
                        if pt["rows"][x["row"]] == c["pair"] and x["column"] == 0)
            self.assertAlmostEqual(c["dev"], (cell["median"] - mid) / mid, places=3)
            self.assertEqual(c["neutral"], abs(c["dev"]) < floor, c)
            if c["neutral"]:
                self.assertEqual(c["bg"], "rgb(238, 241, 244)", c)  # charts.js NEUTRAL
            else:
                self.assertNotEqual(c["bg"], "rgb(238, 241, 244)", c)
        self.assertIn(f"within \u00b1{round(floor * 100)}% (the analysis' flag floor) neutral",
                      heat["legend"])
        self.assertIn("from the median of all pairs", heat["legend"])
        self.assertEqual(heat["title"], f"Per pair: {pt['columns'][0]['short']}")
        self.assertEqual(heat["column"], pt["columns"][0]["label"])
        # "~" below 6 samples only (disturbed samples, left out, can leave a cell fewer).
        for c in pt["cells"]:
            self.assertEqual(c["ci_short"], c["median"] is not None and c["n"] < 6, c)
