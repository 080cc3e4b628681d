// The compiler driver: SourceBuffer -> tokens -> AST -> TIR -> passes -> CUDA C++ ->
// PTX / cubin, stopping at the stage asked for. Used by the irisc CLI, libiris's JIT
// and the build-time embedding. Never throws on bad input: everything the user can
// get wrong is a diagnostic in the result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/contract/launch_contract.hpp"
#include "compiler/diagnostics/diagnostics.hpp"
#include "compiler/driver/stdlib.hpp"
#include "compiler/source/source_buffer.hpp"

namespace irisc {

struct Target;

namespace tir {
struct Module;
}

// source: the generated kernel source (CUDA C++ for NVIDIA, HIP C++ for AMD);
// assembly: PTX, or AMDGPU assembly; code_object: a cubin, an AMDGPU code object, or
// for the host target a host code object.
enum class Stage { tokens, ast, tir, source, assembly, code_object };
const char* stage_name(Stage s);

struct CompileOptions {
  Stage stop_after = Stage::code_object;
  std::string target = "sm_90a";       // a name from compiler/target/targets.def
  int opt_level = 3;                   // 0..3, passed to the CUDA toolchain
  bool line_info = false;
  // Kernels record trace events (iris/device/trace.hpp) when the launching job traces
  // (Options::trace). Off: no trace code at all.
  bool trace_events = false;
  std::map<std::string, std::int64_t> defines;  // -DNAME=VALUE
  // --kernel: compile only these kernels of the file (empty: every one); the file is still
  // checked whole. Each must name a kernel of the file ([UnknownKernel]).
  std::vector<std::string> kernels;
  // -I: where `import` looks (after the importing file's folder), and extra include
  // directories for the CUDA toolchain.
  std::vector<std::string> include_dirs;
  // Files `import` finds by the exact path it writes, before looking anywhere else
  // (what a host code object carries).
  std::map<std::string, std::string> import_files;
  bool warnings_as_errors = false;
  // The sm_90a GEMM's epilogue stores its 16-bit tiles by TMA where it may (docs/
  // language.md; the launch passes each such tensor's map): --tma-stores, and in the JIT
  // IRIS_TMA_STORES=1. Off by default until measured on several GPUs.
  bool tma_stores = false;
  std::string dump_ir_after;                    // pass name or "all"
  bool time_passes = false;
  std::string only_pass;                        // run just this pass (stops after tir)
};

struct CompileResult {
  bool ok = false;
  std::string tokens, ast, tir, metadata;
  std::string kernel_source;  // CUDA or HIP C++ (Stage::source)
  std::string assembly;       // PTX or AMDGPU assembly (Stage::assembly)
  // A cubin, an AMDGPU code object, or for the host target a host code object
  // (contract/host_code.hpp).
  std::vector<std::byte> code_object;
  std::string pass_dumps, pass_timing;
  // Every file the source imported: (the path its import wrote, its text).
  std::vector<std::pair<std::string, std::string>> imports;
  std::string toolchain_log;
  std::vector<Diagnostic> diagnostics;
  std::string rendered_diagnostics;  // clang-style text, no colour
  std::string rendered_diagnostics_color;
  int errors = 0, warnings = 0;
};

CompileResult compile(const SourceBuffer& source, const CompileOptions& options);

// Every file the source imports, directly or through others, as (the path its import
// wrote, its text) in load order, as compile() would find them: what a compiled code
// object depends on besides the source (the JIT cache keys on it). Only lexes and
// parses; a source that does not parse, or an import not found, gives what was found.
std::vector<std::pair<std::string, std::string>> imported_files(const SourceBuffer& source,
                                                                const CompileOptions& options);

// compile() through the pass pipeline, stopping there, with the module itself in
// `module` when the result is ok: what the host backend interprets.
// `sources` (optional) gets the source with every imported file appended: what the
// module's source ranges index.
CompileResult compile_to_tir(const SourceBuffer& source, const CompileOptions& options, tir::Module* module,
                             SourceBuffer* sources = nullptr);

// The same from a TIR listing (tir_print / tir_read format, a .tir file) instead of
// .iris source: no lex/parse/sema. The text is read and verified (BadTir when it is
// malformed or does not verify), then stop_after tir runs only `only_pass` (none when
// empty: read + verify + print), and later stages run the whole pipeline and codegen.
// `defines` bind nothing here (the listing's constants are already bound): each is an
// UnknownDefine warning. Stages before tir are treated as tir.
CompileResult compile_tir(const SourceBuffer& source, const CompileOptions& options);

// Parses "NAME=VALUE" (VALUE an integer, decimal, hex or octal, or a type name for a type
// parameter: see sema.hpp's type_define) into CompileOptions::defines form; false if
// malformed or out of range.
bool parse_define(const std::string& text, std::string* name, std::int64_t* value);

// Everything about this compiler and its toolchain that a compiled code object
// depends on besides the source and the options: the parts of every JIT cache key.
struct CompilerIdentity {
  std::string version;         // irisc_version()
  std::string contract;        // the launch contract's format version
  std::string build_id;        // compiler_build_id()
  std::string headers_digest;  // the embedded device headers' digest
  std::string nvrtc;           // toolchain::nvrtc_identity(), "" without NVRTC
  std::string cuda_headers;    // toolchain::cuda_headers_identity(), "" without NVRTC
};
CompilerIdentity compiler_identity();
// For an AMD target, the identity of the compiler that compiles it (toolchain_of: clang's
// version line and paths, or comgr's version and library), "" when that one is missing.
// Looked up only when asked: a CUDA-only process never loads comgr or runs clang.
std::string amd_compiler_identity(const Target& target);

// compiler_identity() on one line, for people (iris-bench prints it).
std::string compiler_fingerprint();
const char* irisc_version();
// A SHA-256 over the sources irisc and its device headers were built from (see
// compiler/driver/build_id.cmake): changes whenever irisc is rebuilt from other sources.
const char* compiler_build_id();

// ---- What a runtime asks of the compiler besides compile() ---------------------------
// libiris includes this header and compiler/contract/ only (tools/scripts/check_layers.sh;
// its host interpreter reads compiler/tir/ too): targets, types and toolchains by name.

// The define (-DT=...) that sets a type parameter to the element type named `name`
// (f32, f16, bf16, i32, i64, u32, u64, as .iris spells them); -1 for another name.
std::int64_t type_define_named(std::string_view name);
// Targets by name (compiler/target/targets.def): the one a compile without a target
// gets; the one for an NVIDIA compute capability or an AMD gfx architecture ("" when
// none); every name, comma-separated, for messages; the target a kernel whose sm_90a
// GEMM cannot read its operands through TMA falls back to ("" when none).
std::string default_target_name();
std::string target_for_compute_capability_named(int major, int minor);
std::string target_for_gfx_arch_named(std::string_view gfx_arch);
std::string every_target_name();
std::string gemm_fallback_target(const std::string& target);
// Whether the toolchain that compiles `target` can run here (NVRTC and the CUDA headers,
// or clang and lld, or ROCm comgr); when not, *why says with what it would compile, what
// is missing and where it was looked for ("with NVRTC, ..., and found none: ..."). Targets
// with no GPU toolchain (host) are ready.
bool toolchain_ready(const std::string& target, std::string* why);
// The compiler behind `target`'s code objects, for cache keys: NVRTC's identity and the
// CUDA headers', or the AMD compiler's and which of clang and comgr it is.
std::string code_object_compiler(const std::string& target);
// The launch contract of a module compile_to_tir made (what a code object's metadata
// holds): how the host backend launches what it interprets.
contract::Module module_contract(const tir::Module& module);
// A host code object's listing (tir::print with positions) read back for the host
// target and verified: the module the host backend interprets, with no lexer, parser or
// sema. False, with *why, where it does not read or verify.
bool read_host_listing(std::string_view listing, tir::Module* module, std::string* why);
// How many times this process has run the front end (lexer, parser, sema) on a source:
// what loading a host code object leaves as it was.
std::uint64_t front_end_runs();

}  // namespace irisc
