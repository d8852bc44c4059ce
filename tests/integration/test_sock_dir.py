"""Where a fleet agent makes the Unix sockets of its jobs: by default a private folder (mkdtemp,
mode 0700) under $TMPDIR, not predictable names in a shared /tmp that another user could take
first; removed when the agent stops. A --sock-dir given is used as given."""
import glob
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import unittest

from smtest import AGENT, Fleet, stream_job, wait_for

# Long enough to see the socket while the job runs.
UNIX_JOB = stream_job("h1", count=None, transport="unix", duration_ms=3000)


class SockDirTest(unittest.TestCase):
    def setUp(self):
        self.f = Fleet(n=1, hold_ms=1000, lab=False, unmeasured=True)
        self.addCleanup(self.f.stop)
        self.f.start_coordinator()
        # A TMPDIR of the test's own: what the agent makes there is all the test sees.
        self.base = tempfile.mkdtemp(prefix="sm-tmpdir-")
        self.addCleanup(shutil.rmtree, self.base, True)
        os.chmod(self.base, 0o1777)  # as /tmp is: anyone may make names in it

    def start_agent(self, *extra):
        f = self.f
        cmd = [AGENT, "--coordinator", f"tcp://{f.bus_addr}:{f.bus_port}", "--key-file",
               f.agent_key("h1"), "--name", "h1", "--spool-dir", f.spool("h1"), "--data-addr",
               "127.0.0.1", "--reply-wait-ms", "3000", "--log-level", "info", *f.policy_args,
               *extra]
        env = dict(os.environ, TMPDIR=self.base)
        with open(os.path.join(f.dir, "agent-h1.log"), "a") as log:
            f.agents["h1"] = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                              stdin=subprocess.DEVNULL, stderr=log, env=env)
        wait_for("h1 online", lambda: "h1" in f.online(), 20)
        return f.agents["h1"]

    def run_unix_job_seeing_its_socket(self, where):
        """Runs UNIX_JOB; returns the socket names seen in `where` while it ran."""
        f = self.f
        [jid] = f.submit([UNIX_JOB])
        seen = wait_for(f"a socket in {where}",
                        lambda: [os.path.basename(p) for p in glob.glob(os.path.join(where, "*"))
                                 if stat.S_ISSOCK(os.lstat(p).st_mode)], 15, 0.05)
        job = wait_for("the job to end",
                       lambda: (j := f.job(jid))["state"] in ("done", "failed") and j, 30, 0.2)
        self.assertEqual(job["state"], "done", f"{job}\n{f.log('agent-h1')}")
        return seen

    def test_the_default_is_a_private_folder_under_tmpdir_removed_at_exit(self):
        agent = self.start_agent()
        made = os.listdir(self.base)
        self.assertEqual(len(made), 1, made)
        private = os.path.join(self.base, made[0])
        st = os.lstat(private)
        self.assertTrue(stat.S_ISDIR(st.st_mode), made)
        self.assertEqual(stat.S_IMODE(st.st_mode), 0o700)
        self.assertEqual(st.st_uid, os.geteuid())
        self.assertTrue(made[0].startswith("sockmatrix-agent-"), made)
        self.assertIn(private, self.f.log("agent-h1"))  # the start line says where

        seen = self.run_unix_job_seeing_its_socket(private)
        self.assertTrue(all(n.startswith("sm-") and n.endswith(".sock") for n in seen), seen)
        self.assertEqual(os.listdir(self.base), made)  # nothing made beside it

        self.f.kill(agent, signal.SIGTERM)
        self.assertEqual(agent.returncode, 0, self.f.log("agent-h1"))
        self.assertEqual(os.listdir(self.base), [])

    def test_a_sock_dir_given_is_used_as_given_and_kept(self):
        given = os.path.join(self.f.dir, "socks")
        os.mkdir(given, 0o750)
        agent = self.start_agent("--sock-dir", given)
        self.run_unix_job_seeing_its_socket(given)
        self.assertEqual(os.listdir(self.base), [])
        self.f.kill(agent, signal.SIGTERM)
        self.assertEqual(agent.returncode, 0, self.f.log("agent-h1"))
        self.assertTrue(os.path.isdir(given))
        self.assertEqual(stat.S_IMODE(os.stat(given).st_mode), 0o750)


if __name__ == "__main__":
    unittest.main()
