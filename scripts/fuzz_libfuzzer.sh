#!/usr/bin/env bash
# `make fuzz-libfuzzer`: builds the libFuzzer target over parse -> verify ->
# compile (fuzz/libfuzzer/compile_fuzzer.cpp) with clang in build-fuzz/ --
# DISC's libraries coverage-instrumented and with AddressSanitizer -- seeds
# it from the lit tests (split at `// -----`) and fuzz/corpus, and runs it
# for DISC_LIBFUZZER_SECONDS (default 60). A crash, hang (> 20 s per input),
# out-of-memory (> 4 GiB) or sanitizer report is written to fuzz/findings/
# and fails the run. The inputs libFuzzer finds interesting accumulate in
# build-fuzz/corpus between runs; fixed findings go to fuzz/corpus/.
#
#   make fuzz-libfuzzer                                 # 60 s
#   DISC_LIBFUZZER_SECONDS=3600 make fuzz-libfuzzer     # a long run
#   DISC_LIBFUZZER_RUNS=1000000 make fuzz-libfuzzer     # a number of executions
#   build-fuzz/fuzz/libfuzzer/disc-compile-fuzzer fuzz/findings/crash-...  # replay
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build-fuzz
CLANG=${CLANG:-clang-22}
if ! command -v "$CLANG" >/dev/null; then
  echo "fuzz-libfuzzer: $CLANG not found (scripts/setup.sh installs clang-22 and libclang-rt-22-dev)" >&2
  exit 1
fi
# -O1: libFuzzer's recommendation, and half the build time of -O3.
cmake -G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" \
  -DCMAKE_C_COMPILER="$CLANG" -DCMAKE_CXX_COMPILER="${CLANG/clang/clang++}" \
  -DDISC_LIBFUZZER=ON -DDISC_BUILD_PYTHON=OFF -DDISC_BUILD_TESTS=OFF >/dev/null
ninja -C "$BUILD" disc-compile-fuzzer

SEEDS="$BUILD/seeds"
CORPUS="$BUILD/corpus"
rm -rf "$SEEDS"
mkdir -p "$SEEDS" "$CORPUS" fuzz/findings
python3 - "$SEEDS" <<'PY'
import glob, hashlib, os, sys
out = sys.argv[1]
files = sorted(glob.glob("test/**/*.mlir", recursive=True)) + sorted(glob.glob("fuzz/corpus/*.mlir"))
for path in files:
    for chunk in open(path).read().split("// -----"):
        if "func.func" in chunk:
            name = hashlib.sha1(chunk.encode()).hexdigest()[:16]
            open(os.path.join(out, name), "w").write(chunk)
print(f"[fuzz-libfuzzer] {len(os.listdir(out))} seed programs from {len(files)} files")
PY

# libMLIR/libLLVM are Debian's, not instrumented: their allocators poison
# memory through headers compiled into DISC (see scripts/test_sanitize.sh).
# Leak checking is off: the run looks for crashes, hangs and memory errors.
export ASAN_OPTIONS="detect_leaks=0:allow_user_poisoning=0:detect_odr_violation=0"
LIMIT=(-max_total_time="${DISC_LIBFUZZER_SECONDS:-60}")
if [[ -n "${DISC_LIBFUZZER_RUNS:-}" ]]; then
  LIMIT=(-runs="$DISC_LIBFUZZER_RUNS")
fi
"$BUILD/fuzz/libfuzzer/disc-compile-fuzzer" "$CORPUS" "$SEEDS" \
  -dict=fuzz/libfuzzer/disc.dict -max_len=16384 -timeout=20 -rss_limit_mb=4096 \
  -artifact_prefix=fuzz/findings/ -print_final_stats=1 "${LIMIT[@]}"
