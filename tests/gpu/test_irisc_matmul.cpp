// irisc's 2-D tiles and matmul on GPUs: GEMM + all-scatter compiled by the JIT, on
// shapes that are not multiples of the tile (masked edges), checked against a host
// product of the same bf16 inputs on every rank; the mma.sync lowering compiled for a
// target without wgmma (IriscMmaSync: sm_80 on Ampere, sm_90 on Hopper); and the sm90
// warp-specialized GEMM that such loops become on sm_90a (IriscWgmma, SKIPPED on other
// GPUs).
#include <algorithm>
#include <cmath>
#include <string>

#include "backend/backend.hpp"
#include "compiler/contract/launch_contract.hpp"
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

// Every shape takes tensor cores for bf16 and f16: mma.sync (tile/mma.hpp; 128 x 128
// needs 67.5 KiB of dynamic shared memory, so the launch opts in above 48 KiB), or on
// sm_90a the wgmma GEMM for all but 32 x 64. The shapes leave partial tiles in M, N and K.
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

// ---- the sm90 warp-specialized GEMM (select-gemm-mainloop) --------------------------------
// On an sm_90 GPU the JIT compiles for sm_90a, where a tiles loop that starts with
// `let c = matmul(...)` of bf16 or f16 operands runs as the TMA + wgmma template. Ragged
// shapes (M, N, K not multiples of the tile) and exact ones, both B layouts, and an
// epilogue that scales and stores to a peer, against a host product in double.

class IriscWgmma : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    if (backend::active().device_attribute(0, backend::DeviceAttribute::compute_capability_major) != 9) {
      GTEST_SKIP() << "not an sm_90 GPU (the wgmma GEMM is sm_90a only)";
    }
  }
};

// `B` is [K, N], or with `b_nk` [N, K] (read as `Bt[n, :]`). C[i, j] = scale * sum_k A[i, k] B(k, j).
template <class T>
double relative_error(const std::vector<T>& a, const std::vector<T>& b, const std::vector<double>& got, std::int64_t M,
                      std::int64_t N, std::int64_t K, bool b_nk, double scale) {
  double err = 0, ref = 0;
  for (std::int64_t i = 0; i < M; ++i) {
    for (std::int64_t j = 0; j < N; ++j) {
      double want = 0;
      for (std::int64_t k = 0; k < K; ++k) {
        const T bv = b[static_cast<std::size_t>(b_nk ? j * K + k : k * N + j)];
        want += static_cast<double>(static_cast<float>(a[static_cast<std::size_t>(i * K + k)])) *
                static_cast<double>(static_cast<float>(bv));
      }
      want *= scale;
      const double g = got[static_cast<std::size_t>(i * N + j)];
      if (!std::isfinite(g)) return INFINITY;
      err += (g - want) * (g - want);
      ref += want * want;
    }
  }
  return std::sqrt(err / ref);
}

// Whether the kernel took the wgmma path: its launch passes tensor maps.
bool runs_wgmma(const Program& p, const std::string& kernel) {
  for (const irisc::contract::Arg& a : p.kernel(kernel).args) {
    if (a.kind == irisc::contract::ArgKind::tensor_map) return true;
  }
  return false;
}

std::string with_dtype(std::string src, const std::string& dtype) {
  for (std::size_t at = src.find("bf16"); at != std::string::npos; at = src.find("bf16", at + dtype.size())) {
    src.replace(at, 4, dtype);
  }
  return src;
}

const char* kGemmKn = R"(
kernel gemm<BM: int = 128, BN: int = 256>(A: tensor<bf16>[M, K], B: tensor<bf16>[K, N], C: tensor<bf16>[M, N]) {
    for (m, n) in tiles([M, N], [BM, BN]) {
        let c = matmul(A[m, :], B[:, n], acc: f32) as bf16;
        store(C[m, n], c);
    }
}
)";

const char* kGemmNk = R"(
kernel gemm<BM: int = 128, BN: int = 256>(A: tensor<bf16>[M, K], Bt: tensor<bf16>[N, K], C: tensor<bf16>[M, N]) {
    for (m, n) in tiles([M, N], [BM, BN]) {
        let c = matmul(A[m, :], Bt[n, :], acc: f32) as bf16;
        store(C[m, n], c);
    }
}
)";

