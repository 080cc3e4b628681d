// 02_all_load: each rank loads the same buffer from every rank (itself included) and
// sums element-wise: the read side of an all-reduce. Checked against a host sum in
// the same order, so the float result must match exactly. Runs the hand-written CUDA
// kernel and all_load.iris through the irisc CLI, the JIT and the embedded header.
#include "all_load.iris.hpp"
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
    Kernel k = cuda_kernel(ctx, args, embedded::sample_kernels(), "02_all_load kernels", "sum_all_ranks");
    const unsigned long long n16 = n / 4;
    const LaunchConfig cfg{grid_for(ctx, n16, 512), 512};
    ctx.barrier();  // every rank's source is initialised
    std::vector<float> want(n, 0.0f), part(n);
    for (int r = 0; r < ctx.world(); ++r) {
      ctx.copy_to_host(part.data(), src.on_rank(r), src.bytes());
      for (std::size_t i = 0; i < n; ++i) want[i] += part[i];
    }
    IrisPaths<iris_kernels::all_load::Kernels> paths(ctx, args, "all_load");
    std::vector<Variant> variants{
        {"cuda", [&] { ctx.launch(k, cfg, dst.data(), src.data(), n16); }},
        {"cli", [&] { paths.cli->launch("sum_all_ranks", {dst, src}); }},
        {"jit", [&] { paths.jit->launch("sum_all_ranks", {dst, src}); }},
        {"embedded", [&] { paths.embedded->sum_all_ranks(dst, src); }},
    };
    Measure m;
    m.reset = [&] { dst = ctx.full<float>(n, -1.0); };
    m.validate = [&](int) { expect_equal(dst.to_host(), want, "rank " + std::to_string(ctx.rank()) + " sum over all ranks"); };
    m.work_per_launch = static_cast<double>(src.bytes()) * ctx.world();
    m.unit = "GB/s read";
    run_variants(ctx, args, variants, m);
  });
}
