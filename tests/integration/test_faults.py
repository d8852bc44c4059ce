"""The fault campaign of issue 14, rerun as tests: the real coordinator and agents (namespace lab
hosts when root where a link is cut, a pair job runs or a spool's file system goes read-only;
loopback agents for the rest), faults injected by signal, link, spool and store, and the outcome counted in the
real SQLite store. Every experiment asserts that the run ends (done, or failed for the reason the
fault gives), that every job the run counts done has exactly one ok result at its final attempt,
that no (job, attempt) is stored twice, that the run's counts equal its jobs table, and where a
loop could hide, that polls stay under a rate.

The campaign ran kill -9 x20 on agents and x10 on the coordinator, and paused the coordinator
for 20 s; here the counts are scaled down (agent kill x4, coordinator kill x3, an 8 s pause with
a 3 s liveness limit) so that the whole file stays within a few minutes on a 2-core machine, in
the gcc build and again under AddressSanitizer (SM_BIN_DIR points at build-asan/bin there).

Not here:
- item 5, a full or read-only spool at start: tests/integration/test_spool_start.py (the agent
  refuses to start; a result the spool refuses mid-run fails its job with the spool's reason).
- a +20 s step of the coordinator's wall clock (item 3's other half): stepping this machine's
  clock would disturb everything else on it; test_control_liveness.c covers wall-clock steps forward
  and back (silences and time limits are measured on the monotonic clock).
"""
import errno
import os
import shutil
import signal
import subprocess
import sys
import time
import unittest

from smtest import Fleet, can_lab, netns, unless_root, wait_for

# The lab's agents poll a coordinator that holds each poll this long; one silent for 3 x this
# is lost.
HOLD_MS = 1000
# Polls answered at once for news plus one held poll per agent per hold: a healthy fleet of 3
# stays well under this; the storm of item 2 made 3,733 a second.
POLL_RATE_MAX = 50
SANITIZER_MARKS = ("AddressSanitizer", "LeakSanitizer", "runtime error:")

# The run of item 1, as the campaign posted it: a mesh of TCP streams between the lab's hosts.
# Its runs are counted job by job, and a cut link disturbs samples: "remeasure": 0 keeps the
# rounds that would add out of the counts (test_control_repetitions.c covers remeasuring).
E2R = {"name": "e2r", "hosts": ["h1", "h2", "h3"], "pairs": "mesh", "repetitions": 2,
       "remeasure": 0, "warmup": 0,
       "tests": [{"workload": "stream", "scope": "pair", "transport": "tcp",
                  "duration_ms": 2000}]}


def note(text):
    """A figure the campaign's closing note quotes, in the test's output."""
    print(f"  [figure] {text}", file=sys.stderr, flush=True)


def local_run(name, reps, duration_ms, hosts="all"):
    return {"name": name, "hosts": hosts, "repetitions": reps, "remeasure": 0, "warmup": 0,
            "tests": [{"workload": "stream", "scope": "local", "transport": "tcp",
                       "msg_size": 16384, "duration_ms": duration_ms}]}


def running(f, rid, exclude=()):
    """(id, host, peer, attempt) of a job of run rid that runs now, not one of exclude."""
    for row in f.query("SELECT id, host, peer, attempt FROM jobs WHERE run_id = ? AND "
                       "state = 'running' ORDER BY ord", rid):
        if row[0] not in exclude:
            return row
    return None


