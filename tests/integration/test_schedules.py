"""Recurring runs with the real binaries on a loopback fleet: a schedule every 10 s of a tiny
stream spec starts runs linked to it; after a SIGTERM and a restart on the same store the
schedule is still listed and fires again, a paused one stays paused and fires nothing, a deleted
one fires no more. The CLI makes, pauses, lists and deletes some of them. Every wait is bounded;
the whole file takes well under 90 s."""
import json
import os
import signal
import subprocess
import time
import unittest
import urllib.error
import urllib.request

from smtest import BIN_DIR, Fleet, wait_for

CLI = os.path.join(BIN_DIR, "sockmatrix")

TINY = {"name": "tiny", "hosts": "all", "repetitions": 1, "warmup": 0,
        "tests": [{"workload": "stream", "scope": "local", "transport": "tcp",
                   "msg_size": 1000, "count": 50}]}


class ScheduleTest(unittest.TestCase):
    def setUp(self):
        self.f = Fleet(n=2, hold_ms=1000, lab=False)
        self.addCleanup(self.f.stop)
        self.f.start()

    def delete(self, path):
        req = urllib.request.Request(self.f.url + path, method="DELETE")
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def cli(self, *args):
        return subprocess.run([CLI, "--coordinator", self.f.url, *args], capture_output=True,
                              text=True, timeout=30)

    def make(self, name):
        status, body = self.f.post("/api/schedules", {"name": name, "spec": TINY, "every": "10s"})
        self.assertEqual(status, 201, body)
        self.assertGreater(body["next_ms"], time.time() * 1000)
        return body["id"]

    def schedule(self, sid):
        return self.f.get(f"/api/schedules/{sid}")

    def runs_of(self, sid):
        return [r for r in self.f.get("/api/runs")["runs"] if r["schedule"] == sid]

    def test_a_schedule_fires_survives_a_restart_and_pause_and_delete_hold(self):
        fires = self.make("fires")
        # The CLI makes one and pauses it; the API makes one and the CLI deletes it.
        out = self.cli("schedule", "add", "--name", "paused", "--preset", "seed-tcp-unix",
                       "--every", "10s", "--hosts", "h1")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertRegex(out.stdout, r"^schedule (\d+): first run at \d{4}-\d\d-\d\dT")
        paused = out.stdout.split()[1].rstrip(":")
        self.assertEqual(self.schedule(paused)["hosts"], ["h1"])
        out = self.cli("schedule", "pause", paused)
        self.assertEqual((out.returncode, out.stdout), (0, f"schedule {paused}: paused\n"),
                         out.stderr)
        deleted = self.make("deleted")
        out = self.cli("schedule", "delete", deleted)
        self.assertEqual((out.returncode, out.stdout), (0, f"schedule {deleted}: deleted\n"),
                         out.stderr)
        self.assertEqual(self.delete(f"/api/schedules/{deleted}")[0], 404)
        out = self.cli("schedule", "resume", deleted)
        self.assertEqual(out.returncode, 1)
        self.assertIn(f"no schedule {deleted} (sockmatrix schedules lists them)", out.stderr)
        out = self.cli("schedule", "add", "--name", "x", "--preset", "nope", "--every", "1m")
        self.assertEqual(out.returncode, 1)
        self.assertIn("the presets are", out.stderr)

        # The first slot is 10 s away; its run ends within seconds.
        first = wait_for("the schedule's first run to end",
                         lambda: [r for r in self.runs_of(fires) if r["state"] == "done"], 30, 0.5)
        run = self.f.get(f"/api/runs/{first[0]['id']}")
        self.assertEqual(run["schedule"], fires)
        self.assertEqual({c["host"] for c in run["cells"]}, {"h1", "h2"})
        s = self.schedule(fires)
        self.assertGreaterEqual(s["runs"], 1)
        self.assertIn(first[0]["id"], [r["id"] for r in s["recent_runs"]])
        # Runs started by hand have no schedule.
        hand = self.f.start_run(TINY)
        self.assertIsNone(self.f.get(f"/api/runs/{hand}")["schedule"])
        self.f.wait_run(hand, 60)

        # A clean stop and a start on the same store.
        before = len(self.runs_of(fires))
        self.f.kill(self.f.coord, signal.SIGTERM)
        self.assertEqual(self.f.coord.returncode, 0, self.f.log("coordinator"))
        self.f.start_coordinator()
        listed = {s["id"]: s for s in self.f.get("/api/schedules")["schedules"]}
        self.assertEqual(set(listed), {fires, paused})
        self.assertFalse(listed[fires]["paused"])
        self.assertTrue(listed[paused]["paused"])
        self.assertEqual(self.f.get_status(f"/api/schedules/{deleted}")[0], 404)
        out = self.cli("schedules")
        self.assertEqual(out.returncode, 0, out.stderr)
        lines = out.stdout.splitlines()
        self.assertEqual(lines[0].split()[:3], ["ID", "NAME", "WHEN"])
        rows = {line.split()[1]: line.split() for line in lines[1:]}
        self.assertEqual(set(rows), {"fires", "paused"})
        self.assertEqual(rows["paused"][2:4], ["every", "10s"])
        self.assertEqual(rows["paused"][5], "yes")
        self.assertEqual(rows["fires"][5], "no")

        wait_for("a run after the restart",
                 lambda: len([r for r in self.runs_of(fires) if r["state"] != "running"]) > before,
                 40, 0.5)
        # Neither the paused nor the deleted one ever started a run, here or in the store.
        self.assertEqual(self.schedule(paused)["runs"], 0)
        self.assertEqual(self.runs_of(paused), [])
        self.assertEqual(self.f.query("SELECT count(*) FROM runs WHERE schedule_id IN (?, ?)",
                                      int(paused), int(deleted))[0][0], 0)
        self.assertEqual(self.f.query("SELECT deleted FROM schedules WHERE id = ?",
                                      int(deleted))[0][0], 1)

    def test_a_name_with_a_newline_logs_one_line(self):
        forged = "x\n2026-12-02T00:03:40.000Z error SM-KEY-FLEET forged\r\x1b[2K"
        status, body = self.f.post("/api/schedules",
                                   {"name": forged, "spec": TINY, "cron": "0 3 * * *"})
        self.assertEqual(status, 201, body)
        log = wait_for("the schedule's log line",
                       lambda: (lambda t: t if "SM-SCHEDULE-NEW" in t else None)(
                           self.f.log("coordinator")), 10, 0.1)
        lines = [ln for ln in log.splitlines() if "SM-KEY-FLEET" in ln]
        self.assertEqual(len(lines), 1, log)
        self.assertIn(" notice SM-SCHEDULE-NEW schedule ", lines[0])
        self.assertIn("(x\\n2026-12-02T00:03:40.000Z error SM-KEY-FLEET forged\\r\\x1b[2K)",
                      lines[0])
        self.assertNotIn("\r", log)
        self.assertNotIn("\x1b", log)

    def test_a_cron_that_fires_after_8_years_is_refused(self):
        # 1 March on a Sunday: from 2026-12 the next is in 2037. It was stored with next_ms -1
        # and fired at once.
        status, body = self.f.post("/api/schedules",
                                   {"name": "late", "spec": TINY, "cron": "0 0 */31 3 0"})
        self.assertEqual(status, 400, body)
        self.assertEqual(body["field"], "cron")
        self.assertIn("never fires within 8 years", body["error"])
        self.assertEqual(self.f.get("/api/schedules")["schedules"], [])
        self.assertEqual(self.f.get("/api/runs")["runs"], [])


if __name__ == "__main__":
    unittest.main()
