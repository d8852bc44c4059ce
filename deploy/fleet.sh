#!/usr/bin/env bash
# deploy/fleet.sh - roll sockmatrix out to a lab fleet over plain ssh, for fleets without
# Ansible (deploy/ansible/ does the same). Idempotent: a second run changes nothing.
set -euo pipefail

PROG=fleet.sh
CHECK=0
INVENTORY=
KEY=
TOKEN=
PREV_KEY=
COORD=
DEBS=.
SSH_CONFIG=
SUDO=
PARALLEL=8
WAIT=60

usage() {
  cat <<'EOF'
usage: fleet.sh --inventory FILE --key FILE --coordinator tcp://ADDR:PORT [--check]
                [--debs DIR] [--token FILE] [--previous-key FILE] [--ssh-config FILE] [--sudo] [--parallel N]
                [--wait SECONDS]

Installs the sockmatrix packages on every host of the inventory over ssh, writes each host's
/etc/default settings, the keys (the fleet key on the coordinator, each agent's own key,
derived from it, on that agent; see docs/deploy.md) and the dashboard token, enables and
starts the services, and then asks the coordinator whether every agent has registered. Only what differs
is touched: a second run reports every item "ok" and changes nothing.

  --inventory FILE     the hosts (below)
  --key FILE           the fleet key (sockmatrix-coordinator keygen FILE); agents get
                       their own keys derived from it (needs python3 here)
  --coordinator URL    where agents reach the coordinator: its --listen as they see it
  --check              report what would change; change nothing
  --debs DIR           where sockmatrix-agent_*.deb and sockmatrix-coordinator_*.deb are
                       (default .; `make package` leaves them in build/)
  --token FILE         the dashboard token (keygen --token FILE), for the coordinator
  --previous-key FILE  the fleet key before a rotation: the coordinator also accepts agents
                       on keys derived from it, for 24 h after its restart (docs/deploy.md);
                       a roll-out without it removes it from the coordinator
  --ssh-config FILE    passed to ssh as -F FILE
  --sudo               run the remote side with sudo -n (log in as a user, not root)
  --parallel N         hosts worked on at once (default 8)
  --wait SECONDS       how long to wait for every agent to register (default 60; 0: do
                       not ask the coordinator)

Inventory: one host a line; '#' starts a comment.
  NAME  DESTINATION  ROLES  [key=value ...]
NAME is the host's name in the fleet (the agent's --name); DESTINATION what ssh connects to
([user@]host, or a Host of --ssh-config); ROLES agent, coordinator, or agent,coordinator.
Keys, none of which may hold a space:
  labels=K=V,...       the agent's --labels          data_addr=IP  the agent's --data-addr
  affinity=C,S         the agent's --affinity        allow_http=PREFIX  its --allow-http
  listen=tcp://A:P     the coordinator's --listen (default tcp://0.0.0.0:7100)
  http=ADDR:PORT       the coordinator's --http (default 127.0.0.1:8080); off loopback
                       it is written with --insecure-http until the service is given a
                       certificate (docs/deploy.md, "Serve the dashboard over TLS")
  root=DIR             install under DIR instead of / (an image or chroot being prepared,
                       with a dpkg database of its own): dependencies are not resolved
                       there and no service is started
Exit status: 0 when every host is done and every agent registered, 1 when any host failed
or was unreachable (the others proceed), 2 on bad usage.
EOF
}

bad() { echo "$PROG: $*" >&2; exit 2; }

while [[ $# -gt 0 ]]; do
  a=$1; shift
  if [[ $a == --*=* ]]; then set -- "${a#*=}" "$@"; a=${a%%=*}; fi
  case $a in
    -h | --help) usage; exit 0 ;;
    --check) CHECK=1 ;;
    --sudo) SUDO="sudo -n" ;;
    --inventory | --key | --token | --previous-key | --coordinator | --debs | --ssh-config | --parallel | --wait)
      [[ $# -gt 0 ]] || bad "option $a needs a value"
      v=$1; shift
      case $a in
        --inventory) INVENTORY=$v ;; --key) KEY=$v ;; --token) TOKEN=$v ;; --previous-key) PREV_KEY=$v ;;
        --coordinator) COORD=$v ;; --debs) DEBS=$v ;; --ssh-config) SSH_CONFIG=$v ;;
        --parallel) PARALLEL=$v ;; --wait) WAIT=$v ;;
      esac ;;
    *) bad "unknown argument: $a (see --help)" ;;
  esac
