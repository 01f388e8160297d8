# Makefile — owns the developer and CI entry points. CMake and CTest do the
# work; this file only orders it.
#   make deps     install missing Debian packages (scripts/deps.sh)
#   make build    configure and build in $(BUILD_DIR)
#   make test     build, then one CTest run: unit tests, install test, fuzz
#                 (Clang builds), and the ASan+UBSan and TSan sub-builds
#   make demo     run the demo application (strobe-demo) with its report
#   make bench    run every benchmark in $(BUILD_DIR)/bench, then the viewer's in Chromium
#   make install  build and install only the library (static and shared),
#                 headers, the strobe CLI, strobe.pc (strobe_server.pc) and
#                 the CMake package into $(PREFIX), from its own build in
#                 $(INSTALL_BUILD_DIR): no tests, fuzzers, demo, benches or
#                 npm packages, and no system package installed (it checks
#                 what the library needs and names what is missing)
#   make dist-windows  build the library and strobe.exe for Windows x86-64
#                 (mingw-w64) and zip them with the headers, import library,
#                 strobe.pc and the CMake package: $(BUILD_DIR)/strobe-windows-x86_64.zip
#                 (scripts/dist-windows.sh, docs/platforms.md §Windows)
#   make clean    remove $(BUILD_DIR) (the sanitizer builds live inside it)
# Skip the sanitizer sub-builds locally with: make test CTEST_ARGS='-LE sanitizer'

BUILD_DIR  ?= build
BUILD_TYPE ?= RelWithDebInfo
# A missing test dependency is a configure error (STROBE_REQUIRE_TEST_DEPS,
# docs/conventions.md §Tests) under `make test` and in CI (CI=true); a
# `make test CTEST_ARGS=...` run by hand picks its tests and may skip some.
REQUIRE_TEST_DEPS ?= AUTO
JOBS       ?= 2
PREFIX     ?= /usr/local
INSTALL_BUILD_DIR ?= $(BUILD_DIR)/library
INSTALL_BUILD_TYPE ?= Release
CTEST_ARGS ?=

.PHONY: all deps build test demo bench install dist-windows clean

all: build

deps:
	@bash scripts/deps.sh

build: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DCMAKE_INSTALL_PREFIX=$(PREFIX) \
	  -DSTROBE_REQUIRE_TEST_DEPS=$(REQUIRE_TEST_DEPS)
	cmake --build $(BUILD_DIR) -j$(JOBS)

test: REQUIRE_TEST_DEPS = $(if $(CTEST_ARGS),AUTO,ON)
test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS) $(CTEST_ARGS)

# The demo: ~10 s of the instrumented data grid with the embedded server and
# viewer on 127.0.0.1, its server pushing every completed operation over
# OTLP/HTTP to examples/demo/otlp_receiver.py (started first, stopped after the
# demo: it prints what arrived and writes out/demo-otlp-received.json; bounded
# at 900 s); writes out/demo.strobe and out/demo-report.json and
# prints the stage summary; then exports out/demo.perfetto-trace from the capture
# and replays frame 12's deep capture offline into out/demo-replay-frame12.png
# (a run too short to reach frame 12, as its run info's `frames` says, took
# none: it says so instead); merges it with the sender process's capture into
# out/all.strobe and lists its deep captures with their process (strobe calls);
# then the Python binding's demo (examples/python/demo.py, asyncio tasks on fiber
# lanes, commands and a Starlette service's requests as operations under
# sessions, whose reports it prints) writes out/python-demo.strobe and prints
# its `strobe report`.
# DEMO_ARGS='--serve' keeps it serving until Ctrl-C;
# DEMO_ARGS='--serve --seconds 120' serves for 120 s, then stops.
DEMO_ARGS ?= --seconds 10 --out out

