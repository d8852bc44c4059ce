"""A CPU hog for the tests that disturb a host: one process spinning on one CPU, bounded in time
by itself and stopped by its PID."""
import subprocess
import sys

# The child pins itself, says so on stdout, then spins until its own deadline: the hog cannot
# outlive a test that forgot it by more than `seconds`.
#
# As root it also raises its weight (nice -10): at equal weight, Linux's EEVDF scheduler (6.6
# and later) often lets a task that wakes run at once ahead of a long-running spinner, so a
# sender pinned beside the hog could go through a whole job without waiting for the CPU, and
# the sample was then rightly not disturbed. With more weight the hog takes the CPU from the
# sender as a busy machine does. Without the privilege it spins at the weight it has.
_SPIN = """
import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[1])})
try:
    os.setpriority(os.PRIO_PROCESS, 0, -10)
except PermissionError:
    pass
deadline = time.monotonic() + float(sys.argv[2])
print("pinned", flush=True)
while time.monotonic() < deadline:
    pass
"""


class CpuHog:
    """with CpuHog(cpu=0, seconds=60): ... runs the body with CPU `cpu` busy."""

    def __init__(self, cpu, seconds):
        self.cpu, self.seconds, self.proc = cpu, seconds, None

    def __enter__(self):
        self.proc = subprocess.Popen([sys.executable, "-c", _SPIN, str(self.cpu), str(self.seconds)],
                                     stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        # Readiness from the child itself: pinned and about to spin.
        line = self.proc.stdout.readline()
        if line.strip() != "pinned":
            self.stop()
            raise AssertionError(f"the CPU hog did not start: {line!r}")
        return self

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
        if self.proc:
            self.proc.wait(timeout=10)
            self.proc.stdout.close()

    def __exit__(self, *exc):
        self.stop()