done

[[ -n $INVENTORY ]] || bad "--inventory is required"
[[ -r $INVENTORY ]] || bad "cannot read the inventory $INVENTORY"
[[ -n $KEY ]] || bad "--key is required (make one with: sockmatrix-coordinator keygen FILE)"
[[ -r $KEY ]] || bad "cannot read the key file $KEY"
if ! grep -Eq '^[0-9a-f]{64}$' "$KEY" || [[ $(wc -l <"$KEY") -gt 1 ]]; then
  bad "$KEY is not a fleet key (64 hex digits; sockmatrix-coordinator keygen makes one)"
fi
if [[ -n $PREV_KEY ]]; then
  [[ -r $PREV_KEY ]] || bad "cannot read the key file $PREV_KEY"
  if ! grep -Eq '^[0-9a-f]{64}$' "$PREV_KEY" || [[ $(wc -l <"$PREV_KEY") -gt 1 ]]; then
    bad "$PREV_KEY is not a fleet key (64 hex digits)"
  fi
  cmp -s "$KEY" "$PREV_KEY" && bad "--previous-key $PREV_KEY is the same key as --key"
fi
if [[ -n $TOKEN ]]; then
  [[ -r $TOKEN ]] || bad "cannot read the token file $TOKEN"
  [[ $(head -n1 "$TOKEN" | tr -d '\r\n' | wc -c) -ge 16 ]] || bad "the token in $TOKEN is shorter than 16 characters"
  [[ $(head -n1 "$TOKEN" | tr -d '\r\n' | wc -c) -le 255 ]] || bad "the token in $TOKEN is longer than 255 characters"
fi
[[ $PARALLEL =~ ^[1-9][0-9]{0,2}$ ]] || bad "--parallel: '$PARALLEL' is not a number from 1 to 999"
[[ $WAIT =~ ^[0-9]{1,4}$ ]] || bad "--wait: '$WAIT' is not a number of seconds"
[[ -z $SSH_CONFIG || -r $SSH_CONFIG ]] || bad "cannot read the ssh config $SSH_CONFIG"

