"""Webhook secrets and destinations with the real binaries on a loopback fleet (issue 27).

A receiver on 127.0.0.1 (allowed with --webhook-allow loopback) gets the ping a new schedule's
webhook is sent, and checks it with the receiver docs/webhooks.md shows (its Python block is
run here, so the documented check is the tested one) holding only the secret the 201 answered;
that secret is no token: POST /api/runs with it is refused. A delivery replayed 5 minutes later
fails the documented check. A rotation answers a new secret once, which signs the deliveries
from then on. With the default policy, webhooks to 127.0.0.1, 169.254.169.254 and 10.0.0.1 are
refused at POST time naming the option, and one to a name that resolves to 127.0.0.1
(localhost) delivers nothing and says why, on the schedule and in the log. Every wait is
bounded."""
import http.server
import json
import os
import re
import subprocess
import threading
import unittest
import urllib.error
import urllib.request

from smtest import BIN_DIR, Fleet, wait_for

CLI = os.path.join(BIN_DIR, "sockmatrix")
DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "webhooks.md")
TOKEN = "webhook-secret-test-token-0123456789"
TINY = {"name": "tiny", "hosts": "all", "repetitions": 1, "warmup": 0,
        "tests": [{"workload": "stream", "scope": "local", "transport": "tcp",
                   "msg_size": 1000, "count": 50}]}


