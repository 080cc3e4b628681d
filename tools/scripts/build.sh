#!/usr/bin/env bash
# Configures and builds into ${BUILD:-build} with Ninja, two jobs by default.
set -euo pipefail
cd "$(dirname "$0")/../.."
cuda=${CUDA_HOME:-/usr/local/cuda}
B=${BUILD:-build}
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" -DCUDAToolkit_ROOT="$cuda" >/dev/null
cmake --build "$B" -j "${JOBS:-2}"
