// The GPU suite keeps every GPU's primary context for its whole run (thread mode, CUDA
// backend): each test is a job of its own, and a job's ranks release the contexts they
// retained when it ends, so without this every test of a 4-rank run created and
// destroyed four contexts (each test of such a run took at least 1.9 s on 4 x H100,
// contexts, heap mappings and module loads included). The library's retain and release
// pairs are unchanged: the suite only holds one more reference.
//
// Tests that end kernels or jobs on purpose (Failures, RuntimeSetup) run without them,
// and any test that failed gets fresh ones after it: a kernel that trapped leaves its
// context unusable. IRIS_TEST_FRESH_CONTEXTS=1 turns this off (every job creates its own, as a
// program using libiris once would).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "gpu_harness.hpp"

namespace iris::test {
namespace {

class SuiteContexts : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* off = std::getenv("IRIS_TEST_FRESH_CONTEXTS");
    if ((off && *off && std::string(off) != "0") || on_host_backend() || launched_by_mpi()) return;
    try {
      if (device_count() == 0 || suite_backend() != "cuda") return;
      devices_ = device_count();
      retain();
    } catch (const std::exception& e) {
      // No contexts held: every job makes its own, as without this.
      devices_ = 0;
      std::fprintf(stderr, "[gpu suite] contexts not kept across tests: %s\n", e.what());
    }
  }
  void TearDown() override { release(); }

  // The tests that end kernels or jobs on purpose run without the suite's contexts (a
  // child process of theirs then finds every GPU as a lone program would, whatever its
  // compute mode); after them, and after any test that failed, fresh ones.
  void before(const ::testing::TestInfo& test) {
    if (held_ && on_purpose(test)) release();
  }
  void after(const ::testing::TestInfo& test) {
    if (devices_ == 0 || (held_ && !test.result()->Failed())) return;
    release();
    try {
      retain();
    } catch (const std::exception& e) {
      release();
      devices_ = 0;
      std::fprintf(stderr, "[gpu suite] contexts no longer kept across tests: %s\n", e.what());
    }
  }

 private:
  void retain() {
    for (int d = 0; d < devices_; ++d) {
      backend::active().retain_primary_context(d);
      held_ = d + 1;
    }
  }
  void release() {
    for (int d = 0; d < held_; ++d) backend::active().release_primary_context(d);
    held_ = 0;
  }

  static bool on_purpose(const ::testing::TestInfo& test) {
    const std::string suite = test.test_suite_name();
    return suite == "Failures" || suite == "RuntimeSetup";
  }

  int devices_ = 0, held_ = 0;
};

class AfterEachTest : public ::testing::EmptyTestEventListener {
 public:
  explicit AfterEachTest(SuiteContexts* contexts) : contexts_(contexts) {}
  void OnTestStart(const ::testing::TestInfo& test) override { contexts_->before(test); }
  void OnTestEnd(const ::testing::TestInfo& test) override { contexts_->after(test); }

 private:
  SuiteContexts* contexts_;
};

// gtest owns both (the environment lives until after the last listener call).
const bool registered = [] {
  auto* contexts = new SuiteContexts;
  ::testing::AddGlobalTestEnvironment(contexts);
  ::testing::UnitTest::GetInstance()->listeners().Append(new AfterEachTest(contexts));
  return true;
}();

}  // namespace
}  // namespace iris::test
