"""The fleet end to end: the real coordinator and three real agents (on loopback; in lab
namespaces when run as root for the cable pulled), real nanomsg sockets, a real SQLite file
counted by query, and the faults a lab meets: a killed agent, a killed coordinator, a rogue
client, a cable pulled until the host is lost."""
import os
import signal
import subprocess
import time
import unittest

import json
import sqlite3
import urllib.error
import urllib.request

from smtest import AGENT, COORDINATOR, ROGUE, Fleet, netns, skip_root, stream_job, wait_for


def stopped(pid):
    """Whether the process is stopped (SIGSTOP), from /proc/PID/stat's state."""
    with open(f"/proc/{pid}/stat") as st:
        return st.read().rsplit(")", 1)[1].split()[0] == "T"


class FleetCase(unittest.TestCase):
    """Three agents and a coordinator, started for each test: on loopback (LAB False) for what
    no network namespace is needed for, in the lab when root (LAB None) for a cable pulled."""

    LAB = False

    def setUp(self):
        self.f = Fleet(n=3, hold_ms=1000, lab=self.LAB, unmeasured=True)
        self.addCleanup(self.f.stop)
        self.f.start()

    def wait_jobs(self, ids, states=("done",), timeout=60):
        def settled():
            jobs = [self.f.job(i) for i in ids]
            return jobs if all(j["state"] in ("done", "failed") for j in jobs) else None
        jobs = wait_for(f"{len(ids)} jobs to end", settled, timeout, 0.2)
        for j in jobs:
            self.assertIn(j["state"], states, j)
        return jobs


