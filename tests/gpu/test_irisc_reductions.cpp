// irisc's tile reductions on GPUs, on a size that is not a multiple of the tile: masked
// elements read `other:` (so a max over negative data is not 0), and u64 max/min
// compare unsigned through the block's shared scratch.
#include <algorithm>
#include <random>

#include "gpu_harness.hpp"

namespace iris::test {
namespace {

class IriscReductions : public GpuTest {};

const char* kReduceTiles = R"(
kernel reduce_tiles<B: int = 256>(
    x: tensor<f32>[N],
    u: tensor<u64>[N],
    out: tensor<f32>[T, 2],
    uout: tensor<u64>[T, 2],
) {
    for i in blocks(N, B) {
        let k = start(i) / B;
        store(out[k, 0], max(load(x[i], other: -3.0e38)));
        store(out[k, 1], min(load(x[i], other: 3.0e38)));
        store(uout[k, 0], max(load(u[i])));
        store(uout[k, 1], min(load(u[i], other: 18446744073709551615)));
    }
}
)";

TEST_P(IriscReductions, MaskedTailsUseOtherAndU64ComparesUnsigned) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    constexpr std::int64_t B = 256, N = 1000, T = (N + B - 1) / B;  // the last tile holds 232
    Program p = jit_program(ctx, kReduceTiles, "reduce_tiles.iris");
    std::mt19937_64 rng(1234 + static_cast<unsigned>(ctx.rank()));
    std::vector<float> x(N);
    std::vector<std::uint64_t> u(N);
    for (std::int64_t e = 0; e < N; ++e) {
      x[static_cast<std::size_t>(e)] = -1.0f - static_cast<float>(rng() % 1000) / 10.0f;  // all < 0
      u[static_cast<std::size_t>(e)] = (1ull << 63) + rng() % 1000000;                  // all >= 2^63
    }
    auto xt = ctx.empty<float>(static_cast<std::size_t>(N));
    auto ut = ctx.empty<std::uint64_t>(static_cast<std::size_t>(N));
    xt.copy_from_host(x);
    ut.copy_from_host(u);
    auto out = ctx.full<float>({T, 2}, 7.0);
    auto uout = ctx.zeros<std::uint64_t>({T, 2});
    p.launch("reduce_tiles", {xt, ut, out, uout});
    ctx.synchronize();
    const std::vector<float> got = out.to_host();
    const std::vector<std::uint64_t> ugot = uout.to_host();
    for (std::int64_t k = 0; k < T; ++k) {
      const auto lo = static_cast<std::size_t>(k * B), hi = static_cast<std::size_t>(std::min(N, (k + 1) * B));
      const float mx = *std::max_element(x.begin() + lo, x.begin() + hi);
      const float mn = *std::min_element(x.begin() + lo, x.begin() + hi);
      const std::uint64_t umx = *std::max_element(u.begin() + lo, u.begin() + hi);
      const std::uint64_t umn = *std::min_element(u.begin() + lo, u.begin() + hi);
      const std::string at = "tile " + std::to_string(k) + " on rank " + std::to_string(ctx.rank());
      require(got[static_cast<std::size_t>(2 * k)] == mx, "f32 max of " + at + ": got " +
                                                              std::to_string(got[static_cast<std::size_t>(2 * k)]) +
                                                              ", want " + std::to_string(mx));
      require(got[static_cast<std::size_t>(2 * k + 1)] == mn, "f32 min of " + at);
      require(ugot[static_cast<std::size_t>(2 * k)] == umx, "u64 max of " + at);
      require(ugot[static_cast<std::size_t>(2 * k + 1)] == umn, "u64 min of " + at);
    }
  });
}

IRIS_GPU_SUITE(IriscReductions);

}  // namespace
}  // namespace iris::test
