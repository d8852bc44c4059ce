"""The sockmatrix CLI against the real coordinator and two real agents on loopback: what it
prints, the files it writes, and its exit status (0 ok, 1 refused or failed, 2 usage)."""
import csv
import io
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
import unittest

from smtest import BIN_DIR, Fleet, free_port, wait_for

CLI = os.path.join(BIN_DIR, "sockmatrix")

# A run that outlives the test unless cancelled: one 60-second stream on h1.
LONG_SPEC = {"name": "long", "hosts": ["h1"], "repetitions": 1, "warmup": 0,
             "tests": [{"workload": "stream", "scope": "local", "transport": "tcp",
                        "msg_size": 1000, "duration_ms": 60000}]}


class CliTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.f = Fleet(n=2, hold_ms=1000, lab=False)
        cls.addClassCleanup(cls.f.stop)
        cls.f.start()
        cls.done_id = None

    def cli(self, *args, url=None, timeout=240):
        env = dict(os.environ)
        env.pop("SOCKMATRIX_COORDINATOR", None)
        return subprocess.run([CLI, "--coordinator", url or self.f.url, *args],
                              capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, env=env)

    def assert_one_error_line(self, p, rc, *needles):
        self.assertEqual(p.returncode, rc, p)
        lines = p.stderr.splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertTrue(lines[0].startswith("sockmatrix: "), lines[0])
        for n in needles:
            self.assertIn(n, lines[0])
        return lines[0]

    def run_seed(self, *extra):
        """run --preset seed-tcp-unix --repetitions 2 --wait; returns (process, run id)."""
        p = self.cli("run", "--preset", "seed-tcp-unix", "--repetitions", "2", "--wait", *extra)
        m = re.search(r"^run (\d+) started$", p.stderr, re.M)
        self.assertIsNotNone(m, p.stderr)
        return p, int(m.group(1))

    def finished_run(self):
        """The id of a run that ended done, made once for the tests that need one."""
        if CliTest.done_id is None:
            p, rid = self.run_seed()
            self.assertEqual(p.returncode, 0, p)
            CliTest.done_id = rid
        return CliTest.done_id

    # -- listing --
    def test_agents_lists_both_agents_with_their_facts(self):
        p = self.cli("agents")
        self.assertEqual(p.returncode, 0, p)
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0].split()[:2], ["NAME", "STATUS"])
        rows = {line.split()[0]: line for line in lines[1:]}
        self.assertEqual(set(rows), {"h1", "h2"})
        for name, line in rows.items():
            self.assertEqual(line.split()[1], "online", line)
            self.assertIn(f"rack={name[1:]},role=test", line)
            self.assertIn(os.uname().release, line)

    def test_presets_lists_seed_tcp_unix(self):
        p = self.cli("presets")
        self.assertEqual(p.returncode, 0, p)
        names = [line.split()[0] for line in p.stdout.splitlines()[1:]]
        self.assertIn("seed-tcp-unix", names)
        self.assertIn("TCP_NODELAY", p.stdout)

    # -- run --
    def test_run_wait_prints_the_table_with_both_hosts(self):
        p, rid = self.run_seed()
        self.assertEqual(p.returncode, 0, p)
        self.assertIn("h1", p.stdout)
        self.assertIn("h2", p.stdout)
        self.assertTrue(p.stdout.lstrip().startswith("|") or "|" in p.stdout, p.stdout)
        # stderr is not a terminal: plain progress lines, the last one complete.
        progress = re.findall(rf"^run {rid}: (\d+)/(\d+) jobs, (\d+) failed$", p.stderr, re.M)
        self.assertTrue(progress, p.stderr)
        done, total, failed = map(int, progress[-1])
        self.assertEqual((done, failed), (total, 0))
        # hosts x variants x (reps + preset's warmup), and a round of a host's 3 variants for
        # each repetition this busy machine disturbed (remeasure: up to 2 more per cell).
        jobs = self.f.query("SELECT host, warmup, rep FROM jobs WHERE run_id = ?", rid)
        self.assertEqual(total, len(jobs))
        self.assertEqual(sum(1 for _, warm, _ in jobs if warm), 2 * 3 * 2)
        for host in ("h1", "h2"):
            reps = [rep for h, warm, rep in jobs if h == host and not warm]
            self.assertIn(max(reps) + 1, (2, 3, 4), jobs)
            self.assertEqual(len(reps), 3 * (max(reps) + 1), jobs)
        # Both agents run on this machine: the run says, once and first, that its jobs go one
        # at a time and why.
        said = re.findall(rf"^run {rid}: jobs: one at a time: (.*)$", p.stderr, re.M)
        self.assertEqual(len(said), 1, p.stderr)
        self.assertRegex(said[0], r"^h1, h2 share one machine \(boot id [0-9a-f]{8}\)$")
        self.assertLess(p.stderr.index("jobs: one at a time"), p.stderr.index(" jobs, "))
        if CliTest.done_id is None:
            CliTest.done_id = rid

    def test_run_wait_format_csv_parses_with_a_header_row(self):
        p, _ = self.run_seed("--format", "csv")
        self.assertEqual(p.returncode, 0, p)
        rows = list(csv.reader(io.StringIO(p.stdout, newline="")))
        self.assertGreaterEqual(len(rows), 3)
        header = rows[0]
        self.assertEqual(header[0], "host")
        self.assertTrue(all(len(r) == len(header) for r in rows[1:] if r), rows)
        self.assertEqual(sorted(r[0] for r in rows[1:] if r), ["h1", "h2"])

    def test_run_repetitions_auto_adds_rounds_up_to_max_and_the_table_says_so(self):
        # ci_rel 0.0001 is never met by a real measurement: every cell gets its 5, then one
        # more round, and stops on max (6), or, where this busy machine disturbed some of a
        # host's repetitions, on max undisturbed ones after as many more rounds (up to 6 more,
        # the default remeasure), or on "disturbed" when those ran out.
        # --disturbed include: every repetition that ran is in n, disturbed or not.
        p = self.cli("run", "--preset", "seed-tcp-unix", "--repetitions", "auto",
                     "--max-repetitions", "6", "--ci-rel", "0.0001", "--wait", "--format", "md",
                     "--disturbed", "include")
        self.assertEqual(p.returncode, 0, p)
        rid = int(re.search(r"^run (\d+) started$", p.stderr, re.M).group(1))
        rows = [line for line in p.stdout.splitlines() if re.match(r"\| h\d ", line)]
        self.assertEqual(len(rows), 2, p.stdout)
        measured = 0
        for row in rows:
            ns = {int(n) for n in re.findall(r"n=(\d+)", row)}
            self.assertEqual(len(ns), 1, row)  # a host's variants run in rounds together
            n = ns.pop()
            self.assertIn(n, range(6, 13), row)
            measured += 3 * n
            self.assertEqual(row.count("(max)") + row.count("(remeasure ran out)"), 3, row)
        # 2 hosts x 3 variants x 2 warm-up, and the measured ones: grown from 5 each as the
        # rounds were added.
        self.assertEqual(self.f.get(f"/api/runs/{rid}")["progress"]["total"],
                         2 * 3 * 2 + measured)

    def test_run_without_wait_prints_the_id_then_show_and_cancel_it(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as spec:
            json.dump(LONG_SPEC, spec)
        self.addCleanup(os.unlink, spec.name)
        p = self.cli("run", "--spec", spec.name)
        self.assertEqual(p.returncode, 0, p)
        rid = int(p.stdout.strip())
        self.assertEqual(p.stderr, f"run {rid} started\n")

        p = self.cli("show", str(rid))
        self.assertEqual(p.returncode, 0, p)
        self.assertIn(f"run {rid} (long): running", p.stdout)
        self.assertIn("progress: 0/1 jobs done, 0 failed", p.stdout)
        self.assertNotIn("jobs:", p.stdout)  # one host: nothing to say about sharing
        self.assertRegex(p.stdout, r"\n\s*0\s+h1\s+-\s+stream tcp")

        p = self.cli("runs")
        self.assertEqual(p.returncode, 0, p)
        self.assertRegex(p.stdout, rf"(?m)^\s*{rid}\s+long\s+running\s+0/0/1$")

        p = self.cli("cancel", str(rid))
        self.assertEqual(p.returncode, 0, p)
        self.assertEqual(p.stdout, f"run {rid}: cancelled\n")

    def test_run_on_a_host_that_does_not_exist_exits_1_with_one_line(self):
        p = self.cli("run", "--preset", "seed-tcp-unix", "--hosts", "h1,nosuchhost")
        self.assert_one_error_line(p, 1, "nosuchhost")
        self.assertEqual(p.stdout, "")

    def test_a_spec_file_with_hosts_is_a_usage_error(self):
        p = self.cli("run", "--spec", "/nonexistent.json", "--hosts", "h1")
        self.assert_one_error_line(p, 2, "--hosts goes with --preset only")

    # -- usage errors and unreachable coordinators --
    def test_a_bad_option_exits_2_naming_it(self):
        p = self.cli("runs", "--bogus")
        self.assert_one_error_line(p, 2, "--bogus")
        p = self.cli("run", "--preset", "seed-tcp-unix", "--repetitions", "0")
        self.assert_one_error_line(p, 2, "--repetitions")
        p = self.cli("show")
        self.assert_one_error_line(p, 2, "show")

    def test_an_unreachable_coordinator_is_one_line_exit_1(self):
        url = f"http://127.0.0.1:{free_port()}"
        p = self.cli("agents", url=url)
        self.assert_one_error_line(p, 1, f"cannot reach the coordinator at {url}: ")

    def test_a_token_file_others_can_read_is_refused(self):
        d = tempfile.mkdtemp(prefix="sm-cli-")
        path = os.path.join(d, "token")
        with open(path, "w") as f:
            f.write("0123456789abcdef0123\n")
        os.chmod(path, 0o644)
        self.addCleanup(shutil.rmtree, d, True)
        p = self.cli("--token-file", path, "agents")
        self.assert_one_error_line(p, 2, "readable by group or others", "chmod 600")
        os.chmod(path, 0o600)
        p = self.cli("--token-file", path, "agents")  # the loopback coordinator ignores it
        self.assertEqual(p.returncode, 0, p)

    # -- finished runs --
    def test_export_o_writes_the_file_atomically(self):
        rid = self.finished_run()
        d = tempfile.mkdtemp(prefix="sm-cli-")
        out = os.path.join(d, "table.csv")
        self.addCleanup(shutil.rmtree, d, True)
        p = self.cli("export", str(rid), "--format", "csv", "-o", out)
        self.assertEqual(p.returncode, 0, p)
        self.assertEqual(p.stdout, "")
        self.assertEqual(os.listdir(d), ["table.csv"])  # no temporary file left behind
        self.assertFalse(os.stat(out).st_mode & stat.S_IWOTH)
        with open(out, newline="") as f:
            rows = list(csv.reader(f))
        self.assertEqual(rows[0][0], "host")
        self.assertEqual(sorted(r[0] for r in rows[1:] if r), ["h1", "h2"])
        # The same bytes as the API's.
        p = self.cli("export", str(rid), "--format", "csv")
        with open(out) as f:
            self.assertEqual(p.stdout.rstrip("\n"), f.read().rstrip("\n"))
        p = self.cli("export", str(rid), "--format", "json")
        self.assertEqual(p.returncode, 0, p)
        json.loads(p.stdout)

    def test_show_a_finished_run_gives_state_progress_and_cells(self):
        rid = self.finished_run()
        p = self.cli("show", str(rid))
        self.assertEqual(p.returncode, 0, p)
        self.assertIn(f"run {rid} (seed-tcp-unix): done", p.stdout)
        # 24 jobs, and a round of a host's 3 variants for a sample this busy machine disturbed.
        total = self.f.get(f"/api/runs/{rid}")["progress"]["total"]
        self.assertIn(f"progress: {total}/{total} jobs done, 0 failed", p.stdout)
        self.assertRegex(p.stdout, r"(?m)^jobs: one at a time: h1, h2 share one machine "
                                   r"\(boot id [0-9a-f]{8}\)$")
        cells = [line.split() for line in p.stdout.splitlines() if re.match(r"\s*\d+\s+h\d", line)]
        self.assertEqual(len(cells), 6)
        self.assertEqual({c[1] for c in cells}, {"h1", "h2"})

    def test_show_the_api_and_the_table_name_a_test_the_same(self):
        # 131072 B is 128 KiB: one name wherever the test is shown, as the tables write sizes.
        # One job a cell (no remeasure): the cells' job counts below are 1.
        spec = {"name": "naming", "hosts": ["h1"], "repetitions": 1, "warmup": 0, "remeasure": 0,
                "tests": [{"workload": "stream", "scope": "local", "transport": ["tcp", "unix"],
                           "msg_size": 131072, "count": 16}]}
        rid = self.f.start_run(spec)
        self.assertEqual(self.f.wait_run(rid, 120)["state"], "done")
        want = {"stream tcp 128 KiB x 16", "stream unix 128 KiB x 16"}
        run = self.f.get(f"/api/runs/{rid}")
        self.assertEqual({c["test"] for c in run["cells"]}, want)
        table = self.f.get(f"/api/runs/{rid}/table?format=json")
        self.assertEqual({c["label"] for c in table["columns"]}, want)
        jobs = self.f.get(f"/api/runs/{rid}/jobs")["jobs"]
        self.assertEqual({j["test"] for j in jobs}, want)
        p = self.cli("show", str(rid))
        self.assertEqual(p.returncode, 0, p)
        for name in want:
            self.assertRegex(p.stdout, rf"(?m)^\s*\d+\s+h1\s+-\s+{re.escape(name)}\s+1\s")
        self.assertNotIn("131072", p.stdout)

    def test_cancel_of_a_finished_run_says_how_and_when_it_ended(self):
        rid = self.finished_run()
        status, body = self.f.post(f"/api/runs/{rid}/cancel", {})
        self.assertEqual(status, 409)
        self.assertNotIn("field", body)
        p = self.cli("cancel", str(rid))
        line = self.assert_one_error_line(p, 1)
        self.assertRegex(line, rf"^sockmatrix: run {rid} ended \(done\) at "
                               r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC; nothing to cancel$")
        self.assertEqual(line, f"sockmatrix: {body['error']}")
        self.assertEqual(p.stdout, "")

    def cancel_and_idle(self, rid):
        """Cancels run rid and waits until no agent is busy, for the tests that follow."""
        self.f.post(f"/api/runs/{rid}/cancel", {})
        # An agent given a job reads busy from then on, and until it polls idle after the cancel.
        wait_for("every agent idle",
                 lambda: all(a["status"] == "online" for a in self.f.get("/api/agents")["agents"]),
                 30)

    def test_again_measures_the_cells_a_two_host_run_could_not_judge(self):
        rid = self.finished_run()
        # Two repetitions on two hosts: every cell is measured and none judged, and it says so.
        p = self.cli("anomalies", str(rid))
        self.assertEqual(p.returncode, 0, p)
        self.assertRegex(p.stdout, rf"^run {rid} \(seed-tcp-unix\): inconclusive: 0 anomalies "
                                   r"among 0 judged cells; \d+ cells inconclusive")
        # Why depends on the machine: two clean samples < 3, samples disturbed (measured again,
        # up to twice as many) with the agent's reason, or, measured again clean, two hosts.
        self.assertRegex(p.stdout, r"\n  inconclusive h1: stream tcp lines 128 B x 8192: "
                                   r"(\d clean samples? < 3|\d of \d samples disturbed.*: .+|2 hosts "
                                   r"measured this test; judging a host needs 3)(;.*)?\n")
        cells = self.f.get(f"/api/runs/{rid}")["cells"]
        p = self.cli("again", str(rid))
        self.assertEqual(p.returncode, 0, p)
        again = int(p.stdout)
        self.addCleanup(self.cancel_and_idle, again)
        self.assertEqual(p.stderr, f"run {again} started: the cells run {rid} could not judge "
                                   f"(sockmatrix show {again})\n")
        run = self.f.get(f"/api/runs/{again}")
        self.assertEqual(run["name"], "seed-tcp-unix-again")
        self.assertEqual(sorted((c["host"], c["test"]) for c in run["cells"]),
                         sorted((c["host"], c["test"]) for c in cells))
        p = self.cli("again", "999999")
        self.assertEqual(self.assert_one_error_line(p, 1),
                         "sockmatrix: no run 999999 (sockmatrix runs lists them)")

    def test_show_cancel_and_export_of_a_run_that_does_not_exist_name_it_and_runs(self):
        status, body = self.f.post("/api/runs/999999/cancel", {})
        self.assertEqual((status, body.get("field")), (404, "id"))
        for cmd in (["show", "999999"], ["cancel", "999999"], ["export", "999999", "--format", "csv"],
                    ["anomalies", "999999"]):
            p = self.cli(*cmd)
            self.assertEqual(self.assert_one_error_line(p, 1),
                             "sockmatrix: no run 999999 (sockmatrix runs lists them)", cmd)

    def test_run_with_an_unknown_preset_lists_the_presets(self):
        p = self.cli("run", "--preset", "nope")
        line = self.assert_one_error_line(p, 1, 'no preset "nope"')
        # The option as typed, not the API's field.
        self.assertTrue(line.startswith("sockmatrix: --preset: no preset"), line)
        self.assertNotIn("(field: preset)", line)  # the message names its field already
        for name in ("seed-tcp-unix", "seed-http", "quick", "full"):
            self.assertIn(name, line)

    def test_a_bad_spec_file_names_the_file_and_the_place(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as spec:
            spec.write('{"name": "s",\n "tests": [{"workload": "stream",}]}\n')
        self.addCleanup(os.unlink, spec.name)
        p = self.cli("run", "--spec", spec.name)
        # The "}" where a field name should be is column 34; cJSON stops just past it.
        self.assertEqual(self.assert_one_error_line(p, 1),
                         f"sockmatrix: --spec {spec.name}: line 2, column 35: not valid JSON")
        # "pairs" inside the test: the JSON path, and where pairs goes instead.
        with open(spec.name, "w") as f:
            json.dump({"name": "s", "tests": [{"workload": "rr", "scope": "pair",
                                               "pairs": "mesh"}]}, f)
        p = self.cli("run", "--spec", spec.name)
        self.assert_one_error_line(p, 1, f"--spec {spec.name}: at tests[0].pairs:",
                                   'goes in the spec, next to "tests"')

    def test_presets_give_the_jobs_on_the_fleet_and_an_estimate_from_the_last_run(self):
        rid = self.finished_run()
        run = self.f.get(f"/api/runs/{rid}")
        p = self.cli("presets")
        self.assertEqual(p.returncode, 0, p)
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0].split()[:4], ["NAME", "JOBS", "(2", "HOSTS)"])
        rows = {line.split()[0]: line for line in lines[1:]}
        self.assertEqual(set(rows), {"seed-tcp-unix", "seed-http", "quick", "full"})
        # seed-tcp-unix: 3 variants x 12 repetitions x 2 hosts; the run above had 2
        # repetitions (24 jobs, more where a disturbed sample was measured again), so its time
        # is scaled by 72 over its jobs.
        took = (run["finished_ms"] - run["created_ms"]) / 1000
        total = run["progress"]["total"]
        m = re.search(rf"^seed-tcp-unix\s+72\s+about (?:(\d+)m)?(\d+)s \(run {rid} seed-tcp-unix: "
                      rf"{total} jobs in ", rows["seed-tcp-unix"])
        self.assertIsNotNone(m, rows["seed-tcp-unix"])
        est = int(m.group(1) or 0) * 60 + int(m.group(2))
        self.assertAlmostEqual(est, took * 72 / total, delta=2)
        self.assertIn("no estimate (no finished run of it yet)", rows["quick"])

if __name__ == "__main__":
    unittest.main()