class FaultTest(unittest.TestCase):
    # ---- fleet and store helpers ----
    def fleet(self, n=3, hold_ms=HOLD_MS, lab=None):
        f = Fleet(n=n, hold_ms=hold_ms, lab=lab, unmeasured=True)
        self.addCleanup(f.stop)
        return f.start()

    def whole_log(self, f, name):
        try:
            with open(os.path.join(f.dir, f"{name}.log")) as fh:
                return fh.read()
        except OSError:
            return ""

    def running(self, f, rid, exclude=()):
        return running(f, rid, exclude)

    def polls(self, f):
        return f.get("/healthz")["counters"]["polls"]

    def assert_poll_rate(self, f, polls_before, t_before, what):
        """The coordinator's poll counter grew by less than POLL_RATE_MAX a second since
        (polls_before, t_before), a moment of the same coordinator process."""
        polls = self.polls(f) - polls_before
        secs = time.monotonic() - t_before
        self.assertLess(polls / secs, POLL_RATE_MAX, f"{what}: {polls} polls in {secs:.1f} s")
        return polls / secs

    def assert_no_sanitizer_report(self, f):
        for name in ["coordinator"] + [f"agent-{h}" for h in f.hosts]:
            text = self.whole_log(f, name)
            for mark in SANITIZER_MARKS:
                self.assertNotIn(mark, text, f"{name}.log:\n{text[-6000:]}")

    def assert_counts(self, f, rid, state="done"):
        """The run ended in state; its counts equal its jobs table; every done job has one ok
        result at its final attempt, stored once; no (job, attempt) is stored twice and no
        result is of an attempt the job never reached. Returns (run, {id: job row})."""
        run = f.wait_run(rid, 10)
        jobs = {row[0]: row for row in f.query(
            "SELECT id, host, peer, state, attempt, reason FROM jobs WHERE run_id = ?", rid)}
        why = f"run {run}\njobs {sorted(jobs.values())}"
        self.assertEqual(run["state"], state, why)
        states = [j[3] for j in jobs.values()]
        self.assertEqual(run["progress"], {"done": states.count("done"),
                                           "failed": states.count("failed"),
                                           "total": len(jobs)}, why)
        self.assertEqual(states.count("done") + states.count("failed"), len(jobs), why)
        if state == "failed":
            self.assertEqual(run["reason"], f"{states.count('failed')} of {len(jobs)} jobs failed")
        twice = f.query("SELECT r.job_id, r.attempt, COUNT(*) FROM results r JOIN jobs j ON "
                        "r.job_id = j.id WHERE j.run_id = ? GROUP BY r.job_id, r.attempt "
                        "HAVING COUNT(*) > 1", rid)
        self.assertEqual(twice, [], "a (job, attempt) stored twice")
        sides = f.query("SELECT p.job_id, p.attempt, p.role, COUNT(*) FROM pair_results p JOIN "
                        "jobs j ON p.job_id = j.id WHERE j.run_id = ? GROUP BY p.job_id, "
                        "p.attempt, p.role HAVING COUNT(*) > 1", rid)
        self.assertEqual(sides, [], "a side of a pair job stored twice")
        beyond = f.query("SELECT r.job_id, r.attempt, j.attempt FROM results r JOIN jobs j ON "
                         "r.job_id = j.id WHERE j.run_id = ? AND r.attempt > j.attempt", rid)
        self.assertEqual(beyond, [], "a result of an attempt its job never reached")
        # Results expected = stored: one ok result at the final attempt of every done job.
        ok = dict(f.query("SELECT j.id, COUNT(r.id) FROM jobs j LEFT JOIN results r ON "
                          "r.job_id = j.id AND r.attempt = j.attempt AND r.ok = 1 WHERE "
                          "j.run_id = ? AND j.state = 'done' GROUP BY j.id", rid))
        self.assertEqual(ok, {i: 1 for i, j in jobs.items() if j[3] == "done"}, why)
        # The pair jobs' two sides of that attempt are what it was merged from.
        for i, j in jobs.items():
            if j[2] and j[3] == "done":
                roles = {r for (r,) in f.query("SELECT role FROM pair_results WHERE job_id = ? "
                                               "AND attempt = ?", i, j[4])}
                self.assertEqual(roles, {"server", "client"}, (j, roles))
        return run, jobs


