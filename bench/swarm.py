#!/usr/bin/env python3
"""The coordinator under a swarm of simulated agents: starts a coordinator on loopback (fresh key
and store in a temporary folder, --hold-ms 5000), runs sm-swarm against it, and prints the
figures beside their targets. The targets are informational: this exits 0 whatever the figures,
and non-zero only when something failed to run.

    python3 bench/swarm.py --bin-dir build/bin [--agents 1000] [--jobs-per-agent 20] [--rr]

--rr makes the jobs rr jobs whose results carry a realistic latency histogram (about 5 KB of
JSON each, as real rr results) instead of stream jobs of one 1-byte message.

--report-db PATH starts the coordinator on a copy of a store that holds a large run (made by
`sm-bench-report --make PATH`: a 20,480-rr-job run, id 1) and, for as long as the swarm runs,
asks for that run's anomalies one after another, each under another floor so that none comes
from the cache: every phase (the latency phase's p99 among them) is then measured while a
report of the whole run is being built.
"""
import argparse
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HOLD_MS = 5000

# (label, key in the summary, unit, target as text, test of the value)
TARGETS = [
    ("idle CPU of the coordinator", "idle_cpu_pct_of_core", "% of a core", "< 5",
     lambda v: v < 5),
    # The targets: 8,000 a second at 1,000 agents, 5,000 at 10,000.
    ("results stored", "results_per_s", "1/s", ">= {rate}", None),
    ("dispatch latency p99", "dispatch_p99_ms", "ms", "< 10", lambda v: v < 10),
    ("peak RSS of the coordinator", "peak_rss_MB", "MB", "< 100", lambda v: v < 100),
]

