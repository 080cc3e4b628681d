// 02_all_load: every thread reads the same element from every rank and sums them.
#include "iris/device.hpp"

using namespace iris::device;

extern "C" __global__ void sum_all_ranks(const __grid_constant__ Context ctx, float4* dst, const float4* src, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int r = 0; r < ctx.world; ++r) {
      float4 v = load(ctx, src + i, r);
      acc.x += v.x;
      acc.y += v.y;
      acc.z += v.z;
      acc.w += v.w;
    }
    dst[i] = acc;
  }
}
