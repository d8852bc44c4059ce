#!/usr/bin/env bash
# deploy/lab/lab.sh - an n-host sockmatrix lab on one machine (docs/demo.md, "The lab"):
# one network namespace per host, veth pairs into a bridge in the root namespace,
# and optionally one anomalous host (tc tbf on its loopback or on its link).
set -euo pipefail

PROG=lab.sh
PREFIX=${SM_LAB_PREFIX:-sm-}
SUBNET=10.213.0
STATE_DIR=${XDG_RUNTIME_DIR:-/run}
FORCE=0
JSON=0
N=
HOST=
SLOW_TCP=()
SLOW_LINK=()
EXEC_ARGS=()
AGENT=

usage() {
  cat <<'EOF'
usage: lab.sh up N [--slow-tcp HOST:RATE] [--slow-link HOST:RATE] [--subnet 10.213.X] [--force]
                   [--agent PATH]
       lab.sh down
       lab.sh status [--json]
       lab.sh exec HOST CMD...
  every command also takes [--prefix P] [--state-dir DIR]

Builds (up) or removes (down) a lab of N hosts (1..32) in network namespaces P h1..P hN
(default prefix "sm-", or $SM_LAB_PREFIX; at most 12 characters of [A-Za-z0-9_-]).
Each namespace has lo and eth0 up, eth0 = 10.213.X.(10+i)/24, and no default route: the
bridge P br0 = 10.213.X.1/24 in the root namespace (X defaults to 0) and the other hosts are
on-link, and nothing from a lab host can be routed beyond the machine.
  --slow-tcp hI:RATE   tc tbf on hI's loopback: slows its loopback TCP, not its Unix sockets
  --slow-link hI:RATE  tc tbf on hI's eth0 and on its root-side veth (both directions)
                       RATE is [0-9]+(k|m|g)?bit, e.g. 100mbit, or xF (F from 1 to 1000, e.g.
                       x4): F times slower than hI measured unshaped, so that the host is as
                       odd on a slow machine as on a fast one. Both options may repeat.
                       xF measures first, before any shaping (a second or two a host):
                         --slow-tcp   the 2010 test on hI's loopback (stream, 8192 lines of
                                      128 bytes, one write each, TCP; median of 9 runs) with
                                      sockmatrix-agent --once, or a python3 copy of it when
                                      there is no agent (slower per line, so it shapes
                                      harder); the rate is the bytes lo carried per run x 8 /
                                      the median's seconds
                         --slow-link  bulk TCP from hI to h1 (from h1 to h2; in a lab of
                                      one host, to the bridge address), python3, the
                                      median of 5 runs of 0.2 s; the rate is the bytes
                                      eth0 carried x 8 / the receiver's seconds
                       and sets tbf to that rate / F. What it measured and the rate it set
                       are printed, kept in the state file and shown by status.
  --agent PATH         up: the sockmatrix-agent for --slow-tcp hI:xF (default
                       $SM_BIN_DIR/sockmatrix-agent, else the repository's build/bin, else
                       PATH). Its probe pins its two ends to CPUs 0,1 on a machine with 2 or
                       more, as the lab's agents are pinned (--affinity 0,1).
  --force              up: remove an existing lab with the same prefix first
  --json               status: one JSON object (bridge, coordinator_addr, hosts; a shaped
                       host's slow_tcp / slow_link: rate_bit_s, and for xF the factor and
                       what was measured)
  --state-dir DIR      where the state file sockmatrix-lab-P.env lives
                       (default $XDG_RUNTIME_DIR, else /run)
exec runs CMD inside host HOST's namespace (ip netns exec). down removes every namespace,
veth and bridge with the prefix (ending processes still running in those namespaces) and
the state file; it is safe to repeat. Needs root.

This script does NOT start agents or the coordinator: start the coordinator in the root
namespace listening on tcp://10.213.X.1:7100 (`status` prints it) and each agent with
`lab.sh exec hI sockmatrix-agent ...`.
EOF
}

die() { echo "$PROG: $*" >&2; exit 1; }
bad() { echo "$PROG: $*" >&2; exit 2; }

# ---- arguments (parsing touches nothing) ----
[[ $# -gt 0 ]] || { usage >&2; exit 2; }
case $1 in
  -h | --help) usage; exit 0 ;;
  up | down | status | exec) CMD=$1; shift ;;
  -*) bad "unknown option: $1" ;;
  *) bad "unknown command: $1" ;;
