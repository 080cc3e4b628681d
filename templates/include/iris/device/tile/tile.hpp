// 1-D tiles for generated code: a tile of B elements is spread over a program's
// THREADS threads, each holding kPerThread slots in registers. Slot s of thread t is
// element ((s / VEC) * THREADS + t) * VEC + s % VEC, so each thread touches VEC
// consecutive elements at a time (16-byte accesses for 4-byte types) and a warp's
// accesses are contiguous. Out-of-range elements (>= valid) read as zero and are never
// written. A tile of fewer elements than THREADS * VEC (a row's sums in a program whose
// threads a large 2-D tile needs) is partial: its one slot is an element only on the
// first B / VEC threads, and loads, stores and reductions skip the rest (kPartial).
#pragma once

#include "../arch.hpp"
#include "../context.hpp"

#if IRIS_GPU_COMPILER
namespace iris::device::tile {

template <int B, int THREADS, int VEC>
struct Layout {
  static_assert(B % (THREADS * VEC) == 0 || B < THREADS * VEC, "tile size must divide evenly over the threads");
  static constexpr int kChunks = B >= THREADS * VEC ? B / (THREADS * VEC) : 1;
  static constexpr int kVec = VEC;
  static constexpr int kPerThread = kChunks * VEC;
  static constexpr int kSize = B;
  static constexpr int kThreads = THREADS;
  static constexpr bool kPartial = B < THREADS * VEC;
  IRIS_DEVICE IRIS_FORCEINLINE static long long elem(int s) {
    return ((long long)(s / VEC) * THREADS + threadIdx.x) * VEC + s % VEC;
  }
  // Whether slot s holds an element of the tile (always, unless partial).
  IRIS_DEVICE IRIS_FORCEINLINE static bool holds(int s) { return !kPartial || elem(s) < B; }
};

namespace detail {
// Moves VEC elements with the widest accesses their byte count allows.
template <class T, int VEC>
IRIS_DEVICE IRIS_FORCEINLINE void copy_vec(T* dst, const T* src) {
  constexpr int kBytes = VEC * (int)sizeof(T);
  if constexpr (kBytes % 16 == 0) {
#pragma unroll
    for (int i = 0; i < kBytes / 16; ++i) reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
  } else if constexpr (kBytes % 8 == 0) {
#pragma unroll
    for (int i = 0; i < kBytes / 8; ++i) reinterpret_cast<uint2*>(dst)[i] = reinterpret_cast<const uint2*>(src)[i];
  } else if constexpr (kBytes % 4 == 0) {
#pragma unroll
    for (int i = 0; i < kBytes / 4; ++i) reinterpret_cast<unsigned*>(dst)[i] = reinterpret_cast<const unsigned*>(src)[i];
  } else {
#pragma unroll
    for (int i = 0; i < VEC; ++i) dst[i] = src[i];
  }
}

// Stores VEC elements from registers to global memory with the widest accesses their
// byte count allows. The vector stores are written in PTX: from plain C++, NVVM splits
// some of them into scalar stores when the masked path stores the same addresses
// element by element, and scalar stores to a peer cost up to half the NVLink rate.
template <class T, int VEC>
IRIS_DEVICE IRIS_FORCEINLINE void store_vec(T* dst, const T* src) {
#if IRIS_HIP_COMPILER
  copy_vec<T, VEC>(dst, src);  // the AMDGPU backend keeps whole-vector stores whole
#else
  constexpr int kBytes = VEC * (int)sizeof(T);
  if constexpr (kBytes % 4 == 0) {
    const unsigned* w = reinterpret_cast<const unsigned*>(src);
    if constexpr (kBytes % 16 == 0) {
#pragma unroll
      for (int i = 0; i < kBytes / 16; ++i) {
        asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(reinterpret_cast<char*>(dst) + 16 * i),
                     "r"(w[4 * i]), "r"(w[4 * i + 1]), "r"(w[4 * i + 2]), "r"(w[4 * i + 3])
                     : "memory");
      }
    } else if constexpr (kBytes % 8 == 0) {
#pragma unroll
      for (int i = 0; i < kBytes / 8; ++i) {
        asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(reinterpret_cast<char*>(dst) + 8 * i), "r"(w[2 * i]),
                     "r"(w[2 * i + 1])
                     : "memory");
      }
    } else {
#pragma unroll
      for (int i = 0; i < kBytes / 4; ++i) {
        asm volatile("st.global.b32 [%0], %1;" ::"l"(reinterpret_cast<char*>(dst) + 4 * i), "r"(w[i]) : "memory");
      }
    }
  } else {
    copy_vec<T, VEC>(dst, src);
  }
#endif
}
}  // namespace detail

