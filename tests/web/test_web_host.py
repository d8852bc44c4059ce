"""Browser tests of the host pages: the real coordinator serves web/, three real agents run a
small matrix, and Debian's Chromium (drive.mjs, drive_host.mjs) reads the Fleet's latest verdict
column, History's flag and inconclusive counts and a host's page (#/hosts/NAME). What each
shows is checked against the API it comes from (GET /api/grid, /api/runs/ID/anomalies,
/api/agents/NAME/jobs, /api/agents/NAME/fingerprint); every host name links to its page; an old
#/hosts/a,b link opens the host settings; no view logs a console error."""
import os
import sys
import unittest
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from smtest import wait_for  # noqa: E402
from test_web import SHOTS, SMALL, WebCase, setUpModule, web_fleet  # noqa: E402,F401

HOSTS = ("h1", "h2", "h3")
# Every host against every other: 6 pairs x 2 repetitions.
PAIRS = {"name": "hostpairs", "hosts": "all", "repetitions": 2, "warmup": 0, "pairs": "mesh",
         "tests": [{"workload": "stream", "scope": "pair", "transport": "tcp",
                    "msg_size": 1000, "count": 200}]}
# A time as the dashboard writes one: to the minute, with its zone.
WHEN = r"^\d{4}-\d\d-\d\d \d\d:\d\d UTC([+-]\d{1,2}(:\d\d)?)?$"
WORD = {"ok": "ok", "flagged": "flagged", "inconclusive": "inconclusive", "failed": "failed",
        "no data": "no data"}
CLASS = {"ok": "verdict-ok", "flagged": "verdict-flagged",
         "inconclusive": "verdict-inconclusive", "failed": "verdict-failed",
         "no data": "verdict-nodata"}


def host_verdict(grid, host):
    """A host's latest verdict as the Fleet column states it, from the grid's cells."""
    cells = [c for c in grid["cells"] if c["host"] == host and c["verdict"] != "no data"]
    flagged = sorted(c["test"] for c in cells if c["verdict"] == "flagged")
    if flagged:
        return "flagged", ", ".join(flagged)
    for v in ("failed", "inconclusive", "ok"):
        if any(c["verdict"] == v for c in cells):
            return v, ""
    return "no data", ""


def run_counts(an):
    """A run's flags (its anomalies but the fleet's own moves) and cells not judged."""
    flags = sum(1 for a in an.get("anomalies", []) if a["kind"] != "fleet-move")
    return str(flags), str(an.get("cells", {}).get("inconclusive", 0))


