#!/usr/bin/env bash
# The layering rules of libiris's sources, checked by reading them (ctest: layers.runtime):
#  - only runtime/src/backend/<name>/ includes a driver header (cuda.h, the CUDA runtime,
#    HIP's headers);
#  - the standard library's host side (runtime/src/library/) is a client of the public
#    API: it neither includes the backend nor calls it.
# Prints each breach with its file and line, and exits 1 when there is one.
#   tools/scripts/check_layers.sh [repository root]
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root/runtime/src" || exit 2
bad=0
report() {  # rule, then grep -n lines
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    echo "check_layers: $1: runtime/src/$line"
    bad=1
  done <<< "$2"
}
report "a driver header outside backend/<name>/" \
  "$(grep -rnE '#include *[<"](cuda\.h|cuda_runtime[a-z_]*\.h|hip/[a-z_/]+\.h)[>"]' --include='*.cpp' --include='*.hpp' . |
     sed 's|^\./||' | grep -vE '^backend/(cuda|hip|host)/')"
report "the library calls the backend (use Context)" \
  "$(grep -rnE '#include *"backend/|backend::' --include='*.cpp' --include='*.hpp' library | grep -vE ':[0-9]+: *//')"
[ "$bad" = 0 ] && echo "check_layers: runtime/src keeps its layers"
exit "$bad"
