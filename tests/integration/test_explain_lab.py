"""Proving the cause by experiment, end to end on the lab (network namespaces, root).

h2's loopback TCP is shaped (`lab.sh --slow-tcp h2:x8`, relative to what h2 measured unshaped)
and h2 also differs from the fleet in a TCP sysctl that does not touch the test
(net.ipv4.tcp_keepalive_time). `sockmatrix explain` on the run's anomaly re-measures the test on
h2 with each suspect given the fleet's value beside untreated controls:

- agents started with --allow-experiment qdisc,sysctl: the tbf is the cause (most of the gap
  closed, its interval clear of zero), the keepalive is not the cause, and h2's qdisc and sysctl
  read as they did before, as does its fingerprint;
- agents without it: nothing is run, each suspect says it could not be tested and names the
  flag, and h2 is left as it was.

The real coordinator, agents, SQLite store and CLI."""
import json
import subprocess
import unittest

from smtest import BIN_DIR, Fleet, can_lab, unless_root, unless_stolen

CLI = f"{BIN_DIR}/sockmatrix"

TEST = {"workload": "stream", "scope": "local", "transport": "tcp", "framing": "lines",
        "msg_size": 128, "count": 8192}
DECOY = ("net.ipv4.tcp_keepalive_time", "7201")


@unless_root(can_lab(), "needs root for the lab's network namespaces")
class ExplainLabTest(unittest.TestCase):
    def fleet(self, *agent_args):
        f = Fleet(n=3, hold_ms=1000, lab_args=("--slow-tcp", "h2:x8"))
        self.addCleanup(f.stop)
        f.agent_args = ["--affinity", "0,1", *agent_args]
        f.start()
        # The agents send their fingerprint again when a run starts: the run sees the decoy.
        self.netns(f, "h2", "sysctl", "-qw", f"{DECOY[0]}={DECOY[1]}")
        return f

    def netns(self, f, host, *cmd):
        return subprocess.run(["ip", "netns", "exec", f.hosts[host]["netns"], *cmd],
                              capture_output=True, text=True, check=True, timeout=30).stdout

    def items(self, f, host):
        return f.get(f"/api/agents/{host}/fingerprint")["fingerprint"]["items"]

    def flagged_run(self, f):
        rid = f.start_run({"name": "slow-tcp", "hosts": "all", "repetitions": 8, "warmup": 1,
                           "parallel": False, "tests": [TEST]})
        r = f.wait_run(rid, 300)
        self.assertEqual(r["state"], "done", r)
        doc = f.get(f"/api/runs/{rid}/anomalies")
        flags = [a for a in doc["anomalies"] if a["kind"] == "fleet" and not a["ratio"]]
        self.assertEqual([a["host"] for a in flags], ["h2"], doc)
        items = [d["item"] for d in flags[0]["differences"]]
        self.assertEqual(items[0], "if.lo.qdisc", flags[0])
        self.assertIn("sysctl." + DECOY[0], items)
        return rid, flags[0]

    def explain(self, f, rid):
        out = subprocess.run([CLI, "--coordinator", f.url, "explain", str(rid), "--host", "h2",
                              "--format", "json"], capture_output=True, text=True, timeout=600)
        self.assertEqual(out.returncode, 0, out.stderr)
        return out

    @unless_stolen
    def test_the_tbf_is_the_cause_and_the_decoy_is_not(self):
        f = self.fleet("--allow-experiment", "qdisc,sysctl")
        before_qdisc = self.netns(f, "h2", "tc", "qdisc", "show", "dev", "lo", "root")
        rid, _ = self.flagged_run(f)
        before = self.items(f, "h2")

        out = self.explain(f, rid)
        answer = json.loads(out.stdout)
        why = f"{out.stderr}\n{json.dumps(answer, indent=1)}"
        self.assertEqual(answer["state"], "done", why)
        by_item = {s["item"]: s for s in answer["suspects"]}
        qdisc, decoy = by_item["if.lo.qdisc"], by_item["sysctl." + DECOY[0]]
        self.assertEqual(qdisc["treatment"], "qdisc lo noqueue", why)
        self.assertEqual(qdisc["verdict"], "cause", why)
        self.assertGreaterEqual(qdisc["lo"], 0.5, why)
        self.assertEqual(decoy["treatment"], f"sysctl {DECOY[0]}=7200", why)
        self.assertEqual(decoy["verdict"], "not the cause", why)
        self.assertLessEqual(decoy["lo"], 0, why)
        self.assertGreaterEqual(decoy["hi"], 0, why)
        self.assertEqual(answer["cause"]["item"], "if.lo.qdisc", why)
        self.assertIn("lo qdisc is the cause", answer["summary"], why)

        # h2 as it was: the tbf with its parameters, the decoy's value, the whole fingerprint.
        self.assertEqual(self.netns(f, "h2", "tc", "qdisc", "show", "dev", "lo", "root"),
                         before_qdisc)
        self.assertEqual(self.netns(f, "h2", "sysctl", "-n", DECOY[0]).strip(), DECOY[1])
        after = self.items(f, "h2")
        self.assertEqual({k: v for k, v in after.items() if not k.startswith("info.")},
                         {k: v for k, v in before.items() if not k.startswith("info.")})

        # The experiment is a run of its own, linked to the run it explains.
        xp = f.get(f"/api/runs/{answer['run']}/experiment")
        self.assertEqual(xp["explains"], str(rid))
        text = subprocess.run([CLI, "--coordinator", f.url, "explain", answer["run"]],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn("h2: lo qdisc is the cause", text.stdout)

    def test_an_agent_not_allowed_to_change_its_host_tests_nothing(self):
        f = self.fleet()
        rid, _ = self.flagged_run(f)
        before = self.items(f, "h2")
        status, plan = f.post(f"/api/runs/{rid}/experiments", {"host": "h2"})
        self.assertEqual(status, 200, plan)
        self.assertIsNone(plan["run"], plan)
        by_item = {s["item"]: s for s in plan["plan"]}
        self.assertIn("--allow-experiment qdisc", by_item["if.lo.qdisc"]["why_untested"], plan)
        self.assertIn("--allow-experiment sysctl",
                      by_item["sysctl." + DECOY[0]]["why_untested"], plan)
        self.assertEqual(len(f.get("/api/runs")["runs"]), 1)
        out = subprocess.run([CLI, "--coordinator", f.url, "explain", str(rid)],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("could be tested", out.stderr)
        self.assertIn("untested  lo qdisc", out.stderr)
        self.assertEqual(self.items(f, "h2"), before)


if __name__ == "__main__":
    unittest.main()
