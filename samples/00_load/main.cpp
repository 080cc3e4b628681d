// 00_load: each rank reads its right neighbour's buffer with remote loads, checks
// the copy bit for bit, and reports the read bandwidth.
#include "iris/embedded.hpp"
#include "sample.hpp"

IRIS_DECLARE_EMBEDDED(sample_kernels)

using namespace iris;
using namespace iris::samples;

int main(int argc, char** argv) {
  SampleSpec spec{"00_load", "remote loads from the next rank's symmetric buffer", 256u << 20};
  return sample_main(argc, argv, spec, [](Context& ctx, const SampleArgs& args) {
    const std::size_t n = args.bytes / 16 * 4;  // floats, a whole number of 16-byte vectors
    const int from = (ctx.rank() + 1) % ctx.world();
    auto src = ctx.rand<float>(n, 42);
    auto dst = ctx.full<float>(n, -1.0);
    Module mod = ctx.load_module(embedded::sample_kernels(), "00_load kernels");
    Kernel k = mod.kernel("load_from_peer");
    const unsigned long long n16 = n / 4;
    LaunchConfig cfg{grid_for(ctx, n16, 512), 512};
    float ms = median_ms(ctx, args, [&] { ctx.launch(k, cfg, dst.data(), src.data(), n16, from); });

    std::vector<float> want(n);
    ctx.copy_to_host(want.data(), src.on_rank(from), src.bytes());
    expect_equal(dst.to_host(), want, "rank " + std::to_string(ctx.rank()) + " loaded from rank " + std::to_string(from));
    auto all = ctx.all_gather(static_cast<double>(src.bytes()) / (ms * 1e-3) / 1e9);
    std::string line = "validated; load bandwidth per rank (GB/s):";
    for (double v : all) line += " " + std::to_string(v).substr(0, 6);
    report(ctx, line);
  });
}
