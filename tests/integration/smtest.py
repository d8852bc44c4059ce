"""Shared helpers for the integration tests: where the binaries are, and how to run them."""
import functools
import json
import os
import subprocess

BIN_DIR = os.environ.get("SM_BIN_DIR") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "bin")
AGENT = os.path.join(BIN_DIR, "sockmatrix-agent")


class Run:
    def __init__(self, proc):
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def json(self):
        return json.loads(self.out)


def agent(*args, timeout=120, raw=False):
    """Runs sockmatrix-agent with args; a hang past `timeout` seconds fails the test.
    raw=True keeps stdout as bytes (line ends untouched)."""
    proc = subprocess.run([AGENT, *args], capture_output=True, text=not raw, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    return Run(proc)


# ---- root-only tests: a skip without root, a failure under `make test` as root ----

import unittest

# Set to 1 by the Makefile's test targets when they run as root: there the lab can be made, and
# a root-only test that skips says it could not be (no `ip netns`, no tc, a stale namespace),
# which is a failure, not a green run.
REQUIRE_ROOT = os.environ.get("SM_REQUIRE_ROOT_TESTS") == "1"


def _root_failure(reason):
    return f"a root-only test could not run (SM_REQUIRE_ROOT_TESTS=1): {reason}"


def unless_root(ok, reason):
    """Decorates a test or a TestCase class that needs root (the lab's namespaces, tc,
    systemd-nspawn...): skipped, saying `reason`, when `ok` is false. Under
    SM_REQUIRE_ROOT_TESTS=1 it fails instead: the class's setUpClass, or the test, raises."""
    if ok:
        return lambda t: t
    if not REQUIRE_ROOT:
        return unittest.skip(reason)

    def fail(t):
        if isinstance(t, type):
            def setUpClass(cls):
                raise AssertionError(_root_failure(reason))
            t.setUpClass = classmethod(setUpClass)
            return t

        @functools.wraps(t)
        def run(self, *args, **kwargs):
            self.fail(_root_failure(reason))
        return run
    return fail


def netns(cls):
    """Marks a TestCase class whose tests make network namespaces (the lab: lab.sh's
    namespaces, bridge and veths; tc qdiscs, links cut), which needs root. A file with such
    classes and others is run by ctest in two parts (smrun.py --part, tests/CMakeLists.txt):
    the others are loopback tests, which make check runs too."""
    cls.sm_netns = True
    return cls


def skip_root(test, reason):
    """In a test: skips it for lack of root (or of what root makes), saying `reason`; a failure
    under SM_REQUIRE_ROOT_TESTS=1."""
    if REQUIRE_ROOT:
        test.fail(_root_failure(reason))
    test.skipTest(reason)


# ---- steal: the CPU time a virtual machine's host takes from it ----

# The agent's own limit (docs/analysis.md, clause 1 of "disturbed"): above it, samples are
# rightly set aside or stretched, and a test that judges them has nothing clean to judge.
STEAL_PCT = 5


def _cpu_ticks():
    """(all ticks, steal ticks) since boot, from /proc/stat's aggregate line."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return sum(v), v[7]


# Every Fleet made in this process, so that unless_stolen can read what their agents measured.
_FLEETS = []


def _stolen_jobs(fleets):
    """How many results of these fleets' stores the agents set aside as disturbed by steal (the
    agent's own per-job rule: steal above 5% of the job's ticks), and how many results in all."""
    stolen = total = 0
    for f in fleets:
        try:
            (n, s), = f.query("SELECT count(*), coalesce(sum(result_json LIKE "
                              "'%\"disturbed_reason\":\"steal%'), 0) FROM results")
        except Exception:  # a fleet whose store is gone or was never made says nothing
            continue
        total += n
        stolen += s
    return stolen, total


def unless_stolen(test):
    """For a test that judges measurements: when it fails after its premise, a quiet machine,
    was measured to fail, it is skipped, saying how and what failed. A test whose fleets' agents
    measured (each agent judges every job, docs/analysis.md) is skipped only when they set aside
    jobs of its runs as disturbed by steal: steal is bursty, and a test can average 3% and still
    have jobs that lost more than 5%, whose samples its judgement then lacks; steal the agents
    did not see in any job is no excuse for a failure, which may be the product's own (a job past
    its time limit counted as a sample once hid this way). A test without a fleet (the agent's
    --once) has only the machine's count: more than STEAL_PCT% of its CPU time stolen over the
    whole test. A failure with neither is a failure."""
    @functools.wraps(test)
    def run(self, *args, **kwargs):
        all0, steal0 = _cpu_ticks()
        first_fleet = len(_FLEETS)
        try:
            return test(self, *args, **kwargs)
        except AssertionError as e:
            all1, steal1 = _cpu_ticks()
            pct = 100 * (steal1 - steal0) / max(1, all1 - all0)
            fleets = _FLEETS[first_fleet:]
            stolen, total = _stolen_jobs(fleets)
            first = (str(e).splitlines() or [""])[0][:300]
            if not fleets and pct > STEAL_PCT:
                self.skipTest(f"this machine's host took {pct:.0f}% of its CPU time (steal > "
                              f"{STEAL_PCT}%) during the test, so its samples were set aside as "
                              f"disturbed or stretched; what failed: {first}")
            if stolen:
                self.skipTest(f"the agents set aside {stolen} of this test's {total} jobs as "
                              f"disturbed by steal (this machine's host took {pct:.1f}% of its "
                              f"CPU time over the test, in bursts); what failed: {first}")
            raise
    return run


# ---- a fleet: the real coordinator and agents, on lab namespaces when root, else loopback ----

import os as _os
import sys
import random
import shutil
import signal
import socket
import sqlite3
import tempfile
import time
import urllib.request

COORDINATOR = _os.path.join(BIN_DIR, "sockmatrix-coordinator")
CLI = _os.path.join(BIN_DIR, "sockmatrix")
ROGUE = _os.path.join(BIN_DIR, "sm-rogue")
LAB = _os.path.join(_os.path.dirname(__file__), "..", "..", "deploy", "lab", "lab.sh")
# One API request, connect to last byte: as long as the CLI waits (SM_HTTP_TIMEOUT_S). Reports
# are built on the coordinator's worker thread at a lower priority than everything else here, so
# on a machine whose CPUs are all taken they wait (a compare of two 300-cell runs under ASan:
# 0.16 s alone, 20.1 s beside six busy loops at nice -5); a test checks what the API answers,
# not how fast.
HTTP_TIMEOUT_S = 30


def can_lab():
    return _os.geteuid() == 0 and shutil.which("ip") is not None and _os.path.exists(LAB)


def free_port(addr="127.0.0.1"):
    with socket.socket() as s:
        s.bind((addr, 0))
        return s.getsockname()[1]


def wait_for(what, check, timeout, interval=0.1):
    """Polls check() until it returns a true value; fails the test after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        v = check()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def lab_up(n, tag, lab_args=()):
    """lab.sh up on a subnet no address of this machine is on; (prefix, subnet). Other labs
    (other tests, on this machine at the same time) come and go: one that took the subnet or
    prefix between the look and the up makes lab.sh refuse, and the next try picks another."""
    prefix = f"{tag}{_os.getpid() % 10000}{random.randint(0, 99)}-"
    for attempt in range(5):
        used = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True,
                              text=True).stdout
        free = [x for x in range(100, 201) if f" 10.213.{x}.1/" not in used]
        subnet = f"10.213.{random.choice(free)}"
        r = subprocess.run(["bash", LAB, "up", str(n), "--prefix", prefix, "--subnet", subnet,
                            *lab_args], capture_output=True, text=True, timeout=60)
        if r.returncode == 0:
            return prefix, subnet
        if "already in use" not in r.stderr and "exists" not in r.stderr:
            break
        prefix = f"{tag}{_os.getpid() % 10000}{random.randint(0, 99)}-"
    raise AssertionError(f"lab.sh up {n} --prefix {prefix} --subnet {subnet}: "
                         f"{r.stderr.strip()}")


