"""Run against run on a loopback fleet: two runs with partly different tests, compared by the
API (/api/compare) and the CLI (sockmatrix compare, as a grid, CSV and JSON); a baseline that
shares no cell is refused with an error naming both runs' tests."""
import csv
import io
import json
import os
import socket
import subprocess
import unittest

from smtest import BIN_DIR, Fleet

CLI = os.path.join(BIN_DIR, "sockmatrix")


def spec(name, tests):
    # "remeasure": 0: a cell has at most its 3 samples, whatever this busy machine disturbs.
    return {"name": name, "hosts": "all", "repetitions": 3, "remeasure": 0, "warmup": 0,
            "tests": tests}


def stream(transports, count):
    return {"workload": "stream", "scope": "local", "transport": transports, "msg_size": 1000,
            "count": count}


class CompareTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.f = Fleet(n=2, hold_ms=1000, lab=False)
        cls.addClassCleanup(cls.f.stop)
        cls.f.start()
        # Run 1: tcp and unix x 200; run 2: tcp x 200 and tcp x 400; run 3: unix x 300 only.
        cls.runs = [int(cls.f.run_done(s)["id"])
                    for s in (spec("a", [stream(["tcp", "unix"], 200)]),
                              spec("b", [stream(["tcp"], 200), stream(["tcp"], 400)]),
                              spec("c", [stream(["unix"], 300)]))]

    def cli(self, *args):
        env = dict(os.environ)
        env.pop("SOCKMATRIX_COORDINATOR", None)
        return subprocess.run([CLI, "--coordinator", self.f.url, *args], capture_output=True,
                              text=True, timeout=60, stdin=subprocess.DEVNULL, env=env)

    def test_clients_that_hang_up_before_their_report_leave_the_coordinator_serving(self):
        # Reports are built by the worker: a connection that goes before its answer comes has
        # its ticket forgotten, and the answer is dropped (ASan would catch a touch of it).
        a, b, c = self.runs
        port = int(self.f.url.rsplit(":", 1)[1])
        for i in range(30):
            path = (f"/api/compare?a={a}&b={b}", "/api/grid", f"/api/runs/{c}/anomalies")[i % 3]
            with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        st, got = self.f.get_status(f"/api/compare?a={a}&b={b}")
        self.assertEqual(st, 200, got)
        self.assertEqual(self.f.get_status("/healthz")[0], 200)

    def test_api_puts_the_shared_cells_side_by_side_and_the_rest_apart(self):
        a, b, _ = self.runs
        st, got = self.f.get_status(f"/api/compare?a={a}&b={b}")
        self.assertEqual(st, 200, got)
        self.assertEqual((got["a_state"], got["b_state"]), ("done", "done"))
        shared = {(c["host"], c["test"]) for c in got["shared"]}
        self.assertEqual({h for h, _ in shared}, {"h1", "h2"})
        self.assertTrue(all("tcp" in t and "x 200" in t for _, t in shared), shared)
        for c in got["shared"]:
            self.assertEqual(c["unit"], c["a"]["unit"])
            # 3 repetitions, less the disturbed ones (a slow build disturbs some); a cell whose
            # samples were all disturbed has no median, hence no change and no verdict.
            self.assertIn(c["a"]["n"], (0, 1, 2, 3))
            if c["a"]["median"] is None or c["b"]["median"] is None:
                self.assertEqual((c["verdict"], c["change_pct"]), ("no data", None))
                continue
            self.assertLessEqual(c["a"]["ci95_low"], c["a"]["median"])
            want = (c["b"]["median"] / c["a"]["median"] - 1) * 100
            self.assertAlmostEqual(c["change_pct"], want, places=6)
            apart = (c["b"]["ci95_low"] > c["a"]["ci95_high"] or
                     c["b"]["ci95_high"] < c["a"]["ci95_low"])
            self.assertEqual(c["verdict"] in ("higher", "lower"), apart, c)
        self.assertTrue(all("unix" in c["test"] for c in got["only_a"]), got["only_a"])
        self.assertTrue(all("x 400" in c["test"] for c in got["only_b"]), got["only_b"])
        self.assertEqual(got["counts"]["only_b"], len(got["only_b"]))
        self.assertGreater(len(got["only_b"]), 0)

    def test_cli_grid_csv_and_json_say_the_same(self):
        a, b, _ = self.runs
        api = self.f.get(f"/api/compare?a={a}&b={b}")
        p = self.cli("compare", str(a), str(b))
        self.assertEqual(p.returncode, 0, p)
        lines = p.stdout.splitlines()
        self.assertTrue(lines[0].startswith(f"run {a} (a, done) against run {b} (b, done)"))
        self.assertEqual(lines[1].split()[:2], ["HOST", "TEST"])
        self.assertIn("VERDICT", lines[1])
        self.assertIn(f"only in run {a} (A): {len(api['only_a'])} cells", p.stdout)
        self.assertIn(f"only in run {b} (B): {len(api['only_b'])} cells", p.stdout)
        self.assertIn("rule: a change is claimed only where the two medians' 95% intervals",
                      p.stdout)
        self.assertNotIn("ci_coverage", p.stdout)
        p = self.cli("compare", str(a), str(b), "--format", "csv")
        self.assertEqual(p.returncode, 0, p)
        rows = list(csv.DictReader(io.StringIO(p.stdout)))
        shared = [r for r in rows if not r["verdict"].startswith("only")]
        self.assertEqual(len(shared), len(api["shared"]))
        self.assertEqual(sum(r["verdict"] == "only in b" for r in rows), len(api["only_b"]))
        # Every shared cell's medians, as the API has them: a cell whose samples were all
        # disturbed (other tests beside this one) has none, an empty field in CSV.
        for r, x in zip(shared, api["shared"]):
            for side in ("a", "b"):
                got = r[f"{side} median"]
                self.assertEqual(float(got) if got else None, x[side]["median"], (r, x))
        p = self.cli("compare", str(a), str(b), "--format", "json")
        self.assertEqual(p.returncode, 0, p)
        self.assertEqual(json.loads(p.stdout), api)

    def test_runs_that_share_no_cell_are_an_error_that_says_so(self):
        a, _, c = self.runs
        st, got = self.f.get_status(f"/api/compare?a={a}&b={c}")
        self.assertEqual(st, 409, got)
        self.assertIn(f"runs {a} and {c} share no cell", got["error"])
        self.assertIn("unix 1000 B x 300", got["error"])
        p = self.cli("compare", str(a), str(c))
        self.assertEqual(p.returncode, 1, p)
        self.assertIn("share no cell", p.stderr)
        p = self.cli("anomalies", str(c), "--baseline", str(a))
        self.assertEqual(p.returncode, 1, p)
        self.assertIn(f"baseline: runs {c} and {a} share no cell", p.stderr)
        self.assertNotIn("against baseline", p.stdout)
        st, got = self.f.get_status(f"/api/compare?a={a}&b=999")
        self.assertEqual((st, got["field"]), (404, "b"))


if __name__ == "__main__":
    unittest.main()
