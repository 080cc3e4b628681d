// Signals and waits: ring message passing with data checked on the GPU for each
// signalling variant (release/acquire, relaxed + fences, SignalOp::add, u32 flags with
// Cmp::eq), and every comparison of wait_until.
#include "gpu_harness.hpp"

namespace iris::test {
namespace {

class Signals : public GpuTest {};

TEST_P(Signals, RingMessagesEveryVariant) {
  IRIS_REQUIRE_CUDA();  // hand-written CUDA test kernels
  run_ranks(GetParam(), [](Context& ctx, Module& m) {
    Kernel k = m.kernel("ring_messages");
    for (int variant = 0; variant < 4; ++variant) {
      for (unsigned long long n : {1ull, 1000ull, 65536ull}) {
        auto inbox = ctx.zeros<std::uint32_t>(n);
        auto ready = ctx.zeros<std::uint64_t>(1);
        auto ack = ctx.zeros<std::uint64_t>(1);
        auto ready32 = ctx.zeros<std::uint32_t>(1);
        auto ack32 = ctx.zeros<std::uint32_t>(1);
        auto errors = ctx.zeros<std::uint32_t>(1);
        const unsigned rounds = n > 1000 ? 20 : 200;
        ctx.barrier();
        ctx.launch(k, LaunchConfig{2, 128}, variant, inbox.data(), n, ready.data(), ack.data(), ready32.data(),
                   ack32.data(), rounds, errors.data());
        ctx.barrier();
        const auto bad = errors.to_host()[0];
        require(bad == 0, "variant " + std::to_string(variant) + " n " + std::to_string(n) + ": " +
                              std::to_string(bad) + " stale words on rank " + std::to_string(ctx.rank()));
      }
    }
  });
}

TEST_P(Signals, WaitUntilEveryComparison) {
  IRIS_REQUIRE_CUDA();  // hand-written CUDA test kernels
  run_ranks(GetParam(), [](Context& ctx, Module& m) {
    auto flag = ctx.full<std::int64_t>(1, 5.0);
    auto results = ctx.zeros<std::int64_t>(6);
    ctx.launch(m.kernel("wait_cmps"), LaunchConfig{1, 32}, flag.data(), results.data());
    require(results.to_host() == std::vector<std::int64_t>(6, 5), "wait_until returned the value it saw");
  });
}

IRIS_GPU_SUITE(Signals);

}  // namespace
}  // namespace iris::test
