// Shared-memory barriers (mbarrier) and the other synchronization the sm90 GEMM uses:
// transaction-counted arrivals for TMA, waits by phase parity, named barriers for one
// warpgroup, and the proxy fence between ordinary and async (TMA, wgmma) accesses.
#pragma once

#include "../../arch.hpp"

#if IRIS_CUDA_COMPILER
namespace iris::device::sm90 {

IRIS_DEVICE IRIS_FORCEINLINE u32 smem_addr(const void* p) {
  return static_cast<u32>(__cvta_generic_to_shared(p));
}

// An mbarrier in shared memory (8 bytes, 8-byte aligned).
struct Mbarrier {
  u64 word;
};

IRIS_DEVICE IRIS_FORCEINLINE void mbarrier_init(Mbarrier& bar, u32 arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(&bar)), "r"(arrivals) : "memory");
}

// Makes barrier initialization visible to the async proxy (TMA completes on them).
IRIS_DEVICE IRIS_FORCEINLINE void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// One arrival that also expects `bytes` of TMA transactions before the phase completes.
IRIS_DEVICE IRIS_FORCEINLINE void mbarrier_arrive_expect_tx(Mbarrier& bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(&bar)),
               "r"(bytes)
               : "memory");
}

IRIS_DEVICE IRIS_FORCEINLINE void mbarrier_arrive(Mbarrier& bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(smem_addr(&bar)) : "memory");
}

// Waits until the phase of parity `parity` has completed. A barrier starts in phase 0,
// so waiting for parity 1 on a fresh barrier returns at once (the producer's first pass
// over an empty ring). Arrivals from other CTAs of a cluster count the same.
IRIS_DEVICE IRIS_FORCEINLINE void mbarrier_wait(Mbarrier& bar, u32 parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n"
      "}\n" ::"r"(smem_addr(&bar)),
      "r"(parity)
      : "memory");
}

// --- clusters (thread-block clusters, sm_90) ---------------------------------------------
IRIS_DEVICE IRIS_FORCEINLINE u32 cluster_cta_rank() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

// Every thread of every CTA of the cluster: arrive, then wait for all.
IRIS_DEVICE IRIS_FORCEINLINE void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// One arrival on the barrier at the same shared-memory offset in CTA `cta` of the cluster.
IRIS_DEVICE IRIS_FORCEINLINE void mbarrier_arrive_cluster(Mbarrier& bar, u32 cta) {
  u32 remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_addr(&bar)), "r"(cta));
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
}

// Barrier `id` (1..15; 0 is __syncthreads) over `threads` threads.
IRIS_DEVICE IRIS_FORCEINLINE void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// Orders this thread's ordinary shared-memory accesses before later async-proxy ones.
IRIS_DEVICE IRIS_FORCEINLINE void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Orders this thread's generic-proxy accesses of global memory (an acquire of a flag a
// peer raised) before its later async-proxy ones (TMA loads of what the flag guards).
IRIS_DEVICE IRIS_FORCEINLINE void fence_proxy_async_global() {
  asm volatile("fence.proxy.async.global;" ::: "memory");
}

// Hands registers between warpgroups (sm_90a): the producer gives up what it does not
// need, the consumers take it for their accumulators.
template <int REGS>
IRIS_DEVICE IRIS_FORCEINLINE void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(REGS));
}
template <int REGS>
IRIS_DEVICE IRIS_FORCEINLINE void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(REGS));
}

}  // namespace iris::device::sm90
#endif  // IRIS_CUDA_COMPILER
