// scratch: put/get bandwidth variants (deleted after use)
#include <iris/device.hpp>
#include <cstdio>
#include <cstdlib>
using namespace iris::device;
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

enum Hint { PLAIN, CS, CG, WT, NCLOAD };
template <int U, int H>
__device__ __forceinline__ void vcopy(uint4* dst, const uint4* src, usize n, usize first, usize stride) {
  usize i = first;
  for (; i + stride * (U - 1) < n; i += stride * U) {
    uint4 r[U];
#pragma unroll
    for (int k = 0; k < U; ++k) {
      if (H == NCLOAD) r[k] = __ldcs(src + i + k * stride); else r[k] = src[i + k * stride];
    }
#pragma unroll
    for (int k = 0; k < U; ++k) {
      uint4* d = dst + i + k * stride;
      if (H == CS) __stcs(d, r[k]); else if (H == CG) __stcg(d, r[k]); else if (H == WT) __stwt(d, r[k]); else *d = r[k];
    }
  }
  for (; i < n; i += stride) dst[i] = src[i];
}
// contiguous slice per block
template <int U, int H>
__global__ void k_slice(const __grid_constant__ Context ctx, char* dst, const char* src, usize bytes, int peer, int get) {
  const usize slice = bytes / gridDim.x;
  char* d = dst + blockIdx.x * slice; const char* s = src + blockIdx.x * slice;
  if (get) s = translate(ctx, s, peer); else d = translate(ctx, d, peer);
  vcopy<U, H>((uint4*)d, (const uint4*)s, slice / 16, threadIdx.x, blockDim.x);
}
// whole-grid interleave
template <int U>
__global__ void k_grid(const __grid_constant__ Context ctx, char* dst, const char* src, usize bytes, int peer, int get) {
  char* d = dst; const char* s = src;
  if (get) s = translate(ctx, s, peer); else d = translate(ctx, d, peer);
  vcopy<U, PLAIN>((uint4*)d, (const uint4*)s, bytes / 16, blockIdx.x * (usize)blockDim.x + threadIdx.x, (usize)gridDim.x * blockDim.x);
}
__global__ void k_lib(const __grid_constant__ Context ctx, char* dst, const char* src, usize bytes, int peer, int get) {
  const usize slice = bytes / gridDim.x;
  if (get) block_get(ctx, dst + blockIdx.x * slice, src + blockIdx.x * slice, slice, peer);
  else block_put(ctx, dst + blockIdx.x * slice, src + blockIdx.x * slice, slice, peer);
}

// TMA bulk: global->smem (source), smem->global (dest), NST stages of CH bytes, one thread drives.
template <int CH, int NST>
__global__ void k_tma(const __grid_constant__ Context ctx, char* dst, const char* src, usize bytes, int peer, int get) {
  extern __shared__ __align__(128) char smem[];
  __shared__ __align__(8) unsigned long long bar[NST];
  const usize slice = bytes / gridDim.x;
  char* d = dst + blockIdx.x * slice; const char* s = src + blockIdx.x * slice;
  if (get) s = translate(ctx, s, peer); else d = translate(ctx, d, peer);
  if (threadIdx.x != 0) return;
  for (int i = 0; i < NST; ++i) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"((unsigned)__cvta_generic_to_shared(&bar[i])));
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  const usize nchunks = slice / CH;
  unsigned phase[NST] = {};
  auto issue_load = [&](usize c) {
    int st = c % NST; unsigned b = (unsigned)__cvta_generic_to_shared(&bar[st]);
    unsigned sm = (unsigned)__cvta_generic_to_shared(smem + st * CH);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(CH) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" :: "r"(sm), "l"(s + c * CH), "r"(CH), "r"(b) : "memory");
  };
  for (usize c = 0; c < nchunks && c < NST; ++c) issue_load(c);
  for (usize c = 0; c < nchunks; ++c) {
    int st = c % NST; unsigned b = (unsigned)__cvta_generic_to_shared(&bar[st]);
    unsigned ok = 0;
    while (!ok) asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }" : "=r"(ok) : "r"(b), "r"(phase[st]) : "memory");
    phase[st] ^= 1;
    unsigned sm = (unsigned)__cvta_generic_to_shared(smem + st * CH);
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" :: "l"(d + c * CH), "r"(sm), "r"(CH) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    if (c + NST < nchunks) {
      asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");  // smem of this stage free again
      issue_load(c + NST);
    }
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