OTHERS = [
    ("time to register every agent", "register_s", "s"),
    ("agent polls while idle", "idle_polls_per_s", "1/s"),
    ("RSS after the idle phase", "idle_rss_MB", "MB"),
    ("jobs in the throughput phase", "throughput_jobs", ""),
    ("throughput phase", "throughput_s", "s"),
    ("jobs accepted by POST /api/jobs", "submit_jobs_per_s", "1/s"),
    ("jobs dispatched", "dispatch_jobs_per_s", "1/s"),
    ("coordinator CPU, throughput phase", "throughput_coord_cpu_pct_of_core", "% of a core"),
    ("sm-swarm CPU, throughput phase", "throughput_swarm_cpu_pct_of_core", "% of a core"),
    ("dispatch latency p50", "dispatch_p50_ms", "ms"),
    ("dispatch latency p90", "dispatch_p90_ms", "ms"),
    ("dispatch latency max", "dispatch_max_ms", "ms"),
    ("latency jobs that never arrived", "latency_missing", ""),
    ("polls resent after hold + 5 s", "swarm_resends", ""),
    ("replies the swarm refused", "swarm_bad_replies", ""),
    ("messages the coordinator rejected", "coord_rejected_total", ""),
    ("duplicate results", "coord_results_duplicate", ""),
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def raise_nofile():
    """1000 agents are 1000 connections to the coordinator: lift the soft limit to the hard one
    (both processes inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


class Coordinator:
    """A coordinator we start and stop ourselves, by PID."""

    def __init__(self, bin_dir, tmp, agents, report_db=None, poll_rate=None):
        coord = os.path.join(bin_dir, "sockmatrix-coordinator")
        if report_db:
            shutil.copyfile(report_db, os.path.join(tmp, "coordinator.db"))
        self.key = os.path.join(tmp, "key")
        self.log_path = os.path.join(tmp, "coordinator.log")
        subprocess.run([coord, "keygen", self.key], check=True, capture_output=True, timeout=30)
        self.bus = f"tcp://127.0.0.1:{free_port()}"
        r, w = os.pipe()
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(
                [coord, "--listen", self.bus, "--http", "127.0.0.1:0", "--db",
                 os.path.join(tmp, "coordinator.db"), "--key-file", self.key, "--hold-ms",
                 str(HOLD_MS), "--ready-fd", str(w),
                 # A swarm larger than the default registration cap is still all admitted.
                 "--max-agents", str(max(4096, agents))]
                + ([] if poll_rate is None else ["--poll-rate", str(poll_rate)]),
                pass_fds=(w,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        os.close(w)
        with os.fdopen(r) as f:
            line = f.readline()  # EOF if it exits first
        if not line.startswith("ready"):
            self.stop()
            raise RuntimeError(f"the coordinator did not start:\n{self.log_tail()}")
        # "ready bus=tcp://127.0.0.1:P http=127.0.0.1:P"
        fields = dict(f.split("=", 1) for f in line.split()[1:])
        self.http = "http://" + fields["http"]

    def log_tail(self, n=20):
        try:
            with open(self.log_path) as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def log_counts(self):
        """Lines per message id at warning or worse ("TIME LEVEL SM-ID text")."""
        counts = {}
        try:
            with open(self.log_path) as f:
                for line in f:
                    w = line.split()
                    if len(w) >= 3 and w[1] in ("warning", "error", "crit", "alert", "emerg"):
                        counts[w[2]] = counts.get(w[2], 0) + 1
        except OSError:
            pass
        return counts

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def http_get(base, path, timeout):
    """GET base + path (HTTP/1.0 on a socket of its own: this folder's http.py hides the standard
    http package from a script run here); returns the status."""
    host, port = base.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as c:
        c.sendall(f"GET {path} HTTP/1.0\r\nHost: {host}:{port}\r\n\r\n".encode())
        data = b""
        while chunk := c.recv(65536):
            data += chunk
    return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0


class Reports(threading.Thread):
    """Asks for run 1's anomalies, one after another until stopped, each under a floor not asked
    before (so each is built, not taken from the cache); counts them and their times."""

    def __init__(self, http):
        super().__init__(daemon=True)
        self.http, self.halt, self.times, self.failed = http, threading.Event(), [], []

    def run(self):
        n = 0
        while not self.halt.is_set() and n < 900:
            n += 1
            path = f"/api/runs/1/anomalies?floor={0.1 + n / 1000:.3f}"
            t0 = time.monotonic()
            try:
                status = http_get(self.http, path, 600)
            except OSError as e:
                status = str(e)
            if status == 200:
                self.times.append(time.monotonic() - t0)
            else:
                self.failed.append(f"{path}: {status}")
                self.halt.wait(1)

    def stop(self):
        self.halt.set()
        self.join(700)


def fmt(v):
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"
    return str(v)


def report(s, agents, jobs_per_agent, rr):
    kind = "rr jobs with histograms" if rr else "jobs"
    print(f"\n## coordinator under a swarm of {agents} agents "
          f"({jobs_per_agent} {kind} each, hold {HOLD_MS} ms)")
    print(f"  {'figure':<36} {'measured':>10} {'unit':<12} {'target':<8} verdict")
    rate = 8000 if agents <= 1000 else 5000
    for label, key, unit, target, ok in TARGETS:
        v = s[key]
        target = target.format(rate=rate)
        good = ok(v) if ok else v >= rate
        print(f"  {label:<36} {fmt(v):>10} {unit:<12} {target:<8} {'PASS' if good else 'MISS'}")
    for label, key, unit in OTHERS:
        print(f"  {label:<36} {fmt(s[key]):>10} {unit:<12}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin-dir", default="build/bin")
    ap.add_argument("--agents", type=int, default=1000)
    ap.add_argument("--jobs-per-agent", type=int, default=20)
    ap.add_argument("--idle-s", type=int, default=10)
    ap.add_argument("--latency-jobs", type=int, default=500)
    ap.add_argument("--rr", action="store_true",
                    help="rr jobs whose results carry a realistic histogram")
    ap.add_argument("--poll-rate", type=int, metavar="N",
                    help="the coordinator's --poll-rate (default: its own; 0 keeps every hold "
                         "at 5 s, as before the hold grew with the fleet)")
    ap.add_argument("--report-db", metavar="PATH",
                    help="a store made by sm-bench-report --make: its run's reports are built "
                         "throughout")
    a = ap.parse_args()
    for exe in ("sockmatrix-coordinator", "sm-swarm"):
        if not os.access(os.path.join(a.bin_dir, exe), os.X_OK):
            sys.exit(f"swarm: {a.bin_dir}/{exe} is not built "
                     "(cmake -S . -B build -DSM_BENCH=ON && cmake --build build)")
    raise_nofile()
    print(f"host: {os.uname().nodename}, kernel {os.uname().release}, {os.cpu_count()} cores",
          flush=True)
    tmp = tempfile.mkdtemp(prefix="sm-swarm-")
    coord = reports = None
    try:
        coord = Coordinator(a.bin_dir, tmp, a.agents, a.report_db, a.poll_rate)
        if a.report_db:
            reports = Reports(coord.http)
            reports.start()
        cmd = [os.path.join(a.bin_dir, "sm-swarm"), "--coordinator", coord.bus, "--http",
               coord.http, "--key-file", coord.key, "--agents", str(a.agents), "--coord-pid",
               str(coord.proc.pid), "--jobs-per-agent", str(a.jobs_per_agent), "--idle-s",
               str(a.idle_s), "--latency-jobs", str(a.latency_jobs), "--hold-ms", str(HOLD_MS)]
        if a.rr:
            cmd.append("--rr")
        print("$ " + " ".join(cmd), file=sys.stderr, flush=True)
        # Progress goes straight to our stderr; the summary is the last line of stdout.
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                           timeout=30 * 60)
        if p.returncode != 0:
            raise RuntimeError(f"sm-swarm exited {p.returncode}; coordinator log:\n"
                               f"{coord.log_tail()}")
        summary = json.loads(p.stdout.strip().splitlines()[-1])
        report(summary, a.agents, a.jobs_per_agent, a.rr)
        if reports:
            reports.stop()
            t = reports.times
            print(f"  reports of run 1 built meanwhile: {len(t)}"
                  + (f", {min(t):.2f} to {max(t):.2f} s each" if t else "")
                  + (f"; {len(reports.failed)} failed: {reports.failed[0]}"
                     if reports.failed else ""))
        counts = coord.log_counts()
        if counts:
            print("  coordinator warnings and errors: " +
                  ", ".join(f"{k} x{v}" for k, v in sorted(counts.items())))
        print("  summary: " + json.dumps(summary))
    except (RuntimeError, OSError, subprocess.SubprocessError, ValueError, KeyError) as e:
        print(f"swarm: {e}", file=sys.stderr)
        return 1
    finally:
        if reports:
            reports.stop()
        if coord:
            rc = coord.stop()
            if rc not in (0, None):
                print(f"swarm: the coordinator exited {rc}", file=sys.stderr)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