@netns
@unless_root(can_lab(), "needs root for the lab's network namespaces")
class CoordinatorKillDuringPairJobTest(FaultTest):
    """Item 1: a coordinator killed while a pair job runs put the job back in both hosts'
    queues with the same attempt; its two sides then completed it and freed it while a queue
    still pointed at it (heap-use-after-free in commands_for under ASan; in the release build the
    run never dispatched again), and its re-run was dropped as a duplicate attempt."""

    KILLS = 3  # the campaign's x10, scaled down
    DOWN_S = 3  # the coordinator restarts this long after its kill, on the same store

    def test_a_coordinator_killed_during_pair_jobs_ends_the_run_done_and_stores_each_once(self):
        f = self.fleet(lab=True)
        t0 = time.monotonic()
        rid = f.start_run(E2R)
        killed = {}  # job id -> attempt it was running at the kill
        try:
            for _ in range(self.KILLS):
                job = wait_for("a pair job to run", lambda: self.running(f, rid, killed), 60,
                               0.05)
                f.kill(f.coord)
                killed[job[0]] = job[3]
                time.sleep(self.DOWN_S)
                f.start_coordinator()
            f.wait_run(rid, 120)
        except AssertionError:
            # A coordinator that died of the use-after-free dispatches nothing more: its
            # sanitizer report is what to say first.
            self.assert_no_sanitizer_report(f)
            raise
        run, jobs = self.assert_counts(f, rid)
        self.assertEqual(run["progress"]["total"], 12)  # 6 ordered pairs x 2
        log = self.whole_log(f, "coordinator")
        for jid, attempt in killed.items():
            # Run again as a new attempt, whose own measurement is the job's result.
            self.assertIn(f"pair job {jid} ", log)
            self.assertGreater(jobs[jid][4], attempt, jobs[jid])
            [(secs, nbytes)] = f.query("SELECT seconds, bytes FROM results WHERE job_id = ? "
                                       "AND attempt = ?", jid, jobs[jid][4])
            self.assertGreater(nbytes, 0)
            self.assertGreater(secs, 1.5, "a 2 s stream measured as shorter")
        self.assertEqual(log.count("SM-JOB-REDO"), len(killed), log[-4000:])
        self.assert_no_sanitizer_report(f)
        note(f"coordinator kill -9 x{self.KILLS} during pair jobs {sorted(killed)}: run "
             f"{run['state']} {run['progress']}, re-run attempts "
             f"{[jobs[j][4] for j in sorted(killed)]}, {time.monotonic() - t0:.0f} s")


class CoordinatorKillDuringResultBurstTest(FaultTest):
    """A coordinator killed with SIGKILL while results pour in: a bus pass stores every result
    it took in one transaction and acks none before its commit, so a kill between the commit and
    the acks makes the agents send results the store already holds, and a kill before the commit
    loses the pass's writes but none of the agents' copies. Either way every result is stored
    exactly once."""

    KILLS = 3
    REPS = 30  # short jobs on each of the 3 hosts: results arrive many a second

    def stored(self, f, rid):
        return f.query("SELECT COUNT(*) FROM results r JOIN jobs j ON r.job_id = j.id "
                       "WHERE j.run_id = ?", rid)[0][0]

    def test_a_coordinator_killed_while_results_arrive_stores_each_exactly_once(self):
        f = self.fleet(hold_ms=2000, lab=False)
        rid = f.start_run(local_run("burst-kill", self.REPS, 40))
        total = 3 * self.REPS
        marks = []  # results stored at each kill
        for k in range(1, self.KILLS + 1):
            # Each kill lands while results are arriving: a quarter, a half, three quarters in.
            goal = total * k // (self.KILLS + 1)
            wait_for(f"{goal} results stored", lambda: self.stored(f, rid) >= goal, 120, 0.01)
            f.kill(f.coord)
            marks.append(self.stored(f, rid))
            time.sleep(0.5)
            f.start_coordinator()
        f.wait_run(rid, 180)
        run, jobs = self.assert_counts(f, rid)
        self.assertEqual(run["progress"], {"done": total, "failed": 0, "total": total},
                         "a killed coordinator lost or failed a job whose agent had measured it")
        self.assertEqual(self.stored(f, rid), total, "results stored != jobs done")
        self.assert_no_sanitizer_report(f)
        dup = f.get("/healthz")["counters"].get("results_duplicate", 0)
        note(f"coordinator kill -9 x{self.KILLS} during a burst of {total} results (stored at "
             f"each kill: {marks}): {self.stored(f, rid)} stored once each, {dup} resent copies "
             "refused by the restarted coordinator")


