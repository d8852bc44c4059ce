"""Browser test of a run whose cells could not be judged: three real agents measure with their
senders pinned on CPU 0 while a CPU hog spins there for the whole run, so every sample is
disturbed and left out of the statistics. The run page then opens on the verdict ("Inconclusive:
0 anomalies among 0 judged cells; ...") with each cell not judged and why, never "None"; each
disturbed job shows the agent's reason, as the CLI does; the "include disturbed samples" switch
shows the API's disturbed=include verdict and figures (run and compare views, kept in the hash);
the Trends grid marks those cells inconclusive with their reason; "measure again" starts a run
of exactly the cells not judged. It measures: ctest runs it alone (kind measure)."""
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from hog import CpuHog  # noqa: E402
from smtest import BIN_DIR  # noqa: E402
from test_web import WebCase, setUpModule, web_fleet  # noqa: E402,F401

CLI = os.path.join(BIN_DIR, "sockmatrix")
# The 2010 test (test_disturbed.py's): long enough a job for the sender to wait for its CPU.
SPEC = {"name": "busy", "hosts": "all", "repetitions": 3, "warmup": 0, "parallel": False,
        "tests": [{"workload": "stream", "scope": "local", "transport": ["tcp", "unix"],
                   "framing": "lines", "msg_size": 128, "count": 8192}]}
WORD = {"inconclusive": "Inconclusive", "failed": "Failed", "flagged": "Flagged", "ok": "OK"}
CLASS = {"ok": "verdict-ok", "flagged": "verdict-flagged", "inconclusive": "verdict-inconclusive",
         "failed": "verdict-failed", "no data": "verdict-nodata"}
SHOWN = 10  # cells the banner lists before "N more"


def needs_banner(an):
    unjudged = an["cells"]["inconclusive"] + an["cells"]["failed"]
    return an["verdict"] in ("inconclusive", "failed") or (an["verdict"] == "flagged" and unjudged)


def row_label(c):
    return f"{c['host']}->{c['peer']}" if c.get("peer") else c["host"]


@unittest.skipUnless((os.cpu_count() or 1) >= 2 and hasattr(os, "sched_setaffinity"),
                     "needs two CPUs: the senders pinned on the hog's, the receivers apart")
