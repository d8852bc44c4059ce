"""The roll-out onto hosts that run systemd: Debian 12 containers (mmdebstrap, booted by
systemd-nspawn, each in a lab namespace) with Debian's sshd. deploy/fleet.sh and the Ansible
playbook install into their real / with apt, and systemd starts the services under their
hardened units (DynamicUser, LoadCredential, ProtectSystem=strict, a system call filter, ...).
Every agent registers, and runs jobs of every workload under that filter; a second roll-out
changes nothing and restarts nothing; a changed setting restarts that one service; a rotated key
reaches every host and they register again; an agent comes back by itself after its host
reboots.

The container root is made once per package list and kept in the build folder."""
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from rollout import BUILD, SRC, SshLab, play, run
from smtest import BIN_DIR, COORDINATOR, unless_root, wait_for

FLEET = os.path.join(SRC, "deploy", "fleet.sh")
MIRROR = os.environ.get("SM_DEBIAN_MIRROR", "http://deb.debian.org/debian")
# What a lab host has besides a minimal Debian: systemd as init, sshd, and python3 with apt's
# bindings for Ansible. The packages' own dependencies are added from their Depends.
BASE = ("systemd", "systemd-sysv", "dbus", "openssh-server", "python3", "python3-apt")
# The programs the packages install (their libraries go into the root).
PROGRAMS = ("sockmatrix-agent", "sockmatrix-coordinator", "sockmatrix")


def can_boot():
    return (os.geteuid() == 0 and shutil.which("systemd-nspawn") is not None
            and shutil.which("mmdebstrap") is not None and shutil.which("cpack") is not None)


def depends(deb):
    """The package names a .deb depends on (versions and alternatives dropped)."""
    field = run("dpkg-deb", "--field", deb, "Depends").stdout
    return {re.split(r"[\s(|]", d.strip())[0] for d in field.split(",") if d.strip()}


def program_packages():
    """The Debian packages that hold the libraries the built programs link (their NEEDED
    entries), as CPack's shlibdeps finds them for the packages' Depends: the root can be made
    from the build, before and beside the packages."""
    names = set()
    for prog in PROGRAMS:
        out = run("objdump", "-p", os.path.join(BIN_DIR, prog)).stdout
        names |= set(re.findall(r"^\s*NEEDED\s+(\S+)$", out, re.M))
    triplet = run("gcc", "-dumpmachine").stdout.strip()  # x86_64-linux-gnu: not /lib32's
    pkgs = set()
    for lib in sorted(names):
        r = run("dpkg-query", "--search", f"*/{triplet}/{lib}")
        if r.returncode != 0:
            raise AssertionError(f"no Debian package holds {lib}: {r.stderr.strip()}")
        pkgs |= {line.split(":", 1)[0] for line in r.stdout.splitlines() if ":" in line}
    return pkgs


def container_root():
    """A Debian 12 root with BASE and the programs' libraries installed, made once per package
    list with mmdebstrap (apt downloads side by side; dpkg without an fsync per file, which is
    most of a root's making on a busy machine, and only while it is made)."""
    pkgs = set(BASE) | program_packages()
    tag = hashlib.sha256(" ".join(sorted(pkgs)).encode()).hexdigest()[:12]
    cache = os.path.join(BUILD, "test-rootfs", f"bookworm-{tag}")
    if not os.path.isdir(cache):
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        tmp = tempfile.mkdtemp(prefix="bookworm-", dir=os.path.dirname(cache))
        os.chmod(tmp, 0o755)  # the root folder: its services' users must get through it
        r = run("mmdebstrap", "--quiet", "--variant=minbase", "--dpkgopt=force-unsafe-io",
                "--include=" + ",".join(sorted(pkgs)), "bookworm", tmp, MIRROR, timeout=900)
        if r.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise AssertionError(f"mmdebstrap failed: {r.stdout[-1500:]}{r.stderr[-1500:]}")
        # The hosts' own dpkg (the roll-out's apt) works as on any Debian host.
        unsafe = os.path.join(tmp, "etc/dpkg/dpkg.cfg.d/99mmdebstrap")
        if os.path.exists(unsafe):
            os.remove(unsafe)
        os.rename(tmp, cache)
    return cache