class AgentKillTest(FaultTest):
    """Agents killed with SIGKILL mid-job and restarted a second later: each killed job fails
    "agent-restarted" and runs again once, and the run ends done with every result stored once."""

    KILLS = 4  # the campaign's x20, scaled down

    def test_agents_killed_mid_job_and_restarted_end_the_run_done_with_equal_counts(self):
        # hold_ms 2000: an agent is lost after 6 s of silence, so a restart a second after the
        # kill (slower under ASan) is a restart, not a loss, whatever its last poll's age.
        f = self.fleet(hold_ms=2000, lab=False)
        rid = f.start_run(local_run("agent-kill", 4, 1000))
        polls0, t0 = self.polls(f), time.monotonic()
        killed = {}
        for _ in range(self.KILLS):
            job = wait_for("a job to run", lambda: self.running(f, rid, killed), 60, 0.05)
            f.kill(f.agents[job[1]])
            killed[job[0]] = job[1]
            time.sleep(1)
            f.start_agent(job[1])
        f.wait_run(rid, 120)
        run, jobs = self.assert_counts(f, rid)
        self.assertEqual(run["progress"]["total"], 12)
        rate = self.assert_poll_rate(f, polls0, t0, "during the run")
        log = self.whole_log(f, "coordinator")
        for jid, host in killed.items():
            self.assertEqual(jobs[jid][4], 2, jobs[jid])  # its one retry
            self.assertIn(f"SM-JOB-RETRY job {jid} on {host} failed (agent-restarted", log)
        self.assertNotIn("SM-AGENT-LOST", log)
        self.assert_no_sanitizer_report(f)
        note(f"agent kill -9 x{self.KILLS}: run {run['state']} {run['progress']}, "
             f"{len(killed)} jobs retried once, {rate:.1f} polls/s")


