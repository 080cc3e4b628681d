// 01_store: each rank writes its buffer into its right neighbour's heap with remote
// stores; the receiver checks the data bit for bit; reports the write bandwidth.
#include "iris/embedded.hpp"
#include "sample.hpp"

IRIS_DECLARE_EMBEDDED(sample_kernels)

using namespace iris;
using namespace iris::samples;

int main(int argc, char** argv) {
  SampleSpec spec{"01_store", "remote stores into the next rank's symmetric buffer", 256u << 20};
  return sample_main(argc, argv, spec, [](Context& ctx, const SampleArgs& args) {
    const std::size_t n = args.bytes / 16 * 4;
    const int to = (ctx.rank() + 1) % ctx.world();
    const int from = (ctx.rank() + ctx.world() - 1) % ctx.world();
    auto src = ctx.rand<float>(n, 7);
    auto dst = ctx.full<float>(n, -1.0);
    Module mod = ctx.load_module(embedded::sample_kernels(), "01_store kernels");
    Kernel k = mod.kernel("store_to_peer");
    const unsigned long long n16 = n / 4;
    LaunchConfig cfg{grid_for(ctx, n16, 512), 512};
    float ms = median_ms(ctx, args, [&] { ctx.launch(k, cfg, dst.data(), src.data(), n16, to); });
    ctx.barrier();  // every writer is done before anyone checks

    std::vector<float> want(n);
    ctx.copy_to_host(want.data(), src.on_rank(from), src.bytes());
    expect_equal(dst.to_host(), want, "rank " + std::to_string(ctx.rank()) + " received from rank " + std::to_string(from));
    auto all = ctx.all_gather(static_cast<double>(src.bytes()) / (ms * 1e-3) / 1e9);
    std::string line = "validated; store bandwidth per rank (GB/s):";
    for (double v : all) line += " " + std::to_string(v).substr(0, 6);
    report(ctx, line);
  });
}
