// 03_all_store: each rank writes its buffer into row `rank` of a [world, n] buffer on
// every rank: an all-gather by remote stores. Every row is checked on every rank, for
// the hand-written CUDA kernel and all_store.iris through the irisc CLI, the JIT and
// the embedded header.
#include "all_store.iris.hpp"
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
    Kernel k = cuda_kernel(ctx, args, embedded::sample_kernels(), "03_all_store kernels", "store_to_all");
    const unsigned long long n16 = n / 4;
    const LaunchConfig cfg{grid_for(ctx, n16, 512), 512};
    std::vector<float> want(n * static_cast<std::size_t>(world));
    ctx.barrier();  // every rank's source is written before it is read
    for (int r = 0; r < ctx.world(); ++r) ctx.copy_to_host(want.data() + r * n, src.on_rank(r), src.bytes());
    IrisPaths<iris_kernels::all_store::Kernels> paths(ctx, args, "all_store");
    std::vector<Variant> variants{
        {"cuda", [&] { ctx.launch(k, cfg, dst.data(), src.data(), n16); }},
        {"cli", [&] { paths.cli->launch("store_to_all", {dst, src}); }},
        {"jit", [&] { paths.jit->launch("store_to_all", {dst, src}); }},
        {"embedded", [&] { paths.embedded->store_to_all(dst, src); }},
    };
    Measure m;
    m.reset = [&] {
      ctx.barrier();
      dst = ctx.full<float>({world, static_cast<std::int64_t>(n)}, -1.0);
    };
    m.validate = [&](int) { expect_equal(dst.to_host(), want, "rank " + std::to_string(ctx.rank()) + " rows from every rank"); };
    m.work_per_launch = static_cast<double>(src.bytes()) * ctx.world();
    m.unit = "GB/s written";
    run_variants(ctx, args, variants, m);
  });
}
