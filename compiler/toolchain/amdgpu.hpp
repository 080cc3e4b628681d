// HIP C++ -> AMDGPU code object through LLVM's AMDGPU backend, the last phase of irisc
// for AMD targets: clang compiles the source to bitcode linked with the ROCm device
// libraries (ocml and its control libraries, -mlink-builtin-bitcode, so only what is
// used stays), then to a relocatable object, and lld links the executable code object
// (an ELF with the kernels' descriptors and the AMDGPU metadata note). The tools run as
// processes in a private temporary folder; nothing is left behind.
//
// Tools, found at first use (each overridable):
//   clang:  $IRISC_CLANG, else clang-19 on PATH, /usr/lib/llvm-19/bin/clang,
//           /opt/rocm/llvm/bin/clang
//   ld.lld: $IRISC_LLD, else beside that clang (ld.lld), else ld.lld-19 on PATH
//   device libraries: $IRISC_ROCM_DEVICE_LIBS, else /usr/lib/x86_64-linux-gnu/amdgcn/bitcode
//           (Debian's rocm-device-libs), /opt/rocm/amdgcn/bitcode, /opt/rocm/lib/llvm/lib/
//           clang/*/lib/amdgcn/bitcode
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace irisc::toolchain {

struct AmdgpuCompileOptions {
  std::string arch = "gfx942";            // the offload architecture (a target's name)
  int opt_level = 3;                      // -O<n> for every step
  bool line_info = false;                 // -gline-tables-only
  std::vector<std::string> include_dirs;  // extra -I, after the embedded device headers
  bool want_assembly = true, want_code_object = true;
};

struct AmdgpuCompileResult {
  bool ok = false;
  std::string log;                     // the tools' diagnostics, or ours
  std::string assembly;                // AMDGPU assembly, when want_assembly
  std::vector<std::byte> code_object;  // the ELF code object, when want_code_object
};

// Compiles one HIP translation unit (C++20, device only). <iris/device.hpp> and the rest
// of the device library come from the copies embedded in libirisc. `name` names the
// file in diagnostics ("" becomes "iris_jit.hip"). Never throws: when a tool is missing
// ok is false and `log` says which and how to provide it.
AmdgpuCompileResult compile_hip(std::string_view source, std::string_view name, const AmdgpuCompileOptions& options);

// Whether the tools can be found; if not and why_not is given, *why_not says what is
// missing.
bool amdgpu_toolchain_available(std::string* why_not = nullptr);

// The ROCm device library files a compile for `arch` links (-mlink-builtin-bitcode):
// ocml, ockl and their control libraries (the ISA's, wavefront 64, code object v5's
// ABI). Empty, with *why_not saying why, when they are missing.
std::vector<std::string> device_library_bitcode(const std::string& arch, std::string* why_not = nullptr);

// The flags both AMD compilers (clang here, comgr.hpp) give the HIP source -> bitcode
// step: optimisation, C++20, no HIP headers, the caller's include folders, line tables,
// and the device libraries linked as builtin bitcode. Empty, with *why_not saying why,
// when the device libraries are missing.
std::vector<std::string> hip_bitcode_flags(const AmdgpuCompileOptions& options, std::string* why_not);

// The tools' identities (paths and clang's version line) for cache keys; "" without them.
std::string amdgpu_toolchain_identity();

}  // namespace irisc::toolchain
