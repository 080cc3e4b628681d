#!/usr/bin/env bash
# Rewrites every golden file, tests/golden/{tokens,ast,tir,cuda,passes}/<name>.iris.<phase>
# (and passes/<name>.tir.passes for TIR listing inputs), from the current compiler output,
# and deletes goldens whose input (<name>.iris or <name>.tir) is gone. Review the
# result with `git diff tests/golden` before committing. fail_ tests are not touched:
# their expectations are the CHECK:STDERR lines inside the .iris files.
# Builds into ${BUILD:-build} (configuring it if needed), like build.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
if [ ! -f "$B/build.ninja" ]; then
  cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" \
        -DCUDAToolkit_ROOT="${CUDA_HOME:-/usr/local/cuda}" >/dev/null
fi
cmake --build "$B" -j "${JOBS:-2}" --target irisc irisc_golden_tests
# The same harness as the tests (compile() to each phase, compile_tir() for a .tir input,
# with the ARGS directive), in
# update mode: a golden is written only when it differs.
IRIS_GOLDEN_UPDATE=1 "$B/tests/irisc_golden_tests" --gtest_filter='Golden/GoldenTest.*' --gtest_brief=1
shopt -s nullglob
for phase in tokens ast tir cuda passes; do
  for g in tests/golden/"$phase"/*.iris."$phase" tests/golden/"$phase"/*.tir."$phase"; do
    if [ ! -f "${g%."$phase"}" ]; then
      rm -v "$g"
    fi
  done
done
git status --short -- tests/golden 2>/dev/null || true
