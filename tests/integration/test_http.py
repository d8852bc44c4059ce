"""The http workload end to end: the three libcurl client models against the agent's built-in
source and against nginx (started here with its own config on a free port), TLS with the pinned
key, the allowlist, a stalled server, and a pair job between two lab hosts."""
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import unittest

from smtest import AGENT, Fleet, agent, free_port, netns, wait_for

MODELS = ("thread", "pool", "multi")
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def once(*args, timeout=180):
    # These tests check what http measures, not how quiet the machine was: every sample counts.
    return agent("--once", "--quiet", "--format", "json", "--workload", "http",
                 "--disturbed", "include", *args, timeout=timeout)


def once_ok(*args):
    r = once(*args)
    if r.rc != 0:
        raise AssertionError(f"exit {r.rc}: {r.err}\n{r.out[-2000:]}")
    return r.json()


def cell(doc, variant):
    for c in doc["cells"]:
        if c["variant"] == variant:
            return c
    raise AssertionError(f"no cell {variant} in {[c['variant'] for c in doc['cells']]}")


def failures(doc):
    return [f["reason"] for c in doc["cells"] for f in c["failures"]]


class Nginx:
    """nginx serving files from a temp dir on 127.0.0.1, plain and (with a self-signed
    certificate made here) TLS; stopped by PID."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="sm-nginx-")
        os.chmod(self.dir, 0o755)  # a root master's workers run as nobody
        self.www = os.path.join(self.dir, "www")
        os.mkdir(self.www)
        os.chmod(self.www, 0o755)
        self.port = free_port()
        self.tls_port = free_port()
        self.proc = None

    def add_pattern(self, name, size):
        path = os.path.join(self.www, name)
        with open(path, "wb") as f:
            r = subprocess.run([AGENT, "--write-pattern", str(size)], stdout=f, timeout=60)
        if r.returncode != 0:
            raise AssertionError("--write-pattern failed")
        os.chmod(path, 0o644)
        return path

    def start(self):
        d = self.dir
        cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:P-256", "-nodes", "-days", "1", "-subj", "/CN=lab",
                        "-keyout", key, "-out", cert], check=True, capture_output=True,
                       timeout=60)
        temp = "".join(f"  {k}_temp_path {d}/{k};\n" for k in
                       ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        conf = os.path.join(d, "nginx.conf")
        with open(conf, "w") as f:
            f.write(f"""worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 256; }}
http {{
{temp}  access_log off;
  sendfile on;
  keepalive_requests 100000;
  default_type application/octet-stream;
  server {{ listen 127.0.0.1:{self.port}; root {self.www}; }}
  server {{ listen 127.0.0.1:{self.tls_port} ssl; root {self.www};
           ssl_certificate {cert}; ssl_certificate_key {key}; }}
}}
""")
        self.proc = subprocess.Popen([NGINX, "-p", d, "-c", conf, "-e", f"{d}/error.log",
                                      "-g", "daemon off;"], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)

        def accepting():
            if self.proc.poll() is not None:
                raise AssertionError(f"nginx exited {self.proc.returncode}: {self.error_log()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return True
            except OSError:
                return False
        wait_for("nginx to accept", accepting, 20)
        return self

    def error_log(self):
        try:
            with open(os.path.join(self.dir, "error.log")) as f:
                return f.read()[-2000:]
        except OSError:
            return ""

    def url(self, name, tls=False):
        return f"http{'s' if tls else ''}://127.0.0.1:{self.tls_port if tls else self.port}/{name}"

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


class StallServer:
    """Answers one GET with the headers and half of a 1 MB body, then says nothing more."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.done = threading.Event()
        self.conns = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        self.sock.settimeout(0.2)
        while not self.done.is_set():
            try:
                c, _ = self.sock.accept()
            except OSError:
                continue
            self.conns.append(c)
            c.recv(65536)
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n" + b"x" * 500000)

    def stop(self):
        self.done.set()
        self.thread.join(5)
        for c in self.conns:
            c.close()
        self.sock.close()


