"""The coordinator's HTTP side against a hostile browser or client: cross-origin and rebinding
requests, the token on a listener off loopback, methods, body caps decided at the request head,
slow bodies (memory measured), security headers and symlinks out of the web folder."""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import unittest

from smtest import CLI, COORDINATOR, Fleet, WsClient, stream_job, wait_for

SECURITY_HEADERS = {
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
}


def raw(port, head, body=b"", timeout=10):
    """Sends head (request line and headers, without the blank line) and body on a fresh
    connection; returns (status, {lower-case header: value}, body bytes)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(head.encode() + b"\r\n\r\n" + body)
        return read_answer(s)


def read_answer(s):
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            raise AssertionError(f"the connection closed before an answer: {buf!r}")
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    n = int(headers.get("content-length", "0"))
    while len(rest) < n:
        chunk = s.recv(65536)
        if not chunk:
            break
        rest += chunk
    return status, headers, rest[:n]


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


class LoopbackTest(unittest.TestCase):
    """The default listener (loopback, no token): a browser on another site must not act
    through it, whatever name its page gives the coordinator."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="sm-websec-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.web = os.path.join(self.tmp, "web")
        os.mkdir(self.web)
        with open(os.path.join(self.web, "index.html"), "w") as f:
            f.write("<!doctype html><title>sockmatrix</title>")
        with open(os.path.join(self.tmp, "secret.txt"), "w") as f:
            f.write("outside the web folder\n")
        os.symlink(os.path.join(self.tmp, "secret.txt"), os.path.join(self.web, "leak.js"))
        os.symlink(self.tmp, os.path.join(self.web, "up"))
        self.f = Fleet(n=1, hold_ms=1000, lab=False)
        self.f.extra_args = ["--web-dir", self.web]
        self.addCleanup(self.f.stop)
        self.f.start()
        self.port = self.f.http_port
        self.host = f"127.0.0.1:{self.port}"

    def jobs(self):
        return self.f.query("SELECT COUNT(*) FROM jobs")[0][0]

    def post(self, path, body, ctype="application/json", host=None, origin=None, extra=""):
        head = (f"POST {path} HTTP/1.1\r\nHost: {host or self.host}\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close")
        if ctype:
            head += f"\r\nContent-Type: {ctype}"
        if origin:
            head += f"\r\nOrigin: {origin}"
        return raw(self.port, head + extra, body)

    def test_a_cross_origin_text_plain_post_is_refused_and_makes_no_job(self):
        body = json.dumps([stream_job("h1")]).encode()
        status, _, resp = self.post("/api/jobs", body, ctype="text/plain",
                                    origin="http://attacker.example")
        self.assertEqual(status, 403, resp)
        self.assertIn("Origin", json.loads(resp)["error"])
        # The same POST from a form of the dashboard's own origin but as text/plain: 415.
        status, _, resp = self.post("/api/jobs", body, ctype="text/plain",
                                    origin=f"http://{self.host}")
        self.assertEqual(status, 415, resp)
        self.assertIn("application/json", json.loads(resp)["error"])
        status, _, resp = self.post("/api/jobs", body, ctype=None)
        self.assertEqual(status, 415, resp)
        self.assertEqual(self.jobs(), 0)
        # The dashboard's own request still works.
        status, _, resp = self.post("/api/jobs", body, ctype="application/json; charset=utf-8",
                                    origin=f"http://{self.host}")
        self.assertEqual(status, 201, resp)
        self.assertEqual(self.jobs(), 1)

    def test_a_foreign_host_is_refused_on_every_route(self):
        for path in ("/api/agents", "/healthz", "/", "/api/runs"):
            status, headers, resp = raw(self.port, f"GET {path} HTTP/1.1\r\n"
                                        f"Host: attacker.example:{self.port}\r\nConnection: close")
            self.assertEqual(status, 421, (path, resp))
            self.assertIn("Host", json.loads(resp)["error"])
        body = json.dumps([stream_job("h1")]).encode()
        status, _, _ = self.post("/api/jobs", body, host="attacker.example")
        self.assertEqual(status, 421)
        self.assertEqual(self.jobs(), 0)
        self.assertEqual(self.f.get("/healthz")["counters"]["http_refused_host"], 5)
        # The listener's own names are fine: its address, and localhost on loopback.
        for host in (self.host, f"localhost:{self.port}", "LOCALHOST"):
            status, _, resp = raw(self.port, f"GET /api/agents HTTP/1.1\r\nHost: {host}\r\n"
                                  "Connection: close")
            self.assertEqual(status, 200, (host, resp))

    def test_ws_with_a_foreign_origin_is_refused_and_its_own_origin_is_not(self):
        ws = WsClient(self.port, origin="http://attacker.example")
        self.addCleanup(ws.close)
        self.assertIn(" 403", ws.status)
        ws2 = WsClient(self.port, host="attacker.example")
        self.addCleanup(ws2.close)
        self.assertIn(" 421", ws2.status)
        ok = WsClient(self.port, origin=f"http://{self.host}")
        self.addCleanup(ok.close)
        self.assertIn(" 101", ok.status)
        self.assertEqual(ok.recv_json()["type"], "snapshot")

    def test_a_read_from_another_site_is_refused_and_the_dashboards_own_is_not(self):
        def get(path, *headers):
            head = f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\nConnection: close"
            return raw(self.port, head + "".join("\r\n" + h for h in headers))
        own = f"Origin: http://{self.host}"
        for path in ("/api/agents", "/api/runs", "/healthz", "/metrics", "/api/runs/1/table"):
            for headers in (("Origin: http://attacker.example",),
                            ("Origin: null",),
                            ("Sec-Fetch-Site: cross-site",),
                            ("sec-fetch-site: Cross-Site",),
                            ("Sec-Fetch-Site: same-site",),
                            ("Origin: http://127.0.0.1:1", "Sec-Fetch-Site: same-site"),
                            (own, "Sec-Fetch-Site: cross-site")):
                status, _, resp = get(path, *headers)
                self.assertEqual(status, 403, (path, headers, resp))
                self.assertEqual(json.loads(resp)["field"], "Origin")
                self.assertIn("another site", json.loads(resp)["error"])
        # The dashboard's own fetches, a typed URL, and clients that send neither header.
        for headers in ((own, "Sec-Fetch-Site: same-origin"), ("Sec-Fetch-Site: none",), ()):
            self.assertEqual(get("/api/agents", *headers)[0], 200, headers)
            self.assertEqual(get("/metrics", *headers)[0], 200, headers)
        # The dashboard's files stay reachable by a link from another site.
        self.assertEqual(get("/", "Sec-Fetch-Site: cross-site")[0], 200)
        ws = WsClient(self.port, origin=f"http://{self.host}",
                      headers=("Sec-Fetch-Site: cross-site",))
        self.addCleanup(ws.close)
        self.assertIn(" 403", ws.status)
        ok = WsClient(self.port, origin=f"http://{self.host}",
                      headers=("Sec-Fetch-Site: same-origin",))
        self.addCleanup(ok.close)
        self.assertIn(" 101", ok.status)
        with open(os.path.join(self.f.dir, "coordinator.log")) as log:
            self.assertIn("SM-HTTP-ORIGIN", log.read())

    def test_other_methods_get_405_with_allow(self):
        for method, path, allow in (("PUT", "/api/jobs", "POST"),
                                    ("DELETE", "/api/runs/1", "GET"),
                                    ("DELETE", "/api/runs", "GET, POST"),
                                    ("PUT", "/index.html", "GET"),
                                    ("GET", "/api/jobs", "POST"),
                                    ("POST", "/api/agents", "GET")):
            status, headers, resp = raw(self.port, f"{method} {path} HTTP/1.1\r\n"
                                        f"Host: {self.host}\r\nContent-Length: 2\r\n"
                                        "Content-Type: application/json\r\nConnection: close",
                                        b"{}")
            self.assertEqual(status, 405, (method, path, resp))
            self.assertEqual(headers.get("allow"), allow, (method, path))
        self.assertEqual(self.jobs(), 0)

    def test_an_oversized_content_length_gets_413_before_the_body_is_sent(self):
        for path, n in (("/api/runs", 256 * 1024 + 1), ("/api/jobs", 8 << 20),
                        ("/api/runs/1/cancel", 64 * 1024)):
            with socket.create_connection(("127.0.0.1", self.port), timeout=10) as s:
                s.sendall(f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\n"
                          f"Content-Type: application/json\r\nContent-Length: {n}\r\n\r\n"
                          .encode())
                status, headers, resp = read_answer(s)  # no byte of the body sent
            self.assertEqual(status, 413, (path, resp))
            self.assertIn("KiB", json.loads(resp)["error"])
        # A spec just under the cap is read (and refused for what it says, not its size).
        body = b'{"name":"' + b"x" * (200 * 1024) + b'"}'
        status, _, resp = self.post("/api/runs", body)
        self.assertEqual(status, 400, resp)

    def test_forty_slow_8_mib_bodies_leave_the_memory_bounded(self):
        pid = self.f.coord.pid
        before = rss_kib(pid)
        socks = []
        chunk = b"x" * (1 << 20)
        for _ in range(40):
            s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
            socks.append(s)
            s.sendall(f"POST /api/runs HTTP/1.1\r\nHost: {self.host}\r\n"
                      f"Content-Type: application/json\r\nContent-Length: {8 << 20}\r\n\r\n"
                      .encode())
        try:
            # Each sends all but the last byte of its body, then holds the connection open.
            for s in socks:
                try:
                    for _ in range(7):
                        s.sendall(chunk)
                    s.sendall(chunk[:-1])
                except OSError:
                    pass  # refused at its head and closed: what should happen
            time.sleep(1)
            after = rss_kib(pid)
            self.assertIsNone(self.f.coord.poll())
        finally:
            for s in socks:
                s.close()
        print(f"[figure] 40 slow HTTP bodies of 8 MiB: coordinator RSS {before // 1024} MiB "
              f"before, {after // 1024} MiB after (+{(after - before) // 1024} MiB)", flush=True)
        self.assertLess(after - before, 32 * 1024, f"RSS grew from {before} to {after} KiB")
        self.assertTrue(self.f.get("/healthz")["ok"])

    def test_a_body_that_trickles_is_dropped(self):
        with socket.create_connection(("127.0.0.1", self.port), timeout=60) as s:
            s.sendall(f"POST /api/runs HTTP/1.1\r\nHost: {self.host}\r\n"
                      f"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{"
                      .encode())
            t0 = time.monotonic()
            closed = False
            while time.monotonic() - t0 < 40:
                try:
                    s.sendall(b" ")
                    s.settimeout(1)
                    if s.recv(4096) == b"":
                        closed = True
                        break
                except socket.timeout:
                    continue
                except OSError:
                    closed = True
                    break
            self.assertTrue(closed, "a body sent one byte a second was kept for 40 s")
            self.assertLess(time.monotonic() - t0, 30)

    def test_every_answer_carries_the_security_headers(self):
        for path in ("/", "/api/agents", "/nope.js", "/api/nope"):
            status, headers, _ = raw(self.port, f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\n"
                                     "Connection: close")
            for k, v in SECURITY_HEADERS.items():
                self.assertEqual(headers.get(k), v, (path, k))
            csp = headers.get("content-security-policy", "")
            for part in ("default-src 'none'", "script-src 'self'", "style-src 'self'",
                         "connect-src 'self'", "frame-ancestors 'none'"):
                self.assertIn(part, csp, path)
        status, headers, _ = raw(self.port, f"GET / HTTP/1.1\r\nHost: evil.example\r\n"
                                 "Connection: close")
        self.assertEqual(headers.get("x-frame-options"), "DENY")

    def test_a_symlink_out_of_the_web_folder_is_refused(self):
        for path in ("/leak.js", "/up/secret.txt", "/up/web/index.html"):
            status, _, resp = raw(self.port, f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\n"
                                  "Connection: close")
            self.assertIn(status, (403, 404), path)
            self.assertNotIn(b"outside the web folder", resp)
        status, _, resp = raw(self.port, f"GET / HTTP/1.1\r\nHost: {self.host}\r\n"
                              "Connection: close")
        self.assertEqual((status, resp), (200, b"<!doctype html><title>sockmatrix</title>"))


