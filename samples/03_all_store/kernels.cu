// 03_all_store: every thread writes its element into its slot on every rank.
#include "iris/device.hpp"

using namespace iris::device;

// dst is [world][n] on every rank; this rank writes row `ctx.rank` everywhere.
extern "C" __global__ void store_to_all(const __grid_constant__ Context ctx, uint4* dst, const uint4* src, unsigned long long n) {
  uint4* row = dst + ctx.rank * n;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    const uint4 v = src[i];
    // Each rank starts with a different target, so writes spread over all links.
    for (int k = 0; k < ctx.world; ++k) store(ctx, row + i, v, (ctx.rank + k) % ctx.world);
  }
}
