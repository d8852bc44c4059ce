"""sockmatrix hosts diff and hosts fingerprint against the real coordinator and two real agents,
h2 with a tbf qdisc on its loopback (lab.sh --slow-tcp in h2's network namespace): the side by
side names the qdisc, the JSON is the API's, and the refusals exit 1 or 2 with one line."""
import json
import os
import re
import subprocess
import unittest

from smtest import BIN_DIR, Fleet, can_lab, unless_root, wait_for

CLI = os.path.join(BIN_DIR, "sockmatrix")


@unless_root(can_lab(), "needs root: h2's loopback gets a tbf qdisc in its network namespace")
class HostsCliTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.f = Fleet(n=2, hold_ms=1000, lab=True, lab_args=["--slow-tcp", "h2:400mbit"])
        cls.addClassCleanup(cls.f.stop)
        cls.f.start()
        # Each agent sends its fingerprint when it starts: wait until both are stored.
        wait_for("both fingerprints", lambda: all(
            cls.f.get_status(f"/api/agents/{h}/fingerprint")[0] == 200 for h in ("h1", "h2")),
            20)

    def cli(self, *args):
        env = dict(os.environ)
        env.pop("SOCKMATRIX_COORDINATOR", None)
        return subprocess.run([CLI, "--coordinator", self.f.url, *args], capture_output=True,
                              text=True, timeout=60, stdin=subprocess.DEVNULL, env=env)

    def assert_one_error_line(self, p, rc, *needles):
        self.assertEqual(p.returncode, rc, p)
        lines = p.stderr.splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        for n in needles:
            self.assertIn(n, lines[0])

    def test_hosts_diff_puts_the_qdisc_of_h2_beside_h1s(self):
        api = self.f.get("/api/fingerprints/diff?hosts=h1,h2")
        p = self.cli("hosts", "diff", "h1", "h2")
        self.assertEqual(p.returncode, 0, p)
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0].split(), ["ITEM", "h1", "h2"])
        rows = {line.split()[0]: line for line in lines[1:] if line and not line[0].isdigit()}
        self.assertEqual(set(rows), {it["item"] for it in api["items"]})
        qdisc = next(it for it in api["items"] if it["item"] == "if.lo.qdisc")
        self.assertTrue(qdisc["values"]["h2"].startswith("tbf rate "), qdisc)
        self.assertNotIn("tbf", qdisc["values"]["h1"])
        # Columns: the item, then h1's value, then h2's.
        m = re.match(r"^if\.lo\.qdisc\s+(.*?)\s{2,}(tbf rate .*)$", rows["if.lo.qdisc"])
        self.assertIsNotNone(m, rows["if.lo.qdisc"])
        self.assertEqual(m.group(1), qdisc["values"]["h1"])
        n = len(api["items"])
        differ = "1 item differs" if n == 1 else f"{n} items differ"
        self.assertEqual(lines[-1], f"{differ}, {api['same']} items the same")
        self.assertGreater(api["same"], 50)  # the sysctls of one kernel agree

    def test_hosts_diff_json_is_the_apis(self):
        p = self.cli("hosts", "diff", "h2", "h1", "--format", "json")
        self.assertEqual(p.returncode, 0, p)
        got = json.loads(p.stdout)
        self.assertEqual(got, self.f.get("/api/fingerprints/diff?hosts=h2,h1"))
        self.assertEqual(got["hosts"], ["h2", "h1"])

    def test_hosts_fingerprint_lists_every_item_of_one_host(self):
        api = self.f.get("/api/agents/h2/fingerprint")
        p = self.cli("hosts", "fingerprint", "h2")
        self.assertEqual(p.returncode, 0, p)
        lines = p.stdout.splitlines()
        n = len(api["fingerprint"]["items"])
        self.assertTrue(lines[0].startswith(f"h2: fingerprint {api['hash']}, {n} items, seen "),
                        lines[0])
        items = [line for line in lines if line.startswith("if.lo.qdisc ")]
        self.assertEqual(len(items), 1, p.stdout)
        self.assertIn("tbf rate ", items[0])
        p = self.cli("hosts", "fingerprint", "h2", "--format", "json")
        self.assertEqual(p.returncode, 0, p)
        self.assertEqual(json.loads(p.stdout)["hash"], api["hash"])

    def test_refusals_say_why_in_one_line(self):
        # A host no agent has is a bad argument (exit 2), said as the command's, not as an
        # option it does not have.
        p = self.cli("hosts", "diff", "h1", "nope")
        self.assert_one_error_line(p, 2, "sockmatrix: hosts diff: 'nope' has no fingerprint")
        self.assertNotIn("--hosts", p.stderr)
        self.assert_one_error_line(self.cli("hosts", "fingerprint", "nope"), 2,
                                   "sockmatrix: hosts fingerprint: no agent named 'nope' has "
                                   "registered")
        self.assert_one_error_line(self.cli("hosts", "diff", "h1"), 2,
                                   "compare at least 2 hosts")
        self.assert_one_error_line(self.cli("hosts", "diff", "h1", "h1"), 2, "given twice")


if __name__ == "__main__":
    unittest.main()
