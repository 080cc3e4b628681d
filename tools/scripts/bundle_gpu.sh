#!/usr/bin/env bash
# Copies what the GPU suite needs from a build (binaries, the cubins and .iris files
# next to the samples) into a small folder to carry to a GPU machine:
#   tools/scripts/bundle_gpu.sh [build] [build-gpu]
# then there: BUILD=build-gpu tools/scripts/gpu_suite.sh (which unpacks samples.tar.xz)
set -euo pipefail
cd "$(dirname "$0")/../.."
src=${1:-build}
dst=${2:-build-gpu}
rm -rf "$dst"
mkdir -p "$dst/samples" "$dst/tests" "$dst/bin"
for f in "$src"/samples/[01][0-9]_*; do
  case "$f" in *.cpp | *.fatbin) continue ;; esac
  [ -f "$f" ] && cp "$f" "$dst/samples/"
done
cp "$src"/samples/*.cubin "$src"/samples/*.host "$src"/samples/*.iris "$dst/samples/"
cp "$src/tests/iris_gpu_tests" "$dst/tests/"
cp "$src/bin/iris-bench" "$src/bin/irisc" "$dst/bin/"
mkdir -p "$dst/tools"
cp "$src"/tools/iris-bench_gemm_kernels_gemm_kernels.fatbin "$dst/tools/" 2>/dev/null || true
strip --strip-debug "$dst"/samples/[01][0-9]_*[!.]?? "$dst/tests/iris_gpu_tests" "$dst"/bin/* 2>/dev/null || true
# The samples are mostly the same code (each links libiris): packed, they travel in a
# tenth of the space (gpu_suite.sh unpacks them).
tar cJf "$dst/samples.tar.xz" -C "$dst" samples && rm -rf "$dst/samples"
du -sh "$dst"
