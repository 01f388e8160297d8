# Makefile — owns the developer and CI entry points. CMake and CTest do the
# work; this file only orders it.
#   make deps     install missing Debian packages (scripts/deps.sh)
#   make build    configure and build in $(BUILD_DIR)
#   make test     build, then one CTest run: unit tests, install test, fuzz
#                 (Clang builds), and the ASan+UBSan and TSan sub-builds
#   make demo     run the demo application (strobe-demo) with its report
#   make bench    run every benchmark in $(BUILD_DIR)/bench, then the viewer's in Chromium
#   make install  install into $(PREFIX)
#   make clean    remove $(BUILD_DIR) (the sanitizer builds live inside it)
# Skip the sanitizer sub-builds locally with: make test CTEST_ARGS='-LE sanitizer'

BUILD_DIR  ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS       ?= 2
PREFIX     ?= /usr/local
CTEST_ARGS ?=

.PHONY: all deps build test demo bench install clean

all: build

deps:
	@bash scripts/deps.sh

build: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DCMAKE_INSTALL_PREFIX=$(PREFIX)
	cmake --build $(BUILD_DIR) -j$(JOBS)

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS) $(CTEST_ARGS)

# The demo: ~10 s of the instrumented data grid with the embedded server and
# viewer on 127.0.0.1; writes out/demo.strobe and out/demo-report.json and
# prints the stage summary. DEMO_ARGS='--serve' keeps it serving.
DEMO_ARGS ?= --seconds 10 --out out

demo: build
	$(BUILD_DIR)/examples/strobe-demo $(DEMO_ARGS)

bench: build
	@set -e; \
	for b in $(BUILD_DIR)/bench/*; do \
	  if [ -f "$$b" ] && [ -x "$$b" ]; then echo "== $$b"; "$$b"; fi; \
	done; \
	if [ -f scripts/bench-callgrind.sh ]; then bash scripts/bench-callgrind.sh; fi; \
	echo "== bench/viewer_bench.mjs"; bash scripts/npm-deps.sh && node bench/viewer_bench.mjs --build $(BUILD_DIR)

install: build
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD_DIR)
