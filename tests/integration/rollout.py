"""Hosts to roll out to, on one machine: lab namespaces each running Debian's sshd with a key
pair made here, a folder per host standing for its root filesystem (the hosts share one), and
a way to start an installed service exactly as its systemd unit would where systemd is not
running: its ExecStart, with its EnvironmentFile, credentials and directories."""
import atexit
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile

from smtest import LAB, lab_up, wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("SM_BUILD_DIR") or os.path.join(SRC, "build")
SSHD = "/usr/sbin/sshd"
CONFINE = os.path.join(HERE, "confine.sh")
DYNAMIC_UID = 61234  # in systemd's range for DynamicUser= (61184-65519)


_debs = {}


def debs():
    """The folder of the Debian packages: SM_DEBS_DIR, where the ctest fixture sm_debs made them
    once for test_package, test_rollout and test_systemd (debs.py: a Release build, as a
    packager makes it). Run outside ctest, without it, CPack makes them from the build
    (SM_BUILD_DIR), once per process."""
    if os.environ.get("SM_DEBS_DIR"):
        return os.environ["SM_DEBS_DIR"]
    if "dir" not in _debs:
        out = tempfile.mkdtemp(prefix="sm-debs-")
        r = run("cpack", "-G", "DEB", "-B", out, cwd=BUILD)
        if r.returncode != 0:
            raise AssertionError(f"cpack failed: {r.stdout[-2000:]}{r.stderr[-2000:]}")
        shutil.rmtree(os.path.join(out, "_CPack_Packages"), ignore_errors=True)
        atexit.register(shutil.rmtree, out, True)
        _debs["dir"] = out
    return _debs["dir"]


def can_roll_out():
    return (os.geteuid() == 0 and shutil.which("ip") is not None and os.access(SSHD, os.X_OK)
            and shutil.which("ssh") is not None and shutil.which("cpack") is not None)


def run(*cmd, timeout=300, **kw):
    if "input" not in kw:
        kw.setdefault("stdin", subprocess.DEVNULL)  # never the test's own, whatever it is
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


