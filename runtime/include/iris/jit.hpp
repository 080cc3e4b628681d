// JIT: compile .iris source at run time into a Program, with an on-disk cache keyed by
// the source, the options and the compiler build (a hit does not run the compiler).
// The cache is an optimisation only: one that is refused or unusable (see
// docs/runtime.md) is skipped with a warning and the source is compiled.
// Safe when several ranks (threads or processes) compile the same source at once:
// threads of one process compile it once; processes share cache entries, which are
// written atomically.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "iris/dtype.hpp"
#include "iris/program.hpp"

namespace iris {

struct JitOptions {
  std::map<std::string, std::int64_t> defines;  // compile-time parameters (-DNAME=VALUE)
  // Type parameters (-DT=bf16): {"T", iris::DType::bf16}. A name in both maps is an error.
  std::map<std::string, DType> types;
  std::string target;                           // "" = from the GPU (sm_90a on Hopper, sm_80 on Ampere)
  bool use_cache = true;
  // Kernels record trace events (irisc --trace-events); jit_program sets it when the
  // context traces (Options::trace).
  bool trace_events = false;
  std::filesystem::path cache_dir;              // "" = JitCache::default_dir() ($IRIS_CACHE_DIR, ...)
  // Where `import` looks after the importing file's folder (irisc -I); a path that names
  // a standard-library file is always the embedded one.
  std::vector<std::string> include_dirs;
  // Compile only these kernels of the source (irisc --kernel; empty: every one). The
  // program then holds those alone; the source is still checked whole.
  std::vector<std::string> kernels;
  // A compile still running after this many seconds says so (a warning, then one every
  // 30 s), and one that took longer says how long when done: an NVRTC compile of a
  // large kernel can take tens of seconds, once (the result is cached). 0: no notes.
  double note_after_seconds = 10;
};

struct JitResult {
  std::vector<std::byte> code;  // cubin with embedded metadata
  bool cache_hit = false;
  double compile_ms = 0;        // 0 on a hit
  std::string warnings;         // rendered diagnostics (warnings) if any
};

// Compiles without a GPU context (target must then be set, or defaults to sm_90a).
// Throws iris::Error carrying the rendered diagnostics when the source has errors.
JitResult jit_compile(std::string_view source, const std::string& name, const JitOptions& options = {});

// Compiles (or fetches from the cache) and loads into ctx.
Program jit_program(Context& ctx, std::string_view source, const std::string& name, const JitOptions& options = {});
Program jit_program_file(Context& ctx, const std::filesystem::path& file, const JitOptions& options = {});

// The key jit_compile stores the code object under: a SHA-256 over the source, its
// name, the texts of the files it imports, every compile option (defines
// length-prefixed), irisc's version and build id, the device headers' digest, and
// NVRTC's and the CUDA headers' identities.
std::string jit_cache_key(std::string_view source, const std::string& name, const JitOptions& options = {});

// The target irisc should compile for on this rank's device: its GPU's (from the
// compute capability on cuda, from the gfx architecture name on hip), or `host` on the
// host backend. Throws iris::Error when irisc has no target for the GPU.
std::string jit_target_for(const Context& ctx);

// The target a kernel compiled for `target` falls back to where its GEMM's TMA tensor maps
// cannot take the operands passed (Program::set_fallback): "sm_90" for "sm_90a"; "" for a
// target that needs none.
std::string jit_fallback_target(const std::string& target);

}  // namespace iris