class ConnectionCapTest(unittest.TestCase):
    def test_connections_past_the_cap_are_refused_and_freed_ones_count_again(self):
        f = Fleet(n=1, hold_ms=1000, lab=False)
        self.addCleanup(f.stop)
        f.extra_args = ["--http-max-conns", "4"]
        f.start_coordinator()
        host = f"127.0.0.1:{f.http_port}"
        held = [socket.create_connection(("127.0.0.1", f.http_port), timeout=10)
                for _ in range(4)]
        for s in held:  # each starts a request and stays, as a slow client would
            s.sendall(f"GET /healthz HTTP/1.1\r\nHost: {host}\r\n".encode())
        time.sleep(0.5)
        with self.assertRaises((AssertionError, OSError)):
            raw(f.http_port, f"GET /healthz HTTP/1.1\r\nHost: {host}\r\nConnection: close")
        for s in held:
            s.close()
        def answered():
            try:
                return raw(f.http_port, f"GET /healthz HTTP/1.1\r\nHost: {host}\r\n"
                           "Connection: close")[0] == 200
            except (AssertionError, OSError):
                return False
        wait_for("a freed connection to count again", answered, 10, 0.2)
        with open(os.path.join(f.dir, "coordinator.log")) as log:
            self.assertIn("SM-HTTP-FULL", log.read())
        health = f.get("/healthz")["counters"]
        self.assertGreaterEqual(health["http_refused_full"], 1)
        self.assertEqual(health["http_clients"], 1)  # this request's own


