"""Fingerprints on the wire, loopback fleet (no root): every agent sends its fingerprint at its
start; before a run's first job on it, it collects one again, and the run keeps the one each
host had; a coordinator whose store was replaced hears it again without asking; an agent that
restarts sends it again. The real coordinator, agents and SQLite store."""
import hashlib
import hmac
import json
import os
import signal
import time
import unittest

from smtest import Fleet, wait_for

RUN = {"name": "fp", "hosts": "all", "repetitions": 2, "warmup": 0, "parallel": False,
       "tests": [{"workload": "stream", "scope": "local", "transport": "unix",
                  "msg_size": 1000, "count": 50}]}


class FingerprintWireTest(unittest.TestCase):
    def setUp(self):
        self.f = Fleet(n=2, hold_ms=1000, lab=False)
        self.addCleanup(self.f.stop)
        self.f.start()

    def rows(self, agent):
        return self.f.query("SELECT id, hash, body_json, first_seen_ms, last_seen_ms"
                            " FROM fingerprints WHERE agent = ? ORDER BY id", agent)

    def wait_rows(self, agent, check, what, timeout=20):
        return wait_for(what, lambda: (lambda r: r if check(r) else None)(self.rows(agent)),
                        timeout, 0.1)

    def test_agents_send_one_at_start_and_again_before_a_runs_first_job(self):
        f = self.f
        for h in ("h1", "h2"):
            rows = self.wait_rows(h, lambda r: len(r) == 1, f"{h}'s fingerprint")
            doc = json.loads(rows[0][2])
            self.assertEqual(doc["version"], 1)
            items = doc["items"]
            self.assertEqual(items["kernel.release"], os.uname().release)
            with open("/proc/sys/net/ipv4/tcp_rmem") as fp:
                self.assertEqual(items["sysctl.net.ipv4.tcp_rmem"], " ".join(fp.read().split()))
            self.assertEqual(items["info.data_if"], "lo")  # its data address is 127.0.0.1
            self.assertLess(doc["collect_us"], 1_000_000)
        before = {h: self.rows(h)[0] for h in ("h1", "h2")}
        time.sleep(0.05)
        rid = f.start_run(RUN)
        self.assertEqual(f.wait_run(rid, 120)["state"], "done")
        for h in ("h1", "h2"):
            rows = self.rows(h)
            # The same settings: no new row, but seen again when the run began there.
            self.assertEqual(len(rows), 1, rows)
            self.assertEqual(rows[0][1], before[h][1])
            self.assertGreater(rows[0][4], before[h][4])
        ties = f.query("SELECT agent, fingerprint_id FROM run_fingerprints WHERE run_id = ?"
                       " ORDER BY agent", rid)
        self.assertEqual(ties, [("h1", before["h1"][0]), ("h2", before["h2"][0])])

    def test_a_replaced_store_and_a_restarted_agent_hear_it_again(self):
        f = self.f
        self.wait_rows("h1", lambda r: len(r) == 1, "h1's fingerprint")
        # The coordinator comes back on an empty store: the agents see its new store id and
        # send their fingerprints unasked.
        f.kill(f.coord, signal.SIGTERM)
        for sfx in ("", "-wal", "-shm"):
            try:
                os.unlink(f.db + sfx)
            except FileNotFoundError:
                pass
        f.start_coordinator()
        for h in ("h1", "h2"):
            self.wait_rows(h, lambda r: len(r) == 1, f"{h}'s fingerprint in the new store")
        # An agent restarted sends it at its start: seen again, the same row.
        seen = self.rows("h2")[0][4]
        f.kill(f.agents["h2"], signal.SIGTERM)
        f.start_agent("h2")
        self.wait_rows("h2", lambda r: len(r) == 1 and r[0][4] > seen, "h2 seen again")


# What `systemd-id128 machine-id --app-specific=` gives with the agent's application id.
APP_ID = bytes.fromhex("6c1e0b5d923f4a87b4217ec9580da316")


def app_specific(machine_id):
    h = bytearray(hmac.new(bytes.fromhex(machine_id), APP_ID, hashlib.sha256).digest()[:16])
    h[6] = (h[6] & 0x0F) | 0x40
    h[8] = (h[8] & 0x3F) | 0x80
    return h.hex()


class FingerprintPrivacyTest(unittest.TestCase):
    """A host booted with secrets on its kernel command line (the agent reads the line from
    SM_FP_PROC_CMDLINE) sends none of them: only the allow-listed parameters and a count of
    the others. The machine id goes out only as its keyed hash."""

    CMDLINE = ("BOOT_IMAGE=/vmlinuz root=/dev/nfs secret=hunter2 isolcpus=1 "
               "nfsroot=10.9.8.7:/srv/lab,vers=4,sec=sys:nfspass=swordfish "
               "ip=dhcp mitigations=off quiet -- token=initsecret\n")

    def setUp(self):
        self.f = Fleet(n=2, hold_ms=1000, lab=False)
        self.addCleanup(self.f.stop)
        path = os.path.join(self.f.dir, "cmdline")
        with open(path, "w") as fh:
            fh.write(self.CMDLINE)
        self.f.start_coordinator()
        self.f.start_agent("h1", env={"SM_FP_PROC_CMDLINE": path})
        self.f.start_agent("h2")
        wait_for("both agents online", lambda: self.f.online() >= {"h1", "h2"}, 20)

    def test_secrets_on_the_command_line_are_not_sent_and_isolcpus_is(self):
        f = self.f
        rows = wait_for("h1's fingerprint",
                        lambda: f.query("SELECT body_json FROM fingerprints WHERE agent = 'h1'"),
                        20, 0.1)
        stored = rows[0][0]
        api = json.dumps(f.get("/api/agents/h1/fingerprint"))
        agents = json.dumps(f.get("/api/agents"))
        for text in (stored, api, agents):
            for secret in ("hunter2", "swordfish", "nfspass", "10.9.8.7", "/srv/lab",
                           "initsecret", "vmlinuz"):
                self.assertNotIn(secret, text)
        items = json.loads(stored)["items"]
        self.assertEqual(items["kernel.cmdline.isolcpus"], "1")
        self.assertEqual(items["kernel.cmdline.mitigations"], "off")
        self.assertNotIn("info.kernel.cmdline", items)
        # BOOT_IMAGE root secret nfsroot ip quiet, and init's token
        self.assertEqual(items["info.kernel.cmdline_left_out"], "7")
        self.assertEqual(sorted(k for k in items if k.startswith("kernel.cmdline.")),
                         ["kernel.cmdline.isolcpus", "kernel.cmdline.mitigations"])

    def test_the_machine_id_is_sent_as_a_hash_the_same_for_both(self):
        try:
            with open("/etc/machine-id") as fh:
                mid = fh.read().strip()
        except OSError:
            self.skipTest("no /etc/machine-id")
        facts = {a["name"]: a["facts"] for a in self.f.get("/api/agents")["agents"]}
        self.assertEqual(facts["h1"]["machine_id"], app_specific(mid))
        self.assertEqual(facts["h2"]["machine_id"], facts["h1"]["machine_id"])
        self.assertNotIn(mid, json.dumps(self.f.get("/api/agents")))
        self.assertNotIn(mid, json.dumps(self.f.query("SELECT body_json FROM fingerprints")))


if __name__ == "__main__":
    unittest.main()
