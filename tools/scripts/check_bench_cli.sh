#!/usr/bin/env bash
# iris-bench's command line: --help and each command's --help exit 0 with the usage;
# no command, an unknown command or option, a bad count, size, factor or shape, and a
# missing value exit 2 with a message naming what was wrong. The ctest host.iris_bench_cli
# runs it.
#
#   tools/scripts/check_bench_cli.sh IRIS_BENCH
set -uo pipefail
bench=$1
fail=0
# expect STATUS PATTERN ARGS...: exits STATUS and prints PATTERN (grep -E) on stdout or stderr.
expect() {
  local want=$1 pattern=$2
  shift 2
  local out status
  out=$("$bench" "$@" 2>&1)
  status=$?
  if [ "$status" != "$want" ] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: iris-bench $* exited $status (want $want), output:"
    echo "$out" | head -5
    fail=1
  fi
}
expect 0 '^usage: iris-bench <command>' --help
expect 0 '^usage: iris-bench <command>' ops --help
expect 0 '^usage: iris-bench <command>' ccl -h
expect 2 '^usage: iris-bench <command>'
expect 2 'not expected: frob' frob
expect 2 'not expected: --frob' ops --frob
expect 2 "--iters: '0' is not a whole number >= 1" ops --iters 0
expect 2 "--rounds: 'x' is not a whole number >= 1" ops --rounds x
expect 2 "--warmup: '-1' is not a whole number >= 0" ccl --warmup -1
expect 2 "--factor: '0.5' is not a number > 1" ccl --factor 0.5
expect 2 "--shapes: '12x' is not MxNxK" ops --shapes 12x
expect 2 '--sizes: every size must be a positive multiple of 16 bytes' p2p --sizes 17
expect 2 '--iters' ccl --iters
expect 2 'ranks' ops --ranks 0
expect 2 "--iters: 'abc' is not a whole number >= 1" ops --iters abc --iters 5
expect 2 'not expected: 4x5x6' gemm --shapes 1x2x3 4x5x6
IRIS_RANKS=abc expect 0 '^usage: iris-bench <command>' --help
IRIS_RANKS=abc expect 2 'IRIS_RANKS' ops
[ "$fail" = 0 ] && echo "check_bench_cli: every case exits and says as expected"
exit "$fail"
