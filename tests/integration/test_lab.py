"""deploy/lab/lab.sh: namespaces, bridge, addresses, tbf anomalies (absolute, and relative to what
the host measured unshaped), refusal and teardown.

Needs root and working `ip netns`; skipped otherwise. Every test uses its own prefix
("t<pid><letter>-") and a free subnet 10.213.<100..200>, and tears its lab down even on failure.
"""
import json
import os
import statistics
import random
import re
import shutil
import string
import subprocess
import sys
import tempfile
import time
import unittest

from smtest import unless_root, unless_stolen

LAB = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "lab", "lab.sh"))
BIN_DIR = os.environ.get("SM_BIN_DIR") or os.path.join(os.path.dirname(__file__), "..", "..",
                                                       "build", "bin")
AGENT = os.path.join(BIN_DIR, "sockmatrix-agent")
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
# The 2010 test's payload: profile_start CRLF, 8192 lines of 128 bytes + CRLF, profile_end CRLF.
SEED_PAYLOAD = 15 + 8192 * 130 + 13

# A TCP sink: prints its port, then the number of bytes it received and the seconds from the
# first to the last.
SINK = r"""
import socket, sys, time
s = socket.socket(); s.bind((sys.argv[1], 0)); s.listen(1); s.settimeout(30)
print(s.getsockname()[1], flush=True)
c, _ = s.accept(); c.settimeout(30); n = 0; t0 = None
while True:
    d = c.recv(65536)
    if not d: break
    t0 = t0 or time.monotonic()
    n += len(d)
print(n, time.monotonic() - (t0 or time.monotonic()), flush=True)
"""
SEND = r"""
import socket, sys
c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=30)
c.sendall(b"x" * int(sys.argv[3])); c.close()
"""


def run(cmd, timeout=60, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, **kw)


def netns_names():
    return [line.split()[0] for line in run(["ip", "netns", "list"]).stdout.splitlines() if line.strip()]


def link_names():
    return [re.sub(r"@.*", "", line.split(": ")[1])
            for line in run(["ip", "-o", "link", "show"]).stdout.splitlines()]


def _why_skip():
    if not sys.platform.startswith("linux"):
        return "network namespaces need Linux"
    if os.geteuid() != 0:
        return "needs root: lab.sh creates network namespaces, bridges and veth pairs"
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            return f"'{tool}' (iproute2) is not installed"
    probe = f"t{os.getpid()}-probe"
    r = run(["ip", "netns", "add", probe])
    if r.returncode != 0:
        return f"'ip netns' is unavailable here: {r.stderr.strip()}"
    run(["ip", "netns", "del", probe])
    return None


SKIP = _why_skip()
_letters = iter(string.ascii_lowercase * 4)


