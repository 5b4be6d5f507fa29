#!/usr/bin/env bash
# The cuda target's checks on a GPU machine (docs/cuda.md). Run from the
# repository root there, with the portable wheel built here
# (scripts/build_portable_wheel.sh -> dist/disc-*-cp312-*.whl) carried along
# and ../shared/graphnet beside the repository:
#
#   scripts/gpu-check.sh            # pytest -m cuda + GraphNet dev set
#   GPU_CHECK_GRAPHNET=0 scripts/gpu-check.sh   # pytest only
#
# The device tool copies the working tree; carry the ignored dist/ file:
#   run(command="scripts/gpu-check.sh", carry=["dist/disc-portable-cp312.tar.xz"])
#
# It installs the package into /tmp/disc-site (no network, no LLVM needed),
# runs `pytest -m cuda` (python/tests/cuda/test_cuda_gpu.py), then the
# GraphNet harness with --device cuda --dynamic true on the shared dev set
# (eager, Inductor and DISC in one run). Logs and reports go to $OUT (the
# device tool's output folder) or gpu-check-out/.
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
export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
# ptxas, fatbinary and libdevice for compiling kernels there.
if [[ -z "${DISC_CUDA_TOOLKIT:-}" ]]; then
  for dir in "${CUDA_HOME:-}" /usr/local/cuda "$(dirname "$(dirname "$(command -v nvcc 2>/dev/null || echo /x/x)")")"; do
    [[ -n "$dir" && -x "$dir/bin/ptxas" ]] && export DISC_CUDA_TOOLKIT=$dir && break
  done
fi
echo "[gpu-check] toolkit: ${DISC_CUDA_TOOLKIT:-none found}"
nvidia-smi -L || true
"$PY" - <<'PY' 2>&1 | tee "$OUT/environment.txt"
import disc, torch
print("disc", disc.__file__)
print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name())
print("driver", disc._runtime.cuda_driver_available(), "toolkit", disc._compiler().cuda_toolkit_path())
PY

status=0
(cd python/tests && "$PY" -m pytest -q -m cuda cuda -p no:cacheprovider) 2>&1 | tee "$OUT/pytest-cuda.log"
[[ ${PIPESTATUS[0]} -eq 0 ]] || status=1

if [[ "${GPU_CHECK_GRAPHNET:-1}" == "1" && -d ../shared/graphnet/samples ]]; then
  "$PY" -m disc.bench graphnet ../shared/graphnet/samples --device cuda \
    --dynamic true --out "$OUT/graphnet" ${GRAPHNET_ARGS:-} 2>&1 | tee "$OUT/graphnet.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
fi
exit $status
