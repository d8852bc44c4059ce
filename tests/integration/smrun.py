"""Runs test files as ctest should see them: `python3 smrun.py MODULE...` in the folder that
holds the modules (unittest's own arguments, -v and -k, pass through).

Exit status: 1 when a test failed or errored; 77 (the tests' SKIP_RETURN_CODE in
tests/CMakeLists.txt) when none failed but any was skipped, so that ctest reports the file as
skipped and a green run means every test in it ran; 0 when all ran and passed. The skips are
listed at the end with their reasons, so that the log says which tests did not run and why.
`--part netns` runs only the tests of the classes marked @netns (smtest.py: they make network
namespaces), `--part loopback` only the others: ctest runs a file that has both in two entries,
so that `make check` runs the second. Without --part, every test runs.
`--own-netns` (ctest passes it to every test file): run as root, the file runs in a network
namespace of its own, with only its loopback up. Its daemons, the labs it makes (their bridge
and veths, tc) and the browser it drives are then the only ones there: another test making or
removing a lab at the same time changes nothing it sees (Chromium aborts page loads when
interfaces come and go), two files cannot take the same port or subnet, and a lab never
touches this machine's own network. Not root, it runs where it is.
Each test's wall time is listed too, slowest first, so that a slow file says where its time
goes (class set-ups, a lab or a fleet shared by a class's tests, count in their first test's
time). With SM_CPU_LOG set (tests/suite.sh sets it), the file's CPU time, user and system, its
own and that of the processes it started and waited for (daemons, labs' helpers, Chromium), is
appended to that file as `NAME<TAB>USER_S<TAB>SYS_S`, NAME as ctest names the entry."""
import ctypes
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

SKIPPED = 77


class TimedResult(unittest.TextTestResult):
    """Keeps each test's wall time, from its start (its class's set-up before it included) to
    its end."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.times = []
        self._last = time.monotonic()

    def stopTest(self, test):
        super().stopTest(test)
        now = time.monotonic()
        self.times.append((now - self._last, test.id()))
        self._last = now


def part_of(test):
    return "netns" if getattr(type(test), "sm_netns", False) else "loopback"


def only(suite, part):
    """The suite with only the tests of part (a module that failed to load stays, to fail)."""
    kept = unittest.TestSuite()
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            sub = only(t, part)
            if sub.countTestCases():
                kept.addTest(sub)
        elif part_of(t) == part or type(t).__module__ == "unittest.loader":
            kept.addTest(t)
    return kept


class Loader(unittest.TestLoader):
    part = None

    def loadTestsFromNames(self, names, module=None):
        suite = super().loadTestsFromNames(names, module)
        return only(suite, self.part) if self.part else suite


CLONE_NEWNS, CLONE_NEWNET = 0x00020000, 0x40000000
MS_BIND, MS_REC, MS_SLAVE, MNT_DETACH = 0x1000, 0x4000, 0x80000, 2


def own_netns():
    """Moves this process (single-threaded yet) into a new network namespace with lo up, and a
    mount namespace of its own in which /sys/class/net and /sys/devices/virtual/net show that
    network namespace's interfaces (the rest of /sys, cgroups included, as it was): lab.sh
    reads its veths' MTU there. The labs' namespaces are mounted on their /run/netns names in
    this process tree only, and go with it; the names themselves show elsewhere as empty files
    until lab.sh down removes them (or `ip netns del`, after a test was killed)."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)

    def check(rc, what):
        if rc != 0:
            sys.exit(f"smrun.py: --own-netns: {what}: {os.strerror(ctypes.get_errno())}")

    check(libc.unshare(CLONE_NEWNET | CLONE_NEWNS), "unshare")
    check(libc.mount(None, b"/", None, MS_REC | MS_SLAVE, None), "mount --make-rslave /")
    sysfs = tempfile.mkdtemp(prefix="smrun-sysfs-")
    check(libc.mount(b"sysfs", sysfs.encode(), b"sysfs", 0, None), "mount sysfs")
    for sub in ("class/net", "devices/virtual/net"):
        check(libc.mount(os.path.join(sysfs, sub).encode(), f"/sys/{sub}".encode(), None,
                         MS_BIND, None), f"bind /sys/{sub}")
    check(libc.umount2(sysfs.encode(), MNT_DETACH), "umount sysfs")
    os.rmdir(sysfs)
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)


def own_python():
    """`python3` in the tests' commands (lab.sh's probes, helpers run by name) is the
    interpreter that runs the tests: a folder holding only that name goes first on PATH. A
    version manager's shim that would otherwise come first costs seconds per start."""
    d = tempfile.mkdtemp(prefix="sm-python-")
    os.symlink(sys.executable, os.path.join(d, "python3"))
    os.environ["PATH"] = d + os.pathsep + os.environ.get("PATH", "")
    return d


def log_cpu(path, name):
    """Appends name's CPU seconds so far (this process and its waited-for children) to path."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(path, "a") as f:  # one short write: entries running side by side do not mix
        f.write(f"{name}\t{me.ru_utime + kids.ru_utime:.1f}\t{me.ru_stime + kids.ru_stime:.1f}\n")


def main(argv):
    sys.path.insert(0, os.getcwd())
    bindir = own_python()
    args = list(argv[1:])
    if "--own-netns" in args:
        args.remove("--own-netns")
        own_netns()
    loader = Loader()
    if "--part" in args:
        i = args.index("--part")
        loader.part = args[i + 1]
        if loader.part not in ("netns", "loopback"):
            sys.exit(f"smrun.py: --part netns or --part loopback, not {loader.part!r}")
        del args[i:i + 2]
    runner = unittest.TextTestRunner(resultclass=TimedResult, verbosity=2 if "-v" in args else 1)
    prog = unittest.main(module=None, argv=[argv[0], *args], testRunner=runner,
                         testLoader=loader, exit=False)
    if loader.part and not prog.result.testsRun:
        print(f"smrun.py: no test of part {loader.part} in {args}", file=sys.stderr)
        return 1
    result = prog.result
    shutil.rmtree(bindir, ignore_errors=True)
    if os.environ.get("SM_CPU_LOG"):
        modules = [a for a in args if not a.startswith("-")]
        name = "+".join(modules) + ("_netns" if loader.part == "netns" else "")
        log_cpu(os.environ["SM_CPU_LOG"], name)
    if result.times:
        print("\nseconds per test, slowest first (a class's set-up in its first test's):",
              file=sys.stderr)
        for secs, name in sorted(result.times, reverse=True):
            print(f"  {secs:7.1f}  {name}", file=sys.stderr)
    if not result.wasSuccessful():
        return 1
    if result.skipped:
        print(f"\nSKIPPED {len(result.skipped)} of {result.testsRun} tests:", file=sys.stderr)
        for test, reason in result.skipped:
            print(f"  {test.id()}: {reason}", file=sys.stderr)
        return SKIPPED
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
