// scratch: correctness + bandwidth check for iris device headers (deleted after use)
#include <iris/device.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
using namespace iris::device;
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

enum Mode { PUT, GET, COPY };
__global__ void k_block(const __grid_constant__ Context ctx, char* dst, const char* src, usize bytes, int peer, int mode) {
  const usize slice = (bytes + gridDim.x - 1) / gridDim.x;
  const usize begin = blockIdx.x * slice;
  if (begin >= bytes) return;
  const usize n = begin + slice > bytes ? bytes - begin : slice;
  if (mode == PUT) block_put(ctx, dst + begin, src + begin, n, peer);
  else if (mode == GET) block_get(ctx, dst + begin, src + begin, n, peer);
  else block_copy(ctx, dst + begin, src + begin, n, ctx.rank, peer);
}
__global__ void k_elem(const __grid_constant__ Context ctx, int* dst, const int* src, usize n, int peer, int mode) {
  if (threadIdx.x || blockIdx.x) return;
  if (mode == PUT) put(ctx, dst, src, n, peer);
  else if (mode == GET) get(ctx, dst, src, n, peer);
  else copy(ctx, dst, src, n, ctx.rank, peer);
}
__global__ void k_atomics(const __grid_constant__ Context ctx, char* heap, int peer) {
  i32* a = (i32*)heap; u64* b = (u64*)(heap + 64); float* f = (float*)(heap + 128); i64* m = (i64*)(heap + 192);
  atomic_add(ctx, a, 3, peer); atomic_sub<Order::relaxed, Scope::device>(ctx, a, 1, peer);
  atomic_add<Order::relaxed>(ctx, b, 1ull, peer);
  atomic_add(ctx, f, 0.5f, peer);
  i64 v = (i64)threadIdx.x - 100;
  atomic_min(ctx, m, v, peer); atomic_max(ctx, m + 1, v, peer);
  atomic_or(ctx, (u32*)(heap + 256), 1u << (threadIdx.x % 32), peer);
  if (threadIdx.x == 0) { u32 old = atomic_cas(ctx, (u32*)(heap + 260), 0u, 7u, peer); atomic_xchg(ctx, (u32*)(heap + 264), old + 1, peer); }
}
__global__ void k_pingpong(const __grid_constant__ Context ctx, u64* flag, int iters, long long* cycles) {
  const int peer = 1 - ctx.rank;
  long long t0 = clock64();
  for (int i = 1; i <= iters; ++i) {
    if (ctx.rank == 0) { signal(ctx, flag, (u64)i, peer); wait_until(flag, Cmp::ge, (u64)i); }
    else { wait_until(flag, Cmp::ge, (u64)i); signal(ctx, flag, (u64)i, peer); }
  }
  *cycles = clock64() - t0;
}

