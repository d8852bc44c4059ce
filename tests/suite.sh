#!/usr/bin/env bash
# make test's runner: every test once, on the build it needs (the unit tests on both), in two
# phases, then the ten slowest tests and each phase's wall time.
#
#   1. The gcc build's measuring tests (label measure, RUN_SERIAL), one at a time. They leave
#      the CPUs about half idle while they wait on labs, schedules and scrapes, so beside them,
#      at idle priority (SCHED_IDLE, idle I/O class: it runs only on a CPU they leave, and a
#      thread of theirs that wakes takes its CPU back at once), the ASan build is made and its
#      unit and fuzz tests run (CPU only: no lab, no daemon), and the packages the system tests
#      install are packed from the gcc build (the fixture sm_debs).
#   2. Side by side, nothing measuring: on the gcc build the unit, browser and system tests
#      (test_systemd's Debian root first, sm_rootfs, at nice -10: it heads the longest chain);
#      on the ASan build the integration tests (the daemons on loopback and in lab namespaces,
#      every fault of the campaign). Run one after the other, each half's last tests left a
#      CPU idle.
#
#   BUILD=build ASAN_BUILD=build-asan TEST_JOBS=4 ASAN_BUILD_CMD='make build-asan' \
#     bash tests/suite.sh
#
# What runs beside the measuring tests writes to $BUILD/Testing/: asan-build.log (the
# compiler), asan-ahead.log (the ASan unit and fuzz tests), fixtures.log (sm_debs); each is
# printed when it fails. Each line of phase 2 says which build it comes from ("gcc  |",
# "asan |").
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ASAN_BUILD=${ASAN_BUILD:-build-asan}
TEST_JOBS=${TEST_JOBS:-$((2 * $(nproc)))}
ASAN_BUILD_CMD=${ASAN_BUILD_CMD:-make --no-print-directory build-asan}
ROOT=$(pwd)
T="$ROOT/$BUILD/Testing"
CTEST=(ctest --output-on-failure --parallel "$TEST_JOBS")
# Any sanitizer report fails its test.
ASAN_ENV=(ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
          "LSAN_OPTIONS=suppressions=$ROOT/tests/lsan.supp:print_suppressions=0"
          UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)
# As root the lab can be made: a root-only test that skips there fails (smtest.py).
export SM_REQUIRE_ROOT_TESTS=$([ "$(id -u)" -eq 0 ] && echo 1 || echo 0)

mkdir -p "$T"
rm -f "$T"/junit*.xml "$T"/*.status "$T"/*.end "$T"/cpu.tsv "$ASAN_BUILD"/Testing/junit*.xml \
    "$ASAN_BUILD"/Testing/cpu.tsv
prefix() { sed -u "s/^/$1 | /"; }
status=0

idle() { chrt --idle 0 ionice -c 3 "$@"; }
since() { echo $(($(date +%s) - t0)) >"$T/$1.end"; }
t0=$(date +%s)
(idle $ASAN_BUILD_CMD >"$T/asan-build.log" 2>&1
 echo $? >"$T/asan-build.status"; since asan-build
 if [ "$(cat "$T/asan-build.status")" = 0 ]; then
     (cd "$ASAN_BUILD" && idle env "${ASAN_ENV[@]}" SM_CPU_LOG="$ROOT/$ASAN_BUILD/Testing/cpu.tsv" \
         "${CTEST[@]}" -L 'unit|fuzz' -LE measure \
         --output-junit "$ROOT/$ASAN_BUILD/Testing/junit-ahead.xml" >"$T/asan-ahead.log" 2>&1
      echo $? >"$T/asan-ahead.status"; since asan-ahead)
 fi) &
asan_ahead_pid=$!
# A second ctest in the build folder: it writes its own JUnit file, and only Testing/Temporary's
# LastTest.log, which nothing here reads, is shared.
(cd "$BUILD" && idle "${CTEST[@]}" -R '^sm_debs$' --output-junit "$T/junit-ahead.xml" \
    >"$T/fixtures.log" 2>&1
 echo $? >"$T/fixtures.status"; since fixtures) &
fixtures_pid=$!
echo "the measuring tests, one at a time (beside them at idle priority: the ASan build and its"
echo "unit and fuzz tests, the packages):"
(cd "$BUILD" && SM_CPU_LOG="$T/cpu.tsv" "${CTEST[@]}" -L measure \
    --output-junit "$T/junit-measure.xml") || status=1
t1=$(date +%s)
wait "$asan_ahead_pid" "$fixtures_pid"
t3=$(date +%s)
if [ "$(cat "$T/asan-build.status")" != 0 ]; then
    tail -n 60 "$T/asan-build.log"
    echo "the ASan build failed: $BUILD/Testing/asan-build.log has its whole output"
    status=1
elif [ "$(cat "$T/asan-ahead.status")" != 0 ]; then
    prefix "asan" <"$T/asan-ahead.log"
    echo "the ASan build's unit or fuzz tests failed (above, and in $T/asan-ahead.log)"
    status=1
else
    grep -E "tests passed|Total Test time" "$T/asan-ahead.log" | sed 's/^/asan | unit, fuzz: /'
fi
if [ "$(cat "$T/fixtures.status")" != 0 ]; then
    cat "$T/fixtures.log"
    echo "the packages were not made (above, and in $T/fixtures.log)"
    status=1
fi

if [ $status -eq 0 ]; then
    echo "done, in s from the start: the measuring tests $((t1 - t0)), the ASan build" \
        "$(cat "$T/asan-build.end"), its unit and fuzz tests $(cat "$T/asan-ahead.end")," \
        "the packages $(cat "$T/fixtures.end"); side by side now:"
    (cd "$ASAN_BUILD" && env "${ASAN_ENV[@]}" SM_CPU_LOG="$ROOT/$ASAN_BUILD/Testing/cpu.tsv" \
        "${CTEST[@]}" -L integration -LE measure \
        --output-junit "$ROOT/$ASAN_BUILD/Testing/junit.xml" 2>&1
     echo $? >"$T/asan.status") | prefix "asan" &
    asan_pid=$!
    (cd "$BUILD" && SM_CPU_LOG="$T/cpu.tsv" "${CTEST[@]}" -L 'unit|web|system' -LE measure \
        -E '^sm_debs$' -FS '^sm_debs$' --output-junit "$T/junit.xml" 2>&1
     echo $? >"$T/gcc.status") | prefix "gcc "
    wait "$asan_pid"
    for s in gcc asan; do
        [ "$(cat "$T/$s.status" 2>/dev/null)" = 0 ] || status=1
    done
fi
t2=$(date +%s)

python3 tests/slowest.py --wall "measuring, the rest at idle priority beside=$((t3 - t0))" \
    --wall "side by side=$((t2 - t3))" \
    --cpu gcc="$T/cpu.tsv" --cpu asan="$ASAN_BUILD/Testing/cpu.tsv" \
    gcc="$BUILD/Testing/junit-measure.xml" gcc="$BUILD/Testing/junit-ahead.xml" \
    gcc="$BUILD/Testing/junit.xml" \
    asan="$ASAN_BUILD/Testing/junit-ahead.xml" asan="$ASAN_BUILD/Testing/junit.xml"
exit $status