// Whether a tile of L at p is whole and aligned for VEC-wide accesses: then every
// chunk moves as one vector, unrolled, with no per-element tests (the common case; a
// per-chunk test made nvcc mix vector and scalar stores).
template <class L, class T>
IRIS_DEVICE IRIS_FORCEINLINE bool whole_and_aligned(const T* p, long long valid) {
  constexpr unsigned long long kAlign = L::kVec * sizeof(T) >= 16 ? 16 : L::kVec * sizeof(T);
  return !L::kPartial && valid >= L::kSize && reinterpret_cast<unsigned long long>(p) % kAlign == 0;
}

// r[s] = p[elem(s)] for elem(s) < valid, else `other`. `p` may point into a peer's heap.
template <class L, class T, class U = T>
IRIS_DEVICE IRIS_FORCEINLINE void load(T (&r)[L::kPerThread], const T* p, long long valid, U other = U(0)) {
  constexpr int V = L::kVec;
  if (whole_and_aligned<L>(p, valid)) {
#pragma unroll
    for (int c = 0; c < L::kChunks; ++c) detail::copy_vec<T, V>(&r[c * V], p + L::elem(c * V));
    return;
  }
#pragma unroll
  for (int s = 0; s < L::kPerThread; ++s) {
    const long long e = L::elem(s);
    r[s] = e < valid && L::holds(s) ? p[e] : T(other);
  }
}

// p[elem(s)] = r[s] for elem(s) < valid. `p` is global memory (a tensor, possibly a peer's).
template <class L, class T>
IRIS_DEVICE IRIS_FORCEINLINE void store(T* p, const T (&r)[L::kPerThread], long long valid) {
  constexpr int V = L::kVec;
  if (whole_and_aligned<L>(p, valid)) {
#pragma unroll
    for (int c = 0; c < L::kChunks; ++c) detail::store_vec<T, V>(p + L::elem(c * V), &r[c * V]);
    return;
  }
#pragma unroll
  for (int s = 0; s < L::kPerThread; ++s) {
    const long long e = L::elem(s);
    if (e < valid && L::holds(s)) p[e] = r[s];
  }
}

// 2-D tiles: R x C elements, row-major; slot s of thread t is flat element
// s * THREADS + t, so a warp's slots are consecutive columns of one row (coalesced).
template <int R, int C, int THREADS>
struct Layout2D {
  static_assert((R * C) % THREADS == 0, "a 2-D tile must divide evenly over the threads");
  static constexpr int kRows = R, kCols = C;
  static constexpr int kPerThread = R * C / THREADS;
  // Rows from one slot to the next when the threads cover whole rows (a thread's slots
  // are then one column), else 0.
  static constexpr int kRowStep = THREADS % C == 0 ? THREADS / C : 0;
  IRIS_DEVICE IRIS_FORCEINLINE static int row(int s) { return (s * THREADS + (int)threadIdx.x) / C; }
  IRIS_DEVICE IRIS_FORCEINLINE static int col(int s) { return (s * THREADS + (int)threadIdx.x) % C; }
};

// r[s] = p[row * ld + col] inside [rows_valid, cols_valid], else `other`.
template <class L, class T, class U = T>
IRIS_DEVICE IRIS_FORCEINLINE void load2d(T (&r)[L::kPerThread], const T* p, long long ld, long long rows_valid,
                                         long long cols_valid, U other = U(0)) {
  if constexpr (L::kRowStep > 0) {  // one column per thread: one pointer (see store2d)
    const int i0 = L::row(0), j = L::col(0);
    const T* q = p + i0 * ld + j;
    const long long step = L::kRowStep * ld;
#pragma unroll
    for (int s = 0; s < L::kPerThread; ++s, q += step) {
      r[s] = (i0 + s * L::kRowStep < rows_valid && j < cols_valid) ? *q : T(other);
    }
    return;
  }
#pragma unroll
  for (int s = 0; s < L::kPerThread; ++s) {
    const int i = L::row(s), j = L::col(s);
    r[s] = (i < rows_valid && j < cols_valid) ? p[i * ld + j] : T(other);
  }
}