class FleetTest(FleetCase):
    def test_agents_register_with_their_facts_and_addresses(self):
        agents = {a["name"]: a for a in self.f.get("/api/agents")["agents"]}
        self.assertEqual(set(agents), {"h1", "h2", "h3"})
        for name, a in agents.items():
            self.assertEqual(a["status"], "online")
            self.assertGreater(a["facts"]["cores"], 0)
            self.assertTrue(a["facts"]["kernel"])
            self.assertEqual(a["data_addr"], self.f.hosts[name]["addr"])
            self.assertEqual(a["labels"], {"rack": name[1:], "role": "test"})
            self.assertEqual(len(a["boot"]), 32)

    def test_thirty_jobs_complete_and_all_thirty_results_are_stored(self):
        jobs = []
        for i in range(10):
            for h in ("h1", "h2", "h3"):
                jobs.append(stream_job(h, count=20 + i) if i % 2 else
                            {"host": h, "params": {"workload": "rr", "transport": "unix",
                                                   "count": 50}})
        ids = self.f.submit(jobs)
        self.assertEqual(len(ids), 30)
        done = self.wait_jobs(ids)
        self.assertEqual(self.f.stored(ids), (30, 30))
        for j in done:
            self.assertTrue(j["result"]["ok"], j)
        # The stream jobs moved exactly what they were asked to.
        for j in done:
            if j["params"]["workload"] == "stream":
                self.assertEqual(j["result"]["metrics"]["bytes"], j["params"]["count"] * 1000)

    def test_a_bad_job_request_is_refused_with_the_field_and_queues_nothing(self):
        before = self.f.query("SELECT COUNT(*) FROM jobs")[0][0]
        status, body = self.f.post("/api/jobs", [stream_job("h1"),
                                                 stream_job("h2", count=0)])
        self.assertEqual(status, 400)
        self.assertIn("count", body["error"])
        self.assertEqual(body["field"], "jobs[1].params")
        status, body = self.f.post("/api/jobs", [stream_job("nobody")])
        self.assertEqual(status, 400)
        self.assertIn("nobody", body["error"])
        self.assertEqual(self.f.query("SELECT COUNT(*) FROM jobs")[0][0], before)

    def test_killed_agent_fails_its_job_and_delivers_its_spool_after_restart(self):
        f = self.f
        # A long job on h1, killed mid-way: the job fails agent-lost, the fleet goes on.
        [long_job] = f.submit([stream_job("h1", count=None, duration_ms=8000)])
        wait_for("the long job to run", lambda: f.job(long_job)["state"] == "running", 10)
        f.kill(f.agents["h1"])
        job = wait_for("agent-lost", lambda: (j := f.job(long_job))["state"] == "failed" and j,
                       15)
        self.assertTrue(job["reason"].startswith("agent-lost"), job)
        [other] = f.submit([stream_job("h2")])
        self.wait_jobs([other])

        # A result measured while the coordinator cannot hear it waits in the spool, survives
        # the agent's death and arrives exactly once after the restart.
        f.start_agent("h1")
        wait_for("h1 back", lambda: "h1" in f.online(), 15)
        [short] = f.submit([stream_job("h1", count=None, duration_ms=1500)])
        wait_for("the short job to run", lambda: f.job(short)["state"] == "running", 10)
        f.coord.send_signal(signal.SIGSTOP)
        try:
            wait_for("the result in h1's spool",
                     lambda: any(n.endswith(".res") for n in os.listdir(f.spool("h1"))),
                     15)
            f.kill(f.agents["h1"])
        finally:
            f.coord.send_signal(signal.SIGCONT)
        f.start_agent("h1")
        job = self.wait_jobs([short], timeout=30)[0]
        self.assertTrue(job["result"]["ok"])
        self.assertEqual(f.stored([short]), (1, 1))
        wait_for("h1's spool to empty",
                 lambda: not any(n.endswith(".res") for n in os.listdir(f.spool("h1"))),
                 15)

    def test_coordinator_killed_in_a_burst_stores_every_result_exactly_once(self):
        f = self.f
        ids = f.submit([stream_job(h, count=100) for _ in range(20) for h in ("h1", "h2", "h3")])
        wait_for("a third of the results", lambda: f.stored(ids)[0] >= 20, 60, 0.05)
        f.kill(f.coord)
        mid = f.stored(ids)[0]
        f.start_coordinator()
        self.wait_jobs(ids, timeout=90)
        self.assertEqual(f.stored(ids), (60, 60))
        self.assertLess(mid, 60, "the kill came after the burst: the test proved nothing")
        health = f.get("/healthz")
        self.assertEqual(health["results"], f.query("SELECT COUNT(*) FROM results")[0][0])

    def test_rogue_messages_change_nothing_and_are_counted(self):
        f = self.f
        url = f"tcp://{f.bus_addr}:{f.bus_port}"
        before = f.get("/healthz")
        agents = {a["name"] for a in f.get("/api/agents")["agents"]}
        for case in ("wrong-key", "oversize", "deep", "garbage", "replay", "fleet-key",
                     "reserved"):
            r = subprocess.run([ROGUE, url, f.key, case], capture_output=True, text=True,
                               timeout=30)
            self.assertEqual(r.returncode, 0, r.stderr)
        after = f.get("/healthz")
        rb, ra = before["rejected"], after["rejected"]
        # wrong-key and fleet-key fail the MAC; reserved ("coordinator") is no agent's name;
        # oversize is over nanomsg's receive limit, the message limit: cut off unread.
        for reason, n in (("mac", 2), ("size", 0), ("depth", 1), ("json", 1), ("replay", 1),
                          ("field", 1)):
            self.assertEqual(ra[reason] - rb[reason], n, (reason, ra))
        self.assertEqual(ra["total"] - rb["total"], 6)
        self.assertEqual(after["results"], before["results"])
        # Only the one valid message of the replay case registered anything.
        self.assertEqual({a["name"] for a in f.get("/api/agents")["agents"]} - agents,
                         {"rogue-replay"})
        with open(os.path.join(f.dir, "coordinator.log")) as fh:
            log = fh.read()
        # A failed MAC names the sender it claimed, not "unknown".
        self.assertIn('claimed "rogue-key", unverified: MAC does not match', log)
        # An agent given the fleet key itself is refused, and the operator told what to do.
        self.assertRegex(log, r"SM-KEY-FLEET.*rogue-fleet.*keygen --agent rogue-fleet")
        self.assertIn("'coordinator' is reserved", log)

    def test_a_job_past_its_time_limit_fails_with_that_reason(self):
        f = self.f
        [job] = f.submit([stream_job("h2", count=1000000000, size=65536, time_limit_ms=1500)])
        j = self.wait_jobs([job], states=("failed",), timeout=30)[0]
        self.assertIn("time limit of 1500 ms", j["reason"])
        self.assertEqual(f.stored([job]), (1, 1))  # the failure is a result too
        [after] = f.submit([stream_job("h2")])
        self.wait_jobs([after])

    def test_sigterm_mid_job_exits_0_and_the_spooled_result_arrives_after_restart(self):
        f = self.f
        [job] = f.submit([stream_job("h1", count=None, duration_ms=6000)])
        wait_for("the job to run", lambda: f.job(job)["state"] == "running", 10)
        f.coord.send_signal(signal.SIGSTOP)
        try:
            f.kill(f.agents["h1"], signal.SIGTERM)
            self.assertEqual(f.agents["h1"].returncode, 0, f.log("agent-h1"))
            spooled = [n for n in os.listdir(f.spool("h1")) if n.endswith(".res")]
            self.assertEqual(len(spooled), 1)
        finally:
            f.coord.send_signal(signal.SIGCONT)
        f.start_agent("h1")
        # The job may first fail agent-lost (the coordinator was paused); the spooled result
        # then arrives and settles it with the agent's own reason.
        wait_for("the spooled result", lambda: f.stored([job]) == (1, 1), 30)
        j = wait_for("the job's final reason",
                     lambda: "cancelled" in (j := f.job(job))["reason"] and j, 10)
        self.assertEqual(j["state"], "failed")
        self.assertFalse(j["result"]["ok"])

    def test_a_coordinator_stopped_for_four_holds_loses_no_agent_and_no_job(self):
        """A pause of the coordinator (SIGSTOP, a starved host) is its own gap, not the agents'
        silence: they polled throughout, so none is lost and every job ends done."""
        f = self.f
        ids = f.submit([stream_job(h, count=None, duration_ms=1500)
                        for _ in range(3) for h in ("h1", "h2", "h3")])
        wait_for("a job to run", lambda: any(f.job(i)["state"] == "running" for i in ids), 10)
        f.coord.send_signal(signal.SIGSTOP)
        try:
            wait_for("the coordinator stopped", lambda: stopped(f.coord.pid), 10, 0.01)
            # Beyond the 3 x hold_ms that makes an agent lost, the coordinator stopped
            # throughout (a stop that ended early would make the test pass for nothing).
            since = time.monotonic()

            def four_holds_stopped():
                self.assertTrue(stopped(f.coord.pid), "the coordinator ran again too soon")
                return time.monotonic() - since >= 4 * f.hold_ms / 1000
            wait_for("four holds with the coordinator stopped", four_holds_stopped, 30, 0.05)
        finally:
            f.coord.send_signal(signal.SIGCONT)
        self.wait_jobs(ids, timeout=60)
        self.assertEqual(f.stored(ids), (9, 9))
        self.assertEqual(f.online(), {"h1", "h2", "h3"})
        with open(os.path.join(f.dir, "coordinator.log")) as log:
            text = log.read()
        self.assertNotIn("SM-AGENT-LOST", text)
        self.assertIn("SM-COORD-AWAY", text)

    def test_a_rotated_key_keeps_results_in_the_spool_until_the_agent_has_it(self):
        """docs/deploy.md's rotation: the coordinator gets the new key first; an agent still
        on the old one keeps what it measured and delivers it once it has the new key."""
        f = self.f
        [job] = f.submit([stream_job("h1", count=None, duration_ms=3000)])
        wait_for("the job to run", lambda: f.job(job)["state"] == "running", 10)
        new_key = os.path.join(f.dir, "new.key")
        subprocess.run([COORDINATOR, "keygen", new_key], check=True, capture_output=True)
        f.kill(f.coord, signal.SIGTERM)
        f.extra_args = ["--key-file", new_key]  # later options win
        f.start_coordinator()
        # The job ends on the agent; every delivery is refused as a wrong MAC.
        wait_for("refused deliveries", lambda: f.get("/healthz")["rejected"]["mac"] >= 3, 30)
        wait_for("the result in the spool",
                 lambda: [n for n in os.listdir(f.spool("h1")) if n.endswith(".res")], 10)
        self.assertEqual(f.stored([job]), (0, 0))
        f.kill(f.agents["h1"], signal.SIGTERM)
        self.assertEqual(f.agents["h1"].returncode, 0, f.log("agent-h1"))
        f.start_agent("h1", fleet_key=new_key)  # its own key, derived from the new fleet key
        wait_for("the spooled result", lambda: f.stored([job]) == (1, 1), 30)
        wait_for("an empty spool",
                 lambda: not [n for n in os.listdir(f.spool("h1")) if n.endswith(".res")], 10)
        self.assertTrue(f.job(job)["result"]["ok"], f.job(job))
        self.assertEqual(f.stored([job]), (1, 1))

    def test_a_rotation_with_the_previous_key_loses_no_poll_until_its_grace_ends(self):
        """docs/deploy.md's rotation: the coordinator takes the new fleet key and keeps the
        previous one for a grace period; agents still on their old keys go on working, each
        logged once, and one given its new key is taken under that."""
        f = self.f
        old_key = f.key
        new_key = os.path.join(f.dir, "new.key")
        subprocess.run([COORDINATOR, "keygen", new_key], check=True, capture_output=True)
        f.kill(f.coord, signal.SIGTERM)
        f.extra_args = ["--key-file", new_key, "--previous-key-file", old_key]
        f.start_coordinator()
        ids = f.submit([stream_job(h) for h in ("h1", "h2", "h3")])
        self.wait_jobs(ids)
        self.assertEqual(f.stored(ids), (3, 3))
        self.assertEqual(f.get("/healthz")["rejected"]["mac"], 0)
        with open(os.path.join(f.dir, "coordinator.log")) as fh:
            log = fh.read()
        for h in ("h1", "h2", "h3"):
            self.assertEqual(log.count(f"agent {h} signed with the previous key"), 1, log)
        # h1 gets its new key: taken, and its replies are sealed with it.
        f.kill(f.agents["h1"], signal.SIGTERM)
        f.start_agent("h1", fleet_key=new_key)
        [job] = f.submit([stream_job("h1")])
        self.wait_jobs([job])
        # Past the grace period the previous key is refused.
        f.kill(f.coord, signal.SIGTERM)
        f.extra_args += ["--previous-key-grace-ms", "0"]
        f.start_coordinator()
        wait_for("h2's polls refused", lambda: f.get("/healthz")["rejected"]["mac"] >= 2, 30)
        [job] = f.submit([stream_job("h1")])
        self.wait_jobs([job])

    def test_an_acked_result_the_agent_cannot_delete_is_sent_once_not_in_a_loop(self):
        """A spool that refuses the delete after the ack (here an immutable directory, which
        stops root too) had the agent resend the result with every poll and the coordinator
        answer each at once: thousands of polls a second."""
        f = self.f
        if subprocess.run(["which", "chattr"], capture_output=True).returncode != 0:
            self.skipTest("needs chattr")
        [job] = f.submit([stream_job("h1", count=None, duration_ms=1500)])
        wait_for("the job to run", lambda: f.job(job)["state"] == "running", 10)
        spool = f.spool("h1")
        f.coord.send_signal(signal.SIGSTOP)
        try:
            wait_for("the result in h1's spool",
                     lambda: any(n.endswith(".res") for n in os.listdir(spool)), 15)
            r = subprocess.run(["chattr", "+i", spool], capture_output=True, text=True)
            if r.returncode != 0:
                self.skipTest(f"chattr +i is not supported here: {r.stderr.strip()}")
            self.addCleanup(subprocess.run, ["chattr", "-i", spool], capture_output=True)
        finally:
            f.coord.send_signal(signal.SIGCONT)
        self.wait_jobs([job], timeout=30)
        # Three agents, each held hold_ms (1 s) per poll: 15 polls take about 5 s, at least 4
        # (five of each agent's, one at most in flight). The loop made thousands a second.
        def polls():
            return f.get("/healthz")["counters"]["polls"]
        before, since = polls(), time.monotonic()
        wait_for("15 more polls", lambda: polls() - before >= 15, 60)
        took = time.monotonic() - since
        self.assertGreater(took, 2.5, f"15 polls in {took:.2f} s")
        self.assertEqual(f.stored([job]), (1, 1))
        self.assertEqual(f.log("agent-h1").count("SM-SPOOL-UNLINK"), 1, f.log("agent-h1"))
        self.assertEqual(len([n for n in os.listdir(spool) if n.endswith(".res")]), 1)

    def test_healthz_says_the_store_is_failing_while_its_file_is_corrupt(self):
        f = self.f
        status, health = f.get_status("/healthz")
        self.assertEqual((status, health["ok"]), (200, True), health)
        self.assertNotIn("store_error", health)
        # Everything into the main file, then garbage over every page but the schema's.
        db = sqlite3.connect(f.db, timeout=10)
        try:
            page = db.execute("PRAGMA page_size").fetchone()[0]
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            pages = db.execute("PRAGMA page_count").fetchone()[0]
        finally:
            db.close()
        self.assertGreater(pages, 2)
        with open(f.db, "r+b") as fh:
            fh.seek(page)
            fh.write(b"\x5a" * (page * (pages - 1)))

        def failing():
            f.post("/api/jobs", [stream_job("h1")])  # a write: refused, or it fails inside
            st, h = f.get_status("/healthz")
            return (st, h) if not h.get("ok", True) else None
        status, health = wait_for("/healthz to say the store fails", failing, 15, 0.5)
        self.assertEqual(status, 503, health)
        self.assertIn("malformed", health["store_error"])
        self.assertGreater(health["store_error_at_ms"], 0)