def missing_depends(root, debs):
    """The packages' dependencies that root does not have installed."""
    want = set()
    for f in os.listdir(debs):
        if f.endswith(".deb"):
            want |= depends(os.path.join(debs, f))
    have = set(run("dpkg-query", f"--admindir={root}/var/lib/dpkg", "--show",
                   "--showformat=${Package}\n").stdout.split())
    return sorted(want - have)


class Containers:
    """Booted containers, one per lab host, reachable over ssh as that host's name."""

    def __init__(self, lab, base):
        self.lab, self.base = lab, base
        self.procs = {}
        self.mounts = []

    def machine(self, name):
        """name's root: an overlay of the base root (read-only below it) and a folder of its
        own that takes its writes, so that a machine costs no copy of the root (263 MB of
        files: a few CPU-seconds to copy on a busy machine, and as much to remove)."""
        root = os.path.join(self.lab.dir, "machines", name)
        if os.path.isdir(root):
            return root
        upper, work = root + ".upper", root + ".work"
        for d in (root, upper, work):
            os.makedirs(d)
        os.chmod(upper, os.stat(self.base).st_mode & 0o7777)  # the machine's / takes its mode
        run("mount", "-t", "overlay", "overlay", "-o",
            f"lowerdir={self.base},upperdir={upper},workdir={work}", root).check_returncode()
        self.mounts.append(root)
        os.makedirs(os.path.join(root, "root/.ssh"), mode=0o700, exist_ok=True)
        shutil.copy(os.path.join(self.lab.dir, "id.pub"),
                    os.path.join(root, "root/.ssh/authorized_keys"))
        return root

    def boot(self, host, name):
        self.boot_all({host: name})

    def boot_all(self, names):
        """Boots the containers {host: machine name} side by side, then waits until each has
        booted with sshd."""
        for host, name in names.items():
            root = self.machine(name)
            log = open(os.path.join(self.lab.dir, f"{name}.console"), "a")
            self.procs[host] = subprocess.Popen(
                ["systemd-nspawn", "--quiet", "-D", root, "-M", name, "-b", "--register=no",
                 "--keep-unit", "--console=passive",
                 f"--network-namespace-path=/run/netns/{self.lab.hosts[host]['netns']}"],
                stdout=log, stderr=log, stdin=subprocess.DEVNULL)
            log.close()
        for host, name in names.items():
            wait_for(f"{name} booted with sshd",
                     lambda h=host: self.lab.ssh(h, "systemctl is-system-running --wait")
                     .stdout.strip() in ("running", "degraded"), 60, 0.5)

    def shut_down(self, host):
        # On SIGTERM nspawn asks the container's systemd to power off.
        self.lab.stop(self.procs.pop(host), timeout=60)

    def close(self):
        for host in list(self.procs):
            self.shut_down(host)
        for root in self.mounts:
            run("umount", root)


