"""GET /metrics scraped by a real Prometheus (Debian's prometheus): a loopback fleet runs a
small run, the test starts Prometheus on a free loopback port with the coordinator as its only
target, and its query API must return the agents as up and each cell's median (and each ratio
cell's, as metric "ratio") as the run's table gives it."""
import json
import os
import shutil
import signal
import subprocess
import unittest
import urllib.parse
import urllib.request

from smtest import HTTP_TIMEOUT_S, Fleet, free_port, wait_for

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"

SPEC = {"name": "prom", "hosts": "all", "repetitions": 3, "warmup": 0,
        "tests": [{"workload": "stream", "scope": "local", "transport": ["tcp", "unix"],
                   "msg_size": 1000, "count": 100}]}


def families(text):
    """{family: (help count, type count, type)} of an exposition."""
    out = {}
    for line in text.splitlines():
        parts = line.split(" ", 3)
        if len(parts) >= 4 and parts[0] == "#" and parts[1] in ("HELP", "TYPE"):
            h, t, kind = out.get(parts[2], (0, 0, None))
            if parts[1] == "HELP":
                h += 1
            else:
                t, kind = t + 1, parts[3]
            out[parts[2]] = (h, t, kind)
    return out


class MetricsTest(unittest.TestCase):
    def setUp(self):
        # Debian's package is among the Makefile's DEB_PACKAGES: missing is a failure.
        self.assertTrue(os.access(PROMETHEUS, os.X_OK),
                        f"{PROMETHEUS} is missing: make deps installs the prometheus package")
        self.f = Fleet(n=2, hold_ms=1000, lab=False)
        self.token = "metrics-test-token-0123456789"
        self.token_file = os.path.join(self.f.dir, "token")
        with open(self.token_file, "w") as t:
            t.write(self.token + "\n")
        os.chmod(self.token_file, 0o600)
        # Prometheus holds a read token (docs/metrics.md), never the operate one.
        self.read_token = "metrics-read-token-0123456789"
        self.read_token_file = os.path.join(self.f.dir, "read-token")
        with open(self.read_token_file, "w") as t:
            t.write(self.read_token + "\n")
        os.chmod(self.read_token_file, 0o600)
        self.f.extra_args = ["--token-file", self.token_file,
                             "--read-token-file", self.read_token_file]
        self.f.headers = {"Authorization": f"Bearer {self.token}"}
        self.addCleanup(self.f.stop)
        self.f.start()
        self.prom = None
        self.addCleanup(self.stop_prometheus)

    def stop_prometheus(self):
        """Only the Prometheus this test started, by its PID."""
        if self.prom and self.prom.poll() is None:
            self.f.kill(self.prom, signal.SIGTERM)

    def scrape(self):
        req = urllib.request.Request(self.f.url + "/metrics", headers=self.f.headers)
        with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT_S) as r:
            return r.headers["Content-Type"], r.read().decode()

    def start_prometheus(self):
        port = free_port()
        d = os.path.join(self.f.dir, "prometheus")
        os.makedirs(d)
        config = os.path.join(d, "prometheus.yml")
        with open(config, "w") as c:
            # A scrape on a loaded machine may take over a second: a 2 s timeout.
            c.write("global:\n  scrape_interval: 2s\n  scrape_timeout: 2s\n"
                    "scrape_configs:\n  - job_name: sockmatrix\n"
                    "    authorization:\n      type: Bearer\n"
                    f"      credentials_file: {self.read_token_file}\n"
                    "    static_configs:\n"
                    f"      - targets: ['127.0.0.1:{self.f.http_port}']\n")
        with open(os.path.join(self.f.dir, "prometheus.log"), "a") as log:
            self.prom = subprocess.Popen(
                [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={d}/data",
                 f"--web.listen-address=127.0.0.1:{port}"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        self.prom_url = f"http://127.0.0.1:{port}"

        def ready():
            if self.prom.poll() is not None:
                raise AssertionError(f"prometheus exited {self.prom.returncode}: "
                                     f"{self.f.log('prometheus')}")
            try:
                with urllib.request.urlopen(self.prom_url + "/-/ready", timeout=2) as r:
                    return r.status == 200
            except OSError:
                return False
        wait_for("prometheus ready", ready, 30, 0.2)

    def wait(self, what, check, timeout):
        """wait_for, failing with what Prometheus says of its target (its last scrape's error)
        and its log, so that a slow or refused scrape is told apart from a missing series."""
        try:
            return wait_for(what, check, timeout, 0.5)
        except AssertionError as e:
            try:
                with urllib.request.urlopen(self.prom_url + "/api/v1/targets", timeout=5) as r:
                    targets = [(t["health"], t["lastError"])
                               for t in json.loads(r.read())["data"]["activeTargets"]]
            except OSError as oe:
                targets = str(oe)
            raise AssertionError(f"{e}; targets: {targets}; log: "
                                 f"{self.f.log('prometheus')[-1500:]}") from None

    def query(self, q):
        url = self.prom_url + "/api/v1/query?" + urllib.parse.urlencode({"query": q})
        with urllib.request.urlopen(url, timeout=10) as r:
            body = json.loads(r.read())
        self.assertEqual(body["status"], "success", body)
        return body["data"]["result"]

    def test_prometheus_scrapes_with_a_read_token_that_cannot_start_a_run(self):
        self.start_prometheus()

        def agents_up():
            r = self.query("sockmatrix_agent_up")
            got = {s["metric"]["agent"]: s["value"][1] for s in r}
            return got if got == {"h1": "1", "h2": "1"} else None
        self.assertEqual(self.wait("prometheus to scrape both agents up", agents_up, 60),
                         {"h1": "1", "h2": "1"})
        req = urllib.request.Request(self.f.url + "/api/runs", data=b'{"preset":"seed-tcp-unix"}',
                                     headers={"Content-Type": "application/json",
                                              "Authorization": f"Bearer {self.read_token}"})
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, timeout=10)
        self.assertEqual(e.exception.code, 403)
        self.assertIn("needs an operate token", json.loads(e.exception.read())["error"])
        self.assertEqual(self.f.query("SELECT COUNT(*) FROM runs")[0][0], 0)

    def test_prometheus_scrapes_agents_up_and_cell_medians_equal_to_the_table(self):
        rid = self.f.start_run(SPEC)
        self.assertEqual(self.f.wait_run(rid, 120)["state"], "done")
        table = self.f.get(f"/api/runs/{rid}/table")
        want = {}
        for c in table["cells"]:
            col = table["columns"][c["column"]]
            want[(table["rows"][c["row"]], col["label"], col["metric"], col["unit"])] = c["median"]
        # The ratio columns (tcp/unix here) in the same families, as metric "ratio", unit "x".
        for c in table["ratios"]:
            col = table["ratio_columns"][c["column"]]
            want[(table["rows"][c["row"]], col["label"], "ratio", "x")] = c["median"]
        self.assertEqual(sorted(table["rows"]), ["h1", "h2"])
        self.assertEqual(len(table["ratio_columns"]), 1, table["ratio_columns"])
        self.assertEqual(len(want), 2 * (len(table["columns"]) + 1), want)

        ctype, text = self.scrape()
        self.assertEqual(ctype, "text/plain; version=0.0.4; charset=utf-8")
        fam = families(text)
        for name, kind in (("sockmatrix_polls_total", "counter"),
                           ("sockmatrix_rejects_total", "counter"),
                           ("sockmatrix_agent_up", "gauge"),
                           ("sockmatrix_cell_median", "gauge"),
                           ("sockmatrix_cell_run_id", "gauge")):
            self.assertEqual(fam.get(name), (1, 1, kind), name)
        self.assertTrue(all(h == 1 and t == 1 for h, t, _ in fam.values()), fam)
        self.assertIn('sockmatrix_rejects_total{reason="wrong-host"} 0\n', text)

        self.start_prometheus()

        def agents_up():
            r = self.query("sockmatrix_agent_up")
            got = {s["metric"]["agent"]: s["value"][1] for s in r}
            return got if got == {"h1": "1", "h2": "1"} else None
        up = self.wait("prometheus to return both agents up", agents_up, 60)
        self.assertEqual(up, {"h1": "1", "h2": "1"})

        def medians():
            r = self.query('sockmatrix_cell_median{run_name="prom"}')
            got = {(s["metric"]["host"], s["metric"]["test"], s["metric"]["metric"],
                    s["metric"]["unit"]): float(s["value"][1]) for s in r}
            return got if len(got) == len(want) else None
        got = self.wait("prometheus to return every cell median", medians, 60)
        self.assertEqual(got, {k: float(v) for k, v in want.items()})

        ids = self.query('sockmatrix_cell_run_id{run_name="prom"}')
        self.assertEqual({s["value"][1] for s in ids}, {str(rid)})
        self.assertNotIn("run", ids[0]["metric"])
        self.assertNotIn("run_id", self.query("sockmatrix_cell_median")[0]["metric"])
        low = self.query('sockmatrix_cell_ci95_low{run_name="prom"}')
        high = self.query('sockmatrix_cell_ci95_high{run_name="prom"}')
        self.assertEqual(len(low), len(want))
        self.assertEqual(len(high), len(want))
        self.grafana_queries_are_valid(rid)
        for s in low:
            key = (s["metric"]["host"], s["metric"]["test"], s["metric"]["metric"],
                   s["metric"]["unit"])
            self.assertLessEqual(float(s["value"][1]), float(want[key]), key)

    def grafana_queries_are_valid(self, rid):
        """Every query of deploy/grafana/sockmatrix.json, its variables set to this run, is
        PromQL Prometheus accepts, and those that do not filter on a condition return series."""
        path = os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "grafana",
                            "sockmatrix.json")
        with open(path) as d:
            dash = json.load(d)
        subst = {"$run_name": "prom", "$test": ".+", "$ratio": ".+", "$host": ".+"}
        exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
        exprs += [v["query"]["query"] for v in dash["templating"]["list"]]
        self.assertGreaterEqual(len(exprs), 10)
        for e in exprs:
            for k, v in subst.items():
                e = e.replace(k, v)
            if e.startswith("label_values("):
                metric = e[len("label_values("):].rsplit(",", 1)[0]
                self.assertTrue(self.query(metric), e)
                continue
            if "==" in e or ">" in e:
                self.query(e)  # a condition may hold for no series; the query must parse
            else:
                # a rate needs two scrapes in its window: a bounded wait
                self.wait(f"series for {e}", lambda: self.query(e), 60)


if __name__ == "__main__":
    unittest.main()
