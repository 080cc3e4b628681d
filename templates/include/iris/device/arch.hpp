// Compiler-portability layer for the iris device library: the function
// qualifier macros and fixed-width integer aliases that every other device
// header uses. It includes nothing but, under HIP, arch/hip/compat.hpp, so that the
// same headers compile under nvcc, NVRTC (which has no host standard headers),
// clang's HIP (AMDGCN, without HIP's headers) and plain host C++.
#pragma once

// HIP: clang -x hip (irisc's AMD targets), device pass or not.
#if defined(__HIP__)
#define IRIS_HIP_COMPILER 1
#else
#define IRIS_HIP_COMPILER 0
#endif

// True only in the device pass of nvcc, under NVRTC, or in clang's HIP device
// pass. Device-only code (inline PTX, AMDGCN builtins, threadIdx) must sit
// behind this; host passes skip it.
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__) || defined(__HIP_DEVICE_COMPILE__)
#define IRIS_DEVICE_COMPILE 1
#else
#define IRIS_DEVICE_COMPILE 0
#endif

// True under any CUDA compiler pass (nvcc host and device, NVRTC): the NVIDIA
// spellings (inline PTX). Device function templates must be declared in nvcc's
// host pass too, because kernels that call them are parsed there; so they are
// guarded by IRIS_GPU_COMPILER, not by IRIS_DEVICE_COMPILE.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define IRIS_CUDA_COMPILER 1
#else
#define IRIS_CUDA_COMPILER 0
#endif

// Any GPU compiler: where the device library's functions exist at all.
#if IRIS_CUDA_COMPILER || IRIS_HIP_COMPILER
#define IRIS_GPU_COMPILER 1
#else
#define IRIS_GPU_COMPILER 0
#endif

#if IRIS_HIP_COMPILER
#include "arch/hip/compat.hpp"
#endif

// Outside a GPU compiler the qualifiers vanish, so host-side C++ can include
// the shared declarations (Context, the enums) without any CUDA headers.
#if IRIS_GPU_COMPILER
#define IRIS_HOST_DEVICE __host__ __device__
#define IRIS_DEVICE __device__
#define IRIS_FORCEINLINE __forceinline__
#else
#define IRIS_HOST_DEVICE
#define IRIS_DEVICE
#define IRIS_FORCEINLINE inline
#endif

namespace iris::device {

// Built from builtin types because <cstdint> is unavailable under NVRTC.
// CUDA's PTX register constraints ("r", "l") expect exactly these types.
using u32 = unsigned int;
using i32 = int;
using u64 = unsigned long long;
using i64 = long long;
// std::size_t without <cstddef>; identical to it wherever both exist.
using usize = decltype(sizeof(0));

static_assert(sizeof(u32) == 4 && sizeof(i32) == 4, "iris::device expects a 32-bit int");
static_assert(sizeof(u64) == 8 && sizeof(i64) == 8, "iris::device expects a 64-bit long long");
static_assert(sizeof(void*) == 8, "iris::device supports 64-bit address spaces only");

}  // namespace iris::device
