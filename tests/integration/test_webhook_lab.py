"""A schedule's webhook end to end on the lab (network namespaces, root): a schedule of the 2010
TCP/UDS test over three hosts, h2's TCP 8 times slower than it measured unshaped, fires a run;
when the run ends the coordinator posts the new flag to a receiver this test starts on
127.0.0.1. The receiver refuses the first attempt (500), so the delivery is retried with the
same delivery id; the body names the run, the schedule and exactly the hosts the run's
anomalies flag; the signature ("t=T,v1=HEX", HMAC-SHA256 of "T.body") is keyed with the
schedule's own secret, answered once when the schedule was made, checked here with Python's
hmac, independent of the coordinator's code. The receiver is on loopback, which the
coordinator refuses unless --webhook-allow loopback says so. Then an experiment on the flag
(the agents may change their qdisc) ends, and the same webhook is told its proven cause:
h2's tbf, with its share of the gap and the run it explains. The real coordinator, agents,
store, delivery thread and HTTP."""
import hashlib
import hmac
import http.server
import json
import os
import threading
import time
import unittest

from smtest import Fleet, can_lab, unless_root, unless_stolen, wait_for

TOKEN = "webhook-lab-token-0123456789abcdef"
# The 2010 test, one job at a time, 10 repetitions as test_analysis_lab.py says why.
SEED = {"name": "seed", "hosts": "all", "repetitions": 10, "warmup": 1, "parallel": False,
        "tests": [{"workload": "stream", "scope": "local", "transport": ["tcp", "unix"],
                   "framing": "lines", "msg_size": 128, "count": 8192}]}


class Receiver(http.server.ThreadingHTTPServer):
    """Keeps every POST (headers, raw body); answers 500 to the first, 200 after."""

    def __init__(self):
        self.got = []
        self.lock = threading.Lock()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(h):
                n = int(h.headers.get("Content-Length", "0"))
                body = h.rfile.read(n)
                with self.lock:
                    self.got.append({"path": h.path, "headers": dict(h.headers), "body": body})
                    first = len(self.got) == 1
                h.send_response(500 if first else 200)
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

    def forget(self):
        """Forgets what came so far: the next POST is answered 500 again."""
        with self.lock:
            self.got = []

    def close(self):
        self.shutdown()
        self.server_close()


