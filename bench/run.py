#!/usr/bin/env python3
"""sockmatrix benchmarks: our workloads side by side with iperf3, sockperf and a plain C loop
(sm-bench-plain), interleaved in one session, on loopback. Prints every figure and the median
of the paired ratios (ours / theirs, one pair per repetition). Never a test: nothing here
passes or fails on speed.

    python3 bench/run.py --agent build/bin/sockmatrix-agent [--reps 5] [--seconds 3]
    python3 bench/run.py --only plain [--bytes 1G] [--small-bytes 256M] [--bulk-pairs 3]
                         [--max-load 0.7]
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(cmd, timeout):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()[-400:]}")
    return p.stdout


class Server:
    """A server we start and stop ourselves, by PID."""

    def __init__(self, cmd, port):
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"{cmd[0]} did not listen on port {port}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# Every tool runs with its sender (client) on CPU 0 and its receiver (server) on CPU 1: on
# loopback, where the two ends run decides the result (see docs/benchmarks.md), and unpinned
# each tool would get whatever placement the scheduler chose that run.
CLIENT_CPU, SERVER_CPU = 0, 1


def ours(agent, secs, *args):
    out = run([agent, "--once", "--quiet", "--format", "json", "--repetitions", "1",
               "--warmup", "0", "--affinity", f"{CLIENT_CPU},{SERVER_CPU}",
               "--duration-ms", str(int(secs * 1000)), *args], secs * 10 + 30)
    return json.loads(out)["cells"][0]["samples"][0]


def ours_bytes(agent, nbytes, *args):
    """A stream job of nbytes, timed at the receiver, as sm-bench-plain runs it."""
    out = run([agent, "--once", "--quiet", "--format", "json", "--repetitions", "1",
               "--warmup", "0", "--affinity", f"{CLIENT_CPU},{SERVER_CPU}",
               "--bytes", str(nbytes), *args], 300)
    return json.loads(out)["cells"][0]["samples"][0]


def plain(tool, nbytes, transport, msg_size, check=True):
    """sm-bench-plain: the same stream with the least code (sender CPU 0, receiver CPU 1)."""
    out = run([tool, "--transport", transport, "--msg-size", str(msg_size), "--bytes",
               str(nbytes), *([] if check else ["--no-check"])], 300)
    return json.loads(out)


def size_arg(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1:] in units else int(text)


def iperf3(port, secs, length):
    d = json.loads(run(["iperf3", "-c", "127.0.0.1", "-p", str(port), "-J", "-t", str(secs),
                        "-l", str(length), "-A", f"{CLIENT_CPU},{SERVER_CPU}"], secs * 10 + 30))
    e = d["end"]
    recv = e["sum_received"]
    cpu = e["cpu_utilization_percent"]
    cpu_s = (cpu["host_total"] + cpu["remote_total"]) / 100.0 * recv["seconds"]
    return {"throughput_MBps": recv["bytes"] / recv["seconds"] / 1e6,
            "cpu_s_per_GB": cpu_s / (recv["bytes"] / 1e9)}


def sockperf(port, secs, size):
    out = run(["taskset", "-c", str(CLIENT_CPU), "sockperf", "ping-pong", "--tcp", "-i",
               "127.0.0.1", "-p", str(port), "-m", str(size), "-t", str(secs), "--full-rtt"],
              secs * 10 + 30)
    p50 = float(re.search(r"percentile 50\.000 =\s*([\d.]+)", out).group(1))
    m = re.search(r"\[Valid Duration\] RunTime=([\d.]+) sec; SentMessages=\d+; "
                  r"ReceivedMessages=(\d+)", out)
    return {"rtt_p50_us": p50, "rt_per_s": int(m.group(2)) / float(m.group(1))}


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def report(title, rows, pairs):
    """rows: [(label, metric, unit, [values])]; pairs: [(label, [ours], [theirs], better)]."""
    print(f"\n## {title}")
    for label, metric, unit, xs in rows:
        shown = ", ".join(f"{x:.4g}" for x in xs)
        print(f"  {label:<34} {metric:<16} median {med(xs):>10.4g} {unit:<6} ({shown})")
    for label, a, b, better in pairs:
        ratios = [x / y for x, y in zip(a, b) if y]
        mid = ""
        if len(ratios) >= 4:
            q = statistics.quantiles(ratios, n=4)
            mid = f"middle half {q[0]:.3f}-{q[2]:.3f}, "
        says = f"{better} is better" if better in ("higher", "lower", "-") else better
        print(f"  ratio {label:<40} median {med(ratios):.3f}x  ({says}; {mid}"
              f"min {min(ratios):.3f}, max {max(ratios):.3f}, n={len(ratios)})")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agent", default="build/bin/sockmatrix-agent")
    ap.add_argument("--plain", help="sm-bench-plain (default: beside the agent)")
    ap.add_argument("--reps", type=int, default=5, help="interleaved repetitions (>= 5)")
    ap.add_argument("--seconds", type=float, default=3, help="length of each run")
    ap.add_argument("--only", choices=("all", "tools", "plain"), default="all",
                    help="tools: iperf3 and sockperf; plain: the plain C loop")
    ap.add_argument("--bytes", default="1G", help="plain: bytes of a 128 KiB-write stream")
    ap.add_argument("--small-bytes", default="256M",
                    help="plain: bytes of a 128-byte-write stream")
    ap.add_argument("--bulk-pairs", type=int, default=3,
                    help="plain: pairs of the 128 KiB-write case per repetition (it is short)")
    ap.add_argument("--max-load", type=float,
                    help="first wait (at most 10 minutes) for the 1-minute load to fall below it")
    a = ap.parse_args()
    a.plain = a.plain or os.path.join(os.path.dirname(a.agent), "sm-bench-plain")
    tools = ("iperf3", "sockperf") if a.only != "plain" else ()
    for tool in tools:
        if not shutil.which(tool):
            sys.exit(f"bench: {tool} is not installed (make deps installs it)")
    if not os.access(a.agent, os.X_OK):
        sys.exit(f"bench: {a.agent} is not built (make build)")
    if a.only != "tools" and not os.access(a.plain, os.X_OK):
        sys.exit(f"bench: {a.plain} is not built (cmake -DSM_BENCH=ON)")
    secs = a.seconds
    isecs = max(1, int(round(secs)))  # iperf3 and sockperf take whole seconds

    if (os.cpu_count() or 1) < 2:
        sys.exit("bench: needs 2 CPUs (sender and receiver are pinned apart)")
    if a.max_load is not None:
        wait_for_load(a.max_load)
    length = f"of {secs:g} s each" if a.only != "plain" else "of a fixed byte count each"
    print(f"sockmatrix benchmarks, {a.reps} interleaved repetitions {length}, loopback, "
          f"sender/client on CPU {CLIENT_CPU}, receiver/server on CPU {SERVER_CPU}")
    print(f"host: {os.uname().nodename}, kernel {os.uname().release}, {os.cpu_count()} cores, "
          f"load average {load_text()}")
    if a.only != "plain":
        against_tools(a, isecs)
    if a.only != "tools":
        against_plain(a)
    print(f"\nload average at the end {load_text()} (the benchmark's own runs count in it)")


def load_text():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def wait_for_load(limit, step=30, most=600):
    """On a shared machine, start when the others' load has settled, within a bound."""
    waited = 0
    while os.getloadavg()[0] >= limit and waited < most:
        print(f"  load average {load_text()}: waiting for the 1-minute figure to fall below "
              f"{limit:g} ({waited} s of at most {most} s)", file=sys.stderr, flush=True)
        time.sleep(step)
        waited += step
    if os.getloadavg()[0] >= limit:
        print(f"bench: the 1-minute load is still {os.getloadavg()[0]:.2f} after {most} s: "
              f"measuring anyway, expect noise", file=sys.stderr)


