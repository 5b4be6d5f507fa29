#!/usr/bin/env bash
# The cuda target's checks on a GPU machine (docs/cuda.md). Run from the
# repository root there, with the portable wheel built here
# (scripts/build_portable_wheel.sh -> dist/disc-*-cp312-*.whl) carried along
# and ../shared/graphnet beside the repository:
#
#   scripts/gpu-check.sh            # pytest -m cuda + GraphNet dev set
#   GPU_CHECK_GRAPHNET=0 scripts/gpu-check.sh   # pytest only
#   GPU_CHECK_TRAIN_SECONDS=0 scripts/gpu-check.sh     # without the training-mode dev set
#
# The device tool copies the working tree; carry the ignored dist/ file:
#   run(command="scripts/gpu-check.sh", carry=["dist/disc-portable-cp312.tar.xz"])
#
# It installs the package into /tmp/disc-site (no network, no LLVM needed),
# runs the canaries (the GPU tests of PyTorch's caching allocator as DISC's
# device memory and of the newest kernel variants; a failing one switches
# its feature off for the rest of the run), `pytest -m cuda`
# (python/tests/cuda: programs, models, training),
# profiles of two convolutional samples (bench/cuda_profile.py), the
# kernel benchmark, A/Bs of DISC_CUDA_LINEAR_LANES on convtasnet and
# resnet18 (vector grids over rows of any length, or not), of
# DISC_CUDA_REDUCTION_SLOTS on convtasnet
# (whole-range reductions in parts, or the atomics before them), then
# DISC_CUDA_CONV_API, DISC_CUDA_DEPTHWISE and DISC_CUDA_REUSE_BLOCKS on two
# samples each (GPU_CHECK_AB,
# GPU_CHECK_AB_SECONDS, default 100; into
# run.log), then the GraphNet harness with --device cuda
# --dynamic true on the shared dev set (eager, Inductor and DISC in one run;
# then eager and DISC in training mode). Eight files go to $OUT (the device
# tool's output folder; it returns at most 8) or gpu-check-out/: run.log
# (environment, shard logs), pytest-cuda.log, kernels.log, kernels.json,
# graphnet-results.jsonl, graphnet-summary.md, train-results.jsonl,
# train-summary.md.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-check-out}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
SITE=/tmp/disc-site
rm -rf "$SITE"
mkdir -p "$SITE"
if [[ -f dist/disc-portable-cp312.tar.xz ]]; then   # what fits a device call
  tar -xJf dist/disc-portable-cp312.tar.xz -C "$SITE" || exit 2
else
  WHEEL=$(ls dist/disc-*-cp312-*.whl 2>/dev/null | head -1)
  [[ -n "$WHEEL" ]] || { echo "no dist/disc-portable-cp312.tar.xz or dist/disc-*-cp312-*.whl: run scripts/build_portable_wheel.sh first" >&2; exit 2; }
  "$PY" -m pip install -q --no-index --no-deps --no-compile --target "$SITE" "$WHEEL" || exit 2
