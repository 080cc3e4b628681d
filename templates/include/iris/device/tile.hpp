// 1-D tiles for generated code: a tile of B elements is spread over a program's
// THREADS threads, each holding kPerThread slots in registers. Slot s of thread t is
// element ((s / VEC) * THREADS + t) * VEC + s % VEC, so each thread touches VEC
// consecutive elements at a time (16-byte accesses for 4-byte types) and a warp's
// accesses are contiguous. Out-of-range elements (>= valid) read as zero and are never
// written.
#pragma once

#include "arch.hpp"
#include "context.hpp"

#if IRIS_CUDA_COMPILER
namespace iris::device::tile {

template <int B, int THREADS, int VEC>
struct Layout {
  static_assert(B % (THREADS * VEC) == 0 || B < THREADS * VEC, "tile size must divide evenly over the threads");
  static constexpr int kChunks = B >= THREADS * VEC ? B / (THREADS * VEC) : 1;
  static constexpr int kVec = VEC;
  static constexpr int kPerThread = kChunks * VEC;
  static constexpr int kSize = B;
  IRIS_DEVICE IRIS_FORCEINLINE static long long elem(int s) {
    return ((long long)(s / VEC) * THREADS + threadIdx.x) * VEC + s % VEC;
  }
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
}  // namespace detail

// Whether a tile of L at p is whole and aligned for VEC-wide accesses: then every
// chunk moves as one vector, unrolled, with no per-element tests (the common case; a
// per-chunk test made nvcc mix vector and scalar stores).
template <class L, class T>
IRIS_DEVICE IRIS_FORCEINLINE bool whole_and_aligned(const T* p, long long valid) {
  constexpr unsigned long long kAlign = L::kVec * sizeof(T) >= 16 ? 16 : L::kVec * sizeof(T);
  return valid >= L::kSize && reinterpret_cast<unsigned long long>(p) % kAlign == 0;
}

// r[s] = p[elem(s)] for elem(s) < valid, else 0. `p` may point into a peer's heap.
template <class L, class T>
IRIS_DEVICE IRIS_FORCEINLINE void load(T (&r)[L::kPerThread], const T* p, long long valid) {
  constexpr int V = L::kVec;
  if (whole_and_aligned<L>(p, valid)) {
#pragma unroll
    for (int c = 0; c < L::kChunks; ++c) detail::copy_vec<T, V>(&r[c * V], p + L::elem(c * V));
    return;
  }
#pragma unroll
  for (int s = 0; s < L::kPerThread; ++s) {
    const long long e = L::elem(s);
    r[s] = e < valid ? p[e] : T(0);
  }
}

// p[elem(s)] = r[s] for elem(s) < valid.
template <class L, class T>
IRIS_DEVICE IRIS_FORCEINLINE void store(T* p, const T (&r)[L::kPerThread], long long valid) {
  constexpr int V = L::kVec;
  if (whole_and_aligned<L>(p, valid)) {
#pragma unroll
    for (int c = 0; c < L::kChunks; ++c) detail::copy_vec<T, V>(p + L::elem(c * V), &r[c * V]);
    return;
  }
#pragma unroll
  for (int s = 0; s < L::kPerThread; ++s) {
    const long long e = L::elem(s);
    if (e < valid) p[e] = r[s];
  }
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

}  // namespace iris::device::tile
#endif  // IRIS_CUDA_COMPILER
