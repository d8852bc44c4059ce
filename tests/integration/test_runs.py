"""Matrix runs end to end: the real coordinator plans, schedules and stores a run over real
agents (on loopback; the pair jobs between namespace lab hosts when root), and the store is
checked by query: job counts,
interleaving, no host in two jobs at once, retries, cancel, a lost host, a restart mid-run."""
import csv
import io
import json
import os
import signal
import unittest
import urllib.error
import urllib.request

from smtest import Fleet, netns, wait_for

# These runs are counted job by job: "remeasure": 0, or a sample this busy machine disturbs
# would add a round (remeasuring is tested in test_control_repetitions.c and test_disturbed_lab.py).
SEED = {"preset": "seed-tcp-unix", "repetitions": 2, "remeasure": 0, "warmup": 0}


def spec(tests, **top):
    s = {"name": "t", "hosts": "all", "repetitions": 2, "remeasure": 0, "warmup": 0,
         "tests": tests}
    s.update(top)
    return s


def stream(**p):
    t = {"workload": "stream", "scope": "local", "transport": ["tcp", "unix"], "msg_size": 1000,
         "count": 100}
    t.update(p)
    return {k: v for k, v in t.items() if v is not None}


# How long a lost host's queued run jobs wait for it (the default is 60 s).
LOST_GRACE_MS = 5000


def run_fleet():
    """Three loopback agents and a coordinator (how the runs are planned and stored is the
    matter here, not the network between the hosts)."""
    f = Fleet(n=3, hold_ms=1000, lab=False, unmeasured=True)
    f.extra_args = ["--lost-grace-ms", str(LOST_GRACE_MS)]
    return f


class RunCase(unittest.TestCase):
    def start(self, body):
        return self.f.start_run(body)

    def wait_run(self, rid, states=("done",), timeout=120):
        r = self.f.wait_run(rid, timeout)
        self.assertIn(r["state"], states, r)
        return r

    def jobs(self, rid):
        return self.f.query("SELECT id, host, cell, rep, warmup, state, attempt, assigned_ms, "
                            "finished_ms, reason FROM jobs WHERE run_id = ? ORDER BY ord", rid)

    def coordinator_log(self):
        with open(os.path.join(self.f.dir, "coordinator.log")) as log:
            return log.read()

    def assert_no_overlap(self, intervals, what):
        intervals = sorted(i for i in intervals if i[0])
        for (s1, e1), (s2, e2) in zip(intervals, intervals[1:]):
            self.assertLessEqual(e1, s2, f"{what}: jobs overlap ({s1}-{e1} and {s2}-{e2})")