class SshLab:
    """n lab hosts h1..hn; those in `down` have no sshd, like a machine that is off
    (sshd=False: none has, the test brings its own hosts into the namespaces)."""

    def __init__(self, n, down=(), sshd=True):
        if not sshd:
            down = tuple(f"h{i}" for i in range(1, n + 1))
        self.dir = tempfile.mkdtemp(prefix="sm-rollout-")
        os.chmod(self.dir, 0o755)  # the installed programs run as a user of their own
        self.prefix = None
        self.procs = []  # every process started here, stopped by PID
        self.hosts = {}
        try:
            self._up(n, down)
        except BaseException:
            self.close()
            raise

    def _up(self, n, down):
        self.prefix, self.subnet = lab_up(n, "r")
        st = json.loads(run("bash", LAB, "status", "--json", "--prefix", self.prefix).stdout)
        for h in st["hosts"]:
            self.hosts[h["name"]] = h
        d = self.dir
        for k in ("id", "hostkey"):
            run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "sockmatrix-test", "-f",
                f"{d}/{k}").check_returncode()
        shutil.copy(f"{d}/id.pub", f"{d}/authorized_keys")
        os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege separation directory
        with open(f"{d}/ssh_config", "w") as cfg:
            for name, h in self.hosts.items():
                cfg.write(f"Host {name}\n  HostName {h['addr']}\n  User root\n"
                          f"  IdentityFile {d}/id\n  IdentitiesOnly yes\n"
                          f"  UserKnownHostsFile {d}/known_hosts\n"
                          "  StrictHostKeyChecking accept-new\n  BatchMode yes\n"
                          "  ConnectTimeout 5\n")
                if name in down:
                    continue
                conf = f"{d}/sshd_config-{name}"
                with open(conf, "w") as f:
                    f.write(f"ListenAddress {h['addr']}\nHostKey {d}/hostkey\n"
                            f"AuthorizedKeysFile {d}/authorized_keys\n"
                            "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
                            "KbdInteractiveAuthentication no\nUsePAM no\nPidFile none\n"
                            "StrictModes no\nSubsystem sftp /usr/lib/openssh/sftp-server\n")
                # A fresh host's root has an empty home: this machine's own ~/.bashrc (which
                # the shell sshd starts would read, on every command of a roll-out) is not the
                # lab host's. sshd runs in a mount namespace of its own with an empty folder
                # over /root.
                home = f"{d}/home-{name}"
                os.makedirs(home, mode=0o700)
                log = open(f"{d}/sshd-{name}.log", "w")
                self.procs.append(subprocess.Popen(
                    ["ip", "netns", "exec", h["netns"], "unshare", "--mount",
                     "--propagation", "private", "sh", "-c", 'mount --bind "$0" /root && exec "$@"',
                     home, SSHD, "-D", "-e", "-f", conf],
                    stdout=log, stderr=log, stdin=subprocess.DEVNULL))
                log.close()
        for name in self.hosts:
            if name not in down:
                wait_for(f"sshd on {name}", lambda n=name: self.ssh(n, "true").returncode == 0,
                         20, 0.2)

    def ssh(self, host, command):
        return run("ssh", "-F", f"{self.dir}/ssh_config", host, command, timeout=60)

    def root(self, tag, host):
        """An empty root for host: only a dpkg database, like a freshly made image."""
        r = os.path.join(self.dir, tag, host)
        for sub in ("var/lib/dpkg/info", "var/lib/dpkg/updates"):
            os.makedirs(os.path.join(r, sub), exist_ok=True)
        open(os.path.join(r, "var/lib/dpkg/status"), "a").close()
        return r

    def debs(self):
        """The packages (debs())."""
        return debs()

    def start_unit(self, root, unit, host, log):
        """Starts the unit installed under root inside host's namespace, as systemd would:
        confined (confine.sh) as a user of its own when the unit asks for DynamicUser=."""
        argv, env, writable, dynamic = unit_command(root, unit)
        if dynamic:
            creds = [env["CREDENTIALS_DIRECTORY"]] if "CREDENTIALS_DIRECTORY" in env else []
            for d in writable + creds:  # systemd gives them to the unit's user
                chown_tree(d, DYNAMIC_UID)
            argv = ["sh", CONFINE, str(DYNAMIC_UID), *writable, "--", *argv]
        f = open(log, "a")
        p = subprocess.Popen(["ip", "netns", "exec", self.hosts[host]["netns"], *argv], env=env,
                             stdout=f, stderr=f, stdin=subprocess.DEVNULL)
        f.close()
        self.procs.append(p)
        return p

    def api(self, host, path, port=8080):
        """GET path of the coordinator's HTTP API on host's loopback, as JSON."""
        r = run("ip", "netns", "exec", self.hosts[host]["netns"], "curl", "-sS", "--max-time",
                "10", f"http://127.0.0.1:{port}{path}", timeout=30)
        return json.loads(r.stdout) if r.returncode == 0 and r.stdout else None

    def stop(self, proc, timeout=10):
        """SIGTERM to one of our processes; SIGKILL if it has not ended after timeout s."""
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def close(self):
        for p in reversed(self.procs):
            self.stop(p)
        if self.prefix:
            run("bash", LAB, "down", "--prefix", self.prefix, timeout=60)
        shutil.rmtree(self.dir, ignore_errors=True)


PLAYBOOK = os.path.join(SRC, "deploy", "ansible", "site.yml")


def play(inventory, work, *args):
    """Runs deploy/ansible/site.yml; returns (the process, host -> {ok, changed, unreachable,
    failed, ...} from its PLAY RECAP)."""
    # ssh's control sockets need a short path (a Unix socket's name is at most 107 bytes).
    cp = tempfile.mkdtemp(prefix="smcp-")
    try:
        # Pipelining: each task's module goes to the host's python3 over the ssh session
        # already open, not copied to a file there first: the same tasks on the same hosts,
        # in half the time (an operator's ansible.cfg would say the same).
        env = dict(os.environ, LC_ALL="C.UTF-8", ANSIBLE_NOCOLOR="1",
                   ANSIBLE_LOCAL_TEMP=os.path.join(work, "ansible-local"),
                   ANSIBLE_SSH_CONTROL_PATH_DIR=cp, ANSIBLE_RETRY_FILES_ENABLED="0",
                   ANSIBLE_PIPELINING="1")
        # Its own stdin: Ansible refuses to start on a non-blocking one, which is what a test
        # run beside others may inherit.
        r = subprocess.run(["ansible-playbook", "-i", inventory, PLAYBOOK, *args],
                           capture_output=True, text=True, timeout=600, env=env,
                           stdin=subprocess.DEVNULL)
    finally:
        shutil.rmtree(cp, ignore_errors=True)
    recap = {m.group(1): {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m.group(2))}
             for m in re.finditer(r"^(\S+)\s+: (.*)$", r.stdout.split("PLAY RECAP")[-1], re.M)}
    return r, recap