class PublicTest(unittest.TestCase):
    """A listener off loopback (0.0.0.0, which the coordinator judges by its address): the
    token guards reading too, and /ws; the dashboard's files stay public."""

    def setUp(self):
        self.f = Fleet(n=1, hold_ms=1000, lab=False)
        self.addCleanup(self.f.stop)
        self.token = os.path.join(self.f.dir, "token")
        subprocess.run([COORDINATOR, "keygen", "--token", self.token], check=True,
                       capture_output=True)
        with open(self.token) as t:
            self.secret = t.read().strip()
        self.web = os.path.join(self.f.dir, "web")
        os.mkdir(self.web)
        with open(os.path.join(self.web, "index.html"), "w") as f:
            f.write("<!doctype html><title>sockmatrix</title>")
        # Plain HTTP off loopback (--insecure-http): what is checked here is the same over TLS
        # (test_tls), and plain requests are easier to forge by hand.
        self.f.extra_args = ["--http", f"0.0.0.0:{self.f.http_port}", "--token-file", self.token,
                             "--insecure-http", "--web-dir", self.web]
        self.port = self.f.http_port
        self.host = f"127.0.0.1:{self.port}"

    def get(self, path, auth=None, host=None):
        head = f"GET {path} HTTP/1.1\r\nHost: {host or self.host}\r\nConnection: close"
        if auth:
            head += f"\r\nAuthorization: {auth}"
        return raw(self.port, head)

    def test_get_and_ws_without_the_token_are_refused(self):
        f = self.f
        f.start_coordinator()
        for path in ("/api/agents", "/api/runs", "/api/runs/1", "/api/jobs/1", "/healthz",
                     "/api/presets"):
            status, _, resp = self.get(path)
            self.assertEqual(status, 401, (path, resp))
            self.assertEqual(json.loads(resp)["field"], "Authorization")
            self.assertEqual(self.get(path, "Bearer wrong")[0], 401, path)
        self.assertEqual(self.get("/api/agents", f"Bearer {self.secret}")[0], 200)
        self.assertEqual(self.get("/")[0], 200)  # the dashboard's files hold no data
        ws = WsClient(self.port)
        self.addCleanup(ws.close)
        self.assertIn(" 401", ws.status)
        bad = WsClient(self.port, protocol="sm-events, sm-token.wrong")
        self.addCleanup(bad.close)
        self.assertIn(" 401", bad.status)
        ok = WsClient(self.port, protocol=f"sm-events, sm-token.{self.secret}")
        self.addCleanup(ok.close)
        self.assertIn(" 101", ok.status)
        self.assertEqual(ok.recv_json()["type"], "snapshot")
        # Any IP literal names a listener on every address; a DNS name needs --http-host.
        self.assertEqual(self.get("/api/agents", f"Bearer {self.secret}",
                                  host=f"[::1]:{self.port}")[0], 200)
        self.assertEqual(self.get("/api/agents", f"Bearer {self.secret}",
                                  host="lab.example")[0], 421)
        with open(os.path.join(f.dir, "coordinator.log")) as log:
            self.assertNotIn(self.secret, log.read())

    def test_http_host_names_another_allowed_host(self):
        self.f.extra_args += ["--http-host", "lab.example", "--http-host", "dash.example"]
        self.f.start_coordinator()
        for host, want in (("lab.example", 200), ("DASH.example:443", 200),
                           ("other.example", 421)):
            self.assertEqual(self.get("/api/agents", f"Bearer {self.secret}", host=host)[0],
                             want, host)

    def test_an_over_long_token_is_refused_at_load_and_in_a_request(self):
        f = self.f
        with open(self.token, "w") as t:
            t.write("a" * 300 + "\n")
        r = subprocess.run([COORDINATOR, "--key-file", f.key, "--db", f.db, "--http",
                            f"0.0.0.0:{f.http_port}", "--token-file", self.token],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 2)
        self.assertIn("longer than 255", r.stderr)
        with open(self.token, "w") as t:
            t.write(self.secret + "\n")
        f.start_coordinator()
        status, _, resp = self.get("/api/agents", "Bearer " + self.secret + "x" * 300)
        self.assertEqual(status, 401)
        self.assertIn("longer than 255", json.loads(resp)["error"])

    def test_an_unauthenticated_body_is_refused_at_the_head(self):
        self.f.start_coordinator()
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as s:
            s.sendall(f"POST /api/runs HTTP/1.1\r\nHost: {self.host}\r\n"
                      f"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
                      .encode())
            status, _, resp = read_answer(s)
        self.assertEqual(status, 401, resp)


