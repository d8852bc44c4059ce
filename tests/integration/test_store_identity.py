"""A coordinator's store is one store: replaced (deleted, its WAL lost) or rolled back (its WAL
cut), job ids start over, and the agents that outlive it must not take the new jobs for the old
ones nor hand in the old ones' results as the new ones'. A cut WAL is said, in the log and at
/healthz. Loopback fleet: no root needed."""
import glob
import os
import signal
import unittest

from smtest import Fleet, stream_job, wait_for

# The new store's jobs: a size no job of the old store used, so a stored result says which
# job it measured.
NEW_SIZE, NEW_COUNT = 2000, 100


class StoreIdentityTest(unittest.TestCase):
    def setUp(self):
        self.f = Fleet(n=2, hold_ms=1000, lab=False, unmeasured=True)
        self.addCleanup(self.f.stop)
        self.f.start()

    def wait_jobs(self, ids, timeout=30):
        def settled():
            jobs = [self.f.job(i) for i in ids]
            return jobs if all(j["state"] in ("done", "failed") for j in jobs) else None
        return wait_for(f"{len(ids)} jobs to end", settled, timeout, 0.2)

    def agent_log(self, name):
        with open(os.path.join(self.f.dir, f"agent-{name}.log")) as fp:
            return fp.read()

    def coordinator_log(self):
        with open(os.path.join(self.f.dir, "coordinator.log")) as fp:
            return fp.read()

    def remove_store(self):
        for sfx in ("", "-wal", "-shm"):
            try:
                os.unlink(self.f.db + sfx)
            except FileNotFoundError:
                pass

    def new_jobs(self, n):
        hosts = ["h1", "h2"]
        return self.f.submit([stream_job(hosts[i % 2], count=NEW_COUNT, size=NEW_SIZE)
                              for i in range(n)])

    def assert_new_jobs_ran(self, ids):
        for j in self.wait_jobs(ids):
            self.assertEqual(j["state"], "done", j)
            self.assertTrue(j["result"]["ok"], j)
            # Measured for this job, not an old store's job of the same id.
            self.assertEqual(j["result"]["metrics"]["bytes"], NEW_SIZE * NEW_COUNT, j)
        self.assertEqual(self.f.stored(ids), (len(ids), len(ids)))

    def test_a_deleted_store_starts_over_and_its_new_jobs_all_run(self):
        f = self.f
        old = f.submit([stream_job(h) for h in ("h1", "h2", "h1", "h2")])
        self.assertEqual(old, [1, 2, 3, 4])
        for j in self.wait_jobs(old):
            self.assertEqual(j["state"], "done", j)
        # Job 5 is still measured when the store is replaced: its result is for the old
        # store's job 5, and the new store soon has a job 5 of its own on h1.
        [long_job] = f.submit([stream_job("h1", count=None, duration_ms=5000)])
        self.assertEqual(long_job, 5)
        wait_for("job 5 to start", lambda: "SM-JOB-START job 5.1" in self.agent_log("h1"), 10)
        f.kill(f.coord)
        self.remove_store()
        f.start_coordinator()
        wait_for("both agents online", lambda: f.online() >= {"h1", "h2"}, 10)
        new = self.new_jobs(6)
        self.assertEqual(new, [1, 2, 3, 4, 5, 6])
        self.assert_new_jobs_ran(new)

        # h2 outlived the old store and said that its job ids started over.
        self.assertEqual(self.agent_log("h2").count("SM-STORE-CHANGED"), 1,
                         self.agent_log("h2"))
        # So did h1, and the old job 5's result is kept aside in its spool: not stored as the
        # new job 5's, and not lost either.
        self.assertEqual(self.agent_log("h1").count("SM-STORE-CHANGED"), 1,
                         self.agent_log("h1"))
        aside = glob.glob(os.path.join(f.spool("h1"), "*", "*", "*-5-1.res"))
        self.assertEqual(len(aside), 1, list(os.walk(f.spool("h1"))))
        self.assertIn("SM-SPOOL-ASIDE", self.agent_log("h1"))
        # The new jobs' results are acked within a hold of their storing.
        wait_for("h1's spool acked", lambda: not glob.glob(os.path.join(f.spool("h1"), "*.res")),
                 10, 0.1)

    def test_a_cut_wal_is_said_in_the_log_and_at_healthz(self):
        f = self.f
        # Where the WAL ends before any job: everything written after it is in later frames.
        wal = f.db + "-wal"
        before = os.path.getsize(wal)
        ids = f.submit([stream_job(h) for h in ("h1", "h2", "h1", "h2")])
        self.assertEqual(ids, [1, 2, 3, 4])
        for j in self.wait_jobs(ids):
            self.assertEqual(j["state"], "done", j)
        # kill -9: a stopped coordinator checkpoints its WAL into the database and removes it.
        f.kill(f.coord, signal.SIGKILL)
        size = os.path.getsize(wal)
        self.assertGreater(size, before + 4096 + 24, "the WAL holds the jobs' commits")
        self.assertEqual((before - 32) % (4096 + 24), 0, "whole frames before the jobs")
        # 100 bytes into the first frame written for the jobs: the store rolls back to before
        # them, and its next jobs get the ids 1..4 that the agents already took.
        os.truncate(wal, before + 100)
        f.start_coordinator()

        cut = [l for l in self.coordinator_log().splitlines() if "SM-STORE-WAL-CUT" in l]
        self.assertEqual(len(cut), 1, self.coordinator_log())
        self.assertIn("100 bytes beyond its last whole frame", cut[0])
        status, health = f.get_status("/healthz")
        self.assertEqual(status, 200, health)
        self.assertTrue(health["ok"], health)  # the store works: only something was lost
        self.assertIn("was cut", health["store_warning"])
        self.assertIn("lost", health["store_warning"])

        # The rolled-back store repeats the job ids the agents took: they start over too.
        self.assertEqual(f.query("SELECT COUNT(*) FROM jobs")[0][0], 0)
        wait_for("both agents online", lambda: f.online() >= {"h1", "h2"}, 10)
        new = self.new_jobs(4)
        self.assertEqual(new, [1, 2, 3, 4])
        self.assert_new_jobs_ran(new)
        for h in ("h1", "h2"):
            self.assertEqual(self.agent_log(h).count("SM-STORE-CHANGED"), 1, self.agent_log(h))

        # Said once: the next start finds an intact WAL.
        f.kill(f.coord, signal.SIGKILL)
        f.start_coordinator()
        self.assertEqual(self.coordinator_log().count("SM-STORE-WAL-CUT"), 1)
        self.assertNotIn("store_warning", f.get("/healthz"))


if __name__ == "__main__":
    unittest.main()