# ---- the inventory: every line checked before any host is touched ----
NAMES=() DESTS=() ROLESS=() VARSS=()
HAS_AGENT=0 COORD_I=-1
DEST_RE='^[][A-Za-z0-9_.@:%-]+$' # [user@]host, an IPv6 address in brackets, or a Host alias
lineno=0
while IFS= read -r line || [[ -n $line ]]; do
  lineno=$((lineno + 1))
  line=${line%%#*}
  read -r -a f <<<"$line" || true
  ((${#f[@]})) || continue
  ((${#f[@]} >= 3)) || bad "$INVENTORY:$lineno: expected NAME DESTINATION ROLES [key=value ...]"
  name=${f[0]} dest=${f[1]} roles=${f[2]}
  [[ $name =~ ^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$ ]] || bad "$INVENTORY:$lineno: bad host name '$name'"
  [[ $name != coordinator || $roles != *agent* ]] ||
    bad "$INVENTORY:$lineno: 'coordinator' is reserved and cannot be an agent's name"
  [[ $dest =~ $DEST_RE && $dest != -* ]] || bad "$INVENTORY:$lineno: bad destination '$dest'"
  [[ $roles =~ ^(agent|coordinator|agent,coordinator|coordinator,agent)$ ]] ||
    bad "$INVENTORY:$lineno: roles must be agent, coordinator or agent,coordinator (got '$roles')"
  for n in "${NAMES[@]}"; do [[ $n != "$name" ]] || bad "$INVENTORY:$lineno: host '$name' is listed twice"; done
  for kv in "${f[@]:3}"; do
    [[ $kv =~ ^(labels|data_addr|affinity|allow_http|listen|http|root)=[^[:space:]\'\"\\\$\`]+$ ]] ||
      bad "$INVENTORY:$lineno: bad setting '$kv' (see --help for the keys)"
  done
  if [[ $roles == *coordinator* ]]; then
    ((COORD_I < 0)) || bad "$INVENTORY:$lineno: a second coordinator ('$name'); a fleet has one"
    COORD_I=${#NAMES[@]}
  fi
  [[ $roles != *agent* ]] || HAS_AGENT=1
  NAMES+=("$name") DESTS+=("$dest") ROLESS+=("$roles") VARSS+=("${f[*]:3}")
done <"$INVENTORY"
((${#NAMES[@]})) || bad "the inventory $INVENTORY lists no host"
if ((HAS_AGENT)); then
  [[ $COORD =~ ^tcp://[^[:space:]/]+:[0-9]+$ ]] || bad "--coordinator: '$COORD' is not tcp://ADDR:PORT"
fi

declare -A DEB VER SHA
for pkg in sockmatrix-agent sockmatrix-coordinator; do
  role=${pkg#sockmatrix-}
  # No pipe into grep -q: under pipefail, printf killed by SIGPIPE when grep stops at its first
  # match would fail the test and skip a package that some host needs.
  [[ " ${ROLESS[*]} " == *"$role"* ]] || continue
  shopt -s nullglob
  found=("$DEBS"/"${pkg}"_*.deb)
  shopt -u nullglob
  ((${#found[@]} == 1)) || bad "expected one ${pkg}_*.deb in $DEBS, found ${#found[@]} (run make package)"
  DEB[$pkg]=${found[0]}
  VER[$pkg]=$(dpkg-deb --field "${found[0]}" Version) || bad "${found[0]} is not a Debian package"
  SHA[$pkg]=$(sha256sum "${found[0]}" | cut -d' ' -f1)
done

setting() { # VARS KEY DEFAULT
  local kv kvs
  read -r -a kvs <<<"$1" || true
  for kv in "${kvs[@]}"; do [[ ${kv%%=*} != "$2" ]] || { printf '%s' "${kv#*=}"; return; }; done
  printf '%s' "$3"
}

b64() { base64 -w0 "$@"; }

# Whether an http=ADDR:PORT setting listens on loopback (127.0.0.0/8 or ::1), where the
# coordinator serves plain HTTP without --insecure-http.
http_loopback() { # ADDR:PORT
  local h=${1%:*}
  [[ $h == 127.* || $h == "[::1]" || $h == ::1 ]]
}

# The agent NAME's own key as a key file's text: HKDF-SHA256 of the fleet key (salt
# "sockmatrix/2 agent key", info NAME), what `sockmatrix-coordinator keygen --agent NAME` writes.
# Computed here so that the fleet key itself never leaves for an agent host; python3 reads the
# key file itself, so the key is on no command line.
agent_key() { # NAME
  python3 - "$KEY" "$1" <<'PY'
import hashlib, hmac, sys
fleet = bytes.fromhex(open(sys.argv[1]).read().strip())
prk = hmac.new(b"sockmatrix/2 agent key", fleet, hashlib.sha256).digest()
print(hmac.new(prk, sys.argv[2].encode() + b"\x01", hashlib.sha256).hexdigest())
PY
}

# ---- the remote side: runs on each host as root, reads everything from its stdin ----
# shellcheck disable=SC2317,SC2153  # sent to the host with declare -f; its variables come first
remote_main() {
  set -euo pipefail
  say() { printf '%s\n' "$*"; }
  sha_of() { if [[ -f $1 ]]; then sha256sum "$1" | cut -d' ' -f1; else echo none; fi; }
  # These helpers are called from && lists, where -e does not hold (nor in what they call): each
  # step that can fail is checked, and a failure is an error line and the end of the host's run.
  # write_file PATH MODE BASE64: PATH with those bytes and mode, atomically.
  write_file() {
    local tmp
    mkdir -p "$(dirname "$1")" && tmp=$(mktemp "$1.XXXXXX") &&
      { { printf '%s' "$3" | base64 -d >"$tmp" && chmod "$2" "$tmp" && mv -f "$tmp" "$1"; } ||
        { rm -f "$tmp"; false; }; }
  }
  # remove_file PATH: removes PATH if it is there (a change), else nothing to say.
  remove_file() {
    [[ -e $1 ]] || return 1
    if ((CHECK)); then say "would-change file ${1#"$R"}: remove"; return 0; fi
    local err
    err=$(rm -f "$1" 2>&1) || { say "error file ${1#"$R"}: cannot remove it: $err"; exit 1; }
    say "changed file ${1#"$R"}: removed"
  }
  # put_file PATH MODE BASE64: writes PATH atomically when its bytes or mode differ.
  put_file() {
    local path=$1 mode=$2 want have err
    want=$(printf '%s' "$3" | base64 -d | sha256sum | cut -d' ' -f1)
    have=$(sha_of "$path")
    if [[ $have == "$want" && $(stat -c %a "$path") == "$mode" ]]; then
      say "ok file ${path#"$R"}"; return 1
    fi
    if ((CHECK)); then say "would-change file ${path#"$R"}"; return 0; fi
    err=$(write_file "$path" "$mode" "$3" 2>&1) ||
      { say "error file ${path#"$R"}: cannot write it: $err"; exit 1; }
    say "changed file ${path#"$R"}"
    return 0
  }
  # package NAME VERSION SHA256 BASE64: installs the .deb unless that very file is installed.
  package() {
    local name=$1 ver=$2 sha=$3 cache have err
    cache=$R/var/cache/sockmatrix/$name.deb
    have=$(dpkg-query --admindir="$R/var/lib/dpkg" -W -f='${Status} ${Version}' "$name" 2>/dev/null || true)
    if [[ $have == "install ok installed $ver" && $(sha_of "$cache") == "$sha" ]]; then
      say "ok package $name $ver"; return 1
    fi
    if ((CHECK)); then say "would-change package $name $ver (now: ${have:-not installed})"; return 0; fi
    err=$(write_file "$cache.tmp" 644 "$4" 2>&1) ||
      { say "error package $name: cannot keep its copy: $err"; exit 1; }
    [[ $(sha_of "$cache.tmp") == "$sha" ]] || { say "error package $name: the copy is damaged"; exit 1; }
    err=$(mv -f "$cache.tmp" "$cache" 2>&1) ||
      { say "error package $name: cannot keep its copy: $err"; exit 1; }
    # Settings the roll-out wrote are kept (confold): the package's example never replaces them.
    if [[ $R == / ]]; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o Dpkg::Options::=--force-confold \
        "$cache" >/tmp/sockmatrix-install.log 2>&1 ||
        { say "error package $name: apt-get install failed: $(tail -n1 /tmp/sockmatrix-install.log)"; exit 1; }
    else
      [[ -f $R/var/lib/dpkg/status ]] || { say "error package $name: $R has no dpkg database"; exit 1; }
      mkdir -p "$R/var/log"
      dpkg --root="$R" --log="$R/var/log/dpkg.log" --force-depends --force-confold -i "$cache" \
        >"$R/var/log/sockmatrix-install.log" 2>&1 ||
        { say "error package $name: dpkg failed: $(tail -n1 "$R/var/log/sockmatrix-install.log")"; exit 1; }
    fi
    say "changed package $name $ver (was: ${have:-not installed})"
  }
  # service UNIT CHANGED: enabled and running, restarted when its files changed.
  service() {
    local unit=$1
    if [[ $R != / ]]; then say "skipped service $unit: installed under $R, not /"; return; fi
    if [[ ! -d /run/systemd/system ]]; then say "skipped service $unit: systemd is not running here"; return; fi
    if ! systemctl is-enabled -q "$unit" 2>/dev/null; then
      if ((CHECK)); then say "would-change service $unit: enable"; else systemctl enable -q "$unit"; say "changed service $unit: enabled"; fi
    fi
    if (($2)); then
      if ((CHECK)); then say "would-change service $unit: restart"; return; fi
      systemctl daemon-reload
      systemctl restart "$unit" || { say "error service $unit: restart failed"; exit 1; }
      say "changed service $unit: restarted"
    elif ! systemctl is-active -q "$unit"; then
      if ((CHECK)); then say "would-change service $unit: start"; return; fi
      systemctl start "$unit" || { say "error service $unit: start failed"; exit 1; }
      say "changed service $unit: started"
    else
      say "ok service $unit"
    fi
  }
  # The keys first: the fleet key only where the coordinator runs, the agent's own key where an
  # agent runs; each service restarts on its key. A fleet key left on an agent-only host by an
  # earlier roll-out would let that host speak for any agent: it goes.
  local c key=0 akey=0
  if [[ -n $KEY_B64 ]]; then
    put_file "$R/etc/sockmatrix/fleet.key" 600 "$KEY_B64" && key=1
  else
    remove_file "$R/etc/sockmatrix/fleet.key" || true
  fi
  if [[ -n $AGENT_KEY_B64 ]]; then
    put_file "$R/etc/sockmatrix/agent.key" 600 "$AGENT_KEY_B64" && akey=1
  fi
  if [[ $ROLES == *coordinator* ]]; then
    c=$key
    package sockmatrix-coordinator "$C_VER" "$C_SHA" "$C_DEB" && c=1
    put_file "$R/etc/default/sockmatrix-coordinator" 644 "$C_ENV" && c=1
    # The previous fleet key, during a rotation: the coordinator takes it as the credential
    # "fleet.key.previous". Gone again once a roll-out no longer names it.
    if [[ -n $PREV_B64 ]]; then
      put_file "$R/etc/sockmatrix/fleet.key.previous" 600 "$PREV_B64" && c=1
      put_file "$R/etc/systemd/system/sockmatrix-coordinator.service.d/previous-key.conf" 644 "$PREV_DROPIN_B64" && c=1
    else
      remove_file "$R/etc/sockmatrix/fleet.key.previous" && c=1
      remove_file "$R/etc/systemd/system/sockmatrix-coordinator.service.d/previous-key.conf" && c=1
    fi
    if [[ -n $TOKEN_B64 ]]; then
      put_file "$R/etc/sockmatrix/token" 600 "$TOKEN_B64" && c=1
      put_file "$R/etc/systemd/system/sockmatrix-coordinator.service.d/token.conf" 644 "$DROPIN_B64" && c=1
    fi
    service sockmatrix-coordinator.service "$c"
  fi
  if [[ $ROLES == *agent* ]]; then
    c=$akey
    package sockmatrix-agent "$A_VER" "$A_SHA" "$A_DEB" && c=1
    put_file "$R/etc/default/sockmatrix-agent" 644 "$A_ENV" && c=1
    service sockmatrix-agent.service "$c"
  fi
}

# The script one host runs: its settings as shell-quoted variables, then remote_main.
host_script() { # INDEX
  local i=$1 name=${NAMES[$1]} vars=${VARSS[$1]} env opts v http copts
  printf 'set -euo pipefail\n'
  printf 'R=%q CHECK=%q ROLES=%q\n' "$(setting "$vars" root /)" "$CHECK" "${ROLESS[$i]}"
  if [[ ${ROLESS[$i]} == *coordinator* ]]; then printf 'KEY_B64=%q\n' "$(b64 "$KEY")"; else printf 'KEY_B64=\n'; fi
  if [[ ${ROLESS[$i]} == *agent* ]]; then
    printf 'AGENT_KEY_B64=%q\n' "$(agent_key "$name" | b64)"
  else
    printf 'AGENT_KEY_B64=\n'
  fi
  if [[ ${ROLESS[$i]} == *agent* ]]; then
    opts="--name $name"
    v=$(setting "$vars" data_addr ""); [[ -z $v ]] || opts+=" --data-addr $v"
    v=$(setting "$vars" labels ""); [[ -z $v ]] || opts+=" --labels $v"
    v=$(setting "$vars" affinity ""); [[ -z $v ]] || opts+=" --affinity $v"
    v=$(setting "$vars" allow_http ""); [[ -z $v ]] || opts+=" --allow-http $v"
    env=$(printf '%s\n' "# /etc/default/sockmatrix-agent: written by the sockmatrix roll-out for $name;" \
      "# change the inventory and roll out again rather than this file." \
      "SM_COORDINATOR=$COORD" "SM_AGENT_OPTS=$opts")
    printf 'A_VER=%q A_SHA=%q A_ENV=%q\n' "${VER[sockmatrix-agent]}" "${SHA[sockmatrix-agent]}" "$(printf '%s\n' "$env" | b64)"
    if ((CHECK)); then printf 'A_DEB=\n'; else printf 'A_DEB=%q\n' "$(b64 "${DEB[sockmatrix-agent]}")"; fi
  fi
  if [[ ${ROLESS[$i]} == *coordinator* ]]; then
    http=$(setting "$vars" http 127.0.0.1:8080)
    # Off loopback the coordinator serves plain HTTP only when told to: the roll-out carries no
    # certificate yet, so it says so, and a certificate given as credentials (docs/deploy.md)
    # makes the option moot. The playbook's template writes the same bytes.
    if http_loopback "$http"; then
      copts=("SM_COORDINATOR_OPTS=")
    else
      copts=("# Plain HTTP off loopback: the token crosses the network in clear. Give the service a" \
        "# certificate (docs/deploy.md, \"Serve the dashboard over TLS\") to serve HTTPS instead." \
        "SM_COORDINATOR_OPTS=--insecure-http")
    fi
    env=$(printf '%s\n' "# /etc/default/sockmatrix-coordinator: written by the sockmatrix roll-out for $name;" \
      "# change the inventory and roll out again rather than this file." \
      "SM_LISTEN=$(setting "$vars" listen tcp://0.0.0.0:7100)" \
      "SM_HTTP=$http" "${copts[@]}")
    printf 'C_VER=%q C_SHA=%q C_ENV=%q\n' "${VER[sockmatrix-coordinator]}" "${SHA[sockmatrix-coordinator]}" "$(printf '%s\n' "$env" | b64)"
    if ((CHECK)); then printf 'C_DEB=\n'; else printf 'C_DEB=%q\n' "$(b64 "${DEB[sockmatrix-coordinator]}")"; fi
    if [[ -n $PREV_KEY ]]; then
      printf 'PREV_B64=%q PREV_DROPIN_B64=%q\n' "$(b64 "$PREV_KEY")" \
        "$(printf '[Service]\nLoadCredential=fleet.key.previous:/etc/sockmatrix/fleet.key.previous\n' | b64)"
    else
      printf 'PREV_B64=\n'
    fi
    if [[ -n $TOKEN ]]; then
      printf 'TOKEN_B64=%q DROPIN_B64=%q\n' "$(head -n1 "$TOKEN" | b64)" \
        "$(printf '[Service]\nLoadCredential=token:/etc/sockmatrix/token\n' | b64)"
    else
      printf 'TOKEN_B64=\n'
    fi
  fi
  declare -f remote_main
  printf 'remote_main\n'
}

SSH=(ssh -o BatchMode=yes -o ConnectTimeout=10)
[[ -z $SSH_CONFIG ]] || SSH+=(-F "$SSH_CONFIG")

# The last line of FILE that is not blank, or what says there was none.
last_line() {
  local l
  l=$(grep -v '^[[:space:]]*$' "$1" | tail -n1) || true
  printf '%s' "${l:-(it wrote nothing on stderr)}"
}

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# Works on host INDEX; its report goes to $OUT/INDEX, its verdict to $OUT/INDEX.rc.
# Its script is made here and run there: a failure on either side says which, with the last
# line it wrote (a script cut short here would run there as far as it came, and end 0).
do_host() {
  local i=$1 rc=0 made
  set +e
  host_script "$i" 2>"$OUT/$i.local" |
    "${SSH[@]}" "${DESTS[$i]}" "$SUDO bash -s" >"$OUT/$i" 2>"$OUT/$i.err"
  local -a st=("${PIPESTATUS[@]}")
  set -e
  made=${st[0]} rc=${st[1]}
  # 141: SIGPIPE, the remote side stopped reading first, and says why below.
  if ((made != 0 && made != 141 && rc != 255)); then
    echo "error: its roll-out script could not be made here (status $made): $(last_line "$OUT/$i.local")" >>"$OUT/$i"
    ((rc != 0)) || rc=$made
  elif ((rc == 255)); then
    echo "unreachable: $(last_line "$OUT/$i.err")" >"$OUT/$i"
  elif ((rc != 0)) && ! grep -q '^error ' "$OUT/$i"; then
    echo "error: the remote side ended with status $rc: $(last_line "$OUT/$i.err")" >>"$OUT/$i"
  fi
  echo "$rc" >"$OUT/$i.rc"
  sed "s/^/${NAMES[$i]}: /" "$OUT/$i"
}

((CHECK)) && echo "$PROG: check only: nothing is changed"
running=0
for i in "${!NAMES[@]}"; do
  if ((running >= PARALLEL)); then wait -n || true; running=$((running - 1)); fi
  do_host "$i" &
  running=$((running + 1))
done
wait

failed=0
echo "---- recap ----"
for i in "${!NAMES[@]}"; do
  rc=$(cat "$OUT/$i.rc")
  ok=$(grep -c '^ok ' "$OUT/$i" || true)
  ch=$(grep -Ec '^(changed|would-change) ' "$OUT/$i" || true)
  sk=$(grep -c '^skipped ' "$OUT/$i" || true)
  if ((rc == 255)); then state=unreachable; failed=1
  elif ((rc != 0)); then state=failed; failed=1
  else state="done"; fi
  printf '%-20s %-12s ok=%d %s=%d skipped=%d\n' "${NAMES[$i]}" "$state" "$ok" \
    "$( ((CHECK)) && echo would-change || echo changed)" "$ch" "$sk"
done

# ---- did every agent register? asked of the coordinator, on its own host ----
if ((HAS_AGENT)) && ((COORD_I >= 0)) && { ((WAIT > 0)) || ((CHECK)); }; then
  cvars=${VARSS[$COORD_I]}
  croot=$(setting "$cvars" root /)
  http=$(setting "$cvars" http 127.0.0.1:8080)
  [[ $http != 0.0.0.0:* ]] || http=127.0.0.1:${http#0.0.0.0:}
  cli=$(printf '%q' "${croot%/}/usr/bin/sockmatrix")
  # A listener off loopback answers reads only with the token, which the roll-out put there.
  [[ -z $TOKEN ]] || cli+=" --token-file $(printf '%q' "${croot%/}/etc/sockmatrix/token")"
  # The CLI sends a token over plain HTTP off loopback only when told to, as the service was.
  http_loopback "$http" || cli+=" --insecure-http"
  want=()
  for i in "${!NAMES[@]}"; do
    [[ ${ROLESS[$i]} == *agent* && $(cat "$OUT/$i.rc") == 0 ]] && want+=("${NAMES[$i]}")
  done
  deadline=$((SECONDS + WAIT))
  while :; do
    table=$("${SSH[@]}" "${DESTS[$COORD_I]}" "$SUDO $cli --coordinator http://$http agents" 2>&1) || true
    missing=()
    for n in "${want[@]}"; do
      st=$(awk -v n="$n" '$1 == n { print $2 }' <<<"$table")
      [[ -n $st && $st != lost ]] || missing+=("$n")
    done
    ((${#missing[@]} == 0 || CHECK || SECONDS >= deadline)) && break
    sleep 2
  done
  echo "---- registered with the coordinator on ${NAMES[$COORD_I]} ----"
  for n in "${want[@]}"; do
    st=$(awk -v n="$n" '$1 == n { print $2 }' <<<"$table")
    if [[ -n $st && $st != lost ]]; then echo "$n: registered ($st)"
    else
      echo "$n: NOT registered${st:+ ($st)}"
      ((CHECK)) || failed=1
    fi
  done
  if ((${#missing[@]})) && ! grep -q '^NAME' <<<"$table"; then
    echo "(the coordinator answered: $(tail -n1 <<<"$table"))"
  fi
fi
exit $failed
