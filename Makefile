# nvhcq's front door. `make run` builds and runs the main job; `make test` builds
# and runs every test (GPU tests skip on machines without an NVIDIA GPU).
# The real build is CMake (+ Ninja) in $(BUILD_DIR); this file only drives it.

BUILD_DIR ?= build
ASAN_DIR  ?= build-asan
DIST_DIR  ?= dist
JOBS      ?= $(shell nproc)
CMAKE_ARGS ?=
# Debian packages the build and the tests need.
DEB_PACKAGES := cmake g++ make ninja-build pkg-config libgtest-dev libgmock-dev
# `make fuzz`: libFuzzer targets built with clang in $(FUZZ_DIR), each run for
# FUZZ_SECONDS on its seed corpus (CI runs it from `make test`).
FUZZ_DIR ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_DEB_PACKAGES := clang libclang-rt-14-dev
# `make compare`: the benchmark suite on this machine's GPU (bench_compare), its
# report (markdown + PNG charts) in $(COMPARE_OUT). gnuplot draws the charts and is
# installed here on demand, not by `make test`.
COMPARE_OUT ?= bench-report
COMPARE_DEB_PACKAGES := gnuplot-nox

.PHONY: all deps configure build run test test-unit test-stress test-asan fuzz format dist compare clean

all: build

deps:
	@scripts/ensure-deb-packages.sh $(DEB_PACKAGES)

$(BUILD_DIR)/build.ninja: | deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)

configure: $(BUILD_DIR)/build.ninja

build: deps configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# `make run`: a small synthetic model (seeded random weights at a ~125M-parameter
# shape, Q4_K_M), made once and kept in $(BUILD_DIR)/models/, and a short
# generation with it on the CPU.
RUN_MODEL  ?= $(BUILD_DIR)/models/small-q4_k_m.gguf
RUN_PROMPT ?= Once upon a time
RUN_TOKENS ?= 48

run: build $(RUN_MODEL)
	$(BUILD_DIR)/nvhcq run -m $(RUN_MODEL) -p "$(RUN_PROMPT)" -n $(RUN_TOKENS) --seed 42

$(RUN_MODEL): | build
	@mkdir -p $(dir $@)
	$(BUILD_DIR)/nvhcq synth --preset small --type q4_k_m --seed 1 -o $@

# The stress label (minutes of GPU load) is left out; `make test-stress` runs it, one test at a time.
test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) -LE stress
	@if [ "$$CI" = "true" ]; then $(MAKE) --no-print-directory fuzz; fi

test-unit: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) -L unit

test-stress: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -L stress

test-asan: deps
	cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DNVHCQ_SANITIZE=ON $(CMAKE_ARGS)
	cmake --build $(ASAN_DIR) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(ASAN_DIR) --output-on-failure -j $(JOBS) -L unit

# Missing clang/libFuzzer fails only in CI; scripts/run-fuzzers.sh says what is missing.
fuzz:
	@scripts/ensure-deb-packages.sh $(DEB_PACKAGES) $(FUZZ_DEB_PACKAGES) || [ "$$CI" != "true" ]
	FUZZ_DIR=$(FUZZ_DIR) FUZZ_SECONDS=$(FUZZ_SECONDS) JOBS=$(JOBS) scripts/run-fuzzers.sh

# Without gnuplot the report is still written; it says how to draw the charts later.
compare: build
	@scripts/ensure-deb-packages.sh $(COMPARE_DEB_PACKAGES) || echo "make compare: continuing without charts"
	$(BUILD_DIR)/bench/bench_compare --out $(COMPARE_OUT)

format:
	clang-format -i $$(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh')

# Binaries for a GPU machine (docs/gpu-testing.md): the nvhcq command, the test
# programs and the benchmarks, with the scripts that run them.
dist: build
	scripts/make-dist.sh $(BUILD_DIR) $(DIST_DIR)
	@du -sh $(DIST_DIR)

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(DIST_DIR) $(FUZZ_DIR)
