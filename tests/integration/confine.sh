#!/bin/sh
# confine.sh UID DIR... -- CMD...: runs CMD confined as the sockmatrix units confine their
# program, as far as this machine can without systemd: as an unprivileged user (DynamicUser=)
# with no capabilities (CapabilityBoundingSet=) and no way to gain any (NoNewPrivileges=), every
# file system read-only but the DIRs (ProtectSystem=strict with StateDirectory= and
# RuntimeDirectory=), /root and /home empty (ProtectHome=). Stricter than the units in one way:
# /tmp is read-only here, where PrivateTmp= gives the program an empty one of its own.
set -eu
if [ "${SM_CONFINE_INSIDE:-}" != 1 ]; then
  SM_CONFINE_INSIDE=1 exec unshare --mount --propagation private -- "$0" "$@"
fi
unset SM_CONFINE_INSIDE
uid=$1
shift
rw=
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  rw="$rw $1"
  shift
done
[ $# -gt 1 ] || { echo "usage: confine.sh UID DIR... -- CMD..." >&2; exit 2; }
shift
for d in $rw; do mount --bind "$d" "$d"; done
# Every mount read-only but the kernel's own (/proc, /sys and /dev are other settings' work).
awk '{ print $2 }' /proc/self/mounts | grep -Ev '^/(proc|sys|dev)(/|$)' | sort -u |
  while read -r m; do mount -o remount,bind,ro "$m" 2>/dev/null || true; done
for d in $rw; do mount -o remount,bind,rw "$d"; done
for d in /root /home; do
  if [ -d "$d" ]; then mount -t tmpfs -o ro,mode=0755 sm-protect-home "$d"; fi
done
exec setpriv --reuid "$uid" --regid "$uid" --clear-groups --inh-caps=-all --bounding-set=-all \
  --no-new-privs -- "$@"
