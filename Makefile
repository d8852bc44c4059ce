# sockmatrix: thin wrapper over CMake. `make demo` and `make test` are the two commands a fresh
# Debian machine needs; both install what is missing first.

BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)


# Debian packages the build, the tests, the demo and the benchmarks need.
DEB_PACKAGES := build-essential clang cmake pkg-config \
	libnanomsg-dev libwebsockets-dev libcjson-dev libcurl4-openssl-dev libcmocka-dev libnl-route-3-dev \
	libsqlite3-dev libssl-dev libclang-rt-dev python3 iperf3 sockperf iproute2 iputils-ping sqlite3 \
	nginx-light openssl curl chromium-headless-shell systemd openssh-server openssh-client ansible-core \
	mmdebstrap systemd-container prometheus

.PHONY: all deps build build-asan test check test-unit test-integration test-system test-web package demo demo-estimate demo-down demo-once bench bench-plain clean format

all: build

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
	@# Node and npm by command, not by package: a machine may have them from elsewhere, whose
	@# nodejs conflicts with Debian's npm package.
	@command -v npm >/dev/null || { SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null; }
	@# The dashboard's chart library and the browser tests' driver, pinned by their lock files.
	@for d in web tests/web; do \
	  [ -f $$d/package-lock.json ] || continue; \
	  [ $$d/node_modules/.package-lock.json -nt $$d/package-lock.json ] && continue; \
	  echo "npm ci in $$d"; (cd $$d && npm ci --no-audit --no-fund --loglevel=error) || exit 1; \
	done

# The Makefile's own builds treat warnings as errors (SM_WERROR, off by default for whoever
# builds the released source with a newer compiler). build/ is a Release build, as a packager
# makes it: the system tests install packages packed from it, with no build of their own, and
# a warning only -O3 finds fails here. To debug, build-asan/ is a Debug build.
$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DSM_WERROR=ON

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

$(ASAN_BUILD)/CMakeCache.txt:
	CC=clang cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSM_SANITIZER=address -DSM_WERROR=ON

build-asan: deps $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(JOBS)

# As root the lab can be made: a root-only test that skips there fails (tests/integration/smtest.py).
ROOT_TESTS := SM_REQUIRE_ROOT_TESTS=$(shell [ "$$(id -u)" -eq 0 ] && echo 1 || echo 0)

# ctest runs two tests per CPU: most integration tests wait on daemons, timers and runs (one
# per CPU left the CPUs 40% idle), the tests that measure run alone (RUN_SERIAL), and a test
# that keeps a CPU busy takes two slots (PROCESSORS 2). tests/CMakeLists.txt says how each test
# is marked; TEST_JOBS=2 runs one per CPU here.
TEST_JOBS  ?= $(shell echo $$((2 * $$(nproc))))
CTEST := ctest --output-on-failure --parallel $(TEST_JOBS)

# Each test runs once, on the build it needs, but the unit tests, which run on both:
# tests/suite.sh. First, one at a time, the gcc build's tests that judge measurements (label
# measure: a sanitizer build runs two to three times slower and what they would judge is its
# timing), while the ASan+UBSan build (clang) is made at idle priority on the CPU they leave.
# Then, side by side, what does not measure: on the gcc build the unit tests, the browser tests
# and the system tests (the packages of a Release build, the roll-out over ssh and onto booted
# Debian containers); on the ASan build the unit tests, the integration tests that do not
# measure (the daemons on loopback and in lab namespaces, every fault of the campaign: where a
# memory error would show) and the fuzz targets. At the end, the ten slowest tests and each
# phase's wall time.
test: build
	@BUILD=$(BUILD) ASAN_BUILD=$(ASAN_BUILD) TEST_JOBS=$(TEST_JOBS) \
	  ASAN_BUILD_CMD="$(MAKE) --no-print-directory build-asan BUILD=$(BUILD) ASAN_BUILD=$(ASAN_BUILD)" \
	  bash tests/suite.sh

# The edit-compile-test loop: the unit tests and the integration tests that run the daemons on
# loopback (label loopback: no lab, no browser, no system test), on the gcc build.
check: build
	cd $(BUILD) && $(ROOT_TESTS) $(CTEST) -L 'unit|loopback'

test-unit: build
	cd $(BUILD) && $(CTEST) -L unit

test-integration: build
	cd $(BUILD) && $(ROOT_TESTS) $(CTEST) -L integration

test-system: build
	cd $(BUILD) && $(ROOT_TESTS) $(CTEST) -L system

test-web: build
	cd $(BUILD) && $(ROOT_TESTS) $(CTEST) -L web

# The Debian packages sockmatrix-agent and sockmatrix-coordinator, in $(BUILD)/.
package: build
	cd $(BUILD) && cpack -G DEB

# The main job: a local lab (namespaces when root, loopback otherwise), a coordinator and three
# agents, the 2010 test as a matrix run, and the table comparing the hosts.
# The estimate comes first, before the build: demo.sh says it and how it is made.
demo: demo-estimate build
	SM_BIN_DIR=$(CURDIR)/$(BUILD)/bin SM_DEMO_ESTIMATED=1 bash deploy/lab/demo.sh

demo-estimate:
	@bash deploy/lab/demo.sh estimate

demo-down:
	SM_BIN_DIR=$(CURDIR)/$(BUILD)/bin bash deploy/lab/demo.sh down

# The single-machine comparison (no coordinator): sockmatrix-agent --once.
demo-once: build
	./$(BUILD)/bin/sockmatrix-agent --once --preset seed-tcp-unix

# The benchmarks need the SM_BENCH build (sm-swarm): configure it on, whatever the cache says.
bench: deps
	cmake -S . -B $(BUILD) -DSM_BENCH=ON
	cmake --build $(BUILD) -j $(JOBS)
	python3 bench/run.py --agent ./$(BUILD)/bin/sockmatrix-agent
	python3 bench/http.py --agent ./$(BUILD)/bin/sockmatrix-agent
	python3 bench/swarm.py --bin-dir ./$(BUILD)/bin

# The stream workload beside the plain C loop alone (docs/benchmarks.md): the UDS ratios.
bench-plain: deps
	cmake -S . -B $(BUILD) -DSM_BENCH=ON
	cmake --build $(BUILD) -j $(JOBS) --target sockmatrix-agent sm-bench-plain
	python3 bench/run.py --only plain --agent ./$(BUILD)/bin/sockmatrix-agent

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
