// The target table (see target.hpp).
#include "compiler/target/target.hpp"

#include <cstdlib>
#include <string>

namespace irisc {
namespace {

constexpr Target kTargets[] = {
#define IRIS_TARGET(Id, V, T, Arch, Mma, Wgmma, Tma, Mfma, Warp, MinSms, MaxSms, MaxShared, Gpus) \
  {TargetId::Id, #Id, Vendor::V, ToolchainKind::T, Arch, Mma, Wgmma, Tma, Mfma, Warp, MinSms, MaxSms, MaxShared, Gpus},
#include "compiler/target/targets.def"
};

}  // namespace

std::span<const Target> all_targets() { return kTargets; }

const Target& target(TargetId id) { return kTargets[static_cast<int>(id)]; }

const Target* find_target(std::string_view name) {
  for (const Target& t : kTargets) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

const Target& default_target() { return target(TargetId::sm_90a); }

const Target* without_wgmma(const Target& t) {
  if (!t.wgmma) return nullptr;
  for (const Target& o : kTargets) {
    if (o.vendor == t.vendor && o.arch == t.arch && !o.wgmma && o.mma_sync) return &o;
  }
  return nullptr;
}

std::string target_names() {
  std::string s;
  for (const Target& t : kTargets) s += (s.empty() ? "" : ", ") + std::string(t.name);
  return s;
}

const Target* target_for_compute_capability(int major, int minor) {
  // The newest NVIDIA target whose SM version the GPU runs: arch-specific (the "a"
  // targets) only on exactly that version.
  const Target* best = nullptr;
  const int sm = major * 10 + minor;
  for (const Target& t : kTargets) {
    if (t.vendor != Vendor::nvidia) continue;
    const bool arch_specific = std::string_view(t.name).ends_with("a");
    // Cubins run on GPUs of their own major version only.
    if (t.arch / 10 != major || (arch_specific ? t.arch != sm : t.arch > sm)) continue;
    if (!best || t.arch > best->arch || (t.arch == best->arch && arch_specific)) best = &t;
  }
  return best;
}

const Target* target_for_gfx_arch(std::string_view arch_name) {
  const std::string_view base = arch_name.substr(0, arch_name.find(':'));
  const Target* t = find_target(base);
  return t && t->vendor == Vendor::amd ? t : nullptr;
}

ToolchainKind toolchain_of(const Target& t) {
  if (t.vendor != Vendor::amd) return t.toolchain;
  const char* pick = secure_getenv("IRISC_AMDGPU_COMPILER");
  if (pick && std::string(pick) == "clang") return ToolchainKind::clang;
  if (pick && std::string(pick) == "comgr") return ToolchainKind::comgr;
  return t.toolchain;
}

}  // namespace irisc
