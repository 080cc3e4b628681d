// 04_atomic_add: every rank adds 1 to every counter on every rank.
#include "iris/device.hpp"

using namespace iris::device;

extern "C" __global__ void add_everywhere(const __grid_constant__ Context ctx, unsigned* counters, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    // Start at the next rank so the ranks do not all hit rank 0 first.
    for (int k = 1; k <= ctx.world; ++k) {
      atomic_add<Order::relaxed, Scope::system>(ctx, counters + i, 1u, (ctx.rank + k) % ctx.world);
    }
  }
}
