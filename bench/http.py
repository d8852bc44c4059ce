#!/usr/bin/env python3
"""sockmatrix http benchmark: the three libcurl client models beside the curl tool, and the
built-in source beside nginx, interleaved in one session on loopback. A 50 MiB file from nginx
(started here with its own config, stopped by PID). Prints every figure and the median of the
paired ratios, one pair per repetition. Never a test: nothing here passes or fails on speed.

    python3 bench/http.py --agent build/bin/sockmatrix-agent [--reps 5]

How each side is counted, so the ratios compare like with like:
- sockmatrix: one job of `--repeat 6` transfers over one kept-alive connection; throughput and
  CPU per GB cover transfers 2-6 (the first is reported apart), CPU is getrusage(RUSAGE_THREAD)
  of the client model's threads.
- curl: `curl -o /dev/null URL x6` (one process, one kept-alive connection), throughput is the
  median of curl's own speed_download of transfers 2-6; CPU per GB is the difference between
  that process's getrusage and the one of a one-URL run, over 5 bodies: the 5 transfers alone,
  without process start-up, as for sockmatrix.
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import CLIENT_CPU, SERVER_CPU, free_port, med, report, run  # noqa: E402

SIZE = 50 * 1024 * 1024
REPEAT = 6
BUFFER = "100K"
MODELS = ("thread", "pool", "multi")


class Nginx:
    def __init__(self, agent):
        self.dir = tempfile.mkdtemp(prefix="sm-bench-nginx-")
        os.chmod(self.dir, 0o755)  # a root master's workers run as nobody
        www = os.path.join(self.dir, "www")
        os.mkdir(www)
        os.chmod(www, 0o755)
        path = os.path.join(www, "f50m")
        with open(path, "wb") as f:
            subprocess.run([agent, "--write-pattern", str(SIZE)], stdout=f, check=True,
                           timeout=60)
        os.chmod(path, 0o644)
        self.port = free_port()
        d = self.dir
        temp = "".join(f"  {k}_temp_path {d}/{k};\n" for k in
                       ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        conf = os.path.join(d, "nginx.conf")
        with open(conf, "w") as f:
            f.write(f"worker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n"
                    f"events {{ worker_connections 64; }}\nhttp {{\n{temp}  access_log off;\n"
                    f"  sendfile on;\n  keepalive_requests 100000;\n"
                    f"  server {{ listen 127.0.0.1:{self.port}; root {www}; }}\n}}\n")
        # The server on its CPU, as iperf3 -A and sockperf under taskset are in run.py.
        self.proc = subprocess.Popen(["taskset", "-c", str(SERVER_CPU), shutil.which("nginx") or
                                      "/usr/sbin/nginx", "-p", d, "-c", conf, "-e",
                                      f"{d}/error.log", "-g", "daemon off;"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    break
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.stop()
                raise RuntimeError("nginx did not start")
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{self.port}/f50m"

    def worker_cpu_s(self):
        """utime+stime of nginx's worker, from /proc (clock ticks: 10 ms steps)."""
        tick = os.sysconf("SC_CLK_TCK")
        total = 0
        for pid in subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True,
                                  text=True).stdout.split():
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        return total / tick

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def ours(agent, *args):
    out = run([agent, "--once", "--quiet", "--format", "json", "--workload", "http",
               "--repetitions", "1", "--warmup", "0", "--affinity", f"{CLIENT_CPU},{SERVER_CPU}",
               "--repeat", str(REPEAT), "--buffer-size", BUFFER, *args], 300)
    c = json.loads(out)["cells"][0]
    if c["failures"]:
        raise RuntimeError(f"sockmatrix job failed: {c['failures'][0]['reason']}")
    return c["samples"][0]


def curl_once(url, n):
    """Runs curl on CPU 0 for n transfers; (per-transfer speeds in MB/s, user+sys seconds)."""
    cmd = ["taskset", "-c", str(CLIENT_CPU), "curl", "-s", "-w", "%{speed_download}\\n"]
    for _ in range(n):
        cmd += ["-o", "/dev/null", url]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"curl exited {p.returncode}")
    speeds = [float(x) / 1e6 for x in out.split()]
    return speeds, ru.ru_utime + ru.ru_stime, wall