class RunTest(RunCase):
    """One fleet for the class: each test starts its own runs, reads their ids and waits for
    them to end, and none kills a process."""

    @classmethod
    def setUpClass(cls):
        cls.f = run_fleet()
        cls.addClassCleanup(cls.f.stop)
        cls.f.start()

    def test_seed_preset_runs_every_variant_on_every_host_and_exports_the_table(self):
        rid = self.start(SEED)
        r = self.wait_run(rid)
        self.assertEqual(r["progress"], {"done": 18, "failed": 0, "total": 18})  # 3 x 3 x 2
        self.assertEqual(len(r["cells"]), 9)
        jobs = self.jobs(rid)
        self.assertEqual(len(jobs), 18)
        self.assertEqual(self.f.query("SELECT COUNT(*) FROM results r JOIN jobs j ON "
                                      "r.job_id = j.id WHERE j.run_id = ?", rid)[0][0], 18)
        for h in ("h1", "h2", "h3"):
            mine = [j for j in jobs if j[1] == h]
            # The host's jobs ran one at a time, in plan order: variants interleaved A B C A B C.
            self.assert_no_overlap([(j[7], j[8]) for j in mine], h)
            by_start = sorted(mine, key=lambda j: j[7])
            cells = [j[2] for j in by_start]
            self.assertEqual(cells[:3], cells[3:6], cells)
            self.assertEqual(len(set(cells[:3])), 3, cells)
        with urllib.request.urlopen(self.f.url + f"/api/runs/{rid}/table?format=csv") as resp:
            self.assertTrue(resp.headers["Content-Type"].startswith("text/csv"))
            rows = list(csv.reader(io.StringIO(resp.read().decode(), newline="")))
        self.assertEqual(rows[0][0], "host")
        self.assertEqual(sorted(r[0] for r in rows[1:]), ["h1", "h2", "h3"])
        self.assertTrue(any("tcp/unix" in c for c in rows[0]), rows[0])
        with urllib.request.urlopen(self.f.url + f"/api/runs/{rid}/table?format=md") as resp:
            md = resp.read().decode()
        self.assertIn("| h2 ", md)
        table = self.f.get(f"/api/runs/{rid}/table?format=json")
        self.assertEqual(table["version"], 1)

    def test_preset_hosts_and_repetitions_override_and_bad_specs_name_the_field(self):
        rid = self.start({"preset": "seed-tcp-unix", "hosts": ["h1", "h2"], "repetitions": 1,
                          "remeasure": 0, "warmup": 1})
        r = self.wait_run(rid)
        self.assertEqual(r["progress"]["total"], 12)  # 3 variants x 2 hosts x (1 + 1 warm-up)
        self.assertEqual(sum(1 for j in self.jobs(rid) if j[4]), 6)
        for body, field in (({"preset": "nope"}, "preset"),
                            ({"preset": "seed-tcp-unix", "hosts": ["h9"]}, "hosts"),
                            (spec([stream(msg_size=0)]), "tests[0]"),
                            (spec([stream()], repetitions=0), "repetitions")):
            status, resp = self.f.post("/api/runs", body)
            self.assertEqual(status, 400, (body, resp))
            self.assertIn(field, resp.get("field", "") + resp["error"], resp)
        presets = self.f.get("/api/presets")["presets"]
        self.assertTrue({"seed-tcp-unix", "quick", "full"} <= {p["name"] for p in presets})

    def test_empty_and_malformed_posts_get_an_answer_and_the_coordinator_lives_on(self):
        # A run id this store has not given (the class's other tests made runs before).
        nobody = 1 + max([int(r["id"]) for r in self.f.get("/api/runs")["runs"]], default=0)
        for path, body in ((f"/api/runs/{nobody}/cancel", b""), ("/api/runs", b""),
                           ("/api/jobs", b""), ("/api/runs", b"{not json"), ("/api/runs", b"[]")):
            req = urllib.request.Request(self.f.url + path, data=body, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=10) as r:
                    status = r.status
            except urllib.error.HTTPError as e:
                status = e.code
                self.assertIn("error", json.loads(e.read()))
            self.assertGreaterEqual(status, 400, path)
            self.assertLess(status, 500, path)
        self.assertTrue(self.f.get("/healthz")["ok"])
        self.assertIsNone(self.f.coord.poll())

    def test_parallel_false_runs_one_job_fleet_wide_at_a_time(self):
        rid = self.start(spec([stream(count=2000)], parallel=False))
        self.wait_run(rid)
        jobs = self.jobs(rid)
        self.assertEqual(len(jobs), 12)
        self.assert_no_overlap([(j[7], j[8]) for j in jobs], "fleet")

    def test_hosts_of_one_machine_run_one_job_at_a_time_and_the_run_says_why(self):
        # These agents, loopback processes or namespaces of one lab, all run on this machine.
        with open("/proc/sys/kernel/random/boot_id") as fh:
            boot_id = fh.read().strip()
        agents = self.f.get("/api/agents")["agents"]
        self.assertEqual({a["facts"]["boot_id"] for a in agents}, {boot_id}, agents)
        rid = self.start(spec([stream(count=2000)]))  # "parallel" left to the coordinator
        r = self.wait_run(rid)
        want = f"h1, h2, h3 share one machine (boot id {boot_id[:8]})"
        self.assertEqual((r["parallel"], r["serial_reason"], r["parallel_warning"]),
                         (False, want, ""), r)
        listed = {x["id"]: x for x in self.f.get("/api/runs")["runs"]}[str(rid)]
        self.assertEqual((listed["parallel"], listed["serial_reason"]), (False, want))
        jobs = self.jobs(rid)
        self.assertEqual(len(jobs), 12)
        self.assert_no_overlap([(j[7], j[8]) for j in jobs], "fleet")
        # The coordinator said so once, when the run started.
        with open(f"{self.f.dir}/coordinator.log") as fh:
            log = fh.read()
        self.assertEqual(log.count(f"SM-RUN-SERIAL run {rid} (t): {want}"), 1, log[-2000:])

    def test_parallel_true_on_one_machine_runs_side_by_side_with_a_warning(self):
        rid = self.start(spec([stream(count=None, duration_ms=300)], parallel=True))
        r = self.wait_run(rid)
        self.assertIs(r["parallel"], True)
        self.assertEqual(r["serial_reason"], "")
        self.assertRegex(r["parallel_warning"],
                         r"^h1, h2, h3 share one machine \(boot id [0-9a-f]{8}\): their jobs run "
                         r"side by side on its CPUs, as the spec asks \(\"parallel\": true\)$")
        # Side by side: some job of one host ran while another host's did.
        spans = [(j[7], j[8], j[1]) for j in self.jobs(rid)]
        self.assertTrue(any(s1 < e2 and s2 < e1 and h1 != h2
                            for s1, e1, h1 in spans for s2, e2, h2 in spans), spans)

    def test_a_failed_job_is_retried_once_and_the_run_ends_failed_with_counts(self):
        rid = self.start(spec([stream(transport="unix", count=1000000000, msg_size=65536,
                                      time_limit_ms=500)], hosts=["h1"], repetitions=1))
        r = self.wait_run(rid, states=("failed",))
        self.assertEqual(r["progress"], {"done": 0, "failed": 1, "total": 1})
        [job] = self.jobs(rid)
        self.assertEqual(job[6], 2)  # attempt
        self.assertIn("time limit", job[9])
        self.assertEqual(self.f.query("SELECT COUNT(*) FROM results WHERE job_id = ?",
                                      job[0])[0][0], 2)  # both attempts stored

    def test_cancel_stops_the_run_within_one_job(self):
        rid = self.start(spec([stream(count=None, duration_ms=2000)], repetitions=5))
        wait_for("a job to run", lambda: any(j[5] == "running" for j in self.jobs(rid)), 15)
        status, _ = self.f.post(f"/api/runs/{rid}/cancel", {})
        self.assertEqual(status, 200)
        r = self.f.get(f"/api/runs/{rid}")
        self.assertEqual(r["state"], "cancelled")
        self.assertFalse([j for j in self.jobs(rid) if j[5] in ("queued", "assigned", "running")])
        # The agents stop their cancelled jobs: a new run starts within one job's time.
        rid2 = self.start(spec([stream()], repetitions=1))
        self.wait_run(rid2, timeout=10)
        status, resp = self.f.post(f"/api/runs/{rid}/cancel", {})
        self.assertEqual(status, 409, resp)


