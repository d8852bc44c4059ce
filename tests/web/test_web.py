"""Browser tests of the dashboard: the real coordinator serves web/ (--web-dir) beside its API, real
agents (lab namespaces when root) run real runs, and Debian's Chromium, driven by drive.mjs
(playwright-core), goes through the views. What the page shows is checked against the API and
the store: the fleet, a run launched from the form, a reload mid-run, the CSV download, an
anomalous host, a refused token. Screenshots of each view land in docs/screenshots/."""
import json
import os
import select
import shutil
import ssl
import subprocess
import sys
import tempfile
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from smtest import Fleet, can_lab, netns, unless_root, unless_stolen  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
WEB_DIR = os.environ.get("SM_WEB_DIR") or os.path.join(ROOT, "web")
SHOTS = os.path.join(ROOT, "docs", "screenshots")
# Chromium's headless shell (the browser without its windowed parts, as Playwright runs headless
# by default): the same Blink and V8, with a fifth less CPU than the full browser for the same
# test file (test_web_views: 15.1 CPU-s against 18.0-18.9).
CHROMIUM = "/usr/bin/chromium-headless-shell"
DRIVE = os.path.join(HERE, "drive.mjs")
NODE = shutil.which("node")

# Small and quick: 2 variants x 3 repetitions a host.
SMALL = {"hosts": "all", "repetitions": 3, "warmup": 0,
         "tests": [{"workload": "stream", "scope": "local", "transport": ["tcp", "unix"],
                    "msg_size": 1000, "count": 200}]}
# Long enough to reload the page in the middle: 60 jobs of 0.4 s, one at a time (cancelled
# once the test has seen what it needs); "remeasure": 0 keeps its total what the page was
# shown, whatever this busy machine disturbs.
LONG = {"name": "long", "hosts": "all", "repetitions": 10, "remeasure": 0, "warmup": 0,
        "parallel": False,
        "tests": [{"workload": "stream", "scope": "local", "transport": ["tcp", "unix"],
                   "msg_size": 1000, "duration_ms": 400}]}
# The 2010 test one job at a time on hosts pinned alike (see test_analysis_lab.py).
SLOW = {"name": "slow", "hosts": "all", "repetitions": 5, "warmup": 1, "parallel": False,
        "tests": [{"workload": "stream", "scope": "local", "transport": ["tcp", "unix"],
                   "framing": "lines", "msg_size": 128, "count": 8192}]}


# The test file's one Chromium (`node drive.mjs --serve`), shared by its tests: each drive()
# call connects to it and works in a browser context of its own.
BROWSER = {"ws": None}


def setUpModule():
    missing = []
    if not os.access(CHROMIUM, os.X_OK):
        missing.append(f"{CHROMIUM} (Debian's chromium-headless-shell; make deps installs it)")
    if not NODE:
        missing.append("node (Debian's nodejs; make deps installs it)")
    if not os.path.isdir(os.path.join(HERE, "node_modules", "playwright-core")):
        missing.append("tests/web/node_modules (make deps runs npm ci there)")
    if not os.path.isfile(os.path.join(WEB_DIR, "index.html")):
        missing.append(f"{WEB_DIR}/index.html (SM_WEB_DIR: the build's copy of web/)")
    if missing:
        raise AssertionError("the browser tests cannot run, missing: " + "; ".join(missing))
    start_browser()


def start_browser():
    """Launches the file's Chromium; stopped (by its PID) when the file's tests are done."""
    log = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen([NODE, DRIVE, "--serve"], cwd=HERE, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=log, text=True)
    unittest.addModuleCleanup(stop_browser, proc, log)
    ready = select.select([proc.stdout], [], [], 60)[0]
    line = proc.stdout.readline() if ready else ""
    try:
        BROWSER["ws"] = json.loads(line)["ws"]
    except (ValueError, KeyError):
        log.seek(0)
        raise AssertionError(f"drive.mjs --serve did not start Chromium in 60 s (exit "
                             f"{proc.poll()}): {line!r}\n{log.read()[-2000:]}") from None


def stop_browser(proc, log):
    BROWSER["ws"] = None
    try:
        proc.stdin.close()  # drive.mjs closes the browser and exits
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.terminate()  # Playwright's server closes its browser on SIGTERM
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    finally:
        proc.stdout.close()
        log.close()