esac
allowed=" --prefix --state-dir "
case $CMD in
  up) allowed+="--subnet --slow-tcp --slow-link --force --agent " ;;
  status) allowed+="--json " ;;
esac
while [[ $# -gt 0 ]]; do
  a=$1; shift; inline=0
  if [[ $a == --*=* ]]; then set -- "${a#*=}" "$@"; a=${a%%=*}; inline=1; fi
  case $a in
    -h | --help) usage; exit 0 ;;
    --) [[ $CMD == exec && -n $HOST ]] || bad "unexpected '--'"; EXEC_ARGS=("$@"); break ;;
    -*)
      [[ $allowed == *" $a "* ]] || bad "unknown option: $a"
      case $a in
        --force | --json) ((inline == 0)) || bad "option $a takes no value"
          if [[ $a == --force ]]; then FORCE=1; else JSON=1; fi ;;
        *) [[ $# -gt 0 ]] || bad "option $a needs a value"
          v=$1; shift
          case $a in
            --prefix) PREFIX=$v ;;
            --state-dir) STATE_DIR=$v ;;
            --subnet) SUBNET=$v ;;
            --slow-tcp) SLOW_TCP+=("$v") ;;
            --slow-link) SLOW_LINK+=("$v") ;;
            --agent) AGENT=$v ;;
          esac ;;
      esac ;;
    *)
      if [[ $CMD == up && -z $N ]]; then N=$a
      elif [[ $CMD == exec ]]; then HOST=$a; [[ ${1:-} != -- ]] || shift; EXEC_ARGS=("$@"); break
      else bad "unexpected argument: $a"; fi ;;
  esac
done

[[ $PREFIX =~ ^[A-Za-z0-9_-]{1,12}$ ]] ||
  bad "bad prefix '$PREFIX' (1-12 characters of [A-Za-z0-9_-], so interface names fit in 15)"
