#!/usr/bin/env bash
# The package test (ctest -L package): installs this build into a fresh prefix, builds
# tests/package/outside against it with find_package(Iris) as a user would, checks that
# the program needs no MPI (nor CUDA) library, and runs it on the host backend.
#   package_test.sh <cmake> <build dir> <work dir> <cmake generator> <c++ compiler>
set -euo pipefail
cmake=$1 build=$2 work=$3 generator=$4 cxx=$5
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
log=
trap 'rc=$?; if [ $rc -ne 0 ] && [ -n "$log" ]; then echo "--- $log:"; tail -n 40 "$log"; fi' EXIT

log=$work/install.log
"$cmake" --install "$build" --prefix "$prefix" >"$log"
for f in bin/irisc bin/iris-run bin/iris-bench lib/libiris.a include/iris/iris.hpp include/iris/device.hpp \
         lib/cmake/Iris/IrisConfig.cmake lib/cmake/Iris/IrisConfigVersion.cmake lib/cmake/Iris/IrisKernels.cmake; do
  [ -e "$prefix/$f" ] || { echo "error: the install lacks $f"; exit 1; }
done

log=$work/configure.log
"$cmake" -S "$here/outside" -B "$work/outside" -G "$generator" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" >"$log"
log=$work/build.log
"$cmake" --build "$work/outside" -j 2 >"$log"
log=

# The outside project uses the install only: no path into this build or source tree
# (but its own folders: the work folder may lie in the build, its sources in the tree).
leaks=$(cat "$work/outside/CMakeCache.txt" "$work/outside"/*.ninja "$work/outside/Makefile" 2>/dev/null |
        tr ' ;"=' '\n\n\n\n' | grep -F -e "$build/" -e "$src/" | grep -v -F -e "$work" -e "$here/outside" |
        sort -u || true)
if [ -n "$leaks" ]; then
  echo "error: the outside project refers to this build or source tree:"
  echo "$leaks"
  exit 1
fi

app=$work/outside/outside
needed=$(readelf -d "$app" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "outside needs: $(echo $needed)"
if echo "$needed" | grep -i -E 'mpi|cuda|nvrtc'; then
  echo "error: $app links an MPI or CUDA library; libiris must dlopen them"
  exit 1
fi
if ldd "$app" | grep -i mpi; then
  echo "error: $app loads an MPI library"
  exit 1
fi
IRIS_BACKEND=host IRIS_RANKS=2 "$app"
