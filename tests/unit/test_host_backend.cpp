// The host backend (IRIS_BACKEND=host): libiris's runtime on CPU threads, with no GPU:
// the symmetric heap, tensors and their initializers, host copies between ranks, the
// device barrier (and its timeout), and what it refuses.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <mutex>
#include <set>

#include "iris/iris.hpp"

namespace iris {
namespace {

int run_host(int ranks, const std::function<void(Context&)>& body, double wait_timeout = 60) {
  Options o;
  o.backend = "host";
  o.ranks = ranks;
  o.heap_bytes = std::size_t{16} << 20;
  o.wait_timeout = wait_timeout;
  return run(o, body);
}

class HostBackend : public ::testing::TestWithParam<int> {};

TEST_P(HostBackend, RanksHeapAndTensors) {
  const int ranks = GetParam();
  std::mutex mu;
  std::vector<std::string> problems;
  auto check = [&](bool ok, const std::string& what) {
    if (ok) return;
    std::lock_guard<std::mutex> lock(mu);
    problems.push_back(what);
  };
  const int rc = run_host(ranks, [&](Context& ctx) {
    check(ctx.world() == ranks, "world");
    check(ctx.device_name() == "host CPU", "device name " + ctx.device_name());
    check(ctx.multiprocessors() > 0, "multiprocessors");
    auto z = ctx.zeros<float>(1000);
    auto empty = ctx.ones<std::uint64_t>(std::size_t{0});
    check(empty.numel() == 0, "an empty tensor");
    auto ones = ctx.ones<std::uint64_t>(std::size_t{33});
    for (std::uint64_t v : ones.to_host()) check(v == 1, "ones<u64>");
    auto a = ctx.arange<std::int64_t>(257);
    auto h = ctx.full<half>({3, 5}, 1.5);
    auto u = ctx.rand<float>(4096, 7);
    auto n = ctx.randn<float>(4096, 7);
    auto r = ctx.randint<std::int32_t>(4096, -3, 9, 7);
    for (float v : z.to_host()) check(v == 0.0f, "zeros");
    const auto av = a.to_host();
    for (std::size_t i = 0; i < av.size(); ++i) check(av[i] == static_cast<std::int64_t>(i), "arange");
    for (half v : h.to_host()) check(static_cast<float>(v) == 1.5f, "full<half>");
    double mean = 0, sq = 0;
    for (float v : u.to_host()) check(v >= 0.0f && v < 1.0f, "rand in [0, 1)");
    for (float v : n.to_host()) {
      mean += v;
      sq += static_cast<double>(v) * v;
    }
    mean /= 4096;
    sq /= 4096;
    check(std::fabs(mean) < 0.1 && std::fabs(sq - 1.0) < 0.1, "randn has mean 0 and variance 1");
    std::set<std::int32_t> seen;
    for (std::int32_t v : r.to_host()) {
      check(v >= -3 && v < 9, "randint in [-3, 9)");
      seen.insert(v);
    }
    check(seen.size() == 12, "randint draws every value of a small range");
    // Ranks draw different numbers from one seed, the same ones again from it.
    auto u2 = ctx.rand<float>(4096, 7);
    check(u2.to_host() == u.to_host(), "the same seed draws the same numbers");
    const auto firsts = ctx.all_gather(u.to_host()[0]);
    for (int q = 1; q < ranks; ++q) check(firsts[static_cast<std::size_t>(q)] != firsts[0], "ranks draw differently");
    // A peer's twin, through host copies, after a device barrier.
    auto mine = ctx.full<std::int32_t>(std::size_t{64}, ctx.rank() + 1.0);
    ctx.device_barrier();
    ctx.synchronize();
    const int next = (ctx.rank() + 1) % ranks;
    std::vector<std::int32_t> theirs(64);
    ctx.copy_to_host(theirs.data(), mine.on_rank(next), mine.bytes());
    for (std::int32_t v : theirs) check(v == next + 1, "a peer's tensor through translate");
    auto b = ctx.full<float>(std::size_t{16}, ctx.rank() * 10.0);
    ctx.broadcast(b, ranks - 1);
    for (float v : b.to_host()) check(v == (ranks - 1) * 10.0f, "broadcast from the last rank");
    for (int i = 0; i < 3; ++i) ctx.device_barrier();
    ctx.barrier();
  });
  EXPECT_EQ(rc, 0);
  for (const std::string& p : problems) ADD_FAILURE() << p;
}

TEST_P(HostBackend, DeviceBarrierMismatchGivesUp) {
  const int ranks = GetParam();
  if (ranks < 2) GTEST_SKIP() << "needs two ranks";
  std::mutex mu;
  std::string error;
  const auto start = std::chrono::steady_clock::now();
  const int rc = run_host(
      ranks,
      [&](Context& ctx) {
        try {
          ctx.device_barrier();
          if (ctx.rank() == 0) ctx.device_barrier();  // one more than the others
          ctx.synchronize();
        } catch (const std::exception& e) {
          std::lock_guard<std::mutex> lock(mu);
          if (ctx.rank() == 0) error = e.what();
          throw;
        }
      },
      0.5);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(rc, 1);
  EXPECT_LT(seconds, 5.0);
  // Rank 1 is in its teardown barrier, so no rank can go on: reported as a deadlock at
  // once, in the device barrier's words (with its timeout alone, it would give up).
  EXPECT_NE(error.find("deadlock: every rank is blocked"), std::string::npos) << error;
  EXPECT_NE(error.find("rank 0: the device barrier: this rank is at device barrier #2, but rank 1 has reached only #1"),
            std::string::npos)
      << error;
}

INSTANTIATE_TEST_SUITE_P(Ranks, HostBackend, ::testing::Values(1, 2, 4),
                         [](const ::testing::TestParamInfo<int>& i) { return std::to_string(i.param) + "ranks"; });

TEST(HostBackendRefuses, GpuCodeObjectsWithAMessage) {
  std::string error;
  const int rc = run_host(1, [&](Context& ctx) {
    // The smallest well-formed PTX: the host backend cannot run it, and says so.
    const std::string ptx = ".version 8.0\n.target sm_80\n.address_size 64\n";
    try {
      ctx.load_module(std::as_bytes(std::span(ptx.data(), ptx.size())), "tiny.ptx");
    } catch (const Error& e) {
      error = e.what();
    }
  });
  EXPECT_EQ(rc, 0);
  EXPECT_NE(error.find("tiny.ptx"), std::string::npos) << error;
  EXPECT_NE(error.find("host backend"), std::string::npos) << error;
}

TEST(HostBackendRefuses, AnUnknownBackend) {
  Options o;
  o.backend = "tpu";
  EXPECT_THROW(o.validate(), Error);
}

}  // namespace
}  // namespace iris
