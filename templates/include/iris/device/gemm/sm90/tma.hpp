// TMA (the bulk tensor copy engine, cp.async.bulk.tensor): the tensor map a global tile
// owns, 2-D loads into shared memory that complete on an mbarrier,
//
// and 2-D stores from shared memory in bulk groups (the GEMM epilogue's).
//
// A TensorMap is the driver's CUtensorMap (128 opaque bytes, 64-byte aligned), declared
// here without <cuda.h> so that the header compiles under NVRTC. Kernels take it by
// value as a `const __grid_constant__` parameter; libiris encodes it on the host
// (iris::TensorMap, cuTensorMapEncodeTiled) with the boxes of gemm/shapes.hpp.
#pragma once

#include "../../context.hpp"
#include "barrier.hpp"

namespace iris::device {

struct alignas(64) TensorMap {
  u64 opaque[16];
};

// One operand's tensor map on every rank (gathered(A)): rank[r] reads rank r's tensor,
// at its address in this process. Slots from the job's world on are unused.
struct alignas(64) TensorMaps {
  TensorMap rank[kMaxRanks];
};

}  // namespace iris::device

#if IRIS_CUDA_COMPILER
namespace iris::device::sm90 {

// Fetches the tensor map into the descriptor cache ahead of the first load.
IRIS_DEVICE IRIS_FORCEINLINE void tma_prefetch(const TensorMap& map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<u64>(&map)) : "memory");
}

// dst (shared, 1024-aligned for the 128-byte swizzle) <- the box at element coordinates
// (inner, outer) of `map`; completes as transactions on `bar`. Out-of-bounds elements
// are filled with zeros and still count.
IRIS_DEVICE IRIS_FORCEINLINE void tma_load_2d(void* dst, const TensorMap& map, Mbarrier& bar, int inner, int outer) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::"r"(
          smem_addr(dst)),
      "l"(reinterpret_cast<u64>(&map)), "r"(smem_addr(&bar)), "r"(inner), "r"(outer)
      : "memory");
}

// The same box, written to the same offset of every CTA of the cluster in `cta_mask`,
// each completing on its own barrier at `bar`'s offset.
IRIS_DEVICE IRIS_FORCEINLINE void tma_load_2d_multicast(void* dst, const TensorMap& map, Mbarrier& bar, int inner,
                                                        int outer, unsigned short cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<u64>(&map)), "r"(smem_addr(&bar)), "r"(inner), "r"(outer), "h"(cta_mask)
      : "memory");
}

// The box at element coordinates (inner, outer) of `map` <- src (shared, 1024-aligned
// for the 128-byte swizzle), in this thread's current bulk group. Out-of-bounds elements
// are not written. The thread's writes to src must be made visible to TMA first
// (fence_proxy_async_shared, then a barrier of the threads that wrote it).
IRIS_DEVICE IRIS_FORCEINLINE void tma_store_2d(const TensorMap& map, const void* src, int inner, int outer) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
                   reinterpret_cast<u64>(&map)),
               "r"(smem_addr(src)), "r"(inner), "r"(outer)
               : "memory");
}

// Closes this thread's current bulk group of stores.
IRIS_DEVICE IRIS_FORCEINLINE void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

// Waits until at most N of this thread's bulk groups still read their shared memory
// (which may then be written again); their writes to global memory may still be on
// their way.
template <int N>
IRIS_DEVICE IRIS_FORCEINLINE void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// Waits until every bulk group of this thread has completed, its writes performed.
IRIS_DEVICE IRIS_FORCEINLINE void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

}  // namespace iris::device::sm90
#endif  // IRIS_CUDA_COMPILER
