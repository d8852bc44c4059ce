#!/usr/bin/env bash
# make test's runner: every test once, on the build it needs (the unit tests on both), in two
# phases, then the ten slowest tests and each phase's wall time.
#
#   1. The gcc build's measuring tests (label measure, RUN_SERIAL), one at a time. They leave
#      the CPUs about half idle while they wait on labs, schedules and scrapes: the ASan build
#      is made meanwhile at idle priority (SCHED_IDLE, idle I/O class), so that it runs only
#      on a CPU they leave; a thread of theirs that wakes takes its CPU back at once. So are
#      the system tests' fixtures, which need only the gcc build: the packages (sm_debs) and
#      test_systemd's Debian root (sm_rootfs); phase 2 then finds them made.
#   2. Side by side, nothing measuring: on the gcc build the unit, browser and system tests;
#      on the ASan build the unit, integration (the daemons on loopback and in lab namespaces,
#      every fault of the campaign) and fuzz tests. Run one after the other, each half's last
#      tests left a CPU idle.
#
#   BUILD=build ASAN_BUILD=build-asan TEST_JOBS=4 ASAN_BUILD_CMD='make build-asan' \
#     bash tests/suite.sh
#
# The ASan build's compiler output goes to $BUILD/Testing/asan-build.log and is printed only
# when it fails. Each line of phase 2 says which build it comes from ("gcc  |", "asan |").
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
rm -f "$T"/junit*.xml "$T"/*.status "$T"/*.end "$T"/cpu.tsv "$ASAN_BUILD"/Testing/junit.xml \
    "$ASAN_BUILD"/Testing/cpu.tsv
prefix() { sed -u "s/^/$1 | /"; }
status=0

idle() { chrt --idle 0 ionice -c 3 "$@"; }
t0=$(date +%s)
(idle $ASAN_BUILD_CMD >"$T/asan-build.log" 2>&1
 echo $? >"$T/asan-build.status"; echo $(($(date +%s) - t0)) >"$T/asan-build.end") &
build_pid=$!
# A second ctest in the build folder: it writes its own JUnit file, and only Testing/Temporary's
# LastTest.log, which nothing here reads, is shared.
(cd "$BUILD" && idle "${CTEST[@]}" -R '^sm_(debs|rootfs)$' --output-junit "$T/junit-ahead.xml" \
    >"$T/fixtures.log" 2>&1
 echo $? >"$T/fixtures.status"; echo $(($(date +%s) - t0)) >"$T/fixtures.end") &
fixtures_pid=$!
echo "the measuring tests, one at a time (the ASan build and the system tests' fixtures at"
echo "idle priority beside them):"
(cd "$BUILD" && SM_CPU_LOG="$T/cpu.tsv" "${CTEST[@]}" -L measure \
    --output-junit "$T/junit-measure.xml") || status=1
t1=$(date +%s)
wait "$build_pid" "$fixtures_pid"
t3=$(date +%s)
if [ "$(cat "$T/asan-build.status")" != 0 ]; then
    tail -n 60 "$T/asan-build.log"
    echo "the ASan build failed: $BUILD/Testing/asan-build.log has its whole output"
    status=1
fi
if [ "$(cat "$T/fixtures.status")" != 0 ]; then
    cat "$T/fixtures.log"
    echo "the system tests' fixtures failed (above, and in $BUILD/Testing/fixtures.log)"
    status=1
fi

if [ $status -eq 0 ]; then
    echo "the measuring tests took $((t1 - t0)) s, the ASan build $(cat "$T/asan-build.end") s," \
        "the fixtures $(cat "$T/fixtures.end") s; side by side now:"
    (cd "$ASAN_BUILD" && env "${ASAN_ENV[@]}" SM_CPU_LOG="$ROOT/$ASAN_BUILD/Testing/cpu.tsv" \
        "${CTEST[@]}" -L 'unit|integration|fuzz' \
        -LE measure --output-junit "$ROOT/$ASAN_BUILD/Testing/junit.xml" 2>&1
     echo $? >"$T/asan.status") | prefix "asan" &
    asan_pid=$!
    (cd "$BUILD" && SM_CPU_LOG="$T/cpu.tsv" "${CTEST[@]}" -L 'unit|web|system' -LE measure \
        -E '^sm_(debs|rootfs)$' -FS '^sm_(debs|rootfs)$' --output-junit "$T/junit.xml" 2>&1
     echo $? >"$T/gcc.status") | prefix "gcc "
    wait "$asan_pid"
    for s in gcc asan; do
        [ "$(cat "$T/$s.status" 2>/dev/null)" = 0 ] || status=1
    done
fi
t2=$(date +%s)

python3 tests/slowest.py --wall "measuring, the ASan build and fixtures beside=$((t3 - t0))" \
    --wall "side by side=$((t2 - t3))" \
    --cpu gcc="$T/cpu.tsv" --cpu asan="$ASAN_BUILD/Testing/cpu.tsv" \
    gcc="$BUILD/Testing/junit-measure.xml" gcc="$BUILD/Testing/junit-ahead.xml" \
    gcc="$BUILD/Testing/junit.xml" \
    asan="$ASAN_BUILD/Testing/junit.xml"
exit $status
