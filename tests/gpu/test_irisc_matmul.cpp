// irisc's 2-D tiles and matmul on GPUs: GEMM + all-scatter compiled by the JIT, on
// shapes that are not multiples of the tile (masked edges), checked against a host
// product of the same bf16 inputs on every rank.
#include <cmath>
#include <string>

#include "gpu_harness.hpp"

namespace iris::test {
namespace {

class IriscMatmul : public GpuTest {};

const char* kGemmAllScatter = R"(
kernel gemm_all_scatter<BM: int = 64, BN: int = 64>(
    A: tensor<bf16>[M, K],
    B: tensor<bf16>[K, N],
    C: symmetric tensor<bf16>[M, N * world],
) {
    for (m, n) in tiles([M, N], [BM, BN]) {
        let c = matmul(A[m, :], B[:, n], acc: f32) as bf16;
        for r in ranks {
            store(C[m, n + rank * N], c, to: r);
        }
    }
}
)";

// Runs the kernel with T operands (kGemmAllScatter with "bf16" replaced by `dtype`) for
// each BM and checks every rank's block of C against a double-precision host product.
template <class T>
void check_gemm_all_scatter(Context& ctx, const char* dtype) {
  std::string src = kGemmAllScatter;
  const std::string to = dtype;
  for (std::size_t at = src.find("bf16"); at != std::string::npos; at = src.find("bf16", at + to.size())) {
    src.replace(at, 4, to);
  }
  const std::int64_t M = 200, N = 96, K = 80, W = ctx.world();
  for (auto [bm, bn] : {std::pair<std::int64_t, std::int64_t>{32, 64}, {64, 64}, {128, 64}, {128, 128}}) {
    JitOptions jo;
    jo.defines = {{"BM", bm}, {"BN", bn}};
    Program p = jit_program(ctx, src, "gemm_all_scatter.iris", jo);
    auto a = ctx.randn<T>({M, K}, 11);
    auto b = ctx.randn<T>({K, N}, 12);
    auto c = ctx.full<T>({M, N * W}, -7.0);
    ctx.barrier();
    p.launch("gemm_all_scatter", {a, b, c});
    ctx.barrier();
    const std::vector<T> got = c.to_host();
    double err = 0, ref = 0;
    for (int r = 0; r < W; ++r) {
      std::vector<T> ar(static_cast<std::size_t>(M * K)), br(static_cast<std::size_t>(K * N));
      ctx.copy_to_host(ar.data(), a.on_rank(r), a.bytes());
      ctx.copy_to_host(br.data(), b.on_rank(r), b.bytes());
      for (std::int64_t i = 0; i < M; ++i) {
        for (std::int64_t j = 0; j < N; ++j) {
          double want = 0;
          for (std::int64_t k = 0; k < K; ++k) {
            want += static_cast<double>(static_cast<float>(ar[static_cast<std::size_t>(i * K + k)])) *
                    static_cast<double>(static_cast<float>(br[static_cast<std::size_t>(k * N + j)]));
          }
          const double g = static_cast<float>(got[static_cast<std::size_t>(i * N * W + r * N + j)]);
          require(std::isfinite(g), "no NaN/inf in C");
          err += (g - want) * (g - want);
          ref += want * want;
        }
      }
    }
    const double rel = std::sqrt(err / ref);
    require(rel < 1e-2, std::string(dtype) + ": relative error " + std::to_string(rel) + " with BM=" +
                            std::to_string(bm) + " BN=" + std::to_string(bn) + " on rank " + std::to_string(ctx.rank()));
    ctx.barrier();
  }
}

// Every shape takes the tensor-core lowering (tile_mma.hpp) for bf16 and f16; 128 x 128
// needs 67.5 KiB of dynamic shared memory, so the launch opts in above 48 KiB. The
// shapes leave partial tiles in M, N and K.
TEST_P(IriscMatmul, GemmAllScatterMatchesHostProduct) {
  run_ranks(GetParam(), [](Context& ctx, Module&) { check_gemm_all_scatter<bfloat16>(ctx, "bf16"); });
}

TEST_P(IriscMatmul, GemmAllScatterF16MatchesHostProduct) {
  run_ranks(GetParam(), [](Context& ctx, Module&) { check_gemm_all_scatter<half>(ctx, "f16"); });
}

// f32 operands take the simple lowering.
TEST_P(IriscMatmul, GemmAllScatterF32MatchesHostProduct) {
  run_ranks(GetParam(), [](Context& ctx, Module&) { check_gemm_all_scatter<float>(ctx, "f32"); });
}

// A blocks loop of 32 elements makes the kernel run 32 threads, fewer than the 64
// columns of its f32 matmul tile: the SIMT lowering then reads each slot's own column.
const char* kNarrowPrograms = R"(
kernel narrow(A: tensor<f32>[M, K], B: tensor<f32>[K, N], C: tensor<f32>[M, N], z: tensor<f32>[Z]) {
    for (m, n) in tiles([M, N], [32, 64]) {
        store(C[m, n], matmul(A[m, :], B[:, n]));
    }
    for i in blocks(Z, 32) {
        store(z[i], 1.0);
    }
}
)";

TEST_P(IriscMatmul, MatmulWithFewerThreadsThanColumns) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const std::int64_t M = 70, N = 100, K = 45;
    Program p = jit_program(ctx, kNarrowPrograms, "narrow.iris");
    require(p.kernel("narrow").threads == 32, "the kernel runs 32 threads");
    auto a = ctx.randn<float>({M, K}, 21);
    auto b = ctx.randn<float>({K, N}, 22);
    auto c = ctx.full<float>({M, N}, -7.0);
    auto z = ctx.zeros<float>(std::size_t{100});
    p.launch("narrow", {a, b, c, z});
    ctx.synchronize();
    const std::vector<float> ah = a.to_host(), bh = b.to_host(), got = c.to_host();
    double err = 0, ref = 0;
    for (std::int64_t i = 0; i < M; ++i) {
      for (std::int64_t j = 0; j < N; ++j) {
        double want = 0;
        for (std::int64_t k = 0; k < K; ++k) {
          want += static_cast<double>(ah[static_cast<std::size_t>(i * K + k)]) * bh[static_cast<std::size_t>(k * N + j)];
        }
        const double g = got[static_cast<std::size_t>(i * N + j)];
        err += (g - want) * (g - want);
        ref += want * want;
      }
    }
    require(std::sqrt(err / ref) < 1e-5, "f32 matmul with 32 threads: relative error " + std::to_string(std::sqrt(err / ref)));
    for (float v : z.to_host()) require(v == 1.0f, "the blocks loop wrote every element");
  });
}

IRIS_GPU_SUITE(IriscMatmul);

}  // namespace
}  // namespace iris::test
