"""Makes the Debian packages once for test_package, test_rollout and test_systemd (the ctest
fixture sm_debs, tests/CMakeLists.txt), as a packager makes them: from a Release build with
warnings as errors, packed by CPack.

    python3 debs.py SOURCE_DIR BUILD_DIR OUT_DIR C_COMPILER TEST_BUILD_DIR BUILD_TYPE WERROR

The three tests read OUT_DIR (SM_DEBS_DIR). TEST_BUILD_DIR is the build the tests run from,
BUILD_TYPE and WERROR how it was configured. When that is a Release build with warnings as
errors (make build's), it is a packager's build already and is packed as it is. Otherwise
(a RelWithDebInfo or Debug folder of one's own) the source is configured in BUILD_DIR as a
Release build with warnings as errors, without the tests (the packages hold none of them), and
built: a warning only -O3 finds fails here, before a packager meets it."""
import glob
import os
import shutil
import subprocess
import sys
import time


def step(what, cmd, cwd=None):
    t0 = time.monotonic()
    print(f"debs.py: {what}: {' '.join(cmd)}", flush=True)
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, cwd=cwd)
    if r.returncode != 0:
        sys.exit(f"debs.py: {what} failed (exit {r.returncode})")
    print(f"debs.py: {what}: {time.monotonic() - t0:.1f} s", flush=True)


def main(src, build, out, cc, test_build, build_type, werror):
    if build_type == "Release" and werror.upper() in ("ON", "1", "TRUE", "YES"):
        print(f"debs.py: {test_build} is a Release build with warnings as errors: packed as it "
              "is", flush=True)
        build = test_build
    else:
        configure = ["cmake", "-S", src, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                     "-DSM_WERROR=ON", "-DSM_TESTS=OFF", "-DSM_BENCH=OFF",
                     f"-DCMAKE_C_COMPILER={cc}"]
        step("configure", configure)
        step("build", ["cmake", "--build", build, "-j", str(os.cpu_count() or 1)])
    os.makedirs(out, exist_ok=True)
    for old in glob.glob(os.path.join(out, "*.deb")):
        os.remove(old)  # never a package of an earlier build
    step("cpack", ["cpack", "-G", "DEB", "-B", out], cwd=build)
    shutil.rmtree(os.path.join(out, "_CPack_Packages"), ignore_errors=True)
    made = sorted(os.path.basename(p) for p in glob.glob(os.path.join(out, "*.deb")))
    if len(made) != 2:
        sys.exit(f"debs.py: expected the agent's and the coordinator's packages, made {made}")
    print(f"debs.py: {out}: {', '.join(made)}")


if __name__ == "__main__":
    if len(sys.argv) != 8:
        sys.exit(__doc__)
    main(*sys.argv[1:])