class FleetHoldTest(FleetCase):
    """The hold grows with the fleet: with --poll-rate 1, three agents are held 3 s rather
    than --hold-ms 1000, so the fleet polls once a second while idle; each agent heard the
    hold and waits for it (it neither sends again early nor is counted lost), and work still
    reaches a held poll at once."""

    def setUp(self):
        self.f = Fleet(n=3, hold_ms=1000, lab=False, unmeasured=True)
        self.f.extra_args = ["--poll-rate", "1"]
        self.addCleanup(self.f.stop)
        self.f.start()

    def test_an_idle_fleet_polls_at_the_rate_asked_and_stays_online(self):
        f = self.f
        self.assertEqual(f.get("/healthz")["hold_ms"], 3000)
        # Past the registration polls, which were held as long as the agents then waited.
        time.sleep(4)
        before = f.get("/healthz")["counters"]["polls"]
        time.sleep(9)
        polls = f.get("/healthz")["counters"]["polls"] - before
        # Held 3 s: about 9 polls in 9 s (the job-less fleet held 1 s would make 27).
        self.assertLessEqual(polls, 15, "polls in 9 s of an idle fleet held 3 s")
        self.assertGreaterEqual(polls, 5)
        # 9 s is 3 x 3 s: an agent measured against --hold-ms would be lost by now.
        self.assertEqual(f.online(), {"h1", "h2", "h3"})
        self.assertNotIn("SM-AGENT-LOST", f.log("coordinator"))
        ids = f.submit([stream_job(h) for h in ("h1", "h2", "h3")])
        for j in self.wait_jobs(ids):
            self.assertTrue(j["result"]["ok"], j)
        self.assertEqual(f.stored(ids), (3, 3))