# ---- a unit, started as systemd would start it ----

def _unit_settings(root, unit):
    """The [Service] settings of the unit and its drop-ins under root, in systemd's order: an
    empty assignment resets a list (ExecStart=, LoadCredential=)."""
    files = [os.path.join(root, "usr/lib/systemd/system", unit)]
    d = os.path.join(root, "etc/systemd/system", unit + ".d")
    if os.path.isdir(d):
        files += [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith(".conf")]
    settings = {}
    for path in files:
        section = None
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line or line[0] in "#;":
                    continue
                if line.startswith("["):
                    section = line
                    continue
                if section != "[Service]":
                    continue
                k, _, v = line.partition("=")
                if v == "":
                    settings[k] = []
                else:
                    settings.setdefault(k, []).append(v)
    return settings


def _environment_file(path):
    env = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            k, _, v = line.partition("=")
            if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
                v = v[1:-1]
            env[k.strip()] = v
    return env


def _expand(argv_text, env):
    """systemd's rules: "${VAR}" is replaced inside its word; a word that is "$VAR" alone
    becomes the value split at whitespace (none, one or several words)."""
    out = []
    for word in shlex.split(argv_text):
        m = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
        if m:
            out += env.get(m.group(1), "").split()
            continue
        out.append(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}",
                          lambda g: env.get(g.group(1), ""), word))
    return out


def chown_tree(top, uid):
    os.chown(top, uid, uid)
    for d, dirs, files in os.walk(top):
        for n in dirs + files:
            os.chown(os.path.join(d, n), uid, uid, follow_symlinks=False)


def unit_command(root, unit):
    """(argv, environment, writable folders, DynamicUser?) of the unit's ExecStart, every
    path the unit names taken under root: its EnvironmentFile, LoadCredential sources (copied
    to a credentials folder, mode 0400 as systemd leaves them), StateDirectory and
    RuntimeDirectory (the folders the program may write)."""
    s = _unit_settings(root, unit)
    writable = []
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
    for ef in s.get("EnvironmentFile", []):
        optional = ef.startswith("-")
        path = os.path.join(root, ef.lstrip("-").lstrip("/"))
        if os.path.exists(path) or not optional:
            env.update(_environment_file(path))
    name = unit.rsplit(".", 1)[0]
    for key, var, base in (("StateDirectory", "STATE_DIRECTORY", "var/lib"),
                           ("RuntimeDirectory", "RUNTIME_DIRECTORY", "run")):
        dirs = s.get(key, [])
        if dirs:
            paths = [os.path.join(root, base, d) for d in " ".join(dirs).split()]
            for p in paths:
                os.makedirs(p, mode=0o755, exist_ok=True)
            env[var] = ":".join(paths)
            writable += paths
    creds = s.get("LoadCredential", [])
    if creds:
        cdir = os.path.join(root, "run/credentials", unit)
        shutil.rmtree(cdir, ignore_errors=True)
        os.makedirs(cdir, mode=0o700)
        for c in creds:
            cid, _, src = c.partition(":")
            dst = os.path.join(cdir, cid)
            shutil.copyfile(os.path.join(root, src.lstrip("/")), dst)
            os.chmod(dst, 0o400)
        env["CREDENTIALS_DIRECTORY"] = cdir
    exec_start = s.get("ExecStart", [])
    if len(exec_start) != 1:
        raise AssertionError(f"{name}: expected one ExecStart, found {exec_start}")
    argv = _expand(exec_start[0], env)
    argv[0] = os.path.join(root, argv[0].lstrip("/"))  # the installed binary, under root
    return argv, env, writable, s.get("DynamicUser", ["no"])[-1] in ("yes", "true", "1", "on")


def registered(lab, host, names, port=8080):
    """The agents among names the coordinator on host lists as not lost, or None."""
    agents = lab.api(host, "/api/agents", port)
    if agents is None:
        return None
    return {a["name"] for a in agents.get("agents", []) if a.get("status") != "lost"} & set(names)


def tree(root):
    """Every file under root with its size, mode and modification time: what changed."""
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            st = os.lstat(p)
            out[os.path.relpath(p, root)] = (st.st_size, st.st_mode, st.st_mtime_ns, st.st_ino)
    return out


def wait_registered(lab, host, names, timeout=30):
    return wait_for(f"agents {sorted(names)} registered",
                    lambda: registered(lab, host, names) == set(names), timeout, 0.5)