# Where a fleet's jobs are not measured (what is under test is planning, storage, faults,
# recovery), every agent runs both ends of its jobs on CPU 0: a job that runs for a duration
# then keeps one CPU busy, not two, and the tests running beside it keep the other.
UNMEASURED_ARGS = ("--affinity", "0,0")


class Fleet:
    """N agents and a coordinator. hold_ms is short so that lost agents show quickly.
    unmeasured: its jobs' figures are not judged (UNMEASURED_ARGS)."""

    def __init__(self, n=3, hold_ms=1000, lab=None, lab_args=(), unmeasured=False):
        self.n = n
        self.hold_ms = hold_ms
        self.lab = can_lab() if lab is None else lab
        self.dir = tempfile.mkdtemp(prefix="sm-fleet-")
        self.key = _os.path.join(self.dir, "key")
        self.db = _os.path.join(self.dir, "coordinator.db")
        self.coord = None
        self.agents = {}
        self.hosts = {}  # name -> {"netns":..., "addr":...}
        self.prefix = f"t{_os.getpid() % 10000}{random.randint(0, 99)}-"
        _FLEETS.append(self)
        subprocess.run([COORDINATOR, "keygen", self.key], check=True, capture_output=True)
        if self.lab:
            self.lab_up(n, lab_args)
            st = json.loads(subprocess.run(["bash", LAB, "status", "--json", "--prefix",
                                            self.prefix], check=True, capture_output=True,
                                           text=True).stdout)
            self.bus_addr = st["coordinator_addr"]
            for h in st["hosts"]:
                self.hosts[h["name"]] = h
        else:
            self.bus_addr = "127.0.0.1"
            for i in range(1, n + 1):
                self.hosts[f"h{i}"] = {"name": f"h{i}", "netns": None, "addr": "127.0.0.1"}
        self.bus_port = free_port(self.bus_addr if not self.lab else "0.0.0.0")
        self.http_port = free_port()
        self.url = f"http://127.0.0.1:{self.http_port}"
        self.extra_args = []  # more coordinator options (later ones win)
        self.agent_args = list(UNMEASURED_ARGS) if unmeasured else []  # for every agent
        # A loopback fleet announces 127.0.0.1 as every agent's data address, which the default
        # data address policy refuses (the lab's 10.213.x.y are private addresses: allowed).
        self.policy_args = [] if self.lab else ["--data-addr-allow", "loopback"]
        self.headers = {}  # sent with every request of get/post (an Authorization, say)
        self.ssl = None  # an ssl.SSLContext for an https:// url (a coordinator with TLS)

    def lab_up(self, n, lab_args):
        self.prefix, self.subnet = lab_up(n, "t", lab_args)

    # -- processes --
    def start_coordinator(self):
        r, w = _os.pipe()
        with open(_os.path.join(self.dir, "coordinator.log"), "a") as log:
            self.coord = subprocess.Popen(
                [COORDINATOR, "--listen", f"tcp://{self.bus_addr}:{self.bus_port}", "--http",
                 f"127.0.0.1:{self.http_port}", "--db", self.db, "--key-file", self.key,
                 "--hold-ms", str(self.hold_ms), "--ready-fd", str(w), "--log-level", "info",
                 *self.policy_args, *self.extra_args],
                pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=log)
        _os.close(w)
        with _os.fdopen(r) as f:
            line = f.readline()
        if not line.startswith("ready"):
            raise AssertionError(f"coordinator did not start: {self.log('coordinator')}")

    def agent_key(self, name, fleet=None):
        """The path of agent `name`'s own key, derived from the fleet key (self.key unless
        given) with `keygen --agent`, as an operator would make it."""
        fleet = fleet or self.key
        path = _os.path.join(self.dir, f"agent-{name}-{_os.path.basename(fleet)}.key")
        if not _os.path.exists(path):
            subprocess.run([COORDINATOR, "keygen", "--agent", name, "--key-file", fleet, path],
                           check=True, capture_output=True)
        return path

    def start_agent(self, name, fleet_key=None, coordinator=None, env=None):
        """Starts agent `name` with its own key, derived from fleet_key (default: the fleet's
        key), polling coordinator (default: the fleet's; another URL puts something between),
        with more environment variables from env."""
        h = self.hosts[name]
        cmd = [AGENT, "--coordinator", coordinator or f"tcp://{self.bus_addr}:{self.bus_port}",
               "--key-file", self.agent_key(name, fleet_key), "--name", name, "--spool-dir",
               self.spool(name), "--sock-dir", self.dir, "--data-addr", h["addr"], "--reply-wait-ms", "3000", "--log-level", "info",
               "--labels", f"rack={name[1:]},role=test", *self.policy_args, *self.agent_args]
        if h.get("netns"):
            cmd = ["ip", "netns", "exec", h["netns"]] + cmd  # ip execs the agent: same PID
        with open(_os.path.join(self.dir, f"agent-{name}.log"), "a") as log:
            self.agents[name] = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                                 stdin=subprocess.DEVNULL, stderr=log,
                                                 env={**_os.environ, **(env or {})})

    def start(self):
        self.start_coordinator()
        for name in self.hosts:
            self.start_agent(name)
        wait_for("every agent online", lambda: self.online() >= set(self.hosts), 20)
        return self

    def spool(self, name):
        return _os.path.join(self.dir, f"spool-{name}")

    def log(self, name):
        try:
            with open(_os.path.join(self.dir, f"{name}.log")) as f:
                return f.read()[-3000:]
        except OSError:
            return ""

    def kill(self, proc, sig=signal.SIGKILL):
        """Signals proc (one of ours, by its PID); for SIGTERM/SIGKILL waits for it, and a
        process that ignores SIGTERM for 10 s gets SIGKILL rather than outliving the test."""
        if proc and proc.poll() is None:
            proc.send_signal(sig)
            if sig in (signal.SIGKILL, signal.SIGTERM):
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(10)
                    raise AssertionError(f"pid {proc.pid} ignored SIGTERM for 10 s")

    def stop(self):
        """Stops everything; a daemon that does not exit 0 on SIGTERM (a crash, a sanitizer
        report at exit) fails the test, with its log."""
        bad = []
        procs = [(f"agent-{n}", p) for n, p in self.agents.items()] + [("coordinator", self.coord)]
        for name, p in procs:
            if p is None or p.returncode is not None:
                continue  # killed on purpose by the test, and already reaped
            if p.poll() is None:
                try:
                    self.kill(p, signal.SIGTERM)
                except AssertionError as e:
                    bad.append(f"{name}: {e}")
                    continue
            if p.returncode != 0:
                bad.append(f"{name} exited {p.returncode}:\n{self.log(name)}")
        if self.lab:
            subprocess.run(["bash", LAB, "down", "--prefix", self.prefix], capture_output=True,
                           timeout=60)
        shutil.rmtree(self.dir, ignore_errors=True)
        if bad:
            raise AssertionError("\n".join(bad))

    # -- the HTTP API and the store --
    def get(self, path):
        req = urllib.request.Request(self.url + path, headers=self.headers)
        with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT_S, context=self.ssl) as r:
            return json.loads(r.read())

    def get_status(self, path):
        """(status, JSON body) of a GET, errors included."""
        try:
            req = urllib.request.Request(self.url + path, headers=self.headers)
            with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT_S, context=self.ssl) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def post(self, path, body):
        req = urllib.request.Request(self.url + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json",
                                              **self.headers})
        try:
            with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT_S, context=self.ssl) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def start_run(self, body):
        """POSTs a run spec (or {"preset": ...}) and returns the run's id; any answer but 201
        is an AssertionError that quotes it."""
        status, resp = self.post("/api/runs", body)
        if status != 201:
            raise AssertionError(f"POST /api/runs: {status} {resp}")
        return int(resp["run"])

    def wait_run(self, rid, timeout=180):
        """The run's /api/runs/ID once it is no longer running (its state is the caller's to
        judge)."""
        def ended():
            r = self.get(f"/api/runs/{rid}")
            return r if r["state"] != "running" else None
        return wait_for(f"run {rid} to end", ended, timeout, 0.2)

    def run_done(self, body, timeout=180):
        """Starts the run and waits for it to end; its /api/runs/ID, an AssertionError quoting
        it unless it ended done."""
        r = self.wait_run(self.start_run(body), timeout)
        if r["state"] != "done":
            raise AssertionError(f"run {r.get('id')} ended {r['state']}: {r}")
        return r

    def online(self):
        return {a["name"] for a in self.get("/api/agents")["agents"] if a["status"] != "lost"}

    def submit(self, jobs):
        status, body = self.post("/api/jobs", jobs)
        if status != 201:
            raise AssertionError(f"POST /api/jobs: {status} {body}")
        return [int(i) for i in body["jobs"]]

    def job(self, jid):
        return self.get(f"/api/jobs/{jid}")

    def query(self, sql, *args):
        db = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=10)
        try:
            return db.execute(sql, args).fetchall()
        finally:
            db.close()

    def stored(self, ids):
        """(rows, distinct (job, attempt)) in the results table for these jobs, by query."""
        marks = ",".join("?" * len(ids))
        rows = self.query(f"SELECT COUNT(*), COUNT(DISTINCT job_id || '.' || attempt) "
                          f"FROM results WHERE job_id IN ({marks})", *ids)
        return rows[0]


