#!/usr/bin/env bash
# The main job: install what is missing, build, then run sample 00_load on every GPU
# present. Without a GPU it says so and runs the sample on the host backend instead (2
# ranks as CPU threads, the .iris kernels interpreted and every access checked).
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/scripts/install_deps.sh
tools/scripts/build.sh
B=${BUILD:-build}
export NCCL_NVLS_ENABLE=0
set +e
"$B/samples/00_load"
rc=$?
set -e
if [ $rc -eq 77 ]; then
  echo "no GPU found: running 00_load on the host backend instead (IRIS_BACKEND=host: CPU threads, every access checked)"
  "$B/samples/00_load" --backend host --ranks 2
elif [ $rc -ne 0 ]; then
  exit $rc
fi