def keygen_token(path, scope=None):
    args = [COORDINATOR, "keygen", "--token", *(["--scope", scope] if scope else []), path]
    r = subprocess.run(args, check=True, capture_output=True, text=True)
    with open(path) as t:
        return r.stdout, t.read().strip()


class ScopedTokenTest(unittest.TestCase):
    """An operate token and read tokens (--read-token-file): a reader (a Prometheus, a viewer)
    reads everything but webhook URLs and changes nothing, told why."""

    def setUp(self):
        self.f = Fleet(n=1, hold_ms=1000, lab=False)
        self.addCleanup(self.f.stop)
        self.token = os.path.join(self.f.dir, "token")
        out, self.operate = keygen_token(self.token, "operate")
        self.assertIn("operate token", out)
        self.reads = os.path.join(self.f.dir, "read-tokens")
        out, self.read = keygen_token(self.reads, "read")
        self.assertIn("read token", out)
        self.assertEqual(os.stat(self.reads).st_mode & 0o777, 0o600)
        with open(self.reads, "a") as t:
            t.write("\nsecond-reader-token-0123456789\n")
        self.f.extra_args = ["--token-file", self.token, "--read-token-file", self.reads]
        self.port = self.f.http_port
        self.host = f"127.0.0.1:{self.port}"

    def call(self, method, path, token=None, body=b""):
        head = (f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\nConnection: close\r\n"
                f"Content-Length: {len(body)}")
        if body:
            head += "\r\nContent-Type: application/json"
        if token:
            head += f"\r\nAuthorization: Bearer {token}"
        return raw(self.port, head, body)

    def check_reader(self, token):
        for path in ("/api/agents", "/api/runs", "/metrics", "/healthz", "/api/schedules"):
            self.assertEqual(self.call("GET", path, token)[0], 200, path)
        for method, path, body in (("POST", "/api/runs", b'{"preset":"seed-tcp-unix"}'),
                                   ("POST", "/api/jobs", json.dumps([stream_job("h1")]).encode()),
                                   ("POST", "/api/schedules/1/pause", b"{}"),
                                   ("DELETE", "/api/schedules/1", b"")):
            status, _, resp = self.call(method, path, token, body)
            self.assertEqual(status, 403, (path, resp))
            self.assertEqual(json.loads(resp), {
                "error": "this call needs an operate token; the token given is read-only",
                "field": "Authorization"})
        self.assertEqual(self.f.query("SELECT COUNT(*) FROM jobs")[0][0], 0)
        self.assertEqual(self.f.query("SELECT COUNT(*) FROM runs")[0][0], 0)
        ws = WsClient(self.port, protocol=f"sm-events, sm-token.{token}")
        self.addCleanup(ws.close)
        self.assertIn(" 101", ws.status)
        self.assertEqual(ws.recv_json()["type"], "snapshot")

    def webhook_of(self, token):
        status, _, resp = self.call("GET", "/api/schedules/1", token)
        self.assertEqual(status, 200, resp)
        return json.loads(resp)["webhook"]

    def make_schedule(self):
        body = json.dumps({"name": "nightly", "preset": "seed-tcp-unix", "every": "1h",
                           "webhook": "https://hooks.example.com/h?key=receivers-own"}).encode()
        status, _, resp = self.call("POST", "/api/schedules", self.operate, body)
        self.assertEqual(status, 201, resp)

    def test_a_read_token_reads_off_loopback_and_gets_403_on_every_write(self):
        self.f.extra_args += ["--http", f"0.0.0.0:{self.port}", "--insecure-http"]
        self.f.start_coordinator()
        self.make_schedule()
        self.check_reader(self.read)
        self.check_reader("second-reader-token-0123456789")
        self.assertEqual(self.call("GET", "/api/agents")[0], 401)
        self.assertEqual(self.call("GET", "/api/agents", "not-a-token-of-ours-at-all")[0], 401)
        self.assertEqual(self.webhook_of(self.read), "(hidden)")
        self.assertEqual(self.webhook_of(self.operate),
                         "https://hooks.example.com/h?key=receivers-own")
        status, _, resp = self.call("POST", "/api/schedules/1/pause", self.operate, b"{}")
        self.assertEqual(status, 200, resp)
        # The CLI with either token: a read token lists, and a write says why it cannot.
        read_file = os.path.join(self.f.dir, "one-read-token")
        with open(read_file, "w") as t:
            t.write(self.read + "\n")
        os.chmod(read_file, 0o600)
        for token_file in (read_file, self.token):
            p = subprocess.run([CLI, "--coordinator", self.f.url, "--token-file", token_file,
                                "runs"], capture_output=True, text=True, timeout=30)
            self.assertEqual(p.returncode, 0, p.stderr)
        p = subprocess.run([CLI, "--coordinator", self.f.url, "--token-file", read_file,
                            "cancel", "1"], capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("this call needs an operate token; the token given is read-only", p.stderr)
        with open(os.path.join(self.f.dir, "coordinator.log")) as log:
            text = log.read()
        self.assertIn("read-only token", text)
        self.assertNotIn(self.read, text)

    def test_on_loopback_no_token_reads_but_sees_no_webhook_url(self):
        self.f.start_coordinator()
        self.make_schedule()
        self.assertEqual(self.webhook_of(None), "(hidden)")
        self.assertEqual(self.webhook_of(self.read), "(hidden)")
        status, _, resp = self.call("GET", "/api/schedules", self.operate)
        self.assertIn("key=receivers-own", json.loads(resp)["schedules"][0]["webhook"])
        self.assertEqual(self.call("POST", "/api/schedules/1/pause", None, b"{}")[0], 401)
        self.assertEqual(self.call("POST", "/api/schedules/1/pause", self.read, b"{}")[0], 403)

    def test_bad_read_token_options_are_refused_naming_them(self):
        f = self.f

        def start(*args):
            return subprocess.run([COORDINATOR, "--key-file", f.key, "--db", f.db, "--http",
                                   f"127.0.0.1:{f.http_port}", *args],
                                  capture_output=True, text=True, timeout=30)
        r = start("--read-token-file", self.reads)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--read-token-file", r.stderr)
        self.assertIn("need an operate token too (--token-file)", r.stderr)
        # Under systemd the file may come as the credential "read-tokens", checked alike.
        creds = os.path.join(f.dir, "creds")
        os.mkdir(creds)
        shutil.copy(self.reads, os.path.join(creds, "read-tokens"))
        r = subprocess.run([COORDINATOR, "--key-file", f.key, "--db", f.db, "--http",
                            f"127.0.0.1:{f.http_port}"], capture_output=True, text=True,
                           timeout=30, env={**os.environ, "CREDENTIALS_DIRECTORY": creds})
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("the credential read-tokens", r.stderr)
        with open(self.reads, "a") as t:
            t.write(self.operate + "\n")
        r = start("--token-file", self.token, "--read-token-file", self.reads)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("line 4 of", r.stderr)
        self.assertIn("is the operate token", r.stderr)
        os.chmod(self.reads, 0o644)
        r = start("--token-file", self.token, "--read-token-file", self.reads)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("chmod 600", r.stderr)
        r = subprocess.run([COORDINATOR, "keygen", "--token", "--scope", "admin",
                            os.path.join(f.dir, "t2")], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--scope: 'admin' is not operate or read", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(f.dir, "t2")))


if __name__ == "__main__":
    unittest.main()
