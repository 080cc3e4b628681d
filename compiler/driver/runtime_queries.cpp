// What a runtime asks of the compiler besides compile() (see compile.hpp): libiris's JIT
// and standard library name targets, types and toolchains through these, not through
// the compiler's phase headers.
#include <cstdlib>

#include "compiler/ast/ast.hpp"
#include "compiler/codegen/metadata.hpp"
#include "compiler/driver/compile.hpp"
#include "compiler/sema/sema.hpp"
#include "compiler/target/target.hpp"
#include "compiler/toolchain/amdgpu.hpp"
#include "compiler/toolchain/comgr.hpp"
#include "compiler/toolchain/nvrtc.hpp"

namespace irisc {

std::int64_t type_define_named(std::string_view name) {
  // Every element type a value may have; int_ (the index type) is no type parameter's.
  for (int t = 0; t < static_cast<int>(tir::ScalarType::int_); ++t) {
    if (name == ast::scalar_type_name(static_cast<ast::ScalarType>(t))) return type_define(static_cast<tir::ScalarType>(t));
  }
  return -1;
}

std::string default_target_name() { return default_target().name; }

std::string target_for_compute_capability_named(int major, int minor) {
  const Target* t = target_for_compute_capability(major, minor);
  return t ? t->name : "";
}

std::string target_for_gfx_arch_named(std::string_view gfx_arch) {
  const Target* t = target_for_gfx_arch(gfx_arch);
  return t ? t->name : "";
}

std::string every_target_name() { return target_names(); }

std::string gemm_fallback_target(const std::string& target) {
  const Target* t = find_target(target);
  const Target* f = t ? without_wgmma(*t) : nullptr;
  return f ? f->name : "";
}

bool toolchain_ready(const std::string& target, std::string* why) {
  const Target* t = find_target(target);
  if (!t) return true;  // compile() names an unknown target itself
  std::string found;
  if (t->vendor == Vendor::amd) {
    const bool comgr = toolchain_of(*t) == ToolchainKind::comgr;
    if (comgr ? toolchain::comgr_available(target, &found) : toolchain::amdgpu_toolchain_available(&found)) return true;
    *why = std::string("with ") + (comgr ? "ROCm comgr" : "clang and lld") + ", and found none: " + found;
    return false;
  }
  if (t->toolchain != ToolchainKind::nvrtc) return true;
  if (!toolchain::nvrtc_available(&found)) {
    *why = "with NVRTC, the CUDA toolkit's run-time compiler library (libnvrtc.so.12 or .13), and found none: "
           "install the CUDA toolkit (or its NVRTC package) or set IRISC_NVRTC_PATH to the library file. " + found;
    return false;
  }
  if (toolchain::cuda_headers_identity() == "none") {
    const char* home = secure_getenv("CUDA_HOME");
    *why = "with NVRTC, which needs the CUDA headers (cuda_fp16.h, cuda_bf16.h), and found none in "
           "$CUDA_HOME/include (CUDA_HOME is " + (home && *home ? std::string(home) : std::string("unset")) +
           "), the include folder beside the loaded libnvrtc, or /usr/local/cuda/include: set CUDA_HOME to the CUDA "
           "toolkit's root";
    return false;
  }
  return true;
}

std::string code_object_compiler(const std::string& target) {
  // Each part length-prefixed: no two pairs of parts encode alike.
  const auto both = [](const std::string& a, const std::string& b) {
    return std::to_string(a.size()) + ":" + a + ";" + std::to_string(b.size()) + ":" + b;
  };
  const Target* t = find_target(target);
  if (t && t->vendor == Vendor::amd) {
    return both(amd_compiler_identity(*t), toolchain_of(*t) == ToolchainKind::comgr ? "comgr" : "clang");
  }
  const CompilerIdentity id = compiler_identity();
  return both(id.nvrtc, id.cuda_headers);
}

contract::Module module_contract(const tir::Module& module) { return launch_contract(module); }

}  // namespace irisc