def png_size(path):
    """(width, height) from a PNG's IHDR."""
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        raise AssertionError(f"{path} is not a PNG")
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def web_fleet(n=3, lab_args=(), agent_args=(), extra_args=()):
    """A Fleet whose coordinator serves the dashboard; not started."""
    # Namespaces only where a host must be shaped: their interfaces coming and going make
    # Chromium abort loads (ERR_NETWORK_CHANGED), and the other views need no lab.
    f = Fleet(n=n, hold_ms=1000, lab=None if lab_args else False, lab_args=lab_args)
    f.extra_args += ["--web-dir", WEB_DIR, *extra_args]
    f.agent_args += list(agent_args)
    return f


class WebCase(unittest.TestCase):
    def drive(self, f, scenario, timeout=300, **args):
        """Runs one drive.mjs scenario against f's coordinator; its findings as a dict. A page
        that throws (an uncaught exception or rejection) fails the test whatever it showed."""
        args = {"url": f.url, "call_ms": (timeout - 20) * 1000, "ws": BROWSER["ws"], **args}
        proc = subprocess.Popen([NODE, DRIVE, scenario, json.dumps(args)], cwd=HERE,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.terminate()  # Playwright closes its browser on SIGTERM
            try:
                proc.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
            raise AssertionError(f"drive.mjs {scenario} ran past {timeout} s")
        lines = out.strip().splitlines()
        try:
            res = json.loads(lines[-1])
        except (IndexError, ValueError):
            raise AssertionError(f"drive.mjs {scenario} exited {proc.returncode} with no result:"
                                 f"\n{out[-2000:]}\n{err[-2000:]}") from None
        if not res.get("ok"):
            raise AssertionError(
                f"drive.mjs {scenario}: {res.get('error')}\n  at {res.get('url')}\n"
                f"  page: {res.get('body')!r}\n  page errors: {res.get('page_errors')}\n"
                f"  console: {res.get('console')}\n"
                f"{err[-1500:]}\ncoordinator log:\n{f.log('coordinator')[-1500:]}")
        self.assertEqual(res["page_errors"], [], f"the page threw during {scenario}")
        return res

    def start_run(self, f, body):
        return f.start_run(body)

    def wait_run(self, f, rid, timeout=180):
        return f.wait_run(rid, timeout)

    def raw(self, f, path):
        with urllib.request.urlopen(f.url + path, timeout=10) as r:
            return r.read()

    def check_launch(self, f, res):
        """The launch scenario's findings against the API and the store."""
        rid = int(res["run"])
        self.assertEqual(res["run_hash"], f"#/run/{rid}")
        r = self.wait_run(f, rid)
        self.assertEqual((r["name"], r["state"]), ("quick", "done"), r)
        total = r["progress"]["total"]
        # The form's repetitions reached the spec: one measured job per cell (the rest warm up),
        # and others only where a round measured a disturbed sample again (repetition 1 on).
        measured = f.query("SELECT COUNT(*) FROM jobs WHERE run_id = ? AND warmup = 0 AND "
                           "rep = 0", rid)[0][0]
        self.assertEqual(measured, len(r["cells"]), "repetitions 1 from the form")
        self.assertEqual({c["host"] for c in r["cells"]}, set(f.hosts), "hosts all")
        # The run view: it was seen running, its bar only went forward and ended full.
        self.assertEqual(res["state"], "done")
        states = [s["state"] for s in res["samples"]]
        self.assertIn("running", states, res["samples"])
        values = [s["value"] for s in res["samples"] if s["value"] is not None]
        self.assertEqual(values, sorted(values), "progress went backwards")
        self.assertGreaterEqual(len(set(values)), 2, res["samples"])
        self.assertEqual((res["value"], res["max"]), (total, total), res["samples"][-3:])
        # The form left "parallel" to the coordinator, and the agents of this fleet share this
        # machine: its jobs went one at a time, and the API and the run view say why.
        self.assertNotIn("parallel", res["bodies"][-1])
        self.assertIs(r["parallel"], False, r)
        self.assertIn("share one machine (boot id", r["serial_reason"])
        self.assertEqual(res["parallel"], {"parallel": "false",
                                           "text": "Jobs run one at a time: " + r["serial_reason"]})
        # One entry per job, each job once.
        self.assertEqual(len(res["jobs"]), total)
        self.assertEqual(len(set(res["jobs"])), total, res["jobs"])
        # And the comparison: one row per host.
        self.assertEqual(res["compare_hash"], f"#/compare/{rid}")
        self.assertEqual(sorted(res["compare_hosts"]), sorted(f.hosts))
        return rid


class DashboardTest(WebCase):
    """One fleet for the views that need nothing special; each test ends its own runs."""

    @classmethod
    def setUpClass(cls):
        cls.f = web_fleet()
        cls.addClassCleanup(cls.f.stop)
        cls.f.start()

    def test_the_fleet_view_lists_every_agent_online(self):
        res = self.drive(self.f, "fleet", agents=sorted(self.f.hosts))
        api = {a["name"]: a["status"] for a in self.f.get("/api/agents")["agents"]}
        self.assertEqual(api, {h: "online" for h in self.f.hosts})
        self.assertEqual(res["rows"], api)

    def test_quick_launched_from_the_form_runs_to_done_and_compares_every_host(self):
        res = self.drive(self.f, "launch", preset="quick", hosts="all", repetitions=1,
                         n_hosts=len(self.f.hosts))
        self.assertEqual([p["status"] for p in res["posts"]], [201])
        self.check_launch(self.f, res)

    def test_a_reload_mid_run_shows_the_state_and_progress_the_api_has(self):
        f = self.f
        rid = self.start_run(f, LONG)
        self.addCleanup(lambda: f.get(f"/api/runs/{rid}")["state"] == "running" and
                        f.post(f"/api/runs/{rid}/cancel", {}))
        res = self.drive(f, "reload", run=rid)
        before, after, later = res["before"], res["after"], res["later"]
        api0, api1 = res["api0"], res["api1"]
        self.assertEqual((before["state"], api0["state"], api1["state"]),
                         ("running", "running", "running"), "the run ended too soon to test")
        self.assertEqual(after["hash"], f"#/run/{rid}")
        self.assertEqual(after["state"], "running")
        # After the reload the page shows what the API had: not less than just before, not more
        # than just after.
        lo = api0["progress"]["done"] + api0["progress"]["failed"]
        hi = api1["progress"]["done"] + api1["progress"]["failed"]
        self.assertLessEqual(lo, after["value"], res)
        self.assertLessEqual(after["value"], hi, res)
        self.assertGreaterEqual(after["value"], before["value"])
        self.assertEqual(after["max"], api1["progress"]["total"])
        # And it is live again without another reload.
        self.assertGreater(later["value"], after["value"], "no progress after the reload")
        status, _ = f.post(f"/api/runs/{rid}/cancel", {})
        self.assertEqual(status, 200)

    def test_the_csv_download_is_the_apis_csv_byte_for_byte(self):
        f = self.f
        rid = self.start_run(f, dict(SMALL, name="csv"))
        self.assertEqual(self.wait_run(f, rid)["state"], "done")
        path = os.path.join(f.dir, "download.csv")
        res = self.drive(f, "csv", run=rid, save_to=path)
        self.assertIsNone(res["failure"])
        with open(path, "rb") as fh:
            got = fh.read()
        want = self.raw(f, f"/api/runs/{rid}/table?format=csv")
        self.assertTrue(want.startswith(b"host,"), want[:80])
        self.assertEqual(got, want)

    def test_screenshots_of_every_view(self):
        f = self.f
        # A few seconds long, so that the run view watches it finish.
        rid = self.start_run(f, dict(LONG, name="screens", repetitions=3,
                                     tests=[dict(LONG["tests"][0], duration_ms=200)]))
        os.makedirs(SHOTS, exist_ok=True)
        res = self.drive(f, "shots", run=rid, run_name="screens", dir=SHOTS,
                         compare_name="compare-1280", width=1280, height=800)
        self.assertEqual(self.wait_run(f, rid)["state"], "done")
        for view in ("fleet", "launch", "run", "compare-1280", "history"):
            self.assertEqual(res[view], os.path.join(SHOTS, f"{view}.png"))
            self.assertEqual(png_size(res[view]), (1280, 800), view)
        self.assertTrue(res["history_mentions_run"], "the history view does not list the run")


@netns  # and it judges a run's anomalies: ctest runs it alone (test_web_netns)
@unless_root(can_lab(), "needs root: h2's TCP is slowed by tc in its network namespace")
class AnomalyTest(WebCase):
    @unless_stolen
    def test_the_host_with_slow_tcp_is_marked_on_the_compare_view(self):
        # h2 8 times slower than its own loopback TCP measured unshaped (test_analysis_lab.py
        # says why 8), so that it stands apart however fast this machine is.
        f = web_fleet(lab_args=["--slow-tcp", "h2:x8"], agent_args=["--affinity", "0,1"])
        self.addCleanup(f.stop)
        f.start()
        rid = self.start_run(f, SLOW)
        self.assertEqual(self.wait_run(f, rid, timeout=300)["state"], "done")
        found = f.get(f"/api/runs/{rid}/anomalies")["anomalies"]
        table = self.raw(f, f"/api/runs/{rid}/table?format=md").decode()
        self.assertEqual({a["host"] for a in found}, {"h2"},
                         f"the analysis itself (API)\n{table}\n{found}")
        os.makedirs(SHOTS, exist_ok=True)
        shot = os.path.join(SHOTS, "compare.png")
        res = self.drive(f, "anomaly", run=rid, hosts=sorted(f.hosts), shot=shot, width=1600,
                         height=1000)
        rows = res["rows"]
        self.assertEqual(sorted(rows), sorted(f.hosts))
        self.assertIn("anomalous", rows["h2"])
        self.assertNotIn("anomalous", rows["h1"])
        self.assertNotIn("anomalous", rows["h3"])
        self.assertEqual(set(res["anomalies"]), {"h2"})
        self.assertEqual(png_size(shot), (1600, 1000))
        # Every test has its plot; the flagged ones mark h2, and each plot's axis is log
        # exactly when its figures span more than 10x (what this machine measured decides).
        t = f.get(f"/api/runs/{rid}/table?format=json")
        plots = self.drive(f, "chart", run=rid)["plots"]
        self.assertEqual(plots["title"], "Per host")
        self.assertEqual(sorted(plots["plots"]), sorted(c["label"] for c in t["columns"]))
        flagged_tests = {a["test"] for a in found if not a.get("ratio")}
        for k, col in enumerate(t["columns"]):
            p = plots["plots"][col["label"]]
            figures = [x for c in t["cells"] if c["column"] == k
                       for x in (c["median"], c["ci95_low"], c["ci95_high"]) if x and x > 0]
            self.assertEqual(p["scale"], "log" if max(figures) / min(figures) > 10 else "linear",
                             (col["label"], figures))
            self.assertEqual(p["flagged"], "h2" if col["label"] in flagged_tests else "", p)
        # Why: each of h2's cards names the tbf on its lo first, against the fleet's noqueue,
        # as the coordinator's fingerprints say.
        qdisc = f.get("/api/agents/h2/fingerprint")["fingerprint"]["items"]["if.lo.qdisc"]
        self.assertTrue(qdisc.startswith("tbf rate "), qdisc)
        why_shot = os.path.join(SHOTS, "anomaly-why.png")
        cards = self.drive(f, "anomaly_why", run=rid, shot=why_shot, width=1600,
                           height=1000)["cards"]
        self.assertEqual(png_size(why_shot), (1600, 1000))
        self.assertTrue(cards)
        for card in cards:
            self.assertEqual(card["host"], "h2", card)
            first = card["differences"][0]
            self.assertEqual(first["item"], "if.lo.qdisc", card)
            self.assertIn(qdisc, first["text"])
            self.assertIn("noqueue", first["text"])
        # And the host settings page highlights that row, h2's cell the odd one.
        res = self.drive(f, "hosts", hosts=["h1", "h2", "h3"])
        row = res["all"]["differs"]["if.lo.qdisc"]
        self.assertEqual(row["h2"], {"text": qdisc, "odd": True}, row)
        self.assertEqual((row["h1"]["text"], row["h1"]["odd"]), ("noqueue", False), row)
        # From the first page: the Fleet names h2 flagged with the tests the grid flags, and
        # h2's page shows those flags, its trend's flagged run and the qdisc it differs in.
        grid = f.get("/api/grid")
        flagged = sorted(c["test"] for c in grid["cells"]
                         if c["host"] == "h2" and c["verdict"] == "flagged")
        self.assertTrue(flagged, grid)
        fleet = {r["agent"]: r for r in self.drive(f, "fleet_verdicts")["rows"]}
        self.assertEqual((fleet["h2"]["verdict"], fleet["h2"]["tests"]),
                         ("flagged", ", ".join(flagged)))
        self.assertNotEqual(fleet["h1"]["verdict"], "flagged")
        page = self.drive(f, "host_page", host="h2", shot=os.path.join(SHOTS, "host-h2.png"))
        self.assertEqual(page["verdict"], "flagged")
        shown = {v["test"]: v for v in page["verdicts"]}
        for t in flagged:
            self.assertEqual(shown[t]["verdict"], "flagged", shown)
            self.assertEqual(shown[t]["flagged"], "1", shown[t])
        differs = {d["item"]: d for d in page["fp"]["differs"]}
        self.assertEqual(differs["if.lo.qdisc"]["value"], qdisc, differs)
        self.assertIn("noqueue", differs["if.lo.qdisc"]["fleet"])
        self.assertEqual(page["console_errors"], [])


class TokenTest(WebCase):
    def test_a_wrong_token_shows_an_error_and_starts_nothing_and_the_right_one_runs(self):
        f = web_fleet()
        self.addCleanup(f.stop)
        token = "dashboard-" + os.urandom(12).hex()
        path = os.path.join(f.dir, "token")
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as fh:
            fh.write(token + "\n")
        f.extra_args += ["--token-file", path]
        f.start()
        wrong = "not-the-token-0123456789"
        res = self.drive(f, "token", preset="quick", hosts="all", repetitions=1, token=wrong,
                         parallel="true")
        # The form's parallel choice is sent as the spec's "parallel".
        self.assertEqual(res["bodies"], [{"preset": "quick", "hosts": "all", "repetitions": 1,
                                          "parallel": True}])
        self.assertTrue(res["error"]["visible"])
        self.assertTrue(res["error"]["text"])
        self.assertEqual(res["hash"], "#/launch")
        self.assertEqual(res["posts"], [{"auth": f"Bearer {wrong}", "status": 401}])
        self.assertEqual(f.get("/api/runs")["runs"], [])
        self.assertEqual(f.query("SELECT COUNT(*) FROM jobs")[0][0], 0)
        # The same form with the right token launches: the run is made as the form asked and
        # the page follows it (a launch run to its end is DashboardTest's).
        res = self.drive(f, "token", preset="quick", hosts="all", repetitions=1, token=token,
                         accepted=True)
        self.assertEqual(res["posts"], [{"auth": f"Bearer {token}", "status": 201}])
        runs = f.get("/api/runs")["runs"]
        self.assertEqual(len(runs), 1, runs)
        rid = runs[0]["id"]
        self.assertEqual(res["run_hash"], f"#/run/{rid}")
        r = f.get(f"/api/runs/{rid}")
        self.assertEqual(r["name"], "quick")
        self.assertEqual({c["host"] for c in r["cells"]}, set(f.hosts))
        f.headers = {"Authorization": f"Bearer {token}"}
        self.assertEqual(f.post(f"/api/runs/{rid}/cancel", {})[0], 200)  # nothing more to see

    def test_off_loopback_the_page_asks_for_the_token_then_reads_and_follows_the_fleet(self):
        f = web_fleet()
        self.addCleanup(f.stop)
        token = "dashboard-" + os.urandom(12).hex()
        path = os.path.join(f.dir, "token")
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as fh:
            fh.write(token + "\n")
        f.extra_args += ["--http", f"0.0.0.0:{f.http_port}", "--token-file", path,
                         "--insecure-http"]
        f.headers = {"Authorization": f"Bearer {token}"}
        f.start()
        res = self.drive(f, "public", token=token, agents=sorted(f.hosts))
        self.assertIn("token", res["asked"])
        self.assertEqual(sorted(res["rows"]), sorted(f.hosts))
        self.assertEqual(res["ws"], "live")  # /ws took the token as its subprotocol
        self.assertTrue(res["form_gone"])
        self.assertEqual(res["csp_errors"], [])
        with open(os.path.join(f.dir, "coordinator.log")) as log:
            self.assertNotIn(token, log.read())

    def test_over_https_the_page_reads_the_fleet_and_follows_it_over_wss(self):
        from test_tls import make_cert, make_token
        f = web_fleet()
        self.addCleanup(f.stop)
        cert, key = make_cert(f.dir)
        path, token = make_token(f.dir)
        f.extra_args += ["--http", f"0.0.0.0:{f.http_port}", "--token-file", path,
                         "--tls-cert", cert, "--tls-key", key]
        f.url = f"https://127.0.0.1:{f.http_port}"
        f.ssl = ssl.create_default_context(cafile=cert)
        f.headers = {"Authorization": f"Bearer {token}"}
        f.start()
        res = self.drive(f, "public", token=token, agents=sorted(f.hosts), ignore_https=True)
        self.assertEqual(sorted(res["rows"]), sorted(f.hosts))
        self.assertEqual(res["ws"], "live")
        self.assertTrue(res["ws_urls"], "the page opened no WebSocket")
        for url in res["ws_urls"]:
            self.assertTrue(url.startswith(f"wss://127.0.0.1:{f.http_port}/ws"), url)
        self.assertEqual(res["csp_errors"], [])


if __name__ == "__main__":
    unittest.main()
