"""Proving the cause by experiment, end to end on the lab (network namespaces, root).

`sockmatrix explain` re-measures the anomaly's test on the odd host with each suspect given the
fleet's value, beside untreated controls, and says which one closes the gap:

- h2's namespace gets tiny TCP receive buffers (net.ipv4.tcp_rmem) and a decoy that does not
  touch the test (net.ipv4.tcp_keepalive_time): with --allow-experiment sysctl the buffers are
  the cause, the keepalive is not the cause, each with its interval, both sysctls read as they
  did before, and the run's anomaly (API and `sockmatrix anomalies`) carries the proven cause;
  the reverse (h2's value given to h1) confirms the buffers and not the keepalive;
- h2's loopback shaped by tbf (lab.sh --slow-tcp h2:x8), and its GRO turned off (a decoy: lo's
  receive path has no GRO): with --allow-experiment qdisc,offload the tbf is the cause and the
  offload is not, the tbf is put back exactly (the fingerprint's text, and tc's rate, burst and
  limit, as before) and GRO is off again; h2's tbf given to h1 confirms it, h2's GRO does not,
  and h1 has its noqueue and its GRO again;
- agents without --allow-experiment: nothing is run, each suspect names the flag;
- socket parts (TCP_CONGESTION, TCP_NOTSENT_LOWAT) reach the job's own sockets, no flag needed;
- a kill -9 of the agent while a treatment is in place: the next start puts the setting back;
  a SIGTERM: the agent puts it back before it exits.

The real coordinator, agents, SQLite store and CLI."""
import json
import signal
import subprocess
import unittest

from smtest import BIN_DIR, Fleet, can_lab, unless_root, unless_stolen, wait_for

CLI = f"{BIN_DIR}/sockmatrix"

TEST = {"workload": "stream", "scope": "local", "transport": "tcp", "framing": "lines",
        "msg_size": 128, "count": 8192}
TEST_LABEL = "stream tcp lines 128 B x 8192"
RMEM = ("net.ipv4.tcp_rmem", "4096 4096 4096")
DECOY = ("net.ipv4.tcp_keepalive_time", "7201")
GRO = "if.lo.offload.gro"

# lo's GRO on or off by the ethtool ioctl (ETHTOOL_SGRO, then ETHTOOL_GGRO to read it back),
# run in a host's namespace: the lab has no ethtool command.
SET_GRO = """
import ctypes, fcntl, socket, struct, sys
def call(cmd, data=0):
    buf = ctypes.create_string_buffer(struct.pack("II", cmd, data), 8)
    fcntl.ioctl(socket.socket(), 0x8946, struct.pack("16sP", b"lo", ctypes.addressof(buf)))
    return struct.unpack("II", buf.raw)[1]
call(0x2c, int(sys.argv[1]))
print(call(0x2b))
"""


