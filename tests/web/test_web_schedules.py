"""Browser test of the Schedules view: on a loopback fleet whose coordinator has a dashboard
token, Debian's Chromium (drive.mjs) adds a schedule through the form (a bad cron first: the
error is at the cron field; then with a webhook, whose secret the page shows once), reads its
row with the next firing, waits for it to fire, finds
its run's page naming the schedule, pauses it (the API then says paused) and deletes it after
the confirmation (gone from the list after a reload). Every write carried the token."""
import datetime
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from smtest import free_port  # noqa: E402
from test_web import WebCase, setUpModule, web_fleet  # noqa: E402,F401

# A run of a few seconds: 2 variants x 2 repetitions a host.
SPEC = {"name": "sched-small", "hosts": "all", "repetitions": 2, "warmup": 0,
        "tests": [{"workload": "stream", "scope": "local", "transport": ["tcp", "unix"],
                   "msg_size": 1000, "count": 200}]}


def utc(ms):
    t = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    return t.strftime("%Y-%m-%d %H:%M:%S UTC")


class SchedulesWebTest(WebCase):
    def test_add_fire_pause_and_delete_a_schedule_from_the_page(self):
        f = web_fleet(n=2)
        self.addCleanup(f.stop)
        token = "dashboard-" + os.urandom(12).hex()
        path = os.path.join(f.dir, "token")
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as fh:
            fh.write(token + "\n")
        # Its webhook: a closed port on loopback, allowed, so that nothing leaves the machine
        # (a delivery there fails, which is not what this test looks at).
        f.extra_args += ["--token-file", path, "--webhook-allow", "loopback"]
        f.start()

        res = self.drive(f, "schedules", timeout=240, name="every-ten", spec=SPEC,
                         bad_cron="0 24 * * *", every="10s", token=token, fire_ms=90000,
                         webhook=f"http://127.0.0.1:{free_port()}/hook")
        sid = res["listed"]["id"]
        bearer = f"Bearer {token}"

        # The bad cron: refused, its message at the cron field, nothing made.
        self.assertEqual(len(res["cron_error"]), 1, res["cron_error"])
        err = res["cron_error"][0]
        self.assertEqual((err["box"], err["field"]), ("sched-cron", "cron"), err)
        self.assertIn('"24"', err["text"])
        self.assertEqual(res["cron_invalid"], "true")
        self.assertEqual(res["errors_after"], [])

        # The list: the schedule as the API has it, its next firing in UTC.
        row = res["listed"]
        self.assertEqual(row["when"], "every 10 s")
        self.assertEqual(row["paused"], "no")
        self.assertEqual(row["next_ms"], res["api_listed"]["next_ms"])
        self.assertEqual(row["next"], utc(row["next_ms"]))
        self.assertEqual(res["api_listed"]["every_s"], 10)
        self.assertEqual(res["api_listed"]["name"], "every-ten")
        # The webhook's secret, shown once under the form, and in no answer since.
        self.assertRegex(res["secret_shown"] or "", r"^whsec_[0-9a-f]{64}$")
        self.assertNotIn("whsec_", json.dumps(res["api_listed"]))

        # It fired: the run is the schedule's, and its row lists it.
        rid = res["fired"]["last_run"]
        self.assertEqual(f.get(f"/api/runs/{rid}")["schedule"], sid)
        self.assertIn(rid, res["fired"]["recent"])
        self.assertGreaterEqual(res["fired"]["runs"], 1)
        self.assertEqual(res["run_page"]["hash"], f"#/run/{rid}")
        self.assertEqual(res["run_page"]["text"], "started by schedule every-ten")
        self.assertEqual(res["run_page"]["href"], f"#/schedules/{sid}")
        self.assertEqual(res["followed"]["hash"], f"#/schedules/{sid}")
        self.assertTrue(res["followed"]["current"])
        self.assertEqual(res["history_link"], {"text": "schedule every-ten",
                                               "href": f"#/schedules/{sid}"})

        # Paused in the page, paused in the API; deleted only once confirmed, then gone.
        self.assertEqual(res["paused"]["paused"], "paused")
        self.assertIs(res["api_paused"], True)
        self.assertIn("every-ten", res["confirm"])
        self.assertIn(sid, res["listed_before_confirm"])
        self.assertIsNone(res["after_reload"])
        self.assertNotIn(sid, res["listed_after"])
        self.assertEqual(f.get_status(f"/api/schedules/{sid}")[0], 404)

        # Every write the page made carried the token; the bad cron was the one refused.
        self.assertEqual(res["writes"], [
            {"method": "POST", "path": "/api/schedules", "auth": bearer, "status": 400},
            {"method": "POST", "path": "/api/schedules", "auth": bearer, "status": 201},
            {"method": "POST", "path": f"/api/schedules/{sid}/pause", "auth": bearer,
             "status": 200},
            {"method": "DELETE", "path": f"/api/schedules/{sid}", "auth": bearer,
             "status": 200},
        ])


if __name__ == "__main__":
    import unittest
    unittest.main()
