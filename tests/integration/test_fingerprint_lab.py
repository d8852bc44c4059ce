"""Why a host stands apart, end to end on the lab (network namespaces, root): the fingerprint
each agent sends names what differs on the flagged host, first what can explain the metric.

- A host whose loopback TCP is shaped (`lab.sh --slow-tcp h2:x8`, relative to what h2 measured
  unshaped) is flagged on TCP/UDS, and its flag names the tbf qdisc on h2's lo with its rate,
  first, against the fleet's noqueue: in the anomalies API, `sockmatrix anomalies`, the
  Markdown export's footnote; the fingerprint API and `sockmatrix hosts diff` show it too.
- The same shaping added between two runs, with a TCP sysctl set to another value inside h2's
  namespace: run 2's regression on h2 carries both as what changed since run 1, and the
  store keeps h2's two fingerprints as its history.

The real coordinator, agents, SQLite store and CLI."""
import re
import subprocess
import unittest
import urllib.request

from smtest import BIN_DIR, Fleet, can_lab, unless_root, unless_stolen

CLI = f"{BIN_DIR}/sockmatrix"

SEED = {"workload": "stream", "scope": "local", "transport": ["tcp", "unix"], "framing": "lines",
        "msg_size": 128, "count": 8192}
SLOW_TCP = ("--slow-tcp", "h2:x8")
# Half the receive buffer sizes Debian's kernel starts a namespace with: another value of a TCP
# sysctl, which changes nothing this test measures.
RMEM = "4096 65536 3145728"


def spec(name, **top):
    s = {"name": name, "hosts": "all", "repetitions": 10, "warmup": 1, "parallel": False,
         "tests": [SEED]}
    s.update(top)
    return s


