"""Disturbed samples on the lab (network namespaces, root): a CPU hog on the CPU where one host
measures makes that host's samples disturbed, and the table says so per cell, while the hosts
measuring on the other CPU stay clean. The real coordinator, agents, store and API."""
import csv
import io
import os
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


if __name__ == "__main__":
    unittest.main()