@unless_root(can_boot(), "needs root, systemd-nspawn, mmdebstrap and cpack")
class SystemdFleetTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.lab = SshLab(3, sshd=False)
        try:
            os.makedirs(os.path.join(cls.lab.dir, "machines"))
            root = container_root()
            missing = missing_depends(root, cls.lab.debs())
            if missing:
                raise AssertionError(f"the containers' root lacks {', '.join(missing)}, which the "
                                     "packages depend on: container_root() installs the "
                                     "packages of the libraries the programs link")
            cls.machines = Containers(cls.lab, root)
        except BaseException:
            cls.lab.close()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.machines.close()
        cls.lab.close()

    def setUp(self):
        self.work = os.path.join(self.lab.dir, self.id().rsplit(".", 1)[-1])
        os.makedirs(self.work)
        self.key = os.path.join(self.work, "fleet.key")
        run(COORDINATOR, "keygen", self.key).check_returncode()

    def ssh(self, host, cmd):
        r = self.lab.ssh(host, cmd)
        self.assertEqual(r.returncode, 0, f"{host}: {cmd}: {r.stderr}")
        return r.stdout.strip()

    def agent(self, name, coordinator="h1"):
        """The coordinator's view of agent name ({} when it has none)."""
        doc = self.lab.api(coordinator, "/api/agents") or {"agents": []}
        return {a["name"]: a for a in doc["agents"]}.get(name, {})

    def main_pid(self, host, unit):
        return int(self.ssh(host, f"systemctl show -p MainPID --value {unit}"))

    def post(self, host, path, body, port=8080):
        """POST body as JSON to the coordinator's HTTP API on host's loopback."""
        r = run("ip", "netns", "exec", self.lab.hosts[host]["netns"], "curl", "-sS", "--max-time",
                "10", "-H", "Content-Type: application/json", "--data-binary", json.dumps(body),
                f"http://127.0.0.1:{port}{path}", timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def assert_hardened(self, host, unit, memory_max, tasks_max):
        """The unit's hardening as systemd holds it, and as its running process has it."""
        props = ("MemoryDenyWriteExecute", "ProtectKernelLogs", "ProtectClock", "UMask",
                 "MemoryMax", "TasksMax", "SystemCallErrorNumber", "SystemCallFilter")
        out = self.ssh(host, f"systemctl show {unit} " + " ".join(f"-p {p}" for p in props))
        shown = dict(line.split("=", 1) for line in out.splitlines())
        self.assertEqual({p: shown[p] for p in props[:6]},
                         {"MemoryDenyWriteExecute": "yes", "ProtectKernelLogs": "yes",
                          "ProtectClock": "yes", "UMask": "0077", "MemoryMax": str(memory_max),
                          "TasksMax": str(tasks_max)}, (host, unit))
        self.assertIn(shown["SystemCallErrorNumber"], ("EPERM", "1"), (host, unit))
        # An allow-list: what @system-service has (the agent pins threads), not what it lacks.
        allowed = set(shown["SystemCallFilter"].split())
        self.assertIn("sched_setaffinity", allowed, (host, unit))
        for call in ("reboot", "kexec_load", "init_module", "settimeofday", "syslog"):
            self.assertNotIn(call, allowed, (host, unit, call))
        status = self.ssh(host, f"cat /proc/{self.main_pid(host, unit)}/status")
        self.assertRegex(status, r"(?m)^Seccomp:\s+2$", (host, unit))  # a filter in force
        self.assertRegex(status, r"(?m)^Umask:\s+0077$", (host, unit))
        self.assertRegex(status, r"(?m)^NoNewPrivs:\s+1$", (host, unit))

    def run_every_workload(self, host):
        """One local job of each workload on host's agent, run by its service: all done."""
        jobs = [{"host": host, "params": p} for p in (
            {"workload": "stream", "transport": "tcp", "count": 200},
            {"workload": "stream", "transport": "unix", "count": 200, "framing": "lines",
             "msg_size": 100},
            {"workload": "rr", "transport": "unix", "count": 200},
            {"workload": "connect", "transport": "tcp", "count": 20},
            {"workload": "http", "tls": True, "bytes": 1000000, "connections": 4},
            {"workload": "http", "client": "multi", "bytes": 1000000})]
        ids = self.post("h1", "/api/jobs", jobs)["jobs"]
        for jid, job in zip(ids, jobs):
            done = wait_for(f"job {jid} on {host}",
                            lambda: (j := self.lab.api("h1", f"/api/jobs/{jid}"))
                            and j["state"] in ("done", "failed") and j, 90, 0.5)
            self.assertEqual(done["state"], "done", (job, done))

    def fleet(self, inventory, key=None):
        return run("bash", FLEET, "--inventory", inventory, "--key", key or self.key,
                   "--coordinator", f"tcp://{self.lab.hosts['h1']['addr']}:7100", "--debs",
                   self.lab.debs(), "--ssh-config", os.path.join(self.lab.dir, "ssh_config"),
                   "--wait", "60", timeout=600)

    def write_inventory(self, labels):
        path = os.path.join(self.work, "inventory")
        with open(path, "w") as f:
            f.write(f"h1 h1 agent,coordinator data_addr={self.lab.hosts['h1']['addr']}\n"
                    f"h2 h2 agent data_addr={self.lab.hosts['h2']['addr']} labels={labels}\n")
        return path

    def test_fleet_script_onto_systemd_hosts(self):
        lab = self.lab
        self.machines.boot_all({h: f"{lab.prefix}{h}" for h in ("h1", "h2")})
        inv = self.write_inventory("rack=2")
        r = self.fleet(inv)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("h1: changed service sockmatrix-coordinator.service: enabled", r.stdout)
        self.assertIn("h2: changed service sockmatrix-agent.service: restarted", r.stdout)
        for h in ("h1", "h2"):
            self.assertIn(f"{h}: registered (online)", r.stdout)
        # Run by systemd under the units: a dynamic user, the key as a credential.
        for h, unit in (("h1", "sockmatrix-coordinator"), ("h1", "sockmatrix-agent"),
                        ("h2", "sockmatrix-agent")):
            self.assertEqual(self.ssh(h, f"systemctl is-enabled {unit}"), "enabled")
            pid = self.main_pid(h, unit)
            uid = int(self.ssh(h, f"stat -c %u /proc/{pid}"))
            self.assertTrue(61184 <= uid <= 65519, (h, unit, uid))  # DynamicUser's range
            key = "fleet.key" if unit == "sockmatrix-coordinator" else "agent.key"
            self.assertIn(f"/run/credentials/{unit}.service/{key}",
                          self.ssh(h, f"tr '\\0' ' ' </proc/{pid}/cmdline"))
        self.assertEqual(self.ssh("h1", "stat -c %a /etc/sockmatrix/fleet.key"), "600")
        # The system call filter, W^X, the kernel log and clock, the umask and the limits are
        # in force, and no workload needs more than they allow.
        self.assert_hardened("h1", "sockmatrix-coordinator", 2 << 30, 256)
        for h in ("h1", "h2"):
            self.assert_hardened(h, "sockmatrix-agent", 1 << 30, 512)
            self.run_every_workload(h)
        # The store's files are the coordinator's alone, -wal and -shm included.
        self.assertEqual(
            self.ssh("h1", "stat -c %a /var/lib/sockmatrix-coordinator/sockmatrix.db*").split(),
            ["600"] * 3)

        # Again: nothing changes, nothing restarts.
        pids = {h: self.main_pid(h, "sockmatrix-agent") for h in ("h1", "h2")}
        r = self.fleet(inv)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"(?m)^h1\s+done\s+ok=8 changed=0 skipped=0$")
        self.assertRegex(r.stdout, r"(?m)^h2\s+done\s+ok=4 changed=0 skipped=0$")
        self.assertEqual({h: self.main_pid(h, "sockmatrix-agent") for h in pids}, pids)

        # A changed label restarts h2's agent alone.
        r = self.fleet(self.write_inventory("rack=7"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("h2: changed service sockmatrix-agent.service: restarted", r.stdout)
        self.assertEqual(self.main_pid("h1", "sockmatrix-agent"), pids["h1"])
        self.assertNotEqual(self.main_pid("h2", "sockmatrix-agent"), pids["h2"])
        wait_for("h2's new label",
                 lambda: self.agent("h2").get("labels", {}).get("rack") == "7", 30, 0.5)

        # A new key for the whole fleet: every service restarts with it and registers again,
        # which the coordinator, holding only the new key, learns from a new boot id.
        boots = {h: self.agent(h)["boot"] for h in ("h1", "h2")}
        new_key = os.path.join(self.work, "fleet.key.new")
        run(COORDINATOR, "keygen", new_key).check_returncode()
        r = self.fleet(inv, key=new_key)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stdout.count("changed file /etc/sockmatrix/fleet.key"), 1, r.stdout)
        self.assertEqual(r.stdout.count("changed file /etc/sockmatrix/agent.key"), 2, r.stdout)
        h2_key = os.path.join(self.work, "h2.key.new")
        run(COORDINATOR, "keygen", "--agent", "h2", "--key-file", new_key,
            h2_key).check_returncode()
        with open(h2_key) as f:
            self.assertEqual(self.ssh("h2", "cat /etc/sockmatrix/agent.key"), f.read().strip())
        self.assertEqual(self.ssh("h2", "test -e /etc/sockmatrix/fleet.key && echo yes || echo no"),
                         "no")
        for h in boots:
            wait_for(f"{h}'s agent on the new key",
                     lambda h=h: (a := self.agent(h)).get("status") not in (None, "lost")
                     and a["boot"] != boots[h], 60, 0.5)

        # h2 reboots: its agent comes back by itself (a new process: a new boot id).
        before = self.agent("h2")["boot"]
        self.machines.shut_down("h2")
        self.machines.boot("h2", f"{lab.prefix}h2")
        wait_for("h2's agent back after the reboot",
                 lambda: (a := self.agent("h2")).get("status") not in (None, "lost")
                 and a["boot"] != before, 60, 0.5)
        self.assertEqual(self.ssh("h2", "systemctl is-active sockmatrix-agent"), "active")

    @unittest.skipUnless(shutil.which("ansible-playbook"), "needs ansible-playbook")
    def test_playbook_onto_a_systemd_host(self):
        # One machine, the coordinator's and an agent's: the playbook's systemd part (enable,
        # restart on a change, nothing on a second play) is the same for both roles, and an
        # agent-only host is test_rollout's PlaybookTest (each play of a host costs some ten
        # CPU-seconds here).
        lab = self.lab
        self.machines.boot("h3", f"{lab.prefix}h3")
        ini = os.path.join(self.work, "inventory.ini")
        with open(ini, "w") as f:
            f.write(f"[coordinator]\nh3\n\n[agents]\nh3 sockmatrix_labels=rack=4\n\n"
                    "[all:vars]\nansible_python_interpreter=/usr/bin/python3\n"
                    f"ansible_user=root\nansible_ssh_common_args=-F {lab.dir}/ssh_config\n"
                    f"sockmatrix_key_file={self.key}\nsockmatrix_debs={lab.debs()}\n"
                    f"sockmatrix_coordinator=tcp://{lab.hosts['h3']['addr']}:7100\n")
        r, recap = play(ini, self.work)
        self.assertEqual(r.returncode, 0, r.stdout[-4000:] + r.stderr[-2000:])
        self.assertGreater(recap["h3"]["changed"], 0, r.stdout[-2000:])
        self.assertIn("h3: registered (online)", r.stdout)
        for unit in ("sockmatrix-agent", "sockmatrix-coordinator"):
            self.assertEqual(self.ssh("h3", f"systemctl is-enabled {unit}"), "enabled")
            self.assertEqual(self.ssh("h3", f"systemctl is-active {unit}"), "active")
        wait_for("h3's label", lambda: self.agent("h3", "h3").get("labels", {}).get("rack") == "4",
                 30, 0.5)
        pids = {u: self.main_pid("h3", u) for u in ("sockmatrix-agent", "sockmatrix-coordinator")}

        r, recap = play(ini, self.work)
        self.assertEqual(r.returncode, 0, r.stdout[-4000:] + r.stderr[-2000:])
        self.assertEqual({h: recap[h]["changed"] for h in recap}, {"h3": 0}, r.stdout[-3000:])
        self.assertIn("h3: registered (", r.stdout)
        self.assertNotIn("NOT registered", r.stdout)
        self.assertEqual({u: self.main_pid("h3", u) for u in pids}, pids)


if __name__ == "__main__":
    unittest.main()