fi
# Test-only Python packages the machine lacks (expecttest, which PyTorch's
# OpInfo database imports) travel as wheels in .whl/ (docs/cuda.md).
if compgen -G ".whl/*.whl" >/dev/null; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --target "$SITE" .whl/*.whl || true
fi
# GPU_CHECK_PY_FROM_REPO=1: the repository's Python sources replace the
# package's (a Python-only fix then needs no wheel rebuild; _C stays the
# wheel's, so use it only when no C++ changed since the wheel was built).
if [[ "${GPU_CHECK_PY_FROM_REPO:-0}" == "1" ]]; then
  (cd python && find disc -name '*.py' -exec cp --parents {} "$SITE/" \;)
fi
export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
# ptxas, fatbinary and libdevice for compiling kernels there.
if [[ -z "${DISC_CUDA_TOOLKIT:-}" ]]; then
  for dir in "${CUDA_HOME:-}" /usr/local/cuda "$(dirname "$(dirname "$(command -v nvcc 2>/dev/null || echo /x/x)")")"; do
    [[ -n "$dir" && -x "$dir/bin/ptxas" ]] && export DISC_CUDA_TOOLKIT=$dir && break
  done
fi
echo "[gpu-check] toolkit: ${DISC_CUDA_TOOLKIT:-none found}"
{
  nvidia-smi -L || true
  ldd --version | head -1
  timeout 60 "$PY" - <<'PY' || { echo "[gpu-check] disc does not import:"; ldd "$SITE"/disc/_C*.so; }
import disc, torch
print("disc", disc.__file__)
print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name())
print("driver", disc._runtime.cuda_driver_available(), "toolkit", disc._compiler().cuda_toolkit_path())
PY
} 2>&1 | tee "$OUT/run.log"

status=0
DEADLINE=$((SECONDS + ${GPU_CHECK_SECONDS:-480}))   # the device call's limit, less slack
left() { echo $((DEADLINE - SECONDS)); }

# 0. Canaries: the GPU tests of kernel variants that had not run on a GPU
# when they were written, first, in one short process. A variant whose test
# fails is switched off for the rest of the run (its setting exported with
# the earlier behaviour), so that one broken variant does not spoil every
# later figure; run.log says which, and the run's status is a failure.
# GPU_CHECK_CANARIES=0 skips this. "NODE_ID SETTING" per canary:
CANARIES=(
  "cuda/test_cuda_gpu.py::test_row_kernel_variants_on_gpu[warp] DISC_CUDA_ROW_VARIANT=block"
  "cuda/test_cuda_gpu.py::test_row_kernel_variants_on_gpu[auto] DISC_CUDA_ROW_VARIANT=block"
  "cuda/test_cuda_gpu.py::test_depthwise_block_on_the_gpu[generated] DISC_CUDA_DEPTHWISE=cudnn"
  "cuda/test_cuda_gpu.py::test_column_reductions_on_the_gpu[65536] DISC_CUDA_COLUMN_THREADS=0"
  "cuda/test_cuda_gpu.py::test_index32_grids_on_gpu[2147483647] DISC_CUDA_INDEX32_LIMIT=0"
  "cuda/test_cuda_gpu.py::test_index32_grids_on_gpu[1000] DISC_CUDA_INDEX32_LIMIT=0"
  "cuda/test_cuda_gpu.py::test_row_vectors_on_gpu[warp] DISC_CUDA_ROW_VECTORS=0"
  "cuda/test_cuda_gpu.py::test_row_vectors_on_gpu[block] DISC_CUDA_ROW_VECTORS=0"
  "cuda/test_cuda_gpu.py::test_row_cache_on_gpu[warp] DISC_CUDA_ROW_CACHE_BYTES=0"
  "cuda/test_cuda_gpu.py::test_row_cache_on_gpu[block] DISC_CUDA_ROW_CACHE_BYTES=0"
  "cuda/test_cuda_gpu.py::test_convolutions_through_each_cudnn_api_on_the_gpu[backend] DISC_CUDA_CONV_API=legacy"
  "cuda/test_cuda_gpu.py::test_transposed_convolution_and_strided_input_gradient_on_the_gpu[backend] DISC_CUDA_CONV_API=legacy"
  "cuda/test_cuda_gpu.py::test_group_norm_of_one_sample_on_the_gpu DISC_CUDA_FORWARD_SCALARS=0"
  "cuda/test_cuda_gpu.py::test_program_on_gpu_matches_pytorch[sum] DISC_CUDA_REDUCTION_SLOTS=0"
  "cuda/test_cuda_gpu.py::test_freed_blocks_serve_later_requests_on_the_gpu DISC_CUDA_REUSE_BLOCKS=0"
  "cuda/test_cuda_gpu.py::test_linear_bias_in_cublaslts_epilogue_on_the_gpu DISC_LIBRARY_EPILOGUES=0"
  "cuda/test_cuda_gpu.py::test_linear_lanes_on_the_gpu[1] DISC_CUDA_LINEAR_LANES=0"
)
if [[ "${GPU_CHECK_CANARIES:-1}" == "1" ]]; then
  # PyTorch's caching allocator serves every call unless this fails: alone,
  # first, and anything but a pass (a crash too) switches to the pool.
  node=cuda/test_cuda_gpu.py::test_device_memory_comes_from_pytorchs_caching_allocator
  (cd python/tests && timeout 90 "$PY" -m pytest -q -rA -m cuda -p no:cacheprovider "$node") \
    > /tmp/gpu-check-allocator.log 2>&1
  if ! grep -qF -- "PASSED $node" /tmp/gpu-check-allocator.log; then
    echo "[gpu-check] canary $node did not pass: DISC_CUDA_ALLOCATOR=pool for the rest of the run" |
      tee -a "$OUT/run.log"
    tail -5 /tmp/gpu-check-allocator.log | cut -c1-300 | tee -a "$OUT/run.log"
    export DISC_CUDA_ALLOCATOR=pool
    status=1
  fi
  nodes=(); for c in "${CANARIES[@]}"; do nodes+=("${c%% *}"); done
  (cd python/tests && timeout "${GPU_CHECK_CANARY_SECONDS:-150}" \
     "$PY" -m pytest -q -rA -m cuda -p no:cacheprovider "${nodes[@]}") > /tmp/gpu-check-canaries.log 2>&1
  verdicts=/tmp/gpu-check-canary-verdicts.log; : > "$verdicts"
  for c in "${CANARIES[@]}"; do
    node=${c%% *}; setting=${c#* }
    if grep -qF -- "FAILED $node" /tmp/gpu-check-canaries.log ||
       grep -qF -- "ERROR $node" /tmp/gpu-check-canaries.log; then
      echo "[gpu-check] canary $node failed: $setting for the rest of the run" >> "$verdicts"
      export "${setting?}"
      status=1
    elif ! grep -qF -- "PASSED $node" /tmp/gpu-check-canaries.log; then
      echo "[gpu-check] canary $node did not run (time?): nothing switched off" >> "$verdicts"
    fi
  done
  {
    cat "$verdicts"
    grep -E "^(FAILED|ERROR) " /tmp/gpu-check-canaries.log | cut -c1-300
    tail -1 /tmp/gpu-check-canaries.log
  } | tee -a "$OUT/run.log"
fi

# 1. pytest -m cuda: programs, stream, memory, errors (test_cuda_gpu.py), every
# claimed op's OpInfo samples and every zoo model on the device
# (test_cuda_models.py). xdist when there are cores for it.
WORKERS=${GPU_CHECK_WORKERS:-$(( $(nproc) > 4 ? $(nproc) * 3 / 4 : 1 ))}
XDIST=(); "$PY" -c "import xdist" 2>/dev/null && [[ $WORKERS -gt 1 ]] && XDIST=(-n "$WORKERS")
# A hung kernel or barrier must cost one test, not the whole stage.
"$PY" -c "import pytest_timeout" 2>/dev/null && XDIST+=(--timeout "${GPU_CHECK_TEST_TIMEOUT:-120}" --timeout-method thread)
(cd python/tests && timeout "${GPU_CHECK_PYTEST_SECONDS:-$(( $(left) * 40 / 100 ))}" \
   "$PY" -m pytest -q -rfE -m cuda cuda -p no:cacheprovider --show-capture=stderr "${XDIST[@]}" \
  ) > "$OUT/pytest-cuda.log" 2>&1
[[ $? -eq 0 ]] || status=1
grep -E "^(FAILED|ERROR) " "$OUT/pytest-cuda.log" | cut -c1-300 | head -60
tail -1 "$OUT/pytest-cuda.log"

# 1b. Where the convolutional samples' time goes (bench/cuda_profile.py):
# per contender the wall, host and GPU time of one call, its kernel count
# and top kernels by GPU time, and DISC's host cost per launch and library
# call (disc-prof), within GPU_CHECK_PROFILE_SECONDS (default 60; 0 skips
# it). GPU_CHECK_PROFILE: space-separated SAMPLE[:contenders] under the
# dev set; by default the two furthest behind eager in the 2026-11-28 run.
PROFILE_SECONDS=${GPU_CHECK_PROFILE_SECONDS:-60}
PROFILE_SAMPLES=${GPU_CHECK_PROFILE:-torchvision/mobilenet_v3_small:eager,disc,disc-prof timm/convnext_atto.d2_in1k:eager,disc,disc-prof}
PROFILE_ROOT=${GPU_CHECK_SAMPLES:-}
for dir in shared/graphnet/samples gpu-shared/graphnet/samples ../shared/graphnet/samples; do
  [[ -z "$PROFILE_ROOT" && -d $dir ]] && PROFILE_ROOT=$dir
done
if [[ $PROFILE_SECONDS -gt 0 && -n "$PROFILE_ROOT" ]]; then
  profile_end=$((SECONDS + PROFILE_SECONDS))
  for spec in $PROFILE_SAMPLES; do
    [[ $((profile_end - SECONDS)) -gt 10 ]] || break
    echo "[gpu-check] profile $spec"
    timeout $((profile_end - SECONDS)) "$PY" bench/cuda_profile.py "$PROFILE_ROOT/$spec" 2>&1 |
      grep -v -e Warning -e '^W[0-9]' -e USDT | tail -60
  done 2>&1 | tee -a "$OUT/run.log"
fi

# 2. memory-bound kernels vs copy bandwidth, GEMMs vs cuBLAS alone.
if [[ "${GPU_CHECK_KERNELS:-1}" == "1" ]]; then
  timeout "${GPU_CHECK_KERNEL_SECONDS:-150}" "$PY" bench/cuda_kernels.py --out "$OUT/kernels.json" \
    --compilers "${GPU_CHECK_KERNEL_COMPILERS:-eager,disc,disc@DISC_CUDA_ROW_CACHE_BYTES=0,inductor}" \
    --parts "${GPU_CHECK_KERNEL_PARTS:-memory,gemm,host}" 2>&1 | tail -60 | tee "$OUT/kernels.log"
fi

# 2b. A/Bs of switches on a few dev-set samples, alone on the machine
# (interleaved calls, bench/env_ab.py), within GPU_CHECK_AB_SECONDS (default
# 100; 0 skips them). GPU_CHECK_AB: ';'-separated "VAR=A,B SAMPLE..." specs;
# by default cuDNN's graph API against its legacy API on two convolutional
# samples, then the generated depthwise convolutions against cuDNN's, then
# a call's freed blocks reused against every request to the allocator
# (docs/cuda.md). GPU_CHECK_AB_VAR / _VALUES / _SAMPLES give one spec.
SAMPLES=${GPU_CHECK_SAMPLES:-}
for dir in shared/graphnet/samples gpu-shared/graphnet/samples ../shared/graphnet/samples; do
  [[ -z "$SAMPLES" && -d $dir ]] && SAMPLES=$dir
done
AB_SECONDS=${GPU_CHECK_AB_SECONDS:-100}
if [[ -n "${GPU_CHECK_AB_VAR:-}" ]]; then
  AB_SPECS=("$GPU_CHECK_AB_VAR=${GPU_CHECK_AB_VALUES:-1,0} ${GPU_CHECK_AB_SAMPLES:-torchvision/mobilenet_v3_small timm/convnext_atto.d2_in1k mmseg/Fast-SCNN}")
else
  IFS=';' read -ra AB_SPECS <<< "${GPU_CHECK_AB:-DISC_CUDA_LINEAR_LANES=1,0 torchaudio/convtasnet_base_libri2mix torchvision/resnet18;DISC_CUDA_REDUCTION_SLOTS=4096,0 torchaudio/convtasnet_base_libri2mix;DISC_CUDA_CONV_API=backend,legacy torchvision/resnet18 timm/convnext_atto.d2_in1k;DISC_CUDA_DEPTHWISE=generated,cudnn torchvision/mobilenet_v3_small mmseg/Fast-SCNN;DISC_CUDA_REUSE_BLOCKS=1,0 timm/poolformerv2_s12.sail_in1k torchvision/resnet18}"
fi
if [[ $AB_SECONDS -gt 0 && -n "$SAMPLES" ]]; then
  ab_end=$((SECONDS + AB_SECONDS))
  for spec in "${AB_SPECS[@]}"; do
    spec=$(echo "$spec" | xargs)   # trimmed
    setting=${spec%% *}; var=${setting%%=*}; values=${setting#*=}
    for sample in ${spec#* }; do
      [[ $((ab_end - SECONDS)) -gt 10 ]] || break 2
      echo "[gpu-check] A/B $sample: $var=$values"
      timeout $((ab_end - SECONDS)) "$PY" bench/env_ab.py "$SAMPLES/$sample" --device cuda --dynamic \
        --var "$var" --values "$values" --calls 30 2>&1 | grep -v Warning | tail -4
    done
  done 2>&1 | tee -a "$OUT/run.log"
fi

# 3. The GraphNet dev set, --device cuda, eager/DISC/Inductor, in SHARDS
# concurrent harness runs (the time a device call allows); what a shard has
# finished when the time is up is kept. The shards compile and check side
# by side but time calls one at a time (--timing-lock: the GPU time-slices
# between processes, so a call timed beside 14 others measured them). 4. The
# same in training mode (--mode train, eager and DISC) for
# GPU_CHECK_TRAIN_SECONDS (default 120; 0: skipped).
SHARDS=${GPU_CHECK_SHARDS:-8}
TIMING_LOCK=/tmp/gpu-check-timing.lock
# Inductor compiles kernels in a pool of min(32, cores) processes, each
# importing torch, started afresh for every sample (one subprocess per
# sample): with SHARDS processes on the machine each gets its share of
# the cores instead (TORCHINDUCTOR_COMPILE_THREADS=1 compiles in process).
export TORCHINDUCTOR_COMPILE_THREADS=${TORCHINDUCTOR_COMPILE_THREADS:-$(( $(nproc) / SHARDS > 1 ? $(nproc) / SHARDS : 1 ))}
echo "[gpu-check] $SHARDS shards, timed one at a time; Inductor's compile threads: $TORCHINDUCTOR_COMPILE_THREADS" | tee -a "$OUT/run.log"
TRAIN_SECONDS=${GPU_CHECK_TRAIN_SECONDS:-120}
# graphnet_stage NAME BUDGET_S COMPILERS [harness arguments]: NAME-results.jsonl,
# NAME-summary.md, and the shards' logs appended to run.log.
graphnet_stage() {
  local name=$1 budget=$2 compilers=$3; shift 3
  local work=/tmp/gpu-check-$name
  mapfile -t ALL < <(find "$SAMPLES" -name model.py -printf '%h\n' | sort)
  echo "[gpu-check] $name: ${#ALL[@]} samples from $SAMPLES in $SHARDS shards, ${budget}s"
  local pids=() s i mine f first=1
  for ((s = 0; s < SHARDS; s++)); do
    mine=(); for ((i = s; i < ${#ALL[@]}; i += SHARDS)); do mine+=("${ALL[$i]}"); done
    [[ ${#mine[@]} -gt 0 ]] || continue
    timeout "$budget" "$PY" -m disc.bench graphnet "${mine[@]}" --device cuda --dynamic true \
      --compilers "$compilers" --shapes 1 --min-time 0 \
      --timeout "${GPU_CHECK_SAMPLE_TIMEOUT:-150}" --timing-lock "$TIMING_LOCK" \
      --out "$work/$s" "$@" ${GRAPHNET_ARGS:-} \
      > "$work-$s.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || status=1; done
  for ((s = 0; s < SHARDS; s++)); do
    [[ -f $work-$s.log ]] && { echo "== $name shard $s"; tail -60 "$work-$s.log"; }
  done >> "$OUT/run.log"
  # One results file: the first shard's meta line, then every record.
  for f in "$work"/*/results.jsonl; do
    [[ -f $f ]] || continue
    if [[ $first == 1 ]]; then cat "$f"; first=0; else grep -v '^{"meta"' "$f"; fi
  done > "$OUT/$name-results.jsonl"
  mkdir -p "$work/merged"
  "$PY" -m disc.bench report "$OUT/$name-results.jsonl" --out "$work/merged" \
    > /dev/null 2>&1 && cp "$work/merged/summary.md" "$OUT/$name-summary.md"
  tail -50 "$OUT/$name-summary.md" 2>/dev/null
}
if [[ "${GPU_CHECK_GRAPHNET:-1}" == "1" && -n "$SAMPLES" && $(( $(left) - TRAIN_SECONDS )) -gt 60 ]]; then
  graphnet_stage graphnet $(( $(left) - TRAIN_SECONDS - 25 )) "${GPU_CHECK_COMPILERS:-eager,disc,inductor}" \
    --threads 2 --warmup 2 --trials 5 --budget 3
fi
if [[ $TRAIN_SECONDS -gt 0 && -n "$SAMPLES" && $(left) -gt 45 ]]; then
  graphnet_stage train $(( $(left) - 15 )) "${GPU_CHECK_TRAIN_COMPILERS:-eager,disc}" \
    --mode train --threads 1 --warmup 1 --trials 3 --budget 2
fi
echo "[gpu-check] done in ${SECONDS}s, status $status"
exit $status