@netns
class FleetCutTest(FleetCase):
    """A cable pulled (h3's veth down) until the coordinator counts h3 lost: the lab's
    namespaces when root; without them (not root) there is no cable to pull."""

    LAB = None

    def test_a_host_cut_off_until_lost_comes_back_and_loses_nothing(self):
        f = self.f
        if not f.lab:
            skip_root(self, "needs the namespace lab (run as root)")
        [job] = f.submit([stream_job("h3", count=None, duration_ms=3000)])
        wait_for("h3's job to run", lambda: f.job(job)["state"] == "running", 10)
        veth = f.hosts["h3"]["veth"]
        subprocess.run(["ip", "link", "set", veth, "down"], check=True)
        try:
            # 3 x hold_ms without a poll: lost.
            wait_for("h3 lost", lambda: "h3" not in f.online(), 30)
        finally:
            subprocess.run(["ip", "link", "set", veth, "up"], check=True)
        wait_for("h3 back", lambda: "h3" in f.online(), 30)
        j = self.wait_jobs([job], timeout=30)[0]
        self.assertTrue(j["result"]["ok"], j)
        self.assertEqual(f.stored([job]), (1, 1))
        [after] = f.submit([stream_job("h3")])
        self.wait_jobs([after])


class CliTest(unittest.TestCase):
    """Both daemons refuse bad options and unsafe keys in one line, before doing anything."""

    def setUp(self):
        self.f = Fleet(n=1, lab=False)
        self.addCleanup(self.f.stop)

    def run_cmd(self, *args):
        return subprocess.run(list(args), capture_output=True, text=True, timeout=30)

    def test_bad_options_exit_2_naming_them(self):
        f = self.f
        for args, name in (([COORDINATOR, "--bogus"], "--bogus"),
                           ([COORDINATOR, "--key-file", f.key, "--hold-ms", "7"], "--hold-ms"),
                           ([COORDINATOR, "--key-file", f.key, "--listen", "udp://x"], "--listen"),
                           ([COORDINATOR], "--key-file"),
                           ([COORDINATOR, "--key-file", f.key, "--max-agents", "0"],
                            "--max-agents"),
                           ([COORDINATOR, "--key-file", f.key, "--data-addr-allow", "lan"],
                            "--data-addr-allow"),
                           ([AGENT, "--coordinator", "tcp://127.0.0.1:1", "--key-file", f.key,
                             "--data-addr-allow", "10.0.0.0/40"], "--data-addr-allow"),
                           ([AGENT, "--coordinator", "tcp://127.0.0.1:1", "--key-file", f.key,
                             "--labels", "bad key=1"], "--labels"),
                           ([AGENT, "--coordinator", "tcp://127.0.0.1:1", "--key-file", f.key,
                             "--data-addr", "example.com"], "--data-addr"),
                           ([AGENT, "--coordinator", "tcp://127.0.0.1:1"], "--key-file"),
                           ([AGENT, "--coordinator", "tcp://127.0.0.1:1", "--key-file", f.key,
                             "--name", "coordinator"], "--name"),
                           ([COORDINATOR, "keygen", "--agent", "coordinator", "--key-file",
                             f.key, os.path.join(f.dir, "c.key")], "--agent"),
                           ([COORDINATOR, "--key-file", f.key, "--previous-key-file", f.key],
                            "--previous-key-file")):
            r = self.run_cmd(*args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            lines = r.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, r.stderr)
            self.assertIn(name, lines[0])

    def test_a_key_others_can_read_is_refused_and_keygen_never_overwrites(self):
        f = self.f
        os.chmod(f.key, 0o644)
        r = self.run_cmd(COORDINATOR, "--key-file", f.key, "--db", f.db)
        self.assertEqual(r.returncode, 2)
        self.assertIn("chmod 600", r.stderr)
        r = self.run_cmd(AGENT, "--coordinator", "tcp://127.0.0.1:1", "--key-file", f.key)
        self.assertEqual(r.returncode, 2)
        with open(f.key) as k:
            before = k.read()
        r = self.run_cmd(COORDINATOR, "keygen", f.key)
        self.assertNotEqual(r.returncode, 0)
        with open(f.key) as k:
            self.assertEqual(k.read(), before)
        fresh = os.path.join(f.dir, "fresh.key")
        self.assertEqual(self.run_cmd(COORDINATOR, "keygen", fresh).returncode, 0)
        self.assertEqual(os.stat(fresh).st_mode & 0o777, 0o600)
        with open(fresh) as k:
            self.assertRegex(k.read(), r"^[0-9a-f]{64}\n$")
        # An agent's own key: 0600, never overwritten, the same for the same name, other for
        # another name, and never the fleet key itself.
        a1, a1b, a2 = (os.path.join(f.dir, n) for n in ("a1.key", "a1b.key", "a2.key"))
        for name, path in (("h1", a1), ("h1", a1b), ("h2", a2)):
            r = self.run_cmd(COORDINATOR, "keygen", "--agent", name, "--key-file", fresh, path)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(os.stat(path).st_mode & 0o777, 0o600)
        def text(path):
            with open(path) as fh:
                return fh.read()
        keys = [text(p) for p in (fresh, a1, a1b, a2)]
        self.assertEqual(keys[1], keys[2])
        self.assertEqual(len({keys[0], keys[1], keys[3]}), 3)
        r = self.run_cmd(COORDINATOR, "keygen", "--agent", "h2", "--key-file", fresh, a1)
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(text(a1), keys[1])


