// Matrix-core lowering of tile::matmul on AMD CDNA GPUs (gfx90a, gfx942) for 16-bit
// operands (bf16 or f16) with f32 accumulation: v_mfma_f32_16x16x16 (bf16_1k / f16), one
// wavefront of 64 lanes per instruction. The AMD counterpart of tile/mma.hpp, with the
// same contract and the same shapes: 2-D tiles whose rows and columns are multiples of 32,
// with 256 threads (4 wavefronts); other shapes and types take tile::matmul (tile.hpp).
//
// Per BK = 32 slice of K, the workgroup loads A[rows, BK] (k contiguous) and B[BK, cols]
// transposed (k contiguous) through registers into LDS, rows padded to 40 elements, and
// then computes: the 4 wavefronts form a 2 x 2 grid, each computing (rows / 2) x (cols /
// 2) of the tile as 16 x 16 blocks. A fragment is 4 consecutive k of one row per lane
// (lane % 16 picks the row, lane / 16 the group of 4 k), read as one 8-byte LDS load; B's
// is the same on the transposed staging. The accumulator of a 16 x 16 block holds, in
// lane l and item e, row 4 * (l / 16) + e and column l % 16. At the end the accumulators
// pass through LDS once more, in bands of rows (mfma_stage_rows), to land in the tile's
// slot order (Layout2D), which every other tile operation expects.
#pragma once

#include "tile.hpp"
#include "shapes.hpp"

#if IRIS_HIP_COMPILER
namespace iris::device::tile {
namespace detail {

typedef float MfmaAcc __attribute__((ext_vector_type(4)));

template <class T>
struct MfmaOperand;
template <>
struct MfmaOperand<bfloat16> {
  typedef short Fragment __attribute__((ext_vector_type(4)));
  static IRIS_DEVICE IRIS_FORCEINLINE MfmaAcc step(Fragment a, Fragment b, MfmaAcc d) {
    return __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a, b, d, 0, 0, 0);
  }
};
template <>
struct MfmaOperand<_Float16> {
  typedef _Float16 Fragment __attribute__((ext_vector_type(4)));
  static IRIS_DEVICE IRIS_FORCEINLINE MfmaAcc step(Fragment a, Fragment b, MfmaAcc d) {
    return __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, d, 0, 0, 0);
  }
};

// 8 consecutive 16-bit values of row `r` from k = gk on, zero past `valid` rows or past
// k_extent: one 16-byte load where whole and aligned (`vec`).
IRIS_DEVICE IRIS_FORCEINLINE void mfma_stage8(unsigned short* dst, const unsigned short* src, bool row_valid, long long gk,
                                              long long k_extent, bool vec) {
  if (vec && row_valid && gk + 8 <= k_extent) {
    *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
    return;
  }
#pragma unroll
  for (int j = 0; j < 8; ++j) dst[j] = row_valid && gk + j < k_extent ? src[j] : 0;
}

}  // namespace detail

// Shared memory matmul_mfma<L, THREADS, B_NK> uses (the generated code keeps a kernel's
// total in budget).
template <class L, bool B_NK = false>
inline constexpr int kMfmaSharedBytes = static_cast<int>(mfma_shared_bytes(L::kRows, L::kCols));

