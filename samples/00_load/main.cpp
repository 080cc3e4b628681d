// 00_load: each rank reads its right neighbour's buffer with remote loads, checks the
// copy bit for bit, and reports the read bandwidth -- for the hand-written CUDA kernel
// and for load.iris through the irisc CLI, the JIT and the embedded header.
#include "iris/embedded.hpp"
#include "load.iris.hpp"
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
    Kernel k = cuda_kernel(ctx, args, embedded::sample_kernels(), "00_load kernels", "load_from_peer");
    const unsigned long long n16 = n / 4;
    const LaunchConfig cfg{grid_for(ctx, n16, 512), 512};
    std::vector<float> want(n);
    ctx.barrier();  // the peer's source is written before it is read
    ctx.copy_to_host(want.data(), src.on_rank(from), src.bytes());

    std::vector<Variant> variants{{"cuda", [&] { ctx.launch(k, cfg, dst.data(), src.data(), n16, from); }}};
    IrisPaths<iris_kernels::load::Kernels> paths(ctx, args, "load");
    const std::int64_t from64 = from;
    variants.push_back({"cli", [&] { paths.cli->launch("load_from_peer", {dst, src, from64}); }});
    variants.push_back({"jit", [&] { paths.jit->launch("load_from_peer", {dst, src, from64}); }});
    variants.push_back({"embedded", [&] { paths.embedded->load_from_peer(dst, src, from64); }});

    Measure m;
    m.reset = [&] { dst = ctx.full<float>(n, -1.0); };
    m.validate = [&](int) { expect_equal(dst.to_host(), want, "rank " + std::to_string(ctx.rank()) + " loaded from rank " + std::to_string(from)); };
    m.work_per_launch = static_cast<double>(src.bytes());
    run_variants(ctx, args, variants, m);
  });
}
