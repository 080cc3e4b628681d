// 04_atomic_add: each rank atomically increments every counter on every rank (relaxed,
// system scope). After L launches every counter on every rank must be world * L.
// Reports remote atomic throughput.
#include "iris/embedded.hpp"
#include "sample.hpp"

IRIS_DECLARE_EMBEDDED(sample_kernels)

using namespace iris;
using namespace iris::samples;

int main(int argc, char** argv) {
  SampleSpec spec{"04_atomic_add", "remote atomic adds to counters on every rank", 4u << 20};
  return sample_main(argc, argv, spec, [](Context& ctx, const SampleArgs& args) {
    const std::size_t n = args.bytes / sizeof(std::uint32_t);
    auto counters = ctx.zeros<std::uint32_t>(n);
    Module mod = ctx.load_module(embedded::sample_kernels(), "04_atomic_add kernels");
    Kernel k = mod.kernel("add_everywhere");
    const unsigned long long nn = n;
    LaunchConfig cfg{grid_for(ctx, n, 256), 256};
    ctx.barrier();  // counters are zero everywhere before anyone adds
    float ms = median_ms(ctx, args, [&] { ctx.launch(k, cfg, counters.data(), nn); });
    ctx.barrier();

    const auto launches = static_cast<std::uint32_t>(args.warmup + args.iters);
    std::vector<std::uint32_t> want(n, launches * static_cast<std::uint32_t>(ctx.world()));
    expect_equal(counters.to_host(), want, "rank " + std::to_string(ctx.rank()) + " counters");
    auto all = ctx.all_gather(static_cast<double>(n) * ctx.world() / (ms * 1e-3) / 1e9);
    std::string line = "validated; remote atomic adds per rank (G ops/s):";
    for (double v : all) line += " " + std::to_string(v).substr(0, 6);
    report(ctx, line);
  });
}