int main() {
  int ndev = 0; CK(cudaGetDeviceCount(&ndev));
  const int peerdev = ndev > 1 ? 1 : 0;
  printf("devices: %d\n", ndev);
  if (ndev > 1) { int can = 0; CK(cudaDeviceCanAccessPeer(&can, 0, 1)); printf("p2p 0->1: %d\n", can);
    CK(cudaSetDevice(1)); CK(cudaDeviceEnablePeerAccess(0, 0)); CK(cudaSetDevice(0)); CK(cudaDeviceEnablePeerAccess(1, 0)); }
  const size_t H = (size_t)1 << 30;  // heap size per rank
  char *h0, *h1;
  CK(cudaSetDevice(0)); CK(cudaMalloc(&h0, H));
  CK(cudaSetDevice(peerdev)); CK(cudaMalloc(&h1, H));
  CK(cudaSetDevice(0));
  Context ctx{}; ctx.rank = 0; ctx.world = 2; ctx.heap_bases[0] = h0; ctx.heap_bases[1] = h1;
  char* local; CK(cudaMalloc(&local, 64 << 20));

  // ---- correctness of block copies over alignment/size combos ----
  const size_t R = 1 << 16;
  std::vector<unsigned char> pat(R), out(R), expect(R);
  for (size_t i = 0; i < R; ++i) pat[i] = (unsigned char)(i * 131 + 7);
  int fails = 0, cases = 0;
  size_t sizes[] = {0, 1, 2, 3, 15, 16, 17, 31, 33, 63, 64, 65, 100, 255, 256, 1000, 4095, 4097, 12345, 50000};
  int grids[] = {1, 3};
  int threads[] = {32, 96, 256};
  for (int mode = 0; mode < 3; ++mode)
  for (size_t sz : sizes) for (int doff = 0; doff < 17; doff += (sz > 1000 ? 3 : 1)) for (int soff = 0; soff < 17; soff += (sz > 1000 ? 5 : 1))
  for (int g : grids) for (int t : threads) {
    if (g == 3 && t == 32 && sz < 1000) continue;
    // src region: for PUT src is local buffer; GET src is peer heap; COPY src is local heap (rank 0) -> dst peer
    char* srcbuf = mode == PUT ? local : mode == GET ? h1 : h0 + (32 << 20);
    char* dstloc = mode == PUT ? h0 : mode == GET ? local + (32 << 20) : h0;  // pointer passed (symmetric or local)
    char* dstreal = mode == PUT ? h1 : mode == GET ? local + (32 << 20) : h1;
    const char* srcarg = mode == GET ? h0 : srcbuf;  // symmetric address given as rank-0 pointer
    CK(cudaMemcpy(srcbuf, pat.data(), R, cudaMemcpyDefault));
    CK(cudaMemset(dstreal, 0xEE, R));
    k_block<<<g, t>>>(ctx, dstloc + doff, srcarg + soff, sz, 1, mode);
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(out.data(), dstreal, R, cudaMemcpyDefault));
    memset(expect.data(), 0xEE, R); memcpy(expect.data() + doff, pat.data() + soff, sz);
    ++cases;
    if (memcmp(out.data(), expect.data(), R) != 0) { if (fails < 10) printf("FAIL mode %d sz %zu doff %d soff %d g %d t %d\n", mode, sz, doff, soff, g, t); ++fails; }
  }
  // element copies
  for (int mode = 0; mode < 3; ++mode) for (size_t n : {0, 1, 3, 4, 5, 17, 1000}) {
    char* srcbuf = mode == PUT ? local : mode == GET ? h1 : h0 + (32 << 20);
    char* dstloc = mode == PUT ? h0 : mode == GET ? local + (32 << 20) : h0;
    char* dstreal = mode == PUT ? h1 : mode == GET ? local + (32 << 20) : h1;
    const char* srcarg = mode == GET ? h0 : srcbuf;
    CK(cudaMemcpy(srcbuf, pat.data(), R, cudaMemcpyDefault)); CK(cudaMemset(dstreal, 0xEE, R));
    k_elem<<<1, 32>>>(ctx, (int*)dstloc, (const int*)srcarg, n, 1, mode); CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(out.data(), dstreal, R, cudaMemcpyDefault));
    memset(expect.data(), 0xEE, R); memcpy(expect.data(), pat.data(), n * 4);
    ++cases; if (memcmp(out.data(), expect.data(), R)) { printf("FAIL elem mode %d n %zu\n", mode, n); ++fails; }
  }
  printf("copy correctness: %d cases, %d failures\n", cases, fails);

  // ---- atomics correctness ----
  CK(cudaMemset(h1, 0, 4096));
  long long init[2] = {0x7fffffffffffffffll, (long long)0x8000000000000000ull};
  CK(cudaMemcpy(h1 + 192, init, 16, cudaMemcpyDefault));
  k_atomics<<<4, 256>>>(ctx, h0, 1); CK(cudaDeviceSynchronize());
  char hb[512]; CK(cudaMemcpy(hb, h1, 512, cudaMemcpyDefault));
  int ai; unsigned long long bu; float fv; long long mm[2]; unsigned orv, casv, xv;
  memcpy(&ai, hb, 4); memcpy(&bu, hb + 64, 8); memcpy(&fv, hb + 128, 4); memcpy(mm, hb + 192, 16); memcpy(&orv, hb + 256, 4); memcpy(&casv, hb + 260, 4); memcpy(&xv, hb + 264, 4);
  bool aok = ai == 2048 && bu == 1024 && fv == 512.0f && mm[0] == -100 && mm[1] == 155 && orv == 0xffffffffu && casv == 7 && (xv == 1 || xv == 8);
  printf("atomics: add/sub %d add64 %llu fadd %g min %lld max %lld or %x cas %u xchg %u -> %s\n", ai, bu, fv, mm[0], mm[1], orv, casv, xv, aok ? "OK" : "FAIL");

  // ---- bandwidth ----
  int sms = 0; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  const size_t B = (size_t)512 << 20;
  char* src0; CK(cudaMalloc(&src0, B)); CK(cudaMemset(src0, 1, B));
  auto timeit = [&](auto fn) { fn(); CK(cudaDeviceSynchronize()); const int it = 10; CK(cudaEventRecord(e0)); for (int i = 0; i < it; ++i) fn(); CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); return B * it / (ms * 1e-3) / 1e9; };
  double peer_put = timeit([&] { CK(cudaMemcpyPeerAsync(h1, peerdev, src0, 0, B)); });
  double peer_get = timeit([&] { CK(cudaMemcpyPeerAsync(src0, 0, h1, peerdev, B)); });
  printf("cudaMemcpyPeer 0->%d: %.1f GB/s ; %d->0: %.1f GB/s (B=%zu MiB)\n", peerdev, peer_put, peerdev, peer_get, B >> 20);
  for (int bps : {1, 2, 4, 8}) for (int t : {256, 512, 1024}) {
    if (bps * t > 2048) continue;
    const int g = sms * bps;
    double put_bw = timeit([&] { k_block<<<g, t>>>(ctx, h0, src0, B, 1, PUT); });
    double get_bw = timeit([&] { k_block<<<g, t>>>(ctx, src0, h0, B, 1, GET); });
    printf("grid %4d x %4d: block_put %.1f GB/s (%.1f%%)  block_get %.1f GB/s (%.1f%%)\n", g, t, put_bw, 100 * put_bw / peer_put, get_bw, 100 * get_bw / peer_get);
  }
  CK(cudaGetLastError());

  // ---- ping-pong latency (needs 2 GPUs) ----
  if (ndev > 1) {
    u64 *f0 = (u64*)(h0 + 4096), *f1 = (u64*)(h1 + 4096);
    CK(cudaMemset(f0, 0, 8)); CK(cudaSetDevice(1)); CK(cudaMemset(f1, 0, 8)); CK(cudaDeviceSynchronize());
    long long *c0, *c1; CK(cudaSetDevice(0)); CK(cudaMalloc(&c0, 8)); CK(cudaSetDevice(1)); CK(cudaMalloc(&c1, 8));
    Context ctx1 = ctx; ctx1.rank = 1;
    const int iters = 10000;
    CK(cudaSetDevice(1)); k_pingpong<<<1, 1>>>(ctx1, f1, iters, c1);
    CK(cudaSetDevice(0)); cudaEventRecord(e0); k_pingpong<<<1, 1>>>(ctx, f0, iters, c0); cudaEventRecord(e1);
    CK(cudaDeviceSynchronize()); CK(cudaSetDevice(1)); CK(cudaDeviceSynchronize()); CK(cudaSetDevice(0));
    float ms; cudaEventElapsedTime(&ms, e0, e1);
    printf("ping-pong round trip: %.2f us (%d iters)\n", ms * 1e3 / iters, iters);
  }
  return 0;
}