class BuiltInSourceTest(unittest.TestCase):
    def test_each_model_fetches_verified_bodies_over_one_kept_alive_connection(self):
        doc = once_ok("--client", "thread,pool,multi", "--bytes", "4M", "--repeat", "3",
                      "--repetitions", "2", "--warmup", "0")
        self.assertEqual([c["variant"] for c in doc["cells"]], list(MODELS))
        for model in MODELS:
            self.assertEqual(len(cell(doc, model)["samples"]), 2)
            for s in cell(doc, model)["samples"]:
                # Rounds 2 and 3: two bodies, every byte checked against the pattern.
                self.assertEqual(s["bytes"], 2 * 4 * 1024 * 1024)
                self.assertEqual(s["transfers"], 2)
                self.assertEqual(s["new_connections"], 0)  # keep-alive: round 1's connection
                self.assertAlmostEqual(s["throughput_MBps"], s["bytes"] / s["seconds"] / 1e6,
                                       delta=s["throughput_MBps"] * 1e-9)
                self.assertAlmostEqual(s["cpu_s_per_GB"],
                                       (s["user_s"] + s["sys_s"]) / (s["bytes"] / 1e9), places=6)
                self.assertGreater(s["first_MBps"], 0)
                self.assertGreater(s["ttfb_ms"], 0)
                self.assertGreater(s["connect_ms"], 0)  # round 1 connected
                self.assertNotIn("tls_ms", s)
        ratios = {(r["numerator"], r["metric"]) for r in doc["ratios"]}
        self.assertIn(("multi", "user_s"), ratios)
        self.assertIn(("pool", "throughput_MBps"), ratios)
        self.assertTrue(all(r["denominator"] == "thread" for r in doc["ratios"]))

    def test_fresh_connect_opens_a_connection_for_every_transfer(self):
        doc = once_ok("--client", "thread,pool,multi", "--bytes", "256K", "--repeat", "4",
                      "--connections", "3", "--fresh-connect", "--repetitions", "1",
                      "--warmup", "0")
        for model in MODELS:
            s = cell(doc, model)["samples"][0]
            self.assertEqual(s["transfers"], 9)  # rounds 2..4 of 3 simultaneous transfers
            self.assertEqual(s["new_connections"], 9)
            self.assertEqual(s["bytes"], 9 * 256 * 1024)

    def test_https_works_with_the_pinned_key_and_fails_with_another(self):
        doc = once_ok("--tls", "--client", "thread,multi", "--bytes", "1M", "--repeat", "2",
                      "--repetitions", "1", "--warmup", "0")
        for model in ("thread", "multi"):
            s = cell(doc, model)["samples"][0]
            self.assertEqual(s["bytes"], 1024 * 1024)
            self.assertGreater(s["tls_ms"], 0)
        r = once("--tls", "--test-fault", "wrong-pin", "--client", "thread", "--bytes", "1M",
                 "--repeat", "2", "--repetitions", "1", "--warmup", "0")
        self.assertEqual(r.rc, 1, r.err)
        reasons = failures(r.json())
        self.assertEqual(len(reasons), 1)
        self.assertIn("pinned", reasons[0].lower())

    def test_a_source_that_stalls_mid_body_ends_the_job_at_its_time_limit(self):
        for model in MODELS:
            t0 = time.monotonic()
            r = once("--client", model, "--test-fault", "stall", "--bytes", "8M", "--repeat",
                     "1", "--time-limit-ms", "1500", "--repetitions", "1", "--warmup", "0")
            took = time.monotonic() - t0
            self.assertEqual(r.rc, 1, r.err)
            reasons = failures(r.json())
            self.assertEqual(len(reasons), 1, reasons)
            self.assertIn("time limit of 1500 ms", reasons[0])
            self.assertLess(took, 10, f"{model}: the stalled job took {took:.1f} s")

    def test_options_that_do_not_fit_are_refused_before_anything_runs(self):
        for args, words in [(("--transport", "unix"), "--transport"),
                            (("--nodelay",), "--nodelay"),
                            (("--connections", "65"), "--connections"),
                            (("--url", "ftp://x/y"), "--url"),
                            (("--verify",), "--verify"),
                            (("--test-fault", "wrong-pin"), "--test-fault")]:
            r = once(*args)
            self.assertEqual(r.rc, 2, args)
            self.assertIn(words, r.err)
        r = agent("--once", "--client", "multi")
        self.assertEqual(r.rc, 2)
        self.assertIn("--client: applies to workload http only", r.err)


