"""Adaptive repetitions end to end: "repetitions": {"min", "max", "ci_rel"} in a spec sent to
the real coordinator over real agents (on loopback; the pair cells between lab hosts when
root). Each cell starts with min repetitions and gets more
interleaved rounds until its CI is tight or max is reached; the table says which cells stopped
on max; the rounds it added survive a restart of the coordinator."""
import csv
import io
import unittest
import urllib.request

from smtest import Fleet, netns, wait_for


def spec(reps, **stream):
    """A run of stream tcp and unix on every host. "remeasure": 0: these tests count the rounds
    the CI rule adds up to max, and a sample this busy machine disturbs would add more
    (remeasuring is tested in test_control_repetitions.c and test_disturbed_lab.py)."""
    test = {"workload": "stream", "scope": "local", "transport": ["tcp", "unix"],
            "msg_size": 1000, "count": 200}
    test.update(stream)
    test = {k: v for k, v in test.items() if v is not None}
    return {"name": "adaptive", "hosts": "all", "warmup": 0, "repetitions": reps,
            "remeasure": 0, "tests": [test]}


class AdaptiveRunCase(unittest.TestCase):
    LAB = False  # how rounds are added is the matter here, not the network between the hosts

    def setUp(self):
        self.f = Fleet(n=3, hold_ms=1000, lab=self.LAB)
        self.addCleanup(self.f.stop)
        self.f.start()

    def start(self, body):
        return self.f.start_run(body)

    def wait_run(self, rid, timeout=180):
        r = self.f.wait_run(rid, timeout)
        self.assertEqual(r["state"], "done", r)
        return r

    def table(self, rid, fmt):
        with urllib.request.urlopen(self.f.url + f"/api/runs/{rid}/table?format={fmt}") as r:
            return r.read().decode()

    def measured(self, rid):
        """{(host, cell): [rep, ...]} of the run's measured jobs, in dispatch order."""
        out = {}
        for host, cell, rep in self.f.query("SELECT host, cell, rep FROM jobs WHERE run_id = ? "
                                            "AND warmup = 0 ORDER BY ord, id", rid):
            out.setdefault((host, cell), []).append(rep)
        return out

    def assert_rounds_stay_paired(self, rid):
        """The variants of one test on one host get the same repetitions, numbered 0..n-1:
        a round is added for the whole group, so rep i of tcp pairs with rep i of unix."""
        per_host = {}
        for (host, cell), reps in self.measured(rid).items():
            self.assertEqual(sorted(reps), list(range(len(reps))), (host, cell, reps))
            per_host.setdefault(host, set()).add(len(reps))
        for host, counts in per_host.items():
            self.assertEqual(len(counts), 1, f"{host}: variants with different counts {counts}")


