#!/usr/bin/env bash
# Runs everything that needs GPUs, on a machine that has them, from a build folder
# made elsewhere: the GPU test suite at 1, 2 and 4 ranks in thread mode and under
# mpirun, every sample at 2 and 4 ranks, compute-sanitizer memcheck, iris-bench p2p, ccl,
# ops, launch and gemm, and tracing.
#
#   tools/scripts/gpu_suite.sh [tests] [mpi] [samples] [memcheck] [bench] [ccl] [ops] [launch] [gemm] [trace] [tma]
#   (default: all but tma)
#
# Logs and JSON go to $OUT (default /tmp/iris-gpu-suite); a summary is printed last.
# Exit status: nonzero if any step failed.
set -u
export NCCL_NVLS_ENABLE=0
B=${BUILD:-build}
OUT=${OUT:-/tmp/iris-gpu-suite}
mkdir -p "$OUT"
# bundle_gpu.sh packs the samples.
if [ -f "$B/samples.tar.xz" ] && [ ! -d "$B/samples" ]; then tar xJf "$B/samples.tar.xz" -C "$B"; fi
steps=${*:-tests mpi samples memcheck bench ccl ops launch gemm trace}
summary=()
status=0
step() {  # step NAME LOGFILE TIMEOUT CMD... (CMD may be a function of this script: it
           # gets the limit as $STEP_LIMIT and applies it to what it starts)
  local name=$1 log=$2 limit=$3
  shift 3
  local t0=$SECONDS
  if declare -F "$1" >/dev/null; then
    STEP_LIMIT=$limit "$@" >"$OUT/$log" 2>&1
  else
    timeout "$limit" "$@" >"$OUT/$log" 2>&1
  fi
  local rc=$?
  local line
  line=$(grep -E "^\[  (PASSED|FAILED)  \]|tests? ran|validated|ERROR SUMMARY" "$OUT/$log" | tail -2 | tr '\n' ' ')
  if [ $rc -eq 0 ]; then summary+=("ok    $name ($((SECONDS - t0))s) $line"); else
    summary+=("FAIL  $name rc=$rc ($((SECONDS - t0))s) $line"); status=1; tail -30 "$OUT/$log"; fi
}
# sharded_tests R SHARDS PREFIX: the Ranks/* tests at R ranks in SHARDS processes at once
# (gtest's sharding), process i on GPUs i R .. i R + R - 1 when there is more than one;
# each process's log is PREFIX_shard<i>.log, and this prints each one's result line.
# Fails if any process fails.
sharded_tests() {
  local r=$1 shards=$2 prefix=$3 i g devs pids=() rc=0
  for ((i = 0; i < shards; i++)); do
    devs=""
    if [ "$shards" -gt 1 ]; then
      for ((g = i * r; g < (i + 1) * r; g++)); do devs+="${devs:+,}$g"; done
    fi
    ( [ -n "$devs" ] && export CUDA_VISIBLE_DEVICES=$devs
      exec timeout "${STEP_LIMIT:-600}" env IRIS_TEST_RANKS="$r" GTEST_TOTAL_SHARDS="$shards" GTEST_SHARD_INDEX="$i" \
        "$B/tests/iris_gpu_tests" --gtest_filter="Ranks/*" ) >"$OUT/${prefix}_shard$i.log" 2>&1 &
    pids+=($!)
  done
  local passed=0 n failed=()
  for ((i = 0; i < shards; i++)); do
    if ! wait "${pids[$i]}"; then
      rc=1
      failed+=("$i")
    fi
    echo "shard $i/$shards: $(grep -E "^\[  (PASSED|FAILED)  \]" "$OUT/${prefix}_shard$i.log" | tr '\n' ' ')"
    n=$(sed -nE 's/^\[  PASSED  \] ([0-9]+) tests?\..*/\1/p' "$OUT/${prefix}_shard$i.log" | tail -1)
    passed=$((passed + ${n:-0}))
  done
  for i in "${failed[@]}"; do
    echo "== shard $i ($OUT/${prefix}_shard$i.log), its end:"
    tail -30 "$OUT/${prefix}_shard$i.log"
  done
  echo "[  PASSED  ] $passed tests in $shards processes."
  [ "$rc" = 0 ] || echo "[  FAILED  ] shards ${failed[*]} (their logs above)"
  return $rc
}
# The GEMM samples' baseline (cuBLAS + NCCL) is loaded at run time; on machines where
# those come as Python wheels, put their lib folders on the loader's path.
pylibs=$(python3 - 2>/dev/null <<'PY'
import glob, site
dirs = set()
for s in site.getsitepackages():
    for lib in ("cublas", "nccl", "cuda_runtime"):
        dirs.update(p.rsplit("/", 1)[0] for p in glob.glob(f"{s}/nvidia/{lib}/lib/lib*.so*"))
print(":".join(sorted(dirs)))
PY
)
[ -n "$pylibs" ] && export LD_LIBRARY_PATH="$pylibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ngpu=${NGPU:-$(nvidia-smi -L 2>/dev/null | wc -l)}  # NGPU: pretend (to try the script)
nvidia-smi -L >"$OUT/devices.txt" 2>&1
mpirun_cmd=(mpirun --allow-run-as-root --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE -x IRIS_LOG)
export IRIS_LOG=${IRIS_LOG:-warn}

