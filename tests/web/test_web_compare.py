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
            self.assertIn(f"n={x['b']['n']}", r["cells"][2])
            self.assertTrue(r["cells"][3].endswith("%"), r)
        self.assertEqual(len(res["only_a"]), len(api["only_a"]))
        self.assertEqual(len(res["only_b"]), len(api["only_b"]))
        self.assertIn(f"{api['counts']['shared']} cells in both runs", res["note"])
        self.assertIn(f"runs {a} and {c} share no cell", res["none"])
        self.assertEqual(res["none_rows"], 0)
        self.assertIn(f"runs {c} and {a} share no cell", res["history"])
        self.assertNotIn("No regression", res["history"])