demo: build
	@mkdir -p out; rm -f out/otlp-receiver.port; \
	python3 examples/demo/otlp_receiver.py --port-file out/otlp-receiver.port --summary out/demo-otlp-received.json \
	  --max-seconds 900 & rpid=$$!; \
	for i in $$(seq 300); do [ -s out/otlp-receiver.port ] && break; sleep 0.1; done; \
	otlp=""; if [ -s out/otlp-receiver.port ]; then \
	  otlp="--otlp-endpoint http://127.0.0.1:$$(cat out/otlp-receiver.port)/v1/traces"; \
	else echo "OTLP receiver: not listening after 30 s: the demo runs without the push"; fi; \
	$(BUILD_DIR)/examples/strobe-demo $(DEMO_ARGS) $$otlp; st=$$?; \
	kill -TERM $$rpid 2>/dev/null; wait $$rpid; exit $$st
	@if [ -f out/demo.strobe ]; then \
	  $(BUILD_DIR)/tools/strobe export out/demo.strobe --format perfetto --quiet -o out/demo.perfetto-trace && \
	  echo "wrote out/demo.perfetto-trace: the capture in Perfetto's own format (open it in ui.perfetto.dev)"; \
	  $(BUILD_DIR)/tools/strobe export out/demo.strobe --format otlp --service strobe_demo --quiet -o out/demo.otlp.json && \
	  echo "wrote out/demo.otlp.json: its operations as OpenTelemetry traces (OTLP/JSON: POST it to a collector's /v1/traces, docs/otel.md)"; \
	  frames=$$(sed -n 's/^frames=//p' out/demo-report-run.txt 2>/dev/null); \
	  if [ "$${frames:-13}" -gt 12 ]; then \
	    $(BUILD_DIR)/examples/strobe-demo --replay out/demo.strobe --frame 12 --out out/demo-replay-frame12.png; \
	  else \
	    echo "no replay of frame 12: the run ended before it (frames=$$frames in out/demo-report-run.txt), so the demo took no deep capture"; \
	  fi; \
	fi
	@if [ -f out/demo.strobe ]; then \
	  echo "why the demo's slowest frame was slow (strobe explain out/demo.strobe; docs/explain.md):" && \
	  $(BUILD_DIR)/tools/strobe explain --quiet out/demo.strobe && \
	  echo "its stages, slowest p95 first (strobe query: SQL over the capture, docs/query.md):" && \
	  $(BUILD_DIR)/tools/strobe query --quiet out/demo.strobe \
	    "WITH r AS (SELECT name, total_ns AS t, row_number() OVER (PARTITION BY name ORDER BY total_ns) AS k, \
	       count(*) OVER (PARTITION BY name) AS n FROM stages) \
	     SELECT name, n, round(max(CASE WHEN k = (n * 95 + 99) / 100 THEN t END) / 1e3, 1) AS p95_us \
	     FROM r GROUP BY name ORDER BY p95_us DESC LIMIT 5"; \
	fi
	@if [ -f out/demo.strobe ] && [ -f out/sender.strobe ]; then \
	  $(BUILD_DIR)/tools/strobe merge out/demo.strobe out/sender.strobe -o out/all.strobe && \
	  echo "wrote out/all.strobe: the screen and sender processes on one timeline (strobe merge; strobe info out/all.strobe)" && \
	  echo "its deep captures, each named with the process it came from (strobe calls out/all.strobe --frame 12 --process screen):" && \
	  $(BUILD_DIR)/tools/strobe calls --quiet out/all.strobe && \
	  echo "see both processes in the viewer, each frame handed between them as one frame: $(BUILD_DIR)/tools/strobe view --merge out/demo.strobe out/sender.strobe"; \
	fi
	@if [ -f $(BUILD_DIR)/python/strobe/__init__.py ]; then \
	  mkdir -p out && PYTHONPATH=$(BUILD_DIR)/python /usr/bin/python3 examples/python/demo.py out/python-demo.strobe && \
	  $(BUILD_DIR)/tools/strobe report out/python-demo.strobe --top 12; \
	fi

bench: build
	@set -e; \
	for b in $(BUILD_DIR)/bench/*; do \
	  if [ -f "$$b" ] && [ -x "$$b" ]; then echo "== $$b"; "$$b"; fi; \
	done; \
	if [ -f scripts/bench-callgrind.sh ]; then bash scripts/bench-callgrind.sh; fi; \
	echo "== bench/viewer_bench.mjs"; bash scripts/npm-deps.sh && node bench/viewer_bench.mjs --build $(BUILD_DIR)

install:
	@bash scripts/deps.sh --check library
	cmake -S . -B $(INSTALL_BUILD_DIR) -DCMAKE_BUILD_TYPE=$(INSTALL_BUILD_TYPE) -DCMAKE_INSTALL_PREFIX=$(PREFIX) \
	  -DSTROBE_BUILD_TESTS=OFF -DSTROBE_SANITIZER_TESTS=OFF -DSTROBE_BUILD_EXAMPLES=OFF -DSTROBE_BUILD_BENCH=OFF
	cmake --build $(INSTALL_BUILD_DIR) -j$(JOBS)
	cmake --install $(INSTALL_BUILD_DIR) --prefix $(PREFIX)

dist-windows:
	@bash scripts/deps.sh --check cross
	bash scripts/dist-windows.sh . $(BUILD_DIR)/dist-windows $(BUILD_DIR)/strobe-windows-x86_64.zip

clean:
	rm -rf $(BUILD_DIR)