template <class T>
void check_wgmma_gemm(Context& ctx, const char* dtype, bool b_nk) {
  const std::string src = with_dtype(b_nk ? kGemmNk : kGemmKn, dtype);
  struct Case {
    std::int64_t M, N, K, bm, bn;
  };
  // 296, not 300: a [K, N] B's rows must be a multiple of 16 bytes for TMA (300 falls
  // back: TmaRowsThatAreNotMultiplesOf16BytesFallBack).
  for (const Case& c : {Case{200, 296, 136, 128, 256}, Case{128, 256, 64, 128, 256}, Case{200, 296, 136, 64, 128},
                        Case{1000, 520, 200, 128, 128}}) {
    JitOptions jo;
    jo.defines = {{"BM", c.bm}, {"BN", c.bn}};
    Program p = jit_program(ctx, src, "gemm.iris", jo);
    require(runs_wgmma(p, "gemm"), "the kernel runs as the sm90 GEMM");
    auto a = ctx.randn<T>({c.M, c.K}, 31);
    auto b = b_nk ? ctx.randn<T>({c.N, c.K}, 32) : ctx.randn<T>({c.K, c.N}, 32);
    auto out = ctx.full<T>({c.M, c.N}, -7.0);
    p.launch("gemm", {a, b, out});
    ctx.synchronize();
    const std::vector<T> got = out.to_host();
    std::vector<double> g(got.size());
    for (std::size_t i = 0; i < got.size(); ++i) g[i] = static_cast<float>(got[i]);
    const double rel = relative_error(a.to_host(), b.to_host(), g, c.M, c.N, c.K, b_nk, 1.0);
    require(rel <= 1e-2, std::string(dtype) + (b_nk ? " B [N, K]" : " B [K, N]") + " " + std::to_string(c.M) + " x " +
                             std::to_string(c.N) + " x " + std::to_string(c.K) + " with " + std::to_string(c.bm) + " x " +
                             std::to_string(c.bn) + " tiles: relative error " + std::to_string(rel));
  }
}

TEST_P(IriscWgmma, Bf16BKnMatchesHostProduct) {
  run_ranks(GetParam(), [](Context& ctx, Module&) { check_wgmma_gemm<bfloat16>(ctx, "bf16", false); });
}
TEST_P(IriscWgmma, Bf16BNkMatchesHostProduct) {
  run_ranks(GetParam(), [](Context& ctx, Module&) { check_wgmma_gemm<bfloat16>(ctx, "bf16", true); });
}
TEST_P(IriscWgmma, F16BKnMatchesHostProduct) {
  run_ranks(GetParam(), [](Context& ctx, Module&) { check_wgmma_gemm<half>(ctx, "f16", false); });
}
TEST_P(IriscWgmma, F16BNkMatchesHostProduct) {
  run_ranks(GetParam(), [](Context& ctx, Module&) { check_wgmma_gemm<half>(ctx, "f16", true); });
}

// An epilogue that scales the accumulators and stores them into the next rank's C: rank
// r's block (r - 1) of C holds rank r - 1's product.
const char* kScaleToPeer = R"(
kernel scale_to_peer(A: tensor<bf16>[M, K], Bt: tensor<bf16>[N, K], C: symmetric tensor<f32>[M, N * world], s: f32) {
    let next = (rank + 1) % world;
    for (m, n) in tiles([M, N], [128, 128]) {
        let c = matmul(A[m, :], Bt[n, :], acc: f32);
        store(C[m, n + rank * N], c * s, to: next);
    }
}
)";

