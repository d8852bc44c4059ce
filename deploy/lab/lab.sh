#!/usr/bin/env bash
# deploy/lab/lab.sh - an n-host sockmatrix lab on one machine (DESIGN.md section 14):
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

usage() {
  cat <<'EOF'
usage: lab.sh up N [--slow-tcp HOST:RATE] [--slow-link HOST:RATE] [--subnet 10.213.X] [--force]
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
                       RATE is [0-9]+(k|m|g)?bit, e.g. 100mbit; both options may repeat
  --force              up: remove an existing lab with the same prefix first
  --json               status: one JSON object (bridge, coordinator_addr, hosts)
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
  up) allowed+="--subnet --slow-tcp --slow-link --force " ;;
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
    [[ $s =~ ^h([0-9]{1,3}):([0-9]+[kmg]?bit)$ ]] || bad "bad HOST:RATE '$s' (e.g. h2:100mbit)"
    ((10#${BASH_REMATCH[1]} >= 1 && 10#${BASH_REMATCH[1]} <= N)) || bad "no host in '$s' (hosts are h1..h$N)"
  done
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

tbf() { # NETNS-or-"" DEV RATE; burst 32kbit, or 2*MTU where that is bigger (lo: 64 KiB frames,
  # which tbf would drop, not delay, when larger than the bucket)
  local run=() mtu burst=32kbit; [[ -z $1 ]] || run=(ip netns exec "$1")
  mtu=$("${run[@]}" cat "/sys/class/net/$2/mtu")
  ((mtu * 2 <= 4000)) || burst=$((mtu * 2))
  "${run[@]}" tc qdisc replace dev "$2" root tbf rate "$3" burst "$burst" latency 50ms
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
  local i ns s h tmp=$STATE_FILE.tmp.$$
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
  for s in "${SLOW_TCP[@]}"; do
    tbf "$PREFIX${s%%:*}" lo "${s#*:}"; echo "SM_LAB_SLOW_TCP_${s%%:*}=${s#*:}" >>"$tmp"
  done
  for s in "${SLOW_LINK[@]}"; do
    tbf "$PREFIX${s%%:*}" eth0 "${s#*:}"; h=${s%%:*}; tbf "" "${PREFIX}v${h#h}" "${s#*:}"
    echo "SM_LAB_SLOW_LINK_${s%%:*}=${s#*:}" >>"$tmp"
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
      printf '%s{"name":"%s","netns":"%s","addr":"%s","veth":"%s","present":%s,"qdiscs":"%s"}' "$sep" \
        "$name" "$ns" "$addr" "$veth" "$([[ -e /run/netns/$ns ]] && echo true || echo false)" "$(qdiscs "$ns" "$i")"
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
