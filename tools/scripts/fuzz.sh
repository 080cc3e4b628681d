#!/usr/bin/env bash
# Fuzzes irisc's front end (lex -> parse -> sema -> TIR, token/AST dumps; no NVRTC) with
# libFuzzer + ASan + UBSan for SECONDS (default 60):
#
#   tools/scripts/fuzz.sh [SECONDS]
#
# Configures build-fuzz (${FUZZ_BUILD}) with clang and -DIRISC_FUZZ=ON, builds
# irisc_fuzz_frontend, then fuzzes a fresh copy of the seed corpus (tests/fuzz/corpus +
# samples/*/*.iris) with tests/fuzz/iris.dict. Exits non-zero on any crash, timeout
# (> 5 s per input), leak, out-of-memory (> 2 GiB) or sanitizer report; the input that
# did it is left in build-fuzz/fuzz-run/artifacts/ and the log in build-fuzz/fuzz-run/fuzz.log.
# Reproduce one with: build-fuzz/tests/irisc_fuzz_frontend <file>
# Needs clang and libFuzzer (Debian: clang, libclang-rt-NN-dev; tools/scripts/install_deps.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-60}
case $secs in '' | *[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;; esac
B=${FUZZ_BUILD:-build-fuzz}
cuda=${CUDA_HOME:-/usr/local/cuda}

# The first clang++ that can link a libFuzzer binary (clang may be newer than the
# installed compiler-rt, e.g. clang 18 with libclang-rt-14-dev: then clang++-14).
fuzz_clang() {
  local probe
  probe=$(mktemp -d)
  for c in ${FUZZ_CXX:-clang++ clang++-19 clang++-18 clang++-17 clang++-16 clang++-15 clang++-14}; do
    command -v "$c" >/dev/null 2>&1 || continue
    if printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' |
       "$c" -x c++ -fsanitize=fuzzer,address,undefined - -o "$probe/a.out" >/dev/null 2>&1; then
      command -v "$c"
      rm -rf "$probe"
      return 0
    fi
  done
  rm -rf "$probe"
  return 1
}
if ! CXX_BIN=$(fuzz_clang); then
  echo "fuzz: FAILED: no clang++ with libFuzzer found (tools/scripts/install_deps.sh installs clang and libclang-rt-14-dev)" >&2
  exit 1
fi
CC_BIN=$(dirname "$CXX_BIN")/$(basename "$CXX_BIN" | sed 's/clang++/clang/')  # clang++-14 -> clang-14

cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER="$CC_BIN" -DCMAKE_CXX_COMPILER="$CXX_BIN" -DCUDAToolkit_ROOT="$cuda" \
  -DIRISC_FUZZ=ON -DIRIS_BUILD_SAMPLES=OFF -DIRIS_WITH_MPI=OFF >/dev/null
cmake --build "$B" -j "${JOBS:-2}" --target irisc_fuzz_frontend

run=$B/fuzz-run
rm -rf "$run"
mkdir -p "$run/corpus" "$run/artifacts"
cp "$B"/tests/fuzz_corpus/* "$run/corpus/"
seeds=$(ls "$run/corpus" | wc -l)
log=$run/fuzz.log

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
rc=0
# The outer timeout only guards against libFuzzer itself wedging.
timeout --signal=KILL $((secs + 600)) "$B/tests/irisc_fuzz_frontend" \
  -max_total_time="$secs" -max_len=4096 -timeout=5 -rss_limit_mb=2048 \
  -dict=tests/fuzz/iris.dict -artifact_prefix="$run/artifacts/" -print_final_stats=1 \
  "$run/corpus" >"$log" 2>&1 || rc=$?

# libFuzzer's own numbers: the last status line and the final stats.
last=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
cov=$(sed -n 's/.* cov: \([0-9]*\) .*/\1/p' <<<"$last")
ft=$(sed -n 's/.* ft: \([0-9]*\) .*/\1/p' <<<"$last")
corp=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' <<<"$last")
artifacts=$(ls "$run/artifacts")
if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|libFuzzer)|runtime error:|SUMMARY: ' "$log"; then
  report=yes
else
  report=no
fi

stats="${secs}s, ${execs:-?} execs (${rate:-?}/s), cov ${cov:-?}, ft ${ft:-?}, corpus ${seeds} -> ${corp:-?} units"
if [ "$rc" -ne 0 ] || [ -n "$artifacts" ] || [ "$report" = yes ]; then
  echo "---- fuzz log (tail) ----" >&2
  tail -n 80 "$log" >&2
  echo "------------------------" >&2
  for a in $artifacts; do echo "artifact: $run/artifacts/$a" >&2; done
  echo "fuzz: FAILED (exit $rc): $stats; reproduce: $B/tests/irisc_fuzz_frontend <artifact>"
  exit 1
fi
echo "fuzz: OK: $stats"