@netns
class PollStormTest(FaultTest):
    """Item 2: an acked result that the agent cannot delete (its spool gone read-only) was
    resent with every poll, and every poll carrying a result was answered at once: 3,733 polls
    a second and 37,383 log lines in 10 s."""

    WINDOW_S = 5

    def make_spool_unwritable(self, f, name):
        """Makes the agent's spool refuse the unlink of the result it holds. A lab agent runs
        in the mount namespace `ip netns exec` made for it: its own copy of / is remounted
        read-only there, as the campaign remounted the spool's file system, and the host's
        mounts are untouched. Elsewhere root gets an immutable directory (permissions do not
        stop root), and any other user a directory without write permission."""
        spool = f.spool(name)
        pid = str(f.agents[name].pid)
        # Only ever in a mount namespace of the agent's own: remounting this machine's / would
        # break everything else on it.
        own = os.readlink(f"/proc/{pid}/ns/mnt") != os.readlink("/proc/self/ns/mnt")
        if f.lab and own:
            r = subprocess.run(["nsenter", "-t", pid, "-m", "mount", "-o", "remount,bind,ro",
                                "/"], capture_output=True, text=True, timeout=10)
            if r.returncode == 0:
                return "read-only"
        if os.geteuid() == 0:
            r = subprocess.run(["chattr", "+i", spool], capture_output=True, text=True,
                               timeout=10)
            if r.returncode != 0:
                self.skipTest(f"neither a read-only remount nor chattr +i here: {r.stderr}")
            self.addCleanup(subprocess.run, ["chattr", "-i", spool], capture_output=True)
            return "immutable"
        os.chmod(spool, 0o555)
        self.addCleanup(os.chmod, spool, 0o700)
        return "no write permission"

    def test_an_acked_result_the_spool_cannot_delete_is_not_resent_in_a_loop(self):
        f = self.fleet()
        rid = f.start_run(local_run("storm", 1, 1500, hosts=["h1"]))
        job = wait_for("the job to run", lambda: self.running(f, rid), 30, 0.05)
        spool = f.spool("h1")
        # The coordinator stopped, the result waits in the spool, unacked, while the spool
        # turns unwritable; it is stored and acked after SIGCONT, and its delete then fails.
        f.coord.send_signal(signal.SIGSTOP)
        try:
            wait_for("the result in h1's spool",
                     lambda: any(n.endswith(f"-{job[0]}-{job[3]}.res") for n in os.listdir(spool)),
                     15, 0.05)
            how = self.make_spool_unwritable(f, "h1")
        finally:
            f.coord.send_signal(signal.SIGCONT)
        f.wait_run(rid, 30)
        self.assert_counts(f, rid)
        wait_for("the failed delete", lambda: "SM-SPOOL-UNLINK" in self.whole_log(f, "agent-h1"),
                 15)
        logs = ("coordinator", "agent-h1")
        lines0 = {n: self.whole_log(f, n).count("\n") for n in logs}
        polls0, t0 = self.polls(f), time.monotonic()
        time.sleep(self.WINDOW_S)
        rate = self.assert_poll_rate(f, polls0, t0, f"spool {how}")
        note(f"spool {how}: {rate:.1f} polls/s over {self.WINDOW_S} s")
        # Three agents each held HOLD_MS a poll: about 3 a second; the loop made thousands.
        self.assertLess(rate, 3 * 1000 / HOLD_MS + 2, f"spool {how}")
        for n in logs:
            grown = self.whole_log(f, n).count("\n") - lines0[n]
            self.assertLess(grown, 10, f"{n}.log grew {grown} lines in {self.WINDOW_S} s")
        unlink = [l for l in self.whole_log(f, "agent-h1").splitlines() if "SM-SPOOL-UNLINK" in l]
        self.assertEqual(len(unlink), 1, unlink)
        if how == "read-only":
            self.assertIn(os.strerror(errno.EROFS), unlink[0])
        # The result stays on disk (the next start sends it once more, to be acked again).
        self.assertEqual(len([n for n in os.listdir(spool) if n.endswith(".res")]), 1)
        self.assert_counts(f, rid)
        self.assert_no_sanitizer_report(f)


class CoordinatorPauseTest(FaultTest):
    """Item 3: a coordinator stopped for 20 s declared every agent lost ("no poll for 20944
    ms") although all polled throughout, and 51 of 60 jobs failed. Here the pause is 8 s against
    a liveness limit of 3 x HOLD_MS = 3 s: well past it, as 20 s was past 15 s."""

    PAUSE_S = 8

    def test_a_coordinator_stopped_past_the_liveness_limit_loses_no_agent_and_no_job(self):
        f = self.fleet(lab=False)
        rid = f.start_run(local_run("pause", 3, 1000))
        wait_for("a job to run", lambda: self.running(f, rid), 30, 0.05)
        f.coord.send_signal(signal.SIGSTOP)
        try:
            time.sleep(self.PAUSE_S)
        finally:
            f.coord.send_signal(signal.SIGCONT)
        polls0, t0 = self.polls(f), time.monotonic()
        f.wait_run(rid, 60)
        run, jobs = self.assert_counts(f, rid)
        self.assertEqual(run["progress"], {"done": 9, "failed": 0, "total": 9})
        self.assertFalse([j for j in jobs.values() if "lost" in j[5]], jobs)
        self.assertEqual(f.online(), set(f.hosts))
        rate = self.assert_poll_rate(f, polls0, t0, "after the pause")
        log = self.whole_log(f, "coordinator")
        self.assertNotIn("SM-AGENT-LOST", log)
        away = [l for l in log.splitlines() if "SM-COORD-AWAY" in l]
        self.assertTrue(away, log[-3000:])
        self.assert_no_sanitizer_report(f)
        note(f"SIGSTOP {self.PAUSE_S} s: run {run['state']} {run['progress']}, no agent lost, "
             f"{rate:.1f} polls/s after; {away[0].split('SM-COORD-AWAY ')[-1]}")