// store2d of a tile computed slot by slot where it is stored (value(s) gives slot s), so
// that it never lives in registers whole beside the tiles it is computed from.
template <class L, class T, class F>
IRIS_DEVICE IRIS_FORCEINLINE void store2d_slots(T* p, long long ld, long long rows_valid, long long cols_valid, F&& value) {
  if constexpr (L::kRowStep > 0) {
    // One column per thread: walk it with one pointer. Addressing each slot on its own
    // kept a 64-bit offset per slot live, and inside a loop over ranks those spilled.
    const int i0 = L::row(0), j = L::col(0);
    if (j >= cols_valid) return;
    T* q = p + i0 * ld + j;
    const long long step = L::kRowStep * ld;
#pragma unroll
    for (int s = 0; s < L::kPerThread; ++s, q += step) {
      if (i0 + s * L::kRowStep < rows_valid) *q = value(s);
    }
    return;
  }
#pragma unroll
  for (int s = 0; s < L::kPerThread; ++s) {
    const int i = L::row(s), j = L::col(s);
    if (i < rows_valid && j < cols_valid) p[i * ld + j] = value(s);
  }
}

// p[row * ld + col] = r[s] inside [rows_valid, cols_valid].
template <class L, class T>
IRIS_DEVICE IRIS_FORCEINLINE void store2d(T* p, const T (&r)[L::kPerThread], long long ld, long long rows_valid,
                                          long long cols_valid) {
  store2d_slots<L>(p, ld, rows_valid, cols_valid, [&](int s) { return r[s]; });
}

// The same one slot at a time: slot s of a load2d, for code that computes a tile
// slot by slot instead of holding it in registers (the sm90 GEMM's epilogue, whose
// accumulators already fill the register budget).
template <class L, class T, class U = T>
IRIS_DEVICE IRIS_FORCEINLINE T load2d_at(const T* p, long long ld, long long rows_valid, long long cols_valid, int s,
                                         U other = U(0)) {
  const int i = L::row(s), j = L::col(s);
  return (i < rows_valid && j < cols_valid) ? p[i * ld + j] : T(other);
}

// Pairs of neighbouring elements of a row-major tensor `ld` elements per row, from p:
// whether a pair whose first column is even can go out as one store of twice the width.
template <class T>
IRIS_DEVICE IRIS_FORCEINLINE bool pairs_aligned(const T* p, long long ld) {
  constexpr int kPair = 2 * static_cast<int>(sizeof(T));
  return (kPair == 4 || kPair == 8) && ld % 2 == 0 && reinterpret_cast<unsigned long long>(p) % kPair == 0;
}

// q[0] = v0, q[1] = v1, as one store of twice the width for 16- and 32-bit T (q is
// aligned to it: pairs_aligned).
template <class T>
IRIS_DEVICE IRIS_FORCEINLINE void store_pair(T* q, T v0, T v1) {
  if constexpr (sizeof(T) == 2) {
    unsigned short h[2];
    memcpy(&h[0], &v0, 2);
    memcpy(&h[1], &v1, 2);
    *reinterpret_cast<unsigned*>(q) = h[0] | unsigned(h[1]) << 16;
  } else if constexpr (sizeof(T) == 4) {
    unsigned w[2];
    memcpy(&w[0], &v0, 4);
    memcpy(&w[1], &v1, 4);
    *reinterpret_cast<uint2*>(q) = make_uint2(w[0], w[1]);
  } else {
    q[0] = v0;
    q[1] = v1;
  }
}