@unless_root(can_lab(), "needs root for the lab's network namespaces")
class ExplainLabTest(unittest.TestCase):
    def fleet(self, agent_args=(), lab_args=(), sysctls=()):
        f = Fleet(n=3, hold_ms=1000, lab_args=lab_args)
        self.addCleanup(f.stop)
        f.agent_args = ["--affinity", "0,1", *agent_args]
        f.start()
        # The agents send their fingerprint again when a run starts: the run sees these.
        for key, value in sysctls:
            self.netns(f, "h2", "sysctl", "-qw", f"{key}={value}")
        return f

    def netns(self, f, host, *cmd):
        return subprocess.run(["ip", "netns", "exec", f.hosts[host]["netns"], *cmd],
                              capture_output=True, text=True, check=True, timeout=30).stdout

    def sysctl(self, f, key):
        return " ".join(self.netns(f, "h2", "sysctl", "-n", key).split())

    def items(self, f, host):
        return f.get(f"/api/agents/{host}/fingerprint")["fingerprint"]["items"]

    def flagged_run(self, f, *items):
        rid = f.start_run({"name": "odd-h2", "hosts": "all", "repetitions": 8, "warmup": 1,
                           "parallel": False, "tests": [TEST]})
        r = f.wait_run(rid, 300)
        self.assertEqual(r["state"], "done", r)
        doc = f.get(f"/api/runs/{rid}/anomalies")
        flags = [a for a in doc["anomalies"] if a["kind"] == "fleet" and not a["ratio"]]
        # The premise is a host quiet enough to measure: when the agents measured most of h2's
        # samples disturbed (a CPU taken by something else), the product's rule says
        # inconclusive, and that is checked; there is then nothing to explain.
        short = [c for c in doc.get("inconclusive", []) if c["row"] == "h2"]
        if not flags and short and "disturbed" in short[0]["why"]:
            self.assertEqual(doc["verdict"], "inconclusive", doc)
            self.skipTest(f"h2 was disturbed while run {rid} measured it: {short[0]['why']}")
        self.assertEqual([a["host"] for a in flags], ["h2"], doc)
        listed = [d["item"] for d in flags[0]["differences"]]
        for item in items:
            self.assertIn(item, listed, flags[0])
        return rid

    def explain(self, f, rid):
        out = subprocess.run([CLI, "--coordinator", f.url, "explain", str(rid), "--host", "h2",
                              "--format", "json"], capture_output=True, text=True, timeout=600)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertTrue(out.stdout.startswith("{"), out.stderr)
        answer = json.loads(out.stdout)
        return answer, {s["item"]: s for s in answer["suspects"]}, \
            f"{out.stderr}\n{json.dumps(answer, indent=1)}"

    @unless_stolen
    def test_small_receive_buffers_are_the_cause_and_the_decoy_is_not(self):
        f = self.fleet(("--allow-experiment", "sysctl"), sysctls=(RMEM, DECOY))
        rid = self.flagged_run(f, "sysctl." + RMEM[0], "sysctl." + DECOY[0])
        before = self.items(f, "h2")
        fleet_rmem = self.items(f, "h1")["sysctl." + RMEM[0]]

        answer, by_item, why = self.explain(f, rid)
        self.assertEqual(answer["state"], "done", why)
        rmem, decoy = by_item["sysctl." + RMEM[0]], by_item["sysctl." + DECOY[0]]
        # The premise is a host quiet enough to measure. Disturbed samples are left out, as in
        # runs; when the agent measured so many disturbed that fewer than 3 clean control
        # samples remain, the experiment says inconclusive, as it must: that is checked, and
        # the rest cannot be. With 3 or more clean ones the answer must stand on them.
        ctrl = answer["control"]
        if ctrl["n"] < 3:
            self.assertEqual(rmem["verdict"], "inconclusive", why)
            self.skipTest(f"h2 was disturbed while the experiment ran: {ctrl['disturbed']} of "
                          f"{ctrl['disturbed'] + ctrl['n']} control samples")
        self.assertEqual(rmem["treatment"], f"sysctl {RMEM[0]}={fleet_rmem}", why)
        self.assertEqual(rmem["verdict"], "cause", why)
        self.assertGreaterEqual(rmem["lo"], 0.5, why)
        self.assertEqual(decoy["treatment"], f"sysctl {DECOY[0]}=7200", why)
        # A decoy's interval holds 0; it is narrow enough to clear 50% only on clean samples.
        # With some disturbed (measured by the agent), too wide to decide is the honest answer.
        if decoy["verdict"] == "inconclusive" and ctrl["disturbed"] > 0:
            self.assertLessEqual(decoy["lo"], 0, why)
            self.skipTest(f"h2 was disturbed while the experiment ran ({ctrl['disturbed']} "
                          "control samples): the decoy's interval is too wide to decide")
        # Not the cause: its interval stays below half the gap. Around 0 or a little below it
        # (keepalive cannot change this test, but a treated job is one step of its own after
        # the control), both are "not the cause". h2's times under 4 KiB buffers spread about
        # 2x on clean samples (0.020 to 0.038 s, where the fleet takes 0.008 s), so 15 of each
        # have been seen to leave [-53%, 56%]: too wide, honestly. The decoy is then never a
        # part of the cause; "not the cause" itself is held to in the tbf case (lo's GRO).
        if decoy["verdict"] == "inconclusive":
            self.assertLessEqual(decoy["lo"], 0, why)
            self.assertEqual(decoy["n_treated"], 15, why)  # the whole budget was spent
        else:
            self.assertEqual(decoy["verdict"], "not the cause", why)
            self.assertLess(decoy["hi"], 0.5, why)
        self.assertEqual(answer["cause"]["item"], "sysctl." + RMEM[0], why)
        self.assertIn(f"{RMEM[0]} is the cause", answer["summary"], why)
        # The reverse on h1 (h2's buffers on a normal host) opens the gap again; the decoy's
        # reverse does not.
        self.assert_confirms(rmem, f"sysctl {RMEM[0]}={RMEM[1]}", why, at_least_part=True)
        self.assertRegex(answer["summary"], r"; confirmed (in part )?on h1: h2's value opens ",
                         why)
        rev = decoy["reverse"]
        self.assertEqual(rev["treatment"], f"sysctl {DECOY[0]}={DECOY[1]}", why)
        self.assertIn(rev["verdict"], ("does not confirm", "inconclusive"), why)
        self.assertLess(rev["lo"], 0.5, why)

        # h2 and h1 as they were: both sysctls, and the fingerprints the agents sent since.
        self.assertEqual(self.sysctl(f, RMEM[0]), RMEM[1])
        self.assertEqual(self.sysctl(f, DECOY[0]), DECOY[1])
        self.assertEqual(self.items(f, "h2"), before)
        self.assertEqual(self.items(f, "h1")["sysctl." + RMEM[0]], fleet_rmem)
        self.assertIn("SM-TREAT-UNDO", open(f"{f.dir}/agent-h1.log").read())
        self.assertIn("SM-TREAT-UNDO", open(f"{f.dir}/agent-h2.log").read())

        # The run's anomaly now carries the proven cause (its cached report was dropped when
        # the experiment ended), and `anomalies` says it.
        doc = f.get(f"/api/runs/{rid}/anomalies")
        flag = next(a for a in doc["anomalies"] if a["host"] == "h2" and a["kind"] == "fleet")
        self.assertEqual(flag["experiment"]["run"], answer["run"], flag)
        self.assertEqual(flag["experiment"]["summary"], answer["summary"], flag)
        self.assertEqual(flag["cause"]["item"], "sysctl." + RMEM[0], flag)
        self.assertEqual(flag["cause"]["experiment"], answer["run"], flag)
        self.assertEqual((flag["cause"]["lo"], flag["cause"]["hi"]), (rmem["lo"], rmem["hi"]))
        text = subprocess.run([CLI, "--coordinator", f.url, "anomalies", str(rid)],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn(f"{answer['summary']} (experiment run {answer['run']} of ", text.stdout)
        md = subprocess.run([CLI, "--coordinator", f.url, "export", str(rid), "--format", "md"],
                            capture_output=True, text=True, timeout=60)
        self.assertEqual(md.returncode, 0, md.stderr)
        self.assertIn(f"\nProven by experiment run {answer['run']} ({TEST_LABEL}): "
                      f"{answer['summary']}\n", md.stdout)

        # The experiment is a run of its own, linked to the run it explains; explain of it
        # prints its answer for people.
        xp = f.get(f"/api/runs/{answer['run']}/experiment")
        self.assertEqual(xp["explains"], str(rid))
        text = subprocess.run([CLI, "--coordinator", f.url, "explain", answer["run"]],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn(f"h2: {RMEM[0]} is the cause", text.stdout)
        self.assertIn("not the cause", text.stdout)

    def assert_confirms(self, suspect, treatment, why, at_least_part=False):
        """The suspect's reverse, on h1, gives it h2's value and opens most of the gap; or,
        at_least_part, a share of it clear of zero. h2's control under tiny receive buffers
        is noisy, and the reverse's denominator (h1's control against h2's) carries that
        noise: "opens 109% of it [39%, 354%]" was seen, honestly "confirms in part"."""
        rev = suspect["reverse"]
        self.assertIsNotNone(rev, why)
        self.assertEqual((rev["host"], rev["treatment"]), ("h1", treatment), why)
        if rev["n_control"] < 3:  # the product's rule, as for h2's control
            self.assertEqual(rev["verdict"], "inconclusive", why)
            self.skipTest(f"h1 was disturbed while the experiment ran: {rev['why']}")
        if at_least_part:
            self.assertIn(rev["verdict"], ("confirms", "confirms in part"), why)
            self.assertGreater(rev["lo"], 0, why)
            return
        self.assertEqual(rev["verdict"], "confirms", why)
        self.assertGreaterEqual(rev["lo"], 0.5, why)

    def tbf(self, f):
        """h2's root qdisc on lo as tc shows it, without the handle the kernel picks anew."""
        shown = self.netns(f, "h2", "tc", "qdisc", "show", "dev", "lo", "root").split()
        self.assertEqual(shown[:2], ["qdisc", "tbf"], shown)
        return shown[3:]

    @unless_stolen
    def test_a_tbf_is_the_cause_and_is_put_back_exactly(self):
        f = self.fleet(("--allow-experiment", "qdisc,offload"), lab_args=("--slow-tcp", "h2:x8"))
        self.assertEqual(self.netns(f, "h2", "python3", "-c", SET_GRO, "0").strip(), "0")
        shown = self.tbf(f)
        rid = self.flagged_run(f, "if.lo.qdisc", GRO)
        before = self.items(f, "h2")
        self.assertEqual(before[GRO], "off")
        h1_before = self.items(f, "h1")["if.lo.qdisc"]
        self.assertEqual(self.items(f, "h1")[GRO], "on")
        answer, by_item, why = self.explain(f, rid)
        self.assertEqual(answer["state"], "done", why)
        qdisc = by_item["if.lo.qdisc"]
        self.assertEqual(qdisc["treatment"], "qdisc lo noqueue", why)
        if answer["control"]["n"] < 3:  # as in the sysctl case: the product's rule, checked
            self.assertEqual(qdisc["verdict"], "inconclusive", why)
            self.skipTest(f"h2 was disturbed while the experiment ran: "
                          f"{answer['control']['disturbed']} control samples")
        self.assertEqual(qdisc["verdict"], "cause", why)
        self.assertGreaterEqual(qdisc["lo"], 0.5, why)
        self.assertEqual(answer["cause"]["item"], "if.lo.qdisc", why)
        self.assertIn("lo qdisc is the cause", answer["summary"], why)
        # Put back exactly: the same rate, burst and limit, not a rounded burst.
        self.assertEqual(self.tbf(f), shown)
        self.assertEqual(self.items(f, "h2")["if.lo.qdisc"], before["if.lo.qdisc"])
        self.assertIn("SM-TREAT-UNDO", open(f"{f.dir}/agent-h2.log").read())
        # The reverse gave h1 h2's tbf, which opened the gap there, and took it away again.
        self.assert_confirms(qdisc, "qdisc lo " + before["if.lo.qdisc"], why)
        self.assertEqual(self.items(f, "h1")["if.lo.qdisc"], h1_before)
        self.assertEqual(h1_before, "noqueue")
        # The decoy: GRO on for h2's treated jobs, off again after; h2's off on h1 opens no gap.
        gro = by_item[GRO]
        self.assertEqual(gro["treatment"], "offload lo gro=on", why)
        if gro["verdict"] == "inconclusive":  # too wide only on disturbed samples, as above
            self.assertGreater(answer["control"]["disturbed"], 0, why)
        else:
            self.assertEqual(gro["verdict"], "not the cause", why)
            self.assertLess(gro["hi"], 0.5, why)
        self.assertEqual(self.items(f, "h2")[GRO], "off")
        rev = gro["reverse"]
        self.assertEqual((rev["host"], rev["treatment"]), ("h1", "offload lo gro=off"), why)
        self.assertIn(rev["verdict"], ("does not confirm", "inconclusive"), why)
        if rev["verdict"] == "does not confirm":
            self.assertLess(rev["hi"], 0.5, why)
        self.assertEqual(self.items(f, "h1")[GRO], "on")
        self.assertIn("SM-TREAT-APPLY offload lo gro=on", open(f"{f.dir}/agent-h2.log").read())

    def test_an_agent_not_allowed_to_change_its_host_tests_nothing(self):
        f = self.fleet(lab_args=("--slow-tcp", "h2:x8"), sysctls=(DECOY,))
        rid = self.flagged_run(f, "if.lo.qdisc", "sysctl." + DECOY[0])
        before = self.items(f, "h2")
        status, plan = f.post(f"/api/runs/{rid}/experiments", {"host": "h2"})
        self.assertEqual(status, 200, plan)
        self.assertIsNone(plan["run"], plan)
        by_item = {s["item"]: s for s in plan["plan"]}
        self.assertIn("--allow-experiment qdisc", by_item["if.lo.qdisc"]["why_untested"], plan)
        self.assertIn("--allow-experiment sysctl",
                      by_item["sysctl." + DECOY[0]]["why_untested"], plan)
        self.assertEqual(len(f.get("/api/runs")["runs"]), 1)
        out = subprocess.run([CLI, "--coordinator", f.url, "explain", str(rid)],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("could be tested", out.stderr)
        self.assertIn("untested  lo qdisc", out.stderr)
        self.assertEqual(self.items(f, "h2"), before)

    def test_socket_treatments_reach_the_jobs_own_sockets(self):
        """No flag needed: a socket part changes the job's sockets alone. A congestion control
        the kernel lacks fails the job naming it, which shows the option reached the socket;
        one it has runs."""
        f = self.fleet()
        params = {"workload": "stream", "scope": "local", "transport": "tcp", "count": 64,
                  "msg_size": 1024}
        bad, good = f.submit([
            {"host": "h2", "params": {**params, "treatment": "socket congestion=nosuch_cc"}},
            {"host": "h2", "params": {**params, "treatment": "socket congestion=reno; "
                                                              "socket notsent_lowat=16384"}}])
        wait_for("both jobs ended",
                 lambda: all(f.job(j)["state"] in ("done", "failed") for j in (bad, good)), 60)
        job = f.job(bad)
        self.assertEqual(job["state"], "failed", job)
        self.assertIn("setsockopt TCP_CONGESTION=nosuch_cc", job["reason"], job)
        self.assertEqual(f.job(good)["state"], "done", f.job(good))

    def treated_long_job(self, value):
        """A fleet whose h2 runs a 20 s job treated with the decoy sysctl set to value, once the
        treatment is in place: the fleet, the sysctl's old value and the job's id."""
        f = self.fleet(("--allow-experiment", "sysctl"))
        old = self.sysctl(f, DECOY[0])
        jid, = f.submit([{"host": "h2", "params": {
            "workload": "stream", "scope": "local", "transport": "tcp", "duration_ms": 20000,
            "msg_size": 65536, "treatment": f"sysctl {DECOY[0]}={value}"}}])
        wait_for("the treatment in place", lambda: self.sysctl(f, DECOY[0]) == value, 20)
        return f, old, jid

    def test_a_kill_during_a_treatment_is_undone_at_the_next_start(self):
        f, old, jid = self.treated_long_job("3333")
        f.kill(f.agents["h2"])
        self.assertEqual(self.sysctl(f, DECOY[0]), "3333")  # nobody put it back yet
        f.start_agent("h2")
        wait_for("the setting put back", lambda: self.sysctl(f, DECOY[0]) == old, 20)
        wait_for("SM-TREAT-RESTORED in h2's log",
                 lambda: "SM-TREAT-RESTORED" in open(f"{f.dir}/agent-h2.log").read(), 10)
        # The killed job does not count as a measurement of the treated host.
        wait_for("the job ended", lambda: f.job(jid)["state"] in ("done", "failed"), 60)
        job = f.job(jid)
        self.assertEqual(job["state"], "failed", job)

    def test_a_sigterm_during_a_treatment_puts_the_setting_back_before_the_agent_exits(self):
        f, old, _ = self.treated_long_job("3334")
        agent = f.agents["h2"]
        f.kill(agent, signal.SIGTERM)
        # Stopped by its service manager, the agent leaves its host as it found it: the job is
        # aborted, the setting put back and read back, and only then does it exit.
        self.assertIsNotNone(agent.poll(), "the agent outlived SIGTERM")
        self.assertNotEqual(agent.returncode, -signal.SIGKILL, "SIGTERM was not enough")
        self.assertEqual(self.sysctl(f, DECOY[0]), old)
        log = open(f"{f.dir}/agent-h2.log").read()
        self.assertIn("SM-TREAT-UNDO", log)
        self.assertNotIn("SM-TREAT-UNDO-FAILED", log)


if __name__ == "__main__":
    unittest.main()