TEST_P(IriscWgmma, EpilogueScalesAndStoresToAPeer) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const std::int64_t M = 200, N = 296, K = 136, W = ctx.world();
    Program p = jit_program(ctx, kScaleToPeer, "scale_to_peer.iris");
    require(runs_wgmma(p, "scale_to_peer"), "the kernel runs as the sm90 GEMM");
    auto a = ctx.randn<bfloat16>({M, K}, 41 + static_cast<std::uint64_t>(ctx.rank()));
    auto b = ctx.randn<bfloat16>({N, K}, 51 + static_cast<std::uint64_t>(ctx.rank()));
    auto c = ctx.full<float>({M, N * W}, -7.0);
    ctx.barrier();
    p.launch("scale_to_peer", {a, b, c, 0.5f});
    ctx.barrier();
    const int from = static_cast<int>((ctx.rank() + W - 1) % W);
    std::vector<bfloat16> ah(static_cast<std::size_t>(M * K)), bh(static_cast<std::size_t>(N * K));
    ctx.copy_to_host(ah.data(), a.on_rank(from), a.bytes());
    ctx.copy_to_host(bh.data(), b.on_rank(from), b.bytes());
    const std::vector<float> all = c.to_host();
    std::vector<double> got(static_cast<std::size_t>(M * N));
    for (std::int64_t i = 0; i < M; ++i) {
      for (std::int64_t j = 0; j < N; ++j) {
        got[static_cast<std::size_t>(i * N + j)] = all[static_cast<std::size_t>(i * N * W + from * N + j)];
      }
    }
    const double rel = relative_error(ah, bh, got, M, N, K, true, 0.5);
    require(rel <= 1e-2, "scaled product from rank " + std::to_string(from) + ": relative error " + std::to_string(rel));
    ctx.barrier();
  });
}

// Scalar side effects in the epilogue (a signal per tile, an atomic count) synchronize
// the consumer warpgroups alone: every tile's flag is set once its stores are done,
// and the kernel does not hang on the producer warpgroup, which has left.
const char* kSignalPerTile = R"(
kernel signal_per_tile(A: tensor<bf16>[M, K], B: tensor<bf16>[K, N], C: tensor<bf16>[M, N],
                       done: symmetric tensor<u64>[T], count: symmetric tensor<u64>[1]) {
    for t, (m, n) in tiles([M, N], [64, 256]) {
        let c = matmul(A[m, :], B[:, n], acc: f32) as bf16;
        store(C[m, n], c);
        signal(done[t], (t + 1) as u64, to: rank);
        atomic_add(count[0], 1 as u64, to: rank, order: relaxed);
    }
}
)";

TEST_P(IriscWgmma, EpilogueSignalsEachTile) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const std::int64_t M = 300, N = 520, K = 72;
    const std::int64_t tiles = ((M + 63) / 64) * ((N + 255) / 256);
    Program p = jit_program(ctx, kSignalPerTile, "signal_per_tile.iris");
    require(runs_wgmma(p, "signal_per_tile"), "the kernel runs as the sm90 GEMM");
    auto a = ctx.randn<bfloat16>({M, K}, 61);
    auto b = ctx.randn<bfloat16>({K, N}, 62);
    auto c = ctx.zeros<bfloat16>({M, N});
    auto done = ctx.zeros<std::uint64_t>(static_cast<std::size_t>(tiles));
    auto count = ctx.zeros<std::uint64_t>(std::size_t{1});
    ctx.barrier();
    p.launch("signal_per_tile", {a, b, c, done, count});
    ctx.synchronize();
    const std::vector<std::uint64_t> flags = done.to_host();
    for (std::int64_t t = 0; t < tiles; ++t) {
      require(flags[static_cast<std::size_t>(t)] == static_cast<std::uint64_t>(t + 1),
              "tile " + std::to_string(t) + " signalled once, with its number");
    }
    require(count.to_host()[0] == static_cast<std::uint64_t>(tiles), "one count per tile");
    const std::vector<bfloat16> got = c.to_host();
    std::vector<double> g(got.size());
    for (std::size_t i = 0; i < got.size(); ++i) g[i] = static_cast<float>(got[i]);
    const double rel = relative_error(a.to_host(), b.to_host(), g, M, N, K, false, 1.0);
    require(rel <= 1e-2, "product next to the signals: relative error " + std::to_string(rel));
    ctx.barrier();
  });
}

// An epilogue that waits (for a flag set before the launch: a wait that passes at
// once still synchronizes the consumer warpgroups alone) and adds a tile to the
// accumulators (C = A B + D: add_tile, 16-byte copies through shared memory where D's
// rows are 16-byte aligned, element by element where they are not), ragged rows and
// columns masked.
const char* kResidual = R"(
kernel residual(A: tensor<bf16>[M, K], B: tensor<bf16>[K, N], D: tensor<bf16>[M, ND], C: tensor<bf16>[M, N],
                ready: tensor<u64>[1]) {
    for (m, n) in tiles([M, N], [128, 256]) {
        let c = matmul(A[m, :], B[:, n], acc: f32);
        wait(ready[0] >= 1 as u64);
        c = c + load(D[m, n]) as f32;
        store(C[m, n], c as bf16);
    }
}
)";

