"""Makes test_systemd's Debian root (mmdebstrap, once per package list, kept in the build
folder: test_systemd.container_root) ahead of the test: the ctest fixture sm_rootfs. It needs no
network namespace, no lock and not the packages (the root holds the libraries the built
programs link), so ctest starts it at once, beside the packages' build and the tests that hold
a lock, and test_systemd finds the root made. It runs at nice -10 where it may: it heads the
longest chain of what make test runs side by side. Where the root cannot be made here (not root, no
mmdebstrap), it says so and leaves it to test_systemd, which skips or fails as its own checks
say.

    python3 rootfs.py        (SM_BIN_DIR, SM_BUILD_DIR as ctest sets them)"""
import os
import sys
import time

from test_systemd import can_boot, container_root


def main():
    if not can_boot():
        print("rootfs.py: no root, systemd-nspawn, mmdebstrap or cpack here: test_systemd "
              "says what it needs")
        return 0
    # The root heads the longest chain of the tests that run side by side (then test_systemd
    # boots it), and dpkg's share of two CPUs busy with other tests made it 5-7 times slower
    # than alone (215-366 s against 48 s). Ahead of them: none of those measures anything.
    try:
        os.nice(-10)
    except OSError as e:
        print(f"rootfs.py: at the usual priority ({e.strerror})")
    t0 = time.monotonic()
    root = container_root()
    print(f"rootfs.py: {root} ({time.monotonic() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
