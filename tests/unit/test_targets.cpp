// The target table (compiler/target): names, lookups and the JIT's choice of target for
// a GPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "compiler/driver/compile.hpp"
#include "compiler/target/target.hpp"
#include "compiler/toolchain/comgr.hpp"

using irisc::find_target;
using irisc::target_for_compute_capability;

TEST(Targets, NamesLookUpTheirEntries) {
  for (const irisc::Target& t : irisc::all_targets()) {
    ASSERT_EQ(find_target(t.name), &t);
    EXPECT_EQ(&irisc::target(t.id), &t);
  }
  EXPECT_EQ(find_target("sm_70"), nullptr);
  EXPECT_EQ(find_target(""), nullptr);
  EXPECT_EQ(irisc::target_names(), "sm_90a, sm_90, sm_80, host, gfx942, gfx90a");
  EXPECT_STREQ(irisc::default_target().name, "sm_90a");
  EXPECT_TRUE(find_target("sm_90a")->wgmma);
  EXPECT_FALSE(find_target("sm_90")->wgmma);
  EXPECT_FALSE(find_target("sm_80")->tma);
  const irisc::Target* host = find_target("host");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->vendor, irisc::Vendor::host);
  EXPECT_FALSE(host->mma_sync || host->wgmma || host->tma);
}

TEST(Targets, JitPicksTheNewestTargetOfTheGpusMajorVersion) {
  EXPECT_STREQ(target_for_compute_capability(9, 0)->name, "sm_90a");
  EXPECT_STREQ(target_for_compute_capability(8, 0)->name, "sm_80");
  EXPECT_STREQ(target_for_compute_capability(8, 9)->name, "sm_80");
  EXPECT_EQ(target_for_compute_capability(10, 0), nullptr);  // an sm_90 cubin does not run there
  EXPECT_EQ(target_for_compute_capability(7, 5), nullptr);
  EXPECT_EQ(target_for_compute_capability(0, 0), nullptr);  // the host target is never a GPU's
}

// Where TMA cannot take a GEMM's operands, a kernel falls back to its GPUs' target
// without the wgmma GEMM; the others need no fallback.
TEST(Targets, TheFallbackOfTheWgmmaTargetIsTheSameGpusWithout) {
  ASSERT_NE(irisc::without_wgmma(*find_target("sm_90a")), nullptr);
  EXPECT_STREQ(irisc::without_wgmma(*find_target("sm_90a"))->name, "sm_90");
  for (const char* t : {"sm_90", "sm_80", "host", "gfx942", "gfx90a"}) EXPECT_EQ(irisc::without_wgmma(*find_target(t)), nullptr) << t;
}

TEST(Targets, UnknownTargetListsTheTable) {
  irisc::CompileOptions o;
  o.target = "sm_75";
  o.stop_after = irisc::Stage::tir;
  const irisc::CompileResult r = irisc::compile(irisc::SourceBuffer("t.iris", "kernel k() {}"), o);
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.rendered_diagnostics.find("unknown target 'sm_75' (supported: sm_90a, sm_90, sm_80, host, gfx942, gfx90a)"), std::string::npos)
      << r.rendered_diagnostics;
}

TEST(Targets, AmdTargetsAndTheJitsChoiceByArchitectureName) {
  for (const char* name : {"gfx942", "gfx90a"}) {
    const irisc::Target* t = find_target(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->vendor, irisc::Vendor::amd);
    EXPECT_EQ(t->warp_size, 64);
    EXPECT_TRUE(t->mfma);
    EXPECT_FALSE(t->mma_sync || t->wgmma || t->tma);
    EXPECT_EQ(t->max_shared_bytes, 65536);
  }
  EXPECT_EQ(find_target("gfx942")->arch, 942);
  EXPECT_STREQ(irisc::target_for_gfx_arch("gfx942:sramecc+:xnack-")->name, "gfx942");
  EXPECT_STREQ(irisc::target_for_gfx_arch("gfx90a")->name, "gfx90a");
  EXPECT_EQ(irisc::target_for_gfx_arch("gfx1100"), nullptr);
  EXPECT_EQ(irisc::target_for_gfx_arch("sm_90a"), nullptr);  // not an AMD name
  for (const irisc::Target& t : irisc::all_targets()) EXPECT_FALSE(t.vendor != irisc::Vendor::amd && t.mfma) << t.name;
}

