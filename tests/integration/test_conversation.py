"""The signed conversation between agents and the coordinator, attacked from the wire by a
man in the middle who holds no key: sm-rogue relays one agent's polls to the real coordinator,
keeps the reply that assigned it a job, and then plays a fake coordinator that answers every
poll with those bytes. A reply is sealed under the agent's own key and names that agent and the
poll it answers, so the replay runs nothing: not on another agent, and not on the same agent
after a restart (when its memory of seen nonces and jobs is gone)."""
import os
import signal
import socket
import struct
import subprocess
import threading
import time
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


class LateReplyTest(unittest.TestCase):
    """A coordinator slower than the agent's --reply-wait-ms: the answer comes after the agent
    polled again, and the agent's REQ socket drops it. nanomsg 1.1.5 frees that message and
    keeps a pointer to it, which its nn_close frees a second time (nanomsg/req.c, nn_req_in and
    nn_req_term): the agent aborted on SIGTERM. MALLOC_PERTURB_ makes glibc overwrite freed
    memory, so the second free is caught every time rather than when the memory was reused."""

    def setUp(self):
        self.f = Fleet(n=1, lab=False)
        self.addCleanup(self.f.stop)
        self.out = os.path.join(self.f.dir, "late.out")
        self.url = f"tcp://127.0.0.1:{free_port()}"
        with open(self.out, "w") as fh:
            # The agent polls again after 3000 ms without an answer (smtest's --reply-wait-ms).
            self.late = subprocess.Popen([ROGUE, "late", self.url, "4000"], stdout=fh,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.addCleanup(self.late.wait, 10)
        self.addCleanup(self.late.kill)

    def test_an_agent_that_dropped_a_late_answer_stops_cleanly(self):
        f = self.f
        text = lambda: ReplayedReplyTest.text(self.out)
        wait_for("the slow coordinator to listen", lambda: "answering" in text(), 10)
        f.start_agent("h1", coordinator=self.url, env={"MALLOC_PERTURB_": "165"})
        # Poll 3 goes out when poll 2 has gone 3 s unanswered: the late answer to poll 1 was
        # on the agent's socket long before.
        wait_for("the late answer and the poll after it",
                 lambda: "answered poll 1 late" in text() and "received poll 3" in text(), 20)
        a = f.agents["h1"]
        f.kill(a, signal.SIGTERM)
        log = f.log("agent-h1")
        self.assertEqual(a.returncode, 0, log)
        self.assertIn("SM-AGENT-STOP", log)
        self.assertNotIn("Assertion failed", log)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for pid {pid}")


# The SP handshake of a REQ socket over TCP (protocol 48 = NN_REQ), as nanomsg's own client
# sends it.
SP_REQ_HEADER = b"\x00SP\x00\x00\x30\x00\x00"
OLD_RCVMAX = 1024 * 1024  # the receive limit before it became the message limit
MSG_MAX = 256 * 1024


class BusMemoryTest(unittest.TestCase):
    """Memory before authentication: nanomsg keeps a partial message, unbounded in time, up to
    NN_RCVMAXSIZE per connection. That limit is the message limit, so 100 idle connections
    that each declared a 1 MiB message and sent most of it hold next to nothing, and 100 that
    declared the largest allowed message hold at most 100 x 256 KiB."""

    def setUp(self):
        self.f = Fleet(n=1, hold_ms=1000, lab=False)
        self.addCleanup(self.f.stop)
        self.f.start_coordinator()
        self.socks = []
        self.addCleanup(lambda: [s.close() for s in self.socks])

    def open_partial(self, n, declared, sent):
        """n connections that each complete the SP handshake, declare a message of `declared`
        bytes, send `sent` of them and go idle."""
        f = self.f
        for _ in range(n):
            s = socket.create_connection((f.bus_addr, f.bus_port), timeout=10)
            self.socks.append(s)
            s.sendall(SP_REQ_HEADER)
            s.recv(8)  # the REP side's own header
            try:
                s.sendall(struct.pack(">Q", declared) + b"x" * sent)
            except OSError:
                pass  # refused at the header: the coordinator closed the connection

    def settled_rss(self, pid):
        """VmRSS once it stopped moving (nanomsg reads on its own thread)."""
        last = rss_kib(pid)
        for _ in range(20):
            time.sleep(0.25)
            now = rss_kib(pid)
            if abs(now - last) < 64:
                return now
            last = now
        return last

    def test_100_idle_connections_with_partial_messages_hold_bounded_memory(self):
        pid = self.f.coord.pid
        before = self.settled_rss(pid)
        self.open_partial(100, OLD_RCVMAX, OLD_RCVMAX - 4096)
        over = self.settled_rss(pid)
        print(f"[figure] coordinator RSS with 100 idle connections declaring 1 MiB: "
              f"{before} KiB before, {over} KiB after (+{over - before} KiB)")
        self.assertLess(over - before, 16 * 1024, "a 1 MiB message is over the limit")
        for s in self.socks:
            s.close()
        self.socks.clear()
        before = self.settled_rss(pid)
        self.open_partial(100, MSG_MAX, MSG_MAX - 4096)
        at_max = self.settled_rss(pid)
        print(f"[figure] coordinator RSS with 100 idle connections declaring 256 KiB: "
              f"{before} KiB before, {at_max} KiB after (+{at_max - before} KiB)")
        self.assertLess(at_max - before, 100 * 256 + 16 * 1024)
        # Still serving: an agent registers.
        self.f.start_agent("h1")
        wait_for("h1 online", lambda: "h1" in self.f.online(), 20)


class ThrottleTest(unittest.TestCase):
    def test_a_connection_that_keeps_failing_the_mac_is_dropped_unread(self):
        f = Fleet(n=1, hold_ms=1000, lab=False)
        self.addCleanup(f.stop)
        f.start()
        r = subprocess.run([ROGUE, f"tcp://{f.bus_addr}:{f.bus_port}", f.key, "flood"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        # 16 refused after a MAC check, every later one dropped without one. (A REQ socket
        # may replace a request not yet written out, so not all 200 need arrive.)
        def settled():
            a = f.get("/healthz")["rejected"]
            time.sleep(0.5)
            b = f.get("/healthz")["rejected"]
            return b if a == b and b["total"] >= 100 else None
        rej = wait_for("the flood counted", settled, 15)
        self.assertEqual(rej["mac"], 16, rej)
        self.assertEqual(rej["throttled"], rej["total"] - 16, rej)
        with open(os.path.join(f.dir, "coordinator.log")) as fh:
            log = fh.read()
        self.assertEqual(log.count("SM-BUS-THROTTLE"), 1, log[-2000:])
        # The agent on its own connection is untouched.
        [job] = f.submit([stream_job("h1")])
        wait_for("h1's job done", lambda: f.job(job)["state"] == "done", 30)


def loop_schedstat(pid):
    """(seconds run on a CPU, seconds waited for one) of process pid's main thread, where the
    coordinator's loop runs: /proc's schedstat."""
    with open(f"/proc/{pid}/task/{pid}/schedstat") as fh:
        run_ns, wait_ns, _ = (int(x) for x in fh.read().split())
    return run_ns / 1e9, wait_ns / 1e9


class FloodStarvationTest(unittest.TestCase):
    """Forged 250 KiB messages on fresh connections (so that the per-connection throttle never
    starts) cost one HMAC each, and the coordinator takes at most 1 MiB of them per pass of its
    loop: the HTTP API it serves from the same loop still answers while they pour in. Before
    that bound, one pass took them for as long as they came: a GET of /api/agents waited 13 s
    behind 4 connections' worth. The bound here is 100 times the GET's quiet time and more, a
    liveness check, not a speed one."""

    def test_the_api_answers_during_a_flood_of_forged_messages(self):
        f = Fleet(n=1, hold_ms=1000, lab=False)
        self.addCleanup(f.stop)
        f.start_coordinator()
        env = ('{"v":2,"agent":"h1","ts":%d,"nonce":"%s","mac":"%s","body":{"pad":"%s"}}' %
               (int(time.time() * 1000), "0" * 32, "0" * 64, "a" * (250 * 1024 - 300))).encode()
        frame = struct.pack(">Q", 4 + len(env)) + b"\x80\x00\x00\x01" + env  # REQ's request id
        end = time.monotonic() + 5
        sent = [0]

        def flood():
            while time.monotonic() < end:
                with socket.create_connection((f.bus_addr, f.bus_port), timeout=10) as s:
                    s.sendall(SP_REQ_HEADER)
                    s.recv(8)
                    try:
                        for _ in range(10):
                            s.sendall(frame)
                            sent[0] += 1
                    except OSError:
                        pass
        threads = [threading.Thread(target=flood) for _ in range(4)]
        sched0 = loop_schedstat(f.coord.pid)
        for t in threads:
            t.start()
        took = []
        try:
            while time.monotonic() < end:
                t0 = time.monotonic()
                f.get("/api/agents")
                took.append(time.monotonic() - t0)
        finally:
            for t in threads:
                t.join()
        ran, waited = (b - a for a, b in zip(sched0, loop_schedstat(f.coord.pid)))
        rej = f.get("/healthz")["rejected"]
        print(f"  [figure] {sent[0]} forged 250 KiB messages in 5 s ({rej['mac']} refused on "
              f"their MAC): {len(took)} GETs of /api/agents, slowest {max(took) * 1000:.0f} ms; "
              f"the coordinator's loop ran {ran:.2f} s and waited for a CPU {waited:.2f} s")
        try:
            self.assertGreater(rej["mac"], 100, rej)  # the flood reached the coordinator's loop
            self.assertGreaterEqual(len(took), 5, took)
            self.assertLess(max(took), 3.0, took)
        except AssertionError as e:
            # The premise is a loop that has a CPU when it is ready to run: bounded passes keep
            # the API answering only then. Measured here, from the kernel's count of the time
            # the loop's thread was ready and waited; a loop that ran and still left the API
            # waiting fails.
            if waited > ran:
                self.skipTest(f"the machine was busy: the coordinator's loop waited for a CPU "
                              f"{waited:.2f} s and ran {ran:.2f} s during the flood; what "
                              f"failed: {str(e).splitlines()[0][:200]}")
            raise


if __name__ == "__main__":
    unittest.main()
