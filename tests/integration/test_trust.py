"""What the coordinator accepts from agents that hold the fleet key: a result only from the host
that ran its job, registrations up to --max-agents, data addresses inside the data address
policy, no agent named "coordinator"; and agents connect a pair job only to a server address
inside their own policy. Loopback fleet: no root needed."""
import json
import os
import re
import signal
import socket
import subprocess
import unittest

from smtest import AGENT, ROGUE, Fleet, stream_job, wait_for

FORGED_MBPS = 99999


def log_of(f, name):
    with open(os.path.join(f.dir, f"{name}.log")) as fp:
        return fp.read()


def rejected(f):
    return f.get("/healthz")["rejected"]


class WrongHostTest(unittest.TestCase):
    def setUp(self):
        self.f = Fleet(n=1, hold_ms=1000, lab=False, unmeasured=True)
        self.addCleanup(self.f.stop)
        self.f.start()

    def test_a_result_from_another_agent_is_not_stored_and_the_job_completes_from_its_host(self):
        f = self.f
        # A result of the right shape, taken from a job h1 really ran.
        [first] = f.submit([stream_job("h1")])
        wait_for("job 1 done", lambda: f.job(first)["state"] == "done", 30)
        [[shape]] = f.query("SELECT result_json FROM results WHERE job_id = ?", first)
        forged = json.loads(shape)
        forged["metrics"]["throughput_MBps"] = FORGED_MBPS
        # h1's job, long enough for mallory to hand in a result for it first: mallory starts,
        # and its poll is held (a result alone needs no answer) before the ack comes.
        [jid] = f.submit([stream_job("h1", count=None, duration_ms=8000)])
        wait_for("h1's job to run", lambda: f.job(jid)["state"] == "running", 20)
        # mallory holds the fleet key and is a real agent: its spool holds a "result" of h1's
        # job, which it sends with its first poll.
        spool = f.spool("mallory")
        os.makedirs(spool, mode=0o700)
        with open(os.path.join(spool, f"{1:016x}-{jid}-1.res"), "w") as fp:
            json.dump({"job": str(jid), "attempt": 1, "result": forged}, fp)
        f.hosts["mallory"] = dict(f.hosts["h1"], name="mallory")
        f.start_agent("mallory")
        # Acked (so that mallory stops resending it) but not stored.
        wait_for("mallory's result to be acked",
                 lambda: not [n for n in os.listdir(spool) if n.endswith(".res")], 20)
        self.assertNotEqual(f.job(jid)["state"], "done", "the job ended on mallory's word")
        self.assertEqual(f.stored([jid]), (0, 0))
        job = wait_for("h1's job done", lambda: (lambda j: j if j["state"] == "done" else None)(
            f.job(jid)), 30)
        [(agent, mbps)] = f.query("SELECT agent, throughput_MBps FROM results WHERE job_id = ?",
                                  jid)
        self.assertEqual(agent, "h1")
        self.assertNotEqual(mbps, FORGED_MBPS)
        self.assertNotEqual(job["result"]["metrics"]["throughput_MBps"], FORGED_MBPS)
        self.assertEqual(rejected(f)["wrong-host"], 1)
        log = log_of(f, "coordinator")
        self.assertIn("SM-RESULT-WRONG-HOST", log)
        self.assertIn(f"mallory sent a result for job {jid}.1", log)
        # The coordinator and mallory live on, and mallory stays a registered agent.
        self.assertIn("mallory", f.online())


