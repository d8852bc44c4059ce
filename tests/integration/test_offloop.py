"""Reports built off the loop (issue 26 item 3): a coordinator over 200 ended runs (one real
run, cloned in the store) is asked two cold trends and the grid, each built by the report
worker, and /metrics scraped; meanwhile /healthz answers within the hold + 100 ms, and a job
posted meanwhile is dispatched, run and stored before the last report is answered. A loop
that built the reports itself would answer nothing until they were done."""
import json
import signal
import sqlite3
import threading
import time
import unittest
import urllib.parse
import urllib.request

from smtest import Fleet, stream_job, wait_for

RUNS = 200
HOLD_MS = 1000
SPEC = {"name": "offloop", "hosts": "all", "repetitions": 3, "warmup": 0,
        "tests": [{"workload": "stream", "scope": "local", "transport": "tcp", "msg_size": s,
                   "count": 20} for s in (1000, 1500, 2000, 3000, 4000, 6000, 8000, 12000)]}


def clone_run(db, rid, times):
    """Copies run rid (its cells, jobs, results and fingerprints) `times` times, each copy
    finished a millisecond after the one before."""
    con = sqlite3.connect(db, timeout=10)
    cols = {t: [r[1] for r in con.execute(f"PRAGMA table_info({t})")]
            for t in ("runs", "cells", "jobs", "results", "pair_results", "run_fingerprints")}

    def copy(table, where, args, sets):
        names = [c for c in cols[table] if c != "id"]
        picks = [sets.get(c, c) for c in names]
        con.execute(f"INSERT INTO {table}({','.join(names)}) SELECT {','.join(picks)} "
                    f"FROM {table} WHERE {where}", args)

    jobs = [r[0] for r in con.execute("SELECT id FROM jobs WHERE run_id = ? ORDER BY id", (rid,))]
    with con:
        for k in range(1, times + 1):
            copy("runs", "id = ?", (rid,), {"finished_ms": f"finished_ms + {k}"})
            new = con.execute("SELECT last_insert_rowid()").fetchone()[0]
            copy("cells", "run_id = ?", (rid,), {"run_id": str(new)})
            copy("run_fingerprints", "run_id = ?", (rid,), {"run_id": str(new)})
            for j in jobs:
                copy("jobs", "id = ?", (j,), {"run_id": str(new)})
                nj = con.execute("SELECT last_insert_rowid()").fetchone()[0]
                copy("results", "job_id = ?", (j,), {"job_id": str(nj)})
                copy("pair_results", "job_id = ?", (j,), {"job_id": str(nj)})
    con.close()


class OffLoopTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.f = Fleet(n=2, hold_ms=HOLD_MS, lab=False)
        cls.addClassCleanup(cls.f.stop)
        cls.f.start()
        cls.run0 = cls.f.run_done(SPEC)
        cls.test = cls.f.get(f"/api/runs/{cls.run0['id']}/table?format=json")["columns"][0]["label"]
        # Cloned with the coordinator down, then up again over them: every report is cold.
        cls.f.kill(cls.f.coord, signal.SIGTERM)
        clone_run(cls.f.db, int(cls.run0["id"]), RUNS - 1)
        cls.f.start_coordinator()
        wait_for("every agent online", lambda: cls.f.online() >= set(cls.f.hosts), 20)

    def timed_get(self, path):
        """(status, seconds, body) of a GET."""
        t0 = time.monotonic()
        try:
            with urllib.request.urlopen(self.f.url + path, timeout=60) as r:
                status, body = r.status, r.read()
        except urllib.error.HTTPError as e:
            status, body = e.code, e.read()
        return status, time.monotonic() - t0, body

    def test_the_loop_answers_while_the_worker_builds_reports(self):
        q = lambda **kw: urllib.parse.urlencode({"host": "h1", "test": self.test, **kw},
                                                quote_via=urllib.parse.quote)
        paths = [f"/api/trends?{q(limit=RUNS)}", "/api/grid",
                 f"/api/trends?{q(limit=RUNS, disturbed='include')}"]
        done = {}

        def fetch(p):
            st, _, body = self.timed_get(p)
            done[p] = (st, time.monotonic(), body)

        threads = [threading.Thread(target=fetch, args=(p,)) for p in paths]
        t_start = time.monotonic()
        for t in threads:
            t.start()
        time.sleep(0.05)  # the reports' requests are in
        # A scrape meanwhile: the worker builds its cells (ahead of the queue, after the report
        # it is on); the loop does not wait for it.
        scrape = threading.Thread(target=fetch, args=("/metrics",))
        scrape.start()
        threads.append(scrape)
        jid = self.f.submit([stream_job("h2", count=20)])[0]
        posted = time.monotonic()
        health, job_done = [], None
        while any(t.is_alive() for t in threads) and time.monotonic() - t_start < 50:
            st, secs, _ = self.timed_get("/healthz")
            health.append(("/healthz", st, secs, time.monotonic()))
            if job_done is None and self.f.job(jid)["state"] == "done":
                job_done = time.monotonic()
        for t in threads:
            t.join(60)
        last = max(at for p, (_, at, _) in done.items() if p in paths)
        for p in paths + ["/metrics"]:
            st, _, body = done[p]
            self.assertEqual(st, 200, f"{p}: {body[:300]}")
        self.assertIn('sockmatrix_cell_median{run_name="offloop"', done["/metrics"][2].decode())
        trend = json.loads(done[paths[0]][2])
        self.assertEqual(len(trend["points"]), RUNS, "a point per run")
        # The reports took long enough for the loop to be asked meanwhile, and it answered.
        during = [h for h in health if h[3] < last]
        # Each GET takes a few ms when the loop is free: a blocked loop answers one or two.
        self.assertGreaterEqual(len(during), 4,
                                f"{len(during)} answers while the reports took "
                                f"{last - t_start:.3f} s")
        for p, st, secs, _ in during:
            self.assertEqual(st, 200, p)
            self.assertLess(secs, HOLD_MS / 1000 + 0.1, f"{p} waited {secs:.3f} s")
        self.assertIsNotNone(job_done, "the job posted meanwhile did not finish before the reports")
        self.assertLess(job_done, last, "the job posted meanwhile waited for the reports")
        print(f"reports: {last - t_start:.3f} s (each done at "
              f"{', '.join(f'{done[p][1] - t_start:.3f}' for p in paths)}); "
              f"/metrics at {done['/metrics'][1] - t_start:.3f}; "
              f"{len(during)} answers meanwhile, slowest "
              f"{max(s for _, _, s, _ in during) * 1000:.1f} ms; job done "
              f"{job_done - posted:.3f} s after its POST")

    def test_then_a_trend_asked_again_comes_from_the_cache(self):
        # After the test above (unittest's order): its h1 tables serve this h2 trend too.
        q = urllib.parse.urlencode({"host": "h2", "test": self.test, "limit": RUNS},
                                   quote_via=urllib.parse.quote)
        st1, _, b1 = self.timed_get(f"/api/trends?{q}")
        st2, _, b2 = self.timed_get(f"/api/trends?{q}")
        self.assertEqual((st1, st2), (200, 200))
        self.assertEqual(json.loads(b1), json.loads(b2))
        self.assertEqual(len(json.loads(b1)["points"]), RUNS)
        # /metrics tells the latest run's cells: built by the worker, fresh after the reports.
        st, _, body = self.timed_get("/metrics")
        self.assertEqual(st, 200)
        self.assertIn('sockmatrix_cell_median{run_name="offloop",host="h1"', body.decode())


if __name__ == "__main__":
    unittest.main()
