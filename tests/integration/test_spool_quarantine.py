"""A spool entry the agent cannot send (not JSON, not a result, empty, too large for a poll) is
moved to <spool>/quarantine/ once, logged once, counted in the agent's polls and in /healthz,
and never holds back the results behind it: 32 such files, as many as a poll carries, used to
fill the oldest-first window for ever while the log grew by a line per file per poll."""
import json
import os
import stat
import time
import unittest

from smtest import Fleet, stream_job, wait_for

N_BAD = 32  # SM_POLL_RESULTS_MAX: the whole window of one poll
QUARANTINE_ID = "SM-SPOOL-QUARANTINE"


def bad_entries():
    """N_BAD (name, bytes) pairs, each named exactly as the spool names a result (so each is
    indexed and listed oldest-first, ahead of any real result) but none of them one."""
    bodies = [
        b"{not json",
        b"",
        b'{"job":"9000","attempt":0,"result":',   # cut short
        b'{"job":"9000","attempt":0}',             # JSON, but no result
        b'["a","list"]',
        b"\x00\xff\xfe binary",
        b"x" * (300 * 1024),                       # larger than a poll may carry
        b"{" * 40 + b"}" * 40,                     # deeper than a message may nest
    ]
    return [(f"{seq:016x}-{9000 + seq}-0.res", bodies[seq % len(bodies)])
            for seq in range(1, N_BAD + 1)]


class SpoolQuarantineTest(unittest.TestCase):
    def start_fleet(self, prepare):
        f = Fleet(n=1, hold_ms=1000, lab=False)
        self.addCleanup(f.stop)
        f.start_coordinator()
        spool = f.spool("h1")
        os.mkdir(spool, 0o700)
        for name, data in bad_entries():
            with open(os.path.join(spool, name), "wb") as out:
                out.write(data)
        prepare(spool)
        f.start_agent("h1")
        wait_for("h1 online", lambda: "h1" in f.online(), 20)
        return f, spool

    def agent_log(self, f):
        # The whole log: Fleet.log keeps only its tail.
        with open(os.path.join(f.dir, "agent-h1.log")) as log:
            return log.read()

    def quarantine_lines(self, f):
        return [l for l in self.agent_log(f).splitlines() if QUARANTINE_ID in l]

    def run_one_job(self, f):
        [jid] = f.submit([stream_job("h1")])
        job = wait_for("the job to end",
                       lambda: (j := f.job(jid))["state"] in ("done", "failed") and j, 30, 0.2)
        self.assertEqual(job["state"], "done", f"{job}\n{f.log('agent-h1')}")
        self.assertEqual(f.stored([jid]), (1, 1))
        # Its ack comes with the answer to the held poll, within a hold: then the agent deletes
        # its copy.
        spool = f.spool("h1")
        wait_for("the result's ack", lambda: not [
            n for n in os.listdir(spool) if n.endswith(f"-{jid}-1.res")], 10, 0.1)

    def assert_counted(self, f, n):
        # The count rides on the agent's polls: the first poll after the moves carries it.
        health = wait_for("the count in /healthz",
                          lambda: (h := f.get("/healthz"))
                          and h.get("spool_quarantined", {}).get("h1") == n and h, 10)
        self.assertEqual(health["spool_quarantined"], {"h1": n}, health)
        [agent] = f.get("/api/agents")["agents"]
        self.assertEqual(agent["spool_quarantined"], n, agent)

    def test_corrupt_entries_are_quarantined_once_and_block_nothing(self):
        f, spool = self.start_fleet(lambda spool: None)
        self.run_one_job(f)

        qdir = os.path.join(spool, "quarantine")
        self.assertEqual(stat.S_IMODE(os.stat(qdir).st_mode), 0o700)
        want = {name: data for name, data in bad_entries()}
        self.assertEqual(sorted(os.listdir(qdir)), sorted(want))
        for name, data in want.items():
            with open(os.path.join(qdir, name), "rb") as q:
                self.assertEqual(q.read(), data, name)  # moved, never rewritten
        self.assertEqual([n for n in os.listdir(spool) if n.endswith(".res")], [])

        lines = self.quarantine_lines(f)
        self.assertEqual(len(lines), N_BAD, "\n".join(lines))
        for name, _ in bad_entries():
            self.assertEqual(sum(name in l for l in lines), 1, name)
        self.assertNotIn("SM-SPOOL-BAD", self.agent_log(f))
        self.assert_counted(f, N_BAD)

        # Later polls and jobs neither log the files again nor lose the count.
        self.run_one_job(f)
        time.sleep(1.5)
        self.assertEqual(len(self.quarantine_lines(f)), N_BAD)
        self.assert_counted(f, N_BAD)

    def test_entries_that_cannot_be_moved_are_skipped_and_logged_once(self):
        # A file where the quarantine folder would go makes every move fail (ENOTDIR for any
        # user, root included), as a spool remounted read-only would after the start probe.
        def block_quarantine(spool):
            with open(os.path.join(spool, "quarantine"), "w") as q:
                q.write("in the way\n")

        f, spool = self.start_fleet(block_quarantine)
        self.run_one_job(f)
        names = sorted(n for n, _ in bad_entries())
        self.assertEqual(sorted(n for n in os.listdir(spool) if n.endswith(".res")), names)
        self.run_one_job(f)
        time.sleep(1.5)
        lines = self.quarantine_lines(f)
        self.assertEqual(len(lines), N_BAD, "\n".join(lines))
        self.assertTrue(all("cannot be moved" in l for l in lines), lines[0])
        self.assert_counted(f, N_BAD)


if __name__ == "__main__":
    unittest.main()