@unless_root(can_lab(), "needs root for the lab's network namespaces")
class FingerprintLabTest(unittest.TestCase):
    def fleet(self, *lab_args):
        f = Fleet(n=3, hold_ms=1000, lab_args=lab_args)
        self.addCleanup(f.stop)
        f.agent_args = ["--affinity", "0,1"]
        return f.start()

    def run_spec(self, f, body):
        rid = f.start_run(body)
        r = f.wait_run(rid, 300)
        self.assertEqual(r["state"], "done", r)
        return rid

    def cli(self, f, *args):
        out = subprocess.run([CLI, "--coordinator", f.url, *args], capture_output=True,
                             text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        return out.stdout

    def netns(self, f, host, *cmd):
        return subprocess.run(["ip", "netns", "exec", f.hosts[host]["netns"], *cmd],
                              capture_output=True, text=True, check=True, timeout=30).stdout

    def tcp_flag(self, f, rid, query=""):
        doc = f.get(f"/api/runs/{rid}/anomalies{query}")
        flags = [a for a in doc["anomalies"] if a["kind"] == "fleet" and a["ratio"]]
        self.assertEqual([a["host"] for a in flags], ["h2"], doc)
        self.assertTrue(flags[0]["test"].startswith("tcp/unix stream lines"), flags[0])
        return flags[0], doc

    @unless_stolen
    def test_the_slow_tcp_hosts_flag_names_its_lo_qdisc_first(self):
        f = self.fleet(*SLOW_TCP)
        rate = f.hosts["h2"]["slow_tcp"]["rate_bit_s"]
        # The fingerprint alone, before any run: h2's lo has the tbf lab.sh set.
        fp = f.get("/api/agents/h2/fingerprint")
        qdisc = fp["fingerprint"]["items"]["if.lo.qdisc"]
        self.assertTrue(qdisc.startswith("tbf rate "), qdisc)
        self.assertEqual(f.get("/api/agents/h1/fingerprint")["fingerprint"]["items"]["if.lo.qdisc"],
                         "noqueue")
        side = f.get("/api/fingerprints/diff?hosts=h1,h2")
        rows = {r["item"]: r["values"] for r in side["items"]}
        self.assertEqual(rows["if.lo.qdisc"], {"h1": "noqueue", "h2": qdisc}, side)
        self.assertIn("if.lo.qdisc", self.cli(f, "hosts", "diff", "h1", "h2"))

        rid = self.run_spec(f, spec("slow-tcp"))
        a, doc = self.tcp_flag(f, rid)
        first = a["differences"][0]
        why = f"tbf {rate} bit/s\n{doc}"
        self.assertEqual(first["item"], "if.lo.qdisc", why)
        self.assertEqual(first["host_value"], qdisc, why)
        self.assertEqual((first["fleet_value"], first["hosts_with_fleet_value"],
                          first["fleet_hosts"]), ("noqueue", 2, 2), why)
        # The rate in tc's words is the rate lab.sh set.
        m = re.match(r"tbf rate ([\d.]+)(bit|Kbit|Mbit|Gbit) ", qdisc)
        self.assertIsNotNone(m, qdisc)
        scale = {"bit": 1, "Kbit": 1e3, "Mbit": 1e6, "Gbit": 1e9}[m.group(2)]
        self.assertAlmostEqual(float(m.group(1)) * scale / rate, 1, delta=0.01)

        text = self.cli(f, "anomalies", str(rid))
        self.assertIn(f"h2: lo qdisc {qdisc} (fleet: noqueue, 2 of 2 hosts)", text)
        with urllib.request.urlopen(f.url + f"/api/runs/{rid}/table?format=md") as r:
            md = r.read().decode()
        note = [line for line in md.splitlines() if "lo qdisc" in line]
        self.assertTrue(note and "h2" in note[0] and "tbf rate" in note[0], md)

    @unless_stolen
    def test_what_changed_on_a_host_between_two_runs_is_its_regressions_evidence(self):
        f = self.fleet(*SLOW_TCP)
        # Run 1 unshaped: lab.sh's tbf on h2 comes off, and back (the same, measured against
        # h2 itself) for run 2 with another tcp_rmem.
        shown = self.netns(f, "h2", "tc", "qdisc", "show", "dev", "lo", "root")
        m = re.search(r"rate (\S+) burst (\S+)", shown)
        self.assertIsNotNone(m, shown)
        self.netns(f, "h2", "tc", "qdisc", "del", "dev", "lo", "root")
        first = self.run_spec(f, spec("before"))

        old_rmem = self.netns(f, "h2", "sysctl", "-n", "net.ipv4.tcp_rmem").split()
        self.netns(f, "h2", "tc", "qdisc", "replace", "dev", "lo", "root", "tbf", "rate",
                   m.group(1), "burst", m.group(2), "latency", "50ms")
        self.netns(f, "h2", "sysctl", "-qw", f"net.ipv4.tcp_rmem={RMEM}")
        self.addCleanup(lambda: subprocess.run(
            ["ip", "netns", "exec", f.hosts["h2"]["netns"], "sysctl", "-qw",
             "net.ipv4.tcp_rmem=" + " ".join(old_rmem)], capture_output=True))
        second = self.run_spec(f, spec("after"))

        doc = f.get(f"/api/runs/{second}/anomalies?baseline={first}")
        reg = [a for a in doc["anomalies"] if a["kind"] == "regression" and a["host"] == "h2"]
        self.assertTrue(reg, doc)
        changes = {c["item"]: c for c in reg[0]["changes"]}
        self.assertEqual(changes["if.lo.qdisc"]["before"], "noqueue", reg[0])
        self.assertTrue(changes["if.lo.qdisc"]["after"].startswith("tbf rate "), reg[0])
        self.assertEqual(changes["sysctl.net.ipv4.tcp_rmem"]["before"], " ".join(old_rmem))
        self.assertEqual(changes["sysctl.net.ipv4.tcp_rmem"]["after"], RMEM)
        # Nobody else changed.
        for a in doc["anomalies"]:
            if a["kind"] == "regression" and a["host"] != "h2":
                self.assertEqual(a.get("changes", []), [], a)
        # Run 2's flag on h2 names both against the fleet, the qdisc first.
        a, _ = self.tcp_flag(f, second)
        items = [d["item"] for d in a["differences"]]
        self.assertEqual(items[0], "if.lo.qdisc", a)
        self.assertIn("sysctl.net.ipv4.tcp_rmem", items)
        # h2's history: shaped at its start, unshaped for run 1, shaped with the other tcp_rmem
        # for run 2 (first seen after run 1 ended); each run tied to the one it ran under.
        hist = f.get("/api/agents/h2/fingerprint")["history"]
        self.assertEqual(len(hist), 3, hist)
        ended = f.get(f"/api/runs/{first}")["finished_ms"]
        self.assertGreater(hist[2]["first_seen_ms"], ended)
        ties = f.query("SELECT r.run_id, f.hash FROM run_fingerprints r JOIN fingerprints f"
                       " ON f.id = r.fingerprint_id WHERE r.agent = 'h2' ORDER BY r.run_id")
        self.assertEqual([t[1] for t in ties], [hist[1]["hash"], hist[2]["hash"]], ties)


if __name__ == "__main__":
    unittest.main()
