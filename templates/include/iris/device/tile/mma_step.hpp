// One warp-level mma.sync m16n8k16 step with f32 accumulation, shared by matmul_mma's
// two mainloops (tile/mma.hpp, tile/mma_pipelined.hpp), which differ only in how the
// operand fragments reach registers.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../arch.hpp"

#if IRIS_CUDA_COMPILER
namespace iris::device::tile::detail {

template <class T>
struct MmaOperand;
template <>
struct MmaOperand<__nv_bfloat16> {
  static constexpr bool kBf16 = true;
};
template <>
struct MmaOperand<__half> {
  static constexpr bool kBf16 = false;
};

// d += a x b for one 16 x 8 x 16 step; a: 4 registers of the 16 x 16 A fragment, b: 2 of
// the 16 x 8 B fragment (column-major), d: the 16 x 8 f32 accumulator fragment.
template <bool Bf16>
IRIS_DEVICE IRIS_FORCEINLINE void mma_16816(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  if constexpr (Bf16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

// Clears a warp's accumulator fragments before a mainloop.
template <int MT, int NT>
IRIS_DEVICE IRIS_FORCEINLINE void zero_fragments(float (&d)[MT][NT][4]) {
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) d[i][j][e] = 0.f;
}

// The accumulator fragments d[MT][NT] of a warp whose block is at (wm, wn) -> shared
// memory -> the tile's slot order in acc (Layout2D, which every other tile operation
// expects), added to what acc holds where `accumulate`. `smem`: rows x (cols + 4) floats;
// every thread of the program calls it, and the staging area is free again when it returns.
template <class L, int MT, int NT, class Acc>
IRIS_DEVICE IRIS_FORCEINLINE void hand_back(Acc (&acc)[L::kPerThread], const float (&d)[MT][NT][4], unsigned char* smem,
                                            int wm, int wn, bool accumulate = false) {
  constexpr int kStageLd = L::kCols + 4;
  const int lane = static_cast<int>(threadIdx.x) % 32, g = lane / 4, t = lane % 4;
  float* stage = reinterpret_cast<float*>(smem);
#pragma unroll
  for (int i = 0; i < MT; ++i) {
#pragma unroll
    for (int j = 0; j < NT; ++j) {
      const int r = wm + i * 16 + g, c = wn + j * 8 + 2 * t;
      stage[r * kStageLd + c] = d[i][j][0];
      stage[r * kStageLd + c + 1] = d[i][j][1];
      stage[(r + 8) * kStageLd + c] = d[i][j][2];
      stage[(r + 8) * kStageLd + c + 1] = d[i][j][3];
    }
  }
  __syncthreads();
#pragma unroll
  for (int s = 0; s < L::kPerThread; ++s) {
    const float v = stage[L::row(s) * kStageLd + L::col(s)];
    acc[s] = accumulate ? Acc(float(acc[s]) + v) : Acc(v);
  }
  __syncthreads();
}

}  // namespace iris::device::tile::detail
#endif  // IRIS_CUDA_COMPILER
