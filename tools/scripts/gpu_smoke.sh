#!/usr/bin/env bash
# Quick check on a GPU machine: device info, then every sample at 1, 2 and 4 ranks
# (threads), and at 2 ranks under mpirun when it is there. Logs under $OUT (or /tmp).
set -u
export NCCL_NVLS_ENABLE=0
OUT=${OUT:-/tmp/iris-out}
mkdir -p "$OUT"
B=${BUILD:-build}
nvidia-smi -L 2>&1 | tee "$OUT/devices.txt"
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
fail=0
for s in "$B"/samples/0*_*; do
  [ -x "$s" ] || continue
  case "$s" in *.cpp|*.fatbin) continue ;; esac
  for r in 1 2 4; do
    share=""; [ "$r" -gt "$ngpu" ] && share="--share-gpus"
    [ "$(basename "$s")" = 06_message_passing ] && [ "$r" = 1 ] && continue
    echo "== $(basename "$s") --ranks $r $share"
    timeout 120 "$s" --ranks "$r" $share --iters 5 --warmup 1 2>&1 || { echo "FAILED rc=$?"; fail=1; }
  done
done
if command -v mpirun >/dev/null; then
  for s in 00_load 06_message_passing; do
    echo "== mpirun -np 2 $s"
    timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 -x NCCL_NVLS_ENABLE "$B/samples/$s" --iters 5 2>&1 || { echo "FAILED rc=$?"; fail=1; }
  done
else
  echo "mpirun not found"
fi
exit $fail
