// Remote memory access over the symmetric heap: single loads/stores, one
// thread's element copies, and block-cooperative bulk copies. Peers' heaps are
// mapped into this process (NVLink/PCIe P2P), so each of these is ordinary
// loads and stores on translated pointers; none of them orders or completes
// anything (use fence()/quiet()/signal() for that).
#pragma once

#include "../arch.hpp"
#include "../context.hpp"

#if IRIS_GPU_COMPILER
namespace iris::device {
namespace detail {

template <class T>
inline constexpr bool is_rma_word_v =
    __is_trivially_copyable(T) &&
    (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16);

// Loads issued by one thread before its first store, so that a thread waits
// one remote round trip per group instead of one per element. On H200 NVLink
// 1 cost ~1.5% of bandwidth while 2..16 measured the same; 4 keeps the data
// in 16 registers, which leaves full occupancy possible.
inline constexpr int kCopyUnroll = 4;

// The L2 line size: the unit in which remote writes travel best.
inline constexpr u64 kLineBytes = 128;

// Linear thread index, so that the block copies also work for 2D/3D blocks.
IRIS_DEVICE IRIS_FORCEINLINE u32 block_thread_rank() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
IRIS_DEVICE IRIS_FORCEINLINE u32 block_thread_count() {
  return blockDim.x * blockDim.y * blockDim.z;
}

// Copies n elements, starting at element `first` and striding by `stride`.
// Each step loads kCopyUnroll elements (stride apart, so a warp's accesses
// stay coalesced) before storing any of them. The unrolled loop runs while a
// thread's whole group is in bounds; the leftover (< kCopyUnroll per thread)
// continues with the same stride, so every element is copied exactly once
// without any division.
template <class V>
IRIS_DEVICE IRIS_FORCEINLINE void strided_copy(V* dst, const V* src, usize n, usize first,
                                               usize stride) {
  const usize last_in_group = stride * (kCopyUnroll - 1);
  usize i = first;
  for (; i + last_in_group < n; i += stride * kCopyUnroll) {
    V r[kCopyUnroll];
#pragma unroll
    for (int k = 0; k < kCopyUnroll; ++k) r[k] = src[i + k * stride];
#pragma unroll
    for (int k = 0; k < kCopyUnroll; ++k) dst[i + k * stride] = r[k];
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

// Block-wide byte copy through words of type V, for pointers whose distance
// is a multiple of sizeof(V). A byte head first brings dst to a 128-byte line
// boundary (src then is V-aligned, as the distance is a multiple): a warp's
// 512-byte uint4 store then covers whole lines. Straddling lines costs two
// partial-line writes per warp: block_put measured 88% instead of 94% of
// cudaMemcpyPeer on H200 NVLink. Then whole words, then a byte tail shorter
// than one word.
template <class V>
IRIS_DEVICE IRIS_FORCEINLINE void block_copy_as(char* dst, const char* src, usize bytes) {
  const u32 t = block_thread_rank();
  const u32 nt = block_thread_count();
  const usize to_line = (kLineBytes - reinterpret_cast<u64>(dst) % kLineBytes) % kLineBytes;
  const usize head = to_line < bytes ? to_line : bytes;
  const usize words = (bytes - head) / sizeof(V);
  const usize tail = head + words * sizeof(V);
  for (usize i = t; i < head; i += nt) dst[i] = src[i];
  strided_copy(reinterpret_cast<V*>(dst + head), reinterpret_cast<const V*>(src + head), words,
               t, nt);
  for (usize i = tail + t; i < bytes; i += nt) dst[i] = src[i];
}

// Picks the widest word that both pointers can be aligned to at once. Heap
// allocations are 256-byte aligned, so the uint4 path is the normal one; the
// narrower ones keep odd offsets correct rather than fast.
IRIS_DEVICE IRIS_FORCEINLINE void block_copy_bytes(void* dst, const void* src, usize bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  const u64 distance = reinterpret_cast<u64>(d) ^ reinterpret_cast<u64>(s);
  if (distance % 16 == 0) {
    block_copy_as<uint4>(d, s, bytes);
  } else if (distance % 8 == 0) {
    block_copy_as<uint2>(d, s, bytes);
  } else if (distance % 4 == 0) {
    block_copy_as<u32>(d, s, bytes);
  } else if (distance % 2 == 0) {
    block_copy_as<unsigned short>(d, s, bytes);
  } else {
    strided_copy(d, s, bytes, block_thread_rank(), block_thread_count());
  }
}

}  // namespace detail

// Plain (weak) read of one element of rank `from`'s copy of *ptr. Types of
// 16 bytes with 16-byte alignment (uint4, float4) are read in one access.
template <class T>
IRIS_DEVICE IRIS_FORCEINLINE T load(const Context& ctx, const T* ptr, int from) {
  static_assert(detail::is_rma_word_v<T>,
                "iris::device::load needs a trivially copyable type of 1, 2, 4, 8 or 16 bytes");
  return *translate(ctx, ptr, from);
}

// Plain (weak) write of one element to rank `to`'s copy of *ptr.
template <class T>
IRIS_DEVICE IRIS_FORCEINLINE void store(const Context& ctx, T* ptr, T value, int to) {
  static_assert(detail::is_rma_word_v<T>,
                "iris::device::store needs a trivially copyable type of 1, 2, 4, 8 or 16 bytes");
  *translate(ctx, ptr, to) = value;
}

// One thread copies n elements from rank `from`'s src to rank `to`'s dst
// (either may be this rank). The ranges must not overlap.
template <class T>
IRIS_DEVICE IRIS_FORCEINLINE void copy(const Context& ctx, T* dst, const T* src, usize n, int from,
                                       int to) {
  static_assert(__is_trivially_copyable(T), "iris::device::copy needs a trivially copyable type");
  detail::strided_copy(translate(ctx, dst, to), translate(ctx, src, from), n, 0, 1);
}

// One thread reads n elements of rank `from`'s src_symmetric into dst_local.
template <class T>
IRIS_DEVICE IRIS_FORCEINLINE void get(const Context& ctx, T* dst_local, const T* src_symmetric,
                                      usize n, int from) {
  static_assert(__is_trivially_copyable(T), "iris::device::get needs a trivially copyable type");
  detail::strided_copy(dst_local, translate(ctx, src_symmetric, from), n, 0, 1);
}

// One thread writes n elements of src_local into rank `to`'s dst_symmetric.
template <class T>
IRIS_DEVICE IRIS_FORCEINLINE void put(const Context& ctx, T* dst_symmetric, const T* src_local,
                                      usize n, int to) {
  static_assert(__is_trivially_copyable(T), "iris::device::put needs a trivially copyable type");
  detail::strided_copy(translate(ctx, dst_symmetric, to), src_local, n, 0, 1);
}

// Block-cooperative copies: every thread of the block calls them with the
// same arguments and moves its own share (a grid-wide copy gives each block
// its own slice). They contain no __syncthreads, so back-to-back copies cost
// no barrier; a caller that then signals from one thread must __syncthreads()
// first, so that the signal's release covers every thread's stores. Any
// alignment works; full speed needs dst and src to be congruent mod 16
// (always true for 16-byte aligned buffers). Ranges must not overlap.

// Bytes from rank `from`'s src to rank `to`'s dst.
IRIS_DEVICE IRIS_FORCEINLINE void block_copy(const Context& ctx, void* dst, const void* src,
                                             usize bytes, int from, int to) {
  detail::block_copy_bytes(translate(ctx, dst, to), translate(ctx, src, from), bytes);
}

// Bytes from local src_local to rank `to`'s dst_symmetric.
IRIS_DEVICE IRIS_FORCEINLINE void block_put(const Context& ctx, void* dst_symmetric,
                                            const void* src_local, usize bytes, int to) {
  detail::block_copy_bytes(translate(ctx, dst_symmetric, to), src_local, bytes);
}

// Bytes from rank `from`'s src_symmetric to local dst_local.
IRIS_DEVICE IRIS_FORCEINLINE void block_get(const Context& ctx, void* dst_local,
                                            const void* src_symmetric, usize bytes, int from) {
  detail::block_copy_bytes(dst_local, translate(ctx, src_symmetric, from), bytes);
}

}  // namespace iris::device
#endif  // IRIS_GPU_COMPILER
