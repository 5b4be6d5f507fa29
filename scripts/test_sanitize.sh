#!/usr/bin/env bash
# `make test-sanitize`: builds the compiler, runtime, tools, unit tests and
# the Python extension with AddressSanitizer + UndefinedBehaviorSanitizer in
# build-sanitize/, then runs lit, the GoogleTest suite and a pytest subset
# against that build. Any sanitizer report fails the run (UBSan does not
# recover; ASan aborts at the first error).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build-sanitize
PY=.venv/bin/python
LLVM_BIN=/usr/lib/llvm-22/bin

cmake -G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDISC_SANITIZE=ON \
  -DPython_EXECUTABLE="$PWD/$PY" >/dev/null
ninja -C "$BUILD"

ASAN_LIB=$(g++ -print-file-name=libasan.so)
UBSAN_LIB=$(g++ -print-file-name=libubsan.so)
# Python and PyTorch allocate for the process lifetime: leak checking is off.
# allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons its slabs from
# header code compiled into DISC (instrumented) while the Debian libLLVM /
# libMLIR that share those allocators are not: their legitimate accesses
# would be reported. allocator_may_return_null=1: an allocation too large
# for ASan (a 4 TiB broadcast copied by a test) fails as in a plain run.
# Everything else aborts at the first report.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:halt_on_error=1:detect_odr_violation=0:allow_user_poisoning=0:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

echo "[sanitize] lit"
"$LLVM_BIN/lit" -q "$BUILD/test"
echo "[sanitize] GoogleTest"
"$BUILD/unittests/disc-runtime-tests" --gtest_brief=1
# The cuda target's host code against the fake driver, cuBLASLt and cuDNN
# (the graph API's descriptors included); skips itself without ptxas.
"$BUILD/unittests/disc-cuda-host-tests" --gtest_brief=1

# The Python package with this build's extension: python/disc with _C
# taken from build-sanitize (a temporary tree on PYTHONPATH).
PKG=$(mktemp -d)
trap 'rm -rf "$PKG"' EXIT
cp -r python/disc "$PKG/disc"
cp "$BUILD"/lib/Bindings/Python/_C*.so "$PKG/disc/"
echo "[sanitize] pytest subset (ops, errors, reliability, OpInfo gaps)"
PYTHONPATH="$PKG" LD_PRELOAD="$ASAN_LIB $UBSAN_LIB" DISC_FUZZ_SECONDS=${DISC_FUZZ_SECONDS:-30} \
  "$PY" -m pytest -q -p no:cacheprovider -x \
  python/tests/test_api_and_errors.py python/tests/test_elementwise.py \
  python/tests/test_data_movement.py python/tests/test_reduce_gather_scatter.py \
  python/tests/test_attention.py python/tests/reliability \
  python/tests/frontend/test_opinfo_gaps.py
