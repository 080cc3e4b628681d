// The sm_80 tensor-core mainloop for tile::matmul_mma (tile/mma.hpp): the same contract
// and warp layout (8 warps in a 2 x 4 grid, mma.sync m16n8k16, f32 accumulators), with
// the operand slices brought in by cp.async into a 3-deep ring of shared memory, so that
// the loads of slice k + 2 overlap the tensor-core work on slice k, and fragments read
// with ldmatrix (B as [K, N] through its transposing form, so no thread transposes).
//
// cp.async moves 16 bytes at a time: A's and B's rows must start 16-byte aligned (lda,
// ldb multiples of 8 elements, 16-byte aligned bases); tile/mma.hpp's matmul_mma takes
// this path only then. Partial tiles need nothing special: a chunk past the valid rows,
// columns or K copies fewer bytes (or none) and cp.async fills the rest with zeros.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "tile.hpp"
#include "mma_step.hpp"
#include "shapes.hpp"

#if IRIS_CUDA_COMPILER
namespace iris::device::tile {
namespace detail {

// dst (shared) <- `bytes` (0..16) bytes at src, the rest of the 16 zero-filled.
IRIS_DEVICE IRIS_FORCEINLINE void cp_async_16(void* dst, const void* src, int bytes) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(bytes) : "memory");
}
IRIS_DEVICE IRIS_FORCEINLINE void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
IRIS_DEVICE IRIS_FORCEINLINE void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

IRIS_DEVICE IRIS_FORCEINLINE void ldmatrix_x4(unsigned (&r)[4], const void* p) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}
IRIS_DEVICE IRIS_FORCEINLINE void ldmatrix_x4_trans(unsigned (&r)[4], const void* p) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}

}  // namespace detail

