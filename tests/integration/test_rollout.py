"""The roll-out against real hosts, as far as one machine allows: lab namespaces running
Debian's sshd, reached with a key pair made here. deploy/fleet.sh (and the Ansible playbook,
where ansible-playbook is installed) installs the packages into a root per host, writes the
settings and the key; the test then starts each installed service as its unit would (systemd
does not run here): its ExecStart with its EnvironmentFile and credentials, confined as the unit
asks (confine.sh: a user of its own, no capabilities, the system read-only but its own folders),
and checks that every agent registers with the deployed coordinator. A second roll-out changes
nothing; a host that is down is reported and the others proceed."""
import os
import re
import shutil
import tempfile
import unittest

from smtest import COORDINATOR, unless_root
from rollout import (CONFINE, DYNAMIC_UID, SRC, SshLab, can_roll_out, play, registered, run,
                     tree, wait_registered)

FLEET = os.path.join(SRC, "deploy", "fleet.sh")
# h1 is the coordinator's host and an agent, h2 an agent alone; h3 is down. A third agent
# would repeat h2's part: each host costs the roll-outs' Ansible and ssh a few CPU-seconds.
AGENTS = ("h1", "h2")


@unless_root(can_roll_out(), "needs root, ip netns, Debian's openssh-server and cpack")
class FleetScriptTest(unittest.TestCase):
    """deploy/fleet.sh over plain ssh: h1 is the coordinator and an agent, h2 an agent, h3 is
    down."""

    @classmethod
    def setUpClass(cls):
        cls.lab = SshLab(3, down=("h3",))

    @classmethod
    def tearDownClass(cls):
        cls.lab.close()

    def setUp(self):
        lab = self.lab
        self.work = os.path.join(lab.dir, self.id().rsplit(".", 1)[-1])
        os.makedirs(self.work)
        self.key = os.path.join(self.work, "fleet.key")
        run(COORDINATOR, "keygen", self.key).check_returncode()
        self.roots = {h: lab.root(os.path.basename(self.work), h) for h in lab.hosts}
        self.coord_addr = lab.hosts["h1"]["addr"]

    def inventory(self, labels_h2="rack=2", hosts=("h1", "h2", "h3")):
        lines = ["# name  destination  roles  settings"]
        for h in hosts:
            roles = "agent,coordinator" if h == "h1" else "agent"
            extra = f" labels={labels_h2}" if h == "h2" else ""
            lines.append(f"{h} {h} {roles} root={self.roots[h]} "
                         f"data_addr={self.lab.hosts[h]['addr']}{extra}")
        path = os.path.join(self.work, "inventory")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def fleet(self, *args, inventory=None):
        r = run("bash", FLEET, "--inventory", inventory or self.inventory(), "--key", self.key,
                "--coordinator", f"tcp://{self.coord_addr}:7100", "--debs", self.lab.debs(),
                "--ssh-config", os.path.join(self.lab.dir, "ssh_config"), *args, timeout=600)
        return r

    def recap(self, out):
        """host -> (state, ok, changed, skipped) from the recap fleet.sh prints."""
        rows = {}
        for m in re.finditer(r"^(h\d+)\s+(\w+)\s+ok=(\d+) (?:would-)?changed?=(\d+) "
                             r"skipped=(\d+)$", out, re.M):
            rows[m.group(1)] = (m.group(2), int(m.group(3)), int(m.group(4)), int(m.group(5)))
        return rows

    def start_services(self):
        lab, procs = self.lab, {}
        procs["coordinator"] = lab.start_unit(self.roots["h1"], "sockmatrix-coordinator.service",
                                              "h1", os.path.join(self.work, "coordinator.log"))
        for h in AGENTS:
            procs[h] = lab.start_unit(self.roots[h], "sockmatrix-agent.service", h,
                                      os.path.join(self.work, f"agent-{h}.log"))
        for p in procs.values():
            self.addCleanup(lab.stop, p)
        return procs

    def test_check_then_roll_out_then_nothing_changes_and_every_agent_registers(self):
        # --check on fresh hosts: every item would change, and nothing does.
        before = {h: tree(r) for h, r in self.roots.items()}
        r = self.fleet("--check")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)  # h3 is down
        rows = self.recap(r.stdout)
        self.assertEqual(rows["h1"], ("done", 0, 6, 2), r.stdout + r.stderr)
        self.assertEqual(rows["h2"], ("done", 0, 3, 1), r.stdout)
        self.assertEqual(rows["h3"][0], "unreachable", r.stdout)
        self.assertEqual({h: tree(r) for h, r in self.roots.items()}, before)

        # The roll-out: h3 is reported, h1 and h2 are installed and configured.
        r = self.fleet("--wait", "0")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        rows = self.recap(r.stdout)
        self.assertEqual({h: rows[h][0] for h in rows},
                         {"h1": "done", "h2": "done", "h3": "unreachable"})
        self.assertRegex(r.stdout, r"h3: unreachable: .*(refused|timed out|No route)")
        self.assertEqual(rows["h1"][2], 6, r.stdout)  # 2 keys, 2 packages, 2 settings files
        for h in AGENTS:
            root = self.roots[h]
            self.assertIn("Status: install ok installed",
                          run("dpkg", f"--root={root}", "--status", "sockmatrix-agent").stdout)
            # Each agent has its own key, the one keygen --agent makes; the fleet key is on
            # the coordinator's host alone.
            key = os.path.join(root, "etc/sockmatrix/agent.key")
            self.assertEqual(os.stat(key).st_mode & 0o777, 0o600)
            want = os.path.join(self.work, f"want-{h}.key")
            if not os.path.exists(want):
                run(COORDINATOR, "keygen", "--agent", h, "--key-file", self.key,
                    want).check_returncode()
            with open(key) as a, open(want) as b:
                self.assertEqual(a.read(), b.read())
            self.assertEqual(os.path.exists(os.path.join(root, "etc/sockmatrix/fleet.key")),
                             h == "h1")
            with open(os.path.join(root, "etc/default/sockmatrix-agent")) as f:
                settings = f.read()
            self.assertIn(f"SM_COORDINATOR=tcp://{self.coord_addr}:7100\n", settings)
            self.assertIn(f"SM_AGENT_OPTS=--name {h} --data-addr {self.lab.hosts[h]['addr']}",
                          settings)
        self.assertFalse(os.path.exists(os.path.join(self.roots["h3"], "usr")))
        self.assertTrue(os.access(os.path.join(self.roots["h1"], "usr/bin/sockmatrix-coordinator"),
                                  os.X_OK))

        # Systemd does not run here: the services start as their units would.
        procs = self.start_services()
        wait_registered(self.lab, "h1", AGENTS)
        self.assertEqual(registered(self.lab, "h1", AGENTS), set(AGENTS))
        for name, p in procs.items():  # confined as their units ask
            with open(f"/proc/{p.pid}/status") as f:
                status = dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
            self.assertEqual(status["Uid"].split()[0], str(DYNAMIC_UID), name)
            self.assertEqual((status["CapEff"], status["CapBnd"], status["NoNewPrivs"]),
                             ("0000000000000000", "0000000000000000", "1"), name)

        # A second roll-out changes nothing, and finds every agent registered.
        before = {h: tree(r) for h, r in self.roots.items()}
        r = self.fleet()
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)  # h3 is still down
        rows = self.recap(r.stdout)
        self.assertEqual(rows["h1"], ("done", 6, 0, 2), r.stdout + r.stderr)
        self.assertEqual(rows["h2"], ("done", 3, 0, 1), r.stdout)
        self.assertEqual({h: tree(r) for h, r in self.roots.items()}, before)
        for h in AGENTS:
            self.assertIn(f"{h}: registered (", r.stdout)
            self.assertIsNone(procs[h].poll(), f"{h}'s agent ended")
        self.assertNotIn("NOT registered", r.stdout)

        # Without the down host, the roll-out succeeds; a changed label touches one file.
        r = self.fleet(inventory=self.inventory(labels_h2="rack=9", hosts=AGENTS))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        rows = self.recap(r.stdout)
        self.assertEqual((rows["h1"][2], rows["h2"][2]), (0, 1), r.stdout)
        self.assertIn("h2: changed file /etc/default/sockmatrix-agent", r.stdout)
        with open(os.path.join(self.roots["h2"], "etc/default/sockmatrix-agent")) as f:
            self.assertIn("--labels rack=9", f.read())

    def test_a_lab_host_logs_in_to_an_empty_home(self):
        # Nothing of this machine's login files runs on a lab host: a roll-out there costs what
        # it costs on a fresh machine.
        r = self.lab.ssh("h2", 'echo "$HOME"; ls -A "$HOME"; env | grep -c "^PYENV" || true')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split("\n")[0], "/root")
        self.assertNotIn(".bashrc", r.stdout)
        self.assertEqual(r.stdout.strip().split("\n")[-1], "0", r.stdout)

    def test_an_agent_that_is_not_running_is_reported_unregistered(self):
        r = self.fleet("--wait", "0", inventory=self.inventory(hosts=AGENTS))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        coord = self.lab.start_unit(self.roots["h1"], "sockmatrix-coordinator.service", "h1",
                                    os.path.join(self.work, "coordinator.log"))
        self.addCleanup(self.lab.stop, coord)
        self.addCleanup(self.lab.stop, self.lab.start_unit(
            self.roots["h1"], "sockmatrix-agent.service", "h1",
            os.path.join(self.work, "agent-h1.log")))
        wait_registered(self.lab, "h1", ("h1",))
        r = self.fleet("--wait", "3", inventory=self.inventory(hosts=AGENTS))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("h1: registered (", r.stdout)
        self.assertIn("h2: NOT registered", r.stdout)

    def test_a_host_whose_roll_out_fails_says_why_and_claims_no_change(self):
        # h2's root is a file: the first folder its roll-out makes there cannot be made.
        root = os.path.join(self.work, "not-a-folder")
        open(root, "w").close()
        self.roots["h2"] = root
        r = self.fleet("--wait", "0", inventory=self.inventory(hosts=AGENTS))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertEqual(self.recap(r.stdout)["h2"][0], "failed", r.stdout)
        self.assertEqual(self.recap(r.stdout)["h1"][0], "done", r.stdout)
        # The host's own words, and no change claimed that was not made.
        self.assertRegex(r.stdout, r"(?m)^h2: error file /etc/sockmatrix/agent.key: cannot "
                                   r"write it: mkdir: .*Not a directory$")
        self.assertNotRegex(r.stdout, r"(?m)^h2: changed ")

    def test_bad_input_is_refused_before_any_host_is_touched(self):
        inv = os.path.join(self.work, "bad-inventory")
        for text, want in (("h1 h1 agent,coordinator\nh1 h2 agent\n", "listed twice"),
                           ("h1 h1 web\n", "roles must be"),
                           ("h1 h1 agent labels=a b\n", "bad setting 'b'"),
                           ("h1 h1 agent lables=a=1\n", "bad setting"),
                           ("h1 h1 agent root=$(reboot)\n", "bad setting"),
                           ("h1 h1 coordinator\nh2 h2 coordinator\n", "a second coordinator"),
                           ("coordinator h1 agent\n", "'coordinator' is reserved")):
            with open(inv, "w") as f:
                f.write(text)
            before = tree(self.roots["h1"])
            r = self.fleet(inventory=inv)
            self.assertEqual(r.returncode, 2, (text, r.stdout, r.stderr))
            self.assertIn(want, r.stderr, text)
            self.assertEqual(r.stdout, "")
            self.assertEqual(tree(self.roots["h1"]), before)
        with open(self.key, "a") as f:
            f.write("not a key\n")
        r = self.fleet()
        self.assertEqual(r.returncode, 2)
        self.assertIn("is not a fleet key", r.stderr)


