// 02_all_load: each rank loads the same buffer from every rank (itself included) and
// sums element-wise: the read side of an all-reduce. Checked against a host sum in
// the same order, so the float result must match exactly.
#include "iris/embedded.hpp"
#include "sample.hpp"

IRIS_DECLARE_EMBEDDED(sample_kernels)

using namespace iris;
using namespace iris::samples;

int main(int argc, char** argv) {
  SampleSpec spec{"02_all_load", "load from every rank and reduce (sum)", 64u << 20};
  return sample_main(argc, argv, spec, [](Context& ctx, const SampleArgs& args) {
    const std::size_t n = args.bytes / 16 * 4;
    auto src = ctx.randn<float>(n, 3);
    auto dst = ctx.full<float>(n, -1.0);
    Module mod = ctx.load_module(embedded::sample_kernels(), "02_all_load kernels");
    Kernel k = mod.kernel("sum_all_ranks");
    const unsigned long long n16 = n / 4;
    LaunchConfig cfg{grid_for(ctx, n16, 512), 512};
    ctx.barrier();  // every rank's source is initialised
    float ms = median_ms(ctx, args, [&] { ctx.launch(k, cfg, dst.data(), src.data(), n16); });

    std::vector<float> want(n, 0.0f), part(n);
    for (int r = 0; r < ctx.world(); ++r) {
      ctx.copy_to_host(part.data(), src.on_rank(r), src.bytes());
      for (std::size_t i = 0; i < n; ++i) want[i] += part[i];
    }
    expect_equal(dst.to_host(), want, "rank " + std::to_string(ctx.rank()) + " sum over all ranks");
    auto all = ctx.all_gather(static_cast<double>(src.bytes()) * ctx.world() / (ms * 1e-3) / 1e9);
    std::string line = "validated; bytes read per rank per second (GB/s):";
    for (double v : all) line += " " + std::to_string(v).substr(0, 6);
    report(ctx, line);
  });
}
