#!/usr/bin/env bash
# The main job: install what is missing, build, then run sample 00_load on every GPU
# present. Without a GPU it says so and runs the CPU tests instead.
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
  echo "no GPU found: running the CPU tests instead"
  ctest --test-dir "$B" -j 2 --output-on-failure
elif [ $rc -ne 0 ]; then
  exit $rc
fi
