#!/usr/bin/env bash
# Fuzzes irisc with NVRTC as the oracle for SECONDS (default 60): random well-typed .iris
# programs (tests/fuzz/gen_program.cpp) go through irisc to sm_90a cubins (every 4th also
# to sm_80); a program that passes sema but gives CUDA that NVRTC rejects is a finding
# (so are exceptions and TIR verifier failures). TARGET=gfx942 (or another target) fuzzes
# that target instead; for AMD ones clang-19 is the oracle:
#
#   tools/scripts/fuzz_nvrtc.sh [SECONDS]
#   TARGET=gfx942 tools/scripts/fuzz_nvrtc.sh [SECONDS]
#
# Builds irisc_fuzz_nvrtc in ${BUILD:-build} (configuring it like build.sh if needed) and
# runs it on ${JOBS:-2} threads. Findings are written to ${BUILD}/fuzz-nvrtc/nvrtc_<seed>.iris
# (fuzz-nvrtc-$TARGET/ with TARGET; a comment header holds the class, the compiler's
# error and how to reproduce). SEED=S fixes the first seed (default: random, printed);
# MINIMIZE=1 also minimizes the first program of each class into min_<class>.iris there.
# Exit status: the number of findings (at most 100), so 0 when there are none; 101 when
# the fuzzer could not run (build failure, the target's compiler missing, usage).
set -uo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-60}
case $secs in '' | *[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 101 ;; esac
B=${BUILD:-build}
cuda=${CUDA_HOME:-/usr/local/cuda}
jobs=${JOBS:-2}

if [ ! -f "$B/CMakeCache.txt" ]; then
  cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" -DCUDAToolkit_ROOT="$cuda" >/dev/null || exit 101
fi
cmake --build "$B" -j "$jobs" --target irisc_fuzz_nvrtc || exit 101

out=$B/fuzz-nvrtc${TARGET:+-$TARGET}
rm -rf "$out"
args=(--seconds "$secs" --jobs "$jobs" --out "$out")
[ -n "${SEED:-}" ] && args+=(--seed "$SEED")
[ -n "${TARGET:-}" ] && args+=(--target "$TARGET")
[ "${MINIMIZE:-0}" != 0 ] && args+=(--minimize)
log=$(mktemp)
rc=0
"$B/tests/irisc_fuzz_nvrtc" "${args[@]}" | tee "$log" || rc=$?
findings=$(sed -n 's/^programs: .*, findings: \([0-9]*\)$/\1/p' "$log" | tail -n 1)
rm -f "$log"
if [ -z "$findings" ]; then
  echo "fuzz_nvrtc: FAILED: the fuzzer did not finish (exit $rc)" >&2
  exit 101
fi
if [ "$findings" -gt 0 ]; then
  echo "fuzz_nvrtc: $findings finding(s) in $out; reproduce one with the command in its header"
  [ "$findings" -gt 100 ] && findings=100
  exit "$findings"
fi
echo "fuzz_nvrtc: OK"
exit 0