def documented_receiver():
    """from_coordinator as docs/webhooks.md shows it under "Checking the signature"."""
    with open(DOC) as f:
        text = f.read()
    section = text.split("## Checking the signature", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    scope = {}
    exec(compile(code, "docs/webhooks.md", "exec"), scope)  # the docs' own code, as printed
    return scope["from_coordinator"]


class Receiver(http.server.ThreadingHTTPServer):
    """Keeps every POST (headers, raw body) and answers 200."""

    def __init__(self):
        self.got = []
        self.lock = threading.Lock()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(h):
                body = h.rfile.read(int(h.headers.get("Content-Length", "0")))
                with self.lock:
                    self.got.append({"headers": {k.lower(): v for k, v in h.headers.items()},
                                     "body": body})
                h.send_response(200)
                h.send_header("Content-Length", "0")
                h.end_headers()

            def log_message(h, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    def requests(self):
        with self.lock:
            return list(self.got)

    def close(self):
        self.shutdown()
        self.server_close()


class WebhookSecretTest(unittest.TestCase):
    def start(self, *extra):
        self.rx = Receiver()
        self.addCleanup(self.rx.close)
        self.f = Fleet(n=1, hold_ms=1000, lab=False)
        self.addCleanup(self.f.stop)
        self.token_file = os.path.join(self.f.dir, "token")
        with open(self.token_file, "w") as t:
            t.write(TOKEN + "\n")
        os.chmod(self.token_file, 0o600)
        self.f.extra_args = ["--token-file", self.token_file, *extra]
        self.f.headers = {"Authorization": f"Bearer {TOKEN}"}
        self.f.start()
        self.url = f"http://127.0.0.1:{self.rx.server_address[1]}/hook"

    def post_as(self, path, body, bearer):
        req = urllib.request.Request(self.f.url + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json",
                                              "Authorization": f"Bearer {bearer}"})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code

    def cli(self, *args):
        return subprocess.run([CLI, "--coordinator", self.f.url, "--token-file", self.token_file,
                               *args], capture_output=True, text=True, timeout=30)

    def test_a_receiver_checks_deliveries_with_its_secret_which_starts_nothing(self):
        self.start("--webhook-allow", "loopback")
        check = documented_receiver()
        status, made = self.f.post("/api/schedules", {"name": "watch", "spec": TINY,
                                                      "every": "1h", "webhook": self.url})
        self.assertEqual(status, 201, made)
        secret = made["webhook_secret"]
        self.assertRegex(secret, r"^whsec_[0-9a-f]{64}$")
        sid = made["id"]
        wait_for("the new webhook's ping", lambda: len(self.rx.requests()) >= 1, 20)
        got = self.rx.requests()[0]
        h = got["headers"]
        self.assertEqual(h["x-sockmatrix-event"], "ping")
        self.assertEqual(json.loads(got["body"]),
                         {"event": "ping", "schedule": {"id": sid, "name": "watch"}})
        wait_for("the ping's status", lambda: self.f.get(f"/api/schedules/{sid}")
                 ["webhook_status"] is not None, 10)
        self.assertRegex(self.f.get(f"/api/schedules/{sid}")["webhook_status"]["text"],
                         r"^delivered ping as delivery \d+$")
        sig = h["x-sockmatrix-signature"]
        self.assertRegex(sig, r"^t=\d+,v1=[0-9a-f]{64}$")
        self.assertTrue(check(secret, got["body"], sig))
        # The token does not verify it, nor a changed body.
        self.assertFalse(check(TOKEN, got["body"], sig))
        self.assertFalse(check(secret, got["body"] + b" ", sig))
        # Replayed 5 minutes and a second after it was signed: refused.
        t = int(sig.split(",")[0][2:])
        self.assertTrue(check(secret, got["body"], sig, now=t + 299))
        self.assertFalse(check(secret, got["body"], sig, now=t + 301))

        # The secret is no token: it starts no run and reads nothing that needs the token.
        self.assertIn(self.post_as("/api/runs", TINY, secret), (401, 403))
        self.assertIn(self.post_as(f"/api/schedules/{sid}/webhook-secret", {}, secret),
                      (401, 403))
        self.assertEqual(self.f.get("/api/runs")["runs"], [])
        # Never shown again by a read.
        for path in ("/api/schedules", f"/api/schedules/{sid}"):
            req = urllib.request.Request(self.f.url + path, headers=self.f.headers)
            with urllib.request.urlopen(req, timeout=10) as r:
                self.assertNotIn("whsec_", r.read().decode())

        # A rotation answers a new secret once; the old one no longer signs.
        status, rot = self.f.post(f"/api/schedules/{sid}/webhook-secret", {})
        self.assertEqual(status, 200, rot)
        self.assertNotEqual(rot["webhook_secret"], secret)
        out = self.cli("schedule", "rotate-secret", sid)
        self.assertEqual(out.returncode, 0, out.stderr)
        newest = re.search(r"webhook secret: (whsec_[0-9a-f]{64})", out.stdout).group(1)
        self.assertNotIn(newest, (secret, rot["webhook_secret"]))
        # The CLI prints a new schedule's secret once, and its ping checks with it.
        out = self.cli("schedule", "add", "--name", "cli", "--preset", "seed-tcp-unix",
                       "--every", "1h", "--webhook", self.url + "?cli=1")
        self.assertEqual(out.returncode, 0, out.stderr)
        cli_secret = re.search(r"webhook secret: (whsec_[0-9a-f]{64})", out.stdout).group(1)
        self.assertIn("not shown again", out.stdout)
        wait_for("the CLI schedule's ping", lambda: len(self.rx.requests()) >= 2, 20)
        ping = self.rx.requests()[1]
        self.assertTrue(check(cli_secret, ping["body"], ping["headers"]["x-sockmatrix-signature"]))
        self.assertFalse(check(secret, ping["body"], ping["headers"]["x-sockmatrix-signature"]))

    def test_the_default_policy_refuses_inner_destinations_and_says_why(self):
        self.start()
        for url, cls in ((self.url, "loopback"),
                         ("http://169.254.169.254/latest/meta-data/", "link-local"),
                         ("http://10.0.0.1/hook", "private"),
                         ("http://[::1]:9/hook", "loopback")):
            status, body = self.f.post("/api/schedules", {"name": "in", "spec": TINY,
                                                          "every": "1h", "webhook": url})
            self.assertEqual(status, 400, (url, body))
            self.assertEqual(body["field"], "webhook")
            self.assertIn(f"(--webhook-allow {cls} allows it)", body["error"])
        self.assertEqual(self.f.get("/api/schedules")["schedules"], [])
        # A name is checked on what it resolves to, when the delivery connects.
        port = self.rx.server_address[1]
        status, made = self.f.post("/api/schedules", {
            "name": "by-name", "spec": TINY, "every": "1h",
            "webhook": f"http://localhost:{port}/hook"})
        self.assertEqual(status, 201, made)
        wait_for("the refusal in the log",
                 lambda: "SM-WEBHOOK-REFUSED" in self.f.log("coordinator"), 20)
        line = next(x for x in self.f.log("coordinator").splitlines()
                    if "SM-WEBHOOK-REFUSED" in x)
        self.assertIn(f"to http://localhost:{port}/hook: not sent: ", line)
        self.assertRegex(line, r"(127\.0\.0\.1|::1) is a loopback address")
        self.assertIn("(--webhook-allow loopback allows it)", line)
        self.assertEqual(self.rx.requests(), [])
        # The schedule says it too.
        status = self.f.get(f"/api/schedules/{made['id']}")["webhook_status"]
        self.assertRegex(status["text"], r"^refused ping delivery \d+: (127\.0\.0\.1|::1) is a "
                                         r"loopback address")
        self.assertIn("(--webhook-allow loopback allows it)", status["text"])


if __name__ == "__main__":
    unittest.main()