// See the file comment; called by matmul_mma (same arguments) when rows are 16-byte
// aligned. `smem`: mma_pipelined_shared_bytes(rows, cols, B_NK) bytes, 16-byte aligned.
template <class L, int THREADS, bool B_NK, class Acc, class T>
IRIS_DEVICE void matmul_mma_pipelined(Acc (&acc)[L::kPerThread], const T* a, long long lda, long long a_rows_valid,
                                      const T* b, long long ldb, long long b_cols_valid, long long k_extent,
                                      unsigned char* smem, long long a_rows_from = 0, bool accumulate = false) {
  constexpr int R = L::kRows, C = L::kCols, BK = kMmaPipelineBk, S = kMmaPipelineStages;
  constexpr int LDA = BK + 8;                   // A slice [R][LDA]; B_NK: B slice [C][LDA]
  constexpr int LDB = B_NK ? BK + 8 : C + 8;    // B as [K, N]: slice [BK][LDB]
  constexpr int A_ELEMS = R * LDA, B_ELEMS = B_NK ? C * LDA : BK * LDB;
  constexpr int WARPS_M = 2, WARPS_N = THREADS / 32 / WARPS_M;
  constexpr int WM = R / WARPS_M, WN = C / WARPS_N, MT = WM / 16, NT = WN / 8;
  static_assert(THREADS == 256, "laid out for 8 warps");
  static_assert(WM % 16 == 0 && WN % 16 == 0, "rows and columns must be multiples of 32 and 64");
  constexpr bool kBf16 = detail::MmaOperand<T>::kBf16;
  unsigned short* ring = reinterpret_cast<unsigned short*>(smem);
  const T* const a0 = a + a_rows_from * lda;  // the first row read: a valid address for empty copies
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32, lane = tid % 32;
  const int wm = warp / WARPS_N * WM, wn = warp % WARPS_N * WN;
  const long long kt = (k_extent + BK - 1) / BK;

  // Slice kb into ring slot s: 16-byte chunks, a row's valid elements copied, the rest zeroed.
  const auto load = [&](long long kb, int s) {
    unsigned short* as = ring + s * (A_ELEMS + B_ELEMS);
    unsigned short* bs = as + A_ELEMS;
    const long long k0 = kb * BK;
    for (int i = tid; i < R * BK / 8; i += THREADS) {
      const int r = i / (BK / 8), kc = i % (BK / 8) * 8;
      const long long left = k_extent - (k0 + kc);
      const int bytes = r >= a_rows_from && r < a_rows_valid && left > 0 ? static_cast<int>(left >= 8 ? 16 : left * 2) : 0;
      detail::cp_async_16(as + r * LDA + kc, bytes ? a + r * lda + k0 + kc : a0, bytes);
    }
    if constexpr (B_NK) {
      for (int i = tid; i < C * BK / 8; i += THREADS) {
        const int r = i / (BK / 8), kc = i % (BK / 8) * 8;
        const long long left = k_extent - (k0 + kc);
        const int bytes = r < b_cols_valid && left > 0 ? static_cast<int>(left >= 8 ? 16 : left * 2) : 0;
        detail::cp_async_16(bs + r * LDB + kc, bytes ? b + r * ldb + k0 + kc : a0, bytes);
      }
    } else {
      for (int i = tid; i < BK * C / 8; i += THREADS) {
        const int k = i / (C / 8), nc = i % (C / 8) * 8;
        const long long left = b_cols_valid - nc;
        const int bytes = k0 + k < k_extent && left > 0 ? static_cast<int>(left >= 8 ? 16 : left * 2) : 0;
        detail::cp_async_16(bs + k * LDB + nc, bytes ? b + (k0 + k) * ldb + nc : a0, bytes);
      }
    }
  };

  float d[MT][NT][4];
  detail::zero_fragments(d);

#pragma unroll
  for (int s = 0; s < S - 1; ++s) {
    if (s < kt) load(s, s);
    detail::cp_async_commit();
  }
  for (long long kb = 0; kb < kt; ++kb) {
    detail::cp_async_wait<S - 2>();
    __syncthreads();  // slice kb landed for everyone; slot (kb - 1) % S is free again
    if (kb + S - 1 < kt) load(kb + S - 1, static_cast<int>((kb + S - 1) % S));
    detail::cp_async_commit();
    const unsigned short* as = ring + (kb % S) * (A_ELEMS + B_ELEMS);
    const unsigned short* bs = as + A_ELEMS;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      unsigned bf[NT][2];
#pragma unroll
      for (int j = 0; j < NT; j += 2) {
        unsigned q[4];
        if constexpr (B_NK) {
          // Rows n (k contiguous): lanes 0-7 n 0-7 at k, 8-15 at k + 8, 16-31 the next 8 n.
          detail::ldmatrix_x4(q, bs + (wn + j * 8 + (lane / 16) * 8 + lane % 8) * LDB + kk + (lane / 8) % 2 * 8);
        } else {
          // Rows k (n contiguous), transposed: lanes 0-15 k 0-15 at n, 16-31 at n + 8.
          detail::ldmatrix_x4_trans(q, bs + (kk + lane % 16) * LDB + wn + j * 8 + (lane / 16) * 8);
        }
        bf[j][0] = q[0];
        bf[j][1] = q[1];
        bf[j + 1][0] = q[2];
        bf[j + 1][1] = q[3];
      }
      // One 16-row fragment of A at a time: with 128 registers (two programs per SM)
      // holding all of them next to the accumulators spills.
#pragma unroll
      for (int i = 0; i < MT; ++i) {
        unsigned af[4];
        // Lanes 0-15 give rows 0-15 at k, lanes 16-31 the same rows at k + 8.
        detail::ldmatrix_x4(af, as + (wm + i * 16 + lane % 16) * LDA + kk + (lane / 16) * 8);
#pragma unroll
        for (int j = 0; j < NT; ++j) detail::mma_16816<kBf16>(d[i][j], af, bf[j]);
      }
    }
  }
  detail::cp_async_wait<0>();
  __syncthreads();
  detail::hand_back<L, MT, NT>(acc, d, smem, wm, wn, accumulate);  // the ring is free again after
}

}  // namespace iris::device::tile
#endif  // IRIS_CUDA_COMPILER
