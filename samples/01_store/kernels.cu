// 01_store: every thread writes 16-byte elements into a peer's symmetric buffer.
#include "iris/device.hpp"

using namespace iris::device;

extern "C" __global__ void store_to_peer(const __grid_constant__ Context ctx, uint4* dst, const uint4* src, unsigned long long n, int to) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    store(ctx, dst + i, src[i], to);
  }
}
