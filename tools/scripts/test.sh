#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test with ctest. GPU tests report
# SKIPPED on a machine without a GPU; everything else must pass.
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/scripts/install_deps.sh
tools/scripts/build.sh
B=${BUILD:-build}
export NCCL_NVLS_ENABLE=0
ctest --test-dir "$B" -j 2 --output-on-failure --timeout 300
