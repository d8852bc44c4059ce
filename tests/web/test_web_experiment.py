"""Browser test of "Find the cause": a lab whose h2 has a tbf on lo (lab.sh --slow-tcp h2:x8)
and agents allowed to change their lo qdisc (--allow-experiment qdisc). On h2's page its
flagged test offers "Find the cause"; on run 1's page the button is offered on h2's anomaly
against the fleet and on no other; clicked, it plans the
experiment (POST /api/runs/1/experiments), opens the experiment's own run page, and that page
follows it live to the answer the API gives (GET /api/runs/N/experiment): the same headline,
every suspect with the same verdict, the tbf the cause; back on run 1's page h2's anomaly says
what was proven, linked to the experiment, and so does h2's page, under that test's row. h2's
tbf is as it was afterwards. The
real coordinator, agents, store, lab and Chromium; it measures, so ctest runs it alone."""
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from smtest import can_lab, unless_root, unless_stolen  # noqa: E402
from test_web import WebCase, setUpModule, web_fleet  # noqa: E402,F401

TEST = {"workload": "stream", "scope": "local", "transport": "tcp", "framing": "lines",
        "msg_size": 128, "count": 8192}


@unless_root(can_lab(), "needs root: h2's TCP is slowed by tc in its network namespace")
class FindTheCauseTest(WebCase):
    def netns(self, f, host, *cmd):
        return subprocess.run(["ip", "netns", "exec", f.hosts[host]["netns"], *cmd],
                              capture_output=True, text=True, check=True, timeout=30).stdout

    def tbf(self, f):
        """h2's root qdisc on lo as tc shows it, without the handle the kernel picks anew."""
        return self.netns(f, "h2", "tc", "qdisc", "show", "dev", "lo", "root").split()[3:]

    @unless_stolen
    def test_find_the_cause_opens_the_experiment_and_its_answer(self):
        f = web_fleet(lab_args=["--slow-tcp", "h2:x8"],
                      agent_args=["--affinity", "0,1", "--allow-experiment", "qdisc"])
        self.addCleanup(f.stop)
        f.start()
        shown = self.tbf(f)
        rid = f.start_run({"name": "odd-h2", "hosts": "all", "repetitions": 8, "warmup": 1,
                           "parallel": False, "tests": [TEST]})
        self.assertEqual(f.wait_run(rid, 300)["state"], "done")
        flags = f.get(f"/api/runs/{rid}/anomalies")["anomalies"]
        self.assertEqual({a["host"] for a in flags if a["kind"] == "fleet"}, {"h2"}, flags)

        res = self.drive(f, "find_the_cause", run=rid, host="h2", xp_ms=240000)
        # h2's page offers it on its flagged test of this run, and on nothing else.
        rows = res["host_rows"]
        self.assertIn(("stream tcp lines 128 B x 8192", "flagged", str(rid), True),
                      [(r["test"], r["verdict"], r["run"], r["button"]) for r in rows], rows)
        self.assertTrue(all(r["button"] == (r["verdict"] == "flagged") for r in rows), rows)
        # Offered where an experiment can test something: h2 against the fleet, with its tbf.
        offered = [o for o in res["offered"] if o["button"]]
        self.assertTrue(offered, res["offered"])
        self.assertTrue(all(o["host"] == "h2" and o["kind"] == "fleet" for o in offered),
                        res["offered"])
        runs = [r for r in f.get("/api/runs")["runs"] if str(r["id"]) != str(rid)]
        self.assertEqual(len(runs), 1, runs)
        xid = str(runs[0]["id"])
        self.assertEqual(res["first"]["hash"], f"#/run/{xid}")
        done = res["done"]
        xp = f.get(f"/api/runs/{xid}/experiment")
        self.assertEqual(xp["explains"], str(rid))
        self.assertEqual(done["state"], xp["state"])
        self.assertEqual(done["summary"], xp["summary"])
        # Each suspect's row, and under it its reverse's (h2's value on a fleet host).
        want = []
        for s in xp["suspects"]:
            want.append((s["item"], s["verdict"], False))
            if s["reverse"]:
                want.append((s["item"], s["reverse"]["verdict"], True))
        self.assertEqual([(r["item"], r["verdict"], r["reverse"]) for r in done["rows"]], want)
        self.assertEqual(done["buttons"], 0, "an experiment's own anomalies offer no experiment")
        qdisc = {s["item"]: s for s in xp["suspects"]}["if.lo.qdisc"]
        if xp["control"]["n"] < 3:  # the product's rule when the host was too disturbed
            self.assertEqual(qdisc["verdict"], "inconclusive", xp)
            self.skipTest(f"h2 was disturbed while the experiment ran: {xp['control']}")
        self.assertEqual(qdisc["verdict"], "cause", xp)
        self.assertIn("lo qdisc is the cause", done["summary"])
        self.assertEqual(qdisc["reverse"]["host"], "h1", xp)
        reversed_row = next(r for r in done["rows"] if r["reverse"])
        self.assertTrue(reversed_row["share"].endswith(" opened"), reversed_row)
        # Run 1's anomaly now heads its why with the proof, linked to the experiment.
        proven = res["proven"]
        self.assertEqual(proven["cls"], "proven-cause", proven)
        self.assertEqual(proven["run"], xid)
        self.assertEqual(proven["href"], f"#/run/{xid}")
        self.assertIn(xp["summary"], proven["text"])
        # h2's page says it too, under the flagged test's row.
        cause = res["host_cause"]
        self.assertEqual((cause["after"], cause["after_verdict"], cause["host"]),
                         ("stream tcp lines 128 B x 8192", "flagged", "h2"), cause)
        self.assertEqual((cause["cls"], cause["run"], cause["href"]),
                         ("proven-cause", xid, f"#/run/{xid}"), cause)
        self.assertIn(xp["summary"], cause["text"])
        self.assertEqual(self.tbf(f), shown)


if __name__ == "__main__":
    unittest.main()