def col(xs, k):
    return [x[k] for x in xs]


def against_plain(a):
    """sockmatrix --once --bytes N beside sm-bench-plain, pair by pair: the stream workload's
    overhead over the least code that does the same (checking every byte), for bulk UDS
    writes and 128-byte writes on both transports.

    Each pair runs three jobs back to back, the plain loop in the middle: sockmatrix, plain,
    plain again (or the reverse, every other pair). The second plain run is the yardstick
    measured against itself, exactly as exposed to drift as sockmatrix is: its ratio is the
    noise floor of the run, and a sockmatrix/plain ratio inside it says nothing. --no-check
    runs of the plain loop are printed for reference (what the check itself costs). The
    128 KiB case takes a fraction of a second a job and swings most with the host (see
    docs/benchmarks.md): it runs --bulk-pairs pairs per repetition."""
    big, small = size_arg(a.bytes), size_arg(a.small_bytes)
    cases = [("unix", "128K", big), ("tcp", "128", small), ("unix", "128", small)]
    pairs = {cases[0]: max(1, a.bulk_pairs)}
    ours_r = {c: [] for c in cases}
    plain_r = {c: [] for c in cases}
    again_r = {c: [] for c in cases}
    bare_r = {c: [] for c in cases}
    for i in range(a.reps):
        print(f"  plain repetition {i + 1}/{a.reps} ...", file=sys.stderr, flush=True)
        for c in cases:
            tr, size, n = c
            for _ in range(pairs.get(c, 1)):
                runs = [lambda: ours_r[c].append(ours_bytes(a.agent, n, "--transport", tr,
                                                            "--msg-size", size)),
                        lambda: plain_r[c].append(plain(a.plain, n, tr, size)),
                        lambda: again_r[c].append(plain(a.plain, n, tr, size))]
                # Reverse every other pair, so a drift in the machine's load favours neither.
                for f in (runs if len(ours_r[c]) % 2 == 0 else runs[::-1]):
                    f()
                bare_r[c].append(plain(a.plain, n, tr, size, check=False))
    for c in cases:
        tr, size, n = c
        mine = col(ours_r[c], "throughput_MBps")
        base = col(plain_r[c], "throughput_MBps")
        again = col(again_r[c], "throughput_MBps")
        report(f"stream, {tr}, {size}-byte writes, {n >> 20} MiB: sockmatrix vs the plain C loop",
               [("sockmatrix", "throughput", "MB/s", mine),
                ("plain loop, checking", "throughput", "MB/s", base),
                ("plain loop, checking, again", "throughput", "MB/s", again),
                ("plain loop, no check", "throughput", "MB/s",
                 col(bare_r[c], "throughput_MBps"))],
               [("throughput sockmatrix/plain", mine, base, "higher"),
                ("plain again/plain (noise floor)", again, base, "the yardstick against itself")])


