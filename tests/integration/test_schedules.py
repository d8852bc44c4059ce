"""Recurring runs with the real binaries on a loopback fleet: a schedule every 10 s of a tiny
stream spec starts runs linked to it; after a SIGTERM and a restart on the same store the
schedule is still listed and fires again, a paused one stays paused and fires nothing, a deleted
one fires no more. Every wait is bounded; the whole file takes well under 90 s."""
import signal
import time
import unittest
import urllib.error
import urllib.request
import json

from smtest import Fleet, wait_for

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
        paused = self.make("paused")
        deleted = self.make("deleted")
        self.assertEqual(self.f.post(f"/api/schedules/{paused}/pause", {})[0], 200)
        self.assertEqual(self.delete(f"/api/schedules/{deleted}")[0], 200)
        self.assertEqual(self.delete(f"/api/schedules/{deleted}")[0], 404)

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


if __name__ == "__main__":
    unittest.main()
