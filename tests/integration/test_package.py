"""The Debian packages (make package): what they hold, what they depend on, that they install
into a throw-away root with dpkg --root, and that their systemd units pass systemd-analyze verify
there. Built by CPack from the install rules of a Release build (the ctest fixture sm_debs,
rollout.debs())."""
import os
import shutil
import subprocess
import tempfile
import unittest

from rollout import debs

VERSION = "0.1.0"


def run(*cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)


class PackageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.deb = {p: os.path.join(debs(), f"{p}_{VERSION}_amd64.deb")
                   for p in ("sockmatrix-agent", "sockmatrix-coordinator")}

    def field(self, pkg, name):
        r = run("dpkg-deb", "--field", self.deb[pkg], name)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.strip()

    def contents(self, pkg):
        r = run("dpkg-deb", "--contents", self.deb[pkg])
        self.assertEqual(r.returncode, 0, r.stderr)
        return {line.split()[-1].lstrip(".") for line in r.stdout.splitlines()
                if not line.endswith("/")}

    def test_each_package_holds_its_binaries_unit_and_settings(self):
        self.assertEqual(self.contents("sockmatrix-agent"), {
            "/usr/bin/sockmatrix-agent", "/usr/lib/systemd/system/sockmatrix-agent.service",
            "/etc/default/sockmatrix-agent", "/usr/share/doc/sockmatrix-agent/README.md"})
        coord = self.contents("sockmatrix-coordinator")
        for path in ("/usr/bin/sockmatrix-coordinator", "/usr/bin/sockmatrix",
                     "/usr/lib/systemd/system/sockmatrix-coordinator.service",
                     "/etc/default/sockmatrix-coordinator",
                     "/usr/share/sockmatrix/web/index.html",
                     "/usr/share/sockmatrix/web/vendor/chart.umd.js"):
            self.assertIn(path, coord)
        self.assertFalse([p for p in coord if "sockmatrix-agent" in p], coord)

    def test_dependencies_are_runtime_libraries_never_dev_packages(self):
        agent = self.field("sockmatrix-agent", "Depends")
        coord = self.field("sockmatrix-coordinator", "Depends")
        for lib in ("libnanomsg5", "libcurl4", "libssl3", "libc6"):
            self.assertIn(lib, agent)
        for lib in ("libnanomsg5", "libwebsockets", "libsqlite3-0", "libcurl4"):
            self.assertIn(lib, coord)
        self.assertNotIn("-dev", agent + coord)
        self.assertEqual(self.field("sockmatrix-agent", "Package"), "sockmatrix-agent")
        self.assertEqual(self.field("sockmatrix-coordinator", "Version"), VERSION)

    def test_settings_are_conffiles_and_no_maintainer_script_runs(self):
        for pkg, conf in (("sockmatrix-agent", "/etc/default/sockmatrix-agent"),
                          ("sockmatrix-coordinator", "/etc/default/sockmatrix-coordinator")):
            ctl = tempfile.mkdtemp(prefix="sm-ctl-")
            self.addCleanup(shutil.rmtree, ctl, True)
            r = run("dpkg-deb", "--control", self.deb[pkg], ctl)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(ctl, "conffiles")) as f:
                self.assertEqual(f.read().split(), [conf])
            # Nothing surprising at install: no user, no service started behind the admin's back.
            for script in ("preinst", "postinst", "prerm", "postrm"):
                self.assertFalse(os.path.exists(os.path.join(ctl, script)), script)

    def test_they_install_into_a_throwaway_root_and_their_units_verify(self):
        root = tempfile.mkdtemp(prefix="sm-root-")
        self.addCleanup(shutil.rmtree, root, True)
        for d in ("var/lib/dpkg/info", "var/lib/dpkg/updates"):
            os.makedirs(os.path.join(root, d))
        open(os.path.join(root, "var/lib/dpkg/status"), "w").close()
        # The libraries are this machine's, not the empty root's: their dependencies are
        # checked above, the install itself here.
        r = run("dpkg", f"--root={root}", "--force-depends", "--force-not-root", "--log=/dev/null",
                "-i", *self.deb.values())
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        for b in ("sockmatrix-agent", "sockmatrix-coordinator", "sockmatrix"):
            self.assertTrue(os.access(os.path.join(root, "usr/bin", b), os.X_OK), b)
        r = run("dpkg", f"--root={root}", "--status", "sockmatrix-agent")
        self.assertIn("Status: install ok installed", r.stdout)
        # systemd-analyze verify in that root needs the system's own units beside ours.
        shutil.copytree("/lib/systemd/system", os.path.join(root, "lib/systemd/system"),
                        symlinks=True)
        units = [os.path.join(root, "usr/lib/systemd/system", u)
                 for u in ("sockmatrix-agent.service", "sockmatrix-coordinator.service")]
        r = run("systemd-analyze", "verify", f"--root={root}", *units)
        self.assertEqual((r.returncode, r.stderr.strip()), (0, ""), r.stderr)
        # A unit with a typo would not pass: the check can fail.
        bad = os.path.join(root, "usr/lib/systemd/system/sockmatrix-bad.service")
        with open(units[0]) as f, open(bad, "w") as g:
            g.write(f.read().replace("ProtectHome=yes", "ProtectHome=yes\nProtecHome=yes"))
        r = run("systemd-analyze", "verify", f"--root={root}", bad)
        self.assertIn("Unknown key", r.stderr)

    def test_the_agent_unit_is_hardened_as_documented(self):
        with open(os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "systemd",
                               "sockmatrix-agent.service")) as f:
            unit = f.read()
        for line in ("DynamicUser=yes", "StateDirectory=sockmatrix-agent", "ProtectSystem=strict",
                     "ProtectHome=yes", "NoNewPrivileges=yes", "PrivateTmp=yes",
                     "CapabilityBoundingSet=\n",
                     "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX AF_NETLINK",
                     "Restart=on-failure", "LoadCredential=agent.key:/etc/sockmatrix/agent.key",
                     "EnvironmentFile=/etc/default/sockmatrix-agent"):
            self.assertIn(line, unit)


if __name__ == "__main__":
    unittest.main()