class NginxTest(unittest.TestCase):
    SIZE = 4 * 1024 * 1024

    @classmethod
    def setUpClass(cls):
        cls.nginx = Nginx()
        cls.nginx.add_pattern("pattern", cls.SIZE)
        bad = cls.nginx.add_pattern("corrupt", cls.SIZE)
        with open(bad, "r+b") as f:
            f.seek(cls.SIZE // 2)
            byte = f.read(1)
            f.seek(cls.SIZE // 2)
            f.write(bytes([byte[0] ^ 0x5A]))
        try:
            cls.nginx.start()
        except Exception:
            cls.nginx.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.nginx.stop()

    def test_each_model_verifies_every_byte_and_keeps_the_connection(self):
        doc = once_ok("--client", "thread,pool,multi", "--url", self.nginx.url("pattern"),
                      "--verify", "--repeat", "3", "--connections", "2", "--repetitions", "2",
                      "--warmup", "0")
        for model in MODELS:
            for s in cell(doc, model)["samples"]:
                self.assertEqual(s["bytes"], 4 * self.SIZE)  # rounds 2-3, 2 connections
                self.assertEqual(s["transfers"], 4)
                self.assertEqual(s["new_connections"], 0)

    def test_fresh_connect_reconnects_to_nginx(self):
        doc = once_ok("--client", "thread,pool,multi", "--url", self.nginx.url("pattern"),
                      "--repeat", "3", "--fresh-connect", "--repetitions", "1", "--warmup", "0")
        for model in MODELS:
            s = cell(doc, model)["samples"][0]
            self.assertEqual(s["new_connections"], 2)
            self.assertEqual(s["bytes"], 2 * self.SIZE)  # counted, not verified: no --verify

    def test_a_changed_byte_a_missing_file_and_an_unverified_certificate_fail_the_job(self):
        cases = [(("--url", self.nginx.url("corrupt"), "--verify"), "differs from the pattern"),
                 (("--url", self.nginx.url("missing")), "404"),
                 (("--url", self.nginx.url("pattern", tls=True)), "certificate"),
                 (("--url", self.nginx.url("pattern"), "--bytes", "1000"), "1000")]
        for args, words in cases:
            for model in MODELS:
                r = once("--client", model, "--repeat", "1", "--repetitions", "1", "--warmup",
                         "0", *args)
                self.assertEqual(r.rc, 1, f"{model} {args}: {r.err}")
                reasons = failures(r.json())
                self.assertEqual(len(reasons), 1, reasons)
                self.assertIn(words, reasons[0], f"{model} {args}")

    def test_a_server_that_stalls_mid_body_ends_the_job_at_its_time_limit(self):
        srv = StallServer()
        self.addCleanup(srv.stop)
        for model in MODELS:
            t0 = time.monotonic()
            r = once("--client", model, "--url", f"http://127.0.0.1:{srv.port}/big", "--repeat",
                     "1", "--time-limit-ms", "1500", "--repetitions", "1", "--warmup", "0")
            self.assertEqual(r.rc, 1, r.err)
            reasons = failures(r.json())
            self.assertIn("time limit of 1500 ms", reasons[0])
            self.assertLess(time.monotonic() - t0, 10)


class FleetHttpCase(unittest.TestCase):
    LAB = False

    def setUp(self):
        self.f = Fleet(n=2, hold_ms=1000, lab=self.LAB)
        self.allowed = "http://127.0.0.1:9/"  # the discard port: nothing answers
        self.f.agent_args = ["--allow-http", self.allowed]
        self.addCleanup(self.f.stop)
        self.f.start()

    def wait_job(self, jid):
        return wait_for(f"job {jid}", lambda: (j := self.f.job(jid))["state"] in
                        ("done", "failed") and j, 60, 0.2)


class FleetHttpTest(FleetHttpCase):
    """The allowlist, on loopback agents."""

    def test_a_url_outside_the_allowlist_is_refused_with_a_reason(self):
        f = self.f
        http = {"workload": "http", "repeat": 1, "time_limit_ms": 3000}
        refused, allowed, lookalike = f.submit([
            {"host": "h1", "params": {**http, "url": "http://192.0.2.1/x"}},
            {"host": "h1", "params": {**http, "url": self.allowed + "x"}},
            {"host": "h2", "params": {**http, "url": "http://127.0.0.1:99/x"}}])
        j = self.wait_job(refused)
        self.assertEqual(j["state"], "failed")
        self.assertIn("refused: url: 'http://192.0.2.1/x' is not under an --allow-http prefix",
                      j["reason"])
        j = self.wait_job(lookalike)  # a prefix of the allowed one's text, another port
        self.assertIn("refused: url", j["reason"])
        j = self.wait_job(allowed)  # allowed: it ran, and failed on the connection itself
        self.assertEqual(j["state"], "failed")
        self.assertNotIn("refused", j["reason"])



@netns
class FleetHttpPairTest(FleetHttpCase):
    """A pair job between two lab hosts when root, each on an address of its own."""

    LAB = None

    def test_a_pair_http_job_fetches_from_the_server_hosts_source(self):
        f = self.f
        # Counted job by job: no round for a sample this machine disturbs.
        body = {"name": "http-pair", "hosts": "all", "pairs": "ring", "repetitions": 1,
                "remeasure": 0, "warmup": 0,
                "tests": [{"workload": "http", "scope": "pair", "client": ["thread", "multi"],
                           "tls": [False, True], "bytes": 2097152, "repeat": 3}]}
        status, resp = f.post("/api/runs", body)
        self.assertEqual(status, 201, resp)
        rid = int(resp["run"])
        r = wait_for("the pair run", lambda: (x := f.get(f"/api/runs/{rid}"))["state"] !=
                     "running" and x, 120, 0.2)
        self.assertEqual(r["state"], "done", r)
        self.assertEqual(r["progress"], {"done": 8, "failed": 0, "total": 8})
        jobs = f.query("SELECT id, host, peer FROM jobs WHERE run_id = ?", rid)
        self.assertEqual(sorted((h, p) for _, h, p in jobs),
                         sorted([("h1", "h2"), ("h2", "h1")] * 4))
        for jid, _, _ in jobs:
            j = f.job(jid)
            m = j["result"]["metrics"]
            self.assertEqual(m["bytes"], 2 * 2097152)
            self.assertEqual(m["transfers"], 2)
            self.assertEqual(m["new_connections"], 0)
            self.assertIn("rx_user_s", m)  # the source's CPU, from the server side
            self.assertEqual("tls_ms" in m, j["params"]["tls"])


if __name__ == "__main__":
    unittest.main()
