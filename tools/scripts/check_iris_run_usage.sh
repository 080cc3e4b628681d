#!/usr/bin/env bash
# iris-run's usage errors end with a message and exit status 2, and a job that cannot
# start (no GPU for the backend asked, too many ranks) with a message and status 1:
# never an abort. Usage: check_iris_run_usage.sh IRIS_RUN FILE.iris
set -u
run=$1 file=$2
fail=0
expect() {  # expect STATUS PATTERN -- ARGS...
  local want=$1 pattern=$2
  shift 3
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" != "$want" ] || ! grep -q -- "$pattern" <<<"$out"; then
    echo "FAIL: $* -> status $rc (want $want), output:"; echo "$out" | head -5; fail=1
  else
    echo "ok: $* -> $rc"
  fi
}
expect 2 "unknown backend 'vulkan'" -- "$run" "$file" --backend vulkan
expect 2 "unknown backend 'nope'" -- env IRIS_BACKEND=nope "$run" "$file"
expect 1 "ranks" -- "$run" "$file" --backend host --ranks 100000
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  expect 1 "failed" -- "$run" "$file" --backend cuda
fi
exit $fail
