"""Disturbed samples on the lab (network namespaces, root): a CPU hog on the CPU where one host
measures makes that host's samples disturbed, and the table says so per cell, while the hosts
measuring on the other CPU stay clean; a link cut in the middle of a pair job marks that job
disturbed by the network, and the next, uncut one not. The real coordinator, agents, store and
API."""
import csv
import io
import json
import os
import subprocess
import time
import unittest
import urllib.request

from hog import CpuHog
from smtest import Fleet, can_lab, wait_for

SEED = {"workload": "stream", "scope": "local", "transport": ["tcp", "unix"], "framing": "lines",
        "msg_size": 128, "count": 8192}
REPS = 4


def cpu1_busy_s():
    """Seconds CPU 1 spent busy since boot (/proc/stat's cpu1 line)."""
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu1 "):
                v = [int(x) for x in line.split()[1:9]]
                return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")
    return 0.0


def cpu_s(pids):
    """User + system seconds the processes pids used so far (/proc/PID/stat)."""
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


@unittest.skipUnless(can_lab(), "needs root for the lab's network namespaces")
class DisturbedLabTest(unittest.TestCase):
    def fleet(self):
        f = Fleet(n=3, hold_ms=1000)
        self.addCleanup(f.stop)
        f.start_coordinator()
        # h2 measures on CPU 0, where the hog will spin; h1 and h3 on CPU 1. Both ends of a
        # job share their CPU, so the hog is the only other task there.
        for name in f.hosts:
            f.agent_args = ["--affinity", "0,0" if name == "h2" else "1,1"]
            f.start_agent(name)
        wait_for("every agent online", lambda: f.online() >= set(f.hosts), 20)
        return f

    def run_spec(self, f, body, timeout=300):
        rid = f.start_run(body)
        r = f.wait_run(rid, timeout)
        self.assertEqual(r["state"], "done", r)
        return rid

    def test_a_hog_on_one_hosts_cpu_makes_its_cells_disturbed_in_the_table(self):
        f = self.fleet()
        body = {"name": "hogged", "hosts": "all", "repetitions": REPS, "warmup": 1,
                "parallel": False, "tests": [SEED]}
        # The hog pushes every other task of this machine onto CPU 1, where h1 and h3 measure:
        # a machine busy with other work disturbs them too. A run whose h1 and h3 stay mostly
        # clean settles it; after three runs that did not, the CPU time others used on CPU 1
        # (measured apart from the rule) says whether the machine was too busy to tell.
        ours = [p.pid for p in f.agents.values()] + [f.coord.pid]
        tries, foreign, busy = [], [], None
        for _ in range(3):
            busy0, mine0, t0 = cpu1_busy_s(), cpu_s(ours), time.monotonic()
            with CpuHog(cpu=0, seconds=240):
                rid = self.run_spec(f, body)
            wall = time.monotonic() - t0
            foreign.append(round((cpu1_busy_s() - busy0 - (cpu_s(ours) - mine0)) / wall, 2))
            t = f.get(f"/api/runs/{rid}/table?format=json")
            self.assertEqual(t["disturbed"], "exclude")
            rows = t["rows"]
            by_row = {}
            for c in t["cells"]:
                by_row.setdefault(rows[c["row"]], []).append(c)
            # h2: every measured sample disturbed, none summarised, noisy saying so.
            self.assertEqual(len(by_row["h2"]), 2, t)
            for c in by_row["h2"]:
                self.assertEqual(c["disturbed"], REPS, c)
                self.assertEqual(c["n"], 0, c)
                self.assertTrue(c["noisy"])
                self.assertEqual(c["noisy_reason"], f"{REPS} of {REPS} samples disturbed")
            others = [c for h in ("h1", "h3") for c in by_row[h]]
            self.assertEqual(len(others), 4, t)
            self.assertTrue(all(c["n"] + c["disturbed"] == REPS for c in others), others)
            tries.append(sum(c["disturbed"] for c in others))
            if tries[-1] < len(others) * REPS // 2:
                break
        else:
            if min(foreign) > 0.25:
                busy = (f"other work kept CPU 1 busy in every run (CPU used by others per "
                        f"second: {foreign}; h1 and h3 disturbed: {tries} of 16)")
            else:
                    self.fail(f"h1 and h3, away from the hog, came out disturbed: {tries} of 16 "
                          f"(CPU 1 used by others per second: {foreign})")
        # The jobs themselves say why.
        jobs = f.query("SELECT r.result_json FROM jobs j JOIN results r ON r.job_id = j.id "
                       "AND r.attempt = j.attempt WHERE j.run_id = ? AND j.host = 'h2' "
                       "AND j.warmup = 0", rid)
        self.assertEqual(len(jobs), 2 * REPS)
        for (res,) in jobs:
            self.assertIn("waited for a CPU", res)
            self.assertIn("beyond the other thread's turns", res)

        # Every format shows the count; ?disturbed=include puts them back.
        with urllib.request.urlopen(f.url + f"/api/runs/{rid}/table?format=csv") as r:
            table = list(csv.reader(io.StringIO(r.read().decode(), newline="")))
        header, data = table[0], {row[0]: row for row in table[1:]}
        cols = [i for i, h in enumerate(header) if h.endswith(" disturbed")]
        self.assertEqual(len(cols), 2, header)
        self.assertEqual([data["h2"][i] for i in cols], [str(REPS)] * 2)
        with urllib.request.urlopen(f.url + f"/api/runs/{rid}/table?format=md") as r:
            md = r.read().decode()
        h2_line = [line for line in md.splitlines() if line.startswith("| h2 ")][0]
        self.assertEqual(h2_line.count(f"{REPS} disturbed"), 2, md)
        t2 = f.get(f"/api/runs/{rid}/table?format=json&disturbed=include")
        self.assertEqual(t2["disturbed"], "include")
        for c in t2["cells"]:
            if rows[c["row"]] == "h2":
                self.assertEqual((c["n"], c["disturbed"]), (REPS, REPS), c)
        status, err = f.get_status(f"/api/runs/{rid}/table?disturbed=maybe")
        self.assertEqual((status, err.get("field")), (400, "disturbed"), err)
        self.assertEqual(f.get(f"/api/runs/{rid}/anomalies?disturbed=include")["version"], 1)
        if busy:
            self.skipTest(busy + "; h2's cells checked, the others' cleanness not")