def curl(url):
    speeds, cpu_n, wall_n = curl_once(url, REPEAT)
    _, cpu_1, _ = curl_once(url, 1)
    rest = (REPEAT - 1) * SIZE
    return {"throughput_MBps": med(speeds[1:]), "cpu_s_per_GB": (cpu_n - cpu_1) / (rest / 1e9),
            "first_MBps": speeds[0], "process_MBps": REPEAT * SIZE / wall_n / 1e6}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agent", default="build/bin/sockmatrix-agent")
    ap.add_argument("--reps", type=int, default=5, help="interleaved repetitions (>= 5)")
    a = ap.parse_args()
    for tool in ("curl", "taskset", "pgrep"):
        if not shutil.which(tool):
            sys.exit(f"bench: {tool} is not installed (make deps installs it)")
    if not (shutil.which("nginx") or os.path.exists("/usr/sbin/nginx")):
        sys.exit("bench: nginx is not installed (make deps installs nginx-light)")
    if not os.access(a.agent, os.X_OK):
        sys.exit(f"bench: {a.agent} is not built (make build)")
    if (os.cpu_count() or 1) < 2:
        sys.exit("bench: needs 2 CPUs (client and server are pinned apart)")
    print(f"sockmatrix http benchmark, {a.reps} interleaved repetitions, a {SIZE} B body "
          f"x{REPEAT} per job over one connection, libcurl buffer {BUFFER}, loopback, client on "
          f"CPU {CLIENT_CPU}, server on CPU {SERVER_CPU}")
    print(f"host: {os.uname().nodename}, kernel {os.uname().release}, {os.cpu_count()} cores, "
          f"{subprocess.run(['curl', '--version'], capture_output=True, text=True).stdout.split(chr(10))[0]}")
    ng = Nginx(a.agent)
    try:
        res = {m: [] for m in MODELS}
        res["curl"] = []
        src = {"builtin": [], "nginx": [], "builtin_cpu": [], "nginx_cpu": []}
        for i in range(a.reps):
            print(f"  repetition {i + 1}/{a.reps} ...", file=sys.stderr, flush=True)
            for m in MODELS:
                res[m].append(ours(a.agent, "--client", m, "--url", ng.url))
            res["curl"].append(curl(ng.url))
            # The same client against the two servers; each server's CPU per GB it served.
            s = ours(a.agent, "--client", "thread", "--bytes", str(SIZE))
            src["builtin"].append(s["throughput_MBps"])
            src["builtin_cpu"].append((s["rx_user_s"] + s["rx_sys_s"]) / (REPEAT * SIZE / 1e9))
            before = ng.worker_cpu_s()
            # --verify: the client checks every byte in both runs, so only the server differs.
            s = ours(a.agent, "--client", "thread", "--url", ng.url, "--verify")
            src["nginx"].append(s["throughput_MBps"])
            src["nginx_cpu"].append((ng.worker_cpu_s() - before) / (REPEAT * SIZE / 1e9))
    finally:
        ng.stop()

    def col(xs, k):
        return [x[k] for x in xs]

    rows = []
    for who in (*MODELS, "curl"):
        rows.append((f"{'sockmatrix ' if who != 'curl' else ''}{who}", "throughput", "MB/s",
                     col(res[who], "throughput_MBps")))
    for who in (*MODELS, "curl"):
        rows.append((f"{'sockmatrix ' if who != 'curl' else ''}{who} (client)", "cpu", "s/GB",
                     col(res[who], "cpu_s_per_GB")))
    pairs = []
    for m in MODELS:
        pairs.append((f"throughput {m}/curl", col(res[m], "throughput_MBps"),
                      col(res["curl"], "throughput_MBps"), "higher"))
        pairs.append((f"cpu s/GB {m}/curl", col(res[m], "cpu_s_per_GB"),
                      col(res["curl"], "cpu_s_per_GB"), "lower"))
    # The whole curl process, start-up and first transfer included: what `time curl` shows.
    rows.append(("curl (whole process, 6 bodies)", "throughput", "MB/s",
                 col(res["curl"], "process_MBps")))
    best = max(MODELS, key=lambda m: med(col(res[m], "throughput_MBps")))
    pairs.append((f"throughput {best}/curl whole process", col(res[best], "throughput_MBps"),
                  col(res["curl"], "process_MBps"), "higher"))
    report("http GET of 50 MiB from nginx: client models vs curl -o /dev/null", rows, pairs)
    print(f"  best model by median throughput: {best}")
    report("server: the built-in source vs nginx, the thread model fetching and verifying",
           [("built-in source", "throughput", "MB/s", src["builtin"]),
            ("nginx", "throughput", "MB/s", src["nginx"]),
            ("built-in source (server)", "cpu", "s/GB", src["builtin_cpu"]),
            ("nginx worker (server, 10 ms ticks)", "cpu", "s/GB", src["nginx_cpu"])],
           [("throughput built-in/nginx", src["builtin"], src["nginx"], "higher"),
            ("server cpu s/GB built-in/nginx", src["builtin_cpu"], src["nginx_cpu"], "lower")])


if __name__ == "__main__":
    main()