if ! [[ $SUBNET =~ ^10\.213\.([0-9]{1,3})$ ]] || ((10#${BASH_REMATCH[1]} > 255)); then
  bad "bad --subnet '$SUBNET' (expected 10.213.X with X 0..255)"
fi
SUBNET=10.213.$((10#${BASH_REMATCH[1]}))
if [[ $CMD == up ]]; then
  if ! [[ $N =~ ^[0-9]{1,3}$ ]] || ((10#$N < 1 || 10#$N > 32)); then bad "up needs N from 1 to 32 (got '$N')"; fi
  N=$((10#$N))
  for s in "${SLOW_TCP[@]}" "${SLOW_LINK[@]}"; do
    [[ $s =~ ^h([0-9]{1,3}):([0-9]+[kmg]?bit|x[0-9]{1,4}(\.[0-9]{1,3})?)$ ]] ||
      bad "bad HOST:RATE '$s' (e.g. h2:100mbit, or h2:x4 for 4 times slower than measured)"
    ((10#${BASH_REMATCH[1]} >= 1 && 10#${BASH_REMATCH[1]} <= N)) || bad "no host in '$s' (hosts are h1..h$N)"
    if [[ ${BASH_REMATCH[2]} == x* ]]; then
      awk -v f="${BASH_REMATCH[2]#x}" 'BEGIN { exit !(f + 0 >= 1 && f + 0 <= 1000) }' ||
        bad "bad factor in '$s' (x1 to x1000)"
    fi
  done
  [[ -z $AGENT || -x $AGENT ]] || bad "--agent '$AGENT' is not an executable"
fi
if [[ $CMD == exec ]]; then
  [[ $HOST =~ ^h[0-9]+$ && ${#EXEC_ARGS[@]} -gt 0 ]] || bad "usage: lab.sh exec HOST CMD... (HOST like h1)"
fi

# ---- from here on we touch the system ----
[[ $EUID -eq 0 ]] || die "must run as root (it creates network namespaces)"
ip netns list >/dev/null 2>&1 || die "'ip netns' does not work here"

BRIDGE=${PREFIX}br0
GW=$SUBNET.1
STATE_FILE=$STATE_DIR/sockmatrix-lab-$PREFIX.env

ns_list() { ip netns list | awk '{print $1}' | grep -E "^${PREFIX}h[0-9]+$" | sort -V || true; }
link_list() {
  ip -o link show | awk -F': ' '{sub(/@.*/, "", $2); print $2}' | grep -E "^${PREFIX}(br0|v[0-9]+)$" || true
}

do_down() {
  local ns l pids found=0
  for ns in $(ns_list); do
    found=1
    mapfile -t pids < <(ip netns pids "$ns" 2>/dev/null || true)
    if ((${#pids[@]})); then
      kill "${pids[@]}" 2>/dev/null || true; sleep 0.5
      mapfile -t pids < <(ip netns pids "$ns" 2>/dev/null || true)
      ((${#pids[@]} == 0)) || kill -9 "${pids[@]}" 2>/dev/null || true
    fi
    ip netns del "$ns" 2>/dev/null || true
  done
  for l in $(link_list); do found=1; ip link del "$l" 2>/dev/null || true; done
  [[ ! -e $STATE_FILE ]] || found=1
  rm -f "$STATE_FILE" "$STATE_FILE".tmp.*
  if ((found)); then echo "$PROG: lab '$PREFIX' removed"; else echo "$PROG: no lab '$PREFIX'; nothing to do"; fi
}

bits() { # RATE ([0-9]+[kmg]?bit, as tc reads it: k = 1000) -> bit/s
  local n=${1%bit} m=1
  case $n in *k) m=1000 ;; *m) m=1000000 ;; *g) m=1000000000 ;; esac
  echo $((${n%[kmg]} * m))
}

tbf() { # NETNS-or-"" DEV RATE
  # The bucket holds the biggest of: 4000 bytes; 2 frames of the device (lo's are 64 KiB,
  # which tbf would drop, not delay, when larger than the bucket); 1 ms of the rate (tbf sends
  # on a timer: a bucket smaller than that caps a fast rate far below what it says, measured
  # 0.62 of 2.8 Gbit/s with 4000 bytes on a veth). It bounds what passes unshaped at the start
  # of a transfer, 128 KiB of the 2010 test's 1 MiB on lo.
  local run=() mtu burst=4000 b; [[ -z $1 ]] || run=(ip netns exec "$1")
  mtu=$("${run[@]}" cat "/sys/class/net/$2/mtu")
  b=$(bits "$3")
  ((mtu * 2 <= burst)) || burst=$((mtu * 2))
  ((b / 8000 <= burst)) || burst=$((b / 8000))
  "${run[@]}" tc qdisc replace dev "$2" root tbf rate "$3" burst "$burst" latency 50ms
}

# The probes of xF, in python3 (the tcp one runs sockmatrix-agent when it has one). Each prints
# one line of key=value fields (state file and status) and one sentence (for the user).
PROBE_PY=$(cat <<'PY'
import json, os, socket, statistics, subprocess, sys, threading, time

# The 2010 test without sockmatrix-agent: profile_start, 8192 lines of 128 bytes + CRLF, one
# write each, profile_end; timed at the receiver from its first byte to its last.
LINES = r"""
import os, socket, sys, threading, time
cpus = [int(c) for c in sys.argv[1].split(",")] if sys.argv[1] else None
line = b"x" * 128 + b"\r\n"
def one():
    srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1); srv.settimeout(30)
    out = {}
    def rx():
        if cpus: os.sched_setaffinity(0, {cpus[1]})
        c, _ = srv.accept(); c.settimeout(30); t0 = None
        while True:
            d = c.recv(131072)
            if not d: break
            t0 = t0 or time.monotonic()
        out["s"] = time.monotonic() - t0; c.close()
    t = threading.Thread(target=rx); t.start()
    if cpus: os.sched_setaffinity(0, {cpus[0]})
    c = socket.create_connection(("127.0.0.1", srv.getsockname()[1]), timeout=30)
    c.sendall(b"profile_start\r\n")
    for _ in range(8192): c.sendall(line)
    c.sendall(b"profile_end\r\n"); c.close(); t.join(); srv.close()
    return out["s"]
print(" ".join(repr(one()) for _ in range(int(sys.argv[2]))))
"""
SEND = r"""
import socket, sys, time
c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
buf = b"x" * (1 << 20); end = time.monotonic() + float(sys.argv[3])
while time.monotonic() < end: c.sendall(buf)
c.close()
"""

def in_ns(ns, *cmd, timeout=120):
    return subprocess.run(["ip", "netns", "exec", ns, *cmd], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)

def tx_bytes(ns, dev):
    r = in_ns(ns, "cat", f"/sys/class/net/{dev}/statistics/tx_bytes", timeout=10)
    if r.returncode != 0:
        sys.exit(f"cannot read {dev}'s counters in {ns}: {r.stderr.strip()}")
    return int(r.stdout)

def mbit(x):
    return f"{x / 1e6:.1f} Mbit/s"

def tcp(ns, host, factor, agent, affinity, runs, warmup):
    before = tx_bytes(ns, "lo")
    if agent:
        cmd = [agent, "--once", "--workload", "stream", "--framing", "lines", "--msg-size", "128",
               "--count", "8192", "--transport", "tcp", "--repetitions", str(runs), "--warmup",
               str(warmup), "--format", "json", "--quiet"]
        if affinity:
            cmd += ["--affinity", affinity]
        r = in_ns(ns, *cmd)
        try:
            cell = json.loads(r.stdout)["cells"][0]
            secs = [x["seconds"] for x in cell["samples"]]
        except (ValueError, KeyError, IndexError):
            sys.exit(f"{agent} failed (exit {r.returncode}): {r.stderr.strip()[-300:]}")
        if cell["failures"] or len(secs) != runs:
            sys.exit(f"{agent}: a run of the probe failed: {cell['failures']}")
        probe = "sockmatrix-agent"
    else:
        r = in_ns(ns, sys.executable, "-c", LINES, affinity, str(runs + warmup))
        if r.returncode != 0:
            sys.exit(f"the python3 probe failed: {r.stderr.strip()[-300:]}")
        secs = [float(x) for x in r.stdout.split()][warmup:]
        probe = "python3"
    wire = (tx_bytes(ns, "lo") - before) // (runs + warmup)
    med = statistics.median(secs)
    measured = wire * 8 / med
    rate = max(int(measured / factor), 8000)
    print(f"rate_bit_s={rate} measured_bit_s={int(measured)} wire_bytes={wire} "
          f"seconds={med:.6f} runs={runs} probe={probe}")
    print(f"{host} loopback TCP measured {mbit(measured)} (the 2010 stream, 8192 lines of "
          f"128 B: {wire} bytes on lo per run in {med * 1e3:.3f} ms, the median of {runs} runs "
          f"of {probe}); x{factor:g} -> tbf rate {mbit(rate)}")

SINK = r"""
import socket, sys, time
s = socket.socket(); s.bind((sys.argv[1], 0)); s.listen(1); s.settimeout(20)
print(s.getsockname()[1], flush=True)
c, _ = s.accept(); c.settimeout(20); n = 0; t0 = None
while True:
    d = c.recv(1 << 20)
    if not d: break
    t0 = t0 or time.monotonic(); n += len(d)
print(n, time.monotonic() - (t0 or time.monotonic()), flush=True)
"""

def link_once(ns, peer_ns, addr, duration):
    """One bulk transfer from ns to addr (in peer_ns, or here when it is empty): (bytes on
    ns's eth0, seconds at the receiver from its first byte to its last)."""
    pre = ["ip", "netns", "exec", peer_ns] if peer_ns else []
    sink = subprocess.Popen(pre + [sys.executable, "-c", SINK, addr], stdout=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)
    try:
        port = sink.stdout.readline().strip()
        before = tx_bytes(ns, "eth0")
        r = in_ns(ns, sys.executable, "-c", SEND, addr, port, str(duration), timeout=30)
        out, _ = sink.communicate(timeout=30)
        if r.returncode != 0 or sink.returncode != 0 or not port:
            sys.exit(f"the link probe failed: {r.stderr.strip()[-300:]}")
        n, secs = out.split()
        if int(n) == 0 or float(secs) <= 0:
            sys.exit("the link probe moved no data")
    finally:
        if sink.poll() is None:
            sink.kill(); sink.wait()
    return tx_bytes(ns, "eth0") - before, float(secs)

def link(ns, host, factor, peer, peer_ns, addr, duration, runs):
    # To another lab host, as the pair workloads go: to the bridge's own address, whole labs
    # ran 2-3x faster than host to host (10-15 Gbit/s against 4.3 here), which a rate of a
    # quarter of that does not slow. One run now and then is as fast on any path, so the rate
    # is the median run's.
    one = sorted((link_once(ns, peer_ns, addr, duration) for _ in range(runs)),
                 key=lambda r: r[0] / r[1])
    wire, secs = one[len(one) // 2]
    measured = wire * 8 / secs
    rate = max(int(measured / factor), 8000)
    print(f"rate_bit_s={rate} measured_bit_s={int(measured)} wire_bytes={wire} "
          f"seconds={secs:.6f} runs={runs} probe=python3")
    print(f"{host} link measured {mbit(measured)} (bulk TCP {host} -> {peer} {addr}, the median "
          f"of {runs} runs of {duration:g} s: {wire} bytes on eth0 in {secs:.3f} s); "
          f"x{factor:g} -> tbf rate {mbit(rate)}")

kind, ns, host, factor = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
if kind == "tcp":
    tcp(ns, host, factor, sys.argv[5], sys.argv[6], int(sys.argv[7]), int(sys.argv[8]))
else:
    link(ns, host, factor, sys.argv[5], sys.argv[6], sys.argv[7], float(sys.argv[8]),
         int(sys.argv[9]))
PY
)

find_agent() { # the sockmatrix-agent for the tcp probe, or nothing (the python3 copy then)
  local c here; here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  if [[ -n $AGENT ]]; then echo "$AGENT"; return; fi
  for c in ${SM_BIN_DIR:+"$SM_BIN_DIR/sockmatrix-agent"} "$here/../../build/bin/sockmatrix-agent" \
    "$(command -v sockmatrix-agent || true)"; do
    [[ -z $c || ! -x $c ]] || { echo "$c"; return; }
  done
}

calibrate() { # tcp|link hI F -> sets CAL_FIELDS ("rate_bit_s=... measured_bit_s=...") and says what
  # --slow-tcp measures the 2010 stream, not a bulk transfer: one write per 130-byte line, it is
  # bounded by system calls, and its rate on lo (about 0.6 Gbit/s here) is a tenth of a bulk
  # transfer's, so a quarter of the bulk rate would not slow it at all. It is the most
  # shaping-sensitive workload the lab runs; the others, faster on the wire, slow down more.
  local out aff=""
  command -v python3 >/dev/null || die "$2:x$3 needs python3 (to measure $2 unshaped)"
  if [[ $1 == tcp ]]; then
    # Pinned as the lab's agents are (demo.sh and the tests give them --affinity 0,1).
    [[ $(nproc) -lt 2 ]] || aff=0,1
    out=$(python3 -c "$PROBE_PY" tcp "$PREFIX$2" "$2" "$3" "$(find_agent)" "$aff" 9 2) ||
      die "could not measure $2's loopback TCP"
  else
    # To h1 (h2 from h1); in a lab of one host, to the bridge's address.
    local peer=h1 peer_ns="" addr=$GW i=1
    [[ $2 != h1 ]] || i=2
    if ((N >= 2)); then peer=h$i peer_ns=$PREFIX$peer addr=$SUBNET.$((10 + i)); else peer=bridge; fi
    out=$(python3 -c "$PROBE_PY" link "$PREFIX$2" "$2" "$3" "$peer" "$peer_ns" "$addr" 0.2 5) ||
      die "could not measure $2's link"
  fi
  CAL_FIELDS="factor=$(awk -v f="$3" 'BEGIN { printf "%g", f }') ${out%%$'\n'*}"  # x08 -> 8
  echo "$PROG: ${out#*$'\n'}"
}

do_up() {
  if [[ -e $STATE_FILE || -n $(ns_list) || -n $(link_list) ]]; then
    ((FORCE)) || die "a lab with prefix '$PREFIX' exists; run 'lab.sh down --prefix $PREFIX' or pass --force"
    do_down >/dev/null
  fi
  [[ $(ip -4 -o addr show) != *" $GW/"* ]] || die "$GW is already in use on this machine; pick another --subnet"
  mkdir -p "$STATE_DIR"
  trap 'echo "$PROG: up failed; removing the partial lab" >&2; do_down >/dev/null' EXIT
  ip link add "$BRIDGE" type bridge
  ip addr add "$GW/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  local i ns s h kind v cal tmp=$STATE_FILE.tmp.$$
  {
    echo "SM_LAB_PREFIX=$PREFIX"; echo "SM_LAB_SUBNET=$SUBNET"; echo "SM_LAB_BRIDGE=$BRIDGE"
    echo "SM_LAB_COORDINATOR_ADDR=$GW"; echo "SM_LAB_COORDINATOR=tcp://$GW:7100"; echo "SM_LAB_N=$N"
  } >"$tmp"
  for ((i = 1; i <= N; i++)); do
    ns=${PREFIX}h$i
    ip netns add "$ns"
    ip link add "${PREFIX}v$i" type veth peer name "${PREFIX}p$i" netns "$ns"
    ip -n "$ns" link set "${PREFIX}p$i" name eth0
    ip -n "$ns" addr add "$SUBNET.$((10 + i))/24" dev eth0
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
    # Identical hosts: no TCP metrics carried from one connection to the next, which would
    # give each namespace a history of its own.
    ip netns exec "$ns" sysctl -qw net.ipv4.tcp_no_metrics_save=1
    ip link set "${PREFIX}v$i" master "$BRIDGE" up
    echo "SM_LAB_H${i}=\"h$i $ns $SUBNET.$((10 + i)) ${PREFIX}v$i\"" >>"$tmp"
  done
  # Every xF is measured before anything is shaped; then the qdiscs go on.
  local -a shape=() # "tcp|link hI RATE CALIBRATION"
  for s in "${SLOW_TCP[@]/#/tcp:}" "${SLOW_LINK[@]/#/link:}"; do
    IFS=: read -r kind h v <<<"$s"
    [[ -n $h ]] || continue
    if [[ $v == x* ]]; then
      calibrate "$kind" "$h" "${v#x}"
      v=${CAL_FIELDS#*rate_bit_s=}; v=${v%% *}bit
      shape+=("$kind $h $v $CAL_FIELDS")
    else
      echo "$PROG: $h $([[ $kind == tcp ]] && echo loopback TCP || echo link): tbf rate $v"
      shape+=("$kind $h $v")
    fi
  done
  for s in "${shape[@]}"; do
    read -r kind h v cal <<<"$s"
    if [[ $kind == tcp ]]; then
      tbf "$PREFIX$h" lo "$v"; echo "SM_LAB_SLOW_TCP_$h=$v" >>"$tmp"
    else
      tbf "$PREFIX$h" eth0 "$v"; tbf "" "${PREFIX}v${h#h}" "$v"; echo "SM_LAB_SLOW_LINK_$h=$v" >>"$tmp"
    fi
    [[ -z $cal ]] || echo "SM_LAB_SLOW_${kind^^}_${h}_CALIBRATION=\"$cal\"" >>"$tmp"
  done
  mv "$tmp" "$STATE_FILE"
  trap - EXIT
  echo "$PROG: lab '$PREFIX' up: $N hosts on $BRIDGE ($GW/24); coordinator address tcp://$GW:7100"
}

qdiscs() { # NETNS IDX -> "lo:tbf/10Mbit eth0:... veth:..." or "-"
  local out="" d q
  for d in lo eth0 veth; do
    if [[ $d == veth ]]; then q=$(tc qdisc show dev "${PREFIX}v$2" root 2>/dev/null || true)
    else q=$(ip netns exec "$1" tc qdisc show dev "$d" root 2>/dev/null || true); fi
    q=$(awk '$1 == "qdisc" && $2 != "noqueue" {r = ""; for (i = 3; i < NF; i++) if ($i == "rate") r = "/" $(i + 1)
      print $2 r; exit}' <<<"$q")
    [[ -z $q ]] || out+="$d:$q "
  done
  out=${out% }; echo "${out:--}"
}

shaping_json() { # RATE CALIBRATION -> {"rate":...,"rate_bit_s":...[,"factor":...,...]} or null
  [[ -n $1 ]] || { echo null; return; }
  local out f k v
  out=$(printf '{"rate":"%s","rate_bit_s":%s' "$1" "$(bits "$1")")
  for f in $2; do
    k=${f%%=*}; v=${f#*=}
    case $k in
      rate_bit_s) ;;
      probe) out+=",\"probe\":\"$v\"" ;;
      *) out+=",\"$k\":$v" ;;
    esac
  done
  echo "$out}"
}

shaping_text() { # hI tcp|link RATE CALIBRATION -> one line, or nothing
  [[ -n $3 ]] || return 0
  local what="loopback TCP" f k
  local -A c=()
  [[ $2 == tcp ]] || what=link
  for f in $4; do k=${f%%=*}; c[$k]=${f#*=}; done
  if [[ -z ${c[factor]:-} ]]; then echo "$1 $what: tbf rate $3"; return; fi
  awk -v h="$1" -v w="$what" -v r="${c[rate_bit_s]}" -v m="${c[measured_bit_s]}" -v f="${c[factor]}" \
    -v p="${c[probe]}" -v n="${c[runs]}" 'BEGIN {
      printf "%s %s: tbf rate %.1f Mbit/s = %.1f Mbit/s measured unshaped / %s (x%s; %s%s)\n",
        h, w, r / 1e6, m / 1e6, f, f, p,
        (w == "link" ? ", median of " n " runs of bulk TCP" : \
         n > 1 ? ", median of " n " runs of the 2010 stream" : "") }'
}

do_status() {
  [[ -r $STATE_FILE ]] || die "no lab with prefix '$PREFIX' (no $STATE_FILE)"
  local k v sub="" n=0 i name ns addr veth sep=""
  local -A st=()
  while IFS='=' read -r k v; do v=${v#\"}; st[$k]=${v%\"}; done <"$STATE_FILE"
  sub=${st[SM_LAB_SUBNET]}; n=${st[SM_LAB_N]}
  if ((JSON)); then
    printf '{"prefix":"%s","bridge":"%s","subnet":"%s.0/24","coordinator_addr":"%s","coordinator":"%s","hosts":[' \
      "$PREFIX" "${st[SM_LAB_BRIDGE]}" "$sub" "${st[SM_LAB_COORDINATOR_ADDR]}" "${st[SM_LAB_COORDINATOR]}"
    for ((i = 1; i <= n; i++)); do
      read -r name ns addr veth <<<"${st[SM_LAB_H$i]}"
      printf '%s{"name":"%s","netns":"%s","addr":"%s","veth":"%s","present":%s,"qdiscs":"%s","slow_tcp":%s,"slow_link":%s}' \
        "$sep" "$name" "$ns" "$addr" "$veth" "$([[ -e /run/netns/$ns ]] && echo true || echo false)" \
        "$(qdiscs "$ns" "$i")" \
        "$(shaping_json "${st[SM_LAB_SLOW_TCP_$name]:-}" "${st[SM_LAB_SLOW_TCP_${name}_CALIBRATION]:-}")" \
        "$(shaping_json "${st[SM_LAB_SLOW_LINK_$name]:-}" "${st[SM_LAB_SLOW_LINK_${name}_CALIBRATION]:-}")"
      sep=,
    done
    printf ']}\n'
    return
  fi
  echo "lab '$PREFIX': bridge ${st[SM_LAB_BRIDGE]} ${st[SM_LAB_COORDINATOR_ADDR]}/24, state $STATE_FILE"
  printf '%-5s %-16s %-14s %s\n' HOST NETNS ADDRESS QDISCS
  for ((i = 1; i <= n; i++)); do
    read -r name ns addr veth <<<"${st[SM_LAB_H$i]}"
    [[ -e /run/netns/$ns ]] || ns="$ns(missing)"
    printf '%-5s %-16s %-14s %s\n' "$name" "$ns" "$addr" "$(qdiscs "${ns%(missing)}" "$i")"
  done
  for ((i = 1; i <= n; i++)); do
    shaping_text "h$i" tcp "${st[SM_LAB_SLOW_TCP_h$i]:-}" "${st[SM_LAB_SLOW_TCP_h${i}_CALIBRATION]:-}"
    shaping_text "h$i" link "${st[SM_LAB_SLOW_LINK_h$i]:-}" "${st[SM_LAB_SLOW_LINK_h${i}_CALIBRATION]:-}"
  done
  echo "coordinator: ${st[SM_LAB_COORDINATOR]} (listen there in the root namespace)"
}

case $CMD in
  up) do_up ;;
  down) do_down ;;
  status) do_status ;;
  exec)
    ns=$PREFIX$HOST
    [[ -e /run/netns/$ns ]] || die "no host $HOST in lab '$PREFIX' (no namespace $ns)"
    exec ip netns exec "$ns" "${EXEC_ARGS[@]}" ;;
esac