def against_tools(a, isecs):
    iperf_port, sp_port = free_port(), free_port()
    iperf_srv = Server(["iperf3", "-s", "-p", str(iperf_port)], iperf_port)
    sp_srv = Server(["taskset", "-c", str(SERVER_CPU), "sockperf", "server", "--tcp", "-i",
                     "127.0.0.1", "-p", str(sp_port)], sp_port)
    try:
        big = {"ours": [], "iperf3": []}
        small = {"tcp": [], "unix": [], "iperf3": []}
        rr = {"ours14": [], "ours1": [], "sockperf": []}
        for i in range(a.reps):
            print(f"  repetition {i + 1}/{a.reps} ...", file=sys.stderr, flush=True)
            big["ours"].append(ours(a.agent, isecs, "--transport", "tcp", "--msg-size", "128K"))
            big["iperf3"].append(iperf3(iperf_port, isecs, 131072))
            small["tcp"].append(ours(a.agent, isecs, "--transport", "tcp", "--msg-size", "128"))
            small["unix"].append(ours(a.agent, isecs, "--transport", "unix", "--msg-size", "128"))
            small["iperf3"].append(iperf3(iperf_port, isecs, 128))
            rr["ours14"].append(ours(a.agent, isecs, "--workload", "rr", "--transport", "tcp",
                                     "--req-size", "14", "--resp-size", "14"))
            rr["ours1"].append(ours(a.agent, isecs, "--workload", "rr", "--transport", "tcp"))
            rr["sockperf"].append(sockperf(sp_port, isecs, 14))
    finally:
        iperf_srv.stop()
        sp_srv.stop()

    report("stream, TCP, 128 KiB writes: sockmatrix vs iperf3 -l 128K",
           [("sockmatrix", "throughput", "MB/s", col(big["ours"], "throughput_MBps")),
            ("iperf3", "throughput", "MB/s", col(big["iperf3"], "throughput_MBps")),
            ("sockmatrix (both ends)", "cpu", "s/GB", col(big["ours"], "cpu_s_per_GB")),
            ("iperf3 (both ends)", "cpu", "s/GB", col(big["iperf3"], "cpu_s_per_GB"))],
           [("throughput sockmatrix/iperf3", col(big["ours"], "throughput_MBps"),
             col(big["iperf3"], "throughput_MBps"), "higher"),
            ("cpu s/GB sockmatrix/iperf3", col(big["ours"], "cpu_s_per_GB"),
             col(big["iperf3"], "cpu_s_per_GB"), "lower")])
    report("stream, 128-byte writes: TCP and Unix (and iperf3 -l 128 over TCP)",
           [("sockmatrix tcp", "throughput", "MB/s", col(small["tcp"], "throughput_MBps")),
            ("sockmatrix unix", "throughput", "MB/s", col(small["unix"], "throughput_MBps")),
            ("iperf3 tcp", "throughput", "MB/s", col(small["iperf3"], "throughput_MBps")),
            ("sockmatrix tcp", "cpu", "s/GB", col(small["tcp"], "cpu_s_per_GB")),
            ("sockmatrix unix", "cpu", "s/GB", col(small["unix"], "cpu_s_per_GB")),
            ("iperf3 tcp", "cpu", "s/GB", col(small["iperf3"], "cpu_s_per_GB"))],
           [("throughput tcp/unix (sockmatrix)", col(small["tcp"], "throughput_MBps"),
             col(small["unix"], "throughput_MBps"), "-"),
            ("throughput sockmatrix/iperf3 (tcp)", col(small["tcp"], "throughput_MBps"),
             col(small["iperf3"], "throughput_MBps"), "higher")])
    report("rr, TCP: sockmatrix vs sockperf ping-pong --full-rtt (14-byte messages, "
           "sockperf's minimum)",
           [("sockmatrix 14 B", "rtt p50", "us", col(rr["ours14"], "rtt_p50_us")),
            ("sockperf 14 B", "rtt p50", "us", col(rr["sockperf"], "rtt_p50_us")),
            ("sockmatrix 1 B", "rtt p50", "us", col(rr["ours1"], "rtt_p50_us")),
            ("sockmatrix 14 B", "round trips", "1/s", col(rr["ours14"], "rt_per_s")),
            ("sockperf 14 B", "round trips", "1/s", col(rr["sockperf"], "rt_per_s")),
            ("sockmatrix 1 B", "round trips", "1/s", col(rr["ours1"], "rt_per_s"))],
           [("rtt p50 sockmatrix/sockperf (14 B)", col(rr["ours14"], "rtt_p50_us"),
             col(rr["sockperf"], "rtt_p50_us"), "lower"),
            ("round trips/s sockmatrix/sockperf (14 B)", col(rr["ours14"], "rt_per_s"),
             col(rr["sockperf"], "rt_per_s"), "higher")])


if __name__ == "__main__":
    main()
