// 00_load: every thread reads 16-byte elements of a peer's symmetric buffer.
#include "iris/device.hpp"

using namespace iris::device;

extern "C" __global__ void load_from_peer(const __grid_constant__ Context ctx, uint4* dst, const uint4* src, unsigned long long n, int from) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    dst[i] = load(ctx, src + i, from);
  }
}
