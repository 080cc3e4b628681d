// The CUDA spellings the device library and irisc's generated kernels use, on AMDGCN:
// HIP compiled by clang without HIP's own headers (-nogpuinc), as irisc compiles it.
// HIP's headers provide the same names in the same way (the index objects are
// properties over the work-item builtins), so the library's portable code reads
// the same on both vendors. Included by arch.hpp under HIP only.
//
// Wavefronts are 64 lanes. Code written for 32-lane warps stays correct where it
// shuffles within aligned groups of 32 lanes (__shfl_xor_sync with a lane mask
// below 32) and sizes per-warp scratch by threads / 32 (more slots than wavefronts).
#pragma once

#if defined(HIP_INCLUDE_HIP_HIP_RUNTIME_H) || defined(HIP_INCLUDE_HIP_HIP_RUNTIME_API_H)
#error "iris/device headers compile HIP without HIP's headers (clang -nogpuinc): include them first or alone"
#endif

#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ inline __attribute__((always_inline))
#define __align__(n) __attribute__((aligned(n)))
// Kernel arguments live in constant kernarg memory on AMDGPU already.
#define __grid_constant__
// __noinline__ is a keyword of clang's CUDA and HIP modes.

namespace iris::device::amdgcn {

// The HSA kernel dispatch packet (hsa_kernel_dispatch_packet_t): the workgroup and
// grid sizes of this launch, in work-items.
struct DispatchPacket {
  unsigned short header, setup;
  unsigned short workgroup_size_x, workgroup_size_y, workgroup_size_z, reserved0;
  unsigned grid_size_x, grid_size_y, grid_size_z;
};

__device__ __forceinline__ const DispatchPacket* dispatch() {
  return reinterpret_cast<const DispatchPacket*>(__builtin_amdgcn_dispatch_ptr());
}

__device__ __forceinline__ unsigned lane_id() { return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u)); }

// p as a pointer to global memory (address space 1): the heap is global memory, and
// atomics on it then compile to global_* instructions rather than flat_* ones.
template <class T>
__device__ __forceinline__ __attribute__((address_space(1))) T* global(T* p) {
  return (__attribute__((address_space(1))) T*)p;
}

// HIP's memory orders and scopes for the __hip_atomic builtins.
inline constexpr int kScopeBlock = __HIP_MEMORY_SCOPE_WORKGROUP;
inline constexpr int kScopeDevice = __HIP_MEMORY_SCOPE_AGENT;
inline constexpr int kScopeSystem = __HIP_MEMORY_SCOPE_SYSTEM;

struct ThreadIdx {
  __declspec(property(get = get_x)) unsigned x;
  __declspec(property(get = get_y)) unsigned y;
  __declspec(property(get = get_z)) unsigned z;
  __device__ __forceinline__ unsigned get_x() const { return __builtin_amdgcn_workitem_id_x(); }
  __device__ __forceinline__ unsigned get_y() const { return __builtin_amdgcn_workitem_id_y(); }
  __device__ __forceinline__ unsigned get_z() const { return __builtin_amdgcn_workitem_id_z(); }
};
struct BlockIdx {
  __declspec(property(get = get_x)) unsigned x;
  __declspec(property(get = get_y)) unsigned y;
  __declspec(property(get = get_z)) unsigned z;
  __device__ __forceinline__ unsigned get_x() const { return __builtin_amdgcn_workgroup_id_x(); }
  __device__ __forceinline__ unsigned get_y() const { return __builtin_amdgcn_workgroup_id_y(); }
  __device__ __forceinline__ unsigned get_z() const { return __builtin_amdgcn_workgroup_id_z(); }
};
struct BlockDim {
  __declspec(property(get = get_x)) unsigned x;
  __declspec(property(get = get_y)) unsigned y;
  __declspec(property(get = get_z)) unsigned z;
  __device__ __forceinline__ unsigned get_x() const { return dispatch()->workgroup_size_x; }
  __device__ __forceinline__ unsigned get_y() const { return dispatch()->workgroup_size_y; }
  __device__ __forceinline__ unsigned get_z() const { return dispatch()->workgroup_size_z; }
};
// The workgroup counts of this launch: the first hidden kernel arguments of code object
// v5 (hidden_block_count_x/y/z at offsets 0, 4, 8 of the implicit arguments; clang 19
// emits v5, and the HIP runtime fills them). Dividing the dispatch packet's grid size by
// the workgroup size instead costs an integer division, and crashes LLVM 19's "SI Fix
// SGPR copies" pass when the quotient feeds a loop storing 32-bit integers.
struct GridDim {
  __declspec(property(get = get_x)) unsigned x;
  __declspec(property(get = get_y)) unsigned y;
  __declspec(property(get = get_z)) unsigned z;
  __device__ __forceinline__ unsigned get_x() const { return block_count(0); }
  __device__ __forceinline__ unsigned get_y() const { return block_count(1); }
  __device__ __forceinline__ unsigned get_z() const { return block_count(2); }
  static __device__ __forceinline__ unsigned block_count(int d) {
    return reinterpret_cast<const unsigned*>(__builtin_amdgcn_implicitarg_ptr())[d];
  }
};

}  // namespace iris::device::amdgcn

