// IRIS_TRACE (Options::trace): a job's trace is one Chrome trace-event file that holds
// every rank's host spans and device events, the device events on the host's clock,
// with the .iris lines of the statements that made them.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "gpu_harness.hpp"

namespace iris::test {
namespace {

const char* kHandshake = R"(kernel handshake(flag: symmetric tensor<u64>[1], data: symmetric tensor<i32>[1]) {
    let next = (rank + 1) % world;
    store(data[0], rank, to: next);
    signal(flag[0], 1, to: next, op: add);
    wait(flag[0] >= 1);
}
)";

class Trace : public ::testing::Test {
 protected:
  void SetUp() override {
    if (launched_by_mpi()) GTEST_SKIP() << "runs its own thread ranks";
    if (device_count() == 0) GTEST_SKIP() << "no GPU found";
  }
};

TEST_F(Trace, OneFileWithEveryRanksHostAndDeviceEvents) {
  IRIS_REQUIRE_CUDA();  // device trace events come from GPU kernels
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("iris-trace-test-" + std::to_string(::getpid()) + ".json");
  constexpr int kRanks = 2;
  Options o;
  o.heap_bytes = std::size_t{64} << 20;
  o.ranks = kRanks;
  o.share_gpus = true;
  o.trace = path.string();
  const std::int64_t before = Context::trace_clock_ns();
  const int rc = run(o, [](Context& ctx) {
    require(ctx.tracing(), "tracing is on");
    Program p = jit_program(ctx, kHandshake, "handshake.iris");
    auto flag = ctx.zeros<std::uint64_t>(1);
    auto data = ctx.zeros<std::int32_t>(1);
    ctx.barrier();
    p.launch("handshake", {flag, data});
    ctx.synchronize();
    ctx.barrier();
  });
  const std::int64_t after = Context::trace_clock_ns();
  ASSERT_EQ(rc, 0);
  std::ifstream f(path);
  ASSERT_TRUE(f) << "no trace at " << path;
  const nlohmann::json trace = nlohmann::json::parse(f);
  std::filesystem::remove(path);
  std::map<int, int> host, device;
  std::map<int, std::set<std::string>> device_names, host_names;
  std::set<int> wait_lines;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M") continue;
    const int pid = e.at("pid").get<int>();
    const double ts_us = e.at("ts").get<double>();
    // Device events on the host's clock: within the job's run (with a millisecond of slack).
    EXPECT_GT(ts_us, static_cast<double>(before) * 1e-3 - 1000) << e.dump();
    EXPECT_LT(ts_us, static_cast<double>(after) * 1e-3 + 1000) << e.dump();
    if (e.value("cat", "") == "device") {
      ++device[pid];
      if (e.contains("name")) device_names[pid].insert(e.at("name").get<std::string>());
      if (e.contains("args") && e.at("args").contains("line") && e.value("name", "").rfind("wait", 0) == 0) {
        wait_lines.insert(e.at("args").at("line").get<int>());
      }
    } else {
      ++host[pid];
      host_names[pid].insert(e.at("name").get<std::string>());
    }
  }
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_GT(host[r], 0) << "rank " << r;
    EXPECT_GT(device[r], 0) << "rank " << r;
    EXPECT_TRUE(device_names[r].count("handshake")) << "rank " << r << ": the kernel's programs";
    EXPECT_TRUE(device_names[r].count("signal -> rank " + std::to_string((r + 1) % kRanks))) << "rank " << r;
    EXPECT_TRUE(device_names[r].count("put -> rank " + std::to_string((r + 1) % kRanks))) << "rank " << r;
    EXPECT_TRUE(host_names[r].count("launch iris_k_handshake")) << "rank " << r;
    EXPECT_TRUE(host_names[r].count("jit handshake.iris")) << "rank " << r;
    EXPECT_TRUE(host_names[r].count("barrier")) << "rank " << r;
  }
  EXPECT_EQ(wait_lines, std::set<int>{5}) << "the wait statement's line in handshake.iris";
}

}  // namespace
}  // namespace iris::test