class InconclusiveRunTest(WebCase):
    @classmethod
    def setUpClass(cls):
        cls.f = web_fleet(n=3, agent_args=["--affinity", "0,1"])
        cls.addClassCleanup(cls.f.stop)
        cls.f.start()
        # CPU 0 busy from before the first job to after the last: every sender waits for it.
        with CpuHog(cpu=0, seconds=400):
            cls.rid = cls.f.start_run(SPEC)
            cls.first = cls.f.wait_run(cls.rid, 360)
        cls.an = cls.f.get(f"/api/runs/{cls.rid}/anomalies")
        cls.jobs = cls.f.get(f"/api/runs/{cls.rid}/jobs?limit=1000")["jobs"]

    def setUp(self):
        self.assertEqual(self.first["state"], "done", self.first)
        # The premise, measured: the hog left cells without enough clean samples to judge.
        dist = [j for j in self.jobs if ((j.get("result") or {}).get("host") or {}).get("disturbed")]
        if not self.an["inconclusive"]:
            self.skipTest(f"the hog on the senders' CPU disturbed {len(dist)} of {len(self.jobs)} "
                          f"jobs, and every cell was judged: no run to show as inconclusive")

    def cli(self, *args):
        return subprocess.run([CLI, "--coordinator", self.f.url, *args], capture_output=True,
                              text=True, timeout=60, stdin=subprocess.DEVNULL)

    def test_an_inconclusive_runs_page_opens_on_its_verdict_and_the_cells_not_judged(self):
        f, an = self.f, self.an
        inc = f.get(f"/api/runs/{self.rid}/anomalies?disturbed=include")
        res = self.drive(f, "verdict_run", run=self.rid, jobs=len(self.jobs))
        p = res["plain"]
        b = p["banner"]
        self.assertIsNotNone(b, p)
        self.assertTrue(b["first_child"], "the banner comes first, under the title")
        self.assertEqual(b["verdict"], an["verdict"])
        self.assertEqual(b["text"], f"{WORD[an['verdict']]}: {an['summary']}")
        # Every cell not judged, in the API's order, with the API's reason; past ten folded.
        self.assertEqual([(c["row"], c["test"], c["why"], c["ratio"]) for c in b["cells"]],
                         [(x["row"], x["test"], x["why"], x["ratio"]) for x in an["inconclusive"]])
        n = len(an["inconclusive"])
        self.assertEqual([c["visible"] for c in b["cells"]], [i < SHOWN for i in range(n)])
        self.assertEqual(b["more"], f"{n - SHOWN} more" if n > SHOWN else None)
        self.assertTrue(any("disturbed" in x["why"] for x in an["inconclusive"]), an)
        self.assertTrue(b["again"])
        # The anomalies never say "None" of a run not judged.
        self.assertEqual(p["note"]["verdict"], an["verdict"])
        self.assertEqual(p["anomalies"], len(an["anomalies"]))
        if not an["anomalies"]:
            self.assertFalse(p["note"]["hidden"])
            self.assertEqual(p["note"]["text"], f"{WORD[an['verdict']]}: {an['summary']}.")
        self.assertNotIn("None", p["note"]["text"])
        # Each disturbed job says why, in the agent's words.
        by = {j["id"]: j for j in self.jobs}
        disturbed = 0
        for row in p["jobs"]:
            host = (by[row["id"]].get("result") or {}).get("host") or {}
            self.assertEqual(row["badge"], bool(host.get("disturbed")), row)
            self.assertEqual(row["reason"], host.get("disturbed_reason") if host.get("disturbed")
                             else None, row)
            disturbed += row["badge"]
        self.assertGreater(disturbed, 0)
        # The switch: the API's verdict with the disturbed samples, kept in the hash and
        # across a reload; off again, the plain verdict.
        self.assertEqual(p["switch"], {"checked": False, "label": "include disturbed samples"})
        for snap in (res["included"], res["reloaded"]):
            self.assertEqual(snap["hash"], f"#/run/{self.rid}?disturbed=include")
            self.assertTrue(snap["switch"]["checked"])
            self.assertEqual(snap["note"]["verdict"], inc["verdict"])
            if needs_banner(inc):
                self.assertEqual(snap["banner"]["verdict"], inc["verdict"])
                self.assertEqual(len(snap["banner"]["cells"]), len(inc["inconclusive"]))
            else:
                self.assertIsNone(snap["banner"], snap)
        self.assertNotEqual((inc["verdict"], len(inc["inconclusive"])),
                            (an["verdict"], len(an["inconclusive"])),
                            "counting the disturbed samples judged nothing more")
        off = res["off"]
        self.assertEqual(off["hash"], f"#/run/{self.rid}")
        self.assertFalse(off["switch"]["checked"])
        self.assertEqual(off["banner"]["verdict"], an["verdict"])

    def test_a_flagged_run_with_cells_not_judged_shows_both_and_folds_a_long_list(self):
        # A verdict served by the page's own route: a flag, and twelve cells not judged.
        an = dict(self.an, verdict="flagged",
                  summary="1 anomaly among 4 judged cells; 12 cells inconclusive",
                  cells={"judged": 4, "ok": 3, "flagged": 1, "inconclusive": 12, "failed": 0},
                  anomalies=[{"kind": "fleet", "host": "h2", "test": "stream tcp", "metric":
                              "throughput_MBps", "unit": "MB/s", "value": 10, "reference": 100,
                              "rel": -0.9, "z": -9, "direction": "low", "rule": "z"}],
                  inconclusive=[{"row": f"h{i % 3 + 1}", "test": f"test {i}", "brief": "",
                                 "ratio": False, "verdict": "inconclusive",
                                 "why": f"1 clean sample < 3 ({i})"} for i in range(12)])
        v = self.drive(self.f, "verdict_run_fixture", run=self.rid, anomalies=an)
        self.assertEqual(v["banner"]["verdict"], "flagged")
        self.assertEqual(v["banner"]["text"], f"Flagged: {an['summary']}")
        self.assertEqual([c["why"] for c in v["banner"]["cells"]],
                         [x["why"] for x in an["inconclusive"]])
        self.assertEqual([c["visible"] for c in v["banner"]["cells"]], [True] * 10 + [False] * 2)
        self.assertEqual(v["banner"]["more"], "2 more")
        self.assertEqual(v["anomalies"], 1)
        self.assertTrue(v["note"]["hidden"])

    def test_a_running_runs_note_says_so_far_and_none_only_when_all_was_judged(self):
        # The page reads the run as running from its GET /api/runs/ID (served here; the live
        # connection's snapshot may still name the run done, and the badge shows the later).
        running = dict(self.first, state="running", finished_ms=0)
        v = self.drive(self.f, "verdict_run_fixture", run=self.rid, run_doc=running,
                       anomalies=self.an)
        self.assertEqual(v["note"]["text"],
                         f"{WORD[self.an['verdict']]} so far: {self.an['summary']}.")
        self.assertIsNone(v["banner"], "the banner waits for the run's end")
        ok = dict(self.an, verdict="ok", summary="0 anomalies among 6 judged cells",
                  cells={"judged": 6, "ok": 6, "flagged": 0, "inconclusive": 0, "failed": 0},
                  inconclusive=[], anomalies=[])
        v = self.drive(self.f, "verdict_run_fixture", run=self.rid, run_doc=running, anomalies=ok)
        self.assertEqual(v["note"]["text"], "None so far.")

    def test_the_history_says_no_regressions_only_of_the_judged_cells(self):
        # Set against a baseline (served by the page's route: this run has none), a run whose
        # cells were not judged leads with its verdict.
        an = dict(self.an, baseline={"id": "1", "name": "busy"}, anomalies=[])
        v = self.drive(self.f, "verdict_history", run=self.rid, anomalies=an)
        self.assertTrue(v["text"].startswith(f"{WORD[an['verdict']]}: {an['summary']}. Among the "
                                             "judged cells, no regressions of run"), v)
        self.assertNotIn("No regression", v["text"])
        self.assertEqual(v["items"], 0)

    def test_the_cli_prints_each_disturbed_jobs_reason(self):
        cells = {}
        for j in self.jobs:
            host = (j.get("result") or {}).get("host") or {}
            if host.get("disturbed"):
                cells.setdefault(j["cell"], []).append((j["id"], host["disturbed_reason"]))
        self.assertTrue(cells)
        p = self.cli("jobs", str(self.rid))
        self.assertEqual(p.returncode, 0, p)
        lines = {x.split()[0]: x.rstrip() for x in p.stdout.splitlines()[1:]}
        for jobs in cells.values():
            for jid, why in jobs:
                self.assertTrue(lines[jid].endswith(f"disturbed: {why}"), lines[jid])
        cell, jobs = next(iter(cells.items()))
        p = self.cli("jobs", str(self.rid), "--cell", str(cell))
        self.assertEqual(p.returncode, 0, p)
        out = p.stdout.splitlines()
        self.assertEqual(out[2].split(), ["JOB", "REP", "WARM-UP", "STATE", "COUNTED", "VALUE",
                                          "WHY"])
        lines = {x.split()[0]: x.rstrip() for x in out[3:]}
        for jid, why in jobs:
            self.assertIn(" no (disturbed) ", lines[jid])
            self.assertTrue(lines[jid].endswith(f" {why}"), lines[jid])

    def test_include_disturbed_shows_the_apis_figures_on_the_compare_view(self):
        f = self.f
        plain = f.get(f"/api/runs/{self.rid}/table?format=json")
        inc = f.get(f"/api/runs/{self.rid}/table?format=json&disturbed=include")
        an_inc = f.get(f"/api/runs/{self.rid}/anomalies?disturbed=include")
        res = self.drive(f, "verdict_compare", run=self.rid, rows=len(plain["rows"]))
        for snap, t in ((res["plain"], plain), (res["included"], inc)):
            labels = [c["label"] for c in t["columns"] + t.get("ratio_columns", [])]
            self.assertEqual(snap["labels"], labels)
            self.assertEqual([r["host"] for r in snap["rows"]], t["rows"])
            for r, row in enumerate(snap["rows"]):
                want = [next((c for c in t[k] if c["row"] == r and c["column"] == i), None)
                        for k, cols in (("cells", t["columns"]),
                                        ("ratios", t.get("ratio_columns", [])))
                        for i in range(len(cols))]
                self.assertEqual(len(row["cells"]), len(want))
                for got, c in zip(row["cells"], want):
                    if c is None or c.get("median") is None:
                        self.assertIsNone(got["median"], (got, c))
                        continue
                    # The table's notation: four significant digits.
                    self.assertAlmostEqual(float(got["median"]), c["median"],
                                           delta=abs(c["median"]) * 1e-3, msg=(got, c))
                    self.assertTrue(got["count"].startswith(f"n={c['n']}"), (got, c))
        # The switch changed what the table shows: medians of cells that had none.
        medians = lambda s: sum(c["median"] is not None for r in s["rows"] for c in r["cells"])
        self.assertGreater(medians(res["included"]), medians(res["plain"]))
        self.assertEqual(res["included"]["hash"], f"#/compare/{self.rid}?disturbed=include")
        self.assertTrue(res["included"]["switch"])
        # "No host or link stands apart" only of a run whose every cell was judged.
        v = res["plain"]["verdict"]
        n = self.an["cells"]["inconclusive"] + self.an["cells"]["failed"]
        self.assertEqual(v["verdict"], self.an["verdict"])
        self.assertIn(self.an["summary"], v["text"])
        self.assertIn(f"{n} cell{'' if n == 1 else 's'} could not be judged", v["text"])
        self.assertEqual(v["cells"], len(self.an["inconclusive"]))
        self.assertNotIn("stands apart. ", res["plain"]["note"])
        ok = an_inc["verdict"] == "ok"
        self.assertEqual(res["included"]["note"].startswith("No host or link stands apart."), ok)

    def test_the_trends_grid_marks_the_cells_not_judged_inconclusive_with_why(self):
        f = self.f
        grid = f.get("/api/grid")
        res = self.drive(f, "verdict_trends", n_cells=len(grid["cells"]))
        shown = {(c["host"], c["test"]): c for c in res["cells"]}
        for c in grid["cells"]:
            s = shown[(c["host"], c["test"])]
            self.assertEqual(s["verdict"], c["verdict"])
            self.assertIn(CLASS[c["verdict"]], s["classes"])
            self.assertIn(c["verdict"], s["text"])  # the word, for screen readers too
            if c.get("why"):
                self.assertIn(c["why"], s["title"])
        # This run's cells not judged (those the grid takes from it).
        cells = {(c["host"], c["test"]): c for c in grid["cells"]}
        mine = [x for x in self.an["inconclusive"] if not x["ratio"]
                and cells[(x["row"], x["test"])]["run"] == str(self.rid)]
        self.assertTrue(mine, (self.an["inconclusive"], grid["cells"]))
        for x in mine:
            s = shown[(x["row"], x["test"])]
            self.assertEqual(s["verdict"], x["verdict"])
            self.assertIn(x["why"], s["title"])
        legend = {x["verdict"]: x for x in res["legend"]}
        self.assertEqual([x["verdict"] for x in res["legend"]],
                         ["ok", "flagged", "inconclusive", "failed", "no data"])
        for v, x in legend.items():
            self.assertIn(CLASS[v], x["classes"])
            self.assertIn(v, x["text"])
        # Its own colour: neither ok's green nor failed's red.
        self.assertNotIn(legend["inconclusive"]["bg"], (legend["ok"]["bg"], legend["failed"]["bg"]))

    def test_the_measure_again_button_follows_the_apis_answer(self):
        # The answers POST /api/runs/ID/again gives, served by the page's own route: the
        # button works whatever coordinator is behind it.
        f = self.f
        res = self.drive(f, "verdict_again", run=self.rid,
                         answer={"status": 201, "body": {"run": "987"}})
        self.assertEqual(res["sent"], [{"method": "POST", "body": "{}"}])
        self.assertEqual((res["hash"], res["error"]), ("#/run/987", None))
        why = f"every cell of run {self.rid} was judged: nothing to measure again"
        res = self.drive(f, "verdict_again", run=self.rid,
                         answer={"status": 409, "body": {"error": why}})
        self.assertEqual((res["hash"], res["error"]), (f"#/run/{self.rid}", why))

    # Named to run after the grid's test: the new run would become the grid's latest.
    def test_then_measure_again_starts_a_run_of_exactly_the_cells_not_judged(self):
        f = self.f
        status, body = f.post("/api/runs/999999999/again", {})
        self.assertEqual(status, 404, body)
        res = self.drive(f, "verdict_again", run=self.rid)
        self.assertIsNone(res["error"], res)
        new = res["hash"].split("/")[2]
        self.addCleanup(lambda: f.post(f"/api/runs/{new}/cancel", {}))
        self.assertNotEqual(new, str(self.rid))
        r = f.get(f"/api/runs/{new}")
        self.assertEqual(r["name"], self.first["name"] + "-again")
        want = sorted((x["row"], x["test"]) for x in self.an["inconclusive"] if not x["ratio"])
        self.assertEqual(sorted((row_label(c), c["test"]) for c in r["cells"]), want)
        # The spec's repetitions a cell to start with (the first run's cells grew as their
        # disturbed samples were measured again).
        self.assertEqual({c["jobs"] for c in r["cells"]}, {SPEC["repetitions"] + SPEC["warmup"]})


if __name__ == "__main__":
    unittest.main()
