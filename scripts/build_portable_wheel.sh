#!/usr/bin/env bash
# Builds the portable wheel (docs/cuda.md, "The portable wheel"):
#   dist/disc-<version>-cp312-cp312-linux_x86_64.whl
# for CPython 3.12 (pyenv's, or $DISC_PORTABLE_PYTHON): MLIR and LLVM linked
# statically (CMake option DISC_PORTABLE), oneDNN bundled next to the
# extension (RPATH $ORIGIN), everything stripped. It needs no LLVM, MLIR or
# oneDNN package where it is installed: the GPU machine's scripts/gpu-check.sh
# installs it there. Build tree: build-portable/ (ccache applies).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

PY=${DISC_PORTABLE_PYTHON:-}
if [[ -z "$PY" ]]; then
  for candidate in "$(pyenv root 2>/dev/null)"/versions/3.12*/bin/python3.12 \
                   /root/.pyenv/versions/3.12*/bin/python3.12; do
    [[ -x "$candidate" ]] && PY=$candidate && break
  done
fi
[[ -x "$PY" ]] || { echo "[portable] no CPython 3.12 (set DISC_PORTABLE_PYTHON)" >&2; exit 1; }
# patchelf sets the RPATH; libzstd-dev: the static LLVM libraries' CMake
# targets name zstd.
if ! command -v patchelf >/dev/null || ! dpkg -s libzstd-dev >/dev/null 2>&1; then
  apt-get install -y -q patchelf libzstd-dev >/dev/null
fi

VENV=$ROOT/.venv-portable
[[ -x $VENV/bin/python ]] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q "scikit-build-core>=0.10" "nanobind>=2.0" wheel

echo "[portable] building the wheel with $("$VENV/bin/python" --version) in build-portable/"
rm -rf "$ROOT/dist/portable-raw"
"$VENV/bin/python" -m pip wheel . --no-build-isolation --no-deps -q \
  -w "$ROOT/dist/portable-raw" \
  -C build-dir=build-portable \
  -C cmake.define.DISC_PORTABLE=ON \
  -C cmake.define.DISC_BUILD_TESTS=OFF

RAW=$(ls "$ROOT"/dist/portable-raw/disc-*.whl)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$VENV/bin/python" -m wheel unpack -d "$WORK" "$RAW" >/dev/null
PKG=$(ls -d "$WORK"/disc-*)
EXT=$(ls "$PKG"/disc/_C*.so)
DNNL=$(ldd "$EXT" | awk '/libdnnl/ {print $3}')
if [[ -n "$DNNL" ]]; then
  cp -L "$DNNL" "$PKG/disc/"
  strip --strip-unneeded "$PKG/disc/$(basename "$DNNL")"
fi
patchelf --set-rpath '$ORIGIN' "$EXT"
strip --strip-unneeded "$EXT"
# Nothing of Debian's LLVM may be needed where the wheel goes.
if ldd "$EXT" | grep -E "libMLIR|libLLVM|libmlir"; then
  echo "[portable] the extension still links an LLVM/MLIR shared library" >&2
  exit 1
fi
mkdir -p "$ROOT/dist"
rm -f "$ROOT"/dist/disc-*-cp312-*.whl
"$VENV/bin/python" -m wheel pack -d "$ROOT/dist" "$PKG" >/dev/null
WHEEL=$(ls "$ROOT"/dist/disc-*-cp312-*.whl)
echo "[portable] $WHEEL: $(du -h "$WHEEL" | cut -f1) (extension $(du -h "$EXT" | cut -f1))"
ldd "$EXT" | sed 's/^/[portable]   /'
