"""The signed conversation between agents and the coordinator, attacked from the wire by a
man in the middle who holds no key: sm-rogue relays one agent's polls to the real coordinator,
keeps the reply that assigned it a job, and then plays a fake coordinator that answers every
poll with those bytes. A reply is sealed under the agent's own key and names that agent and the
poll it answers, so the replay runs nothing: not on another agent, and not on the same agent
after a restart (when its memory of seen nonces and jobs is gone)."""
import os
import signal
import subprocess
import unittest

from smtest import ROGUE, Fleet, free_port, stream_job, wait_for


class ReplayedReplyTest(unittest.TestCase):
    def setUp(self):
        # On loopback: the man in the middle is two local sockets.
        self.f = Fleet(n=2, hold_ms=1000, lab=False)
        self.addCleanup(self.f.stop)
        self.procs = []
        self.f.start_coordinator()
        self.capture = os.path.join(self.f.dir, "assign.reply")

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait(10)

    def rogue(self, *args):
        """Starts sm-rogue with args; its stdout goes to a file the test reads."""
        out = os.path.join(self.f.dir, f"rogue-{len(self.procs)}.out")
        with open(out, "w") as fh:
            p = subprocess.Popen([ROGUE, *args], stdout=fh, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL)
        self.procs.append(p)
        return p, out

    @staticmethod
    def text(path):
        try:
            with open(path) as fh:
                return fh.read()
        except OSError:
            return ""

    def capture_assign(self):
        """h1 polls through the relay; the reply that assigns its job is kept."""
        f = self.f
        relay_url = f"tcp://127.0.0.1:{free_port()}"
        self.rogue("relay", relay_url, f"tcp://{f.bus_addr}:{f.bus_port}", self.capture)
        f.start_agent("h1", coordinator=relay_url)
        wait_for("h1 online through the relay", lambda: "h1" in f.online(), 20)
        [job] = f.submit([stream_job("h1")])
        wait_for("h1's job done", lambda: f.job(job)["state"] == "done", 30)
        wait_for("the captured assign", lambda: os.path.exists(self.capture), 10)
        return job

    def answer_with_capture(self, name):
        """Starts agent `name` against a fake coordinator that answers with the capture, and
        waits until it has been answered a few times (well within the 60 s skew window)."""
        fake_url = f"tcp://127.0.0.1:{free_port()}"
        _, out = self.rogue("answer", fake_url, self.capture)
        wait_for("the fake coordinator to listen", lambda: "answering" in self.text(out), 10)
        self.f.start_agent(name, coordinator=fake_url)
        wait_for(f"{name} to be answered three times",
                 lambda: "answered poll 3" in self.text(out), 30)
        # A job taken from the first answer would have started by now.
        return self.f.log(f"agent-{name}")

    def test_an_assign_captured_for_one_agent_does_not_run_on_another(self):
        self.capture_assign()
        log = self.answer_with_capture("h2")
        self.assertNotIn("SM-JOB-START", log)
        # Sealed under h1's key: h2's key does not open it.
        self.assertIn("SM-REJECT", log)
        self.assertIn("mac", log)

    def test_an_assign_captured_for_an_agent_does_not_run_again_after_it_restarts(self):
        f = self.f
        job = self.capture_assign()
        wait_for("h1's spool empty (its result acked)",
                 lambda: not [n for n in os.listdir(f.spool("h1")) if n.endswith(".res")], 10)
        f.kill(f.agents["h1"], signal.SIGTERM)
        log_path = os.path.join(f.dir, "agent-h1.log")
        before = len(self.text(log_path))
        self.answer_with_capture("h1")
        log = self.text(log_path)[before:]
        # h1's key opens it, and it names h1: only the poll it answered gives it away.
        self.assertNotIn("SM-JOB-START", log)
        self.assertIn("misdirected", log)
        self.assertIn("not to the last poll", log)
        self.assertEqual(f.stored([job]), (1, 1))


if __name__ == "__main__":
    unittest.main()