extern const __device__ __attribute__((weak)) iris::device::amdgcn::ThreadIdx threadIdx;
extern const __device__ __attribute__((weak)) iris::device::amdgcn::BlockIdx blockIdx;
extern const __device__ __attribute__((weak)) iris::device::amdgcn::BlockDim blockDim;
extern const __device__ __attribute__((weak)) iris::device::amdgcn::GridDim gridDim;

namespace iris::device {
#if __clang_major__ >= 17
// bf16 as generated code names it: clang's arithmetic __bf16 (AMDGPU, clang 17 and later).
typedef __bf16 bfloat16;
#else
// Older clangs (ROCm comgr 2.4's is LLVM 15) have no __bf16 on AMDGPU: the 16 bits, with
// float arithmetic through the conversions (round to nearest even; NaN stays a quiet
// NaN). Other types convert through float, so a double rounds twice, where clang's own
// __bf16 rounds once.
struct bfloat16 {
  unsigned short bits;
  bfloat16() = default;
  template <class T>
    requires __is_arithmetic(T)
  __device__ __forceinline__ bfloat16(T v) : bits(round(static_cast<float>(v))) {}
  __device__ __forceinline__ operator float() const { return __builtin_bit_cast(float, static_cast<unsigned>(bits) << 16); }
  template <class T>
  __device__ __forceinline__ bfloat16& operator+=(T v) { return *this = float(*this) + v; }
  template <class T>
  __device__ __forceinline__ bfloat16& operator-=(T v) { return *this = float(*this) - v; }
  template <class T>
  __device__ __forceinline__ bfloat16& operator*=(T v) { return *this = float(*this) * v; }
  template <class T>
  __device__ __forceinline__ bfloat16& operator/=(T v) { return *this = float(*this) / v; }
  static __device__ __forceinline__ unsigned short round(float f) {
    const unsigned u = __builtin_bit_cast(unsigned, f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<unsigned short>((u >> 16) | 0x40u);
    return static_cast<unsigned short>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
};
#endif
}  // namespace iris::device

struct __attribute__((aligned(8))) uint2 {
  unsigned x, y;
};
struct __attribute__((aligned(16))) uint4 {
  unsigned x, y, z, w;
};
struct __attribute__((aligned(16))) float4 {
  float x, y, z, w;
};
__device__ __forceinline__ uint2 make_uint2(unsigned x, unsigned y) { return uint2{x, y}; }

__device__ __forceinline__ void* memcpy(void* dst, const void* src, decltype(sizeof(0)) n) {
  return __builtin_memcpy(dst, src, n);
}

// Every thread of the workgroup, and what each wrote to LDS and global memory before.
__device__ __forceinline__ void __syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
__device__ __forceinline__ void __threadfence() { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent"); }
__device__ __forceinline__ void __threadfence_system() { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, ""); }

// v of lane (this lane ^ lane_mask), for 4- and 8-byte T; `mask` (CUDA's participating
// lanes) is ignored: every lane of the wavefront takes part.
template <class T>
__device__ __forceinline__ T __shfl_xor_sync(unsigned long long mask, T v, int lane_mask) {
  (void)mask;
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "__shfl_xor_sync moves 4- or 8-byte values");
  const int from = static_cast<int>((iris::device::amdgcn::lane_id() ^ static_cast<unsigned>(lane_mask)) << 2);
  if constexpr (sizeof(T) == 4) {
    int w;
    __builtin_memcpy(&w, &v, 4);
    w = __builtin_amdgcn_ds_bpermute(from, w);
    __builtin_memcpy(&v, &w, 4);
  } else {
    int w[2];
    __builtin_memcpy(w, &v, 8);
    w[0] = __builtin_amdgcn_ds_bpermute(from, w[0]);
    w[1] = __builtin_amdgcn_ds_bpermute(from, w[1]);
    __builtin_memcpy(&v, w, 8);
  }
  return v;
}

// CUDA's atomicAdd and atomicCAS: relaxed, device scope.
template <class T>
__device__ __forceinline__ T atomicAdd(T* p, T v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
template <class T>
__device__ __forceinline__ T atomicCAS(T* p, T expected, T desired) {
  __hip_atomic_compare_exchange_strong(p, &expected, desired, __ATOMIC_RELAXED, __ATOMIC_RELAXED,
                                       __HIP_MEMORY_SCOPE_AGENT);
  return expected;
}

// The single-precision math generated kernels call: the ROCm device library's (ocml,
// linked as bitcode), or the instruction where one is exact.
extern "C" __device__ float __ocml_exp_f32(float);
extern "C" __device__ float __ocml_log_f32(float);
extern "C" __device__ float __ocml_sqrt_f32(float);
extern "C" __device__ float __ocml_cospi_f32(float);
__device__ __forceinline__ float expf(float x) { return __ocml_exp_f32(x); }
__device__ __forceinline__ float logf(float x) { return __ocml_log_f32(x); }
__device__ __forceinline__ float sqrtf(float x) { return __ocml_sqrt_f32(x); }
__device__ __forceinline__ float cospif(float x) { return __ocml_cospi_f32(x); }
__device__ __forceinline__ float fmaxf(float a, float b) { return __builtin_fmaxf(a, b); }
__device__ __forceinline__ float fabsf(float x) { return __builtin_fabsf(x); }