class HostPagesTest(WebCase):
    @classmethod
    def setUpClass(cls):
        cls.f = web_fleet(n=3)
        cls.addClassCleanup(cls.f.stop)
        cls.f.start()
        # Each view's screenshot is kept there (not committed), as test_web.py keeps its own.
        os.makedirs(SHOTS, exist_ok=True)
        # Two ended runs of one name: the second has the first as its baseline.
        cls.runs = []
        for _ in range(2):
            rid = cls.f.start_run(dict(SMALL, name="hostpage"))
            cls.runs.append((rid, cls.f.wait_run(rid)["state"]))
        # And a run between hosts: h1's page shows the pairs it is an end of too.
        rid = cls.f.start_run(PAIRS)
        cls.runs.append((rid, cls.f.wait_run(rid)["state"]))
        wait_for("every fingerprint", lambda: all(
            cls.f.get_status(f"/api/agents/{h}/fingerprint")[0] == 200 for h in HOSTS), 20)

    def test_the_fleets_latest_verdicts_equal_the_grid_and_each_name_links_its_page(self):
        f = self.f
        grid = f.get("/api/grid")
        self.assertTrue(grid["cells"], "the runs gave the grid its cells")
        res = self.drive(f, "fleet_verdicts", shot=os.path.join(SHOTS, "host-page-fleet.png"))
        self.assertEqual(sorted(r["agent"] for r in res["rows"]), list(HOSTS))
        for r in res["rows"]:
            verdict, tests = host_verdict(grid, r["agent"])
            self.assertEqual((r["verdict"], r["tests"]), (verdict, tests), r)
            self.assertEqual(r["word"].split()[-1], WORD[verdict].split()[-1], r)
            self.assertEqual(r["cls"], CLASS[verdict], r)
            self.assertEqual(r["link"], {"text": r["agent"], "href": f"#/hosts/{r['agent']}"})
        self.assertEqual(res["settings"], {"text": "host settings", "href": "#/settings"})
        self.assertEqual(res["console_errors"], [])

    def test_historys_counts_equal_each_runs_anomalies_and_its_times_say_their_zone(self):
        f = self.f
        res = self.drive(f, "history_counts", runs=len(self.runs),
                         shot=os.path.join(SHOTS, "host-page-history.png"))
        self.assertEqual({r["run"] for r in res["rows"]}, {str(rid) for rid, _ in self.runs})
        for r in res["rows"]:
            an = f.get(f"/api/runs/{r['run']}/anomalies")
            self.assertEqual((r["flags"], r["inconclusive"]), run_counts(an), r)
            self.assertRegex(r["created"], WHEN)
            self.assertRegex(r["finished"], WHEN)
        # The regressions' host names, if any, link to their pages; the fleet's own move names
        # no host.
        for h in res["hosts"]:
            name = h["text"].split(" ")[0]
            self.assertEqual(h["link"], None if h["kind"] == "fleet-move" else f"#/hosts/{name}")
        self.assertEqual(res["console_errors"], [])

    def test_a_hosts_page_shows_its_verdicts_jobs_and_fingerprint_as_the_api_gives_them(self):
        f = self.f
        grid = f.get("/api/grid")
        jobs = f.get("/api/agents/h1/jobs?limit=20")
        fp = f.get("/api/agents/h1/fingerprint")
        res = self.drive(f, "host_page", host="h1", shot=os.path.join(SHOTS, "host-page-host.png"))
        self.assertEqual(res["hash"], "#/hosts/h1")
        self.assertEqual(res["title"], "Host h1")
        self.assertEqual(res["tab"], "fleet")
        self.assertEqual(res["verdict"], host_verdict(grid, "h1")[0])
        # Its own rows, then those of the pairs it is an end of.
        measured = [c for c in grid["cells"] if c["verdict"] != "no data"]
        want = [c for c in measured if c["host"] == "h1"] + \
            [c for c in measured if c["host"] != "h1" and "h1" in c["host"].split("->")]
        self.assertTrue(want)
        self.assertTrue(any("->" in c["host"] for c in want), "h1's pairs are on its page")
        self.assertEqual([(v["row"], v["test"], v["verdict"], v["run"]) for v in res["verdicts"]],
                         [(c["host"], c["test"], c["verdict"], c["run"]) for c in want])
        for v, c in zip(res["verdicts"], want):
            self.assertEqual(v["word"].split()[-1], WORD[c["verdict"]].split()[-1])
            # One point per ended run that measured the cell, its flagged ones counted.
            trend = f.get("/api/trends?" + urllib.parse.urlencode(
                {"host": c["host"], "test": c["test"], "metric": c["metric"]}))
            self.assertEqual(v["points"], str(len(trend["points"])), v)
            self.assertEqual(v["flagged"], str(sum(1 for p in trend["points"] if p["flagged"])), v)
            if c["median"] is None:  # every sample set aside (a busy machine): no figure
                self.assertEqual(v["median"], "", v)
                continue
            self.assertEqual(float(v["median"]), c["median"])
            # Against the fleet: a factor past 2x as the anomalies write it, else a percent.
            if c.get("fleet_median"):
                q = c["median"] / c["fleet_median"]
                if q >= 2 or q <= 0.5:
                    self.assertRegex(v["against"], r"^\d+(\.\d)?x (slower|faster|above the "
                                                   r"fleet|below the fleet)$", v)
                    self.assertNotIn("x the fleet", v["against"])
                else:
                    self.assertRegex(v["against"], r"^[+-]?\d+%$", v)
            self.assertTrue(v["value"].endswith(c["unit"]), v)
            self.assertTrue(v["fleet"].endswith(c["unit"]), v)
        self.assertEqual([j["id"] for j in res["jobs"]], [j["id"] for j in jobs["jobs"]])
        # Every job of h1 in the three runs (12 local and 8 of pairs or more, a disturbed sample
        # measured again), the newest 20 of them.
        total = sum(f.get(f"/api/runs/{rid}/jobs?host=h1")["total"] for rid, _ in self.runs)
        self.assertGreaterEqual(total, 20)
        self.assertEqual(len(res["jobs"]), min(total, 20))
        self.assertEqual(sorted(res["jobs"], key=lambda j: -int(j["id"])), res["jobs"],
                         "newest first")
        for j in res["jobs"]:
            if j["state"] == "done":
                self.assertRegex(j["ended"], WHEN)
        self.assertEqual(res["fp"]["hash"], fp["hash"])
        self.assertEqual(res["fp"]["items"], len(fp["fingerprint"]["items"]))
        self.assertEqual(res["fp"]["history"], [v["hash"] for v in fp["history"]])
        self.assertEqual(res["fp"]["settings"], "#/settings/h1,h2,h3")
        self.assertEqual(res["fp"]["settings_text"], "host settings")
        self.assertEqual(res["fp"]["stray_text"], [])
        # The hosts of one machine agree on all but their info items: nothing differs.
        diff = f.get("/api/fingerprints/diff?hosts=h1,h2,h3")
        self.assertEqual(res["fp"]["differ"], str(len(res["fp"]["differs"])))
        self.assertLessEqual(len(res["fp"]["differs"]), len(diff["items"]))
        self.assertEqual(res["console_errors"], [])

    def test_an_old_hosts_link_with_a_comma_opens_the_host_settings(self):
        res = self.drive(self.f, "old_hosts_link", hosts=["h1", "h2"])
        self.assertEqual(res["hash"], "#/settings/h1,h2")
        self.assertEqual(res["title"], "Host settings")
        self.assertEqual(res["tab"], "fleet")
        self.assertEqual(res["button"], "Show host settings")
        self.assertEqual(res["heads"], ["#/hosts/h1", "#/hosts/h2"])
        self.assertEqual(res["console_errors"], [])


if __name__ == "__main__":
    unittest.main()
