#!/usr/bin/env bash
# Installs everything DISC needs, idempotently: Debian packages (MLIR/LLVM 22,
# oneDNN, Ninja, ccache, GoogleTest, clang for the libFuzzer target), a Python venv in .venv with the pinned
# CPU build of PyTorch, and the build tools of the Python package.
# Usage: scripts/setup.sh            (what `make setup` runs)
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools liblld-22-dev
  libdnnl-dev ninja-build ccache libgtest-dev cmake g++ python3-venv
  clang-22 libclang-rt-22-dev redis-server
)
# torch is pinned: 2.13.0 is the CPU build on this machine's disk; anything
# else would download a multi-GB CUDA build.
PIP_PACKAGES=(
  "torch==2.13.0" "numpy" "pytest" "pytest-xdist>=3.2" "nanobind>=2.0"
  "scikit-build-core>=0.10" "matplotlib" "tqdm" "expecttest" "redis"
)

log() { printf '[setup] %s\n' "$*"; }

missing=()
for p in "${APT_PACKAGES[@]}"; do
  # cmake and g++ may come from elsewhere (pip, pyenv): only ask apt when
  # the command is absent.
  case "$p" in
    cmake) command -v cmake >/dev/null && continue ;;
    g++) command -v g++ >/dev/null && continue ;;
    python3-venv) python3 -c 'import venv, ensurepip' 2>/dev/null && continue ;;
  esac
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  log "Debian packages: all present"
fi

PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  log "creating .venv with $($PY --version)"
  "$PY" -m venv .venv
fi
VPY=.venv/bin/python
stamp=.venv/.disc-setup-stamp
want="$(printf '%s\n' "${PIP_PACKAGES[@]}")"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log "installing Python packages: ${PIP_PACKAGES[*]}"
  # (This machine's pip config names local mirrors that may be absent;
  # pip warns about each one: keep the log readable.)
  "$VPY" -m pip install -q --upgrade pip 2> >(grep -v "^WARNING: Location" >&2)
  "$VPY" -m pip install -q "${PIP_PACKAGES[@]}" 2> >(grep -v "^WARNING: Location" >&2)
  printf '%s' "$want" > "$stamp"
else
  log "Python packages: all present"
fi