@netns
@unless_root(can_lab(), "needs root for the lab's network namespaces")
class LateResultTest(FaultTest):
    """Item 4: after a link cut during a local job, the job's result arrived after the
    coordinator had failed it agent-lost; the store had it done, but the run still counted it
    failed (24 done / 24 failed in the run, 25 / 23 in the jobs table).

    The coordinator gives the attempt up when the host is lost: it queues its one retry, which
    waits for the host (the grace period of item 8). The late result of the attempt comes with
    the host's first poll after the cut, before the retry could start: it is stored once and
    completes the job, and the retry does not run."""

    def test_a_result_that_arrives_after_its_host_was_lost_is_counted_done_once(self):
        f = self.fleet(lab=True)
        rid = f.start_run(local_run("late", 2, 2000))
        jid, host, _, attempt = wait_for("a job to run", lambda: self.running(f, rid), 30, 0.05)
        ns = f.hosts[host]["netns"]
        subprocess.run(["ip", "-n", ns, "link", "set", "eth0", "down"], check=True, timeout=10)
        try:
            wait_for(f"the coordinator to give job {jid} up", lambda: f.query(
                "SELECT 1 FROM jobs WHERE id = ? AND (reason LIKE 'agent-lost%' OR reason "
                "LIKE 'retry after: agent-lost%')", jid), 20)
            # The job ended on its host meanwhile: its result waits in the spool.
            wait_for("the result in the spool", lambda: any(
                n.endswith(f"-{jid}-{attempt}.res") for n in os.listdir(f.spool(host))), 15)
        finally:
            subprocess.run(["ip", "-n", ns, "link", "set", "eth0", "up"], check=True, timeout=10)
        wait_for(f"job {jid}'s late result", lambda: f.query(
            "SELECT 1 FROM results WHERE job_id = ? AND attempt = ?", jid, attempt), 30)
        r = f.wait_run(rid, 60)
        # Jobs queued on the host while it was lost wait --lost-grace-ms (60 s) for it and then
        # run (item 8, below): the run ends done; were the host away past the grace, they
        # would fail "agent-lost", a failed run for that true reason. Either way the counts
        # must equal the jobs table.
        run, jobs = self.assert_counts(f, rid, r["state"])
        failed = [j for j in jobs.values() if j[3] == "failed"]
        self.assertTrue(all(j[1] == host and j[5].startswith("agent-lost") for j in failed),
                        failed)
        self.assertEqual(f.query("SELECT ok FROM results WHERE job_id = ? AND attempt = ?",
                                 jid, attempt), [(1,)])
        self.assertEqual(jobs[jid][3], "done", jobs[jid])
        self.assertEqual(jobs[jid][4], attempt, jobs[jid])
        self.assertEqual(f.query("SELECT COUNT(*) FROM results WHERE job_id = ?", jid), [(1,)])
        how = "completed by its late result"
        self.assert_no_sanitizer_report(f)
        note(f"link of {host} cut during job {jid}: given up at attempt {attempt}, then {how}; "
             f"run {run['state']} {run['progress']} = jobs table")


