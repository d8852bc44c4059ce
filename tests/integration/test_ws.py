"""The dashboard's side of the coordinator: static files from --web-dir and the live events of
/ws, with the real coordinator and agents: a snapshot on connect, run and job events as a run
goes, a bad message dropped and counted, files outside the folder refused."""
import json
import os
import shutil
import socket
import tempfile
import time
import unittest
import urllib.error
import urllib.request

from smtest import Fleet, WsClient


class WsTest(unittest.TestCase):
    def setUp(self):
        self.web = tempfile.mkdtemp(prefix="sm-web-")
        self.addCleanup(shutil.rmtree, self.web, True)
        with open(os.path.join(self.web, "index.html"), "w") as f:
            f.write("<!doctype html><title>sockmatrix</title>")
        with open(os.path.join(self.web, "app.js"), "w") as f:
            f.write("export const x = 1;\n")
        self.f = Fleet(n=2, hold_ms=1000, lab=False)  # HTTP and /ws on loopback either way
        self.f.extra_args = ["--web-dir", self.web]
        self.addCleanup(self.f.stop)
        self.f.start()

    def fetch(self, path):
        try:
            with urllib.request.urlopen(self.f.url + path, timeout=10) as r:
                return r.status, r.headers.get("Content-Type"), r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers.get("Content-Type"), e.read()

    def test_the_dashboard_files_are_served_and_nothing_outside_them(self):
        self.assertEqual(self.fetch("/"), (200, "text/html; charset=utf-8",
                                          b"<!doctype html><title>sockmatrix</title>"))
        self.assertEqual(self.fetch("/app.js")[:2], (200, "text/javascript; charset=utf-8"))
        for bad in ("/../../etc/passwd", "/.hidden", "/nope.html", "/a//b", "/%2e%2e/x"):
            self.assertEqual(self.fetch(bad)[0], 404, bad)
        self.assertEqual(self.fetch("/api/agents")[0], 200)  # the API is still the API

    def events_until(self, ws, done, deadline_s=120):
        seen = []
        deadline = time.monotonic() + deadline_s
        while time.monotonic() < deadline:
            ev = ws.recv_json()
            seen.append(ev)
            if done(ev, seen):
                return seen
        raise AssertionError(f"no end in {deadline_s} s; saw {[e['type'] for e in seen]}")

    def test_a_browser_gets_a_snapshot_then_the_run_and_its_jobs_as_they_go(self):
        f = self.f
        ws = WsClient(int(f.url.rsplit(":", 1)[1]))
        self.addCleanup(ws.close)
        self.assertIn("101", ws.status)
        snap = ws.recv_json()
        self.assertEqual(snap["type"], "snapshot")
        self.assertEqual(sorted(a["name"] for a in snap["agents"]), ["h1", "h2"])
        self.assertEqual(snap["runs"], [])
        # "remeasure": 0: its 8 jobs are counted, disturbed or not.
        status, resp = f.post("/api/runs", {"name": "w", "hosts": "all", "repetitions": 2,
                                            "remeasure": 0, "warmup": 0, "tests": [
                                                {"workload": "connect", "scope": "local",
                                                 "transport": ["tcp", "unix"], "count": 50}]})
        self.assertEqual(status, 201, resp)
        rid = resp["run"]
        seen = self.events_until(ws, lambda ev, s: ev["type"] == "run" and
                                 ev["run"]["id"] == rid and ev["run"]["state"] != "running")
        runs = [e["run"] for e in seen if e["type"] == "run" and e["run"]["id"] == rid]
        self.assertEqual(runs[-1]["state"], "done")
        self.assertEqual(runs[-1]["progress"], {"done": 8, "failed": 0, "total": 8})
        done = {e["job"]["id"] for e in seen if e["type"] == "job" and e["job"]["state"] == "done"}
        self.assertEqual(len(done), 8)  # every job's end was told, each once
        self.assertTrue(all(e["job"]["run"] == rid for e in seen if e["type"] == "job"))
        # Each finished job says its headline figure, as the table's column shows it.
        sums = [e["job"]["summary"] for e in seen
                if e["type"] == "job" and e["job"]["state"] == "done"]
        self.assertEqual(len(sums), 8)
        for s in sums:
            self.assertEqual((s["metric"], s["unit"]), ("connects_per_s", "1/s"))
            self.assertGreater(s["value"], 0)
        # A reloaded page starts from a snapshot that already has the finished run.
        again = WsClient(int(f.url.rsplit(":", 1)[1]))
        self.addCleanup(again.close)
        snap = again.recv_json()
        self.assertEqual([(r["id"], r["state"]) for r in snap["runs"]], [(rid, "done")])

    def test_a_run_over_between_two_looks_still_tells_every_job(self):
        f = self.f
        ws = WsClient(int(f.url.rsplit(":", 1)[1]))
        self.addCleanup(ws.close)
        self.assertEqual(ws.recv_json()["type"], "snapshot")
        # "remeasure": 0: its 2 jobs are counted, disturbed or not.
        status, resp = f.post("/api/runs", {"name": "short", "hosts": "all", "repetitions": 1,
                                            "remeasure": 0, "warmup": 0, "tests": [
                                                {"workload": "connect", "scope": "local",
                                                 "transport": "unix", "count": 1}]})
        self.assertEqual(status, 201, resp)
        rid = resp["run"]
        seen = self.events_until(ws, lambda ev, s: ev["type"] == "run" and
                                 ev["run"]["id"] == rid and ev["run"]["state"] != "running")
        done = {e["job"]["id"] for e in seen if e["type"] == "job" and e["job"]["state"] == "done"}
        self.assertEqual(len(done), 2)

    def test_bad_messages_are_dropped_and_counted_and_a_ping_is_answered(self):
        ws = WsClient(int(self.f.url.rsplit(":", 1)[1]))
        self.addCleanup(ws.close)
        self.assertEqual(ws.recv_json()["type"], "snapshot")
        ws.send("not json")
        ws.send('{"type":"launch","preset":"full"}')
        ws.send('{"type":"ping","pad":"' + "x" * 5000 + '"}')
        ws.send('{"type":"ping"}')
        self.assertEqual(ws.recv_json(), {"type": "pong"})
        health = self.f.get("/healthz")["counters"]
        self.assertEqual(health["ws_rejected"], 3)
        self.assertEqual(health["ws_clients"], 1)
        self.assertEqual(self.f.get("/api/runs")["runs"], [])  # nothing a message could start

    def upgrade(self, protocol_header):
        """A raw upgrade of /ws with the given Sec-WebSocket-Protocol line (or none); returns the
        status line and the body the coordinator answered with."""
        port = int(self.f.url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                      f"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                      f"Sec-WebSocket-Version: 13\r\n{protocol_header}\r\n".encode())
            buf = b""
            while b"\r\n\r\n" not in buf:
                chunk = s.recv(4096)
                if not chunk:
                    break
                buf += chunk
            head, _, body = buf.partition(b"\r\n\r\n")
            lines = head.decode().split("\r\n")
            length = [int(h.split(":", 1)[1]) for h in lines if h.lower().startswith("content-length:")]
            while length and len(body) < length[0]:
                chunk = s.recv(4096)
                if not chunk:
                    break
                body += chunk
            return lines[0], body

    def test_ws_without_the_sm_events_subprotocol_is_refused_with_400_naming_it(self):
        for header in ("", "Sec-WebSocket-Protocol: chat\r\n"):
            status, body = self.upgrade(header)
            self.assertEqual(status.split()[1], "400", (header, status))
            self.assertIn("sm-events", json.loads(body)["error"], header)
        # sm-events anywhere in the list is enough, and the client then gets its snapshot.
        status, _ = self.upgrade("Sec-WebSocket-Protocol: chat, sm-events\r\n")
        self.assertEqual(status.split()[1], "101", status)
        ws = WsClient(int(self.f.url.rsplit(":", 1)[1]))
        self.addCleanup(ws.close)
        self.assertEqual(ws.recv_json()["type"], "snapshot")


if __name__ == "__main__":
    unittest.main()
