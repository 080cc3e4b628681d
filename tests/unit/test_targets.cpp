// The target table (compiler/target): names, lookups and the JIT's choice of target for
// a GPU.
#include <gtest/gtest.h>

#include "compiler/driver/compile.hpp"
#include "compiler/target/target.hpp"

using irisc::find_target;
using irisc::target_for_compute_capability;

TEST(Targets, NamesLookUpTheirEntries) {
  for (const irisc::Target& t : irisc::all_targets()) {
    ASSERT_EQ(find_target(t.name), &t);
    EXPECT_EQ(&irisc::target(t.id), &t);
  }
  EXPECT_EQ(find_target("sm_70"), nullptr);
  EXPECT_EQ(find_target(""), nullptr);
  EXPECT_EQ(irisc::target_names(), "sm_90a, sm_90, sm_80, host");
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

TEST(Targets, UnknownTargetListsTheTable) {
  irisc::CompileOptions o;
  o.target = "sm_75";
  o.stop_after = irisc::Stage::tir;
  const irisc::CompileResult r = irisc::compile(irisc::SourceBuffer("t.iris", "kernel k() {}"), o);
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.rendered_diagnostics.find("unknown target 'sm_75' (supported: sm_90a, sm_90, sm_80, host)"), std::string::npos)
      << r.rendered_diagnostics;
}