@unless_root(os.geteuid() == 0, "needs root to make the store's files refuse writes")
@unittest.skipUnless(shutil.which("chattr"), "needs chattr to make the store's files refuse writes")
class StoreCommitsFailTest(FaultTest):
    """Item 7: /healthz said ok while every commit failed. The campaign corrupted the store
    ("database disk image is malformed"; test_fleet.py does that too); here its WAL and main
    file are made immutable mid-run, so that every commit fails with an I/O error while reads
    go on, and are made writable again 8 s later (or once /healthz said so a few times): once
    for the class, judged by both tests."""

    FAIL_S = 8
    FAIL_MAX_S = 30
    MIN_FAILING = 4

    @classmethod
    def setUpClass(cls):
        """One fleet and one run for the class: its commits fail for FAIL_S while a job runs,
        then succeed again. Each test judges another side of that one fault."""
        cls.f = Fleet(n=3, hold_ms=HOLD_MS, lab=False, unmeasured=True)
        cls.addClassCleanup(cls.f.stop)
        cls.f.start()
        cls.rid, cls.seen = cls.fail_commits_mid_run(cls.f)

    @classmethod
    def fail_commits_mid_run(cls, f):
        """Starts a run, makes commits fail once a job runs, and returns (run id, the
        /healthz answers seen while they failed) once they succeed again."""
        rid = f.start_run(local_run("store", 2, 1000))
        wait_for("a job to run", lambda: running(f, rid), 30, 0.05)
        files = [f.db + "-wal", f.db]
        subprocess.run(["chattr", "+i", *files], check=True, capture_output=True, timeout=10)
        cls.addClassCleanup(subprocess.run, ["chattr", "-i", *files], capture_output=True)
        seen = []
        try:
            # FAIL_S at least, and longer (up to FAIL_MAX_S) on a machine so busy that fewer
            # than MIN_FAILING answers said so by then: the fault lasts until it was seen.
            t0 = time.monotonic()
            while time.monotonic() - t0 < cls.FAIL_MAX_S:
                seen.append(f.get_status("/healthz"))
                if (time.monotonic() - t0 >= cls.FAIL_S
                        and sum(not h["ok"] for _, h in seen) >= cls.MIN_FAILING):
                    break
                time.sleep(0.5)
        finally:
            subprocess.run(["chattr", "-i", *files], check=True, capture_output=True, timeout=10)
        return rid, seen

    def test_healthz_says_the_store_fails_while_its_commits_fail(self):
        f, rid, seen = self.f, self.rid, self.seen
        failing = [(st, h) for st, h in seen if not h["ok"]]
        # Every poll commits: once each agent has polled twice since the commits began to
        # fail (counted by the coordinator's own poll counter, not by a time that depends on
        # this machine's speed), /healthz says so, and goes on saying so while they fail.
        polls0 = seen[0][1]["counters"]["polls"]
        after = [i for i, (_, h) in enumerate(seen)
                 if h["counters"]["polls"] >= polls0 + 2 * f.n]
        self.assertTrue(after, seen)
        self.assertEqual([h["ok"] for _, h in seen[after[0]:]], [False] * (len(seen) - after[0]),
                         seen)
        self.assertGreaterEqual(len(failing), self.MIN_FAILING, seen)
        for st, h in failing:
            self.assertEqual(st, 503, h)
            self.assertIn("disk I/O error", h["store_error"], h)
            self.assertGreater(h["store_error_at_ms"], 0, h)
        note(f"commits failing: /healthz 503 {len(failing)} of {len(seen)} times, "
             f"'{failing[0][1]['store_error']}'")
        # The results measured meanwhile waited in the spools: every one is stored once.
        jobs = [j for (j,) in f.query("SELECT id FROM jobs WHERE run_id = ?", rid)]
        wait_for("every result stored", lambda: f.stored(jobs) == (len(jobs), len(jobs)), 60)
        f.wait_run(rid, 30)
        self.assert_no_sanitizer_report(f)

    def test_a_run_whose_commits_failed_for_a_while_ends_with_counts_equal_to_its_jobs(self):
        f, rid = self.f, self.rid
        f.wait_run(rid, 60)
        self.assert_counts(f, rid)
        self.assert_no_sanitizer_report(f)


# item 6 (store identity): a replaced or rolled-back store (deleted, or its WAL lost, with the
# agents running) failed its new jobs 1-4 unrun, and a cut WAL started silently without acked
# results. Tested in test_store_identity.py, with the store identity that fixes it; its
# experiments belong here when that file's cases move into the campaign.

# item 8 (network-disturbed, grace period): a 10 s link cut during a pair job stored a 3 s job
# as ok with seconds 13.6 and 1,599 retransmits, unmarked; a host lost for more than 15 s lost
# all its queued run jobs at once, even when back a second later. Tested in
# test_disturbed_lab.py (the disturbed mark) and test_runs.py (the grace period); their
# experiments belong here when they move into the campaign.


if __name__ == "__main__":
    unittest.main()
