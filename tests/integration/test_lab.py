"""deploy/lab/lab.sh: namespaces, bridge, addresses, tbf anomalies, refusal and teardown.

Needs root and working `ip netns`; skipped otherwise. Every test uses its own prefix
("t<pid><letter>-") and a free subnet 10.213.<100..200>, and tears its lab down even on failure.
"""
import json
import os
import random
import re
import shutil
import string
import subprocess
import sys
import tempfile
import time
import unittest

LAB = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "lab", "lab.sh"))
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

# A TCP sink: prints its port, then the number of bytes it received.
SINK = r"""
import socket, sys
s = socket.socket(); s.bind((sys.argv[1], 0)); s.listen(1); s.settimeout(30)
print(s.getsockname()[1], flush=True)
c, _ = s.accept(); c.settimeout(30); n = 0
while True:
    d = c.recv(65536)
    if not d: break
    n += len(d)
print(n, flush=True)
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


@unittest.skipIf(SKIP, SKIP or "")
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

    def transfer(self, server, server_addr, client, nbytes):
        """Sends nbytes over TCP from client's namespace to a sink in server's; returns bytes received."""
        sink = subprocess.Popen(["ip", "netns", "exec", self.ns(server), sys.executable, "-c", SINK,
                                 server_addr], stdout=subprocess.PIPE, text=True)
        try:
            port = sink.stdout.readline().strip()
            r = self.in_ns(client, sys.executable, "-c", SEND, server_addr, port, str(nbytes))
            self.assertEqual(r.returncode, 0, r.stderr)
            out, _ = sink.communicate(timeout=60)
            return int(out.strip())
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
