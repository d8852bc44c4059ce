#!/usr/bin/env bash
# The main job on one machine: a 3-host lab (network namespaces, h2's TCP slowed to an eighth of
# what it measured unshaped), a coordinator and an agent per host, the 2010 TCP-vs-Unix-socket
# test and the 2009 libcurl client-model test run across them, and the tables that compare the
# hosts. `demo.sh down` stops everything it started; `demo.sh next` says what to do after it.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BIN=${SM_BIN_DIR:-$ROOT/build/bin}
STATE=${SM_DEMO_DIR:-$ROOT/build/demo}
PREFIX=sm-demo-
SUBNET=10.213.7
# h2's loopback TCP: 8 times slower than lab.sh measures it unshaped on the 2010 test, so that
# h2 stands apart on a machine 5 times slower or faster than this one (a fixed 400mbit did not
# slow it at all on a slower machine). SM_DEMO_SLOW=400mbit gives the fixed rate.
SLOW=${SM_DEMO_SLOW:-x8}
HTTP=127.0.0.1:${SM_DEMO_HTTP_PORT:-8080}
BUS_PORT=${SM_DEMO_BUS_PORT:-7100}
HOSTS=(h1 h2 h3)

say() { printf 'demo: %s\n' "$*" >&2; }

# The jobs the demo runs, one at a time (the hosts share this machine): the 2010 test's 4
# variants x (10 + 2 warm-up) repetitions and the 2009 test's 3 clients x (5 + 1), per host.
SEED_JOBS=$((${#HOSTS[@]} * 4 * (10 + 2)))
HTTP_JOBS=$((${#HOSTS[@]} * 3 * (5 + 1)))

# What the demo will take, said before anything starts: the last demo's time on this machine
# when there was one (written at the end), else the one measurement there is: a slow 2-core lab
# took 9 minutes. A faster machine takes less; how much less is not known until it has run.
estimate() {
  local last
  local xp=""
  [[ $(id -u) -eq 0 ]] && xp=", then an experiment of at most 42 on h2"
  say "$SEED_JOBS + $HTTP_JOBS jobs, one at a time, after the build and the lab's set-up$xp"
  if last=$(cat "$STATE/last-duration" 2>/dev/null) && [[ $last =~ ^[0-9]+$ ]]; then
    say "estimated time: about $((last / 60))m$(printf '%02d' $((last % 60)))s (the last demo on this machine)"
  else
    say "estimated time: up to about 10 minutes on a 2-core machine (a slow 2-core lab took 9;"
    say "this machine's own time is kept for next time)"
  fi
}

# What to do after the demo: the commands of the README's "After the demo", which
# tests/integration/test_readme.py runs as the README gives them and checks against these.
# The command line is named as it can be typed from where make ran (build/bin/sockmatrix from
# the source folder), and told where the coordinator is when it is not at its default address.
AFTER=(
  "agents                   # the three hosts, online, with their facts"
  "runs                     # the demo's runs and their state"
  "show 1                   # run 1: when it ran, failed jobs, flags per cell"
  "anomalies 1              # who stands apart from the fleet, with the evidence"
  "hosts diff h1 h2         # the settings on which h2 differs from h1"
  "export 2 --format md     # run 2's comparison table, as Markdown"
  "tests 1                  # run 1's tests, each with a short id for --test"
  "trends --host h2 --test 'stream tcp lines'   # h2's TCP cell across runs"
)
next_steps() {
  local cli=$BIN/sockmatrix
  [[ $cli == "$PWD"/* ]] && cli=${cli#"$PWD"/}
  [[ $HTTP == 127.0.0.1:8080 ]] || cli="$cli --coordinator http://$HTTP"
  local odd="every host's latest verdict"
  [[ $(id -u) -eq 0 ]] && odd="h2 flagged; its name opens its page, with why"
  say "the dashboard: http://$HTTP/ (Fleet: $odd; History, then run 1:"
  say "its verdict, anomalies and plots; Trends: every host against every test)"
  say "the command line is $cli (not on your PATH; --help lists every command):"
  # Without the "demo: " mark, so that each line can be copied as it is.
  local c
  for c in "${AFTER[@]}"; do printf '  %s %s\n' "$cli" "$c" >&2; done
  say "stop everything with: make demo-down"
}

if [[ ${1:-} == estimate ]]; then
  estimate
  exit 0
fi

if [[ ${1:-} == next ]]; then
  next_steps
  exit 0
fi

stop_all() {
  # Only the processes this script started, by the PIDs it wrote down.
  for f in "$STATE"/*.pid; do
    [[ -e $f ]] || continue
    pid=$(cat "$f")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$f"
  done
  if [[ $(id -u) -eq 0 ]]; then bash "$HERE/lab.sh" down --prefix "$PREFIX" >/dev/null 2>&1 || true; fi
}

if [[ ${1:-} == down ]]; then
  stop_all
  say "stopped; the store and logs stay in $STATE"
  exit 0
fi

START=$SECONDS
[[ ${SM_DEMO_ESTIMATED:-} == 1 ]] || estimate
stop_all
mkdir -p "$STATE"
rm -rf "$STATE"/spool-* "$STATE/coordinator.db"*
[[ -e $STATE/fleet.key ]] || "$BIN/sockmatrix-coordinator" keygen "$STATE/fleet.key" >/dev/null

declare -A ADDR NETNS
POLICY=()
if [[ $(id -u) -eq 0 ]] && ip netns list >/dev/null 2>&1; then
  say "lab: 3 hosts in network namespaces; measuring h2's loopback TCP before slowing it ($SLOW)"
  out=$(bash "$HERE/lab.sh" up 3 --prefix "$PREFIX" --subnet "$SUBNET" --slow-tcp "h2:$SLOW" \
    --agent "$BIN/sockmatrix-agent")
  BUS_ADDR=$SUBNET.1
  for i in 1 2 3; do ADDR[h$i]=$SUBNET.$((10 + i)); NETNS[h$i]=${PREFIX}h$i; done
  while read -r line; do
    if [[ $line != *"lab '"* ]]; then say "${line#lab.sh: }"; fi   # what it measured and set
  done <<<"$out"
else
  BUS_ADDR=127.0.0.1
  for h in "${HOSTS[@]}"; do ADDR[$h]=127.0.0.1; NETNS[$h]=""; done
  # Every host's data address is loopback then, which the coordinator and agents refuse unless
  # told otherwise (the lab's 10.213.7.x are private addresses: allowed as they are).
  POLICY=(--data-addr-allow loopback)
  say "not root, so no network namespaces: three agents on this machine's loopback instead,"
  say "and no host is made slow (run as root for the lab with h2's TCP slowed)"
fi

exec 3<> <(:)
"$BIN/sockmatrix-coordinator" --listen "tcp://$BUS_ADDR:$BUS_PORT" --http "$HTTP" \
  --db "$STATE/coordinator.db" --key-file "$STATE/fleet.key" --hold-ms 2000 --ready-fd 3 \
  "${POLICY[@]}" >/dev/null 2>"$STATE/coordinator.log" &
echo $! >"$STATE/coordinator.pid"
read -r -t 10 ready <&3 || { say "the coordinator did not start: $(tail -3 "$STATE/coordinator.log")"; stop_all; exit 1; }
exec 3<&-

# The lab's hosts share this machine's CPUs: every agent pins its jobs' two ends alike, so that
# where they happen to run is not what tells one host from another.
PIN=(); [[ $(nproc) -ge 2 ]] && PIN=(--affinity 0,1)
for h in "${HOSTS[@]}"; do
  # Each agent has its own key, derived from the fleet key; the fleet key stays with the
  # coordinator.
  [[ -e $STATE/agent-$h.key ]] ||
    "$BIN/sockmatrix-coordinator" keygen --agent "$h" --key-file "$STATE/fleet.key" "$STATE/agent-$h.key" >/dev/null
  cmd=("$BIN/sockmatrix-agent" --coordinator "tcp://$BUS_ADDR:$BUS_PORT" --key-file "$STATE/agent-$h.key"
       --name "$h" --data-addr "${ADDR[$h]}" --spool-dir "$STATE/spool-$h" --sock-dir "$STATE" "${PIN[@]}"
       "${POLICY[@]}")
  # In the lab each host is a namespace of its own: its agent may change its lo qdisc for an
  # experiment (sockmatrix explain, at the end), and puts it back after each treated job.
  if [[ -n ${NETNS[$h]} ]]; then
    cmd=(ip netns exec "${NETNS[$h]}" "${cmd[@]}" --allow-experiment qdisc)
  fi
  "${cmd[@]}" >/dev/null 2>"$STATE/agent-$h.log" &
  echo $! >"$STATE/agent-$h.pid"
done

CLI=("$BIN/sockmatrix" --coordinator "http://$HTTP")
for _ in $(seq 100); do
  n=$("${CLI[@]}" agents 2>/dev/null | grep -c ' online' || true)
  [[ $n -ge 3 ]] && break
  sleep 0.1
done
"${CLI[@]}" agents
# The seed preset with 10 repetitions. The lab's hosts share this machine's CPUs, and jobs side
# by side would measure each other: the coordinator sees that they report one boot id and runs
# one job at a time by itself, and says so ("jobs: one at a time: ..."). On a real fleet the
# hosts run in parallel.
cat >"$STATE/seed-one-at-a-time.json" <<'SPEC'
{"name": "seed-tcp-unix-lab", "hosts": "all", "repetitions": 10, "warmup": 2,
 "tests": [{"workload": "stream", "scope": "local", "transport": ["tcp", "unix"],
            "framing": "lines", "msg_size": 128, "count": 8192, "nodelay": [false, true]}]}
SPEC
say "running the 2010 test (8192 lines of 128 bytes, TCP with and without TCP_NODELAY against"
say "a Unix socket) on every host, one job at a time, repetitions interleaved:"
rc=0
"${CLI[@]}" run --spec "$STATE/seed-one-at-a-time.json" --wait --format table || rc=$?
# The 2009 test, smaller: each host's agent fetches from its own built-in source with the three
# libcurl client models, alternated; the table shows them side by side with the user-CPU ratio.
# 1 MiB bodies: h2's loopback is shaped for the 2010 test, whose rate is a tenth of a bulk
# transfer's, so h2 fetches at a hundredth of the others' speed or less (3 to 9 MB/s here, as
# loaded as the machine was while lab.sh measured it). With the 2009 test's 16 MiB bodies its 18
# jobs would take 6 to 20 minutes (and could pass the job's time limit); these take 20 to 70 s.
cat >"$STATE/http-one-at-a-time.json" <<'SPEC'
{"name": "seed-http-lab", "hosts": "all", "repetitions": 5, "warmup": 1,
 "tests": [{"workload": "http", "scope": "local", "client": ["thread", "pool", "multi"],
            "bytes": 1048576, "repeat": 11}]}
SPEC
# Why h2 stands apart: the settings in which it differs from the others, from the fingerprints
# the agents sent (the flags above already name the most relevant difference).
say ""
say "what sets h2 apart from h1 (each agent's fingerprint: sysctls, qdiscs, offloads, CPUs...):"
"${CLI[@]}" hosts diff h1 h2 || rc=$?
say ""
say "running the 2009 test (1 MiB bodies over one kept-alive connection, libcurl on a new"
say "thread per transfer, on reused threads and in one event loop) on every host:"
"${CLI[@]}" run --spec "$STATE/http-one-at-a-time.json" --wait --format table || rc=$?
# Proving the cause: h2 re-measured with each suspect given the fleet's value (here its lo qdisc
# without the tbf), beside untreated controls, and the share of the gap each treatment closes.
if [[ $(id -u) -eq 0 && -n ${NETNS[h2]} ]]; then
  say ""
  say "why is h2 slow? re-measuring it with each difference given the fleet's value:"
  "${CLI[@]}" explain 1 --host h2 --test 'stream tcp lines 128 B x 8192' || rc=$?
fi
echo $((SECONDS - START)) >"$STATE/last-duration"
say "took $((SECONDS - START)) s. What next:"
next_steps
exit "$rc"