@unittest.skipUnless(can_lab(), "needs root for the lab's network namespaces")
class NetworkDisturbedLabTest(unittest.TestCase):
    def test_a_link_cut_in_a_pair_job_marks_it_disturbed_by_the_network(self):
        # hold_ms 5000: an agent is lost after 15 s without a poll, so a 4 s cut leaves the
        # receiver online and its job running (a lost host's job would fail instead).
        f = Fleet(n=2, hold_ms=5000)
        self.addCleanup(f.stop)
        f.start()
        test = {"workload": "stream", "scope": "pair", "transport": "tcp", "msg_size": 65536,
                "duration_ms": 3000, "time_limit_ms": 20000}
        rid = f.start_run({"name": "cut", "hosts": ["h1", "h2"], "pairs": [["h1", "h2"]],
                           "repetitions": 2, "warmup": 0, "parallel": False, "tests": [test]})

        def running():
            rows = f.query("SELECT id FROM jobs WHERE run_id = ? AND state = 'running'", rid)
            return rows[0][0] if rows else None
        cut = wait_for("a job of the run running", running, 20, 0.05)
        # The server listens and its client is starting: a second later the stream is in its
        # middle. The receiver's link goes down for 4 s, longer than the whole job.
        time.sleep(1.0)
        veth = f.hosts["h2"]["veth"]
        subprocess.run(["ip", "link", "set", veth, "down"], check=True)
        try:
            time.sleep(4.0)
        finally:
            subprocess.run(["ip", "link", "set", veth, "up"], check=True)
        r = f.wait_run(rid, 60)
        self.assertEqual(r["state"], "done", r)

        stored = f.query("SELECT j.id, r.ok, r.seconds, r.result_json FROM jobs j JOIN results r "
                         "ON r.job_id = j.id AND r.attempt = j.attempt WHERE j.run_id = ? "
                         "ORDER BY j.id", rid)
        self.assertEqual(len(stored), 2, stored)
        by_id = {jid: (ok, secs, json.loads(res)) for jid, ok, secs, res in stored}
        self.assertIn(cut, by_id)
        ok, secs, res = by_id.pop(cut)
        host = res["host"]
        # Stored ok, as it was measured to the end, but marked: the network held it up.
        self.assertEqual(ok, 1, res)
        self.assertGreater(secs, 5.5, res)
        self.assertTrue(host["disturbed"], res)
        self.assertIn("network: ", host["disturbed_reason"])
        self.assertRegex(host["disturbed_reason"],
                         r"network: (\d+\.\d s wall time for a 3\.0 s job \(limit 5\.5 s\)"
                         r"|\d+ retransmits)")
        [(ok, secs, res)] = by_id.values()
        self.assertEqual(ok, 1, res)
        self.assertLess(secs, 5.5, res)
        self.assertNotIn("network", res["host"]["disturbed_reason"], res)
        # The uncut job may still be disturbed by its host, on a machine busy with other work;
        # the table must then count both out.
        clean = 0 if res["host"]["disturbed"] else 1

        t = f.get(f"/api/runs/{rid}/table?format=json")
        self.assertEqual(t["disturbed"], "exclude")
        [cell] = t["cells"]
        self.assertEqual((cell["n"], cell["disturbed"]), (clean, 2 - clean), cell)
        t = f.get(f"/api/runs/{rid}/table?format=json&disturbed=include")
        [cell] = t["cells"]
        self.assertEqual((cell["n"], cell["disturbed"]), (2, 2 - clean), cell)


if __name__ == "__main__":
    unittest.main()
