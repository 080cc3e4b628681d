// 01_store: each rank writes its buffer into its right neighbour's heap with remote
// stores; the receiver checks the data bit for bit -- for the hand-written CUDA kernel
// and for store.iris through the irisc CLI, the JIT and the embedded header.
#include "iris/embedded.hpp"
#include "sample.hpp"
#include "store.iris.hpp"

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
    Kernel k = cuda_kernel(ctx, args, embedded::sample_kernels(), "01_store kernels", "store_to_peer");
    const unsigned long long n16 = n / 4;
    const LaunchConfig cfg{grid_for(ctx, n16, 512), 512};
    std::vector<float> want(n);
    ctx.barrier();  // the peer's source is written before it is read
    ctx.copy_to_host(want.data(), src.on_rank(from), src.bytes());

    IrisPaths<iris_kernels::store::Kernels> paths(ctx, args, "store");
    const std::int64_t to64 = to;
    std::vector<Variant> variants{
        {"cuda", [&] { ctx.launch(k, cfg, dst.data(), src.data(), n16, to); }},
        {"cli", [&] { paths.cli->launch("store_to_peer", {dst, src, to64}); }},
        {"jit", [&] { paths.jit->launch("store_to_peer", {dst, src, to64}); }},
        {"embedded", [&] { paths.embedded->store_to_peer(dst, src, to64); }},
    };
    Measure m;
    m.reset = [&] {
      ctx.barrier();  // nobody is still writing into the buffer being replaced
      dst = ctx.full<float>(n, -1.0);
    };
    m.validate = [&](int) { expect_equal(dst.to_host(), want, "rank " + std::to_string(ctx.rank()) + " received from rank " + std::to_string(from)); };
    m.work_per_launch = static_cast<double>(src.bytes());
    run_variants(ctx, args, variants, m);
  });
}
