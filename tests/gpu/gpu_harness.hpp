// GPU test harness: runs a test body on N ranks (threads, or the mpirun world) with the
// test kernels loaded; tests report SKIPPED when there is no GPU. With IRIS_BACKEND=host
// the suite runs on the host backend (CPU threads interpret the .iris kernels): tests of
// irisc kernels run there too, and tests that need hand-written CUDA or a GPU feature
// report SKIPPED (IRIS_REQUIRE_CUDA).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "job/bootstrap.hpp"
#include "iris/embedded.hpp"
#include "iris/iris.hpp"

IRIS_DECLARE_EMBEDDED(gpu_test_kernels)

namespace iris::test {

// Rank counts to test in thread mode: IRIS_TEST_RANKS="1,2,4" (the default). Under
// mpirun the launcher's world is used, once.
inline std::vector<int> rank_counts() {
  if (launched_by_mpi()) return {0};
  std::vector<int> out;
  const char* env = std::getenv("IRIS_TEST_RANKS");
  std::string s = env && *env ? env : "1,2,4";
  std::size_t pos = 0;
  while (pos < s.size()) {
    std::size_t comma = s.find(',', pos);
    out.push_back(std::atoi(s.substr(pos, comma - pos).c_str()));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

inline std::string ranks_name(const ::testing::TestParamInfo<int>& info) {
  return info.param == 0 ? std::string("mpi") : std::to_string(info.param) + "ranks";
}

// Fatal check inside a rank body: throwing makes iris::run wake the other ranks (an
// ASSERT would return from one rank and leave the others waiting in a collective).
inline void require(bool ok, const std::string& what) {
  if (!ok) throw Error("check failed: " + what);
}

// Whether the suite runs on the host backend (IRIS_BACKEND=host).
inline bool on_host_backend() {
  const char* b = std::getenv("IRIS_BACKEND");
  return b && std::string(b) == "host";
}

// The backend the suite's jobs run on, as libiris chooses it (IRIS_BACKEND, else the
// vendor whose GPU is present).
inline std::string suite_backend() { return backend::active().name(); }

// The hand-written CUDA test kernels are loaded on the cuda backend only (the module is
// empty on host and hip): tests that use them start with IRIS_REQUIRE_CUDA().
inline void run_ranks(int ranks, const std::function<void(Context&, Module&)>& body,
                      std::size_t heap = std::size_t{256} << 20) {
  // From the environment (IRIS_CHECK_RACES, IRIS_WAIT_TIMEOUT, ...), then the suite's own.
  Options o = Options::from_env();
  o.heap_bytes = on_host_backend() ? std::min<std::size_t>(heap, std::size_t{64} << 20) : heap;
  o.ranks = ranks;
  o.share_gpus = true;
  const int rc = run(o, [&](Context& ctx) {
    Module m;
    if (std::string(ctx.backend()) == "cuda") m = ctx.load_module(embedded::gpu_test_kernels(), "gpu test kernels");
    body(ctx, m);
  });
  EXPECT_EQ(rc, 0) << "a rank failed (see its [iris r/w] error line above)";
}

class GpuTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (!on_host_backend() && device_count() == 0) GTEST_SKIP() << "no GPU found";
  }
};

// A 2-D tensor's entries as f(i, j), converted to T; and a new one filled so.
template <class T>
void set(Tensor<T>& t, const std::function<double(std::int64_t, std::int64_t)>& f) {
  const std::int64_t rows = t.shape()[0], cols = t.shape()[1];
  std::vector<T> h(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) h[static_cast<std::size_t>(i * cols + j)] = static_cast<T>(static_cast<float>(f(i, j)));
  }
  t.copy_from_host(h);
}

template <class T>
Tensor<T> make(Context& ctx, std::int64_t rows, std::int64_t cols, const std::function<double(std::int64_t, std::int64_t)>& f) {
  auto t = ctx.empty<T>(Shape{rows, cols});
  set(t, f);
  return t;
}

}  // namespace iris::test

// For tests of hand-written CUDA kernels, graphs, TMA or NVIDIA-only lowerings.
#define IRIS_REQUIRE_CUDA()                                                                             \
  do {                                                                                                 \
    if (::iris::test::suite_backend() != "cuda") {                                                     \
      GTEST_SKIP() << "needs the CUDA backend (this suite runs on " << ::iris::test::suite_backend() << ")"; \
    }                                                                                                  \
  } while (0)

#define IRIS_GPU_SUITE(Suite) \
  INSTANTIATE_TEST_SUITE_P(Ranks, Suite, ::testing::ValuesIn(::iris::test::rank_counts()), ::iris::test::ranks_name)
