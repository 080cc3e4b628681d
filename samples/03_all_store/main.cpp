// 03_all_store: each rank writes its buffer into row `rank` of a [world, n] buffer on
// every rank: an all-gather by remote stores. Every row is checked on every rank.
#include "iris/embedded.hpp"
#include "sample.hpp"

IRIS_DECLARE_EMBEDDED(sample_kernels)

using namespace iris;
using namespace iris::samples;

int main(int argc, char** argv) {
  SampleSpec spec{"03_all_store", "store into every rank (all-gather by stores)", 64u << 20};
  return sample_main(argc, argv, spec, [](Context& ctx, const SampleArgs& args) {
    const std::size_t n = args.bytes / 16 * 4;
    const auto world = static_cast<std::int64_t>(ctx.world());
    auto src = ctx.rand<float>(n, 11);
    auto dst = ctx.full<float>({world, static_cast<std::int64_t>(n)}, -1.0);
    Module mod = ctx.load_module(embedded::sample_kernels(), "03_all_store kernels");
    Kernel k = mod.kernel("store_to_all");
    const unsigned long long n16 = n / 4;
    LaunchConfig cfg{grid_for(ctx, n16, 512), 512};
    float ms = median_ms(ctx, args, [&] { ctx.launch(k, cfg, dst.data(), src.data(), n16); });
    ctx.barrier();

    std::vector<float> got = dst.to_host(), row(n);
    for (int r = 0; r < ctx.world(); ++r) {
      ctx.copy_to_host(row.data(), src.on_rank(r), src.bytes());
      std::vector<float> slice(got.begin() + static_cast<std::ptrdiff_t>(r * n),
                               got.begin() + static_cast<std::ptrdiff_t>((r + 1) * n));
      expect_equal(slice, row, "rank " + std::to_string(ctx.rank()) + " row from rank " + std::to_string(r));
    }
    auto all = ctx.all_gather(static_cast<double>(src.bytes()) * ctx.world() / (ms * 1e-3) / 1e9);
    std::string line = "validated; bytes written per rank per second (GB/s):";
    for (double v : all) line += " " + std::to_string(v).substr(0, 6);
    report(ctx, line);
  });
}