@unless_root(can_roll_out(), "needs root, ip netns, Debian's openssh-server and cpack")
@unittest.skipUnless(shutil.which("ansible-playbook"), "needs ansible-playbook")
class PlaybookTest(FleetScriptTest):
    """deploy/ansible/site.yml on the same kind of fleet: h1 coordinator and agent, h2 an
    agent, h3 down."""

    # The script's own tests are not run again here.
    test_a_lab_host_logs_in_to_an_empty_home = None
    test_an_agent_that_is_not_running_is_reported_unregistered = None
    test_bad_input_is_refused_before_any_host_is_touched = None
    test_a_host_whose_roll_out_fails_says_why_and_claims_no_change = None
    test_check_then_roll_out_then_nothing_changes_and_every_agent_registers = None

    def ini(self):
        lab = self.lab
        host = {h: f"{h} sockmatrix_root={self.roots[h]} "
                   f"sockmatrix_data_addr={lab.hosts[h]['addr']}" for h in lab.hosts}
        text = (f"[coordinator]\n{host['h1']}\n\n[agents]\n"
                + "".join(f"{host[h]}\n" for h in ("h1", "h2", "h3"))
                + "\n[all:vars]\nansible_python_interpreter=/usr/bin/python3\n"
                f"ansible_user=root\nansible_ssh_common_args=-F {lab.dir}/ssh_config\n"
                f"sockmatrix_key_file={self.key}\nsockmatrix_debs={lab.debs()}\n"
                f"sockmatrix_coordinator=tcp://{self.coord_addr}:7100\n")
        path = os.path.join(self.work, "inventory.ini")
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_check_then_play_writes_what_the_script_writes_and_every_agent_registers(self):
        before = {h: tree(r) for h, r in self.roots.items()}
        r, rows = play(self.ini(), self.work, "--check")
        self.assertEqual(rows.get("h3", {}).get("unreachable"), 1, r.stdout + r.stderr)
        for h in AGENTS:
            self.assertEqual(rows[h]["failed"], 0, r.stdout)
            self.assertGreater(rows[h]["changed"], 0, r.stdout)
        self.assertEqual({h: tree(r) for h, r in self.roots.items()}, before)

        r, rows = play(self.ini(), self.work, "-e", "sockmatrix_wait=0")
        self.assertNotEqual(r.returncode, 0)  # h3 is down
        self.assertEqual(rows["h3"]["unreachable"], 1, r.stdout)
        for h in AGENTS:
            self.assertEqual((rows[h]["failed"], rows[h]["unreachable"]), (0, 0),
                             r.stdout[-3000:])
            self.assertIn("Status: install ok installed", run(
                "dpkg", f"--root={self.roots[h]}", "--status", "sockmatrix-agent").stdout)
        self.assertFalse(os.path.exists(os.path.join(self.roots["h3"], "usr")))

        # The playbook writes what fleet.sh writes, byte for byte and mode for mode.
        script_roots = {h: self.lab.root(os.path.basename(self.work) + "-script", h)
                        for h in AGENTS}
        inv = os.path.join(self.work, "script-inventory")
        with open(inv, "w") as f:
            for h in AGENTS:
                roles = "agent,coordinator" if h == "h1" else "agent"
                f.write(f"{h} {h} {roles} root={script_roots[h]} "
                        f"data_addr={self.lab.hosts[h]['addr']}\n")
        r2 = self.fleet("--wait", "0", inventory=inv)
        self.assertEqual(r2.returncode, 0, r2.stdout + r2.stderr)
        for h in AGENTS:
            for sub in ("etc", "var/cache/sockmatrix"):
                self.assertEqual(files(os.path.join(self.roots[h], sub)),
                                 files(os.path.join(script_roots[h], sub)), (h, sub))

        # What it installed runs, confined, and registers. A second play (nothing changes, every
        # agent is found registered) is test_systemd's, on hosts that run systemd: each play
        # here costs half a minute of a CPU.
        self.start_services()
        wait_registered(self.lab, "h1", AGENTS)
        self.assertEqual(registered(self.lab, "h1", AGENTS), set(AGENTS))


