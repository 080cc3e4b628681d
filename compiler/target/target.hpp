// The target description (targets.def): what a target is called, which toolchain builds
// for it and which features generated code may use. Passed by pointer from the driver
// through sema, the passes, codegen and the toolchain; nothing else compares target
// names.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace irisc {

enum class TargetId : std::uint8_t {
#define IRIS_TARGET(Id, Vendor, Toolchain, Arch, Mma, Wgmma, Tma, Mfma, Warp, MinSms, MaxSms, MaxShared, Gpus) Id,
#include "compiler/target/targets.def"
};

enum class Vendor : std::uint8_t { nvidia, amd, host };
enum class ToolchainKind : std::uint8_t { nvrtc, comgr, clang, interpreter };

struct Target {
  TargetId id;
  const char* name;       // "sm_90a"
  Vendor vendor;
  ToolchainKind toolchain;
  int arch;               // 90 for sm_90a; 942 for gfx942, 910 for gfx90a
  bool mma_sync;          // warp-level mma.sync tensor-core instructions
  bool wgmma;             // Hopper warpgroup wgmma.mma_async
  bool tma;               // cp.async.bulk.tensor (TMA)
  bool mfma;              // AMD matrix fused multiply-add (v_mfma_*)
  int warp_size;
  int min_sms, max_sms;   // multiprocessor counts of the family's GPUs
  int max_shared_bytes;   // shared memory one program may use (opt-in beyond 48 KiB)
  const char* gpus;       // for --help
};

std::span<const Target> all_targets();
const Target& target(TargetId id);
// Null when `name` is not a target.
const Target* find_target(std::string_view name);
const Target& default_target();  // sm_90a
// The target of the same GPUs without the wgmma GEMM (sm_90a -> sm_90), whose GEMM reads
// its operands without TMA tensor maps and so takes any shape; null for a target with no
// wgmma.
const Target* without_wgmma(const Target& t);
// "sm_90a, sm_90, sm_80, ...": for messages and --help.
std::string target_names();
// The target for an NVIDIA GPU of compute capability major.minor (the JIT's choice),
// or null when irisc has none.
const Target* target_for_compute_capability(int major, int minor);
// The target for an AMD GPU of the given architecture name, with or without its
// feature suffixes ("gfx942" or "gfx942:sramecc+:xnack-"), or null when irisc has none.
const Target* target_for_gfx_arch(std::string_view arch_name);
// The toolchain that compiles for `t`: t.toolchain, except that the environment's
// IRISC_AMDGPU_COMPILER=clang|comgr picks one for every AMD target.
ToolchainKind toolchain_of(const Target& t);

}  // namespace irisc
