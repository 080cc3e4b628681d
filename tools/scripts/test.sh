#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test with ctest. GPU tests report
# SKIPPED on a machine without a GPU; everything else must pass.
set -euo pipefail
cd "$(dirname "$0")/../.."
# Each stage's wall time, printed as it ends and once more at the end (where a CI run's
# minutes went).
stages=()
t0=$SECONDS
stage() {  # stage NAME: the time since the last stage ended
  stages+=("$(printf '%-34s %5d s' "$1" $((SECONDS - t0)))")
  echo "== test.sh: $1 took $((SECONDS - t0)) s"
  t0=$SECONDS
}
trap 'printf "== test.sh stages:\n"; printf "   %s\n" "${stages[@]}"' EXIT
tools/scripts/install_deps.sh
stage "install_deps.sh"
tools/scripts/build.sh
stage "build.sh"
B=${BUILD:-build}
export NCCL_NVLS_ENABLE=0
ctest --test-dir "$B" -j 2 --output-on-failure --timeout 300
stage "ctest"
# The compiler under sanitizers and short fuzzing runs (clang and libFuzzer come from
# install_deps.sh above): the front end under libFuzzer, then random well-typed programs
# through NVRTC (every program that passes sema must give CUDA that NVRTC accepts), and
# through clang-19 for gfx942. FUZZ_SECONDS=0 / FUZZ_NVRTC_SECONDS=0 / FUZZ_AMD_SECONDS=0
# skip them.
tools/scripts/sanitize.sh
stage "sanitize.sh"
if [ "${FUZZ_SECONDS:-60}" -gt 0 ]; then
  tools/scripts/fuzz.sh "${FUZZ_SECONDS:-60}"
  stage "fuzz.sh"
fi
if [ "${FUZZ_NVRTC_SECONDS:-60}" -gt 0 ]; then
  tools/scripts/fuzz_nvrtc.sh "${FUZZ_NVRTC_SECONDS:-60}"
  stage "fuzz_nvrtc.sh"
fi
if [ "${FUZZ_AMD_SECONDS:-60}" -gt 0 ]; then
  TARGET=gfx942 tools/scripts/fuzz_nvrtc.sh "${FUZZ_AMD_SECONDS:-60}"
  stage "fuzz_nvrtc.sh (gfx942)"
fi