@unless_root(can_lab(), "needs root for the lab's network namespaces")
class WebhookLabTest(unittest.TestCase):
    @unless_stolen
    def test_a_new_flag_reaches_the_webhook_signed_and_retried(self):
        rx = Receiver()
        self.addCleanup(rx.close)
        f = Fleet(n=3, hold_ms=1000, lab_args=("--slow-tcp", "h2:x8"))
        self.addCleanup(f.stop)
        token_file = os.path.join(f.dir, "token")
        with open(token_file, "w") as t:
            t.write(TOKEN + "\n")
        os.chmod(token_file, 0o600)
        f.extra_args = ["--token-file", token_file, "--webhook-allow", "loopback"]
        f.headers = {"Authorization": f"Bearer {TOKEN}"}
        f.agent_args = ["--affinity", "0,1", "--allow-experiment", "qdisc"]
        f.start()
        url = f"http://127.0.0.1:{rx.server_address[1]}/hook?lab=1"
        status, made = f.post("/api/schedules", {"name": "watch", "spec": SEED,
                                                 "every": "10s", "webhook": url})
        self.assertEqual(status, 201, made)
        sid = made["id"]
        secret = made["webhook_secret"]
        # The new webhook's ping comes first: refused once (500), then delivered. Forgotten
        # then, so that the run's delivery meets the 500 first too.
        wait_for("the ping delivered", lambda: len(rx.requests()) >= 2, 30)
        self.assertEqual([g["headers"].get("X-Sockmatrix-Event") for g in rx.requests()],
                         ["ping", "ping"])
        rx.forget()

        def first_run():
            runs = f.get(f"/api/schedules/{sid}")["recent_runs"]
            return runs[-1]["id"] if runs else None
        rid = wait_for("the schedule's first run", first_run, 60, interval=0.5)
        # One run is enough: pause, so that no second run measures while this one does.
        self.assertEqual(f.post(f"/api/schedules/{sid}/pause", {})[0], 200)
        self.assertEqual(f.wait_run(rid, 600)["state"], "done")
        flagged = {a["host"] for a in f.get(f"/api/runs/{rid}/anomalies")["anomalies"]
                   if a["kind"] in ("fleet", "slow-host", "slow-link")}
        self.assertIn("h2", flagged, f"calibration {f.hosts['h2'].get('slow_tcp')}")
        # The first attempt is refused; the retry comes after the delivery's first wait (1 s).
        wait_for("the webhook delivered after a retry", lambda: len(rx.requests()) >= 2, 60)
        time.sleep(2)  # no third request: the 200 ended the delivery
        got = rx.requests()
        self.assertEqual(len(got), 2, [g["headers"] for g in got])
        first, second = got
        self.assertEqual(first["body"], second["body"])
        self.assertEqual(second["path"], "/hook?lab=1")
        h = {k.lower(): v for k, v in second["headers"].items()}
        h1 = {k.lower(): v for k, v in first["headers"].items()}
        self.assertEqual(h["x-sockmatrix-delivery"], h1["x-sockmatrix-delivery"])
        self.assertEqual(h["content-type"], "application/json")
        t, v1 = (p.split("=", 1)[1] for p in h["x-sockmatrix-signature"].split(","))
        want = hmac.new(secret.encode(), t.encode() + b"." + second["body"],
                        hashlib.sha256).hexdigest()
        self.assertTrue(hmac.compare_digest(v1, want))
        body = json.loads(second["body"])
        self.assertEqual(h["x-sockmatrix-event"], body["event"])
        self.assertIn(body["event"], ("flag", "regression"))
        self.assertEqual(body["schedule"], {"id": sid, "name": "watch"})
        self.assertEqual(body["run"]["id"], rid)
        self.assertIsNone(body["baseline_run"])  # its first run: no previous one
        self.assertEqual({x["host"] for x in body["flags"]}, flagged)
        self.assertTrue(all(x["text"].startswith(x["host"] + ":") for x in body["flags"]))
        # The schedule's events say which delivery carried it.
        events = f.get(f"/api/schedules/{sid}")["events"]
        notified = [e for e in events if e["kind"] == "notified"]
        self.assertEqual(len(notified), 1, events)
        self.assertIn(f"run {rid}: {body['event']} sent as delivery", notified[0]["detail"])

        # The flag's experiment ends: its cause reaches the same webhook, signed alike.
        rx.forget()
        status, xp = f.post(f"/api/runs/{rid}/experiments",
                            {"host": "h2", "test": "stream tcp lines 128 B x 8192"})
        self.assertEqual(status, 201, xp)
        xid = xp["run"]
        self.assertEqual(f.wait_run(xid, 600)["state"], "done")
        answer = f.get(f"/api/runs/{xid}/experiment")
        wait_for("the experiment told", lambda: len(rx.requests()) >= 2, 60)
        told = rx.requests()[-1]
        h = {k.lower(): v for k, v in told["headers"].items()}
        t, v1 = (p.split("=", 1)[1] for p in h["x-sockmatrix-signature"].split(","))
        want = hmac.new(secret.encode(), t.encode() + b"." + told["body"],
                        hashlib.sha256).hexdigest()
        self.assertTrue(hmac.compare_digest(v1, want))
        body = json.loads(told["body"])
        self.assertEqual(h["x-sockmatrix-event"], body["event"])
        self.assertEqual(body["schedule"], {"id": sid, "name": "watch"})
        self.assertEqual(body["run"]["id"], rid)  # the run it explains
        self.assertEqual(body["experiment"]["run"], xid)
        self.assertEqual(body["experiment"]["summary"], answer["summary"])
        self.assertEqual(body["experiment"]["cause"], answer["cause"])
        if answer["cause"] is None:
            self.assertEqual(body["event"], "experiment", answer["summary"])
        else:
            self.assertEqual(body["event"], "cause")
            self.assertEqual(body["experiment"]["cause"]["item"], "if.lo.qdisc", answer)
        time.sleep(2)  # told once
        self.assertEqual(len(rx.requests()), 2)
        events = f.get(f"/api/schedules/{sid}")["events"]
        self.assertTrue(any(e["kind"] == "notified" and e["detail"].startswith(f"run {xid}: ")
                            for e in events), events)


if __name__ == "__main__":
    unittest.main()