TEST_P(IriscWgmma, EpilogueWaitsAndAddsATile) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    Program p = jit_program(ctx, kResidual, "residual.iris");
    require(runs_wgmma(p, "residual"), "the kernel runs as the sm90 GEMM");
    const std::int64_t M = 300, N = 520, K = 72;
    for (const std::int64_t nd : {N, N + 4}) {  // D's rows 16-byte aligned, then not
      auto a = ctx.randn<bfloat16>({M, K}, 71);
      auto b = ctx.randn<bfloat16>({K, N}, 72);
      auto d = ctx.randn<bfloat16>({M, nd}, 73);
      auto c = ctx.zeros<bfloat16>({M, N});
      auto ready = ctx.full<std::uint64_t>({1}, 1.0);
      p.launch("residual", {a, b, d, c, ready});
      ctx.synchronize();
      const std::vector<bfloat16> ha = a.to_host(), hb = b.to_host(), hd = d.to_host(), got = c.to_host();
      double err = 0, ref = 0;
      for (std::int64_t i = 0; i < M; ++i) {
        for (std::int64_t j = 0; j < N; ++j) {
          double want = static_cast<float>(hd[static_cast<std::size_t>(i * nd + j)]);
          for (std::int64_t k = 0; k < K; ++k) {
            want += static_cast<double>(static_cast<float>(ha[static_cast<std::size_t>(i * K + k)])) *
                    static_cast<float>(hb[static_cast<std::size_t>(k * N + j)]);
          }
          const double g = static_cast<float>(got[static_cast<std::size_t>(i * N + j)]);
          err += (g - want) * (g - want);
          ref += want * want;
        }
      }
      const double rel = std::sqrt(err / ref);
      require(rel <= 1e-2, "C = A B + D with D's rows " + std::to_string(nd) + " apart: relative error " + std::to_string(rel));
    }
    ctx.barrier();
  });
}

// The GEMM in a role (docs/language.md, "In a role"): role `gemm` runs the template over
// its own programs and flags each tile; role `check`, beside it, runs on the first 128
// of each program's 384 threads (the rest return, so its reduction's block barrier must
// not wait for them), waits for the flags and sums the first row of each 128 x 128
// piece of C.
const char* kGemmRole = R"(
kernel gemm_role(A: tensor<bf16>[M, K], B: tensor<bf16>[K, N], C: tensor<bf16>[M, N],
                 done: symmetric tensor<u64>[T], sums: tensor<f32>[P], e: u64) {
    role gemm(programs: max(1, sms - 2)) {
        for t, (m, n) in tiles([M, N], [128, 256]) {
            let c = matmul(A[m, :], B[:, n], acc: f32) as bf16;
            store(C[m, n], c);
            signal(done[t], e, to: rank, scope: device);
        }
    }
    role check(programs: 2) {
        let across = (N + 255) / 256;
        let pieces = (N + 127) / 128;
        for (m, n) in tiles([M, N], [128, 128]) {
            wait(done[(start(m) / 128) * across + start(n) / 256] >= e, scope: device);
            store(sums[(start(m) / 128) * pieces + start(n) / 128], sum(load(C[start(m), n]) as f32));
        }
    }
}
)";

