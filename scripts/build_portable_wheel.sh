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
# targets name zstd; lld-22 links them in any order.
if ! command -v patchelf >/dev/null || ! dpkg -s libzstd-dev lld-22 >/dev/null 2>&1; then
  apt-get install -y -q patchelf libzstd-dev lld-22 >/dev/null
fi
export PATH=/usr/lib/llvm-22/bin:$PATH # ld.lld for gcc's -fuse-ld=lld

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
# Bundled next to the extension: oneDNN and what it and the extension need
# beyond glibc and the C++ runtime (OpenMP, OpenCL's ICD loader), which a
# machine without Debian's packages may lack.
bundle() {
  local lib=$1
  [[ -z "$lib" || -e "$PKG/disc/$(basename "$lib")" ]] && return
  cp -L "$lib" "$PKG/disc/"
  chmod u+w "$PKG/disc/$(basename "$lib")"
  strip --strip-unneeded "$PKG/disc/$(basename "$lib")"
  patchelf --set-rpath '$ORIGIN' "$PKG/disc/$(basename "$lib")"
}
for lib in $( (ldd "$EXT"; ldd "$(ldd "$EXT" | awk '/libdnnl/ {print $3}')") |
              awk '/libdnnl|libgomp|libOpenCL/ {print $3}' | sort -u); do
  bundle "$lib"
done
patchelf --set-rpath '$ORIGIN' "$EXT"
strip --strip-unneeded "$EXT"
# The runtime (libdisc_runtime.so, disc._runtime) and disc-run find the
# bundled libraries next to them too.
for f in "$PKG"/disc/libdisc_runtime.so "$PKG"/disc/_runtime*.so; do
  patchelf --set-rpath '$ORIGIN' "$f"
  strip --strip-unneeded "$f"
done
patchelf --set-rpath '$ORIGIN/..' "$PKG/disc/bin/disc-run"
strip --strip-unneeded "$PKG/disc/bin/disc-run"
# Nothing of Debian's LLVM may be needed where the wheel goes.
if ldd "$EXT" | grep -E "libMLIR|libLLVM|libmlir"; then
  echo "[portable] the extension still links an LLVM/MLIR shared library" >&2
  exit 1
fi
mkdir -p "$ROOT/dist"
rm -f "$ROOT"/dist/disc-*-cp312-*.whl
"$VENV/bin/python" -m wheel pack -d "$ROOT/dist" "$PKG" >/dev/null
WHEEL=$(ls "$ROOT"/dist/disc-*-cp312-*.whl)
# For the GPU machine (64 MiB per call): the installed tree, xz-compressed
# (the wheel's zip compression leaves the 170 MB extension at 60 MB; xz
# takes it under 40). scripts/gpu-check.sh takes either.
(cd "$PKG" && tar -cf - disc disc-*.dist-info | xz -6 -T2 > "$ROOT/dist/disc-portable-cp312.tar.xz")
# Every symbol the extension leaves undefined must come from Python or a
# library it names: import it in a fresh interpreter of the target Python.
(cd "$WORK" && PYTHONPATH="$PKG" "$VENV/bin/python" -c "import disc._runtime, disc._C") ||
  { echo "[portable] the extension does not load" >&2; exit 1; }
echo "[portable] $WHEEL: $(du -h "$WHEEL" | cut -f1) (extension $(du -h "$EXT" | cut -f1))"
echo "[portable] dist/disc-portable-cp312.tar.xz: $(du -h "$ROOT/dist/disc-portable-cp312.tar.xz" | cut -f1)"
ldd "$EXT" | sed 's/^/[portable]   /'
# The newest glibc symbol versions it needs (the target machine's glibc must
# be at least that).
for f in "$PKG"/disc/*.so*; do
  echo "[portable] $(basename "$f") needs $(objdump -T "$f" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)"
done
