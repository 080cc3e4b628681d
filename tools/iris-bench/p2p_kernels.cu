// iris-bench p2p device code: bulk put/get, element-wise store/load, all-peer
// variants, scattered remote atomics and a one-thread signal ping-pong.
#include "iris/device.hpp"

using namespace iris::device;
using u64 = unsigned long long;

// Splits `bytes` into 16-byte-aligned slices, one per block of the group.
__device__ __forceinline__ void slice(u64 bytes, unsigned block, unsigned blocks, u64* lo, u64* len) {
  const u64 per = ((bytes + blocks - 1) / blocks + 15) / 16 * 16;
  *lo = (u64)block * per;
  *len = *lo >= bytes ? 0 : (*lo + per > bytes ? bytes - *lo : per);
}

extern "C" __global__ void bulk_put(const __grid_constant__ Context ctx, char* dst, const char* src, u64 bytes, int to) {
  u64 lo, len;
  slice(bytes, blockIdx.x, gridDim.x, &lo, &len);
  if (len) block_put(ctx, dst + lo, src + lo, len, to);
}

extern "C" __global__ void bulk_get(const __grid_constant__ Context ctx, char* dst, const char* src, u64 bytes, int from) {
  u64 lo, len;
  slice(bytes, blockIdx.x, gridDim.x, &lo, &len);
  if (len) block_get(ctx, dst + lo, src + lo, len, from);
}

extern "C" __global__ void elem_store(const __grid_constant__ Context ctx, uint4* dst, const uint4* src, u64 n, int to) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
    store(ctx, dst + i, src[i], to);
  }
}

extern "C" __global__ void elem_load(const __grid_constant__ Context ctx, uint4* dst, const uint4* src, u64 n, int from) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
    dst[i] = load(ctx, src + i, from);
  }
}

// All peers at once: the grid is split into world-1 groups, group g serves peer
// (rank + 1 + g) % world. dst is [world][bytes]; this rank writes/reads row `rank`
// (put) or reads the peer's src into row `peer` (get).
extern "C" __global__ void bulk_put_all(const __grid_constant__ Context ctx, char* dst, const char* src, u64 bytes) {
  const unsigned peers = ctx.world - 1, per_group = gridDim.x / peers;
  const unsigned g = blockIdx.x / per_group;
  if (g >= peers) return;
  const int to = (ctx.rank + 1 + g) % ctx.world;
  u64 lo, len;
  slice(bytes, blockIdx.x % per_group, per_group, &lo, &len);
  if (len) block_put(ctx, dst + ctx.rank * bytes + lo, src + lo, len, to);
}

extern "C" __global__ void bulk_get_all(const __grid_constant__ Context ctx, char* dst, const char* src, u64 bytes) {
  const unsigned peers = ctx.world - 1, per_group = gridDim.x / peers;
  const unsigned g = blockIdx.x / per_group;
  if (g >= peers) return;
  const int from = (ctx.rank + 1 + g) % ctx.world;
  u64 lo, len;
  slice(bytes, blockIdx.x % per_group, per_group, &lo, &len);
  if (len) block_get(ctx, dst + from * bytes + lo, src + lo, len, from);
}

// All peers at once, reading each source chunk once: every thread loads 4 x 16 bytes
// and stores them to every peer (row `rank` of dst on each), so each block keeps
// (world - 1) x 4 stores in flight per round of loads.
extern "C" __global__ void bulk_put_all_fused(const __grid_constant__ Context ctx, uint4* dst, const uint4* src,
                                              u64 n16) {
  const u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n16; i += 4 * stride) {
    uint4 r[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if (i + k * stride < n16) r[k] = src[i + k * stride];
    }
    for (int p = 1; p < ctx.world; ++p) {
      uint4* d = translate(ctx, dst + ctx.rank * n16, (ctx.rank + p) % ctx.world);
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        if (i + k * stride < n16) d[i + k * stride] = r[k];
      }
    }
  }
}

// Scattered relaxed atomic adds on a peer's u32 array (a multiplicative hash of i).
extern "C" __global__ void scattered_add(const __grid_constant__ Context ctx, unsigned* counters, u64 slots, u64 ops, int to) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < ops; i += (u64)gridDim.x * blockDim.x) {
    const u64 slot = (i * 0x9E3779B97F4A7C15ull >> 20) % slots;
    atomic_add<Order::relaxed, Scope::system>(ctx, counters + slot, 1u, to);
  }
}

extern "C" __global__ void scattered_red(const __grid_constant__ Context ctx, unsigned* counters, u64 slots, u64 ops,
                                         int to) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < ops; i += (u64)gridDim.x * blockDim.x) {
    const u64 slot = (i * 0x9E3779B97F4A7C15ull >> 20) % slots;
    red_add(ctx, counters + slot, 1u, to);
  }
}

// One thread on each of two ranks: rank `a` signals b and waits for b's answer, b
// waits and answers; `rounds` round trips. flag is a symmetric u64.
extern "C" __global__ void ping_pong(const __grid_constant__ Context ctx, u64* flag, int a, int b, unsigned rounds) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  const bool first = ctx.rank == a;
  const int other = first ? b : a;
  for (u64 k = 1; k <= rounds; ++k) {
    if (first) {
      signal(ctx, flag, k, other);
      wait_until(ctx, flag, Cmp::ge, k);
    } else {
      wait_until(ctx, flag, Cmp::ge, k);
      signal(ctx, flag, k, other);
    }
  }
}