def post(url, data, auth=None):
    """POSTs data with an optional Authorization header; returns (status, body)."""
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    if auth:
        req.add_header("Authorization", auth)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


class TokenTest(unittest.TestCase):
    """A listener off loopback is used only by holders of the token."""

    def setUp(self):
        self.f = Fleet(n=1, lab=False)
        self.addCleanup(self.f.stop)

    def test_a_public_listener_without_a_token_file_refuses_to_start(self):
        r = subprocess.run([COORDINATOR, "--key-file", self.f.key, "--db", self.f.db, "--http",
                            f"0.0.0.0:{self.f.http_port}"], capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--token-file", r.stderr)

    def test_post_and_get_need_the_bearer_token(self):
        f = self.f
        token = os.path.join(f.dir, "token")
        r = subprocess.run([COORDINATOR, "keygen", "--token", token], capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("dashboard token", r.stdout)
        self.assertEqual(os.stat(token).st_mode & 0o777, 0o600)
        with open(token) as t:
            secret = t.read().strip()
        with open(f.key) as k:
            self.assertNotEqual(secret, k.read().strip())
        f.extra_args = ["--http", f"0.0.0.0:{f.http_port}", "--token-file", token,
                        "--insecure-http"]
        f.headers = {"Authorization": f"Bearer {secret}"}
        f.start()
        jobs = json.dumps([stream_job("h1")]).encode()
        for auth, want in ((None, 401), ("Bearer wrong", 401), (f"Bearer {secret}", 201)):
            status, body = post(f.url + "/api/jobs", jobs, auth)
            self.assertEqual(status, want, auth)
            if want == 401:
                self.assertEqual(json.loads(body)["field"], "Authorization")
        self.assertEqual(f.query("SELECT COUNT(*) FROM jobs")[0][0], 1)
        self.assertIn("agents", f.get("/api/agents"))
        f.headers = {}
        self.assertEqual(f.get_status("/api/agents")[0], 401)

    def test_under_systemd_the_token_credential_is_used_without_an_option(self):
        f = self.f
        creds = os.path.join(f.dir, "credentials")
        os.mkdir(creds, 0o700)
        token = os.path.join(creds, "token")
        subprocess.run([COORDINATOR, "keygen", "--token", token], check=True, capture_output=True)
        with open(token) as t:
            secret = t.read().strip()
        os.environ["CREDENTIALS_DIRECTORY"] = creds
        self.addCleanup(os.environ.pop, "CREDENTIALS_DIRECTORY")
        f.extra_args = ["--http", f"0.0.0.0:{f.http_port}", "--insecure-http"]
        f.headers = {"Authorization": f"Bearer {secret}"}
        f.start()  # a public listener with no --token-file would refuse to start
        jobs = json.dumps([stream_job("h1")]).encode()
        for auth, want in ((None, 401), (f"Bearer {secret}", 201)):
            self.assertEqual(post(f.url + "/api/jobs", jobs, auth)[0], want, auth)


if __name__ == "__main__":
    unittest.main()
