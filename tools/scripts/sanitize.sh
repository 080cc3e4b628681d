#!/usr/bin/env bash
# Builds the compiler and the CPU tests with AddressSanitizer + UndefinedBehaviorSanitizer
# (+ LeakSanitizer) into build-asan (${ASAN_BUILD}) and runs them with ctest:
#
#   tools/scripts/sanitize.sh
#
#   1. compiler tests:  ctest -R "golden|Golden|irisc|Nvrtc|nvrtc"  (golden files, every
#                       sample and dsl/ file to its kernel source, the
#                       NVRTC toolchain, NVRTC device-header tests)
#   2. other CPU tests: everything else that was built (runtime unit tests, no-driver,
#                       JIT cache, the host backend's interpreter tests, every .iris file
#                       through iris-run); the GPU suite, the samples, iris-bench and MPI
#                       are not built (they need nvcc for device code, a GPU or mpirun).
#
# Any sanitizer report fails the test it happens in (halt_on_error), so the script exits
# non-zero. Uses clang when installed (same toolchain as fuzz.sh), else g++.
# tests/fuzz/lsan.supp is the LeakSanitizer suppressions file (one entry: the HIP
# runtime's own leak when hipInit fails without an AMD GPU; it also explains the one
# NVRTC-related runtime option below).
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${ASAN_BUILD:-build-asan}
cuda=${CUDA_HOME:-/usr/local/cuda}
root=$(pwd)

# The first compiler that links an ASan+UBSan program: clang (matching compiler-rt),
# else g++. ASAN_CXX/ASAN_CC choose one explicitly.
san_ok() {
  local probe ok=1
  probe=$(mktemp -d)
  printf 'int main() { return 0; }\n' | "$1" -x c++ -fsanitize=address,undefined - -o "$probe/a.out" \
    >/dev/null 2>&1 && ok=0
  rm -rf "$probe"
  return $ok
}
CXX_BIN=${ASAN_CXX:-}
if [ -z "$CXX_BIN" ]; then
  for c in clang++ clang++-19 clang++-18 clang++-17 clang++-16 clang++-15 clang++-14 g++; do
    command -v "$c" >/dev/null 2>&1 && san_ok "$c" && { CXX_BIN=$(command -v "$c"); break; }
  done
fi
if [ -z "$CXX_BIN" ]; then
  echo "sanitize: FAILED: no C++ compiler links -fsanitize=address,undefined" >&2
  exit 1
fi
CC_BIN=${ASAN_CC:-$(dirname "$CXX_BIN")/$(basename "$CXX_BIN" | sed 's/clang++/clang/; s/g++/gcc/')}

san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# intercept_tls_get_addr=0: the sanitizer runtimes up to LLVM 16 / GCC 13 misread a
# dlopen'd library's dynamic TLS block as a glibc-2.19 one when it happens to start at
# a particular page offset; LeakSanitizer then scans a bogus range at exit and dies with
# "Tracer caught signal 11" (no leak involved). libnvrtc's TLS triggers it for some
# inputs (seen with an all-store kernel at --emit=ptx). See tests/fuzz/lsan.supp.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=1:intercept_tls_get_addr=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="suppressions=$root/tests/fuzz/lsan.supp:print_suppressions=1"

start=$(date +%s)
# Debug keeps assertions on; -O1 keeps the tests fast.
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_COMPILER="$CC_BIN" -DCMAKE_CXX_COMPILER="$CXX_BIN" -DCUDAToolkit_ROOT="$cuda" \
  -DCMAKE_C_FLAGS="$san -O1" -DCMAKE_CXX_FLAGS="$san -O1" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DIRIS_BUILD_SAMPLES=OFF -DIRIS_WITH_MPI=OFF -DIRISC_FUZZ=OFF >/dev/null

# The compiler, its CLI and every CPU test binary: the ones named here, any target named
# *golden* and any other *_tests target, but not the GPU suite (nvcc-built kernels, needs
# a GPU) nor MPI. Missing names are skipped, not errors.
available=$(cmake --build "$B" --target help | sed -n 's/^\([A-Za-z0-9_.+-]*\): phony$/\1/p')
want=(irisc_lib irisc iris-run iris_unit_tests iris_no_driver_tests iris_device_header_tests
      irisc_nvrtc_tests iris_jit_cache_tests)
want+=($(grep -iE 'golden|_tests$' <<<"$available" | grep -vE '^(iris_gpu_tests|.*mpi.*)$' || true))
mapfile -t want < <(printf '%s\n' "${want[@]}" | awk '!seen[$0]++')
targets=()
for t in "${want[@]}"; do
  if grep -qx -- "$t" <<<"$available"; then targets+=("$t"); else echo "sanitize: no target $t, skipped"; fi
done
cmake --build "$B" -j "${JOBS:-2}" --target "${targets[@]}"
built=$(date +%s)

export NCCL_NVLS_ENABLE=0
rc=0
echo "sanitize: compiler tests (golden, irisc, NVRTC)"
# Every sample and dsl/ file to its kernel source only (IRIS_GOLDEN_SOURCE_ONLY): irisc's
# part of those compiles is what is instrumented here; NVRTC and clang are not, and the
# plain ctest compiles them whole (they were half of this stage's time).
IRIS_GOLDEN_SOURCE_ONLY=1 ctest --test-dir "$B" -j 2 --output-on-failure --timeout 600 --no-tests=error \
  -R "golden|Golden|irisc|Nvrtc|nvrtc" || rc=1
echo "sanitize: other CPU tests"
# *_NOT_BUILT and host.gpu_suite: tests of binaries deliberately not built here (the
# GPU suite) and host.iris_bench_ccl, _ops, _cli and _table (iris-bench links nvcc-built kernels:
# not built here). package.*: it installs the whole build, which is partial here, and links an
# outside program against these instrumented archives.
ctest --test-dir "$B" -j 2 --output-on-failure --timeout 600 \
  -E "golden|Golden|irisc|Nvrtc|nvrtc|_NOT_BUILT|MpiBootstrap|host\.gpu_suite|host\.iris_bench_(ccl|ops|cli|table)|package\." || rc=1
done_at=$(date +%s)

if [ "$rc" -ne 0 ]; then
  echo "sanitize: FAILED (build $((built - start))s, tests $((done_at - built))s; see the test output above)"
  exit 1
fi
echo "sanitize: OK (ASan+UBSan+LSan, $(basename "$CXX_BIN"); build $((built - start))s, tests $((done_at - built))s)"