class RegistrationTest(unittest.TestCase):
    def test_new_agents_beyond_max_agents_are_refused_and_known_ones_keep_working(self):
        f = Fleet(n=3, hold_ms=1000, lab=False, unmeasured=True)
        self.addCleanup(f.stop)
        f.extra_args = ["--max-agents", "2"]
        f.start_coordinator()
        f.start_agent("h1")
        f.start_agent("h2")
        wait_for("h1 and h2 online", lambda: f.online() == {"h1", "h2"}, 20)
        f.start_agent("h3")
        wait_for("h3 refused", lambda: rejected(f)["agents-cap"] >= 2, 20)
        self.assertEqual(f.online(), {"h1", "h2"})
        self.assertEqual({a["name"] for a in f.get("/api/agents")["agents"]}, {"h1", "h2"})
        log = log_of(f, "coordinator")
        self.assertIn("SM-AGENT-CAP", log)
        self.assertIn("refused new agent h3: 2 agents are registered", log)
        # One line a minute, however often h3 polls.
        self.assertEqual(log.count("SM-AGENT-CAP"), 1, log)
        ids = f.submit([stream_job("h1"), stream_job("h2")])
        wait_for("the known agents' jobs", lambda: all(
            f.job(i)["state"] == "done" for i in ids), 30)
        # A job for the refused agent is refused as for any unknown host.
        status, body = f.post("/api/jobs", [stream_job("h3")])
        self.assertEqual(status, 400, body)

    def test_an_agent_named_coordinator_is_refused_by_the_agent_and_the_coordinator(self):
        f = Fleet(n=1, hold_ms=1000, lab=False, unmeasured=True)
        self.addCleanup(f.stop)
        f.start()
        r = subprocess.run([ROGUE, f"tcp://127.0.0.1:{f.bus_port}", f.key, "reserved"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("no answer", r.stdout)
        # The envelope's header check refuses the name before the registration would.
        self.assertEqual(rejected(f)["field"], 1)
        self.assertNotIn("coordinator", {a["name"] for a in f.get("/api/agents")["agents"]})
        self.assertIn("'coordinator' is reserved", log_of(f, "coordinator"))
        # The agent itself will not take the name (keygen makes no key for it either, so it is
        # given the fleet key: the name is refused before any key is used).
        r = subprocess.run([AGENT, "--coordinator", f"tcp://127.0.0.1:{f.bus_port}", "--key-file",
                            f.key, "--name", "coordinator", "--spool-dir", f.spool("h1")],
                           capture_output=True, text=True, timeout=10)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("reserved for the coordinator", r.stderr)


class DataAddrPolicyTest(unittest.TestCase):
    def setUp(self):
        self.f = Fleet(n=2, hold_ms=1000, lab=False, unmeasured=True)
        self.addCleanup(self.f.stop)

    def test_the_default_policy_refuses_a_loopback_data_addr_and_says_why(self):
        f = self.f
        f.policy_args = []  # the defaults, on both sides
        f.hosts["h2"]["addr"] = "192.0.2.7"  # a unicast address: allowed (never dialled here)
        f.start_coordinator()
        f.start_agent("h1")
        f.start_agent("h2")
        wait_for("h2 online", lambda: "h2" in f.online(), 20)
        wait_for("h1 refused", lambda: rejected(f)["data-addr"] >= 1, 20)
        self.assertEqual(f.online(), {"h2"})
        log = log_of(f, "coordinator")
        self.assertIn("SM-AGENT-DATA-ADDR", log)
        self.assertIn("refused agent h1: its --data-addr 127.0.0.1 is a loopback address", log)
        agent_log = log_of(f, "agent-h1")
        self.assertIn("SM-DATA-ADDR-POLICY", agent_log)
        self.assertIn("127.0.0.1 is a loopback address", agent_log)

    def test_a_client_refuses_to_connect_to_a_server_address_outside_its_own_policy(self):
        f = self.f
        f.start_coordinator()  # allows loopback: h2 registers with 127.0.0.1
        f.policy_args = []     # h1, the client, keeps the default policy
        f.start_agent("h1")
        f.policy_args = ["--data-addr-allow", "loopback"]
        f.start_agent("h2")
        wait_for("both online", lambda: f.online() == {"h1", "h2"}, 20)
        rid = f.start_run({"name": "to-loopback", "hosts": ["h1", "h2"], "pairs": [["h1", "h2"]],
                           "repetitions": 1, "warmup": 0,
                           "tests": [{"workload": "stream", "scope": "pair", "transport": "tcp",
                                      "msg_size": 1000, "count": 50}]})
        run = f.wait_run(rid, timeout=60)
        pr = run["progress"]
        self.assertEqual((pr["done"], pr["failed"]), (0, pr["total"]), run)
        reasons = [r for (r,) in f.query("SELECT reason FROM jobs WHERE run_id = ?", rid)]
        self.assertTrue(reasons and all(
            "refused: server address: 127.0.0.1 is a loopback address" in r for r in reasons),
            reasons)
        self.assertEqual(f.query("SELECT COUNT(*) FROM results r JOIN jobs j ON r.job_id = j.id "
                                 "WHERE j.run_id = ? AND r.ok = 1", rid), [(0,)])

    def test_with_loopback_allowed_on_both_sides_a_pair_job_runs(self):
        f = self.f
        f.start()
        # "remeasure": 0: one job, even when this busy machine disturbs its sample.
        rid = f.start_run({"name": "loopback", "hosts": ["h1", "h2"], "pairs": [["h1", "h2"]],
                           "repetitions": 1, "remeasure": 0, "warmup": 0,
                           "tests": [{"workload": "stream", "scope": "pair", "transport": "tcp",
                                      "msg_size": 1000, "count": 50}]})
        run = f.wait_run(rid, timeout=60)
        self.assertEqual((run["state"], run["progress"]["done"]), ("done", 1), run)


class PairPortTest(unittest.TestCase):
    def test_a_pair_port_closes_a_stranger_and_serves_the_jobs_client(self):
        f = Fleet(n=2, hold_ms=1000, lab=False, unmeasured=True)
        self.addCleanup(f.stop)
        f.start()
        # The client is held back, so that the stranger is the first to reach the server's port.
        h1 = f.agents["h1"]
        h1.send_signal(signal.SIGSTOP)
        self.addCleanup(lambda: h1.poll() is None and h1.send_signal(signal.SIGCONT))
        rid = f.start_run({"name": "pair", "hosts": ["h1", "h2"], "pairs": [["h1", "h2"]],
                           "repetitions": 1, "remeasure": 0, "warmup": 0,
                           "tests": [{"workload": "stream", "scope": "pair", "transport": "tcp",
                                      "msg_size": 1000, "count": 50}]})
        m = wait_for("h2 to listen", lambda: re.search(
            r"server listening on 127\.0\.0\.1 port (\d+)", log_of(f, "agent-h2")), 10, 0.02)
        # All of 127/8 is loopback: 127.0.0.3 is another host as far as h2 can tell.
        with socket.socket() as s:
            s.bind(("127.0.0.3", 0))
            s.settimeout(5)
            s.connect(("127.0.0.1", int(m.group(1))))
            try:
                got = s.recv(1)
            except ConnectionResetError:
                got = b""
        self.assertEqual(got, b"", "the stranger was served as the job's client")
        h1.send_signal(signal.SIGCONT)
        run = f.wait_run(rid, timeout=60)
        self.assertEqual((run["state"], run["progress"]["done"]), ("done", 1), run)
        log = log_of(f, "agent-h2")
        self.assertIn("SM-PAIR-PEER-REFUSED", log)
        self.assertIn("closed a connection from 127.0.0.3 to a pair job's port: only the job's "
                      "client 127.0.0.1 may connect (1 refused so far)", log)


if __name__ == "__main__":
    unittest.main()
