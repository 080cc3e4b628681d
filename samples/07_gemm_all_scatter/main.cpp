// 07_gemm_all_scatter: C = A x [B_0 B_1 ...] with B split by columns over the ranks.
// Every rank computes its block C_r = A x B_r and stores each finished tile into block
// r of C on every rank, so all ranks end with every block: a GEMM with its all-gather
// fused in. Checked on sampled entries against double-precision dot products; runs
// the hand-written CUDA kernel, gemm_all_scatter.iris through the irisc CLI, the JIT
// and the embedded header, and cuBLAS + NCCL all-gather as the baseline.
#include <cmath>
#include <random>

#include "gemm_all_scatter.iris.hpp"
#include "iris/embedded.hpp"
#include "cublas.hpp"
#include "sample.hpp"
#include "vendor.hpp"

IRIS_DECLARE_EMBEDDED(sample_kernels)

using namespace iris;
using namespace iris::samples;

int main(int argc, char** argv) {
  SampleSpec spec{"07_gemm_all_scatter",
                  "GEMM with its all-gather fused in: C_r = A x B_r, tiles stored into every rank",
                  64u << 20,
                  1,
                  {{"--m", "rows of A and of each rank's block of C", 4096, 192},
                   {"--n", "columns of B per rank", 4096, 320},
                   {"--k", "columns of A, rows of B", 4096, 96},
                   {"--check", "sampled entries of C checked per rank", 4096}}};
  return sample_main(argc, argv, spec, [](Context& ctx, const SampleArgs& args) {
    const std::int64_t M = args.get("--m"), N = args.get("--n"), K = args.get("--k"), W = ctx.world();
    if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX) throw Error("--m, --n, --k: at most 2^31 - 1 (cuBLAS)");
    auto a = ctx.randn<bfloat16>({M, K}, 21);
    ctx.broadcast(a, 0);  // one A, the same on every rank
    auto b = ctx.randn<bfloat16>({K, N}, 22);  // each rank's own columns
    auto c_local = ctx.empty<bfloat16>({M, N});
    auto c = ctx.full<bfloat16>({W * M, N}, -7.0);
    ctx.barrier();

    // The entries to check: (block r, row i, column j) with their exact values.
    struct Entry {
      int r;
      std::int64_t i, j;
      double want;
    };
    std::vector<Entry> entries;
    {
      std::vector<bfloat16> ah(static_cast<std::size_t>(M * K)), bh(static_cast<std::size_t>(K * N));
      ctx.copy_to_host(ah.data(), a.data(), a.bytes());
      std::mt19937_64 rng(77 + static_cast<unsigned>(ctx.rank()));
      for (int r = 0; r < W; ++r) {
        ctx.copy_to_host(bh.data(), b.on_rank(r), b.bytes());
        for (std::int64_t e = 0; e < args.get("--check") / W + 1; ++e) {
          const auto i = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(M));
          const auto j = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(N));
          double want = 0;
          for (std::int64_t k = 0; k < K; ++k) {
            want += static_cast<double>(static_cast<float>(ah[static_cast<std::size_t>(i * K + k)])) *
                    static_cast<double>(static_cast<float>(bh[static_cast<std::size_t>(k * N + j)]));
          }
          entries.push_back({r, i, j, want});
        }
      }
    }

    Kernel k = cuda_kernel(ctx, args, embedded::sample_kernels(), "07_gemm_all_scatter kernels", "gemm_all_scatter");
    const unsigned tiles = static_cast<unsigned>(((M + 63) / 64) * ((N + 63) / 64));
    const LaunchConfig cfg{tiles, 256};
    IrisPaths<iris_kernels::gemm_all_scatter::Kernels> paths(ctx, args, "gemm_all_scatter");
    std::unique_ptr<VendorGemmAllGather> vendor;
    std::string why;
    if (args.runs("baseline")) {
      vendor = VendorGemmAllGather::create(ctx, &why);
      if (!vendor) report(ctx, "  baseline  SKIPPED: " + why);
    }
    std::vector<Variant> variants{
        {"cuda", [&] { ctx.launch(k, cfg, a.data(), b.data(), c.data(), M, N, K); }},
        {"cli", [&] { paths.cli->launch("gemm_all_scatter", {a, b, c}); }},
        {"jit", [&] { paths.jit->launch("gemm_all_scatter", {a, b, c}); }},
        {"embedded", [&] { paths.embedded->gemm_all_scatter(a, b, c); }},
    };
    if (vendor) {
      variants.push_back({"baseline", [&] { vendor->run(a.data(), b.data(), c_local.data(), c.data(), M, N, K); },
                          "cublas+nccl"});
    }
    // At one rank the all-gather is a copy: the GEMM alone (cuBLAS writing C directly) is
    // the figure the fused kernel answers to.
    std::unique_ptr<Cublas> cublas;
    if (W == 1 && args.runs("baseline")) {
      std::string no_cublas;
      cublas = Cublas::load(ctx.stream(), &no_cublas);
      if (!cublas) report(ctx, "  cublas gemm  SKIPPED: " + no_cublas);
    }
    if (cublas) {
      variants.push_back(
          {"baseline", [&] { cublas->gemm(DType::bf16, a.data(), b.data(), c.data(), M, N, K); }, "cublas gemm"});
    }
    Measure m;
    m.reset = [&] {
      ctx.barrier();
      c = ctx.full<bfloat16>({W * M, N}, -7.0);
      ctx.barrier();
    };
    m.validate = [&](int) {
      const std::vector<bfloat16> got = c.to_host();
      std::size_t bad = 0;
      std::string first;
      for (const Entry& e : entries) {
        const double g = static_cast<float>(got[static_cast<std::size_t>((e.r * M + e.i) * N + e.j)]);
        // bf16 keeps 8 bits: the rounding of the result dominates fp32 accumulation error.
        if (!(std::fabs(g - e.want) <= 1e-2 * std::fabs(e.want) + 2e-2)) {
          if (!bad++) {
            first = "C[" + std::to_string(e.r * M + e.i) + ", " + std::to_string(e.j) + "] = " + std::to_string(g) +
                    ", want " + std::to_string(e.want);
          }
        }
      }
      if (bad) {
        throw Error("validation failed: rank " + std::to_string(ctx.rank()) + ": " + std::to_string(bad) + " of " +
                    std::to_string(entries.size()) + " sampled entries differ, first " + first);
      }
    };
    m.work_per_launch = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K) / 1e3;
    m.unit = "TFLOP/s";
    run_variants(ctx, args, variants, m);
    report(ctx, "  (M, N, K) per rank = (" + std::to_string(M) + ", " + std::to_string(N) + ", " + std::to_string(K) +
                    "); C is [" + std::to_string(W * M) + ", " + std::to_string(N) + "] on every rank");
  });
}
