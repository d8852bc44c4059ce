"""Shared helpers for the integration tests: where the binaries are, and how to run them."""
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
