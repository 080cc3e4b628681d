// Tensor-core lowering of tile::matmul for 16-bit operands (bf16 or f16) with f32
// accumulation: warp-level mma.sync m16n8k16 (sm_80 and later). Generated code uses it
// for 2-D tiles whose rows and columns are multiples of 32, with 256 threads; other
// shapes and types take tile::matmul (tile.hpp).
//
// Tiles whose columns are a multiple of 64 (mma_pipelines) take the cp.async pipeline of
// tile/mma_pipelined.hpp when both operands' rows are 16-byte aligned, which is decided
// per call. Otherwise, per BK = 32 slice of K, the block loads A[rows, BK] (k contiguous)
// and B[BK, cols] transposed (k contiguous) through registers into shared memory, with
// rows padded to 40 elements so that the fragment reads of a warp hit 32 different
// banks, and then computes: no overlap, but any alignment. Both paths share the warp
// layout: the 8 warps form a 2 x 4 grid, each computing (rows / 2) x (cols / 4) of the
// tile. At the end the accumulators pass through shared memory once more to land in the
// tile's slot order (Layout2D), which every other tile operation expects.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "tile.hpp"
#include "mma_pipelined.hpp"
#include "mma_step.hpp"
#include "shapes.hpp"

#if IRIS_CUDA_COMPILER
namespace iris::device::tile {

// Shared memory matmul_mma<L, THREADS, B_NK> uses, whichever path it takes (the
// generated code keeps a kernel's total in budget).
template <class L, bool B_NK = false>
inline constexpr int kMmaSharedBytes = static_cast<int>(mma_shared_bytes(L::kRows, L::kCols, B_NK));

// acc = A[rows, K] x B[K, cols], same contract as tile::matmul: A rows `lda` apart, B
// rows `ldb` apart (B_NK: B given as [cols, K], k contiguous), rows/columns past *_valid
// and k past K read as 0, every thread of the program calls it. `smem`:
// kMmaSharedBytes<L, B_NK> bytes of shared memory, 16-byte aligned (generated kernels pass
// their dynamic shared memory, which every matmul reuses: each call ends with a barrier).
template <class L, int THREADS, bool B_NK = false, class Acc, class T>
IRIS_DEVICE void matmul_mma(Acc (&acc)[L::kPerThread], const T* a, long long lda, long long a_rows_valid, const T* b,
                            long long ldb, long long b_cols_valid, long long k_extent, unsigned char* smem,
                            long long a_rows_from = 0, bool accumulate = false) {
  constexpr int R = L::kRows, C = L::kCols, BK = 32, LDS = BK + 8;
  constexpr int WARPS_M = 2, WARPS_N = THREADS / 32 / WARPS_M;
  constexpr int WM = R / WARPS_M, WN = C / WARPS_N, MT = WM / 16, NT = WN / 8;
  static_assert(THREADS == 256, "matmul_mma is laid out for 8 warps");
  static_assert(WM % 16 == 0 && WN % 8 == 0, "rows and columns must be multiples of 32");
  constexpr bool kBf16 = detail::MmaOperand<T>::kBf16;
  unsigned short* as = reinterpret_cast<unsigned short*>(smem);  // [R][LDS], raw 16-bit values
  unsigned short* bt = as + R * LDS;                              // [C][LDS]: B transposed
  const unsigned short* ga = reinterpret_cast<const unsigned short*>(a);
  const unsigned short* gb = reinterpret_cast<const unsigned short*>(b);
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4, t = lane % 4;
  const int wm = warp / WARPS_N * WM, wn = warp % WARPS_N * WN;
  const bool a_vec = lda % 8 == 0 && reinterpret_cast<unsigned long long>(a) % 16 == 0;
  const bool b_vec = ldb % 8 == 0 && reinterpret_cast<unsigned long long>(b) % 16 == 0;
  if constexpr (mma_pipelines(C)) {
    if (a_vec && b_vec) {
      matmul_mma_pipelined<L, THREADS, B_NK>(acc, a, lda, a_rows_valid, b, ldb, b_cols_valid, k_extent, smem,
                                             a_rows_from, accumulate);
      return;
    }
  }
  float d[MT][NT][4];
  detail::zero_fragments(d);

  for (long long k0 = 0; k0 < k_extent; k0 += BK) {
    // A slice: 8 consecutive k per thread and step, one 16-byte load where whole.
    for (int i = static_cast<int>(threadIdx.x); i < R * BK / 8; i += THREADS) {
      const int r = i / (BK / 8), kc = i % (BK / 8) * 8;
      const long long gk = k0 + kc;
      uint4 v;
      const bool row = r >= a_rows_from && r < a_rows_valid;
      if (a_vec && row && gk + 8 <= k_extent) {
        v = *reinterpret_cast<const uint4*>(ga + r * lda + gk);
      } else {
        unsigned short e[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) e[j] = row && gk + j < k_extent ? ga[r * lda + gk + j] : 0;
        v = make_uint4(e[0] | unsigned(e[1]) << 16, e[2] | unsigned(e[3]) << 16, e[4] | unsigned(e[5]) << 16,
                       e[6] | unsigned(e[7]) << 16);
      }
      *reinterpret_cast<uint4*>(as + r * LDS + kc) = v;
    }
    if constexpr (B_NK) {
      // B given as [cols, K] is already in the staging's order: read like A.
      for (int i = static_cast<int>(threadIdx.x); i < C * BK / 8; i += THREADS) {
        const int r = i / (BK / 8), kc = i % (BK / 8) * 8;
        const long long gk = k0 + kc;
        uint4 v;
        if (b_vec && r < b_cols_valid && gk + 8 <= k_extent) {
          v = *reinterpret_cast<const uint4*>(gb + r * ldb + gk);
        } else {
          unsigned short e[8];
#pragma unroll
          for (int j = 0; j < 8; ++j) e[j] = r < b_cols_valid && gk + j < k_extent ? gb[r * ldb + gk + j] : 0;
          v = make_uint4(e[0] | unsigned(e[1]) << 16, e[2] | unsigned(e[3]) << 16, e[4] | unsigned(e[5]) << 16,
                         e[6] | unsigned(e[7]) << 16);
        }
        *reinterpret_cast<uint4*>(bt + r * LDS + kc) = v;
      }
    }
    // B slice: 8 consecutive columns of one k per thread and step, stored transposed.
    for (int i = static_cast<int>(threadIdx.x); i < (B_NK ? 0 : BK * C / 8); i += THREADS) {
      const int k = i / (C / 8), nc = i % (C / 8) * 8;
      const long long gk = k0 + k;
      unsigned short e[8];
      if (b_vec && gk < k_extent && nc + 8 <= b_cols_valid) {
        const uint4 v = *reinterpret_cast<const uint4*>(gb + gk * ldb + nc);
        const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          e[2 * j] = static_cast<unsigned short>(w[j] & 0xffffu);
          e[2 * j + 1] = static_cast<unsigned short>(w[j] >> 16);
        }
      } else {
#pragma unroll
        for (int j = 0; j < 8; ++j) e[j] = gk < k_extent && nc + j < b_cols_valid ? gb[gk * ldb + nc + j] : 0;
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) bt[(nc + j) * LDS + k] = e[j];
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      unsigned af[MT][4], bf[NT][2];
#pragma unroll
      for (int i = 0; i < MT; ++i) {
        const unsigned short* p = as + (wm + i * 16 + g) * LDS + kk + 2 * t;
        af[i][0] = *reinterpret_cast<const unsigned*>(p);
        af[i][1] = *reinterpret_cast<const unsigned*>(p + 8 * LDS);
        af[i][2] = *reinterpret_cast<const unsigned*>(p + 8);
        af[i][3] = *reinterpret_cast<const unsigned*>(p + 8 * LDS + 8);
      }
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        const unsigned short* q = bt + (wn + j * 8 + g) * LDS + kk + 2 * t;
        bf[j][0] = *reinterpret_cast<const unsigned*>(q);
        bf[j][1] = *reinterpret_cast<const unsigned*>(q + 8);
      }
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j) detail::mma_16816<kBf16>(d[i][j], af[i], bf[j]);
    }
    __syncthreads();
  }
  detail::hand_back<L, MT, NT>(acc, d, smem, wm, wn, accumulate);  // the staging area is free again after
}

}  // namespace iris::device::tile
#endif  // IRIS_CUDA_COMPILER
