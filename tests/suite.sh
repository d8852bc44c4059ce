#!/usr/bin/env bash
# make test's runner: every test once, on the build it needs (the unit tests on both), in two
# phases, then the ten slowest tests and each phase's wall time.
#
#   1. Side by side, nothing measuring: on the gcc build the unit, browser and system tests;
#      at the same time the ASan build is made and runs the unit, integration (the daemons on
#      loopback and in lab namespaces, every fault of the campaign) and fuzz tests. Neither
#      half measures; run one after the other, each half's last tests left a CPU idle.
#   2. Alone, once both passed: the gcc build's measuring tests (label measure, RUN_SERIAL),
#      on a quiet machine.
#
#   BUILD=build ASAN_BUILD=build-asan TEST_JOBS=4 ASAN_BUILD_CMD='make build-asan' \
#     bash tests/suite.sh
#
# Each line of phase 1 says which build it comes from ("gcc  |", "asan |"); the ASan build's
# compiler output goes to $BUILD/Testing/asan-build.log and is printed only when it fails.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ASAN_BUILD=${ASAN_BUILD:-build-asan}
TEST_JOBS=${TEST_JOBS:-$((2 * $(nproc)))}
ASAN_BUILD_CMD=${ASAN_BUILD_CMD:-make --no-print-directory build-asan}
ROOT=$(pwd)
CTEST=(ctest --output-on-failure --parallel "$TEST_JOBS")
# Any sanitizer report fails its test.
ASAN_ENV=(ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
          "LSAN_OPTIONS=suppressions=$ROOT/tests/lsan.supp:print_suppressions=0"
          UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)
# As root the lab can be made: a root-only test that skips there fails (smtest.py).
export SM_REQUIRE_ROOT_TESTS=$([ "$(id -u)" -eq 0 ] && echo 1 || echo 0)

mkdir -p "$BUILD/Testing"
rm -f "$BUILD"/Testing/junit*.xml "$BUILD"/Testing/*.status "$ASAN_BUILD"/Testing/junit.xml
prefix() { sed -u "s/^/$1 | /"; }

t0=$(date +%s)
asan_half() {
    local log="$ROOT/$BUILD/Testing/asan-build.log"
    if ! $ASAN_BUILD_CMD >"$log" 2>&1; then
        tail -n 60 "$log"
        echo "the ASan build failed: $BUILD/Testing/asan-build.log has its whole output"
        return 1
    fi
    echo "built in $(($(date +%s) - t0)) s; its tests start"
    (cd "$ASAN_BUILD" && env "${ASAN_ENV[@]}" "${CTEST[@]}" -L 'unit|integration|fuzz' \
        -LE measure --output-junit "$ROOT/$ASAN_BUILD/Testing/junit.xml")
}
(asan_half 2>&1; echo $? >"$ROOT/$BUILD/Testing/asan.status") | prefix "asan" &
asan_pid=$!
(cd "$BUILD" && "${CTEST[@]}" -L 'unit|web|system' -LE measure \
    --output-junit "$ROOT/$BUILD/Testing/junit.xml" 2>&1; echo $? >"$ROOT/$BUILD/Testing/gcc.status") |
    prefix "gcc "
wait "$asan_pid"
t1=$(date +%s)
status=0
for s in gcc asan; do
    [ "$(cat "$ROOT/$BUILD/Testing/$s.status" 2>/dev/null)" = 0 ] || status=1
done

if [ $status -eq 0 ]; then
    echo "the measuring tests, alone:"
    (cd "$BUILD" && "${CTEST[@]}" -L measure \
        --output-junit "$ROOT/$BUILD/Testing/junit-measure.xml") || status=1
fi
t2=$(date +%s)

python3 tests/slowest.py --wall "side by side=$((t1 - t0))" --wall "measuring alone=$((t2 - t1))" \
    gcc="$BUILD/Testing/junit.xml" asan="$ASAN_BUILD/Testing/junit.xml" \
    gcc="$BUILD/Testing/junit-measure.xml"
exit $status