for s in $steps; do
  case $s in
  tests)
    # The tests that take no rank count (Failures, RuntimeSetup, ...: they pick their
    # own GPUs) in one step; then one step a rank count r, every Ranks/* test at r ranks
    # (slow ones included), split over ngpu / r processes at once, each with r GPUs of
    # its own (CUDA_VISIBLE_DEVICES) and every r-th shard of the tests (gtest sharding):
    # on 4 GPUs the 1-rank tests run as four processes, the 2-rank ones as two, and the
    # processes' JIT compiles (the suite's largest cost on a bare machine) proceed side
    # by side, filling the cache (safe across processes) for the rank counts after. Each
    # step's time is in the summary: the suite's target is 3 minutes a rank count.
    step "gpu tests, threads, rank-less" tests_threads_rankless.log 600 env IRIS_TEST_RANKS=1 \
      "$B/tests/iris_gpu_tests" --gtest_filter='-Ranks/*'
    for r in 1 2 4; do
      shards=$((ngpu / r)); [ "$shards" -lt 1 ] && shards=1
      step "gpu tests, threads, $r ranks ($shards processes)" "tests_threads$r.log" 600 \
        sharded_tests "$r" "$shards" "tests_threads$r"
    done
    ;;
  mpi)
    for np in 1 2 4; do
      share=""; [ "$np" -gt "$ngpu" ] && share="-x IRIS_SHARE_GPUS=1"
      # shellcheck disable=SC2086
      step "gpu tests, mpirun -np $np" "tests_mpi$np.log" 600 env IRIS_SHARE_GPUS=1 "${mpirun_cmd[@]}" -x IRIS_SHARE_GPUS -np "$np" $share "$B/tests/iris_gpu_tests"
    done
    ;;
  samples)
    for exe in "$B"/samples/[01][0-9]_*; do
      [ -x "$exe" ] && [ -f "$exe" ] || continue
      case "$(basename "$exe")" in *.*) continue ;; esac
      for r in 2 4; do
        share=""; [ "$r" -gt "$ngpu" ] && share="--share-gpus"
        # shellcheck disable=SC2086
        step "$(basename "$exe") --ranks $r" "sample_$(basename "$exe")_$r.log" 120 "$exe" --ranks "$r" $share
      done
    done
    ;;
  memcheck)
    cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
    if [ -z "$cs" ]; then summary+=("SKIP  memcheck: compute-sanitizer not found"); continue; fi
    # API errors are off: libiris counts a kernel's parameters by probing
    # cuFuncGetParamInfo until it says "invalid value" (there is no count query), and
    # checks every other driver call itself. Device memory errors are what this is for.
    step "memcheck gpu tests, 1/2 ranks" memcheck.log 600 env IRIS_TEST_RANKS=1,2 "$cs" --tool memcheck \
      --report-api-errors no --error-exitcode 9 "$B/tests/iris_gpu_tests"
    ;;
  bench)
    # shellcheck disable=SC2086
    step "iris-bench p2p" bench_p2p.log 600 "$B/bin/iris-bench" p2p --json "$OUT/bench_p2p.json" ${BENCH_ARGS:-}
    cat "$OUT/bench_p2p.log"
    ;;
  ccl)
    # The collectives against NCCL on the same buffers (nccl-tests' columns), one rank per
    # GPU; on one GPU, 2 ranks share it and NCCL reports SKIPPED. CCL_ARGS adds options.
    share=""; [ "$ngpu" -lt 2 ] && share="--ranks 2 --share-gpus"
    # shellcheck disable=SC2086
    step "iris-bench ccl" bench_ccl.log 600 "$B/bin/iris-bench" ccl --json "$OUT/bench_ccl.json" \
      --svg "$OUT/bench_ccl.svg" $share ${CCL_ARGS:-}
    cat "$OUT/bench_ccl.log"
    ;;
  ops)
    # The fused GEMM + communication ops against cuBLAS + NCCL on the same operands,
    # alternating round by round, one rank per GPU; on one GPU a single rank (NCCL
    # refuses ranks sharing a GPU). OPS_ARGS adds options (e.g. --shapes).
    # shellcheck disable=SC2086
    step "iris-bench ops" bench_ops.log 600 "$B/bin/iris-bench" ops --json "$OUT/bench_ops.json" \
      --svg "$OUT/bench_ops.svg" ${OPS_ARGS:-}
    cat "$OUT/bench_ops.log"
    ;;
  launch)
    # Host time Program::launch adds over launch_raw, sample 07's kernel.
    step "iris-bench launch" bench_launch.log 300 "$B/bin/iris-bench" launch --iris "$B/samples/gemm_all_scatter.iris"
    cat "$OUT/bench_launch.log"
    ;;
  gemm)
    # The sm90 GEMM against cuBLAS: SASS check, ragged shapes for correctness, then the
    # table (GEMM_ARGS adds options, e.g. --dtypes bf16,f16), with the SM clock and
    # power sampled every 200 ms alongside.
    fb="$B/tools/iris-bench_gemm_kernels_gemm_kernels.fatbin"
    if command -v cuobjdump >/dev/null && [ -f "$fb" ]; then
      cuobjdump -sass "$fb" >"$OUT/gemm_sass.txt" 2>&1
      { echo "HGMMA: $(grep -c HGMMA "$OUT/gemm_sass.txt")  local memory (LDL/STL): $(grep -cE '\b(LDL|STL)\b' "$OUT/gemm_sass.txt")"; } >"$OUT/gemm_sass_summary.txt"
      cat "$OUT/gemm_sass_summary.txt"
    fi
    step "iris-bench gemm, ragged shapes" gemm_ragged.log 120 "$B/bin/iris-bench" gemm --dtypes bf16,f16 --layouts kn,nk \
      --shapes 200x304x136,128x256x64,1000x1000x1000,129x264x72,4096x4096x520 --iters 3 --warmup 1 ${IRIS_FILE_ARG:-}
    cat "$OUT/gemm_ragged.log"
    nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 200 >"$OUT/gemm_clocks.csv" 2>&1 &
    smi=$!
    # shellcheck disable=SC2086
    step "iris-bench gemm" gemm.log 600 "$B/bin/iris-bench" gemm --json "$OUT/gemm.json" ${GEMM_ARGS:-} ${IRIS_FILE_ARG:-}
    kill $smi 2>/dev/null
    cat "$OUT/gemm.log"
    ;;
  trace)
    # Samples 06 and 07 traced at 2 ranks (the trace must hold events of both), then
    # each run three times alternating without and with IRIS_TRACE: the cost of tracing.
    for sample in 06_message_passing 07_gemm_all_scatter; do
      exe="$B/samples/$sample"
      [ -x "$exe" ] || continue
      share=""; [ 2 -gt "$ngpu" ] && share="--share-gpus"
      # shellcheck disable=SC2086
      step "$sample traced, 2 ranks" "trace_$sample.log" 300 env IRIS_TRACE="$OUT/trace_$sample.json" "$exe" --ranks 2 $share
      step "$sample trace opens with events of every rank" "trace_check_$sample.log" 60 \
        python3 "$(dirname "$0")/check_trace.py" "$OUT/trace_$sample.json" 2
      cat "$OUT/trace_check_$sample.log"
      for i in 1 2 3; do
        # shellcheck disable=SC2086
        "$exe" --ranks 2 $share >>"$OUT/trace_cost_$sample.log" 2>&1
        # shellcheck disable=SC2086
        IRIS_TRACE="$OUT/trace_cost.json" "$exe" --ranks 2 $share 2>&1 | sed 's/^/traced: /' >>"$OUT/trace_cost_$sample.log"
      done
      grep validated "$OUT/trace_cost_$sample.log"
    done
    ;;
  tma)
    # The GEMM epilogue's stores by TMA (IRIS_TMA_STORES=1, docs/runtime.md) against the
    # consumers' own stores: the GEMM and op tests with them at 1, 2 and 4 ranks, then
    # `iris-bench ops` and `iris-bench gemm` twice each way in turn, every run with its
    # baseline (cuBLAS + NCCL, cuBLAS) in the same rounds. TMA_OPS_ARGS / TMA_GEMM_ARGS
    # replace the shapes.
    step "gpu tests, TMA epilogue stores" tests_tma.log 600 env IRIS_TMA_STORES=1 IRIS_TEST_RANKS=1,2,4 \
      "$B/tests/iris_gpu_tests" --gtest_filter='*IriscWgmma*:*Ops.*'
    for i in 1 2; do
      for t in 0 1; do
        # shellcheck disable=SC2086
        step "iris-bench ops, IRIS_TMA_STORES=$t ($i)" "tma_ops_${t}_$i.log" 600 env IRIS_TMA_STORES=$t \
          "$B/bin/iris-bench" ops --json "$OUT/tma_ops_${t}_$i.json" \
          ${TMA_OPS_ARGS:---ops matmul_reduce_scatter,matmul_all_reduce,matmul_all_scatter --shapes 4096x8192x8192,8192x8192x8192}
        # shellcheck disable=SC2086
        step "iris-bench gemm, IRIS_TMA_STORES=$t ($i)" "tma_gemm_${t}_$i.log" 300 env IRIS_TMA_STORES=$t \
          "$B/bin/iris-bench" gemm --json "$OUT/tma_gemm_${t}_$i.json" \
          ${TMA_GEMM_ARGS:---dtypes bf16 --layouts kn --shapes 8192x8192x8192,4096x4096x4096,1024x8192x8192}
      done
    done
    ;;
  *) echo "unknown step $s"; exit 2 ;;
  esac
done
echo
echo "== summary ($(cat "$OUT/devices.txt" | wc -l) GPUs)"
printf '%s\n' "${summary[@]}"
exit $status
