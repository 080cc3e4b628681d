// Kernels libiris itself launches: tensor initialisation (fill, arange, random) and
// the graph-capturable device barrier. Built by nvcc into a fatbin, and as HIP into an
// AMD code object per architecture (tools/amdgpu_kernels), both embedded in libiris.
#include "iris/device/arch.hpp"
#if IRIS_CUDA_COMPILER
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

#include "iris/device.hpp"

using iris::device::Context;
using u64 = unsigned long long;
#if IRIS_CUDA_COMPILER
using f16 = __half;
using bf16 = __nv_bfloat16;
#else
using f16 = _Float16;
using bf16 = iris::device::bfloat16;
#endif

namespace {

__device__ __forceinline__ u64 grid_index() { return blockIdx.x * (u64)blockDim.x + threadIdx.x; }
__device__ __forceinline__ u64 grid_stride() { return (u64)gridDim.x * blockDim.x; }

// splitmix64 finalizer: a counter-based generator, so element i's value depends only
// on (seed, rank, i) and any grid shape gives the same numbers.
__device__ __forceinline__ u64 mix64(u64 z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
__device__ __forceinline__ float uniform01(u64 bits) { return (bits >> 40) * (1.0f / 16777216.0f); }

template <class T> __device__ __forceinline__ T from_double(double v) { return static_cast<T>(v); }
#if IRIS_CUDA_COMPILER
template <> __device__ __forceinline__ __half from_double<__half>(double v) { return __double2half(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_double<__nv_bfloat16>(double v) {
  return __double2bfloat16(v);
}
#endif

template <class T>
__device__ void fill_pattern(T* dst, u64 n, u64 bits) {
  T v;
  memcpy(&v, &bits, sizeof(T));
  for (u64 i = grid_index(); i < n; i += grid_stride()) dst[i] = v;
}

template <class T>
__device__ void arange(T* dst, u64 n) {
  for (u64 i = grid_index(); i < n; i += grid_stride()) dst[i] = from_double<T>((double)i);
}

// kind 0: uniform [0,1); 1: standard normal (Box-Muller); 2: integers in [lo, hi).
template <class T>
__device__ void random(T* dst, u64 n, int kind, u64 seed, long long lo, long long hi) {
  const u64 key = mix64(seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull);
  for (u64 i = grid_index(); i < n; i += grid_stride()) {
    u64 a = mix64(key ^ (2 * i));
    double v;
    if (kind == 0) {
      v = uniform01(a);
    } else if (kind == 1) {
      u64 b = mix64(key ^ (2 * i + 1));
      float u1 = fmaxf(uniform01(a), 1e-7f), u2 = uniform01(b);
      v = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
    } else {
      u64 span = (u64)(hi - lo);
      v = (double)(lo + (long long)(a % span));
    }
    dst[i] = from_double<T>(v);
  }
}

}  // namespace

#define IRIS_FOR_EACH_DTYPE(X) \
  X(f32, float)                \
  X(f16, f16)                  \
  X(bf16, bf16)                \
  X(i32, int)                  \
  X(i64, long long)            \
  X(u32, unsigned)             \
  X(u64, unsigned long long)

#define IRIS_DEFINE(name, T)                                                                            \
  extern "C" __global__ void iris_arange_##name(Context, T* dst, u64 n) { arange(dst, n); }            \
  extern "C" __global__ void iris_random_##name(Context, T* dst, u64 n, int kind, u64 seed, long long lo, \
                                                long long hi) {                                       \
    random(dst, n, kind, seed, lo, hi);                                                                 \
  }
IRIS_FOR_EACH_DTYPE(IRIS_DEFINE)
#undef IRIS_DEFINE

extern "C" __global__ void iris_fill_u64(Context, unsigned long long* dst, u64 n, u64 bits) {
  fill_pattern(dst, n, bits);
}

// One block of >= world threads. flags[r] (in this rank's heap) receives rank r's
// epoch; epoch (local) counts this rank's barriers. State lives on the device, so the
// barrier replays correctly inside a CUDA graph.
extern "C" __global__ void iris_device_barrier(const __grid_constant__ Context ctx, u64* flags, u64* epoch) {
  using namespace iris::device;
  __shared__ u64 e;
  if (threadIdx.x == 0) {
    e = *epoch + 1;
    *epoch = e;
    // Make this rank's earlier writes (kernels before the barrier) visible system-wide
    // before anyone can observe the new epoch.
    fence<Scope::system>();
  }
  __syncthreads();
  const int r = threadIdx.x;
  if (r < ctx.world) {
    atomic_store<Order::release, Scope::system>(translate(ctx, flags + ctx.rank, r), e);
    wait_until<Order::acquire, Scope::system>(ctx, flags + r, Cmp::ge, e, WaitSite{"the device barrier", r, 1});
  }
  __syncthreads();
}

// Writes %globaltimer, so the host can put device trace events on its own clock.
extern "C" __global__ void iris_trace_clock(Context, u64* out) { *out = iris::device::globaltimer(); }