def stream_job(host, count=50, size=1000, **extra):
    params = {"workload": "stream", "transport": "tcp", "msg_size": size}
    if count is not None:
        params["count"] = count
    params.update(extra)
    return {"host": host, "params": params}


class WsClient:
    """A minimal WebSocket client (RFC 6455) for the coordinator's /ws: text frames only, masked
    as a client must, every read bounded by a timeout."""

    def __init__(self, port, protocol="sm-events", timeout=10, host=None, origin=None,
                 headers=(), tls=None):
        """tls: an ssl.SSLContext to speak wss:// (TLS first, then the same handshake)."""
        import base64
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        if tls:
            self.sock = tls.wrap_socket(self.sock, server_hostname="127.0.0.1")
        key = base64.b64encode(_os.urandom(16)).decode()
        extra = f"Origin: {origin}\r\n" if origin else ""
        extra += "".join(f"{h}\r\n" for h in headers)  # "Sec-Fetch-Site: cross-site", say
        self.sock.sendall(f"GET /ws HTTP/1.1\r\nHost: {host or f'127.0.0.1:{port}'}\r\n"
                          f"Upgrade: websocket\r\n{extra}"
                          f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                          f"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: {protocol}"
                          f"\r\n\r\n".encode())
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise AssertionError("the coordinator closed the WebSocket handshake")
            buf += chunk
        head, self.rest = buf.split(b"\r\n\r\n", 1)
        self.status = head.split(b"\r\n")[0].decode()

    def _need(self, n):
        while len(self.rest) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("closed")
            self.rest += chunk

    def recv(self):
        """The next message as (opcode, bytes)."""
        self._need(2)
        op, n, off = self.rest[0] & 0x0F, self.rest[1] & 0x7F, 2
        if n == 126:
            self._need(4)
            n, off = int.from_bytes(self.rest[2:4], "big"), 4
        elif n == 127:
            self._need(10)
            n, off = int.from_bytes(self.rest[2:10], "big"), 10
        self._need(off + n)
        data, self.rest = self.rest[off:off + n], self.rest[off + n:]
        return op, data

    def recv_json(self):
        op, data = self.recv()
        if op != 1:
            raise AssertionError(f"expected a text frame, got opcode {op}")
        return json.loads(data)

    def send(self, data, fin=True):
        payload = data.encode() if isinstance(data, str) else data
        mask = _os.urandom(4)
        n = len(payload)
        head = bytes([0x81 if fin else 0x01])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + n.to_bytes(2, "big")
        else:
            head += bytes([0x80 | 127]) + n.to_bytes(8, "big")
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def close(self):
        self.sock.close()


class CpuHog:
    """A busy loop pinned to one CPU: the machine made slower for a lab test. One python3
    process, so its PID is the whole hog; it ends by itself after `seconds` and stop() kills it
    by that PID before."""

    LOOP = ("import os, sys, time\n"
            "os.sched_setaffinity(0, {int(sys.argv[1])})\n"
            "end = time.monotonic() + float(sys.argv[2])\n"
            "while time.monotonic() < end:\n"
            "    pass\n")

    def __init__(self, cpu, seconds):
        self.cpu = cpu
        self.proc = subprocess.Popen([sys.executable, "-c", self.LOOP, str(cpu), str(seconds)],
                                     stdin=subprocess.DEVNULL)

    def running(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
