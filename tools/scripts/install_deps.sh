#!/usr/bin/env bash
# Installs what the build needs from Debian/Ubuntu packages, skipping what is there.
# The CUDA toolkit is expected at /usr/local/cuda (or CUDA_HOME); it is not a package here.
set -euo pipefail
pkgs=(cmake ninja-build g++ pkg-config libgtest-dev libgmock-dev libopenmpi-dev openmpi-bin
      nlohmann-json3-dev libcli11-dev
      clang libclang-rt-14-dev   # clang + libFuzzer/sanitizer runtimes: fuzz.sh, sanitize.sh
      clang-19 lld-19 llvm-19 rocm-device-libs libamd-comgr2   # AMD targets, llvm-objdump: docs/amd.md
      libamdhip64-5)  # the HIP runtime: the hip backend's tests without a GPU
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
cuda=${CUDA_HOME:-/usr/local/cuda}
if [ ! -x "$cuda/bin/nvcc" ]; then
  echo "error: no CUDA toolkit at $cuda (set CUDA_HOME); libiris needs nvcc and NVRTC (CUDA 12.4 or newer)" >&2
  exit 1
fi