TEST_P(IriscWgmma, GemmInARoleBesideARoleOfFewerThreads) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const std::int64_t M = 300, N = 520, K = 200;
    const std::int64_t tiles = ((M + 127) / 128) * ((N + 255) / 256), pieces = ((M + 127) / 128) * ((N + 127) / 128);
    Program p = jit_program(ctx, kGemmRole, "gemm_role.iris");
    require(runs_wgmma(p, "gemm_role"), "the role runs as the sm90 GEMM");
    auto a = ctx.randn<bfloat16>({M, K}, 71);
    auto b = ctx.randn<bfloat16>({K, N}, 72);
    auto c = ctx.zeros<bfloat16>({M, N});
    auto done = ctx.zeros<std::uint64_t>(static_cast<std::size_t>(tiles));
    auto sums = ctx.full<float>({pieces}, -7.0);
    for (std::uint64_t call = 1; call <= 2; ++call) {  // the flags only grow: a second call waits for 2
      p.launch("gemm_role", {a, b, c, done, sums, call});
      ctx.synchronize();
    }
    const std::vector<bfloat16> got = c.to_host();
    std::vector<double> g(got.size());
    for (std::size_t i = 0; i < got.size(); ++i) g[i] = static_cast<float>(got[i]);
    const double rel = relative_error(a.to_host(), b.to_host(), g, M, N, K, false, 1.0);
    require(rel <= 1e-2, "the GEMM role's product: relative error " + std::to_string(rel));
    const std::vector<float> s = sums.to_host();
    for (std::int64_t pm = 0; pm * 128 < M; ++pm) {
      for (std::int64_t pn = 0; pn * 128 < N; ++pn) {
        double want = 0, mag = 0;
        for (std::int64_t j = pn * 128; j < std::min(N, pn * 128 + 128); ++j) {
          want += g[static_cast<std::size_t>(pm * 128 * N + j)];
          mag += std::abs(g[static_cast<std::size_t>(pm * 128 * N + j)]);
        }
        const double have = s[static_cast<std::size_t>(pm * ((N + 127) / 128) + pn)];
        require(std::abs(have - want) <= 1e-4 * mag + 1e-6,
                "piece (" + std::to_string(pm) + ", " + std::to_string(pn) + "): the check role summed " +
                    std::to_string(have) + ", C's row sums to " + std::to_string(want));
      }
    }
    ctx.barrier();
  });
}

// TMA reads rows that are multiples of 16 bytes: a [K, N] B of 300 bf16 columns cannot be
// read. A kernel from the JIT then runs the same source compiled for sm_90 (mma.sync)
// and is right; a Program loaded from a code object, with no source to fall back on,
// refuses the launch naming the parameter (instead of a fault in the kernel).
TEST_P(IriscWgmma, TmaRowsThatAreNotMultiplesOf16BytesFallBack) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    Program p = jit_program(ctx, kGemmKn, "gemm.iris");
    require(runs_wgmma(p, "gemm"), "the kernel is the sm90 GEMM");
    for (std::int64_t N : {300, 296}) {
      auto a = ctx.randn<bfloat16>({200, 136}, 1);
      auto b = ctx.randn<bfloat16>({136, N}, 2);
      auto c = ctx.full<bfloat16>({200, N}, -7.0);
      p.launch("gemm", {a, b, c});
      ctx.synchronize();
      require(p.fell_back("gemm") == (N == 300), "N = " + std::to_string(N) + ": the fallback runs only where TMA cannot read B");
      const std::vector<bfloat16> got = c.to_host();
      std::vector<double> g(got.size());
      for (std::size_t i = 0; i < got.size(); ++i) g[i] = static_cast<float>(got[i]);
      const double rel = relative_error(a.to_host(), b.to_host(), g, 200, N, 136, false, 1.0);
      require(rel <= 1e-2, "N = " + std::to_string(N) + ": relative error " + std::to_string(rel));
    }

    JitOptions own;
    own.target = jit_target_for(ctx);
    Program bare(ctx, jit_compile(kGemmKn, "gemm.iris", own).code, "gemm.iris");
    auto a = ctx.randn<bfloat16>({200, 136}, 1);
    auto b = ctx.randn<bfloat16>({136, 300}, 2);
    auto c = ctx.zeros<bfloat16>({200, 300});
    try {
      bare.launch("gemm", {a, b, c});
      require(false, "the launch was refused");
    } catch (const Error& e) {
      const std::string what = e.what();
      require(what.find("parameter 'B'") != std::string::npos && what.find("16 bytes") != std::string::npos &&
                  what.find("jit_program") != std::string::npos,
              "the error names B, the 16-byte rule and the way out: " + what);
    }
  });
}

// ---- the mma.sync lowering (select-matmul), compiled for a target without wgmma ---------
// The kernels of kGemmKn / kGemmNk compiled for sm_80 on an Ampere GPU, or sm_90 on a
// Hopper one (a cubin runs only on GPUs of its own major version; without the "a",
// nothing becomes the sm90 GEMM): tensor cores through tile/mma.hpp, whose columns that
// are multiples of 64 take the cp.async pipeline when both operands' rows are 16-byte
// aligned, and the synchronous mainloop otherwise. 128 x 256 tiles run one program per
// SM, the others two.