@unless_root(not SKIP, SKIP or "")
class LabTest(unittest.TestCase):
    def setUp(self):
        self.prefix = f"t{os.getpid() % 100000}{next(_letters)}-"   # <= 8 chars: names fit in 15
        used = run(["ip", "-4", "-o", "addr", "show"]).stdout
        free = [x for x in range(100, 201) if f" 10.213.{x}.1/" not in used]
        self.x = random.choice(free)
        self.gw = f"10.213.{self.x}.1"
        self.state_dir = tempfile.mkdtemp(prefix="smlab-")
        self.state_file = os.path.join(self.state_dir, f"sockmatrix-lab-{self.prefix}.env")
        # Cleanups run last-registered first: lab.sh down, then a scrub by name in case down is broken.
        self.addCleanup(shutil.rmtree, self.state_dir, True)
        self.addCleanup(self.scrub)
        self.addCleanup(self.lab, "down")

    # ---- helpers ----
    def lab(self, sub, *args, pre=(), env=None):
        """Runs `lab.sh SUB --prefix P --state-dir D ARGS...` (pre= goes in front, e.g. setpriv)."""
        cmd = [*pre, LAB, sub, "--prefix", self.prefix, "--state-dir", self.state_dir, *args]
        return run(cmd, env=env)

    def ok(self, sub, *args):
        r = self.lab(sub, *args)
        self.assertEqual(r.returncode, 0, f"lab.sh {sub} {args}: {r.stderr}")
        return r

    def up(self, n, *args):
        return self.ok("up", str(n), "--subnet", f"10.213.{self.x}", *args)

    def ns(self, host):
        return f"{self.prefix}{host}"

    def addr(self, i):
        return f"10.213.{self.x}.{10 + i}"

    def in_ns(self, host, *cmd, timeout=60):
        return run(["ip", "netns", "exec", self.ns(host), *cmd], timeout=timeout)

    def mine_ns(self):
        return [n for n in netns_names() if re.fullmatch(re.escape(self.prefix) + r"h\d+", n)]

    def mine_links(self):
        return [n for n in link_names() if re.fullmatch(re.escape(self.prefix) + r"(br0|v\d+)", n)]

    def scrub(self):
        for n in self.mine_ns():
            for pid in run(["ip", "netns", "pids", n]).stdout.split():
                run(["kill", "-9", pid])
            run(["ip", "netns", "del", n])
        for link in self.mine_links():
            run(["ip", "link", "del", link])

    def qdisc(self, host, dev):
        r = self.in_ns(host, "tc", "qdisc", "show", "dev", dev)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def transfer(self, server, server_addr, client, nbytes, timed=False):
        """Sends nbytes over TCP from client's namespace to a sink in server's; returns bytes
        received (timed=True: and the seconds the sink took from the first byte to the last)."""
        sink = subprocess.Popen(["ip", "netns", "exec", self.ns(server), sys.executable, "-c", SINK,
                                 server_addr], stdout=subprocess.PIPE, text=True)
        try:
            port = sink.stdout.readline().strip()
            r = self.in_ns(client, sys.executable, "-c", SEND, server_addr, port, str(nbytes))
            self.assertEqual(r.returncode, 0, r.stderr)
            out, _ = sink.communicate(timeout=60)
            n, secs = out.split()
            return (int(n), float(secs)) if timed else int(n)
        finally:
            if sink.poll() is None:
                sink.kill()
                sink.wait()

    # ---- tests ----
    def test_up_three_hosts_addresses_ping_exec_and_status(self):
        self.up(3)
        self.assertEqual(sorted(self.mine_ns()), [self.ns(f"h{i}") for i in (1, 2, 3)])
        br = run(["ip", "-4", "-o", "addr", "show", "dev", f"{self.prefix}br0"])
        self.assertIn(f"{self.gw}/24", br.stdout)
        for i in (1, 2, 3):
            h = f"h{i}"
            self.assertIn(f"inet {self.addr(i)}/24", self.in_ns(h, "ip", "-4", "-o", "addr", "show",
                                                                 "dev", "eth0").stdout)
            self.assertIn("UP", self.in_ns(h, "ip", "-o", "link", "show", "dev", "lo").stdout)
            # On-link only: a lab host has no way off the machine.
            self.assertNotIn("default", self.in_ns(h, "ip", "route").stdout)
        if shutil.which("ping"):
            for target in (self.addr(2), self.gw):
                r = self.in_ns("h1", "ping", "-c1", "-W1", target)
                self.assertEqual(r.returncode, 0, f"h1 cannot ping {target}: {r.stdout}{r.stderr}")
        self.assertEqual(self.transfer("h2", self.addr(2), "h1", 1 << 20), 1 << 20)

        r = self.ok("exec", "h2", "ip", "-4", "-o", "addr", "show", "dev", "eth0")
        self.assertIn(self.addr(2), r.stdout)
        self.assertEqual(self.lab("exec", "h1", "sh", "-c", "exit 7").returncode, 7)
        env = dict(os.environ, SM_LAB_PREFIX=self.prefix)    # the prefix from the environment
        r = run([LAB, "exec", "--state-dir", self.state_dir, "h3", "cat", "/proc/net/dev"], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn(f"{self.prefix}br0", r.stdout)       # inside h3, not the root namespace

        doc = json.loads(self.ok("status", "--json").stdout)
        self.assertEqual(doc["bridge"], f"{self.prefix}br0")
        self.assertEqual(doc["coordinator_addr"], self.gw)
        self.assertEqual([(h["name"], h["netns"], h["addr"]) for h in doc["hosts"]],
                         [(f"h{i}", self.ns(f"h{i}"), self.addr(i)) for i in (1, 2, 3)])
        text = self.ok("status").stdout
        self.assertIn(f"tcp://{self.gw}:7100", text)
        for i in (1, 2, 3):
            self.assertIn(self.addr(i), text)

    def test_slow_tcp_puts_tbf_on_that_hosts_loopback_only(self):
        self.up(2, "--slow-tcp", "h2:10mbit")
        lo2 = self.qdisc("h2", "lo")
        self.assertIn("tbf", lo2)
        self.assertIn("rate 10Mbit", lo2)
        self.assertNotIn("tbf", self.qdisc("h1", "lo"))
        self.assertNotIn("tbf", self.qdisc("h2", "eth0"))
        # Loopback TCP on h2 still flows (slowly): 64 KiB loopback frames must fit the bucket.
        self.assertEqual(self.transfer("h2", "127.0.0.1", "h2", 256 << 10), 256 << 10)
        self.assertIn("lo:tbf/10Mbit", self.ok("status").stdout)

    def test_slow_link_puts_tbf_on_that_hosts_veth_both_sides(self):
        self.up(3, "--slow-link", "h3:100mbit")
        eth = self.qdisc("h3", "eth0")
        self.assertIn("tbf", eth)
        self.assertIn("rate 100Mbit", eth)
        peer = run(["tc", "qdisc", "show", "dev", f"{self.prefix}v3"]).stdout
        self.assertIn("tbf", peer)
        self.assertIn("rate 100Mbit", peer)
        self.assertNotIn("tbf", self.qdisc("h1", "eth0"))
        self.assertNotIn("tbf", self.qdisc("h3", "lo"))
        self.assertNotIn("tbf", run(["tc", "qdisc", "show", "dev", f"{self.prefix}v1"]).stdout)
        self.assertEqual(self.transfer("h1", self.addr(1), "h3", 1 << 20), 1 << 20)
        self.assertEqual(self.transfer("h3", self.addr(3), "h1", 1 << 20), 1 << 20)

    def tbf_options(self, host, dev):
        """The root tbf's options on dev (in host's namespace, or the root namespace for host
        None), from `tc -j qdisc show`: rate in bytes/s, burst in bytes."""
        cmd = ["tc", "-j", "qdisc", "show", "dev", dev, "root"]
        r = self.in_ns(host, *cmd) if host else run(cmd)
        self.assertEqual(r.returncode, 0, r.stderr)
        q = json.loads(r.stdout)
        self.assertEqual([x["kind"] for x in q], ["tbf"], q)
        return q[0]["options"]

    def agent_2010_median(self, host, runs=9):
        """The median seconds of `runs` repetitions of the 2010 TCP stream in host's namespace,
        pinned as lab.sh's probe is, and like it over every sample, disturbed or not: what the
        shaper did is the question, not the verdict."""
        r = self.in_ns(host, AGENT, "--once", "--workload", "stream", "--framing", "lines",
                       "--msg-size", "128", "--count", "8192", "--transport", "tcp",
                       "--repetitions", str(runs), "--format", "json", "--quiet",
                       "--affinity", "0,1", "--disturbed", "include", timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)["cells"][0]["summary"]["seconds"]["median"]

    CAL_TCP = re.compile(r"h2 loopback TCP measured ([\d.]+) Mbit/s \(the 2010 stream, 8192 lines "
                         r"of 128 B: (\d+) bytes on lo per run in ([\d.]+) ms, the median of 9 "
                         r"runs of (sockmatrix-agent|python3)\); x4 -> tbf rate ([\d.]+) Mbit/s")

    def check_slow_tcp_x4(self, out, probe):
        """What `up --slow-tcp h2:x4` printed, recorded and set agree: tbf rate = measured / 4."""
        m = self.CAL_TCP.search(out)
        self.assertIsNotNone(m, out)
        measured, wire, ms, got_probe, rate = m.groups()
        self.assertEqual(got_probe, probe)
        cal = [h for h in json.loads(self.ok("status", "--json").stdout)["hosts"]
               if h["name"] == "h2"][0]["slow_tcp"]
        self.assertEqual((cal["factor"], cal["runs"], cal["probe"], cal["wire_bytes"]),
                         (4, 9, probe, int(wire)), cal)
        # What lo carries per run: the 1,064,988 bytes of the test and TCP's headers and acks.
        self.assertTrue(SEED_PAYLOAD < cal["wire_bytes"] < 2 * SEED_PAYLOAD, cal)
        self.assertAlmostEqual(cal["measured_bit_s"], cal["wire_bytes"] * 8 / cal["seconds"],
                               delta=cal["measured_bit_s"] * 1e-3)
        self.assertAlmostEqual(cal["measured_bit_s"] / 1e6, float(measured), delta=0.051)
        self.assertAlmostEqual(cal["seconds"] * 1e3, float(ms), delta=0.0011)
        self.assertAlmostEqual(cal["rate_bit_s"], cal["measured_bit_s"] / 4, delta=1)
        self.assertAlmostEqual(cal["rate_bit_s"] / 1e6, float(rate), delta=0.051)
        self.assertEqual(cal["rate"], f"{cal['rate_bit_s']}bit")
        # The qdisc itself (tc rounds the rate to its own units).
        opts = self.tbf_options("h2", "lo")
        self.assertAlmostEqual(opts["rate"] * 8, cal["rate_bit_s"], delta=cal["rate_bit_s"] * 1e-3)
        # Two 64 KiB frames, not more: a bucket near the test's 1 MiB would let it through unshaped.
        self.assertLessEqual(opts["burst"], 2 * 65536)
        self.assertIn("Mbit/s measured unshaped / 4 (x4; ", self.ok("status").stdout)
        for h in ("h1", "h3"):
            self.assertNotIn("tbf", self.qdisc(h, "lo"))
        self.assertNotIn("tbf", self.qdisc("h2", "eth0"))
        return cal

    @unittest.skipUnless(os.access(AGENT, os.X_OK), f"no {AGENT} (SM_BIN_DIR: the build's bin)")
    @unless_stolen
    def test_slow_tcp_x4_measures_the_2010_stream_and_shapes_it_4_times_slower(self):
        env = dict(os.environ, SM_BIN_DIR=BIN_DIR)
        r = self.lab("up", "3", "--subnet", f"10.213.{self.x}", "--slow-tcp", "h2:x4", env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        cal = self.check_slow_tcp_x4(r.stdout, "sockmatrix-agent")
        # It is what it says: h2's 2010 stream is held to the tbf rate, a quarter of what lo
        # carried unshaped, and takes clearly more than h1's, measured in turns with it.
        h1, h2 = [], []
        for _ in range(3):
            h1.append(self.agent_2010_median("h1"))
            h2.append(self.agent_2010_median("h2"))
        shaped, unshaped = statistics.median(h2), statistics.median(h1)
        why = f"h2 {h2} s, h1 {h1} s, calibration {cal}"
        # tbf sets a floor, not a factor: the test's payload but the bucket's burst (which
        # passes at once) cannot cross lo faster than the rate. The time is not 4 times the
        # calibration's: held back, the sender coalesces its 130-byte lines into fewer segments
        # and fewer acks come back, so lo carries fewer bytes than the calibration counted
        # (seen: 2.5x and 3.0x the calibration in two runs of this test).
        burst = self.tbf_options("h2", "lo")["burst"]
        floor = (SEED_PAYLOAD - burst) * 8 / cal["rate_bit_s"]
        self.assertGreater(shaped, floor, why)
        self.assertLess(shaped / cal["seconds"], 3 * 4, why)
        # h1 against h2 assumes the machine runs h1 as fast as it ran the calibration moments
        # before; a VM whose speed moved (once: h1 at 1.7x its calibration, h2 shaped as it
        # should be) breaks that premise, not the lab's shaping, which the lines above checked.
        if unshaped > 1.5 * cal["seconds"]:
            self.skipTest(f"h1 unshaped took {unshaped / cal['seconds']:.2f}x the calibration "
                          f"measured just before: the machine's speed moved ({why})")
        self.assertGreater(shaped / unshaped, 2, why)
        print(f"\nslow-tcp x4: measured {cal['seconds'] * 1e3:.2f} ms, shaped h2 "
              f"{shaped * 1e3:.2f} ms ({shaped / cal['seconds']:.2f}x), h1 {unshaped * 1e3:.2f} ms "
              f"({shaped / unshaped:.2f}x)", file=sys.stderr)

    def test_slow_tcp_x4_without_an_agent_measures_with_python3(self):
        copy_dir = tempfile.mkdtemp(prefix="smlab-copy-")  # away from the repository's build/bin
        self.addCleanup(shutil.rmtree, copy_dir, True)
        script = os.path.join(copy_dir, "lab.sh")
        shutil.copy(LAB, script)
        env = dict(os.environ, SM_BIN_DIR=copy_dir, PATH="/usr/sbin:/usr/bin:/sbin:/bin")
        r = run([script, "up", "3", "--prefix", self.prefix, "--state-dir", self.state_dir,
                 "--subnet", f"10.213.{self.x}", "--slow-tcp", "h2:x4"], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.check_slow_tcp_x4(r.stdout, "python3")

    def test_slow_link_x4_measures_a_bulk_transfer_and_shapes_both_sides(self):
        r = self.up(3, "--slow-link", "h3:x4")
        m = re.search(r"h3 link measured ([\d.]+) Mbit/s \(bulk TCP h3 -> h1 "
                      + re.escape(self.addr(1)) + r", the median of 5 runs of 0.2 s: (\d+) bytes on "
                      r"eth0 in ([\d.]+) s\); x4 -> tbf rate ([\d.]+) Mbit/s", r.stdout)
        self.assertIsNotNone(m, r.stdout)
        cal = [h for h in json.loads(self.ok("status", "--json").stdout)["hosts"]
               if h["name"] == "h3"][0]["slow_link"]
        self.assertEqual((cal["factor"], cal["probe"], cal["wire_bytes"], cal["runs"]),
                         (4, "python3", int(m[2]), 5))
        self.assertAlmostEqual(cal["measured_bit_s"] / 1e6, float(m[1]), delta=0.051)
        self.assertAlmostEqual(cal["rate_bit_s"], cal["measured_bit_s"] / 4, delta=1)
        self.assertGreater(cal["measured_bit_s"], 50e6, cal)  # a veth, however slow the machine
        for opts in (self.tbf_options("h3", "eth0"), self.tbf_options(None, f"{self.prefix}v3")):
            self.assertAlmostEqual(opts["rate"] * 8, cal["rate_bit_s"], delta=cal["rate_bit_s"] * 1e-3)
        self.assertNotIn("tbf", self.qdisc("h3", "lo"))
        self.assertNotIn("tbf", self.qdisc("h1", "eth0"))
        # Both directions are slower than an unshaped host's, by about the factor.
        n = 64 << 20
        (got1, s1), (got3, s3) = (self.transfer("h2", self.addr(2), h, n, timed=True)
                                  for h in ("h1", "h3"))
        (got4, s4) = self.transfer("h3", self.addr(3), "h1", n, timed=True)
        self.assertEqual((got1, got3, got4), (n, n, n))
        why = f"64 MiB h1->h2 {s1:.3f} s, h3->h2 {s3:.3f} s, h1->h3 {s4:.3f} s; {cal}"
        self.assertGreater(s3 / s1, 2, why)
        self.assertGreater(s4 / s1, 2, why)
        self.assertLess(n * 8 / s3, cal["rate_bit_s"] * 1.2, why)

    def test_bad_rates_and_factors_exit_2_before_touching_anything(self):
        for v in ("h2:x0", "h2:x0.5", "h2:x1001", "h2:4x", "h2:x", "h2:fast", "h4:x4"):
            r = self.lab("up", "3", "--subnet", f"10.213.{self.x}", "--slow-tcp", v)
            self.assertEqual(r.returncode, 2, f"{v}: {r.stderr}")
            self.assertIn(v, r.stderr)
        self.assertEqual(self.mine_ns(), [])
        self.assertEqual(self.mine_links(), [])

    def test_down_removes_everything_and_is_idempotent(self):
        self.up(2)
        self.assertTrue(os.path.exists(self.state_file))
        self.assertIn(f"{self.prefix}br0", self.mine_links())
        sleeper = subprocess.Popen([LAB, "exec", "--prefix", self.prefix, "h1", "sleep", "300"])
        self.addCleanup(lambda: sleeper.poll() is None and (sleeper.kill(), sleeper.wait()))
        for _ in range(100):                                 # wait until it runs inside h1
            if run(["ip", "netns", "pids", self.ns("h1")]).stdout.strip():
                break
            time.sleep(0.05)
        self.ok("down")
        self.assertEqual(self.mine_ns(), [])
        self.assertEqual(self.mine_links(), [])
        self.assertFalse(os.path.exists(self.state_file))
        self.assertIsNotNone(sleeper.wait(timeout=10))      # a process left in the lab was ended
        self.ok("down")
        self.assertEqual(self.lab("status").returncode, 1)

    def test_up_refuses_an_existing_lab_unless_forced(self):
        self.up(2)
        r = self.lab("up", "2", "--subnet", f"10.213.{self.x}")
        self.assertEqual(r.returncode, 1)
        self.assertIn("exists", r.stderr)
        self.assertIn(self.prefix, r.stderr)
        self.assertEqual(len(self.mine_ns()), 2)               # the refused up left the lab alone
        self.up(3, "--force")
        self.assertEqual(len(self.mine_ns()), 3)
        self.assertEqual(len(json.loads(self.ok("status", "--json").stdout)["hosts"]), 3)

    @unittest.skipIf(shutil.which("setpriv") is None, "setpriv (util-linux) not installed")
    def test_non_root_is_refused_before_touching_anything(self):
        copy_dir = tempfile.mkdtemp(prefix="smlab-nobody-")     # readable by nobody wherever the repo is
        self.addCleanup(shutil.rmtree, copy_dir, True)
        os.chmod(copy_dir, 0o755)
        script = os.path.join(copy_dir, "lab.sh")
        shutil.copy(LAB, script)
        os.chmod(script, 0o755)
        r = run([*NOBODY, script, "up", "2", "--prefix", self.prefix, "--state-dir", self.state_dir,
                 "--subnet", f"10.213.{self.x}"])
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("lab.sh: must run as root (it creates network namespaces)", r.stderr)
        self.assertEqual(self.mine_ns(), [])
        self.assertEqual(self.mine_links(), [])
        self.assertEqual(os.listdir(self.state_dir), [])

    def test_unknown_option_exits_2_naming_it(self):
        for args in (["up", "2", "--bogus-opt"], ["status", "--frobnicate"], ["down", "--json"]):
            r = run([LAB, *args, "--prefix", self.prefix, "--state-dir", self.state_dir])
            self.assertEqual(r.returncode, 2, f"{args}: {r.stderr}")
            self.assertIn(args[-1], r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertEqual(self.mine_ns(), [])
        self.assertEqual(self.mine_links(), [])


if __name__ == "__main__":
    unittest.main()