// Without clang the AMD targets fail with ToolchainMissing, saying what to install. In
// a fresh process (the tools are looked up once per process).
TEST(Targets, MissingClangIsToolchainMissing) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("IRISC_CLANG", "/nonexistent/clang", 1);
        irisc::CompileOptions o;
        o.target = "gfx942";
        const irisc::CompileResult r = irisc::compile(
            irisc::SourceBuffer("t.iris", "kernel k(x: tensor<f32>[N]) {\n  for i in blocks(N, 256) {\n    store(x[i], 1.0);\n  }\n}\n"), o);
        const bool ok = !r.ok && r.rendered_diagnostics.find("cannot compile for gfx942: IRISC_CLANG=/nonexistent/clang") !=
                                     std::string::npos &&
                        r.rendered_diagnostics.find("[ToolchainMissing]") != std::string::npos;
        if (!ok) std::fprintf(stderr, "%s", r.rendered_diagnostics.c_str());
        std::exit(ok ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

namespace {

const char* const kStoreKernel = "kernel k(x: tensor<f32>[N]) {\n  for i in blocks(N, 256) {\n    store(x[i], 1.0);\n  }\n}\n";

// Runs `body` in a fresh process (the toolchains are looked up once per process) and
// expects it to exit with 0.
template <class F>
void in_fresh_process(F body) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(body(), testing::ExitedWithCode(0), "");
}

}  // namespace

// gfx90a compiles through ROCm comgr, gfx942 through clang; IRISC_AMDGPU_COMPILER picks
// one for every AMD target.
TEST(Targets, AmdTargetsPickTheirToolchain) {
  EXPECT_EQ(find_target("gfx90a")->toolchain, irisc::ToolchainKind::comgr);
  EXPECT_EQ(find_target("gfx942")->toolchain, irisc::ToolchainKind::clang);
  in_fresh_process([] {
    setenv("IRISC_AMDGPU_COMPILER", "clang", 1);
    const bool ok = irisc::toolchain_of(*find_target("gfx90a")) == irisc::ToolchainKind::clang &&
                    irisc::toolchain_of(*find_target("sm_90a")) == irisc::ToolchainKind::nvrtc;
    setenv("IRISC_AMDGPU_COMPILER", "comgr", 1);
    std::exit(ok && irisc::toolchain_of(*find_target("gfx942")) == irisc::ToolchainKind::comgr ? 0 : 1);
  });
}

// Without comgr, gfx90a fails with ToolchainMissing, saying what to install.
TEST(Targets, MissingComgrIsToolchainMissing) {
  in_fresh_process([] {
    setenv("IRISC_COMGR_LIBRARY", "/nonexistent/libamd_comgr.so", 1);
    irisc::CompileOptions o;
    o.target = "gfx90a";
    const irisc::CompileResult r = irisc::compile(irisc::SourceBuffer("t.iris", kStoreKernel), o);
    const std::string& d = r.rendered_diagnostics;
    const bool ok = !r.ok && d.find("cannot compile for gfx90a: no ROCm comgr: install libamd-comgr2") != std::string::npos &&
                    d.find("/nonexistent/libamd_comgr.so") != std::string::npos && d.find("[ToolchainMissing]") != std::string::npos;
    if (!ok) std::fprintf(stderr, "%s", d.c_str());
    std::exit(ok ? 0 : 1);
  });
}

// A compile error through comgr names the file as the caller did, not comgr's
// temporary folder.
TEST(Targets, ComgrCompileErrorNamesTheFile) {
  std::string why;
  if (!irisc::toolchain::comgr_available("gfx90a", &why)) GTEST_SKIP() << "comgr unavailable: " << why;
  irisc::toolchain::AmdgpuCompileOptions o;
  o.arch = "gfx90a";
  const irisc::toolchain::AmdgpuCompileResult r = irisc::toolchain::compile_hip_comgr(
      "#include <iris/device.hpp>\nextern \"C\" __global__ void k(int* p) { *p = no_such_name; }\n", "kernels.hip", o);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("kernels.hip:2:"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("no_such_name"), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find("comgr-"), std::string::npos) << r.log;
}