std::string mma_sync_target(const Context& ctx) {
  std::string t = jit_target_for(ctx);
  if (t.ends_with('a')) t.pop_back();
  return t;
}

class IriscMmaSync : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    const int major = backend::active().device_attribute(0, backend::DeviceAttribute::compute_capability_major);
    if (major != 8 && major != 9) GTEST_SKIP() << "no mma.sync target for compute capability " << major << ".x";
  }
};

template <class T>
void check_mma_sync_gemm(Context& ctx, const char* dtype, bool b_nk) {
  const std::string src = with_dtype(b_nk ? kGemmNk : kGemmKn, dtype);
  struct Case {
    std::int64_t M, N, K, bm, bn;
    int blocks_per_sm;
  };
  // K = 136 and N = 296 keep every row 16-byte aligned (the pipeline) and leave partial
  // tiles in M, N and K; K = 75 misaligns A's rows, N = 300 a [K, N] B's (the synchronous
  // mainloop). 64 x 32 tiles never pipeline (columns not a multiple of 64).
  for (const Case& c : {Case{200, 296, 136, 128, 64, 2}, Case{200, 296, 136, 64, 128, 2}, Case{200, 296, 136, 64, 32, 2},
                        Case{128, 256, 64, 128, 256, 1}, Case{300, 520, 200, 128, 256, 1},
                        Case{200, 296, 75, 128, 64, 2}, Case{200, 300, 136, 128, 64, 2}, Case{200, 300, 75, 128, 256, 1}}) {
    JitOptions jo;
    jo.target = mma_sync_target(ctx);
    jo.defines = {{"BM", c.bm}, {"BN", c.bn}};
    Program p = jit_program(ctx, src, "gemm.iris", jo);
    require(!runs_wgmma(p, "gemm"), "the kernel runs mma.sync, not the sm90 GEMM");
    require(p.kernel("gemm").min_blocks_per_sm == c.blocks_per_sm,
            std::to_string(c.bm) + " x " + std::to_string(c.bn) + " tiles: " + std::to_string(c.blocks_per_sm) +
                " program(s) per SM");
    auto a = ctx.randn<T>({c.M, c.K}, 71);
    auto b = b_nk ? ctx.randn<T>({c.N, c.K}, 72) : ctx.randn<T>({c.K, c.N}, 72);
    auto out = ctx.full<T>({c.M, c.N}, -7.0);
    p.launch("gemm", {a, b, out});
    ctx.synchronize();
    const std::vector<T> got = out.to_host();
    std::vector<double> g(got.size());
    for (std::size_t i = 0; i < got.size(); ++i) g[i] = static_cast<float>(got[i]);
    const double rel = relative_error(a.to_host(), b.to_host(), g, c.M, c.N, c.K, b_nk, 1.0);
    require(rel <= 1e-2, jo.target + " " + dtype + (b_nk ? " B [N, K]" : " B [K, N]") + " " + std::to_string(c.M) +
                             " x " + std::to_string(c.N) + " x " + std::to_string(c.K) + " with " + std::to_string(c.bm) +
                             " x " + std::to_string(c.bn) + " tiles: relative error " + std::to_string(rel));
  }
}

TEST_P(IriscMmaSync, Bf16BKnMatchesHostProduct) {
  run_ranks(GetParam(), [](Context& ctx, Module&) { check_mma_sync_gemm<bfloat16>(ctx, "bf16", false); });
}
TEST_P(IriscMmaSync, Bf16BNkMatchesHostProduct) {
  run_ranks(GetParam(), [](Context& ctx, Module&) { check_mma_sync_gemm<bfloat16>(ctx, "bf16", true); });
}
TEST_P(IriscMmaSync, F16BKnMatchesHostProduct) {
  run_ranks(GetParam(), [](Context& ctx, Module&) { check_mma_sync_gemm<half>(ctx, "f16", false); });
}
TEST_P(IriscMmaSync, F16BNkMatchesHostProduct) {
  run_ranks(GetParam(), [](Context& ctx, Module&) { check_mma_sync_gemm<half>(ctx, "f16", true); });
}

IRIS_GPU_SUITE(IriscMatmul);
IRIS_GPU_SUITE(IriscMmaSync);
IRIS_GPU_SUITE(IriscWgmma);

}  // namespace
}  // namespace iris::test