@unless_root(os.geteuid() == 0, "needs root")
@unittest.skipUnless(shutil.which("setpriv"), "needs setpriv")
class ConfineTest(unittest.TestCase):
    """confine.sh, the units' confinement where systemd does not run, can refuse."""

    def test_only_the_given_folders_are_writable_and_no_capability_is_left(self):
        d = tempfile.mkdtemp(prefix="sm-confine-")
        self.addCleanup(shutil.rmtree, d, True)
        os.chmod(d, 0o755)
        state, other = os.path.join(d, "state"), os.path.join(d, "other")
        os.mkdir(state)
        os.mkdir(other, 0o777)
        os.chmod(other, 0o777)  # writable by anyone: only the read-only mount stops the write
        os.chown(state, DYNAMIC_UID, DYNAMIC_UID)
        script = (f"touch {state}/ok && id -u && grep CapEff /proc/self/status && "
                  f"(touch {other}/no 2>&1 || true) && echo /root: $(ls -A /root)")
        r = run("sh", CONFINE, str(DYNAMIC_UID), state, "--", "sh", "-c", script, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.exists(os.path.join(state, "ok")))
        self.assertFalse(os.path.exists(os.path.join(other, "no")))
        self.assertIn("Read-only file system", r.stdout)
        self.assertIn(f"{DYNAMIC_UID}\n", r.stdout)
        self.assertIn("CapEff:\t0000000000000000", r.stdout)
        self.assertIn("/root:\n", r.stdout)  # ProtectHome: empty (here, /root is not)


def files(top):
    """path -> (mode, bytes) of every file under top."""
    out = {}
    for d, _, names in os.walk(top):
        for n in names:
            p = os.path.join(d, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, top)] = (os.stat(p).st_mode, f.read())
    return out


if __name__ == "__main__":
    unittest.main()
