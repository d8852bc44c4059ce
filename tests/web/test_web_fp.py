"""Browser tests of the fingerprint surfaces: the real coordinator serves web/, two real agents
run in the lab's namespaces, h2 with a tbf qdisc on its loopback (lab.sh --slow-tcp), and
Debian's Chromium (drive.mjs) goes through the host settings page, h2's page and the anomaly
card. What the page shows is checked against GET /api/fingerprints/diff; the card's
differences against the anomalies body the page was given (a fixture over a real run, until the
coordinator's own anomalies carry them)."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from smtest import can_lab, unless_root, wait_for  # noqa: E402
from test_web import SMALL, WebCase, setUpModule, web_fleet  # noqa: E402,F401


@unless_root(can_lab(), "needs root: h2's loopback gets a tbf qdisc in its network namespace")
class FingerprintWebTest(WebCase):
    @classmethod
    def setUpClass(cls):
        cls.f = web_fleet(n=2, lab_args=["--slow-tcp", "h2:400mbit"])
        cls.addClassCleanup(cls.f.stop)
        cls.f.start()
        wait_for("both fingerprints", lambda: all(
            cls.f.get_status(f"/api/agents/{h}/fingerprint")[0] == 200 for h in ("h1", "h2")),
            20)

    def test_host_settings_highlights_the_qdisc_h2_has_and_h1_has_not(self):
        f = self.f
        api = f.get("/api/fingerprints/diff?hosts=h1,h2")
        res = self.drive(f, "hosts", hosts=["h1", "h2"],
                         shot=os.path.join(f.dir, "hosts.png"))
        self.assertEqual(res["hash"], "#/settings/h1,h2")
        shown = res["all"]
        # Every row the API lists is highlighted, and no other.
        self.assertEqual(set(shown["differs"]), {it["item"] for it in api["items"]})
        qdisc = shown["differs"]["if.lo.qdisc"]
        self.assertTrue(qdisc["h2"]["text"].startswith("tbf rate "), qdisc)
        self.assertNotIn("tbf", qdisc["h1"]["text"])
        want = next(it for it in api["items"] if it["item"] == "if.lo.qdisc")["values"]
        self.assertEqual({h: c["text"] for h, c in qdisc.items()}, want)
        self.assertEqual((shown["summary"]["differ"], shown["summary"]["same"]),
                         (str(len(api["items"])), str(api["same"])))
        self.assertIn(f"{api['same']} items the same", shown["summary"]["text"])
        # The items they share are there too, not highlighted; "only the items that differ"
        # leaves the highlighted ones.
        self.assertGreater(shown["n_rows"], len(api["items"]) + 50)
        n = len(api["items"])
        self.assertEqual(shown["order"], [True] * n + [False] * (shown["n_rows"] - n),
                         "the rows that differ come first")
        self.assertEqual(res["only_rows"], len(api["items"]))

    def test_h2s_page_shows_the_qdisc_it_differs_in_from_the_fleet(self):
        f = self.f
        fp = f.get("/api/agents/h2/fingerprint")
        qdisc = fp["fingerprint"]["items"]["if.lo.qdisc"]
        self.assertTrue(qdisc.startswith("tbf rate "), qdisc)
        res = self.drive(f, "host_page", host="h2")
        self.assertEqual(res["hash"], "#/hosts/h2")
        self.assertEqual(res["fp"]["hash"], fp["hash"])
        differs = {d["item"]: d for d in res["fp"]["differs"]}
        self.assertEqual(differs["if.lo.qdisc"]["value"], qdisc, differs)
        self.assertEqual(differs["if.lo.qdisc"]["fleet"], "noqueue (1 of 1 hosts)")
        self.assertEqual(res["fp"]["differ"], str(len(differs)))
        self.assertEqual(res["fp"]["settings"], "#/settings/h2,h1")
        self.assertEqual(res["console_errors"], [])

    def test_the_anomaly_card_lists_the_differences_and_the_changes(self):
        f = self.f
        rid = self.start_run(f, dict(SMALL, name="why"))
        self.assertEqual(self.wait_run(f, rid)["state"], "done")
        body = f.get(f"/api/runs/{rid}/anomalies")
        diffs = [{"item": "if.lo.qdisc", "label": "lo qdisc",
                  "host_value": "tbf rate 400Mbit burst 50000b limit 100000b",
                  "fleet_value": "noqueue", "hosts_with_fleet_value": 2, "fleet_hosts": 2},
                 {"item": "sysctl.net.ipv4.tcp_autocorking", "label": "net.ipv4.tcp_autocorking",
                  "host_value": "0", "fleet_value": None, "hosts_with_fleet_value": 0,
                  "fleet_hosts": 4}]
        changes = [{"item": "sysctl.net.ipv4.tcp_rmem", "label": "net.ipv4.tcp_rmem",
                    "before": "4096 131072 6291456", "after": "4096 87380 6291456"}]
        body["anomalies"] = [
            {"kind": "fleet", "host": "h2", "role": None, "test": "stream tcp", "metric":
             "throughput", "unit": "MB/s", "value": 10.5, "reference": 84.0, "rel": -0.875,
             "z": -9.1, "direction": "slower", "rule": "median", "at_limit": False,
             "differences": diffs},
            {"kind": "regression", "host": "h1", "role": None, "test": "stream tcp", "metric":
             "throughput", "unit": "MB/s", "value": 50.0, "reference": 84.0, "rel": -0.4,
             "z": None, "direction": "slower", "rule": "baseline", "at_limit": False,
             "changes": changes}]
        res = self.drive(f, "anomaly_why", run=rid, fixture=body)
        by = {(c["host"], c["kind"]): c for c in res["cards"]}
        self.assertEqual(set(by), {("h2", "fleet"), ("h1", "regression")})
        h2 = by[("h2", "fleet")]
        self.assertEqual([d["item"] for d in h2["differences"]],
                         ["if.lo.qdisc", "sysctl.net.ipv4.tcp_autocorking"])
        self.assertEqual(h2["differences"][0]["text"],
                         "lo qdisc tbf rate 400Mbit burst 50000b limit 100000b "
                         "(fleet: noqueue, 2 of 2 hosts)")
        self.assertEqual(h2["differences"][1]["text"],
                         "net.ipv4.tcp_autocorking 0 (fleet: no majority of 4 hosts)")
        self.assertEqual(h2["changes"], [])
        h1 = by[("h1", "regression")]
        self.assertEqual(h1["differences"], [])
        self.assertEqual(h1["changes"], [{
            "item": "sysctl.net.ipv4.tcp_rmem",
            "text": "net.ipv4.tcp_rmem now 4096 87380 6291456 (was 4096 131072 6291456)"}])


if __name__ == "__main__":
    unittest.main()
