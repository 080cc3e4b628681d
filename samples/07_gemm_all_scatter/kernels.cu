// 07_gemm_all_scatter: C_r = A x B_r on every rank, each finished 64 x 64 tile stored
// straight into block r of C on every rank (an all-gather fused into the GEMM).
#include <cuda_bf16.h>

#include "iris/device.hpp"

using namespace iris::device;

namespace {
constexpr int BM = 64, BN = 64, BK = 16, THREADS = 256;
}

// A: [M, K], B: [K, N] (this rank's columns), C: symmetric [world * M, N]; row-major
// bf16, fp32 accumulation. One block per 64 x 64 tile of C_r; thread (ty, tx) of a
// 16 x 16 grid computes rows ty * 4 .. + 3, columns tx * 4 .. + 3 of the tile.
extern "C" __global__ void __launch_bounds__(THREADS)
    gemm_all_scatter(const __grid_constant__ Context ctx, const __nv_bfloat16* A, const __nv_bfloat16* B,
                     __nv_bfloat16* C, long long M, long long N, long long K) {
  __shared__ float as[BK][BM + 4];  // A transposed: as[k][row]
  __shared__ float bs[BK][BN];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const long long tiles_n = (N + BN - 1) / BN;
  const long long m0 = blockIdx.x / tiles_n * BM, n0 = blockIdx.x % tiles_n * BN;
  float acc[4][4] = {};
  for (long long k0 = 0; k0 < K; k0 += BK) {
    for (int i = threadIdx.x; i < BM * BK; i += THREADS) {  // A tile: 64 rows x 16
      const int r = i / BK, k = i % BK;
      const long long gr = m0 + r, gk = k0 + k;
      as[k][r] = gr < M && gk < K ? __bfloat162float(A[gr * K + gk]) : 0.f;
    }
    for (int i = threadIdx.x; i < BK * BN; i += THREADS) {  // B tile: 16 x 64 columns
      const int k = i / BN, c = i % BN;
      const long long gk = k0 + k, gc = n0 + c;
      bs[k][c] = gk < K && gc < N ? __bfloat162float(B[gk * N + gc]) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float4 a = *reinterpret_cast<const float4*>(&as[k][ty * 4]);
      const float4 b = *reinterpret_cast<const float4*>(&bs[k][tx * 4]);
      const float av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += av[i] * bv[j];
    }
    __syncthreads();
  }
  // Each row's 4 columns go out as one 8-byte store to every rank (this one included).
  for (int i = 0; i < 4; ++i) {
    const long long gr = m0 + ty * 4 + i, gc = n0 + tx * 4;
    if (gr >= M) break;
    __nv_bfloat16 v[4];
    for (int j = 0; j < 4; ++j) v[j] = __float2bfloat16(acc[i][j]);
    __nv_bfloat16* row = C + (ctx.rank * M + gr) * N + gc;
    for (int k = 0; k < ctx.world; ++k) {
      __nv_bfloat16* dst = translate(ctx, row, (ctx.rank + k) % ctx.world);
      if (gc + 3 < N && (N % 4) == 0) {
        *reinterpret_cast<uint2*>(dst) = *reinterpret_cast<const uint2*>(v);
      } else {
        for (int j = 0; j < 4 && gc + j < N; ++j) dst[j] = v[j];
      }
    }
  }
}
