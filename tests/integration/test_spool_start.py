"""sockmatrix-agent refuses to start on a spool it cannot write: exit 1 and one clear line."""
import os
import shutil
import socket
import subprocess
import tempfile
import time
import unittest

from smtest import AGENT, COORDINATOR

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
        subprocess.run([COORDINATOR, "keygen", self.key], check=True, capture_output=True)

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
                self.assertIsNone(p.poll(), open(log).read())
                time.sleep(0.05)
            else:
                self.fail(f"no SM-AGENT-START within {deadline} s: {open(log).read()}")
            self.assertEqual(os.listdir(spool), [])
        finally:
            p.terminate()
            p.wait(timeout=START_LIMIT_S)


if __name__ == "__main__":
    unittest.main()
