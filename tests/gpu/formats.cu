// A tiny kernel built as a cubin and as PTX (see tests/CMakeLists.txt), so the module
// loader is exercised on every code-object format.
#include "iris/device.hpp"

extern "C" __global__ void write_rank(const __grid_constant__ iris::device::Context ctx, int* out) {
  if (threadIdx.x == 0) *out = ctx.rank * 100 + ctx.world;
}