// acc = A[rows, K] x B[K, cols] for an L-shaped tile: A rows `lda` apart, B rows `ldb`
// apart, rows/columns past *_valid and k past K read as 0. B_NK: B is given transposed,
// as [cols, K] with rows `ldb` apart (k contiguous). The simple lowering: BK-deep
// slices of A and B staged in shared memory (as float), FMAs in float. Every thread of
// the program must call it (it synchronizes the block). Any THREADS that divides the
// tile; with THREADS a multiple of the columns, each thread keeps one column of B in
// registers per slice. Rows before `a_rows_from` read as 0 too (never touched), and
// `accumulate` adds the product to acc instead: a tile whose rows come from several
// places (gathered(A) across ranks) is the sum of one call per place.
template <class L, int BK, int THREADS, bool B_NK = false, class Acc, class T>
IRIS_DEVICE void matmul(Acc (&acc)[L::kPerThread], const T* a, long long lda, long long a_rows_valid, const T* b,
                        long long ldb, long long b_cols_valid, long long k_extent, long long a_rows_from = 0,
                        bool accumulate = false) {
  static_assert(BK % 4 == 0, "A's rows are read 4 k at a time");
  __shared__ __align__(16) float as[L::kRows * BK];
  __shared__ float bs[BK * L::kCols];
  float sum[L::kPerThread];
#pragma unroll
  for (int s = 0; s < L::kPerThread; ++s) sum[s] = 0.f;
  for (long long k0 = 0; k0 < k_extent; k0 += BK) {
    for (int i = threadIdx.x; i < L::kRows * BK; i += THREADS) {
      const int r = i / BK, k = i % BK;
      as[i] = (r >= a_rows_from && r < a_rows_valid && k0 + k < k_extent) ? (float)a[r * lda + k0 + k] : 0.f;
    }
    for (int i = threadIdx.x; i < BK * L::kCols; i += THREADS) {
      if constexpr (B_NK) {
        // Consecutive threads read consecutive k of one row of [cols, K] (coalesced).
        const int c = i / BK, k = i % BK;
        bs[k * L::kCols + c] = (k0 + k < k_extent && c < b_cols_valid) ? (float)b[c * ldb + k0 + k] : 0.f;
      } else {
        const int k = i / L::kCols, c = i % L::kCols;
        bs[i] = (k0 + k < k_extent && c < b_cols_valid) ? (float)b[(k0 + k) * ldb + c] : 0.f;
      }
    }
    __syncthreads();
    // A thread's slots share one column (L::col(s) == col): its BK values of B are read
    // once, and each slot's row of A goes 4 k at a time (the warp reads the same row, a
    // broadcast), so shared memory serves one 16-byte read per 4 FMAs.
    if constexpr (THREADS % L::kCols == 0) {
      const int col = static_cast<int>(threadIdx.x) % L::kCols;
      float bk[BK];
#pragma unroll
      for (int k = 0; k < BK; ++k) bk[k] = bs[k * L::kCols + col];
#pragma unroll
      for (int s = 0; s < L::kPerThread; ++s) {
        const float4* arow = reinterpret_cast<const float4*>(&as[L::row(s) * BK]);
#pragma unroll
        for (int k4 = 0; k4 < BK / 4; ++k4) {
          const float4 a4 = arow[k4];
          sum[s] += a4.x * bk[4 * k4];
          sum[s] += a4.y * bk[4 * k4 + 1];
          sum[s] += a4.z * bk[4 * k4 + 2];
          sum[s] += a4.w * bk[4 * k4 + 3];
        }
      }
    } else {
      // Fewer threads than columns (a kernel whose smallest 1-D tile is narrower than
      // this matmul's tile): each slot reads its own column of B.
#pragma unroll
      for (int s = 0; s < L::kPerThread; ++s) {
        const float4* arow = reinterpret_cast<const float4*>(&as[L::row(s) * BK]);
        const int col = L::col(s);
#pragma unroll
        for (int k4 = 0; k4 < BK / 4; ++k4) {
          const float4 a4 = arow[k4];
          sum[s] += a4.x * bs[(4 * k4) * L::kCols + col];
          sum[s] += a4.y * bs[(4 * k4 + 1) * L::kCols + col];
          sum[s] += a4.z * bs[(4 * k4 + 2) * L::kCols + col];
          sum[s] += a4.w * bs[(4 * k4 + 3) * L::kCols + col];
        }
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int s = 0; s < L::kPerThread; ++s) acc[s] = accumulate ? Acc(float(acc[s]) + sum[s]) : Acc(sum[s]);
}

// Block-wide reduction of one value per thread; every thread gets the result.
// `scratch` holds THREADS / 32 values.
template <int THREADS, class T, class Op>
IRIS_DEVICE IRIS_FORCEINLINE T block_reduce(T v, T* scratch, Op op) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  constexpr int kWarps = THREADS / 32;
  if constexpr (kWarps > 1) {
    __syncthreads();  // scratch may still be read by a previous reduction
    if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
    __syncthreads();
    v = scratch[0];
#pragma unroll
    for (int w = 1; w < kWarps; ++w) v = op(v, scratch[w]);
  }
  return v;
}

// ---- 2-D tiles along one axis -------------------------------------------------------------
// Shared-memory slots (of the accumulator type) that reduce_axis and broadcast need for
// an R x C tile of THREADS threads (the printer sizes the kernel's scratch the same way).
template <int R, int C, int THREADS, int AXIS>
IRIS_HOST_DEVICE constexpr int axis_scratch() {
  constexpr int kRowThreads = C < THREADS ? C : THREADS;  // threads holding one row at a slot
  constexpr int kSegments = kRowThreads > 32 ? kRowThreads / 32 : 1;
  return AXIS == 1 ? R * kSegments : (C > THREADS ? C : THREADS);
}

namespace detail {
// out[s] = the PARTS values of element e = L1::elem(s) (< N) in scratch, folded: part k
// at scratch[e * PARTS + k] (STRIDE 1) or scratch[k * STRIDE + e].
template <class L1, int N, int PARTS, int STRIDE, class T, class A, class Op>
IRIS_DEVICE IRIS_FORCEINLINE void fold_parts(T (&out)[L1::kPerThread], A ident, const A* scratch, Op op) {
#pragma unroll
  for (int s = 0; s < L1::kPerThread; ++s) {
    const long long e = L1::elem(s);
    A v = ident;
    if (e < N) {
#pragma unroll
      for (int k = 0; k < PARTS; ++k) v = op(v, STRIDE == 1 ? scratch[e * PARTS + k] : scratch[k * STRIDE + e]);
    }
    out[s] = (T)v;
  }
}
}  // namespace detail

// out = the L2 tile reduced along AXIS with `op` from `ident` in type A: AXIS 0 (each
// column, down its rows) gives the C-element 1-D tile of layout L1, AXIS 1 (each row)
// the R-element one. `in(s)` is the tile's slot s as an A: an expression computed where
// it is folded, so `sum(x * y, axis: 1)` holds no product tile. Every thread of the
// program must call it (it synchronizes the block); `scratch` holds
// axis_scratch<R, C, THREADS, AXIS>() values.
//
// Slot s of thread t is flat element s * THREADS + t (Layout2D). Along a row (AXIS 1)
// a thread first folds its slots of one row (C > THREADS), then the threads of a row
// fold theirs by warp shuffles, and each warp's part goes through shared memory. Down
// a column (AXIS 0) a thread folds its slots of one column, and the threads of a
// column (THREADS > C) meet in shared memory.
template <class L2, class L1, int AXIS, int THREADS, class A, class T, class In, class Op>
IRIS_DEVICE IRIS_FORCEINLINE void reduce_axis(T (&out)[L1::kPerThread], In in, A ident, A* scratch, Op op) {
  constexpr int R = L2::kRows, C = L2::kCols, P = L2::kPerThread;
  const int t = (int)threadIdx.x;
  __syncthreads();  // the scratch may still be read by an earlier use
  if constexpr (AXIS == 1) {
    constexpr int kGroup = C > THREADS ? C / THREADS : 1;    // consecutive slots of one row
    constexpr int kRowThreads = C < THREADS ? C : THREADS;
    constexpr int kLanes = kRowThreads < 32 ? kRowThreads : 32;  // lanes of one row in a warp
    constexpr int kSegments = kRowThreads > 32 ? kRowThreads / 32 : 1;
#pragma unroll
    for (int g = 0; g < P / kGroup; ++g) {
      A v = ident;
#pragma unroll
      for (int i = 0; i < kGroup; ++i) v = op(v, in(g * kGroup + i));
#pragma unroll
      for (int o = kLanes / 2; o > 0; o /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
      const int row = L2::row(g * kGroup);
      if (t % kLanes == 0) scratch[row * kSegments + (t % kRowThreads) / 32] = v;
    }
    __syncthreads();
    detail::fold_parts<L1, R, kSegments, 1>(out, ident, scratch, op);
  } else {
    constexpr int kCols = C > THREADS ? C / THREADS : 1;     // columns of one thread
    constexpr int kGroups = THREADS > C ? THREADS / C : 1;   // threads of one column
#pragma unroll
    for (int k = 0; k < kCols; ++k) {
      A v = ident;
#pragma unroll
      for (int s = k; s < P; s += kCols) v = op(v, in(s));
      scratch[k * THREADS + t] = v;  // [group][column]: flat element k * THREADS + t of row 0..kGroups
    }
    __syncthreads();
    detail::fold_parts<L1, C, kGroups, C>(out, ident, scratch, op);
  }
}

// A 1-D tile (layout L1, N elements) into `scratch`, for reading back repeated along an
// axis of a 2-D tile: slot s of a broadcast over rows (element [i, j] = t[j]) is
// scratch[L2::col(s)], over columns scratch[L2::row(s)]. Every thread of the program
// must call it; the scratch is the broadcast's own, read until its next staging.
template <class L1, int N, class T>
IRIS_DEVICE IRIS_FORCEINLINE void stage(const T (&in)[L1::kPerThread], T* scratch) {
  __syncthreads();  // an earlier staging may still be read
#pragma unroll
  for (int s = 0; s < L1::kPerThread; ++s) {
    const long long e = L1::elem(s);
    if (e < N) scratch[e] = in[s];
  }
  __syncthreads();
}

}  // namespace iris::device::tile
#endif  // IRIS_GPU_COMPILER
