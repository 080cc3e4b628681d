// 05_atomic_xchg: exchanges into peers' slots; the old values returned prove that
// every exchange happened exactly once.
#include "iris/device.hpp"

using namespace iris::device;

// One thread: swap (rank + 1) into rank 0's single slot, keep what was there.
extern "C" __global__ void xchg_token(const __grid_constant__ Context ctx, unsigned* slot, unsigned* old_out) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    *old_out = atomic_xchg<Order::acq_rel, Scope::system>(ctx, slot, (unsigned)ctx.rank + 1u, 0);
  }
}

// Every thread swaps its tag into slot i of rank `to` and records the old value.
extern "C" __global__ void xchg_slots(const __grid_constant__ Context ctx, unsigned* slots, unsigned* old_out, unsigned long long n, int to,
                                      unsigned tag_base) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    old_out[i] = atomic_xchg<Order::relaxed, Scope::system>(ctx, slots + i, tag_base + (unsigned)i, to);
  }
}
