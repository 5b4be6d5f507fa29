# DISC: the two entry points are `make demo` and `make test`; both install
# what is missing (scripts/setup.sh) and build first.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV        := .venv
PYTHON      := $(VENV)/bin/python
LLVM_BIN    := /usr/lib/llvm-22/bin
BUILD_DIR   := build
# Parallel pytest workers (pytest-xdist); CI machines have 2 cores.
PYTEST_JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: help setup build test test-lit test-unit test-python test-cuda-emulated test-libfuzzer test-sanitize fuzz fuzz-libfuzzer wheel-portable demo bench bench-graphnet clean

help:
	@echo "make demo    set up, build, run the bundled example at several shapes"
	@echo "make test    set up, build, run every test (lit, gtest, pytest)"
	@echo "make build   (re)build the compiler, runtime, tools and disc._C"
	@echo "make test-sanitize  ASan+UBSan build (build-sanitize/): lit, gtest, pytest subset"
	@echo "make fuzz    the mutation fuzzer for FUZZ_SECONDS (default 600)"
	@echo "make fuzz-libfuzzer  the libFuzzer target (clang, build-fuzz/) for DISC_LIBFUZZER_SECONDS (60)"
	@echo "make bench   compile-time and run-time benchmarks (bench/)"
	@echo "make bench-graphnet  eager vs TorchInductor vs DISC on ../shared/graphnet"

setup:
	@scripts/setup.sh

# One build for everything: scikit-build-core configures CMake (Ninja, ccache)
# in $(BUILD_DIR), builds every target (disc-opt, unit tests, disc._C) and
# installs the package editable into the venv.
build: setup
	@echo "[build] cmake + ninja in $(BUILD_DIR)/ (through pip install -e .)"
	@$(PYTHON) -m pip install --no-build-isolation --no-deps -q -e . \
	  2> >(grep -v "^WARNING: Location" >&2)

test: build
	@$(MAKE) --no-print-directory test-lit test-unit test-python test-cuda-emulated test-libfuzzer

test-lit:
	@echo "[test] lit + FileCheck"
	@$(LLVM_BIN)/lit -sv $(BUILD_DIR)/test

test-unit:
	@echo "[test] GoogleTest (runtime)"
	@$(BUILD_DIR)/unittests/disc-runtime-tests --gtest_brief=1
	@$(BUILD_DIR)/unittests/disc-cuda-host-tests --gtest_brief=1

test-python:
	@echo "[test] pytest"
	@$(PYTHON) -m pytest -q -n $(PYTEST_JOBS) --dist worksteal --durations=15 python/tests

# The cuda target without a GPU (docs/cuda.md): the op suites run through
# target cuda-emulated (the cuda grid mapping executed on the CPU, checked
# against PyTorch), and every program is also compiled for target cuda
# (ptxas must accept each kernel for sm_80 and sm_90).
CUDA_EMULATED_TESTS = python/tests/test_elementwise.py \
  python/tests/test_data_movement.py python/tests/test_reduce_gather_scatter.py \
  python/tests/frontend/test_stitch_fusion.py python/tests/frontend/test_aten_ops.py \
  python/tests/frontend/test_model_zoo.py python/tests/test_attention.py \
  python/tests/test_library_ops.py python/tests/test_library_epilogues.py \
  python/tests/training/test_training.py python/tests/test_memory.py
test-cuda-emulated:
	@echo "[test] cuda target without a GPU: cuda-emulated runs + cuda compiles"
	@DISC_TARGET=cuda-emulated DISC_TEST_CUDA_COMPILE=1 \
	  $(PYTHON) -m pytest -q -n $(PYTEST_JOBS) --dist worksteal --durations=10 \
	  $(CUDA_EMULATED_TESTS)

# AddressSanitizer + UndefinedBehaviorSanitizer: a build of its own in
# build-sanitize/ (about 25 min from scratch on 2 cores), then lit, gtest and
# the pytest subset of scripts/test_sanitize.sh.
test-sanitize: setup
	@scripts/test_sanitize.sh

# The mutation fuzzer over compile + invocation (fuzz/disc_fuzz.py); CI runs
# 30 s of it inside make test (python/tests/reliability/test_fuzz.py).
FUZZ_SECONDS ?= 600
fuzz: build
	@$(PYTHON) fuzz/disc_fuzz.py --seconds $(FUZZ_SECONDS)

# The libFuzzer target over parse -> verify -> compile, coverage-guided
# (clang, build-fuzz/: about 8 min from scratch on 2 cores):
# scripts/fuzz_libfuzzer.sh. `make test` runs it for 40 s; a finding fails.
fuzz-libfuzzer: setup
	@scripts/fuzz_libfuzzer.sh

test-libfuzzer:
	@echo "[test] libFuzzer: parse -> verify -> compile, 40 s"
	@DISC_LIBFUZZER_SECONDS=40 scripts/fuzz_libfuzzer.sh

# The portable wheel for CPython 3.12 (docs/cuda.md): MLIR/LLVM static,
# oneDNN bundled; what scripts/gpu-check.sh installs on the GPU machine.
wheel-portable: setup
	@scripts/build_portable_wheel.sh

demo: build
	@$(PYTHON) examples/demo.py

bench: build
	@$(PYTHON) bench/compile_time.py

# The GraphNet benchmark (docs/graphnet.md): every sample of the shared set
# at its example shape, torch.compile's defaults, eager vs DISC vs Inductor
# (about 30 min on 2 cores); results.jsonl, summary.md and plots in
# $(GRAPHNET_OUT). Dynamic shapes: GRAPHNET_ARGS="--shapes 3 --generalize
# --dynamic true" (Inductor's dynamic compiles make that run hours long).
GRAPHNET_SAMPLES ?= ../shared/graphnet/samples
GRAPHNET_OUT     ?= bench-out/graphnet
GRAPHNET_ARGS    ?= --compilers eager,disc,inductor --timeout 900
bench-graphnet: build
	@$(PYTHON) -m disc.bench graphnet $(GRAPHNET_SAMPLES) $(GRAPHNET_ARGS) --out $(GRAPHNET_OUT)

clean:
	rm -rf $(BUILD_DIR) build-sanitize build-fuzz
