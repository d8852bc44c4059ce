"""TLS on the coordinator's HTTP listener, with a certificate the test makes: https and wss://
with the token, no plain HTTP on that port, the CLI verifying the certificate (--cacert), and
plain HTTP off loopback refused unless --insecure-http says so, by the coordinator and the CLI."""
import json
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import unittest

from smtest import BIN_DIR, COORDINATOR, Fleet, WsClient

CLI = os.path.join(BIN_DIR, "sockmatrix")


def make_cert(folder):
    """A self-signed P-256 certificate for localhost and 127.0.0.1 and its key (0600)."""
    cert, key = os.path.join(folder, "tls.crt"), os.path.join(folder, "tls.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key,
                    "-out", cert], check=True, capture_output=True, timeout=60)
    os.chmod(key, 0o600)
    return cert, key


def make_token(folder):
    path = os.path.join(folder, "token")
    subprocess.run([COORDINATOR, "keygen", "--token", path], check=True, capture_output=True)
    with open(path) as t:
        return path, t.read().strip()


def cli_env():
    """The environment without anything that would point curl at other CAs or a proxy."""
    env = dict(os.environ)
    for k in ("SOCKMATRIX_COORDINATOR", "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR",
              "https_proxy", "HTTPS_PROXY", "http_proxy", "all_proxy", "ALL_PROXY"):
        env.pop(k, None)
    return env


def cli(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL, env=cli_env())


class TlsListenerTest(unittest.TestCase):
    """A coordinator listening off loopback (0.0.0.0) with --tls-cert and --tls-key."""

    @classmethod
    def setUpClass(cls):
        cls.f = f = Fleet(n=1, hold_ms=1000, lab=False)
        cls.addClassCleanup(f.stop)
        cls.cert, cls.key = make_cert(f.dir)
        cls.token, cls.secret = make_token(f.dir)
        f.extra_args = ["--http", f"0.0.0.0:{f.http_port}", "--token-file", cls.token,
                        "--tls-cert", cls.cert, "--tls-key", cls.key]
        f.url = f"https://127.0.0.1:{f.http_port}"
        f.ssl = ssl.create_default_context(cafile=cls.cert)
        f.headers = {"Authorization": f"Bearer {cls.secret}"}
        f.start()  # every agent seen online through GET /api/agents over https

    def test_https_answers_healthz_and_the_api_with_the_token_only(self):
        f = self.f
        self.assertEqual(f.get_status("/healthz")[0], 200)
        self.assertEqual({a["name"] for a in f.get("/api/agents")["agents"]}, {"h1"})
        f.headers = {}
        try:
            status, body = f.get_status("/api/agents")
        finally:
            f.headers = {"Authorization": f"Bearer {self.secret}"}
        self.assertEqual(status, 401)
        self.assertEqual(body["field"], "Authorization")

    def test_plain_http_on_the_tls_port_gets_no_http_answer(self):
        with socket.create_connection(("127.0.0.1", self.f.http_port), timeout=10) as s:
            s.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{self.f.http_port}\r\n"
                      f"Authorization: Bearer {self.secret}\r\n\r\n".encode())
            got = b""
            try:
                while len(got) < 4096:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    got += chunk
            except (socket.timeout, ConnectionResetError):
                pass
        self.assertFalse(got.startswith(b"HTTP/"), got[:200])

    def test_the_listener_speaks_http_1_1_even_to_a_client_offering_h2(self):
        ctx = ssl.create_default_context(cafile=self.cert)
        ctx.set_alpn_protocols(["h2", "http/1.1"])
        with socket.create_connection(("127.0.0.1", self.f.http_port), timeout=10) as raw:
            with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
                self.assertEqual(s.selected_alpn_protocol(), "http/1.1")

    def test_the_log_says_the_listener_serves_https(self):
        self.assertIn("HTTPS (TLS, wss:// for /ws)", self.f.log("coordinator"))

    def test_the_cli_with_cacert_works_and_without_it_refuses_the_certificate(self):
        url = self.f.url
        ok = cli("--coordinator", url, "--token-file", self.token, "--cacert", self.cert,
                 "agents")
        self.assertEqual(ok.returncode, 0, ok.stderr)
        self.assertIn("h1", ok.stdout)
        bad = cli("--coordinator", url, "--token-file", self.token, "agents")
        self.assertEqual(bad.returncode, 1, bad)
        self.assertEqual(bad.stdout, "")
        lines = bad.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, bad.stderr)
        self.assertIn("certificate was refused", lines[0])
        self.assertIn("--cacert", lines[0])
        # Another certificate for the same names is refused too: it is the CA that counts.
        other = tempfile.mkdtemp(prefix="sm-tls-other-")
        self.addCleanup(shutil.rmtree, other, True)
        other_cert, _ = make_cert(other)
        wrong = cli("--coordinator", url, "--token-file", self.token, "--cacert", other_cert,
                    "agents")
        self.assertEqual(wrong.returncode, 1, wrong)
        self.assertIn("certificate was refused", wrong.stderr)
        missing = os.path.join(other, "missing.pem")
        gone = cli("--coordinator", url, "--token-file", self.token, "--cacert", missing,
                   "agents")
        self.assertEqual(gone.returncode, 1, gone)
        self.assertIn(f"--cacert {missing} is not a readable PEM certificate file", gone.stderr)

    def test_ws_over_wss_takes_the_token_subprotocol(self):
        ctx = ssl.create_default_context(cafile=self.cert)
        bad = WsClient(self.f.http_port, protocol="sm-events, sm-token.wrong", tls=ctx)
        self.addCleanup(bad.close)
        self.assertIn(" 401", bad.status)
        ok = WsClient(self.f.http_port, protocol=f"sm-events, sm-token.{self.secret}", tls=ctx)
        self.addCleanup(ok.close)
        self.assertIn(" 101", ok.status)
        self.assertEqual(ok.recv_json()["type"], "snapshot")