class AdaptiveRunTest(AdaptiveRunCase):

    def test_cells_get_between_min_and_max_repetitions_and_tight_ones_stop_on_ci(self):
        ci_rel = 0.2
        rid = self.start(spec({"min": 3, "max": 8, "ci_rel": ci_rel}))
        r = self.wait_run(rid)
        jobs = self.f.query("SELECT COUNT(*) FROM jobs WHERE run_id = ?", rid)[0][0]
        self.assertEqual(r["progress"], {"done": jobs, "failed": 0, "total": jobs})
        self.assertGreaterEqual(jobs, 3 * 2 * 3)
        self.assertLessEqual(jobs, 3 * 2 * 8)
        self.assert_rounds_stay_paired(rid)
        table = self.f.get(f"/api/runs/{rid}/table?format=json")
        self.assertEqual(len(table["cells"]), 6)
        for c in table["cells"]:
            # n counts the clean samples; a disturbed one was measured too and counts towards
            # max, but is no sample for the table or the rule.
            ran = c["n"] + c["disturbed"]
            self.assertGreaterEqual(ran, 3, c)
            self.assertLessEqual(ran, 8, c)
            self.assertIn(c["stopped"], ("ci", "max"), c)
            half = (c["ci95_high"] - c["ci95_low"]) / 2
            if c["stopped"] == "ci":
                self.assertLessEqual(half, ci_rel * abs(c["median"]) * (1 + 1e-9), c)
            else:
                self.assertEqual(ran, 8, c)
                self.assertGreater(half, ci_rel * abs(c["median"]), c)
        # Ratio cells are not adaptive cells: they never say why they stopped.
        self.assertTrue(all(c["stopped"] is None for c in table["ratios"]), table["ratios"])

    def test_a_cell_that_never_gets_tight_stops_on_max_and_the_table_says_so(self):
        rid = self.start(spec({"min": 3, "max": 5, "ci_rel": 0.0001}))
        r = self.wait_run(rid)
        # 3 hosts x 2 variants x 5: the total grew from 18 as rounds were added.
        self.assertEqual(r["progress"], {"done": 30, "failed": 0, "total": 30})
        self.assert_rounds_stay_paired(rid)
        table = self.f.get(f"/api/runs/{rid}/table?format=json")
        self.assertEqual([(c["n"] + c["disturbed"], c["stopped"]) for c in table["cells"]],
                         [(5, "max")] * 6)
        md = self.table(rid, "md&disturbed=include")  # every repetition that ran, in n
        self.assertEqual(md.count("n=5 (max)"), 6, md)
        rows = list(csv.reader(io.StringIO(self.table(rid, "csv"), newline="")))
        stopped = [i for i, h in enumerate(rows[0]) if h.endswith(" stopped")]
        self.assertEqual(len(stopped), 2, rows[0])
        self.assertEqual({row[i] for row in rows[1:] for i in stopped}, {"max"})
        self.assertEqual(self.f.query("SELECT DISTINCT stopped FROM cells WHERE run_id = ?", rid),
                         [("max",)])

    def test_fixed_repetitions_record_no_stop(self):
        rid = self.start(spec(2))
        r = self.wait_run(rid)
        self.assertEqual(r["progress"]["total"], 12)
        table = self.f.get(f"/api/runs/{rid}/table?format=json")
        self.assertTrue(all(c["stopped"] is None for c in table["cells"]), table["cells"])
        self.assertNotIn("stopped", self.table(rid, "csv").splitlines()[0])

    def test_rounds_added_before_a_coordinator_restart_are_resumed(self):
        rid = self.start(spec({"min": 2, "max": 5, "ci_rel": 0.0001}, count=None,
                              duration_ms=200))
        # Past the first round added (more than 3 x 2 x 2 jobs exist), then a restart.
        wait_for("a round to be added",
                 lambda: self.f.query("SELECT COUNT(*) FROM jobs WHERE run_id = ?",
                                      rid)[0][0] > 12, 60)
        self.f.kill(self.f.coord)
        left = self.f.query("SELECT COUNT(*) FROM jobs WHERE run_id = ? AND state NOT IN "
                            "('done', 'failed')", rid)[0][0]
        total = self.f.query("SELECT total FROM runs WHERE id = ?", rid)[0][0]
        self.assertGreater(left, 0, "the run ended before the restart: nothing was resumed")
        self.assertLess(total, 30)
        self.f.start_coordinator()
        r = self.wait_run(rid)
        self.assertEqual(r["progress"], {"done": 30, "failed": 0, "total": 30})
        self.assert_rounds_stay_paired(rid)
        self.assertEqual(self.f.query("SELECT stopped, COUNT(*) FROM cells WHERE run_id = ? "
                                      "GROUP BY stopped", rid), [("max", 6)])

    def test_bad_bounds_are_refused_naming_the_member(self):
        for reps, field in (({"min": 0}, "repetitions.min"), ({"min": 9, "max": 8},
                                                               "repetitions.max"),
                            ({"ci_rel": 1.5}, "repetitions.ci_rel"), ("lots", "repetitions")):
            status, resp = self.f.post("/api/runs", spec(reps))
            self.assertEqual(status, 400, (reps, resp))
            self.assertEqual(resp.get("field"), field, resp)


@netns
class AdaptivePairRunTest(AdaptiveRunCase):
    """Pair cells between lab hosts when root, each on an address of its own."""

    LAB = None

    def test_pair_cells_get_their_rounds_and_no_host_is_in_two_jobs_at_once(self):
        body = {"name": "mesh", "hosts": "all", "pairs": "mesh", "warmup": 0,
                "repetitions": {"min": 2, "max": 3, "ci_rel": 0.0001}, "remeasure": 0,
                "tests": [{"workload": "stream", "scope": "pair", "transport": "tcp",
                           "msg_size": 65536, "count": 32}]}
        rid = self.start(body)
        r = self.wait_run(rid)
        self.assertEqual(r["progress"], {"done": 18, "failed": 0, "total": 18})  # 6 pairs x 3
        table = self.f.get(f"/api/runs/{rid}/table?format=json")
        self.assertTrue(table["pairs"])
        self.assertEqual([(c["n"] + c["disturbed"], c["stopped"]) for c in table["cells"]],
                         [(3, "max")] * 6)
        # A host takes part from its job's assignment until its own side's result is stored
        # (the partner's side may end later): those spans never overlap, added rounds included.
        jobs = self.f.query("SELECT id, host, peer, assigned_ms FROM jobs WHERE run_id = ?", rid)
        side_end = {(jid, role): ms for jid, role, ms in self.f.query(
            "SELECT p.job_id, p.role, p.stored_ms FROM pair_results p JOIN jobs j "
            "ON j.id = p.job_id WHERE j.run_id = ?", rid)}
        for h in ("h1", "h2", "h3"):
            spans = sorted((j[3], side_end[(j[0], "client" if h == j[1] else "server")])
                           for j in jobs if h in (j[1], j[2]))
            for (s1, e1), (s2, e2) in zip(spans, spans[1:]):
                self.assertLessEqual(e1, s2, f"{h} in two jobs at once")


if __name__ == "__main__":
    unittest.main()