class RunRecoveryTest(RunCase):
    """A fleet of its own for each test: each kills an agent or the coordinator."""

    def setUp(self):
        self.f = run_fleet()
        self.addCleanup(self.f.stop)
        self.f.start()

    def test_a_lost_host_fails_its_jobs_and_the_run_ends_without_it(self):
        rid = self.start(spec([stream(count=None, duration_ms=1000)], repetitions=3))
        wait_for("h3 to run a job",
                 lambda: any(j[1] == "h3" and j[5] == "running" for j in self.jobs(rid)), 15)
        self.f.kill(self.f.agents["h3"])
        r = self.wait_run(rid, states=("failed",), timeout=60)
        jobs = self.jobs(rid)
        h3 = [j for j in jobs if j[1] == "h3"]
        self.assertTrue(h3 and all(j[5] == "failed" and "agent-lost" in j[9] for j in h3), h3)
        # The one it ran died with it; the queued ones waited the grace for it first.
        waited = [j for j in h3 if f"did not come back within {LOST_GRACE_MS} ms" in j[9]]
        self.assertGreaterEqual(len(waited), len(h3) - 2, h3)
        self.assertTrue(all(j[5] == "done" for j in jobs if j[1] != "h3"))
        self.assertEqual(r["progress"]["failed"], len(h3))
        self.assertIn("SM-AGENT-GONE", self.coordinator_log())

    def test_a_lost_host_back_within_the_grace_runs_its_queued_jobs(self):
        rid = self.start(spec([stream(count=None, duration_ms=1000)], repetitions=3))
        wait_for("h3 to run a job",
                 lambda: any(j[1] == "h3" and j[5] == "running" for j in self.jobs(rid)), 15)
        self.f.kill(self.f.agents["h3"])
        wait_for("h3 to be lost", lambda: "h3" not in self.f.online(), 15)
        self.f.start_agent("h3")  # back well within the grace
        r = self.wait_run(rid, timeout=90)
        # The job it died in was retried; the queued ones waited for it and ran.
        self.assertEqual(r["progress"]["failed"], 0, r)
        jobs = self.jobs(rid)
        self.assertTrue(all(j[5] == "done" for j in jobs), jobs)
        self.assertNotIn("SM-AGENT-GONE", self.coordinator_log())

    def test_a_coordinator_restarted_mid_run_resumes_and_finishes_it(self):
        rid = self.start(spec([stream(count=None, duration_ms=300)], repetitions=4))
        wait_for("a few jobs done", lambda: sum(j[5] == "done" for j in self.jobs(rid)) >= 4, 30)
        self.f.kill(self.f.coord)
        self.f.start_coordinator()
        r = self.wait_run(rid, timeout=90)
        self.assertEqual(r["progress"], {"done": 24, "failed": 0, "total": 24})
        for h in ("h1", "h2", "h3"):
            self.assert_no_overlap([(j[7], j[8]) for j in self.jobs(rid) if j[1] == h], h)


