"""Makes test_systemd's Debian root (debootstrap, once per package list, kept in the build
folder: test_systemd.container_root) ahead of the test: the ctest fixture sm_rootfs. It needs no
network namespace and no lock, so ctest runs it beside the tests that hold one, and test_systemd
finds the root made. Where the root cannot be made here (not root, no debootstrap), it says so
and leaves it to test_systemd, which skips or fails as its own checks say.

    python3 rootfs.py        (SM_DEBS_DIR, SM_BUILD_DIR as ctest sets them)"""
import sys
import time

from rollout import debs
from test_systemd import can_boot, container_root


def main():
    if not can_boot():
        print("rootfs.py: no root, systemd-nspawn, debootstrap or cpack here: test_systemd "
              "says what it needs")
        return 0
    t0 = time.monotonic()
    root = container_root(debs())
    print(f"rootfs.py: {root} ({time.monotonic() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