class PlainHttpOffLoopbackTest(unittest.TestCase):
    """Off loopback, plain HTTP would carry the token in clear: refused unless asked for."""

    def setUp(self):
        self.f = Fleet(n=1, hold_ms=1000, lab=False)
        self.addCleanup(self.f.stop)
        self.token, self.secret = make_token(self.f.dir)

    def coordinator(self, *args):
        f = self.f
        return subprocess.run([COORDINATOR, "--key-file", f.key, "--db", f.db, "--listen",
                               f"tcp://127.0.0.1:{f.bus_port}", *args], capture_output=True,
                              text=True, timeout=30)

    def test_the_coordinator_refuses_plain_http_off_loopback_naming_both_options(self):
        r = self.coordinator("--http", f"0.0.0.0:{self.f.http_port}", "--token-file",
                             self.token)
        self.assertEqual(r.returncode, 2, r)
        line = r.stderr.strip()
        self.assertEqual(len(line.splitlines()), 1, r.stderr)
        for needle in ("--tls-cert", "--tls-key", "--insecure-http", "in clear"):
            self.assertIn(needle, line)
        self.assertFalse(os.path.exists(self.f.db), "nothing may be made before the refusal")

    def test_insecure_http_starts_it_and_the_log_warns(self):
        f = self.f
        f.extra_args = ["--http", f"0.0.0.0:{f.http_port}", "--token-file", self.token,
                        "--insecure-http"]
        f.headers = {"Authorization": f"Bearer {self.secret}"}
        f.start()
        self.assertIn("SM-HTTP-INSECURE", f.log("coordinator"))
        self.assertIn("HTTP (plain)", f.log("coordinator"))

    def test_loopback_stays_plain_http_by_default(self):
        self.f.start()
        self.assertIn("h1", self.f.online())
        self.assertNotIn("SM-HTTP-INSECURE", self.f.log("coordinator"))

    def test_bad_tls_options_are_refused_naming_the_option(self):
        cert, key = make_cert(self.f.dir)
        http = ["--http", f"127.0.0.1:{self.f.http_port}"]
        r = self.coordinator(*http, "--tls-cert", cert)
        self.assertEqual(r.returncode, 2, r)
        self.assertIn("--tls-cert and --tls-key go together", r.stderr)
        os.chmod(key, 0o644)
        r = self.coordinator(*http, "--tls-cert", cert, "--tls-key", key)
        self.assertEqual(r.returncode, 2, r)
        self.assertIn("--tls-key", r.stderr)
        self.assertIn("chmod 600", r.stderr)
        os.chmod(key, 0o600)
        r = self.coordinator(*http, "--tls-cert", os.path.join(self.f.dir, "missing.crt"),
                             "--tls-key", key)
        self.assertEqual(r.returncode, 2, r)
        self.assertIn("--tls-cert: cannot read", r.stderr)
        garbage = os.path.join(self.f.dir, "garbage.crt")
        with open(garbage, "w") as g:
            g.write("not a certificate\n")
        r = self.coordinator(*http, "--tls-cert", garbage, "--tls-key", key)
        self.assertEqual(r.returncode, 2, r)
        self.assertIn("--tls-cert: ", r.stderr)
        self.assertIn("holds no PEM certificate", r.stderr)
        os.chmod(garbage, 0o600)
        r = self.coordinator(*http, "--tls-cert", cert, "--tls-key", garbage)
        self.assertEqual(r.returncode, 2, r)
        self.assertIn("--tls-key: ", r.stderr)
        self.assertIn("no unencrypted PEM private key", r.stderr)
        # Another certificate's key: libwebsockets would only say that its context failed.
        other = os.path.join(self.f.dir, "other")
        os.mkdir(other)
        _, other_key = make_cert(other)
        r = self.coordinator(*http, "--tls-cert", cert, "--tls-key", other_key)
        self.assertEqual(r.returncode, 2, r)
        self.assertIn("is not the key of the certificate", r.stderr)
        self.assertFalse(os.path.exists(self.f.db), "a refused option may make no store")

    def test_the_cli_refuses_to_send_the_token_over_http_off_loopback(self):
        # 192.0.2.1 (TEST-NET-1) answers nothing: a refusal that returns at once sent nothing.
        r = cli("--coordinator", "http://192.0.2.1:8080", "--token-file", self.token, "agents")
        self.assertEqual(r.returncode, 2, r)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        for needle in ("--coordinator", "in clear", "https://", "--insecure-http"):
            self.assertIn(needle, r.stderr)
        env = cli_env()
        env["SOCKMATRIX_COORDINATOR"] = "http://lab.example:8080"
        r = subprocess.run([CLI, "--token-file", self.token, "runs"], capture_output=True,
                           text=True, timeout=60, stdin=subprocess.DEVNULL, env=env)
        self.assertEqual(r.returncode, 2, r)
        self.assertIn("SOCKMATRIX_COORDINATOR", r.stderr)


if __name__ == "__main__":
    unittest.main()
