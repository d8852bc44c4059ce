"""An unwritable spool is said, not hidden: the agent refuses to start on one (exit 1 and one
clear line), and a result the spool refuses mid-run fails its job with the spool's reason."""
import os
import shutil
import socket
import subprocess
import tempfile
import time
import unittest

from smtest import AGENT, COORDINATOR, Fleet, stream_job, wait_for

# Start-up fails before the agent ever polls; a hang past this is the bug the test guards.
START_LIMIT_S = 10


def unused_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class UnwritableSpoolTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="sm-spool-start-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.key = os.path.join(self.dir, "key")
        fleet = os.path.join(self.dir, "fleet.key")
        subprocess.run([COORDINATOR, "keygen", fleet], check=True, capture_output=True)
        subprocess.run([COORDINATOR, "keygen", "--agent", "h1", "--key-file", fleet, self.key],
                       check=True, capture_output=True)

    def start_agent(self, spool):
        # No coordinator listens on the port: an agent that got past its spool would keep
        # polling until the time limit, which the test reports as a failure.
        cmd = [AGENT, "--coordinator", f"tcp://127.0.0.1:{unused_port()}", "--key-file",
               self.key, "--name", "h1", "--spool-dir", spool, "--sock-dir", self.dir]
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=START_LIMIT_S,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            self.fail(f"the agent with spool {spool} was still running after {START_LIMIT_S} s")

    def assert_refused(self, r, spool, reason):
        self.assertEqual(r.returncode, 1, r.stderr)
        lines = [l for l in r.stderr.splitlines() if "SM-SPOOL-UNWRITABLE" in l]
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn(spool, lines[0])
        self.assertIn(reason, lines[0])
        self.assertNotIn("SM-AGENT-START", r.stderr)

    def test_a_spool_whose_probe_file_cannot_be_created_is_refused(self):
        # Root passes permission checks, so the unwritable directory is one where the probe's
        # file name is taken by a directory: the create fails with EISDIR for every user.
        spool = os.path.join(self.dir, "spool")
        os.makedirs(os.path.join(spool, ".probe"))
        r = self.start_agent(spool)
        self.assert_refused(r, spool, os.strerror(21))  # EISDIR
        self.assertEqual(os.listdir(spool), [".probe"])

    def test_a_spool_under_a_regular_file_is_refused(self):
        parent = os.path.join(self.dir, "file")
        with open(parent, "w") as f:
            f.write("not a directory\n")
        spool = os.path.join(parent, "spool")
        r = self.start_agent(spool)
        self.assert_refused(r, spool, os.strerror(20))  # ENOTDIR

    def test_a_writable_spool_starts_and_keeps_no_probe_file(self):
        spool = os.path.join(self.dir, "spool")
        cmd = [AGENT, "--coordinator", f"tcp://127.0.0.1:{unused_port()}", "--key-file",
               self.key, "--name", "h1", "--spool-dir", spool, "--sock-dir", self.dir,
               "--log-level", "info"]
        log = os.path.join(self.dir, "agent.log")
        with open(log, "w") as err:
            p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=err)
        try:
            deadline = START_LIMIT_S
            t0 = time.monotonic()
            while time.monotonic() - t0 < deadline:
                with open(log) as f:
                    if "SM-AGENT-START" in f.read():
                        break
                if p.poll() is not None:
                    with open(log) as f:
                        self.fail(f"the agent exited {p.returncode}: {f.read()}")
                time.sleep(0.05)
            else:
                with open(log) as f:
                    self.fail(f"no SM-AGENT-START within {deadline} s: {f.read()}")
            self.assertEqual(os.listdir(spool), [])
        finally:
            p.terminate()
            p.wait(timeout=START_LIMIT_S)


class SpoolFailsMidRunTest(unittest.TestCase):
    def test_a_result_the_spool_refuses_fails_its_job_with_the_spool_error(self):
        f = Fleet(n=1, hold_ms=1000, lab=False)
        self.addCleanup(f.stop)
        f.start()
        wait_for("h1 online", lambda: "h1" in f.online(), 15)
        # The put writes .tmp-JOB-ATTEMPT first; a directory of that name makes it fail with
        # EISDIR for every user, root included. Job ids of a new store start at 1.
        spool = f.spool("h1")
        for attempt in range(0, 4):
            os.mkdir(os.path.join(spool, f".tmp-1-{attempt}"))
        [jid] = f.submit([stream_job("h1")])
        self.assertEqual(jid, 1)
        job = wait_for("the job to end",
                       lambda: (j := f.job(jid))["state"] in ("done", "failed") and j, 30, 0.2)
        self.assertEqual(job["state"], "failed", job)
        self.assertIn("result not spooled", job["reason"], job)
        self.assertIn(os.strerror(21), job["reason"], job)  # EISDIR
        self.assertNotIn("idle", job["reason"], job)
        self.assertEqual(f.stored([jid]), (1, 1))  # the failure, stored once
        self.assertIn("h1", f.online())
        # Acked once: the agent stops sending the failure, and a later job runs normally.
        [nxt] = f.submit([stream_job("h1")])
        job = wait_for("the next job to end",
                       lambda: (j := f.job(nxt))["state"] in ("done", "failed") and j, 30, 0.2)
        self.assertEqual(job["state"], "done", job)
        self.assertEqual(f.stored([nxt]), (1, 1))


if __name__ == "__main__":
    unittest.main()
