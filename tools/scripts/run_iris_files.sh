#!/usr/bin/env bash
# Runs every .iris file of the repository on the host backend at 1, 2 and 4 ranks with
# generated inputs (iris-run): each kernel either runs, or its failure is reported by a
# check (an access outside a tensor, a deadlock, a division by zero...) with its line.
# A crash, a hang or a usage error fails the script. Files that do not compile (the
# diagnostics tests under tests/golden) are counted and skipped.
#
#   tools/scripts/run_iris_files.sh [build]        (default build folder: build)
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${1:-${BUILD:-build}}
irisc="$B/bin/irisc"
run="$B/bin/iris-run"
for tool in "$irisc" "$run"; do
  [ -x "$tool" ] || { echo "run_iris_files: $tool is not built" >&2; exit 1; }
done
# Small inputs: a 16 MiB heap per rank is plenty, and zeroing it is most of a run.
export IRIS_HEAP_SIZE=${IRIS_HEAP_SIZE:-16MiB}
files=$(git ls-files '*.iris' 2>/dev/null || find . -name '*.iris' -not -path './build*')
ran=0 reported=0 skipped=0 failed=0
for f in $files; do
  if ! "$irisc" "$f" --target=host --emit=tir -o /dev/null 2>/dev/null; then
    skipped=$((skipped + 1))
    continue
  fi
  for ranks in 1 2 4; do
    out=$(timeout 120 "$run" "$f" --ranks "$ranks" --size 300 2>&1)
    rc=$?
    # A sanitizer's report (the ASan build runs this too) is a failure whatever the exit.
    if grep -qE "ERROR: (Address|Leak)Sanitizer|runtime error:" <<<"$out"; then rc=99; fi
    case $rc in
      0) ran=$((ran + 1)) ;;
      1)
        reported=$((reported + 1))
        echo "reported  $f ($ranks ranks): $(grep -m1 'failed on' <<<"$out" | cut -c1-220)"
        ;;
      *)
        failed=$((failed + 1))
        echo "FAILED    $f ($ranks ranks): exit $rc"
        tail -5 <<<"$out"
        ;;
    esac
  done
done
echo "run_iris_files: $ran runs clean, $reported with a check's report, $failed failed; $skipped files do not compile (diagnostics tests)"
[ "$failed" -eq 0 ]
