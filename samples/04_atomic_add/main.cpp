// 04_atomic_add: each rank atomically increments every counter on every rank (relaxed,
// system scope). After L launches every counter on every rank must be world * L.
// Reports remote atomic throughput for the hand-written CUDA kernel and for
// atomic_add.iris through the irisc CLI, the JIT and the embedded header.
#include "atomic_add.iris.hpp"
#include "iris/embedded.hpp"
#include "sample.hpp"

IRIS_DECLARE_EMBEDDED(sample_kernels)

using namespace iris;
using namespace iris::samples;

int main(int argc, char** argv) {
  // 64 MiB: a launch then lasts about 0.6 ms at 4 ranks. At 4 MiB it lasts about 45 us,
  // of which launch and rank start-up skew are about 15%, which is not what this measures.
  SampleSpec spec{"04_atomic_add", "remote atomic adds to counters on every rank", 64u << 20};
  return sample_main(argc, argv, spec, [](Context& ctx, const SampleArgs& args) {
    const std::size_t n = args.bytes / sizeof(std::uint32_t);
    auto counters = ctx.zeros<std::uint32_t>(n);
    Kernel k = cuda_kernel(ctx, args, embedded::sample_kernels(), "04_atomic_add kernels", "add_everywhere");
    const unsigned long long nn = n;
    const LaunchConfig cfg{grid_for(ctx, n, 256), 256};
    IrisPaths<iris_kernels::atomic_add::Kernels> paths(ctx, args, "atomic_add");
    std::vector<Variant> variants{
        {"cuda", [&] { ctx.launch(k, cfg, counters.data(), nn); }},
        {"cli", [&] { paths.cli->launch("add_everywhere", {counters}); }},
        {"jit", [&] { paths.jit->launch("add_everywhere", {counters}); }},
        {"embedded", [&] { paths.embedded->add_everywhere(counters); }},
    };
    Measure m;
    m.reset = [&] {
      ctx.barrier();
      counters = ctx.zeros<std::uint32_t>(n);
      ctx.barrier();  // zero everywhere before anyone adds
    };
    m.validate = [&](int launches) {
      std::vector<std::uint32_t> want(n, static_cast<std::uint32_t>(launches) * static_cast<std::uint32_t>(ctx.world()));
      expect_equal(counters.to_host(), want, "rank " + std::to_string(ctx.rank()) + " counters");
    };
    m.work_per_launch = static_cast<double>(n) * ctx.world();
    m.unit = "G atomics/s";
    run_variants(ctx, args, variants, m);
  });
}