// acc = A[rows, K] x B[K, cols], the contract of tile::matmul and matmul_mma: A rows `lda`
// apart, B rows `ldb` apart (B_NK: B given as [cols, K], k contiguous), rows/columns past
// *_valid and k past K read as 0, rows before a_rows_from read as 0, every thread of the
// workgroup calls it. `smem`: kMfmaSharedBytes<L, B_NK> bytes of LDS, 16-byte aligned
// (generated kernels pass their dynamic shared memory, which every matmul reuses: each
// call ends with a barrier).
template <class L, int THREADS, bool B_NK = false, class Acc, class T>
IRIS_DEVICE void matmul_mfma(Acc (&acc)[L::kPerThread], const T* a, long long lda, long long a_rows_valid, const T* b,
                             long long ldb, long long b_cols_valid, long long k_extent, unsigned char* smem,
                             long long a_rows_from = 0, bool accumulate = false) {
  using Op = detail::MfmaOperand<T>;
  using Fragment = typename Op::Fragment;
  constexpr int R = L::kRows, C = L::kCols, BK = 32, LDS = BK + 8;
  constexpr int WAVES_M = 2, WAVES_N = THREADS / 64 / WAVES_M;
  constexpr int WM = R / WAVES_M, WN = C / WAVES_N, MT = WM / 16, NT = WN / 16;
  static_assert(THREADS == 256, "matmul_mfma is laid out for 4 wavefronts of 64");
  static_assert(WM % 16 == 0 && WN % 16 == 0, "rows and columns must be multiples of 32");
  unsigned short* as = reinterpret_cast<unsigned short*>(smem);  // [R][LDS], raw 16-bit values
  unsigned short* bt = as + R * LDS;                              // [C][LDS]: B transposed
  const unsigned short* ga = reinterpret_cast<const unsigned short*>(a);
  const unsigned short* gb = reinterpret_cast<const unsigned short*>(b);
  const int tid = static_cast<int>(threadIdx.x), wave = tid / 64, lane = tid % 64;
  const int fr = lane % 16, fk = lane / 16 * 4;  // a fragment's row and first k
  const int wm = wave / WAVES_N * WM, wn = wave % WAVES_N * WN;
  const bool a_vec = lda % 8 == 0 && reinterpret_cast<unsigned long long>(a) % 16 == 0;
  const bool b_vec = ldb % 8 == 0 && reinterpret_cast<unsigned long long>(b) % 16 == 0;
  detail::MfmaAcc d[MT][NT];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j) d[i][j] = detail::MfmaAcc{0.f, 0.f, 0.f, 0.f};

  for (long long k0 = 0; k0 < k_extent; k0 += BK) {
    for (int i = tid; i < R * BK / 8; i += THREADS) {
      const int r = i / (BK / 8), kc = i % (BK / 8) * 8;
      detail::mfma_stage8(as + r * LDS + kc, ga + r * lda + k0 + kc, r >= a_rows_from && r < a_rows_valid, k0 + kc,
                          k_extent, a_vec);
    }
    if constexpr (B_NK) {
      // B given as [cols, K] is already in the staging's order: read like A.
      for (int i = tid; i < C * BK / 8; i += THREADS) {
        const int r = i / (BK / 8), kc = i % (BK / 8) * 8;
        detail::mfma_stage8(bt + r * LDS + kc, gb + r * ldb + k0 + kc, r < b_cols_valid, k0 + kc, k_extent, b_vec);
      }
    } else {
      // 8 consecutive columns of one k per thread and step, stored transposed.
      for (int i = tid; i < BK * C / 8; i += THREADS) {
        const int k = i / (C / 8), nc = i % (C / 8) * 8;
        const long long gk = k0 + k;
        unsigned short e[8];
        if (b_vec && gk < k_extent && nc + 8 <= b_cols_valid) {
          *reinterpret_cast<uint4*>(e) = *reinterpret_cast<const uint4*>(gb + gk * ldb + nc);
        } else {
#pragma unroll
          for (int j = 0; j < 8; ++j) e[j] = gk < k_extent && nc + j < b_cols_valid ? gb[gk * ldb + nc + j] : 0;
        }
#pragma unroll
        for (int j = 0; j < 8; ++j) bt[(nc + j) * LDS + k] = e[j];
      }
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      Fragment af[MT], bf[NT];
#pragma unroll
      for (int i = 0; i < MT; ++i) af[i] = *reinterpret_cast<const Fragment*>(as + (wm + i * 16 + fr) * LDS + kk + fk);
#pragma unroll
      for (int j = 0; j < NT; ++j) bf[j] = *reinterpret_cast<const Fragment*>(bt + (wn + j * 16 + fr) * LDS + kk + fk);
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j) d[i][j] = Op::step(af[i], bf[j], d[i][j]);
    }
    __syncthreads();
  }
  // The staging area is free: accumulators -> LDS -> the tile's slot order, one band of
  // BAND rows at a time (16-row blocks lie in one band: BAND is a multiple of 16).
  constexpr int kStageLd = C + 4, BAND = static_cast<int>(mfma_stage_rows(R, C));
  static_assert(BAND % 16 == 0 && R % BAND == 0, "mfma_stage_rows gives whole 16-row blocks");
  float* stage = reinterpret_cast<float*>(smem);
#pragma unroll
  for (int r0 = 0; r0 < R; r0 += BAND) {
#pragma unroll
    for (int i = 0; i < MT; ++i) {
      const int row = wm + i * 16 - r0;
      if (row < 0 || row >= BAND) continue;
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) stage[(row + fk + e) * kStageLd + wn + j * 16 + fr] = d[i][j][e];
    }
    __syncthreads();
#pragma unroll
    for (int s = 0; s < L::kPerThread; ++s) {
      const int row = L::row(s) - r0;
      if (row < 0 || row >= BAND) continue;
      const float v = stage[row * kStageLd + L::col(s)];
      acc[s] = accumulate ? Acc(float(acc[s]) + v) : Acc(v);
    }
    __syncthreads();
  }
}

}  // namespace iris::device::tile
#endif  // IRIS_HIP_COMPILER