@netns
class MeshTest(unittest.TestCase):
    """Pair jobs: the server prepares on its data address, reports its port, the client
    starts; both sides are stored and merged; a host is never in two jobs at once. Between
    lab hosts when root, each on an address of its own; one fleet for the class."""

    @classmethod
    def setUpClass(cls):
        cls.f = Fleet(n=4, hold_ms=1000, unmeasured=True)
        cls.addClassCleanup(cls.f.stop)
        cls.f.start()

    def test_a_mesh_on_four_hosts_measures_every_pair_both_ways(self):
        f = self.f
        body = {"name": "mesh", "hosts": "all", "pairs": "mesh", "repetitions": 1, "remeasure": 0,
                "warmup": 0, "tests": [{"workload": "stream", "scope": "pair", "transport": "tcp",
                           "msg_size": 65536, "count": 64},
                          {"workload": "rr", "scope": "pair", "transport": "tcp",
                           "count": 200}]}
        status, resp = f.post("/api/runs", body)
        self.assertEqual(status, 201, resp)
        rid = int(resp["run"])
        r = wait_for("the mesh run", lambda: (x := f.get(f"/api/runs/{rid}"))["state"] != "running"
                     and x, 120, 0.2)
        self.assertEqual(r["state"], "done", r)
        self.assertEqual(r["progress"], {"done": 24, "failed": 0, "total": 24})
        jobs = f.query("SELECT id, host, peer, assigned_ms, finished_ms FROM jobs "
                       "WHERE run_id = ?", rid)
        pairs = sorted((j[1], j[2]) for j in jobs)
        hosts = ["h1", "h2", "h3", "h4"]
        expected = sorted((a, b) for a in hosts for b in hosts if a != b) * 2
        self.assertEqual(pairs, sorted(expected))
        ids = [j[0] for j in jobs]
        marks = ",".join("?" * len(ids))
        sides = f.query(f"SELECT role, COUNT(*) FROM pair_results WHERE job_id IN ({marks}) "
                        f"GROUP BY role", *ids)
        self.assertEqual(dict(sides), {"server": 24, "client": 24})
        self.assertEqual(f.stored(ids), (24, 24))
        # A host takes part from its job's assignment until its own side's result is stored
        # (the partner's side may end later): those spans never overlap.
        side_end = {(jid, role): ms for jid, role, ms in
                    f.query(f"SELECT job_id, role, stored_ms FROM pair_results "
                            f"WHERE job_id IN ({marks})", *ids)}
        for h in hosts:
            spans = sorted((j[3], side_end[(j[0], "client" if h == j[1] else "server")])
                           for j in jobs if h in (j[1], j[2]))
            for (s1, e1), (s2, e2) in zip(spans, spans[1:]):
                self.assertLessEqual(e1, s2, f"{h} in two jobs at once")
        # The stream jobs moved what they were asked to, seen by the receiver.
        for jid in ids:
            j = f.job(jid)
            if j["params"]["workload"] == "stream":
                self.assertEqual(j["result"]["metrics"]["bytes"], 64 * 65536)
                self.assertIn("tx_user_s", j["result"]["metrics"])  # the sender's side too
        with urllib.request.urlopen(f.url + f"/api/runs/{rid}/table?format=csv") as resp:
            rows = list(csv.reader(io.StringIO(resp.read().decode(), newline="")))
        self.assertEqual(rows[0][0], "pair")
        self.assertEqual(len(rows) - 1, 12)
        self.assertIn("h1->h2", [row[0] for row in rows[1:]])

    def test_a_pair_test_needs_data_addresses_and_tcp(self):
        status, resp = self.f.post("/api/runs", {
            "name": "p", "hosts": "all", "pairs": "ring", "tests": [
                {"workload": "stream", "scope": "pair", "transport": "unix", "count": 10}]})
        self.assertEqual(status, 400)
        self.assertIn("tcp", resp["error"])


if __name__ == "__main__":
    unittest.main()
