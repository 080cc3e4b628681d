// HIP C++ -> AMDGPU code object through ROCm's code object manager (comgr), the
// compiler of the AMD targets whose LLVM it supports (gfx90a with Debian 12's comgr 2.4,
// LLVM 15): the library is loaded with dlopen at first use, as NVRTC is, and compiles in
// memory. The steps are clang's (amdgpu.hpp): HIP source -> bitcode linked with the
// same ROCm device libraries (-mlink-builtin-bitcode) -> relocatable -> executable code
// object, code object v5, with the embedded device library as include data.
//
// The library: $IRISC_COMGR_LIBRARY, else libamd_comgr.so.2, then libamd_comgr.so.3
// (ROCm 6.3 and later), then /opt/rocm/lib/libamd_comgr.so. The device libraries are
// found as amdgpu.hpp says (Debian's rocm-device-libs, ROCm's, $IRISC_ROCM_DEVICE_LIBS).
#pragma once

#include <string>
#include <string_view>

#include "compiler/toolchain/amdgpu.hpp"

namespace irisc::toolchain {

// Whether comgr and the device libraries for `arch` can be found; if not and why_not is
// given, *why_not says what is missing and how to provide it.
bool comgr_available(const std::string& arch, std::string* why_not = nullptr);

// comgr's identity (its version and library file) for cache keys; "" without it.
std::string comgr_identity();

// As compile_hip (amdgpu.hpp), through comgr. Never throws; calls are serialized.
AmdgpuCompileResult compile_hip_comgr(std::string_view source, std::string_view name, const AmdgpuCompileOptions& options);

}  // namespace irisc::toolchain