int main() {
  CK(cudaSetDevice(1)); CK(cudaDeviceEnablePeerAccess(0, 0)); CK(cudaSetDevice(0)); CK(cudaDeviceEnablePeerAccess(1, 0));
  int sms = 0; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const size_t B = (size_t)sms * 8 << 20;  // every grid size below divides it into MiB-multiple slices
  char *h0, *h1, *src0;
  CK(cudaMalloc(&h0, B)); CK(cudaMalloc(&src0, B)); CK(cudaMemset(src0, 1, B));
  CK(cudaSetDevice(1)); CK(cudaMalloc(&h1, B)); CK(cudaSetDevice(0));
  Context ctx{}; ctx.rank = 0; ctx.world = 2; ctx.heap_bases[0] = h0; ctx.heap_bases[1] = h1;
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  auto timeit = [&](auto fn) { fn(); CK(cudaDeviceSynchronize()); CK(cudaGetLastError()); const int it = 10; CK(cudaEventRecord(e0)); for (int i = 0; i < it; ++i) fn(); CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); return B * it / (ms * 1e-3) / 1e9; };
  double cp = timeit([&] { CK(cudaMemcpyPeerAsync(h1, 1, src0, 0, B)); });
  double cg = timeit([&] { CK(cudaMemcpyPeerAsync(src0, 0, h1, 1, B)); });
  double cp2 = timeit([&] { CK(cudaMemcpyAsync(h1, src0, B, cudaMemcpyDeviceToDevice)); });
  printf("memcpyPeer put %.1f get %.1f ; memcpyAsync D2D(peer ptr) %.1f GB/s\n", cp, cg, cp2);
#define RUN(name, K, g, t, smem) { \
    double p = timeit([&] { K<<<g, t, smem>>>(ctx, h0, src0, B, 1, 0); }); \
    double q = timeit([&] { K<<<g, t, smem>>>(ctx, src0, h0, B, 1, 1); }); \
    printf("%-22s g=%4d t=%4d put %6.1f (%5.1f%%) get %6.1f (%5.1f%%)\n", name, g, t, p, 100*p/cp, q, 100*q/cg); }
  for (int g : {sms, 2 * sms}) for (int t : {512, 1024}) RUN("lib", k_lib, g, t, 0);
  for (int g : {sms, 2 * sms}) for (int t : {512}) {
    RUN("U8", (k_slice<8, PLAIN>), g, t, 0); RUN("U16", (k_slice<16, PLAIN>), g, t, 0);
    RUN("U4 cs", (k_slice<4, CS>), g, t, 0);
  }
  for (int off : {16, 64, 80}) {
    double p = timeit([&] { k_lib<<<sms, 512>>>(ctx, h0 + off, src0 + off, B - 4096, 1, 0); });
    double q = timeit([&] { k_lib<<<sms, 512>>>(ctx, src0 + off, h0 + off, B - 4096, 1, 1); });
    printf("lib misaligned slices off %d: put %.1f (%.1f%%) get %.1f (%.1f%%)\n", off, p, 100*p/cp, q, 100*q/cg);
  }
  CK(cudaFuncSetAttribute(k_tma<32768, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize, 32768 * 4));
  CK(cudaFuncSetAttribute(k_tma<16384, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize, 16384 * 4));
  CK(cudaFuncSetAttribute(k_tma<65536, 3>, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536 * 3));
  for (int g : {sms / 2, sms, 2 * sms}) {
    RUN("tma 32K x4", (k_tma<32768, 4>), g, 32, 32768 * 4);
    RUN("tma 16K x4", (k_tma<16384, 4>), g, 32, 16384 * 4);
    if (g <= sms) RUN("tma 64K x3", (k_tma<65536, 3>), g, 32, 65536 * 3);
  }
  // verify TMA put correctness once
  { CK(cudaMemset(h1, 0, B)); k_tma<32768, 4><<<sms, 32, 32768 * 4>>>(ctx, h0, src0, B, 1, 0); CK(cudaDeviceSynchronize());
    static unsigned char buf[1 << 20]; CK(cudaMemcpy(buf, h1 + B - sizeof(buf), sizeof(buf), cudaMemcpyDefault)); int bad = 0; for (unsigned char c : buf) bad += c != 1; printf("tma check bad=%d\n", bad); }
  return 0;
}
