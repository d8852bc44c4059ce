"""--report-memory on the real coordinator: a run whose report would need more than the bound
answers 503 naming it (the table, the anomalies, a comparison) and changes nothing; with the
default bound the same report is served; a bound that is no number of MB stops the start.

The run is written into the store directly, with the coordinator stopped: 300 cells of one job
each, which a report estimates at about 3 MB (a cell and its share of the table are some 9 KB),
above 1 MB and far below the default 512 MB; a real run of 300 cells would take minutes here."""
import signal
import sqlite3
import subprocess
import unittest

from smtest import COORDINATOR, Fleet

CELLS = 300
RESULT = '{"ok":true,"metrics":{"bytes":2,"rtt_p50_us":20.5}}'


def add_run(db, name):
    """A done run of CELLS local rr cells on h0..h9 with one result each; its id."""
    con = sqlite3.connect(db, timeout=10)
    try:
        with con:
            cur = con.execute("INSERT INTO runs(name, spec_json, state, created_ms, total, done)"
                              " VALUES (?, '{}', 'done', 1000, ?, ?)", (name, CELLS, CELLS))
            run = cur.lastrowid
            for c in range(CELLS):
                host = f"h{c % 10}"
                params = '{"workload":"rr","req_size":%d,"resp_size":%d}' % (1 + c // 10,
                                                                             1 + c // 10)
                con.execute("INSERT INTO cells(run_id, idx, test, variant, host, params_json)"
                            " VALUES (?, ?, ?, 0, ?, ?)", (run, c, c // 10, host, params))
                job = con.execute(
                    "INSERT INTO jobs(host, params_json, state, attempt, created_ms, run_id,"
                    " cell, rep, ord) VALUES (?, ?, 'done', 1, 1000, ?, ?, 0, ?)",
                    (host, params, run, c, c)).lastrowid
                con.execute("INSERT INTO results(job_id, attempt, agent, ok, result_json,"
                            " stored_ms) VALUES (?, 1, ?, 1, ?, 2000)", (job, host, RESULT))
        return run
    finally:
        con.close()


class ReportBoundTest(unittest.TestCase):
    def setUp(self):
        self.f = Fleet(n=1, hold_ms=1000, lab=False)
        self.addCleanup(self.f.stop)
        self.f.start_coordinator()  # makes the store's schema
        self.f.kill(self.f.coord, signal.SIGTERM)
        self.a = add_run(self.f.db, "big")
        self.b = add_run(self.f.db, "big")

    def restart(self, *args):
        self.f.kill(self.f.coord, signal.SIGTERM)
        self.f.extra_args = list(args)
        self.f.start_coordinator()

    def counts(self):
        return self.f.query("SELECT (SELECT count(*) FROM results), (SELECT count(*) FROM jobs),"
                            " (SELECT group_concat(state) FROM runs)")

    def test_a_report_over_the_bound_is_a_503_naming_it_and_the_default_serves_it(self):
        before = self.counts()
        self.restart("--report-memory", "1")
        status, body = self.f.get_status(f"/api/runs/{self.a}/table")
        self.assertEqual(status, 503, body)
        self.assertRegex(body["error"],
                         rf"^the report of run {self.a} needs about 3 MB for cell \d+ "
                         r"\(h\d rr tcp [^)]*\), above --report-memory 1 MB$")
        status, body = self.f.get_status(f"/api/runs/{self.a}/anomalies")
        self.assertEqual(status, 503, body)
        self.assertIn("above --report-memory 1 MB", body["error"])
        status, body = self.f.get_status(f"/api/compare?a={self.a}&b={self.b}")
        self.assertEqual(status, 503, body)
        self.assertIn("above --report-memory 1 MB", body["error"])
        self.assertEqual(self.counts(), before)

        self.restart()
        table = self.f.get(f"/api/runs/{self.a}/table")
        self.assertEqual(len(table["rows"]), 10)
        self.assertEqual(len(table["columns"]), CELLS // 10)
        self.assertEqual({c["n"] for c in table["cells"]}, {1})
        status, body = self.f.get_status(f"/api/compare?a={self.a}&b={self.b}")
        self.assertEqual(status, 200, body)
        self.assertEqual(self.counts(), before)

    def test_a_bound_that_is_no_number_of_mb_stops_the_start(self):
        for bad in ("0", "1000001", "12MB", ""):
            r = subprocess.run([COORDINATOR, "--report-memory", bad, "--key-file", self.f.key,
                                "--db", self.f.db], capture_output=True, text=True, timeout=10)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(f"--report-memory: '{bad}' is not a number of MB from 1 to 1000000",
                          r.stderr)


if __name__ == "__main__":
    unittest.main()
