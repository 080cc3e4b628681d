#!/usr/bin/env bash
# The layering rules of libiris's sources, checked by reading them (ctest: layers.runtime):
#  - only runtime/src/backend/<name>/ includes a driver header (cuda.h, the CUDA runtime,
#    HIP's headers);
#  - the standard library's host side (runtime/src/library/) is a client of the public
#    API: it neither includes the backend nor calls it;
#  - libiris reaches the compiler by two doors: compiler/contract/ (to load: the launch
#    contract, the host code-object format) and compiler/driver/compile.hpp (to compile:
#    compile, targets, types, toolchains); the host interpreter also reads compiler/tir/;
#  - no public header (runtime/include) includes a compiler header.
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
report "a compiler header other than its two doors (compiler/contract/, compiler/driver/compile.hpp)" \
  "$(grep -rnE '#include *"compiler/' --include='*.cpp' --include='*.hpp' . ../include |
     sed 's|^\./||; s|^\.\./include/|../include/|' |
     grep -vE '#include *"compiler/(contract/[a-z_]+|driver/compile)\.hpp"' |
     grep -vE '^backend/host/[a-z_]+\.(cpp|hpp):[0-9]+: *#include *"compiler/tir/[a-z_]+\.hpp"')"
report "a public header includes a compiler header (users of libiris include none)" \
  "$(grep -rnE '#include *"compiler/' --include='*.hpp' ../include | sed 's|^\.\./include/|../include/|')"
[ "$bad" = 0 ] && echo "check_layers: runtime/src keeps its layers"
exit "$bad"
