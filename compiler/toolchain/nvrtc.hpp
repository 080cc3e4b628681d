// CUDA C++ -> PTX/cubin in memory through NVRTC, the last phase of irisc and the
// compiler behind libiris's JIT. NVRTC is dlopen'd at first use, so irisc builds and
// runs (and says why it cannot compile) on machines without it.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace irisc::toolchain {

// NVRTC itself is unusable (missing library, or one lacking an entry point). Bad
// CUDA source or bad options are not errors of this kind: they come back as
// CudaCompileResult::ok == false.
class ToolchainError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CudaCompileOptions {
  // sm_NN / sm_NNa give PTX and a cubin; compute_NN / compute_NNa give PTX only
  // (NVRTC assembles SASS for real architectures only).
  std::string arch = "sm_90a";
  // ptxas optimisation level, passed as --ptxas-options=-O<n> (3 is ptxas's own
  // default). NVRTC has no switch for its NVVM front-end optimisation other than
  // -G, which means device debug, so the front end always optimises.
  int opt_level = 3;
  bool line_info = false;                 // -lineinfo: .loc in PTX, line tables in the cubin
  std::vector<std::string> defines;       // "NAME" or "NAME=VALUE", each passed as -D
  std::vector<std::string> include_dirs;  // extra -I, searched before the CUDA toolkit's
  bool want_ptx = true, want_cubin = true;
};

struct CudaCompileResult {
  bool ok = false;
  std::string log;               // NVRTC's diagnostics ("name(line): error: ..."), or ours
  std::string ptx;               // when want_ptx; no trailing NUL
  std::vector<std::byte> cubin;  // when want_cubin and arch is sm_*: an ELF image
};

// Compiles one CUDA C++ translation unit (C++17) in memory. <iris/device.hpp> and
// <iris/device/*.hpp> come from copies embedded in libirisc (device_headers.hpp) and
// take precedence over any -I; the CUDA toolkit's include dir ($CUDA_HOME/include,
// the one beside the loaded libnvrtc, or /usr/local/cuda/include: the first holding
// cuda_fp16.h) is searched last, for cuda_fp16.h / cuda_bf16.h.
// `name` is the file name diagnostics use ("" becomes "iris_jit.cu").
// Never throws for bad source or bad options: ok == false and `log` says why.
// Throws ToolchainError only when NVRTC cannot be loaded. Thread-safe: each call
// owns its NVRTC program, and NVRTC allows concurrent compiles of distinct programs.
CudaCompileResult compile_cuda(std::string_view source, std::string_view name,
                               const CudaCompileOptions& options);

// NVRTC's version, "13.0". Throws ToolchainError when NVRTC cannot be loaded.
std::string nvrtc_version();

// What a compile depends on besides the source and the options, for cache keys.
// Neither throws; both are "" when NVRTC cannot be loaded.
// nvrtc_identity(): NVRTC's version and the library file it was loaded from (real
// path, size, mtime), which tells apart builds that report the same version.
// cuda_headers_identity(): the CUDA include dir (see compile_cuda), the CUDA_VERSION
// its cuda.h defines and an FNV-1a hash of the headers device code includes from it
// (cuda_fp16/cuda_bf16 .h/.hpp, vector_types.h, vector_functions.h); "none" when no
// include dir was found.
std::string nvrtc_identity();
std::string cuda_headers_identity();

// Whether NVRTC can be loaded; if not and why_not is given, *why_not says which
// libraries were tried and what failed. Never throws.
// NVRTC is looked for, once per process, at: $IRISC_NVRTC_PATH (if set, only there:
// an explicit choice that silently fell back would hide a mistake), else
// libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so, $CUDA_HOME/lib64/libnvrtc.so,
// /usr/local/cuda/lib64/libnvrtc.so; a library lacking an entry point is skipped.
bool nvrtc_available(std::string* why_not = nullptr);

}  // namespace irisc::toolchain
